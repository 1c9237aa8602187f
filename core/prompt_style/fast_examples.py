"""Few-shot examples chosen per record, on the compiled fast path
(:mod:`prompt_style.fastpath`).

A retriever whose choice depends on the record (lm-evaluation-harness's default
sampler, ``shared_random``; ``random``) gives every record its own examples, so no
text before the record's question is shared. It is still made of shared parts: with a
meta template whose text is its turns' texts joined (``affixes``, as ``plain``), the
text before the question is the description, each chosen example's text and the text
the question's turn starts with. An example's text depends only on the example and
on whether it opens the run or follows an example that ended with the few-shot
delimiter (the style's ``shot_block`` joins them so), so each pool record's two texts
are made once, when first chosen, and a record's prefix is a join.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .types import Dialogue, Turn

__all__ = ["ExampleSelection", "Refused"]


class Refused(Exception):
    """A record whose examples the general path joins (see :meth:`ExampleSelection.prefix`)."""


class ExampleSelection:
    """The text and turns before a record's question, from the indices of its examples.

    :param shot: the pool record at an index, as the renderer extracts it (raises for
        bad data: the general path then reports it).
    :param size: the pool's size.
    :param example_turns: the style's turns of one example (``QAStyle._example_turns``:
        opening turn, the same after an example, the turns after it, what follows it).
    :param shot_block: the style's ``shot_block`` (the dialogue, when read).
    :param affixes: the meta template's text before and after a turn's content.
    :param delimiter: the few-shot delimiter (what an answered example ends with).
    :param start: the text before the first example (the description's).
    :param start_turns: its turns.
    :param stop: the length of the text after the question (the question turn's affix).
    """

    __slots__ = (
        "_shot",
        "size",
        "_example_turns",
        "_shot_block",
        "_affixes",
        "_delimiter",
        "start",
        "start_turns",
        "stop",
        "_after",
        "_first",
        "_follow",
        "_trailing",
        "_made",
        "_before",
    )

    def __init__(
        self,
        *,
        shot: Callable[[int], Any],
        size: int,
        example_turns: Callable[[Any], tuple[Turn, Turn, tuple[Turn, ...], str]],
        shot_block: Callable[[Sequence[Any]], tuple[Dialogue, str]],
        affixes: Callable[[Turn], tuple[str, str]],
        delimiter: str,
        start: str,
        start_turns: Dialogue,
        after: str,
    ) -> None:
        self._shot = shot
        self.size = size
        self._example_turns = example_turns
        self._shot_block = shot_block
        self._affixes = affixes
        self._delimiter = delimiter
        self.start = start
        self.start_turns = start_turns
        self._after = after
        self.stop = len(after)
        # per pool index, made when first chosen: its text opening the run, its text
        # after an example that ended with the delimiter, what it ends with, its turns
        self._first: list[str | None] = [None] * size
        self._follow: list[str | None] = [None] * size
        self._trailing: list[str | None] = [None] * size
        self._made: list[Any] = [None] * size
        self._before: dict[str, str] = {}  # the question turn's text before its content, by separator

    def _text(self, turns: Sequence[Turn]) -> str:
        parts = []
        for turn in turns:
            before, after = self._affixes(turn)
            if type(before) is not str or type(after) is not str or type(turn.content) is not str:
                raise Refused
            parts.append(before + turn.content + after)
        return "".join(parts)

    def _make(self, i: int) -> None:
        made = self._example_turns(self._shot(i))
        rest = self._text(made[2])
        self._first[i] = self._text((made[0],)) + rest
        self._follow[i] = self._text((made[1],)) + rest
        self._made[i] = (made[0], rest)
        self._trailing[i] = made[3]

    def _question_before(self, sep: str) -> str:
        before, after = self._affixes(Turn("user", "", sep))
        if type(before) is not str or after != self._after:
            raise Refused
        self._before[sep] = before
        return before

    def prefix(self, ids: Sequence[Any]) -> str:
        """The text before the record's own question text, its examples at ``ids``.

        :raises Refused: for an index that is not an ``int`` in the pool (the general
            path says what happens then), or what the meta template does not give as text.
        :raises PromptStyleError: for an example with bad data (the general path reports it).
        """
        first, follow, trailing = self._first, self._follow, self._trailing
        size, delimiter = self.size, self._delimiter
        parts = [self.start]
        previous = None
        for i in ids:
            if type(i) is not int or not 0 <= i < size:
                raise Refused
            if first[i] is None:
                self._make(i)
            if previous is None:
                parts.append(first[i])
            elif previous == delimiter:
                parts.append(follow[i])
            else:  # an example without an answer before it: its separator opens this one
                opening, rest = self._made[i]
                parts.append(self._text((opening._replace(sep=previous),)) + rest)
            previous = trailing[i]
        sep = "" if previous is None else previous
        before = self._before.get(sep)
        parts.append(self._question_before(sep) if before is None else before)
        return "".join(parts)

    def dialogue(self, text: str, ids: Sequence[int]) -> Dialogue:
        """The dialogue of a prompt whose text is ``text``, its examples at ``ids``."""
        shots = [self._shot(i) for i in ids] if ids else ()
        block, sep = self._shot_block(shots) if shots else ((), "")
        own = text[len(self.prefix(ids)) : len(text) - self.stop]
        return (*self.start_turns, *block, Turn("user", own, sep))
