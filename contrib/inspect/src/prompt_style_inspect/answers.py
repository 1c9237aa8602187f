"""Reading a generation's reply against its references (plain Python, no inspect_ai).

Multiple-choice replies are read by the answer parser of the task's style
(prompt-style's ``parse_answer`` hook; see :mod:`.scorer`). A generation task has
references instead: the reply, or its last ``ANSWER: ...`` line (inspect_ai's
convention for a final answer), must be one of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["final_answer", "matches_reference"]

# "ANSWER: 144" on a line of its own (inspect_ai's convention), "Final answer: 144".
_ANSWER_LINE = re.compile(r"^\s*(?:the\s+)?(?:final\s+)?answer\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def final_answer(completion: str) -> str:
    """A free-form reply's answer: the last ``ANSWER: ...`` line when there is
    one, else the whole reply, stripped."""
    lines = [m.group(1) for m in _ANSWER_LINE.finditer(completion)]
    return (lines[-1] if lines else completion).strip()


def matches_reference(completion: str, references: Sequence[str]) -> bool:
    """Whether a generation reply gives one of the references: the same text
    once stripped (the final answer's, or the whole reply's), then ignoring case."""
    given = {completion.strip(), final_answer(completion)}
    wanted = [str(r).strip() for r in references]
    if given & set(wanted):
        return True
    folded = {g.casefold() for g in given}
    return any(w.casefold() in folded for w in wanted)
