"""The scorer: the model's reply read the way the task's style asks for the answer.

For multiple choice the style's answers are its continuations without the
delimiter (letters, numbers, roman numerals, or the choice texts of a cloze
style); :func:`~.answers.parse_answer` finds which one the reply gives (also
wrapped, ``(B)``, ``**B**``, ``ANSWER: B``, or as the choice's text), and the
sample is correct when that is the gold one. For generation the reply (or its
last ``ANSWER:`` line) must equal a reference. The answers and the target come
from the sample's metadata, which the solver updates when it renders again, so a
solver with another style is scored by that style's answers.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from .answers import final_answer, matches_reference, parse_answer
from .dataset import META, record_of, task_of

__all__ = ["style_answer"]


def _choices(meta: dict[str, Any]) -> list[str] | None:
    """The choices' texts, read from the record only when a reply is not a label."""
    task = task_of(meta)
    record = record_of(meta) if task is not None else None
    if record is None:
        return None
    try:
        sample = task.renderer.sample(record, meta["index"], description=False)
    except Exception:  # the record rendered once already; a choice text is a bonus, not a need
        return None
    return [str(c) for c in sample.choices] if sample.choices else None


@scorer(metrics=[accuracy(), stderr()])
def style_answer() -> Scorer:
    """Correct when the reply gives the gold answer, read as the task's style shows answers."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        meta = state.metadata.get(META)
        if meta is None or meta.get("answers") is None:
            references = target.target if meta is None else meta["target"]
            references = references if isinstance(references, (list, tuple)) else [references]
            correct = matches_reference(completion, [str(r) for r in references])
            return Score(value=CORRECT if correct else INCORRECT, answer=final_answer(completion))
        answers = meta["answers"]
        chosen = parse_answer(completion, answers)
        if chosen is None:
            chosen = parse_answer(completion, answers, _choices(meta))
        golds = meta["target"] if isinstance(meta["target"], (list, tuple)) else [meta["target"]]
        return Score(
            value=CORRECT if chosen is not None and chosen in golds else INCORRECT,
            answer=answers[chosen] if chosen is not None else None,
            explanation=None if chosen is not None else "no answer found in the reply",
            metadata={"choice": chosen},
        )

    return score
