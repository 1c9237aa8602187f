"""Step 4 of the pipeline: styles phrase a record and its few-shot examples as a
dialogue (the ``format_prompt`` hook)."""

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
