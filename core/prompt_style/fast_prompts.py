"""The prompts of the compiled fast path (:mod:`prompt_style.fastpath`), made with
only the fields that vary from record to record.

A task on the fast path shares everything but each record's own question: the turns
before it, the text around it, the fields every prompt carries. A
:class:`LazyDialoguePrompt` holds the record's fields and a :class:`DeferredDialogue`
holding what the task's prompts share; the dialogue (and a chat format's messages)
are built the first time they are read. :class:`ChatMessages` writes the JSON of a
chat format's messages around the record's content.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .render import RenderedPrompt
from .safe.json_lines import encode_str
from .types import Dialogue, Turn

__all__ = [
    "DeferredDialogue",
    "ChatMessages",
    "shaped_prompt",
    "LazyDialoguePrompt",
    "LazyMessagesPrompt",
    "SelectedPrompt",
    "SelectedMessagesPrompt",
    "MARKER",
]

MARKER = "\x00prompt-style fast path\x00"
"""A text no record holds, put where a record's own text goes to find, in the JSON of
what a task's prompts share, what stands before and after it."""


class DeferredDialogue:
    """The dialogue of a fast-path prompt, before it is built: the turns shared by
    every record of the task, then the record's question turn, whose text is the
    prompt's text between the shared prefix (``start`` characters) and the meta
    template's text after the turn (``stop`` characters). It also holds the fields
    every prompt of the task shares (``plugins``, ``until``, ``fewshot_indices``), and,
    for a chat format, how its ``messages`` are made (``messages``).

    ``bare``: the prompt's dialogue is ``turns`` alone, with no turn of the record's
    (``loglikelihood_rolling``, whose text is the document itself). ``textless``: the
    meta template gives messages and no text (API ``messages``); the prompts are
    :class:`LazyMessagesPrompt`, whose own content is their last message's."""

    __slots__ = (
        "turns",
        "start",
        "stop",
        "sep",
        "plugins",
        "until",
        "fewshot_indices",
        "messages",
        "head",
        "tail",
        "bare",
        "textless",
        "lead",
        "extras",
        "last",
        "selected",
        "prefill",
    )

    def __init__(
        self,
        turns: Dialogue,
        start: int,
        stop: int,
        sep: str,
        plugins: Any = None,
        until: Any = None,
        fewshot_indices: Any = None,
        messages: ChatMessages | None = None,
        head: str | None = None,
        tail: str | None = None,
        *,
        bare: bool = False,
        textless: bool = False,
        lead: str = "",
        extras: bool = False,
        last: Turn | None = None,
        selected: Any = None,
        prefill: Turn | None = None,
    ) -> None:
        self.turns = turns
        self.start = start
        self.stop = stop
        self.sep = sep
        self.plugins = plugins
        self.until = until
        self.fewshot_indices = fewshot_indices
        self.messages = messages
        self.head = head
        """The text before the record's own (``start`` characters), when known."""
        self.tail = tail
        """The text after it (``stop`` characters), when known."""
        self.bare = bare
        self.textless = textless
        self.lead = lead
        """What the record's turn holds before its own text (lm-evaluation-harness's one
        user turn for examples and question: the examples)."""
        self.extras = extras
        """Whether its prompts hold more than the common fields (a task-template file's
        answer choices, OpenCompass's ``mode``): their JSON is then ``RenderedPrompt``'s."""
        self.last = last
        """The record's turn but for its content (``None``: a user turn with ``sep``)."""
        self.prefill = prefill
        """The assistant turn after the record's (lm-evaluation-harness's ``gen_prefix``, the
        same for every record), whose text the ``tail`` ends with; ``None``: none."""
        self.selected = selected
        """Examples chosen per record (an :class:`~prompt_style.fast_examples.ExampleSelection`):
        the prompts are :class:`SelectedPrompt`, whose text starts with their examples'."""

    def content(self, text: str) -> str:
        """The record's question turn's content, from the prompt's text."""
        return text[self.start : len(text) - self.stop]

    def resolve(self, text: str) -> Dialogue:
        if self.bare:
            return self.turns
        own = self.lead + text[self.start : len(text) - self.stop]
        last = self.last
        turn = Turn("user", own, self.sep) if last is None else last._replace(content=own)
        if self.prefill is not None:
            return (*self.turns, turn, self.prefill)
        return (*self.turns, turn)


def shaped_prompt(deferred: DeferredDialogue, index: int, own: str, target: Any) -> LazyDialoguePrompt:
    """A fast-path prompt of a shape of its own (a task-template file's, OpenCompass's
    generation dialogue), with no continuations: its text the ``deferred`` head, ``own``
    and its tail, or, for a meta template of messages and no text, ``own`` kept as the
    record's message's content."""
    textless = deferred.textless
    made = object.__new__(LazyMessagesPrompt if textless else LazyDialoguePrompt)
    made.index = index
    if textless:
        made.text = None
        made._content = own
    else:
        made.text = f"{deferred.head}{own}{deferred.tail}"
    made.continuations = ()
    made.target = target
    made._deferred = deferred
    made.permutation = None
    made.fewshot_indices = deferred.fewshot_indices
    made.doc_id = None
    return made


