"""A rendered prompt's JSON line, made directly rather than through a dict and ``json.dumps``.

``prompt-style render --format jsonl`` writes ``prompt.to_json()`` as one JSON line
per request. Building that dict and handing it to ``json.dumps`` costs more than
rendering the prompt: a dozen attribute reads, the dict, the encoder's set-up and
its walk over the keys. A :class:`PromptEncoder` writes the line of the common shape
(``index``, ``text``, ``messages``, ``continuations``, ``target``, and ``until`` for
a generation task) as one f-string of JSON pieces, each made by the ``json`` module's
own string encoder, and keeps the JSON of what the prompts of a task share (the
continuations of a multiple-choice task, the stop sequences of a generation task)
from one record to the next. Every other shape goes through ``to_json()`` and
``json.dumps``. The text is byte for byte ``json.dumps(prompt.to_json(),
ensure_ascii=False)``'s; like it, it may hold the characters
:func:`~prompt_style.safe.json_lines.dumps_line` escapes, which the caller makes safe
(:class:`~prompt_style.safe.json_lines.LineWriter` does, a batch of lines at a time).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .safe.json_lines import encode_str

__all__ = ["PromptEncoder"]

_dumps = json.dumps
_int_repr = int.__repr__


def _strings(items: Sequence[Any]) -> str:
    """A sequence of ``str`` as a JSON list (``TypeError`` for any other item)."""
    return "[" + ", ".join(map(encode_str, items)) + "]" if items else "[]"


class PromptEncoder:
    """JSON lines of rendered prompts, as ``json.dumps(prompt.to_json(),
    ensure_ascii=False)`` writes them (see the module's documentation).

    :param default_for: given a prompt's ``index``, the ``default`` for
        ``json.dumps`` (called for values JSON cannot hold); made only when a
        prompt holds such a value.
    """

    __slots__ = ("_default_for", "_conts", "_conts_json", "_until", "_until_json")

    def __init__(self, default_for: Callable[[int], Callable[[Any], Any]] | None = None) -> None:
        self._default_for = default_for
        # The last continuations and stop sequences seen, with their JSON: the same
        # tuple for every record of most tasks. Kept alive, so that its identity is
        # never another object's.
        self._conts: Any = None
        self._conts_json = ""
        self._until: Any = None
        self._until_json = ""

    def _default(self, index: Any) -> Callable[[Any], Any] | None:
        return None if self._default_for is None else self._default_for(index)

    def line(self, prompt: Any) -> str:
        """The prompt's JSON line, without the newline."""
        body = self._body(prompt)
        if body is None:
            return _dumps(prompt.to_json(), ensure_ascii=False, default=self._default(prompt.index))
        return f'{{"index": {_int_repr(prompt.index)}, {body}}}'

    def body(self, prompt: Any) -> str:
        """The JSON object of ``prompt.to_json()`` without its ``index`` key."""
        body = self._body(prompt)
        if body is None:
            value = prompt.to_json()
            index = value.pop("index")
            return _dumps(value, ensure_ascii=False, default=self._default(index))
        return f"{{{body}}}"

    def _body(self, prompt: Any) -> str | None:
        """The keys after ``index``, for a prompt of the common shape whose ``index`` is
        an ``int``; ``None`` for any other."""
        common = prompt._json_common()
        if common is None or type(prompt.index) is not int:
            return None
        text, messages, continuations, target, until = common
        try:
            if type(text) is str:
                text = encode_str(text)
            elif text is None:
                text = "null"
            else:
                return None
            if continuations is self._conts:
                conts = self._conts_json
            else:
                conts = _strings(continuations)
                if type(continuations) is tuple:
                    self._conts, self._conts_json = continuations, conts
            kind = type(target)
            if kind is int:
                target = _int_repr(target)
            elif kind is str:
                target = encode_str(target)
            elif target is None:
                target = "null"
            else:
                target = _dumps(target, ensure_ascii=False, default=self._default(prompt.index))
            if messages is None:
                messages = "null"
            elif type(messages) is not str:  # a str is their JSON already (_json_common)
                messages = _dumps(messages, ensure_ascii=False, default=self._default(prompt.index))
            if until is None:
                return f'"text": {text}, "messages": {messages}, "continuations": {conts}, "target": {target}'
            if until is self._until:
                stops = self._until_json
            else:
                stops = _strings(until)
                if type(until) is tuple:
                    self._until, self._until_json = until, stops
        except TypeError:  # an item that is not a str: json.dumps says what it makes of it
            return None
        return f'"text": {text}, "messages": {messages}, "continuations": {conts}, "target": {target}, "until": {stops}'
