"""A rendered prompt's JSON line, made directly as UTF-8 rather than through a dict and ``json.dumps``.

``prompt-style render --format jsonl`` writes ``dumps_line(prompt.to_json())`` per
request. Building that dict, handing it to ``json.dumps`` and encoding the text to
UTF-8 costs more than rendering the prompt. A :class:`PromptEncoder` makes the same
bytes faster:

- the common shape (``index``, ``text``, ``messages``, ``continuations``, ``target``,
  and ``until`` for a generation task) is written as JSON pieces, each made by the
  ``json`` module's own string encoder, joined as bytes;
- what the prompts of a task share is encoded once: the continuations of a
  multiple-choice task and the stop sequences of a generation task (the same tuple
  from record to record), and, for the fast path's prompts, the text before and
  after the record's own question (JSON escapes one character at a time, so the
  JSON of ``head + question + tail`` is that of each part, joined) and a chat
  format's messages around it: per record only the question is encoded;
- every piece is made safe as :func:`~prompt_style.safe.json_lines.dumps_line`
  makes a line (U+0085, U+2028, U+2029 and lone surrogates written as ``\\uXXXX``):
  an ASCII piece needs no look, another is searched for the three line ends, and a
  lone surrogate shows when the piece is encoded to UTF-8.

Every other shape goes through ``to_json()`` and ``json.dumps``. The bytes are
always ``(dumps_line(prompt.to_json()) + "\\n").encode("utf-8")``.

A prompt says what it holds with ``_json_common()``: ``None`` for a shape this
module does not write itself, else ``(text, messages, continuations, target, until,
shared)``, where ``shared`` is ``None`` or an object whose ``start`` and ``stop``
characters of the text are the same for every prompt with that object (the fast
path's ``DeferredDialogue``), and whose ``messages``, when not ``None``, has
``json_before`` and ``json_after``: the messages' JSON around the JSON of the text
between them (without its quotes: they are in ``json_before`` and ``json_after``).
A ``shared`` whose ``textless`` is true stands for prompts with no text (``"text":
null``): the ``text`` given is then the record's own part of the last message's
content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .safe.json_lines import dumps_json, json_utf8, safe_utf8
from .types import Dialogue

__all__ = ["PromptEncoder", "json_strings", "dialogue_to_json"]

_int_repr = int.__repr__


def dialogue_to_json(dialogue: Dialogue) -> list[dict[str, Any]]:
    """A dialogue as JSON, OpenCompass ``PromptList`` style: ``{"role", "prompt",
    "section"}`` per turn, plus ``fallback_role`` when set; a raw-text item (a
    plain string of the ``PromptList``) has the role ``""``."""
    out = []
    for turn in dialogue:
        content = turn.content
        item: dict[str, Any] = {
            "role": turn.role,
            "prompt": content if isinstance(content, str) else [dict(p) for p in content],
            "section": turn.section,
        }
        if turn.fallback_role is not None:
            item["fallback_role"] = turn.fallback_role
        if turn.extra:
            item["extra"] = dict(turn.extra)
        out.append(item)
    return out


def json_strings(items: Sequence[Any]) -> bytes:
    """A sequence of ``str`` as a JSON list, safe UTF-8 (``TypeError`` for another item)."""
    if not items:
        return b"[]"
    body = '", "'.join(items)
    # printable text without a quote or a backslash of its own is its own JSON, as
    # json.dumps(ensure_ascii=False) writes it: no escape per item (the quotes counted
    # are the separators'); what safe UTF-8 escapes (U+2028, U+2029, U+0085, a lone
    # surrogate) is never printable
    if body.isprintable() and "\\" not in body and body.count('"') == 2 * len(items) - 2:
        return b'["' + body.encode("utf-8") + b'"]'
    return b"[" + b", ".join(map(json_utf8, items)) + b"]"


_COMMON = frozenset({"index", "text", "messages", "continuations", "target", "until", "mode", "dialogue"})


def _order_json(permutation: Any, rotation: Any, pattern: Any) -> bytes | None:
    """``, "permutation": [...]`` (and ``, "rotation": N, "circular_pattern": [...]``) as
    :meth:`RenderedPrompt.to_json` ends, for a tuple of ints (an int, a list of texts);
    ``None`` for other values (``to_json()`` then says what they make)."""
    if type(permutation) is not tuple or not all(type(p) is int for p in permutation):
        return None
    made = b', "permutation": [' + b", ".join([b"%d" % p for p in permutation]) + b"]"
    if rotation is None:
        return made
    if type(rotation) is not int or type(pattern) is not list:
        return None
    try:
        return made + b', "rotation": %d, "circular_pattern": %b' % (rotation, json_strings(pattern))
    except TypeError:
        return None


class PromptEncoder:
    """JSON lines of rendered prompts: ``line(prompt)`` is
    ``(dumps_line(prompt.to_json()) + "\\n").encode("utf-8")`` (see the module's
    documentation).

    :param default_for: given a prompt's ``index``, the ``default`` for
        ``json.dumps`` (called for values JSON cannot hold); made only when a
        prompt holds such a value.
    """

    __slots__ = ("_default_for", "_conts", "_conts_json", "_until", "_until_json", "_shared", "_pieces", "_turns")

    def __init__(self, default_for: Callable[[int], Callable[[Any], Any]] | None = None) -> None:
        self._default_for = default_for
        # The last continuations, stop sequences and shared text seen, with their JSON:
        # the same object for every record of most tasks. Kept alive, so that its
        # identity is never another object's.
        self._conts: Any = None
        self._conts_json = b""
        self._until: Any = None
        self._until_json = b""
        self._shared: Any = None
        self._pieces: tuple[bytes, bytes, bytes | None] = (b"", b"", None)
        self._turns: dict[Any, bytes] = {}  # a turn shared by the prompts -> its JSON (dialogue_json)

    def _default(self, index: Any) -> Callable[[Any], Any] | None:
        return None if self._default_for is None else self._default_for(index)

    def line(self, prompt: Any) -> bytes:
        """The prompt's JSON line, newline included, as safe UTF-8."""
        members = self._members(prompt)
        if members is None:
            members = self.more_members(prompt)
            if members is None:
                return safe_utf8(dumps_json(prompt.to_json(), self._default(prompt.index))) + b"\n"
        return b'{"index": %d, %b}\n' % (prompt.index, members)

    def members(self, prompt: Any) -> bytes:
        """The members of ``prompt.to_json()`` after ``index``, as safe UTF-8: what its
        JSON object holds between ``{"index": N, `` and ``}``."""
        members = self._members(prompt)
        if members is None:
            members = self.more_members(prompt)
        if members is None:
            value = prompt.to_json()
            index = value.pop("index")
            members = self.members_of(value, index)
        return members

    def members_of(self, value: dict[str, Any], index: Any) -> bytes:
        """The members of ``value`` (a prompt's ``to_json()`` without its ``index``), as
        safe UTF-8."""
        return safe_utf8(dumps_json(value, self._default(index))[1:-1])

    def more_members(self, prompt: Any, taken: frozenset[str] = frozenset()) -> bytes | None:
        """:meth:`members` for a prompt of the common shape that also holds ``mode`` with
        its ``dialogue`` and the style's ``extra`` fields (``_json_more()``), each member
        encoded on its own (a JSON object's text is its members', joined); ``None`` for
        any other prompt, or one whose extra fields reuse a name of the common keys or of
        ``taken`` (``to_json()`` then says what they make)."""
        json_more = getattr(prompt, "_json_more", None)  # a RenderedPrompt's (any object with to_json())
        more = None if json_more is None else json_more()
        if more is None or type(prompt.index) is not int:
            return None
        index = prompt.index
        text, messages, continuations, target, until, mode, dialogue, extra = more
        if extra and not (_COMMON.isdisjoint(extra) and taken.isdisjoint(extra)):
            return None
        try:
            parts = self._text_and_messages(text, messages, index)
            if parts is None:
                return None
            parts.append(self.rest(index, continuations, target, until))
            if mode is not None:
                turns = self.dialogue_json(dialogue)
                if turns is None:
                    return None  # (turns of other shapes: to_json() says what they make)
                parts += (b', "mode": ', safe_utf8(dumps_json(mode)), b', "dialogue": ', turns)
            if extra:
                for key, value in extra.items():
                    if type(key) is not str:
                        return None  # (json.dumps writes other keys its own way)
                    parts += (b", ", json_utf8(key), b": ", self._value(value, index))
        except TypeError:  # a continuation or a stop sequence that is not a str
            return None
        return b"".join(parts)

    def dialogue_json(self, dialogue: Any) -> bytes | None:
        """The JSON of :func:`dialogue_to_json` of ``dialogue``, as safe UTF-8; ``None``
        for a turn whose JSON another ``default`` may decide (parts, extra keys). The JSON of a
        turn outside the ``round`` section (the begin, the in-context examples: the same
        in every prompt of a task) is kept, up to 4,096 turns."""
        memo = self._turns
        parts = []
        for turn in dialogue:
            if type(turn.content) is not str or turn.extra:
                return None
            made = memo.get(turn)
            if made is None:
                made = safe_utf8(dumps_json(dialogue_to_json((turn,))[0]))
                if turn.section != "round" and len(memo) < 4096:
                    memo[turn] = made
            parts.append(made)
        return b"[" + b", ".join(parts) + b"]"

    def _value(self, value: Any, index: int) -> bytes:
        """A member's value as safe UTF-8 JSON: a list of texts (the answer choices)
        without ``json.dumps``."""
        if type(value) is list:
            try:
                return json_strings(value)
            except TypeError:
                pass
        elif type(value) is str:
            return json_utf8(value)
        elif value is None:
            return b"null"
        return safe_utf8(dumps_json(value, self._default(index)))

    def common_members(self, prompt: Any) -> bytes | None:
        """:meth:`members` for a prompt of the common shape (whose keys are ``text``,
        ``messages``, ``continuations``, ``target`` and ``until`` only), else ``None``."""
        return self._members(prompt)

    def _members(self, prompt: Any) -> bytes | None:
        """The members after ``index``, for a prompt of the common shape whose ``index``
        is an ``int``; ``None`` for any other."""
        json_common = getattr(prompt, "_json_common", None)  # a RenderedPrompt's (any object with to_json())
        common = None if json_common is None else json_common()
        order = b""
        if common is None:
            # a choice order's prompt: the common shape, then the order (to_json's last keys)
            json_ordered = getattr(prompt, "_json_ordered", None)
            ordered = None if json_ordered is None else json_ordered()
            if ordered is None:
                return None
            common, permutation, rotation, pattern = ordered
            order = _order_json(permutation, rotation, pattern)
            if order is None:
                return None
        if type(prompt.index) is not int:
            return None
        text, messages, continuations, target, until, shared = common
        try:
            if shared is not None and type(text) is str:
                if shared is not self._shared:
                    self._share(shared, text)
                before, after, chat_after = self._pieces
                start = shared.start
                question = text[start : len(text) - shared.stop]
                own = json_utf8(question)[1:-1]
                parts = [before, own, after]
                if chat_after is not None:  # a chat format's messages, around the same question
                    parts.append(own)
                    parts.append(chat_after)
            else:
                made = self._text_and_messages(text, messages, prompt.index)
                if made is None:
                    return None
                parts = made
            parts.append(self.rest(prompt.index, continuations, target, until))
            if order:
                parts.append(order)
        except TypeError:  # an item that is not a str: json.dumps says what it makes of it
            return None
        return b"".join(parts)

    def _text_and_messages(self, text: Any, messages: Any, index: int) -> list[bytes] | None:
        """The ``text`` and ``messages`` members as safe UTF-8 pieces; ``None`` for a text
        that is neither a ``str`` nor ``None``."""
        if type(text) is str:
            text = json_utf8(text)
        elif text is None:
            text = b"null"
        else:
            return None
        messages = b"null" if messages is None else safe_utf8(dumps_json(messages, self._default(index)))
        return [b'"text": ', text, b', "messages": ', messages]

    def rest(self, index: int, continuations: Sequence[str], target: Any, until: Sequence[str] | None) -> bytes:
        """The members after ``messages`` of a prompt of the common shape: its
        continuations, target and (``until`` not ``None``) stop sequences, as safe UTF-8.

        :raises TypeError: for a continuation or stop sequence that is not a ``str``.
        """
        if continuations is self._conts:
            conts = self._conts_json
        else:
            conts = json_strings(continuations)
            if type(continuations) is tuple:
                self._conts, self._conts_json = continuations, conts
        kind = type(target)
        if kind is int:
            gold = b"%d" % target
        elif kind is str:
            gold = json_utf8(target)
        elif target is None:
            gold = b"null"
        else:
            gold = safe_utf8(dumps_json(target, self._default(index)))
        if until is None:
            return b', "continuations": %b, "target": %b' % (conts, gold)
        if until is self._until:
            stops = self._until_json
        else:
            stops = json_strings(until)
            if type(until) is tuple:
                self._until, self._until_json = until, stops
        return b', "continuations": %b, "target": %b, "until": %b' % (conts, gold, stops)

    @property
    def shared_before(self) -> bytes:
        """The members' start of the prompts that share the text last shared (``before``
        of :meth:`shared_pieces`): a prompt of the common shape with that text begins
        with it (``b""`` before any)."""
        return self._pieces[0]

    def shared_pieces(self, shared: Any) -> tuple[bytes, bytes, bytes | None]:
        """``(before, after, chat_after)`` for the prompts that share ``shared`` (which
        knows its ``head`` and ``tail`` text): a prompt's members are ``before``, its
        own text's JSON (without quotes), ``after``, for a chat format the own text's
        JSON again and ``chat_after``, then :meth:`rest`."""
        if shared is not self._shared:
            self._share(shared, shared.head + shared.tail)
        return self._pieces

    def _share(self, shared: Any, text: str) -> None:
        """The JSON of what every prompt with ``shared`` holds around its question."""
        head = text[: shared.start]
        tail = text[len(text) - shared.stop :]
        chat = shared.messages
        if getattr(shared, "textless", False):  # no text: the own text is the last message's content
            self._shared = shared
            if chat is None:  # nor messages (perplexity candidates): no own text
                self._pieces = (b'"text": null, "messages": null', b"", None)
                return
            self._pieces = (
                b'"text": null, "messages": ' + safe_utf8(chat.json_before),
                safe_utf8(chat.json_after),
                None,
            )
            return
        before = b'"text": "' + json_utf8(head)[1:-1]
        after = json_utf8(tail)[1:-1] + b'", "messages": '
        if chat is None:
            after += b"null"
            chat_after = None
        else:
            after += safe_utf8(chat.json_before)
            chat_after = safe_utf8(chat.json_after)
        self._shared = shared
        self._pieces = (before, after, chat_after)
