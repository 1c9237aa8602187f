"""Reading a model's generated answer to a multiple-choice prompt (the ``parse_answer``
hook's first-party implementation, for every :class:`~prompt_style.ChoiceStyle`).

:class:`ChoiceAnswerParser` first applies inspect_ai's ``multiple_choice`` rules
(0.3.285's ``parse_answers``: ``$B$``, ``**B**`` and ``(B)`` unwrapped, then the
last ``ANSWER: X`` line, then any ``ANSWER: X``), with the labels the style showed
in place of inspect_ai's ``A``, ``B``, ``C``; whatever those rules read, it reads
the same (``tests/test_golden_inspect_answers.py`` checks it on a corpus of
completions against the real inspect_ai). When they find nothing it goes on
(``lenient``, the default), in order:

1. a phrase naming the answer: ``The answer is (B)``, ``the correct option is B``,
   ``Final answer: **B**``, ``\\boxed{B}`` (the last one in the completion);
2. a line that is only a label, wrapped or not: ``B``, ``B.``, ``(B)``, ``[B]``,
   ``**B**``, ``$B$`` (the last line first, then the first);
3. a line that starts with a label and its choice's text: ``B. Paris``, ``(B) Paris``
   (the text must be that label's choice);
4. the choice's own text: the completion, its last line or its first line is one
   of the choices (case and surrounding punctuation aside).

Labels are matched as the style shows them (``B``, ``ii``, ``3``); in rules 1–3 a
letter label is matched in its own case, so that the article "a" is not label
``a``. Several answers (``multiple``) are read from an ``ANSWER:`` line (``B, D``,
``B and D``, ``BD``) or an answer phrase (``B and D``). An answer that names two
different choices is unparsable (``None``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..options import check_options
from ..types import ParsedAnswer

__all__ = ["ChoiceAnswerParser", "choice_answer_parser", "inspect_answers"]

_DOLLAR = re.compile(r"\x24\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\x24")
_BOLD = re.compile(r"\*\*\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\*\*")
_PAREN_ONE = re.compile(r"(?i)(^|[:,])(\s*)\(([A-Za-z\d])\)(?=\s*(?:,|\.|\n|\Z))")
_PAREN_MANY = re.compile(r"(?i)(^|[:,])(\s*)\(([A-Za-z\d]+)\)(?=\s*(?:,|\.|\n|\Z))")
_STRICT = re.compile(r"(?i)^ANSWER\s*:\s*([A-Za-z\d ,]+)\s*(?:$|\n|\.)", re.MULTILINE)
_LOOSE = re.compile(r"(?i)ANSWER\s*:\s*([A-Za-z\d ,]+)(?:[^\w]|\n|$|\.)")


def inspect_answers(completion: str, labels: Sequence[str], multiple: bool) -> tuple[int, ...]:
    """inspect_ai 0.3.285's ``parse_answers`` with ``labels`` for its letters: the
    indices it reads (ascending), or ``()``.

    With the labels ``A``, ``B``, ... it is inspect_ai's function exactly; other
    labels are compared upper-cased, as inspect_ai compares its letters.
    """
    single_char = all(len(label) == 1 for label in labels)
    text = _DOLLAR.sub(r"\1", completion)
    text = _BOLD.sub(r"\1", text)
    text = (_PAREN_ONE if single_char else _PAREN_MANY).sub(r"\1\2\3", text)
    matches = _STRICT.findall(text) or _LOOSE.findall(text)
    if not matches:
        return ()
    matched = matches[-1].strip().rstrip(".").upper()
    allowed = {str(label).upper(): i for i, label in enumerate(labels)}
    if multiple:
        matched = matched.replace(" AND ", ",").replace(" ", "")
        tokens = {token for token in matched.split(",") if token}
        if tokens and tokens <= allowed.keys():
            return tuple(sorted(allowed[t] for t in tokens))
        if single_char:
            chars = set(matched)
            if chars <= allowed.keys():  # inspect_ai accepts an empty set here too
                return tuple(sorted(allowed[c] for c in chars))
        return ()
    tokens_list = [token for token in matched.split(",") if token]
    if len(tokens_list) == 1 and tokens_list[0] in allowed:
        return (allowed[tokens_list[0]],)
    return ()


_OPEN = r"(?:\*\*|\$|\\boxed\{|\\text\{|[(\[])*"
_CLOSE = r"(?:\*\*|\$|\}|[)\]])*"
_PHRASE = (
    r"(?i:\b(?:answers?|options?|choices?)\s*(?:is|are|would\s+be|will\s+be|:|=|-)\s*[:\-]?\s*"
    r"(?:options?\s+|choices?\s+)?)"
)


def _normal(text: str) -> str:
    """Text compared with a choice: case, spacing and surrounding punctuation aside."""
    return " ".join(text.casefold().split()).strip(" .,;:!?*_`'\"()[]")


@dataclass(frozen=True)
class ChoiceAnswerParser:
    """The answer parser of multiple-choice styles (see the module documentation).

    :param lenient: read more than inspect_ai does (answer phrases, bare labels,
        choice texts); ``False`` gives inspect_ai's rules alone.
    """

    lenient: bool = True

    def parse(
        self, completion: str, *, labels: Sequence[str], choices: Sequence[str], multiple: bool = False
    ) -> ParsedAnswer | None:
        labels = [str(label) for label in labels]
        found = inspect_answers(completion, labels, multiple)
        if found:
            return ParsedAnswer(found, "answer line")
        if not self.lenient or not labels:
            return None
        label = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
        index = {label: i for i, label in enumerate(labels)}
        boundary = r"(?=$|[\s.,;:!?)\]}*$])"

        # 1. an answer phrase, or \boxed{B}: the last one
        item = rf"{_OPEN}\s*({label})\s*{_CLOSE}"
        many = rf"{item}(?:\s*(?:,|\band\b|&)\s*{item})*" if multiple else item
        phrase = re.compile(rf"(?:{_PHRASE}|\\boxed\{{)\s*(?:{many}){boundary}")
        hits = list(phrase.finditer(completion))
        if hits:
            last = hits[-1]
            rest = completion[last.end() :]
            if multiple:
                follow = rf"\s*(?:/|\bor\b)\s*{item}{boundary}"
            else:
                follow = rf"\s*(?:,|/|&)?\s*(?:\b(?:and|or)\b)?\s*{item}{boundary}"
            if re.match(follow, rest):
                return None  # "the answer is B or C", "ANSWER: A D": two choices named
            picked = {index[g] for g in last.groups() if g is not None}
            return ParsedAnswer(tuple(sorted(picked)), "answer phrase")
        if multiple:
            several = rf"{item}(?:\s*(?:,|\band\b|&)\s*{item})*"
        else:
            several = item
        lines = [line.strip() for line in completion.strip().splitlines() if line.strip()]
        if not lines:
            return None
        ends = [lines[-1]] if len(lines) == 1 else [lines[-1], lines[0]]

        # 2. a line that is only a label (or labels)
        bare = re.compile(rf"\s*(?i:(?:option|choice|answer)\s+)?(?:{several})\s*[.:]?\s*")
        for line in ends:
            match = bare.fullmatch(line)
            if match:
                picked = {index[g] for g in match.groups() if g is not None}
                return ParsedAnswer(tuple(sorted(picked)), "label")

        # 3. a label followed by its choice's text
        led = re.compile(rf"{_OPEN}\s*({label})\s*{_CLOSE}\s*[.:)\-]?\s+(.+)")
        for line in ends:
            match = led.fullmatch(line)
            if match:
                at = index[match.group(1)]
                if at < len(choices) and _normal(match.group(2)) == _normal(str(choices[at])):
                    return ParsedAnswer((at,), "label and choice")

        # 4. the text of one choice
        texts = [_normal(str(choice)) for choice in choices]
        for candidate in (completion, *ends):
            wanted = _normal(candidate)
            hits_at = [i for i, text in enumerate(texts) if text and text == wanted]
            if len(hits_at) == 1:
                return ParsedAnswer((hits_at[0],), "choice text")
        return None


def choice_answer_parser(*, style: Any = None, options: dict[str, Any] | None = None) -> ChoiceAnswerParser:
    """The ``parse_answer`` factory of :class:`~prompt_style.ChoiceStyle` presets:
    ``{"mcq::mine": choice_answer_parser}``. ``options``: ``lenient`` (default true)."""
    return check_options(ChoiceAnswerParser, options or {}, what="answer parser")
