"""Multi-turn dialogues: AISBench's ``MultiTurnPromptTemplate``, a template type of the
``opencompass`` style (:data:`~prompt_style.styles.opencompass.TEMPLATE_TYPES`).

A record holds parallel lists, for example ``question: [q1, q2, q3]`` and
``answer: [a1, a2, a3]``. The template's ``round`` (usually a HUMAN item
``{question}`` and a BOT item ``{answer}``) is repeated once per list position:
every field the round names that holds a list in the record stands, in turn
``t``, for its ``t``-th item; the round's other placeholders, and ``begin`` and
``end``, take the record's fields as they are. Which fields those are comes from
the template and the record (in OpenCompass configs: ``reader_cfg``'s
``input_columns`` and ``output_column``), never from fixed names.

The style returns the whole dialogue, with the ground-truth answers, and the
inferencer's ``infer_mode``; the renderer (:mod:`prompt_style.conversation`,
:meth:`~prompt_style.TaskRenderer.converse`) cuts it into one request per model
reply as AISBench's ``MultiTurnGenInferencer`` does:

* ``every``: request ``t`` holds turns ``0..t-1`` with the model's own replies;
* ``every_with_gt``: the same with the ground-truth answers;
* ``last``: one request, every turn but the last answer, with ground truth.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import StyleError
from ...types import Dialogue
from .template import SECTIONS, Ice, PromptTemplate, _Builder, register_template_type

__all__ = ["INFER_MODES", "MultiTurnPromptTemplate"]

INFER_MODES = ("every", "every_with_gt", "last")
"""AISBench's ``MultiTurnGenInferencer`` modes."""


@register_template_type
class MultiTurnPromptTemplate(PromptTemplate):
    """A dialogue template whose ``round`` repeats once per item of the record's list fields."""

    type_name = "MultiTurnPromptTemplate"

    def __init__(self, template: Any, ice_token: str | None = None, sep_token: str | None = None, *, key: str) -> None:
        super().__init__(template, ice_token, sep_token, key=key)
        self._require_dialogue(
            "a MultiTurnPromptTemplate needs a dialogue template: begin, round and end",
            hint="for example round: [{role: HUMAN, prompt: '{question}'}, {role: BOT, prompt: '{answer}'}]",
        )
        names: list[str] = []
        for item in self.dialogue["round"]:
            for piece in item.pieces:
                names.extend(n for n in piece.fields if n not in names)
        self.round_fields = tuple(names)
        """The fields the round names, in order; those holding lists advance turn by turn."""

    def ice_item(self, entry: Mapping[str, Any], label: Any) -> Ice:
        raise StyleError(
            "a MultiTurnPromptTemplate takes no in-context examples",
            key=self.key,
            hint="use ZeroRetriever (AISBench ignores examples here)",
        )

    def turn_lists(self, entry: Mapping[str, Any]) -> dict[str, list[Any]]:
        """The round's list fields of a record, checked to be of one length."""
        lists = {name: list(entry[name]) for name in self.round_fields if isinstance(entry.get(name), (list, tuple))}
        if not lists:
            fields = ", ".join(self.round_fields) or "none"
            raise StyleError(
                f"none of the fields the round names ({fields}) holds a list of turns",
                key=self.key + ".template.round",
                hint="a multi-turn record holds lists, e.g. question: [q1, q2] and answer: [a1, a2]",
            )
        lengths = {name: len(values) for name, values in lists.items()}
        if len(set(lengths.values())) != 1:
            shown = ", ".join(f"{name}: {n}" for name, n in lengths.items())
            raise StyleError(f"the turn lists differ in length ({shown})", key=self.key + ".template.round")
        if not next(iter(lengths.values())):
            raise StyleError("the record has no turns (its lists are empty)", key=self.key + ".template.round")
        return lists

    def fill(
        self,
        entry: Mapping[str, Any],
        ice: Ice,
        label: Any = None,
        override: Mapping[str, Any] | None = None,
    ) -> Dialogue:
        """The whole dialogue of a record, every turn answered with its ground truth.

        The list fields are never masked: the answers are what ``every_with_gt``
        and ``last`` put between the questions (the renderer never shows the
        answer of the turn being asked).
        """
        lists = self.turn_lists(entry)
        turns = len(next(iter(lists.values())))
        build = _Builder()
        for section in SECTIONS:
            items = self.dialogue.get(section)
            if items is None:
                continue
            if section != "round":
                self._fill_items(build, items, entry, override, ice, section)
                continue
            for t in range(turns):
                values = {**(override or {}), **{name: values[t] for name, values in lists.items()}}
                self._fill_items(build, items, entry, values, ice, section)
        return tuple(build.turns)