class ChatMessages:
    """The ``messages`` of a chat format's fast-path prompts: those of the turns every
    record shares, then the record's own message, the same but for its ``content``
    (the meta template promises it: ``last_turn_affixes``), which is ``lead`` (text
    every record's message starts with: the examples of lm-evaluation-harness's one
    user turn, ``fewshot_as_multiturn=False``) and then the record's own text; with
    ``position`` -2, the record's message is followed by an answer prefill every record
    shares (``prefilled_turn_affixes``). Built when first read; their JSON is written
    from the task's, around the own text: ``json_before`` (up to and with the opening
    quote and the lead's JSON) and ``json_after`` (from the closing quote)."""

    __slots__ = ("messages", "position", "lead", "json_before", "json_after")

    def __init__(
        self, messages: list[dict[str, Any]], json_before: str, json_after: str, lead: str = "", position: int = -1
    ) -> None:
        self.messages = messages
        self.position = position
        self.lead = lead
        self.json_before = json_before
        self.json_after = json_after

    def make(self, content: str) -> list[dict[str, Any]]:
        """The messages, the record's own text ``content`` in its message (after the
        lead), fresh (a caller may change them, as the general path's)."""
        made = [dict(m) for m in self.messages]
        made[self.position]["content"] = self.lead + content
        return made

    def json(self, content: str) -> str:
        """``json.dumps(self.make(content), ensure_ascii=False)``."""
        return f"{self.json_before}{encode_str(content)[1:-1]}{self.json_after}"

    @classmethod
    def of(cls, messages: Any, content: str, position: int = -1) -> ChatMessages | None:
        """From the messages a meta template made for a dialogue whose turn at ``position``
        (the last, or the one before an answer prefill) holds ``content`` (the lead: what
        every record's content starts with); ``None`` when they are not of that shape or
        not JSON."""
        if type(messages) is not list or len(messages) < -position or not all(type(m) is dict for m in messages):
            return None
        own = messages[position]
        if own.get("content") != content or type(own.get("content")) is not str:
            return None
        probe = [dict(m) for m in messages]
        probe[position]["content"] = content + MARKER
        try:
            text = json.dumps(probe, ensure_ascii=False)
        except (TypeError, ValueError):
            return None
        parts = text.split(encode_str(MARKER)[1:-1])  # (JSON escapes one character at a time)
        if len(parts) != 2:
            return None
        return cls(messages, parts[0], parts[1], content, position)


_SHARED = frozenset({"plugins", "until", "fewshot_indices"})
_COMPARED = tuple(f.name for f in dataclasses.fields(RenderedPrompt) if f.compare)
_SHOWN = tuple(f.name for f in dataclasses.fields(RenderedPrompt) if f.repr)
_ALL = tuple(f.name for f in dataclasses.fields(RenderedPrompt))
# What the fields a fast-path prompt does not set read as: text-only meta templates
# give no messages, and the other fields take their defaults.
_DEFAULTS = {
    "messages": None,
    **{
        f.name: f.default
        for f in dataclasses.fields(RenderedPrompt)
        if f.default is not dataclasses.MISSING and f.name != "dialogue"
    },
}


