"""OpenCompass's API messages: a ``RawPromptTemplate``'s messages as they are sent,
and meta templates that are a list of messages merged into them, as OpenCompass's
``APITemplateParser`` does (:class:`~prompt_style.meta.opencompass.OpenCompassMeta`
uses these)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import OptionError
from ..types import Dialogue
from .roles import api_role

__all__ = ["compile_messages_meta", "merge_messages", "raw_messages"]


def raw_messages(dialogue: Dialogue) -> list[dict[str, Any]]:
    """RawPromptTemplate messages as API messages, as they are: role, content and
    the message's other keys (a turn added by the chat rules, such as a system
    instruction, is a message too)."""
    out = []
    for turn in dialogue:
        content = turn.content
        message: dict[str, Any] = {
            "role": api_role(turn.role),
            "content": content if isinstance(content, str) else [copy.deepcopy(dict(p)) for p in content],
        }
        if turn.extra:
            for key, value in turn.extra.items():
                message.setdefault(key, copy.deepcopy(value))
        out.append(message)
    return out


def compile_messages_meta(template: Sequence[Any]) -> tuple[dict[str, Any], ...]:
    """Check a meta template that is a list of messages (OpenCompass's
    ``APITemplateParser`` takes one): each ``{role: system|user|assistant, content: str}``.

    :raises OptionError: naming the item (``template.1.role``).
    """
    items = []
    for i, item in enumerate(template):
        key = f"template.{i}"
        if not isinstance(item, Mapping):
            raise OptionError(f"a message of the meta template must be a mapping, not {item!r}", key=key)
        role = item.get("role")
        if role not in ("system", "user", "assistant"):
            raise OptionError(
                f"a message of the meta template has the role {role!r}, not system, user or assistant",
                key=f"{key}.role",
            )
        content = item.get("content")
        if not isinstance(content, str):
            raise OptionError(
                f"a message of the meta template needs a string content, not {content!r}",
                key=f"{key}.content",
                hint="its content is put before the content of the prompt's message of the same role",
            )
        items.append(copy.deepcopy(dict(item)))
    return tuple(items)


def merge_messages(meta: Sequence[Mapping[str, Any]], prompt: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A list-of-messages meta template merged into a prompt's messages, as
    OpenCompass's ``APITemplateParser`` merges them: walking both lists, a meta
    message meeting a prompt message of its role puts its content first; a meta
    message whose role comes later in the prompt waits for it; one whose role
    does not come again is inserted where it stands; the prompt's remaining
    messages follow. (A prompt message whose content is a list of parts gets the
    meta content as a first text part, where OpenCompass fails.)"""
    result: list[dict[str, Any]] = []
    m = p = 0
    while m < len(meta):
        item = meta[m]
        if p < len(prompt) and item["role"] == prompt[p]["role"]:
            merged = dict(prompt[p])
            content = merged["content"]
            if isinstance(content, str):
                merged["content"] = item["content"] + content
            else:
                merged["content"] = [{"type": "text", "text": item["content"]}, *content]
            result.append(merged)
            m += 1
            p += 1
        elif p < len(prompt):
            if any(prompt[j]["role"] == item["role"] for j in range(p, len(prompt))):
                result.append(prompt[p])
                p += 1
            else:
                result.append(copy.deepcopy(dict(item)))
                m += 1
        else:
            result.append(copy.deepcopy(dict(item)))
            m += 1
    result.extend(prompt[p:])
    return result
