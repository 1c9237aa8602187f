"""A rendered prompt as what inspect_ai hands a model, and back.

A plain prompt (``meta=plain``, or any meta template that gives text only) is
one user message holding the text, which is what inspect_ai makes of a
sample's string input. A chat prompt (``meta=messages``, ``chatml``, ``hf``, a
chat format) is its messages, one ``ChatMessage`` each: system, user and
assistant turns as prompt-style renders them (few-shot examples as turns). The
contents are passed as they are, so :func:`message_dicts` of what the model
receives equals the ``messages`` of ``prompt-style render --format jsonl``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
)

from prompt_style import OptionError, RenderedPrompt, RenderError

__all__ = ["INPUTS", "prompt_input", "state_messages", "chat_messages", "message_dicts"]

INPUTS = ("auto", "messages", "text")
"""What a sample's input is: ``messages`` (the meta template's messages), ``text``
(its text, as one user message) or ``auto`` (messages when the meta template
gives them, else the text)."""

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def check_input(input: str) -> str:
    if input not in INPUTS:
        raise OptionError(f"unknown input {input!r}", key="input", hint="use auto, messages or text")
    return input


def _part(part: Mapping[str, Any], index: int) -> Any:
    kind = part.get("type")
    keys = set(part) - {"type"}
    if kind == "text" and keys == {"text"}:
        return ContentText(text=part["text"])
    if kind == "image_url" and keys == {"image_url"}:
        image = part["image_url"]
        if isinstance(image, str):
            return ContentImage(image=image)
        if isinstance(image, Mapping) and set(image) <= {"url", "detail"} and isinstance(image.get("url"), str):
            return ContentImage(image=image["url"], detail=image.get("detail", "auto"))
    raise RenderError(
        f"message content part {cut_part(part)} has no inspect_ai equivalent",
        index=index,
        hint="inspect_ai takes text parts and image_url parts ({'url': ..., 'detail': ...})",
    )


def cut_part(part: Any) -> str:
    text = repr(dict(part)) if isinstance(part, Mapping) else repr(part)
    return text if len(text) <= 80 else text[:77] + "..."


def chat_messages(messages: Sequence[Mapping[str, Any]], index: int) -> list[ChatMessage]:
    """``[{"role", "content"}]`` as inspect_ai messages.

    :raises RenderError: naming the record, for a role other than system, user
        and assistant, a key inspect_ai's messages have no place for (``name``),
        or a content part other than text and images.
    """
    out: list[ChatMessage] = []
    for message in messages:
        role = message.get("role")
        cls = _ROLES.get(role)  # type: ignore[arg-type]
        if cls is None:
            raise RenderError(
                f"a message has the role {role!r}, which inspect_ai has no message for",
                index=index,
                hint="inspect_ai's messages are system, user and assistant turns",
            )
        extra = sorted(set(message) - {"role", "content"})
        if extra:
            raise RenderError(
                f"a {role} message has the key(s) {', '.join(extra)}, which inspect_ai's messages have no place for",
                index=index,
                hint="use a meta template that gives plain role/content messages (meta=messages)",
            )
        content = message.get("content")
        if isinstance(content, str):
            out.append(cls(content=content))
        elif isinstance(content, (list, tuple)):
            out.append(cls(content=[_part(part, index) for part in content]))
        else:
            raise RenderError(f"a {role} message's content is {type(content).__name__}", index=index)
    return out


def _plain_messages(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every message is a ``{"role", "content"}`` with text content and a role
    inspect_ai has: then inspect_ai's ``Sample`` takes them as they are."""
    for message in messages:
        if type(message.get("content")) is not str or message.get("role") not in _ROLES or len(message) != 2:
            return False
    return True


def prompt_input(prompt: RenderedPrompt, input: str = "auto") -> str | list[Any]:
    """A sample's input for a rendered prompt: its text (inspect_ai sends it as
    one user message) or its messages, as ``input`` says (:data:`INPUTS`).
    Messages of text are given as ``{"role", "content"}`` mappings, which inspect_ai's
    ``Sample`` reads into its messages; others are converted (:func:`chat_messages`)."""
    if input != "text" and prompt.messages is not None:
        messages = prompt.messages
        return messages if _plain_messages(messages) else chat_messages(messages, prompt.index)
    if input == "messages":
        raise OptionError(
            "input=messages, but the meta template gives text only",
            key="input",
            index=prompt.index,
            hint="use meta=messages (or a chat format such as chatml), or input=text",
        )
    if prompt.text is None:
        raise RenderError("the meta template gives neither text nor messages", index=prompt.index)
    return prompt.text


def state_messages(prompt: RenderedPrompt, input: str = "auto") -> list[ChatMessage]:
    """A rendered prompt as the messages of a solver's state."""
    given = prompt_input(prompt, input)
    if isinstance(given, str):
        return [ChatMessageUser(content=given)]
    return [m if not isinstance(m, Mapping) else _ROLES[m["role"]](content=m["content"]) for m in given]


def _part_dict(part: Any) -> dict[str, Any]:
    if isinstance(part, ContentText):
        return {"type": "text", "text": part.text}
    if isinstance(part, ContentImage):
        image: dict[str, Any] = {"url": part.image}
        if part.detail != "auto":
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image}
    return part.model_dump()


def message_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """What a model receives, as prompt-style's ``messages``: ``[{"role", "content"}]``."""
    return [
        {
            "role": m.role,
            "content": m.content if isinstance(m.content, str) else [_part_dict(p) for p in m.content],
        }
        for m in messages
    ]
