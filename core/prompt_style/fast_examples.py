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

A chat format whose turns are closed the same way wherever they stand
(``closed_turn``: ChatML) is joined the same way, each turn's text its closed text;
its messages are one per turn, so their JSON is joined from each example's too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .safe.json_lines import dumps_json, encode_str, json_utf8, safe_utf8
from .types import Dialogue, Turn

_STARTS_KEPT = 4096
"""Descriptions whose :data:`Start` is kept (records usually share a few: a subject's)."""

_MARK = "\ue000prompt-style-content\ue001"
"""Stands for the question's content in its message, to cut the message's JSON around it."""

__all__ = ["ExampleSelection", "MergedSelection", "Refused", "Start"]

Start = tuple[str, bytes, Dialogue]
"""What stands before a record's examples when its description is its own: the text,
the messages' JSON (a chat format's, from the list's opening bracket) and the turns."""


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
    :param start: the text before the first example (the description's); ``None``:
        ``start_turns``' texts, by ``affixes``.
    :param start_turns: its turns.
    :param after: the text after the question (the question turn's affix).
    :param question_affixes: the text before and after the question turn's content
        (``affixes`` unless given: a chat format's last turn stands otherwise).
    :param message: for a chat format, a turn's message (:meth:`prefix_and_json` then
        gives the messages' JSON too).
    :param textless: the chat format gives messages and no text (``affixes`` and
        ``question_affixes`` then give empty texts).
    :param start_turns_of: for a description per record, the turns before the examples
        for a description (:meth:`start_of`).
    :param lead: for a chat format whose text before the first example is not its start
        turns' closed texts (a model's template that writes a token first, or a default
        system message): the text before the first example and the JSON of the messages
        before it (``[`` and each message's JSON followed by ``", "``), for start turns.
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
        "_question_affixes",
        "_message",
        "_start_json",
        "_first_json",
        "_follow_json",
        "_rest_json",
        "_question_json",
        "textless",
        "_start_turns_of",
        "_starts",
        "_lead",
        "stripped",
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
        start: str | None,
        start_turns: Dialogue,
        after: str,
        question_affixes: Callable[[Turn], tuple[Any, Any]] | None = None,
        message: Callable[[Turn], Any] | None = None,
        textless: bool = False,
        start_turns_of: Callable[[str], Dialogue] | None = None,
        lead: Callable[[Dialogue], tuple[str, bytes]] | None = None,
    ) -> None:
        self._shot = shot
        self.size = size
        self._example_turns = example_turns
        self._shot_block = shot_block
        self._affixes = affixes
        self._delimiter = delimiter
        self._lead = lead
        self.stripped = False
        """The chat format strips the question's content (``stripped_turn_affixes``): only a
        record whose question ``strip()`` leaves as it is takes these texts."""
        self.start = self._text(start_turns) if start is None and lead is None else start
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
        self._question_affixes = affixes if question_affixes is None else question_affixes
        self._message = message
        self.textless = textless
        """A chat format of messages and no text (API ``messages``): the texts are empty
        and the prompts' ``text`` is ``None``."""
        # a chat format's messages: their JSON, each followed by ", " (per pool index, as the texts)
        self._start_json = b"[" + self._json(start_turns) if message is not None and lead is None else b""
        if lead is not None:
            self.start, self._start_json = lead(start_turns)
        self._first_json: list[bytes | None] = [None] * size
        self._follow_json: list[bytes | None] = [None] * size
        self._rest_json: list[bytes | None] = [None] * size
        self._question_json: dict[str, tuple[bytes, bytes]] = {}  # around the question's content, by separator
        self._start_turns_of = start_turns_of
        self._starts: dict[str, Start] = {}  # by description (records share a few)

    @property
    def after(self) -> str:
        """The text after the question's content."""
        return self._after

    @property
    def chat(self) -> bool:
        """Whether the prompts have messages (a chat format's: :meth:`prefix_and_json`)."""
        return self._message is not None

    def _text(self, turns: Sequence[Turn]) -> str:
        parts = []
        for turn in turns:
            before, after = self._affixes(turn)
            if type(before) is not str or type(after) is not str or type(turn.content) is not str:
                raise Refused
            parts.append(before + turn.content + after)
        return "".join(parts)

    def _json(self, turns: Sequence[Turn]) -> bytes:
        """The JSON of the turns' messages, each followed by ``", "``."""
        assert self._message is not None
        parts = []
        for turn in turns:
            message = self._message(turn)
            if type(message) is not dict:
                raise Refused
            parts.append(safe_utf8(dumps_json(message)) + b", ")
        return b"".join(parts)

    def _make(self, i: int) -> None:
        made = self._example_turns(self._shot(i))
        rest = self._text(made[2])
        if self._message is not None:
            rest_json = self._json(made[2])
            self._first_json[i] = self._json((made[0],)) + rest_json
            self._follow_json[i] = self._json((made[1],)) + rest_json
            self._rest_json[i] = rest_json
        self._first[i] = self._text((made[0],)) + rest
        self._follow[i] = self._text((made[1],)) + rest
        self._made[i] = (made[0], rest)
        self._trailing[i] = made[3]

    def _question_before(self, sep: str) -> str:
        before, after = self._question_affixes(Turn("user", "", sep))
        if type(before) is not str or after != self._after:
            raise Refused
        self._before[sep] = before
        return before

    def _question_message(self, sep: str) -> tuple[bytes, bytes]:
        """The JSON of the question's message before and after its content."""
        assert self._message is not None
        message = self._message(Turn("user", _MARK, sep))
        if type(message) is not dict or message.get("content") != _MARK:
            raise Refused
        parts = dumps_json(message).split(encode_str(_MARK)[1:-1])
        if len(parts) != 2:
            raise Refused
        made = self._question_json[sep] = (safe_utf8(parts[0]), safe_utf8(parts[1]) + b"]")
        return made

    def start_of(self, description: str) -> Start:
        """The :data:`Start` of a record whose description is ``description`` (made once
        per description; at most :data:`_STARTS_KEPT` kept)."""
        made = self._starts.get(description)
        if made is None:
            assert self._start_turns_of is not None
            turns = self._start_turns_of(description)
            if self._lead is not None:
                made = (*self._lead(turns), turns)
            else:
                made = (self._text(turns), b"[" + self._json(turns) if self._message is not None else b"", turns)
            if len(self._starts) >= _STARTS_KEPT:
                self._starts.clear()
            self._starts[description] = made
        return made

    def prefix(self, ids: Sequence[Any], start: Start | None = None) -> str:
        """The text before the record's own question text, its examples at ``ids``
        (after ``start``: the record's description, when it has its own).

        :raises Refused: for an index that is not an ``int`` in the pool (the general
            path says what happens then), or what the meta template does not give as text.
        :raises PromptStyleError: for an example with bad data (the general path reports it).
        """
        first, follow, trailing = self._first, self._follow, self._trailing
        size, delimiter = self.size, self._delimiter
        parts = [self.start if start is None else start[0]]
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

    def prefix_and_json(self, ids: Sequence[Any], start: Start | None = None) -> tuple[str, bytes, bytes]:
        """:meth:`prefix`, and for a chat format the JSON of the messages before the
        question's content (up to its opening quote) and after it (from its closing
        quote to the list's end). (It walks the examples as :meth:`prefix` does, the
        messages beside the text: a loop of its own, so that a plain text's, the
        commoner, collects nothing more.)

        :raises Refused: as :meth:`prefix`.
        :raises PromptStyleError: as :meth:`prefix`.
        """
        first, follow, trailing = self._first, self._follow, self._trailing
        first_json, follow_json = self._first_json, self._follow_json
        size, delimiter = self.size, self._delimiter
        parts = [self.start if start is None else start[0]]
        messages = [self._start_json if start is None else start[1]]
        previous = None
        for i in ids:
            if type(i) is not int or not 0 <= i < size:
                raise Refused
            if first[i] is None:
                self._make(i)
            if previous is None:
                parts.append(first[i])
                messages.append(first_json[i])
            elif previous == delimiter:
                parts.append(follow[i])
                messages.append(follow_json[i])
            else:  # an example without an answer before it: its separator opens this one
                opening, rest = self._made[i]
                opened = opening._replace(sep=previous)
                parts.append(self._text((opened,)) + rest)
                messages.append(self._json((opened,)) + self._rest_json[i])
            previous = trailing[i]
        sep = "" if previous is None else previous
        before = self._before.get(sep)
        parts.append(self._question_before(sep) if before is None else before)
        around = self._question_json.get(sep)
        if around is None:
            around = self._question_message(sep)
        messages.append(around[0])
        return "".join(parts), b"".join(messages), around[1]

    def messages(self, text: str, ids: Sequence[int], start: Start | None = None) -> list[dict[str, Any]]:
        """The messages of a prompt whose text is ``text``, its examples at ``ids`` (a
        chat format's: one per turn of its dialogue), fresh."""
        return self.messages_of(self.own(text, ids, start), ids, start)

    def messages_of(self, own: str, ids: Sequence[int], start: Start | None = None) -> list[dict[str, Any]]:
        """The messages of a prompt whose question's content is ``own``: each turn's, the
        last made as the question's message with a mark for its content is (its JSON is
        written so, :meth:`prefix_and_json`), the content put in."""
        assert self._message is not None
        *head, last = self.dialogue_of(own, ids, start)
        made = [dict(self._message(turn)) for turn in head]
        return [*made, {**self._message(last._replace(content=_MARK)), "content": last.content}]

    def own(self, text: str, ids: Sequence[int], start: Start | None = None) -> str:
        """The question's content of a prompt whose text is ``text``."""
        return text[len(self.prefix(ids, start)) : len(text) - self.stop]

    def dialogue(self, text: str, ids: Sequence[int], start: Start | None = None) -> Dialogue:
        """The dialogue of a prompt whose text is ``text``, its examples at ``ids``."""
        return self.dialogue_of(self.own(text, ids, start), ids, start)

    def dialogue_of(self, own: str, ids: Sequence[int], start: Start | None = None) -> Dialogue:
        """The dialogue of a prompt whose question's content is ``own``."""
        shots = [self._shot(i) for i in ids] if ids else ()
        block, sep = self._shot_block(shots) if shots else ((), "")
        return (*(self.start_turns if start is None else start[2]), *block, Turn("user", own, sep))


class MergedSelection(ExampleSelection):
    """An :class:`ExampleSelection` whose examples and question are one user turn
    (lm-evaluation-harness's chat rules without ``fewshot_as_multiturn``): the text
    before the question is the start's (the chat format's text up to that turn's
    content, ``lead``), then the examples' texts joined as plain text (``affixes``:
    each turn's separator and content), then the question's separator. The messages are
    the start's and one user message holding all of it; the dialogue, the start's turns
    and the turns after them merged by ``merge`` (the chat rules' ``single_turn``).

    :param merge: the chat rules' merge of a dialogue's turns after its system turns.
    """

    __slots__ = ("_merge",)

    def __init__(self, *, merge: Callable[[list[Turn]], list[Turn]], **parts: Any):
        super().__init__(**parts)
        self._merge = merge

    def prefix(self, ids: Sequence[Any], start: Start | None = None) -> str:
        text = super().prefix(ids, start)
        if self.stripped:  # a format that strips the content: the examples' text starts it
            head = len(self.start if start is None else start[0])
            if len(text) > head and text[head].isspace():
                raise Refused
        return text

    def prefix_and_json(self, ids: Sequence[Any], start: Start | None = None) -> tuple[str, bytes, bytes]:
        text = self.prefix(ids, start)
        head = self.start if start is None else start[0]
        head_json = self._start_json if start is None else start[1]
        # the one user message's JSON around its content, as the question's (the message
        # of a mark); JSON escapes one character at a time: the content's is its parts'
        around = self._question_json.get("")
        if around is None:
            around = self._question_message("")
        return text, head_json + around[0] + json_utf8(text[len(head) :])[1:-1], around[1]

    def dialogue_of(self, own: str, ids: Sequence[int], start: Start | None = None) -> Dialogue:
        return tuple(self._merge(list(super().dialogue_of(own, ids, start))))
