"""Step 4 of the pipeline: styles phrase a record and its few-shot examples as a
dialogue (the ``format_prompt`` hook)."""

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .base import DEFAULT_LABELS, ChoiceStyle, PassthroughStyle, QAStyle, choice_style, resolve_target
    from .templates import ClozeTemplateConfig, MCQTemplateConfig, TemplateConfig, TemplateFactory

__all__ = [
    "QAStyle",
    "ChoiceStyle",
    "PassthroughStyle",
    "DEFAULT_LABELS",
    "choice_style",
    "resolve_target",
    "TemplateConfig",
    "MCQTemplateConfig",
    "ClozeTemplateConfig",
    "TemplateFactory",
]

# Imported on first use: a plugin that needs choice_style does not import the
# template system's classes (templates.py) too.
__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(
            ("DEFAULT_LABELS", "ChoiceStyle", "PassthroughStyle", "QAStyle", "choice_style", "resolve_target"), ".base"
        ),
        **dict.fromkeys(
            ("ClozeTemplateConfig", "MCQTemplateConfig", "TemplateConfig", "TemplateFactory"), ".templates"
        ),
    },
)
