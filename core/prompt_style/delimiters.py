"""lm-evaluation-harness's rule for joining two parts of a prompt: a delimiter
only where neither side has whitespace at the join.

Styles join a few-shot example's question and answer with it; the chat rules
(``meta/chat_rules.py``) join the system instruction and the description.
"""

from __future__ import annotations

__all__ = ["requires_delimiter", "maybe_delimit"]


def requires_delimiter(prefix: str, suffix: str) -> bool:
    """Whether joining ``prefix`` and ``suffix`` needs a delimiter: neither has
    whitespace at the join (lm-evaluation-harness's rule; false for an empty prefix)."""
    if not prefix or not suffix:
        return False
    return not (prefix[-1].isspace() or suffix[0].isspace())


def maybe_delimit(prefix: str | None, suffix: str | None, delimiter: str = " ") -> str:
    """``prefix + delimiter + suffix``, without the delimiter when either side has
    whitespace at the join or is empty (lm-evaluation-harness's ``maybe_delimit``)."""
    if not prefix:
        return suffix or ""
    if not suffix:
        return prefix
    if prefix[-1].isspace() or suffix[0].isspace():
        return prefix + suffix
    return prefix + delimiter + suffix
