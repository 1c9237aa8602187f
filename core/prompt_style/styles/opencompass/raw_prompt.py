"""OpenAI-style message lists: OpenCompass's ``RawPromptTemplate``, a template type of
the ``opencompass`` style (:data:`~prompt_style.styles.opencompass.TEMPLATE_TYPES`).

A ``RawPromptTemplate`` holds ``messages``, a list whose elements are:

* ``{"role": "system"|"user"|"assistant", "content": ...}`` — a message; a string
  content has its ``{field}`` placeholders filled from the record (unless
  ``format_variables`` is false), a list of content parts passes as it is;
* ``{"expand_column": "history"}`` — the record's ``history`` field, a list of
  messages, inserted as they are (never filled);
* the ice token (``"</E>"``) — where the in-context examples' messages go.

The prompt is a dialogue of turns whose ``section`` is :data:`MESSAGES`, one per
message, in order, roles as written (``system``, ``user``, ``assistant``). The
OpenCompass meta templates send them to API models as they are (OpenCompass's
``APITemplateParser`` passes such a list through) and show them to language
models as the equivalent ``PromptTemplate`` dialogue (see
:mod:`prompt_style.meta.opencompass`).

Each in-context example (OpenCompass's ``generate_ice_item``) is the ice
template's messages filled with the example's whole record, its ice-token
strings left out; the examples' messages follow one another with nothing
between them. As with every OpenCompass template here, placeholders are filled
once (a value is never scanned again) and the output column reads
``gen_field_replace_token`` in generation prompts (OpenCompass fills it: see
docs/opencompass.md).

``GenInferencer(multiround=True)`` makes every empty assistant message a slot the
model fills turn by turn: the renderer cuts the dialogue into one request per
slot (:data:`MULTIROUND`, :mod:`prompt_style.conversation`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import StyleError, cut
from ...types import Dialogue, Turn
from .template import FieldText, Ice, TemplateConfigError, register_template_type

__all__ = ["MESSAGES", "MULTIROUND", "ROLES", "RawPromptTemplate", "message_turn"]

MESSAGES = "messages"
"""The ``Turn.section`` of a message of a ``RawPromptTemplate`` prompt."""

MULTIROUND = "multiround"
"""The ``infer_mode`` of ``GenInferencer(multiround=True)``: one request per empty
assistant message, the model's replies filling the earlier ones."""

ROLES = ("system", "user", "assistant")
"""The roles a message may have (OpenCompass checks the template's; its API models
accept no others)."""


def _parts(content: Sequence[Any], where: str, *, config_key: str | None) -> tuple[Mapping[str, Any], ...]:
    parts = []
    for i, part in enumerate(content):
        if not isinstance(part, Mapping):
            message = f"{where}: content part {i} must be a mapping ({{type: text, text: ...}}), not {cut(part)}"
            if config_key is not None:
                raise TemplateConfigError(message, key=f"{config_key}.content.{i}")
            raise StyleError(message)
        parts.append(copy.deepcopy(dict(part)))
    return tuple(parts)


def message_turn(message: Any, where: str, *, key: str | None = None) -> Turn:
    """A message of a record (an ``expand_column`` item) as a turn, checked.

    :param where: how the message is named in errors (``"history[2]"``).
    :raises StyleError: naming ``where`` for anything OpenCompass's API models
        could not send.
    """
    if not isinstance(message, Mapping):
        raise StyleError(
            f"{where} must be a message {{role, content}}, not {cut(message)}",
            key=key,
            hint="an expand_column field holds a list of {role: user|assistant|system, content: ...}",
        )
    role = message.get("role")
    if role not in ROLES:
        shown = "no role" if role is None else f"the role {cut(role)}"
        raise StyleError(
            f"{where} has {shown}; a message's role is system, user or assistant",
            key=key,
            hint="OpenCompass's API models send only these roles",
        )
    if "content" not in message:
        raise StyleError(f"{where} has no content", key=key, hint="every message needs a content")
    content = message["content"]
    if isinstance(content, str):
        pass
    elif isinstance(content, (list, tuple)):
        content = _parts(content, where, config_key=None)
    else:
        raise StyleError(f"{where}: content must be a string or a list of content parts, not {cut(content)}", key=key)
    extra = {k: copy.deepcopy(v) for k, v in message.items() if k != "role" and k != "content"}
    return Turn(role, content, "\n" if content else "", None, MESSAGES, extra or None)