class LazyDialoguePrompt(RenderedPrompt):
    """A :class:`RenderedPrompt` of the fast path, made with only the fields that
    vary (``index``, ``text``, ``continuations``, ``target``): ``plugins``,
    ``until`` and ``fewshot_indices`` read as the task's, the others as their defaults, and ``dialogue``
    (rarely read: harnesses read ``text``) is built the first time it is read.
    Otherwise it is a ``RenderedPrompt``: equal to one with the same fields, shown
    as one, and pickled and copied as one."""

    __slots__ = ("_deferred",)

    def _body(self) -> str:
        """The text the shared head and tail stand around (the prompt's text)."""
        return self.text

    def __getattr__(self, name: str) -> Any:
        # Called only for a slot that was never set.
        if name == "dialogue":
            value = self._deferred.resolve(self._body())
            self.dialogue = value
            return value
        if name == "messages":
            deferred = self._deferred
            if deferred.messages is None:
                return None  # text only
            value = deferred.messages.make(deferred.content(self._body()))
            self.messages = value
            return value
        if name in _SHARED:
            return getattr(self._deferred, name)
        try:
            return _DEFAULTS[name]
        except KeyError:
            raise AttributeError(f"'RenderedPrompt' object has no attribute {name!r}") from None

    def to_json(self) -> dict[str, Any]:
        # RenderedPrompt.to_json reads a dozen fields that are unset here (each through
        # __getattr__); only these can differ from their defaults.
        deferred = self._deferred
        if self.permutation is not None or deferred.extras:  # (a choice order's prompt; more fields)
            return RenderedPrompt.to_json(self)
        out = {
            "index": self.index,
            "text": self.text,
            "messages": None if deferred.messages is None else self.messages,
            "continuations": list(self.continuations),
            "target": self.target,
        }
        if deferred.until is not None:
            out["until"] = list(deferred.until)
        return out

    def _json_common(self) -> tuple[Any, Any, Any, Any, Any, Any] | None:
        # the text around the question (and a chat format's messages) are the task's:
        # the encoder writes their JSON once (prompt_style.lines)
        if self.permutation is not None:  # (a choice order's prompt: _json_ordered)
            return None
        return self._json_shape()

    def _json_ordered(self) -> tuple[Any, ...] | None:
        # a choice order's prompt (RenderedPrompt._json_ordered): the common shape, then
        # the order's members
        if self.permutation is None:
            return None
        common = self._json_shape()
        return None if common is None else (common, self.permutation, self.rotation, self.circular_pattern)

    def _json_shape(self) -> tuple[Any, Any, Any, Any, Any, Any] | None:
        """:meth:`_json_common`, whatever the choice order."""
        deferred = self._deferred
        if deferred.extras:  # (extra fields: to_json() and json.dumps, or the encoder's more_members())
            return None
        return self.text, None, self.continuations, self.target, deferred.until, deferred

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RenderedPrompt):
            return tuple([getattr(self, name) for name in _COMPARED]) == tuple(
                [getattr(other, name) for name in _COMPARED]
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as RenderedPrompt's

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _SHOWN)
        return f"RenderedPrompt({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return RenderedPrompt, tuple([getattr(self, name) for name in _ALL])


class LazyMessagesPrompt(LazyDialoguePrompt):
    """A :class:`LazyDialoguePrompt` of a meta template that gives messages and no text
    (API ``messages``): its ``text`` is ``None``, and the record's own content (the
    last message's) is kept in ``_content``; the messages are built when first read."""

    __slots__ = ("_content",)

    def _body(self) -> str:
        return self._content  # (its DeferredDialogue's head and tail are empty)

    def _json_shape(self) -> tuple[Any, Any, Any, Any, Any, Any] | None:
        # the encoder writes "text": null and the messages' JSON around the content
        # (its DeferredDialogue is textless): the content stands where a text would
        deferred = self._deferred
        if deferred.extras:
            return None
        return self._content, None, self.continuations, self.target, deferred.until, deferred


class SelectedPrompt(LazyDialoguePrompt):
    """A :class:`LazyDialoguePrompt` whose examples the retriever chose for its record
    (its ``fewshot_indices``, set): its text is their text and then its own, and its
    dialogue is built from them (its :class:`DeferredDialogue`'s ``selected``)."""

    __slots__ = ("_start",)  # the record's own description's turns and text (ExampleSelection.start_of), or None

    def __getattr__(self, name: str) -> Any:
        if name == "dialogue":
            value = self._deferred.selected.dialogue(self.text, self.fewshot_indices, self._start)
            self.dialogue = value
            return value
        if name == "messages":  # a chat format's, one per turn (ExampleSelection.messages)
            selected = self._deferred.selected
            value = selected.messages(self.text, self.fewshot_indices, self._start) if selected.chat else None
            self.messages = value
            return value
        return LazyDialoguePrompt.__getattr__(self, name)

    def to_json(self) -> dict[str, Any]:
        out = LazyDialoguePrompt.to_json(self)
        if self._deferred.selected.chat:
            out["messages"] = self.messages
        return out

    def _json_shape(self) -> tuple[Any, Any, Any, Any, Any, Any] | None:
        # no text shared around the question: the encoder writes the whole text
        messages = self.messages if self._deferred.selected.chat else None
        return self.text, messages, self.continuations, self.target, self._deferred.until, None


class SelectedMessagesPrompt(SelectedPrompt):
    """A :class:`SelectedPrompt` of a meta template that gives messages and no text (API
    ``messages``): its ``text`` is ``None``, and its question's content is kept in
    ``_content``; its dialogue and messages are built from it when first read."""

    __slots__ = ("_content",)

    def _body(self) -> str:
        return self._content

    def __getattr__(self, name: str) -> Any:
        if name == "dialogue":
            value = self._deferred.selected.dialogue_of(self._content, self.fewshot_indices, self._start)
            self.dialogue = value
            return value
        if name == "messages":
            value = self._deferred.selected.messages_of(self._content, self.fewshot_indices, self._start)
            self.messages = value
            return value
        return SelectedPrompt.__getattr__(self, name)

    def _json_shape(self) -> tuple[Any, Any, Any, Any, Any, Any] | None:
        return None, self.messages, self.continuations, self.target, self._deferred.until, None
