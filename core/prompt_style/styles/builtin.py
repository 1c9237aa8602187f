"""Built-in styles: ``passthrough`` (lm-evaluation-harness without a template) and ``mcq``."""

from __future__ import annotations

from typing import Any

from .._markers import hookimpl
from ..options import check_options
from ..types import StyleSettings
from .base import PassthroughStyle, choice_style
from .opencompass import opencompass_style


def passthrough(*, options: dict[str, Any], settings: StyleSettings) -> PassthroughStyle:
    """``doc_to_text`` as the prompt; ``doc_to_choice`` items as continuations."""
    return check_options(PassthroughStyle, options, what="style 'passthrough'", settings=settings)


@hookimpl
def format_prompt():
    return {
        "passthrough": passthrough,
        # Seed 000: `template: mcq` is the MMLU layout, and every option can be overridden.
        "mcq": choice_style("mcq"),
        # OpenCompass dataset templates (PromptTemplate), gen and ppl modes.
        "opencompass": opencompass_style,
    }
