"""lm-evaluation-harness's multiple-input multiple-choice tasks (winogrande, xwinograd,
wsc273): ``doc_to_text`` gives a number, the index of the choice that is the context.

Such a task scores one request per choice: the choice is the context (after the
few-shot examples) and ``doc_to_target`` is the one continuation every context is
scored with; the gold answer is the ``doc_to_text`` index. A few-shot example shows
its own correct choice as its text and its ``doc_to_target`` as its answer
(``ConfigurableTask.fewshot_context`` and ``multiple_input_context``).

The lm-eval reader's ``doc_to_text`` marks such a number as a :class:`ContextChoice`
(an ``int``), so that a plain number from another format keeps its old meaning
(text); the renderer checks it (:func:`context_gold`) and the style builds one
dialogue per choice (:func:`format_multiple_input`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import FieldError, StyleError
from ..types import Dialogue, FormattedPrompt, Sample, StyleSettings, Turn

__all__ = ["ContextChoice", "context_gold", "is_multiple_input", "format_multiple_input"]


class ContextChoice(int):
    """What ``doc_to_text`` of an lm-evaluation-harness task gives when it gives a
    number: the index of the choice that is the context (multiple-input mode)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ContextChoice({int(self)})"


def is_multiple_input(sample: Sample) -> bool:
    """Whether ``sample`` is a record of a multiple-input task."""
    return type(sample.question) is ContextChoice


def context_gold(question: ContextChoice, choices: list[Any] | None, target: Any) -> int:
    """The gold answer of a multiple-input record (the ``doc_to_text`` index),
    after checking what lm-evaluation-harness needs of the record.

    :raises FieldError: naming ``doc_to_text`` or ``doc_to_target``.
    """
    index = int(question)
    if choices is None:
        raise FieldError(
            f"gave the number {index}: lm-evaluation-harness reads that as the index of the choice "
            "that is the context (a multiple-input task, such as winogrande), but the task has no doc_to_choice",
            key="doc_to_text",
            hint="give doc_to_choice the contexts, or make doc_to_text give the prompt text",
        )
    if not 0 <= index < len(choices):
        raise FieldError(
            f"gave {index}, the index of the choice that is the context (a multiple-input task), "
            f"but the record has {len(choices)} choice{'s' if len(choices) != 1 else ''}",
            key="doc_to_text",
            hint="fix the record; doc_to_text must give the index of the correct context",
        )
    if type(target) is not str and not (isinstance(target, int) and not isinstance(target, bool)):
        raise FieldError(
            f"gave {type(target).__name__} {target!r}; in a multiple-input task (doc_to_text gives a number) "
            "doc_to_target is the one continuation every context is scored with, a text",
            key="doc_to_target",
        )
    return index


def format_multiple_input(settings: StyleSettings, turns: Sequence[Turn], sep: str, sample: Sample) -> FormattedPrompt:
    """The requests of a multiple-input record: one dialogue per choice, each the
    description and few-shot ``turns`` followed by the choice as the user turn (after
    ``sep``) and the ``gen_prefix`` prefill (no delimiter before it, as
    lm-evaluation-harness's ``multiple_input_context``); one continuation (the
    continuation delimiter and ``doc_to_target``) per choice; the gold index."""
    output_type = settings.output_type
    if output_type not in (None, "multiple_choice"):
        raise StyleError(
            f"doc_to_text gives a number (a multiple-input task, one context per choice), "
            f"which lm-evaluation-harness scores only with output_type multiple_choice, not {output_type}",
            key="doc_to_text",
            hint="set output_type: multiple_choice, or make doc_to_text give the prompt text",
        )
    prefix = sample.gen_prefix
    tail = (Turn("assistant", prefix, ""),) if prefix else ()
    head = tuple(turns)
    contexts: list[Dialogue] = [(*head, Turn("user", str(choice), sep), *tail) for choice in sample.choices or ()]
    delimiter = settings.continuation_delimiter
    if delimiter is None:
        delimiter = settings.target_delimiter
    continuation = delimiter + str(sample.target)
    return FormattedPrompt(
        contexts[0],
        (continuation,) * len(contexts),
        sample.gold,
        contexts=tuple(contexts),
    )


def shot_text(sample: Sample) -> str:
    """A few-shot example's text: its own correct choice."""
    return str(sample.choices[sample.question])  # type: ignore[index]  # checked by context_gold
