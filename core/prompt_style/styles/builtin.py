"""Built-in styles: ``passthrough`` (lm-evaluation-harness without a template) and ``mcq``,
with the format axes and the answer parser of ``mcq``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import Lazy
from .._markers import hookimpl

if TYPE_CHECKING:
    from ..types import StyleSettings
    from .base import ChoiceStyle, PassthroughStyle

# The styles are imported when a task uses them, not when plugins are listed.


def passthrough(*, options: dict[str, Any], settings: StyleSettings) -> PassthroughStyle:
    """``doc_to_text`` as the prompt; ``doc_to_choice`` items as continuations."""
    from ..options import check_options
    from .base import PassthroughStyle

    return check_options(PassthroughStyle, options, what="style 'passthrough'", settings=settings)


def mcq(*, options: dict[str, Any], settings: StyleSettings) -> ChoiceStyle:
    """Style 'mcq': a ChoiceStyle preset {} (the MMLU layout, every option overridable)."""
    from .base import choice_style

    return choice_style("mcq")(options=options, settings=settings)


@hookimpl
def format_prompt():
    return {
        "passthrough": passthrough,
        # As in lm-evaluation-harness's template system, `template: mcq` is the MMLU layout (options override it).
        "mcq": mcq,
        # OpenCompass dataset templates (PromptTemplate), gen and ppl modes.
        "opencompass": Lazy("prompt_style.styles.opencompass:opencompass_style"),
    }


@hookimpl
def declare_axes():
    # the axes every ChoiceStyle preset has (styles/axes.py)
    return {"mcq": Lazy("prompt_style.styles.axes:mcq_axes")}


@hookimpl
def parse_answer():
    return {"mcq": Lazy("prompt_style.styles.answers:choice_answer_parser")}