@dataclass(frozen=True)
class _Message:
    """A message of the template: content compiled once."""

    role: str
    text: FieldText | None
    """The content with placeholders (``format_variables``); ``None`` when ``content`` is used as is."""
    content: Any
    """The content when not filled: a string, or a tuple of content parts."""
    extra: Mapping[str, Any] | None

    def turn(self, entry: Mapping[str, Any], override: Mapping[str, Any] | None) -> Turn:
        content = self.content if self.text is None else self.text.fill(entry, override)
        return Turn(self.role, content, "\n" if content else "", None, MESSAGES, self.extra)


_ICE = "ice"
_EXPAND = "expand"
_MESSAGE = "message"


@register_template_type
class RawPromptTemplate:
    """A ``RawPromptTemplate`` (``messages``, ``format_variables``, ``ice_token``), compiled once.

    It offers what :class:`~prompt_style.styles.opencompass.InferPrompts` asks of a
    template: ``kind`` (``"messages"``), ``labels`` (none), ``ice_token``,
    ``is_dialogue``, ``has_ice_slot()``, ``ice_item(entry, label)`` and
    ``fill(entry, ice, label, override)``.
    """

    type_name = "RawPromptTemplate"
    arguments: tuple[str, ...] = ("messages", "format_variables", "ice_token")
    argument_hints: Mapping[str, str] = {
        "template": "a RawPromptTemplate has messages (a list of {role, content}), not template"
    }
    kind = "messages"
    labels: tuple[Any, ...] = ()
    sep_token = None
    is_dialogue = True
    """In-context examples are joined without ``ice_separator``/``ice_eos_token`` (as OpenCompass does)."""

    def __init__(
        self,
        messages: Any,
        format_variables: Any = True,
        ice_token: Any = "</E>",
        *,
        key: str = "prompt_template",
    ) -> None:
        self.key = key
        if messages is None:
            raise TemplateConfigError(
                "has no messages", key=key, hint="for example messages: [{role: user, content: '{question}'}]"
            )
        if ice_token is not None and (not isinstance(ice_token, str) or not ice_token):
            raise TemplateConfigError(f"must be a non-empty string, not {ice_token!r}", key=f"{key}.ice_token")
        if not isinstance(format_variables, bool):
            raise TemplateConfigError(f"must be true or false, not {format_variables!r}", key=f"{key}.format_variables")
        self.ice_token = ice_token
        self.format_variables = format_variables
        mkey = f"{key}.messages"
        if not isinstance(messages, (list, tuple)):
            raise TemplateConfigError(
                f"must be a list of messages, not {type(messages).__name__}",
                key=mkey,
                hint="for example [{role: user, content: '{question}'}]",
            )
        items: list[tuple[str, Any, str]] = []
        for i, raw in enumerate(messages):
            items.append(self._item(raw, f"{mkey}.{i}"))
        self._items = tuple(items)

    # -- compiling -------------------------------------------------------------------

    def _item(self, raw: Any, key: str) -> tuple[str, Any, str]:
        if isinstance(raw, str):
            if raw == self.ice_token:
                return (_ICE, None, key)
            # OpenCompass skips any other string silently; a stray string is a mistake.
            why = f"the ice_token {self.ice_token!r}" if self.ice_token is not None else "an ice_token (there is none)"
            raise TemplateConfigError(
                f"the string {cut(raw)} is not {why}; a message is a mapping {{role, content}}",
                key=key,
                hint="strings in messages only mark where the in-context examples go",
            )
        if not isinstance(raw, Mapping):
            raise TemplateConfigError(
                f"must be a message {{role, content}}, an {{expand_column: FIELD}} or the ice token, "
                f"not {type(raw).__name__}",
                key=key,
            )
        if "expand_column" in raw:
            column = raw["expand_column"]
            if not isinstance(column, str) or not column:
                raise TemplateConfigError(f"must name a field, not {column!r}", key=f"{key}.expand_column")
            others = [str(k) for k in raw if k != "expand_column"]
            if others:
                raise TemplateConfigError(
                    f"an expand_column item takes no other keys ({', '.join(others)})",
                    key=f"{key}.{others[0]}",
                    hint="the record's messages are inserted as they are",
                )
            return (_EXPAND, column, key)
        if "role" not in raw:
            raise TemplateConfigError("a message needs a role", key=key, hint="role: system, user or assistant")
        role = raw["role"]
        if role not in ROLES:
            raise TemplateConfigError(
                f"the role {cut(role)} is not system, user or assistant",
                key=f"{key}.role",
                hint="a RawPromptTemplate holds OpenAI-style messages (use PromptTemplate for HUMAN/BOT dialogues)",
            )
        if "content" not in raw:
            raise TemplateConfigError("a message needs a content", key=key)
        content = raw["content"]
        extra = {str(k): copy.deepcopy(v) for k, v in raw.items() if k != "role" and k != "content"} or None
        if isinstance(content, str):
            if self.format_variables:
                return (_MESSAGE, _Message(role, FieldText(content), None, extra), key)
            return (_MESSAGE, _Message(role, None, content, extra), key)
        if isinstance(content, (list, tuple)):
            # Content parts are sent as written (OpenCompass fills only string contents).
            return (_MESSAGE, _Message(role, None, _parts(content, key, config_key=key), extra), key)
        raise TemplateConfigError(
            f"must be a string or a list of content parts, not {cut(content)}", key=f"{key}.content"
        )

    # -- what is in it ---------------------------------------------------------------

    def has_ice_slot(self) -> bool:
        """Whether the messages hold the ice token (where the examples go)."""
        return self.ice_token is not None and any(kind == _ICE for kind, _, _ in self._items)

    # -- filling ---------------------------------------------------------------------

    def _expand(self, entry: Mapping[str, Any], column: str, key: str) -> list[Turn]:
        if column not in entry:
            raise StyleError(
                f"the record has no field {column!r} (expand_column)",
                key=key,
                hint=f"every record needs {column!r}: a list of messages (an empty list adds none)",
            )
        value = entry[column]
        if not isinstance(value, (list, tuple)):
            raise StyleError(
                f"the record's {column!r} (expand_column) must be a list of messages, "
                f"not {type(value).__name__} {cut(value)}",
                key=key,
                hint="for example [{role: user, content: ...}, {role: assistant, content: ...}]",
            )
        return [message_turn(m, f"{column}[{i}]", key=key) for i, m in enumerate(value)]

    def _messages(self, entry: Mapping[str, Any], override: Mapping[str, Any] | None, ice: Ice | None) -> list[Turn]:
        out: list[Turn] = []
        for kind, value, key in self._items:
            if kind == _MESSAGE:
                out.append(value.turn(entry, override))
            elif kind == _EXPAND:
                out.extend(self._expand(entry, value, key))
            elif ice and isinstance(ice, tuple):  # the ice token, with examples to put there
                out.extend(ice)
            elif ice and isinstance(ice, str):
                raise StyleError(
                    "the in-context examples are text but the prompt template is a RawPromptTemplate",
                    key=self.key,
                    hint="give the examples a RawPromptTemplate ice_template too",
                )
        return out

    def ice_item(self, entry: Mapping[str, Any], label: Any) -> Dialogue:
        """One in-context example (OpenCompass's ``generate_ice_item``): the messages
        filled with the example's whole record, the ice token left out."""
        return tuple(self._messages(entry, None, None))

    def fill(
        self,
        entry: Mapping[str, Any],
        ice: Ice,
        label: Any = None,
        override: Mapping[str, Any] | None = None,
    ) -> Dialogue:
        """The prompt's messages (OpenCompass's ``generate_item``): the examples'
        messages where the ice token stands, placeholders filled from ``override``
        then ``entry``.

        :raises StyleError: for an ``expand_column`` field that is missing or not a
            list of messages, and for a prompt without any message.
        """
        turns = self._messages(entry, override, ice)
        if not turns:
            raise StyleError(
                "the prompt has no messages (its expand_column fields are empty and no other message is given)",
                key=self.key,
                hint="an API model needs at least one message",
            )
        first = turns[0]
        if first.sep:
            turns[0] = first._replace(sep="")
        return tuple(turns)

    def __repr__(self) -> str:
        return f"RawPromptTemplate(key={self.key!r}, ice_token={self.ice_token!r})"
