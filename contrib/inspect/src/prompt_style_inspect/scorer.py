"""The scorer: the model's reply read the way the task's style asks for the answer.

For multiple choice the reply is read by the answer parser of the style that
built the prompt (prompt-style's ``parse_answer`` hook, implemented next to the
style; the multiple-choice styles' parser applies inspect_ai's own rules first,
then reads answer phrases, bare or wrapped labels and the choice's text), with
the labels the style showed: its continuations without the delimiter (letters,
numbers, roman numerals, or a cloze style's choice texts). The sample is
correct when the choice read is the gold one (all of them, when several are
gold). For generation the reply (or its last ``ANSWER:`` line) must equal a
reference; a style's generation variant (``style_options={generation: cot}``:
the prompt asks for a label, the target is the gold label) is read with the
style's parser too. The answers and the target come from the sample's metadata, which
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


def _sample(task: Task | None, meta: Mapping[str, Any]) -> Any:
    """The record's extracted sample (its choices), or ``None`` when it cannot be read again."""
    record = record_of(meta) if task is not None else None
    if task is None or record is None:
        return None
    try:
        return task.renderer.sample(record, meta["index"], description=False)
    except PromptStyleError:  # the record rendered once already; its choices only help the reading
        return None


def _choices(task: Task | None, meta: Mapping[str, Any]) -> list[str] | None:
    """The choices' texts, read from the record (a reply may give a choice's text)."""
    sample = _sample(task, meta)
    return [str(c) for c in sample.choices] if sample is not None and sample.choices else None


def _generated_choice(task: Task | None, meta: Mapping[str, Any]) -> tuple[list[str], list[str], list[int]] | None:
    """Generative multiple choice (a style's ``generation`` variant: the prompt asks
    for a label, the target is the gold label): the labels shown, the choices and
    the gold positions; ``None`` for a generation task with references."""
    sample = _sample(task, meta)
    labels_of = getattr(task.renderer.style, "labels", None) if task is not None else None
    if sample is None or not sample.choices or not callable(labels_of):
        return None
    labels = [str(label) for label in labels_of(sample)]
    target = meta["target"]
    wanted = [str(t) for t in target] if isinstance(target, (list, tuple)) else [str(target)]
    if len(labels) != len(sample.choices) or not wanted or not all(t in labels for t in wanted):
        return None
    return labels, [str(c) for c in sample.choices], [labels.index(t) for t in wanted]


def _read(parser: Any, completion: str, labels: list[str], choices: list[str], golds: set[int]) -> Score:
    parsed = parser.parse(completion, labels=labels, choices=choices, multiple=len(golds) > 1)
    chosen = set(parsed.indices) if parsed is not None else set()
    correct = bool(chosen) and (chosen == golds if len(golds) > 1 else chosen <= golds)
    return Score(
        value=CORRECT if correct else INCORRECT,
        answer=", ".join(labels[i] for i in sorted(chosen) if i < len(labels)) if chosen else None,
        explanation=None if chosen else "no answer found in the reply",
        metadata={"choices": sorted(chosen), "rule": parsed.rule if parsed is not None else None},
    )


@scorer(metrics=[accuracy(), stderr()])
def style_answer() -> Scorer:
    """Correct when the reply gives the gold answer, read as the task's style reads answers."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        meta = state.metadata.get(META)
        task = task_of(meta) if meta is not None else None
        if meta is not None and meta.get("answers") is not None:  # the continuations' answers
            answers = meta["answers"]
            gold = meta["target"]
            golds = set(gold) if isinstance(gold, (list, tuple)) else {gold}
            choices = _choices(task, meta)
            if choices is None or len(choices) != len(answers):
                choices = list(answers)
            parser = answer_parser(task) if task is not None else choice_answer_parser()
            return _read(parser, completion, list(answers), choices, golds)
        shown = _generated_choice(task, meta) if meta is not None else None
        if shown is not None and task is not None:  # generative multiple choice: the gold label
            labels, choices, golds = shown
            return _read(answer_parser(task), completion, labels, choices, set(golds))
        references = target.target if meta is None else meta["target"]
        references = references if isinstance(references, (list, tuple)) else [references]
        correct = matches_reference(completion, [str(r) for r in references])
        return Score(value=CORRECT if correct else INCORRECT, answer=final_answer(completion))

    return score
