"""The scorer: the model's reply read the way the task's style asks for the answer.

For multiple choice the reply is read by the answer parser of the style that
built the prompt (prompt-style's ``parse_answer`` hook, implemented next to the
style; the multiple-choice styles' parser applies inspect_ai's own rules first,
then reads answer phrases, bare or wrapped labels and the choice's text), with
the labels the style showed: its continuations without the delimiter (letters,
numbers, roman numerals, or a cloze style's choice texts). The sample is
correct when the choice read is the gold one (all of them, when several are
gold). For generation the reply (or its last ``ANSWER:`` line) must equal a
reference. The answers and the target come from the sample's metadata, which
the solver updates when it renders again, so a solver with another style is
scored by that style's parser.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from prompt_style import PromptStyleError, Task, choice_answer_parser, default_plugin_manager

from .answers import final_answer, matches_reference
from .dataset import META, key_of, record_of, task_of

__all__ = ["style_answer", "answer_parser"]

_PARSERS: dict[str, Any] = {}  # task key -> its style's answer parser


def answer_parser(task: Task) -> Any:
    """The answer parser of ``task``'s style: its ``parse_answer`` plugin, else the
    multiple-choice styles' own (:func:`prompt_style.choice_answer_parser`)."""
    key = key_of(task)
    parser = _PARSERS.get(key)
    if parser is None:
        manager = default_plugin_manager()
        name = task.plugins["format_prompt"]["name"]
        parser = None
        if name in manager.catalog("parse_answer"):
            parser = manager.resolve("parse_answer", name).factory(style=task.renderer.style)
        if not callable(getattr(parser, "parse", None)):
            parser = choice_answer_parser(style=task.renderer.style)
        parser = _PARSERS[key] = parser
    return parser


def _choices(task: Task | None, meta: Mapping[str, Any]) -> list[str] | None:
    """The choices' texts, read from the record (a reply may give a choice's text)."""
    record = record_of(meta) if task is not None else None
    if task is None or record is None:
        return None
    try:
        sample = task.renderer.sample(record, meta["index"], description=False)
    except PromptStyleError:  # the record rendered once already; its texts only help the reading
        return None
    return [str(c) for c in sample.choices] if sample.choices else None


@scorer(metrics=[accuracy(), stderr()])
def style_answer() -> Scorer:
    """Correct when the reply gives the gold answer, read as the task's style reads answers."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        meta = state.metadata.get(META)
        if meta is None or meta.get("answers") is None:
            references = target.target if meta is None else meta["target"]
            references = references if isinstance(references, (list, tuple)) else [references]
            correct = matches_reference(completion, [str(r) for r in references])
            return Score(value=CORRECT if correct else INCORRECT, answer=final_answer(completion))
        answers = meta["answers"]
        gold = meta["target"]
        golds = set(gold) if isinstance(gold, (list, tuple)) else {gold}
        task = task_of(meta)
        parser = answer_parser(task) if task is not None else choice_answer_parser()
        choices = _choices(task, meta)
        if choices is None or len(choices) != len(answers):
            choices = list(answers)
        parsed = parser.parse(completion, labels=answers, choices=choices, multiple=len(golds) > 1)
        chosen = set(parsed.indices) if parsed is not None else set()
        correct = bool(chosen) and (chosen == golds if len(golds) > 1 else chosen <= golds)
        return Score(
            value=CORRECT if correct else INCORRECT,
            answer=", ".join(answers[i] for i in sorted(chosen)) if chosen else None,
            explanation=None if chosen else "no answer found in the reply",
            metadata={"choices": sorted(chosen), "rule": parsed.rule if parsed is not None else None},
        )

    return score
