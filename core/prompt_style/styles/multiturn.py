"""Multi-turn dialogues: OpenCompass/AISBench's ``MultiTurnPromptTemplate`` as the style ``multiturn``.

A record holds parallel lists, for example ``question: [q1, q2, q3]`` and
``answer: [a1, a2, a3]``. The template's ``round`` (usually a HUMAN item
``{question}`` and a BOT item ``{answer}``) is repeated once per list position,
with each list field's placeholder standing for that position's item; the
other placeholders take the record's fields. ``begin`` and ``end`` are filled
once.

The style returns the whole dialogue with the ground-truth answers and its
``infer_mode``; the renderer (:meth:`~prompt_style.TaskRenderer.converse`) cuts it
into one request per model reply, as AISBench's ``MultiTurnGenInferencer`` does:

* ``every``: request ``t`` holds turns ``0..t-1`` with the model's own replies;
* ``every_with_gt``: the same with the ground-truth answers;
* ``last``: one request, every turn but the last answer, with ground truth.

Each request is the dialogue up to (not including) a reply turn, followed by
the template's ``end`` items.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError, StyleError
from ..options import check_options
from ..types import FormattedPrompt, Sample, StyleSettings, Turn

__all__ = ["INFER_MODES", "MultiTurnStyle", "fill_placeholders", "multiturn"]

INFER_MODES = ("every", "every_with_gt", "last")
"""AISBench's ``MultiTurnGenInferencer`` modes."""

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def fill_placeholders(text: str, values: Mapping[str, Any]) -> str:
    """OpenCompass's ``{field}`` filling: a known field becomes ``str(value)``, an unknown
    placeholder stays as written, and inserted values are never scanned again."""
    if "{" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(values[name]) if name in values else match.group(0)

    return _PLACEHOLDER.sub(replace, text)


def _items(template: Mapping[str, Any], section: str) -> list[Any]:
    items = template.get(section) or []
    if not isinstance(items, (list, tuple)):
        raise OptionError(f"template.{section} must be a list of items, not {type(items).__name__}", key="template")
    for i, item in enumerate(items):
        if isinstance(item, str) and section != "round":
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("role"), str):
            raise OptionError(
                f"template.{section}[{i}] must be a mapping with a role and a prompt, not {item!r}",
                key="template",
            )
        if not isinstance(item.get("prompt", ""), str):
            raise OptionError(f"template.{section}[{i}].prompt must be a string", key="template")
    return list(items)


@dataclass
class MultiTurnStyle:
    """Repeats the template's round once per item of the record's list fields."""

    template: Mapping[str, Any] = field(default_factory=dict)
    """``{"begin": [...], "round": [...], "end": [...]}``, OpenCompass dialogue items."""
    input_columns: list[str] | str | None = None
    """``reader_cfg.input_columns``: those holding lists (the questions) advance turn by turn."""
    output_column: str | None = None
    """``reader_cfg.output_column``: the list of ground-truth answers, one per turn."""
    infer_mode: str = "every"
    """``every``, ``every_with_gt`` or ``last``."""
    settings: StyleSettings = field(default_factory=StyleSettings, repr=False)

    def __post_init__(self) -> None:
        if self.infer_mode not in INFER_MODES:
            raise OptionError(
                f"infer_mode must be one of {', '.join(INFER_MODES)}, not {self.infer_mode!r}", key="infer_mode"
            )
        if not isinstance(self.template, Mapping) or not self.template.get("round"):
            raise OptionError("a multi-turn template needs a round: its HUMAN and BOT items", key="template")
        self._begin = _items(self.template, "begin")
        self._round = _items(self.template, "round")
        self._end = _items(self.template, "end")
        if not self.output_column:
            raise OptionError(
                "style 'multiturn' needs output_column: the field of the answer list", key="output_column"
            )
        columns = self.input_columns or []
        self._columns = tuple(columns.split() if isinstance(columns, str) else columns)
        if not self._columns:
            raise OptionError(
                "style 'multiturn' needs input_columns: the field of the question list", key="input_columns"
            )

    def _fixed(self, items: Sequence[Any], record: Mapping[str, Any], section: str) -> list[Turn]:
        turns = []
        for item in items:
            if isinstance(item, str):
                turns.append(Turn("", fill_placeholders(item, record), section=section))
            else:
                content = fill_placeholders(item.get("prompt", ""), record)
                turns.append(Turn(item["role"], content, fallback_role=item.get("fallback_role"), section=section))
        return turns

    def format(self, sample: Sample, shots: Sequence[Sample]) -> FormattedPrompt:
        if shots:
            raise StyleError(
                "a multi-turn template takes no in-context examples",
                key="retriever",
                hint="use the zero retriever (OpenCompass's ZeroRetriever)",
            )
        record = sample.record
        lists: dict[str, list[Any]] = {}
        for column in (*self._columns, self.output_column):
            if column not in record:
                raise StyleError(f"the record has no field {column!r}", key="input_columns")
            value = record[column]
            if isinstance(value, (list, tuple)):
                lists[column] = list(value)
        answers = lists.get(self.output_column)
        if answers is None:
            raise StyleError(
                f"field {self.output_column!r} must hold the list of answers, one per turn, "
                f"not {type(record[self.output_column]).__name__}",
                key="output_column",
            )
        lengths = {name: len(values) for name, values in lists.items()}
        if len(set(lengths.values())) != 1:
            shown = ", ".join(f"{name}: {n}" for name, n in lengths.items())
            raise StyleError(f"the turn lists differ in length ({shown})", key="input_columns")
        if not answers:
            raise StyleError("the record has no turns (its lists are empty)", key="output_column")
        dialogue = self._fixed(self._begin, record, "begin")
        for t in range(len(answers)):
            values = {**record, **{name: items[t] for name, items in lists.items()}}
            for item in self._round:
                content = fill_placeholders(item.get("prompt", ""), values)
                dialogue.append(Turn(item["role"], content, fallback_role=item.get("fallback_role"), section="round"))
        dialogue += self._fixed(self._end, record, "end")
        return FormattedPrompt(tuple(dialogue), target=answers, infer_mode=self.infer_mode)


def multiturn(*, options: dict[str, Any], settings: StyleSettings) -> MultiTurnStyle:
    """OpenCompass/AISBench's ``MultiTurnPromptTemplate``."""
    return check_options(MultiTurnStyle, options, what="style 'multiturn'", settings=settings)
