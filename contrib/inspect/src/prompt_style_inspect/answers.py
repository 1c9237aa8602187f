"""Reading a model's answer the way the style asks for it.

A style shows each choice's answer as a continuation (``" B"``, ``" 2"``,
``" III"``, or the choice text for cloze styles); a generating model writes
that answer, often wrapped: ``B``, ``(B)``, ``**B**``, ``$B$``, ``B. Paris``,
``The answer is B``, a last line ``ANSWER: B`` (inspect_ai's own multiple-choice
convention), or the choice's text. :func:`parse_answer` finds which choice a
completion gives.

This module is the bridge's own reader. prompt-style's core is getting answer
parsing as a hook implemented next to each style; when it is available the
scorer should ask the task's style instead, and this module is the one place to
change (the scorer calls :func:`parse_answer` and :func:`final_answer` only).
No inspect_ai import here: it is plain Python, tested without the harness.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["parse_answer", "final_answer", "matches_reference"]

# "ANSWER: B" on a line of its own (inspect_ai's multiple_choice template), "Final answer: B".
_ANSWER_LINE = re.compile(r"^\s*(?:the\s+)?(?:final\s+)?answer\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
# "the answer is B", "the correct answer is (B)".
_ANSWER_IS = re.compile(r"\banswer\s+is\s*:?\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_LEAD_WORD = re.compile(r"^(?:option|choice|answer)\s+", re.IGNORECASE)
_BOXED = re.compile(r"^\\(?:boxed|text|textbf|mathrm)\{(.*)\}$")
_WRAPPERS = (("**", "**"), ("__", "__"), ("$", "$"), ("`", "`"), ("(", ")"), ("[", "]"), ('"', '"'), ("'", "'"))
_TRAILING = ".,;:!"


def _clean(text: str) -> str:
    """A candidate without its markup: ``**(B).**`` -> ``B``."""
    text = text.strip()
    for _ in range(4):  # wrappers nest: **$B$**
        before = text
        text = text.rstrip(_TRAILING).strip()
        if text.endswith(")") and "(" not in text:  # "B)"; "(B)" is a wrapper
            text = text[:-1].strip()
        boxed = _BOXED.match(text)
        if boxed:
            text = boxed.group(1).strip()
        for start, end in _WRAPPERS:
            if len(text) > len(start) + len(end) - 1 and text.startswith(start) and text.endswith(end):
                text = text[len(start) : len(text) - len(end)].strip()
        text = _LEAD_WORD.sub("", text)
        if text == before:
            break
    return text


def _exact(candidate: str, answers: Sequence[str]) -> int | None:
    if candidate in answers:
        return answers.index(candidate)
    folded = candidate.casefold()
    hits = [i for i, answer in enumerate(answers) if answer.casefold() == folded]
    return hits[0] if len(hits) == 1 else None


def _leading(candidate: str, answers: Sequence[str]) -> int | None:
    """``B. Paris``, ``B) Paris``, ``(B) Paris``, ``B: Paris``: an answer followed by a
    delimiter. A label followed by a space is not enough ("A cat ..."), except for
    answers of several characters (choice texts), which must end at a word boundary."""
    text = candidate.lstrip("(*[ ")
    best: tuple[int, int] | None = None
    for index, answer in enumerate(answers):
        if not answer or not text.startswith(answer):
            continue
        rest = text[len(answer) : len(answer) + 1]
        short = len(answer) <= 3
        if (rest in ".):]*," and rest != "") or (not short and (rest == "" or not rest.isalnum())):
            if best is None or len(answer) > best[1]:
                best = (index, len(answer))
    return best[0] if best else None


def _match(candidate: str, answers: Sequence[str], choices: Sequence[str] | None) -> int | None:
    cleaned = _clean(candidate)
    if not cleaned:
        return None
    found = _exact(cleaned, answers)
    if found is None:
        found = _leading(cleaned, answers)
    if found is None and choices:
        found = _exact(cleaned, [str(c).strip() for c in choices])
    return found


def parse_answer(completion: str, answers: Sequence[str], choices: Sequence[str] | None = None) -> int | None:
    """The index of the choice ``completion`` gives, or ``None`` when it gives none.

    :param completion: the model's reply.
    :param answers: each choice's answer as the style shows it, without the
        delimiter (``["A", "B", "C", "D"]``, ``["1", "2"]``, ``["I", "II"]``, or
        the choice texts for a cloze style).
    :param choices: the choices' texts, matched when the reply gives a text
        rather than a label.
    :returns: the index into ``answers``.
    """
    text = completion.strip()
    if not text or not answers:
        return None
    answers = [a.strip() for a in answers]
    candidates = [m.group(1) for m in _ANSWER_LINE.finditer(text)][-1:]
    candidates += [m.group(1) for m in _ANSWER_IS.finditer(text)][-1:]
    candidates.append(text)
    first_line = text.splitlines()[0]
    if first_line != text:
        candidates.append(first_line)
    for candidate in candidates:
        found = _match(candidate, answers, choices)
        if found is not None:
            return found
    return None


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
