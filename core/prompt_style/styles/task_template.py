"""The ``task_template`` style: a rendered ``input ||| output`` template as a prompt.

Task-template files (SciRIFF, promptsource conversions) render the whole
prompt in Jinja; their reader maps a template's input onto ``doc_to_text``,
its output onto ``doc_to_target`` and its answer choices onto
``doc_to_choice``. This style lays those out unchanged: the prompt is the
input, the target is the output (a generation target), and the answer choices
travel with the prompt as ``answer_choices`` (a list, or ``None``). Few-shot
examples show their input, then ``target_delimiter``, then their output, as in
lm-evaluation-harness; chat meta templates show them as user/assistant turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..options import check_options
from ..types import FormattedPrompt, Sample, StyleSettings
from .base import QAStyle

__all__ = ["TaskTemplateStyle", "task_template_style"]


@dataclass
class TaskTemplateStyle(QAStyle):
    """Input as the prompt, output as the target, answer choices alongside."""

    needs_gold = False  # the output is the target; answer choices are shown, not scored

    def question_text(self, sample: Sample) -> str:
        return str(sample.question)

    def answers(self, sample: Sample) -> tuple[str, ...] | None:
        return None  # a generation target; the choices are reported, not scored

    def format(self, sample: Sample, shots: Sequence[Sample]) -> FormattedPrompt:
        formatted = super().format(sample, shots)
        formatted.extra = {"answer_choices": sample.choices}
        return formatted


def task_template_style(*, options: dict[str, Any], settings: StyleSettings) -> TaskTemplateStyle:
    """Style ``task_template``: the rendered input, output and answer choices of a task-template file."""
    return check_options(TaskTemplateStyle, options, what="style 'task_template'", settings=settings)
