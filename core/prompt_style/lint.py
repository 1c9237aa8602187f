"""Checking a task for mistakes that quietly skew a score (``prompt-style lint``).

Each check reads the records as the task renders them (its fields, its style's
labels, its few-shot examples, the rendered prompt) and reports *findings*: one
per problem, naming the record and how to fix it. The checks (``CHECKS``):

``choice-count``
    The instruction names a number of choices (``four options``, ``A, B, C or
    D``, ``one of A,B,C,D``) that the record does not have (lighteval#1265).
``label-collision``
    A choice's text is another choice's label (``A. B``), or already starts with
    a label (``A. A) 15``).
``answer-leak``
    The gold answer is in the question (``... Answer: C``, the gold choice's text
    when no other choice's is), or a few-shot example is the record itself.
``fewshot-from-eval``
    Few-shot examples are drawn from the evaluated split (task-level), or a
    few-shot example is one of the evaluated records (the same question and
    choices in both splits).
``duplicate-record``
    A record with the same question and choices as an earlier one.
``whitespace-choices``
    Two choices of a record that differ only in whitespace (or not at all).
``doubled-delimiter``
    The ``target_delimiter`` doubled by the choices (``" " + " Paris"``) or by the
    prompt's end (``"Answer: " + " A"``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import PromptStyleError

if TYPE_CHECKING:
    from .loading import Task

__all__ = ["Finding", "CHECKS", "lint_task"]

CHECKS: Mapping[str, str] = {
    "choice-count": "the instruction names another number of choices than the record has",
    "label-collision": "a choice's text is a label, or starts with one",
    "answer-leak": "the gold answer is in the question or in a few-shot example",
    "fewshot-from-eval": "few-shot examples come from the evaluated split",
    "duplicate-record": "the same question and choices as an earlier record",
    "whitespace-choices": "choices that differ only in whitespace",
    "doubled-delimiter": "the target delimiter doubled at the join",
}


@dataclass(frozen=True)
class Finding:
    """One problem: which check, which record (``None``: the whole task), what, and the fix."""

    code: str
    message: str
    fix: str
    index: int | None = None
    split: str | None = None

    def line(self, source: str) -> str:
        where = f"{source}: " + (f"split {self.split!r} record {self.index}: " if self.index is not None else "")
        return f"{where}{self.code}: {self.message} (fix: {self.fix})"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "split": self.split, "record": self.index, "message": self.message, "fix": self.fix}


_NUMBERS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_COUNT_WORDS = re.compile(
    r"(?i)\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})\s+"
    r"(?:possible\s+|candidate\s+|answer\s+|different\s+)?(choices|options|alternatives|answers|candidates)\b"
)
_TOKEN = r"(?:[A-Z]|\d{1,2})"
_LIST = re.compile(rf"(?<![\w.])({_TOKEN}(?:\s*,\s*{_TOKEN})+)(?:\s*,)?\s+(?:or|and)\s+({_TOKEN})(?![\w])")
_ONE_OF = re.compile(rf"(?i:one of|among|from)\s*[:(]?\s*({_TOKEN}(?:\s*[,/]\s*{_TOKEN}){{2,}})(?![\w])")
_RANGE = re.compile(r"\b\(?(A)\s*(?:-|–|to|through)\s*([B-Z])\)?(?![\w])")


def _sequence_length(tokens: Sequence[str]) -> int | None:
    """The count a run of labels names when it is A, B, C, ... (or 1, 2, 3, ...)."""
    if all(len(t) == 1 and t.isalpha() for t in tokens):
        expected = [chr(ord("A") + i) for i in range(len(tokens))]
    elif all(t.isdigit() for t in tokens):
        expected = [str(i + 1) for i in range(len(tokens))]
    else:
        return None
    return len(tokens) if list(tokens) == expected else None


def named_counts(text: str) -> list[tuple[int, str]]:
    """The numbers of choices a text names: ``(count, the words that name it)``."""
    found = []
    for match in _COUNT_WORDS.finditer(text):
        word = match.group(1).lower()
        count = _NUMBERS.get(word) or (int(word) if word.isdigit() else None)
        if count:
            found.append((count, match.group(0)))
    for match in _LIST.finditer(text):
        tokens = [t.strip() for t in match.group(1).split(",")] + [match.group(2)]
        count = _sequence_length(tokens)
        if count:
            found.append((count, match.group(0)))
    for match in _ONE_OF.finditer(text):
        tokens = [t.strip() for t in re.split(r"[,/]", match.group(1))]
        count = _sequence_length(tokens)
        if count:
            found.append((count, match.group(0)))
    for match in _RANGE.finditer(text):
        found.append((ord(match.group(2)) - ord("A") + 1, match.group(0)))
    return found


def _norm(text: Any) -> str:
    return " ".join(str(text).split()).casefold()


def _prompt_text(prompt: Any) -> str:
    if prompt.text is not None:
        return prompt.text
    if prompt.messages:
        return "\n".join(str(m.get("content", "")) for m in prompt.messages)
    if prompt.candidates:
        return prompt.candidates[0].text or ""
    return ""


@dataclass
class _View:
    """A record as the checks see it."""

    question: str
    choices: list[str] | None
    gold: Any
    labels: list[str]


def _view(task: Task, record: Mapping[str, Any], index: int, sample: Any) -> _View:
    """The question text, choices, gold index and labels of a record."""
    from .choice_order import option_keys_for, record_gold

    renderer = task.renderer
    if sample.choices is not None:
        labels: list[str] = []
        style = renderer.style
        if hasattr(style, "labels"):
            try:
                labels = [str(label) for label in style.labels(sample)]
            except PromptStyleError:
                labels = []
        return _View(str(sample.question), [str(c) for c in sample.choices], sample.gold, labels)
    if task.config.format == "opencompass" and isinstance(record, Mapping):
        style = renderer.style
        found = option_keys_for(
            (task.config.metadata.get("opencompass") or {}).get("type"),
            getattr(style, "input_columns", None),
            getattr(style, "output_column", None),
        )
        if found is not None:
            keys, answer_key = found
            try:
                n, gold = record_gold(record, keys, answer_key)
            except PromptStyleError:
                return _View("", None, None, [])
            choices = [str(record[k]) for k in keys] if len(keys) > 1 else [str(c) for c in record[keys[0]]]
            columns = [c for c in (getattr(style, "input_columns", None) or []) if c not in keys]
            question = "\n".join(str(record.get(c, "")) for c in columns)
            return _View(question, choices, gold, [chr(ord("A") + i) for i in range(n)])
    return _View(str(sample.question) if not isinstance(sample.question, Mapping) else "", None, None, [])


def lint_task(
    task: Task,
    *,
    limit: int | None = None,
    checks: Sequence[str] | None = None,
    errors: list[PromptStyleError] | None = None,
) -> Iterator[Finding]:
    """The findings of ``task``'s checks (all of :data:`CHECKS`, or ``checks``), in
    record order (task-level findings first).

    :param errors: where a record the task cannot render goes (its error, naming the
        record), the other records still checked, so that every bad record of a file
        is reported at once; without it, the first such error is raised.
    :raises PromptStyleError: for a record the task cannot render at all (bad data is
        an error, not a finding), unless ``errors`` is given.
    """
    wanted = set(CHECKS if checks is None else checks)
    renderer = task.renderer
    split = renderer.split
    config = task.config
    if "fewshot-from-eval" in wanted and renderer.pool and renderer.pool_split == split and config.num_fewshot:
        yield Finding(
            "fewshot-from-eval",
            f"few-shot examples are drawn from the evaluated split {split!r}",
            "give the examples a split of their own (fewshot_split: dev or train)",
        )
    pool_keys: dict[str, int] = {}
    if "fewshot-from-eval" in wanted and renderer.pool and renderer.pool_split != split:
        for i in range(len(renderer.pool)):
            try:
                shot = renderer._shot(i)  # the pool record's fields, extracted as for an example
            except PromptStyleError:
                continue
            pool_keys.setdefault(_key(shot.question, shot.choices), i)
    seen: dict[str, tuple[int, Any]] = {}
    delimiter = config.target_delimiter
    for index, record in enumerate(task.records()):
        if limit is not None and index >= limit:
            break
        try:
            prompt = renderer.render(record, index)
            sample = renderer.sample(record, index)
            shots = renderer.examples(record, index)
        except PromptStyleError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        view = _view(task, record, index, sample)
        text = _prompt_text(prompt)
        found: list[Finding] = []
        add = _Collector(found, wanted, index, split)

        choices = view.choices
        key = _key(view.question, choices)
        if choices is not None:
            _choice_count(add, text, view, shots)
            _labels(add, view)
            _whitespace(add, choices)
        leaked = _leak(add, view, shots, renderer.pool_split, split)
        if key in pool_keys and not leaked:  # (an example that is the record is reported as a leak)
            add(
                "fewshot-from-eval",
                f"the record is also few-shot example {pool_keys[key]} of split {renderer.pool_split!r}",
                "remove it from one of the splits",
            )
        earlier = seen.get(key)
        if earlier is not None:
            same = "" if earlier[1] == view.gold else " (with another answer)"
            add(
                "duplicate-record",
                f"the same question and choices as record {earlier[0]}{same}",
                "drop one of the two records",
            )
        else:
            seen[key] = (index, view.gold)
        _delimiter(add, prompt, text, delimiter)
        yield from found


@dataclass
class _Collector:
    """``add(code, message, fix)``: a finding of one record, when its check is wanted."""

    found: list[Finding]
    wanted: set[str]
    index: int
    split: str

    def __call__(self, code: str, message: str, fix: str) -> None:
        if code in self.wanted:
            self.found.append(Finding(code, message, fix, self.index, self.split))


def _key(question: Any, choices: Sequence[Any] | None) -> str:
    return _norm(question) + "\x00" + "\x00".join(_norm(c) for c in (choices or ()))


def _choice_count(add: Any, text: str, view: _View, shots: Sequence[Any]) -> None:
    """Count mentions in the prompt outside the record's and the examples' own texts."""
    rest = text
    pieces = [view.question, *(view.choices or ())]
    for shot in shots:
        pieces.append(str(shot.question))
        pieces.extend(str(c) for c in shot.choices or ())
    for piece in sorted({p for p in pieces if p and len(p.strip()) > 1}, key=len, reverse=True):
        rest = rest.replace(piece, "\x00")
    n = len(view.choices or ())
    for count, words in named_counts(rest):
        if count != n:
            add(
                "choice-count",
                f"the prompt names {count} choices ({words!r}) but the record has {n}",
                "word the instruction for any number of choices, or build it from the record's choices",
            )
            return


def _labels(add: Any, view: _View) -> None:
    labels = view.labels
    if not labels:
        return
    by_label = {label: i for i, label in enumerate(labels)}
    for i, choice in enumerate(view.choices or ()):
        stripped = choice.strip()
        other = by_label.get(stripped)
        if other is not None and other != i:
            add(
                "label-collision",
                f"choice {i} ({labels[i]}) is {stripped!r}, the label of choice {other}",
                "reword the choice (e.g. 'option B'), or use other labels (--style-option choice_labels=...)",
            )
            return
        match = re.match(r"\s*[(\[]?([A-Za-z]{1,4}|\d{1,2})[.):\]]\s", choice)
        if match and match.group(1) in by_label:
            add(
                "label-collision",
                f"choice {i} already starts with a label: {choice[:30]!r}",
                "strip the label from the choice texts (process_docs), the style adds its own",
            )
            return


def _whitespace(add: Any, choices: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for i, choice in enumerate(choices):
        key = " ".join(choice.split())
        if key in seen:
            j = seen[key]
            if choices[j] == choice:
                add(
                    "whitespace-choices",
                    f"choices {j} and {i} are the same text {choice!r}",
                    "remove the duplicate choice (the model cannot tell them apart)",
                )
            else:
                add(
                    "whitespace-choices",
                    f"choices {j} and {i} differ only in whitespace ({choices[j]!r} and {choice!r})",
                    "normalise the choices' whitespace, and remove the duplicate",
                )
            return
        seen[key] = i


def _leak(add: Any, view: _View, shots: Sequence[Any], pool_split: str | None, split: str) -> bool:
    """Report answer leaks; whether a few-shot example is the record itself."""
    question = view.question
    choices = view.choices
    gold = view.gold
    if choices is not None and isinstance(gold, int) and 0 <= gold < len(choices) and question:
        labels = view.labels
        label = labels[gold] if gold < len(labels) else None
        if label is not None and re.search(rf"(?i)\banswer\s*(?:is|:)\s*\(?{re.escape(label)}\)?(?![\w])", question):
            add(
                "answer-leak",
                f"the question says the answer: {label!r}",
                "remove the answer from doc_to_text's field",
            )
        else:
            text = choices[gold].strip()
            others = [c.strip() for i, c in enumerate(choices) if i != gold]
            long_enough = len(text.split()) >= 6  # a sentence, not a phrase the question may well name
            if (
                long_enough
                and _norm(text) in _norm(question)
                and not any(o and _norm(o) in _norm(question) for o in others)
            ):
                add(
                    "answer-leak",
                    f"the question contains the gold choice's text {text[:40]!r} and no other choice's",
                    "check the record: remove the answer from the question",
                )
    own = _key(question, choices)
    for shot in shots:
        if _key(shot.question, shot.choices) == own and choices is not None:
            add(
                "answer-leak",
                f"few-shot example {shot.index} of split {pool_split!r} is this record, with its answer",
                "draw the examples from another split, or drop the duplicate record",
            )
            return True
    return False


def _delimiter(add: Any, prompt: Any, text: str, delimiter: str) -> None:
    for i, continuation in enumerate(prompt.continuations or ()):
        if delimiter and delimiter[-1:].isspace() and continuation.startswith(delimiter):
            after = continuation[len(delimiter) :]
            if after[:1].isspace():
                add(
                    "doubled-delimiter",
                    f"continuation {i} is {continuation!r}: the target delimiter {delimiter!r} and the choice's "
                    "own leading whitespace",
                    "strip the choices, or set target_delimiter to ''",
                )
                return
        if text and text[-1:].isspace() and continuation[:1].isspace():
            add(
                "doubled-delimiter",
                f"the prompt ends with {text[-1:]!r} and continuation {i} starts with {continuation[:1]!r}: "
                "the delimiter is doubled at the join",
                "remove the trailing whitespace from doc_to_text, or set target_delimiter to ''",
            )
            return
