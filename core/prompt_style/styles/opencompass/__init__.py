"""OpenCompass dataset templates: the ``opencompass`` style and its template engine.

``template`` compiles OpenCompass ``PromptTemplate`` configs and fills them per
record; ``infer`` puts an ``infer_cfg``'s templates together; ``style`` is the
``format_prompt`` plugin built on them.
"""

from .infer import InferPrompts, join_ice
from .style import MODES, OpenCompassStyle, opencompass_style
from .template import (
    RAW,
    TEMPLATE_TYPES,
    FieldText,
    PromptTemplate,
    TemplateConfigError,
    compile_template,
    template_type_name,
)

__all__ = [
    "RAW",
    "TEMPLATE_TYPES",
    "MODES",
    "FieldText",
    "InferPrompts",
    "PromptTemplate",
    "TemplateConfigError",
    "OpenCompassStyle",
    "compile_template",
    "join_ice",
    "opencompass_style",
    "template_type_name",
]

# AISBench's MultiTurnPromptTemplate and MMPromptTemplate, and OpenCompass's
# RawPromptTemplate, register themselves in TEMPLATE_TYPES.
from . import multimodal as _multimodal  # noqa: E402,F401
from . import multiturn as _multiturn  # noqa: E402,F401
from . import raw_prompt as _raw_prompt  # noqa: E402,F401
