"""What transformers does to a conversation before and after its chat template runs.

``apply_chat_template(tokenize=False)`` (transformers 5.x,
``tokenization_utils_base.py`` and ``utils/chat_template_utils.py``) drops the
keys whose value is ``None``, rebuilds every input from plain JSON types,
copies a message's reasoning under all the names templates read it by, and,
for ``continue_final_message``, tags the final message, renders, and cuts the
text at the tag. These functions do the same, with the same error messages.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Container, Mapping
from typing import Any

from prompt_style import ChatTemplateError

from . import tool_cache

__all__ = [
    "REASONING_FIELDS",
    "CONTINUE_TAG",
    "plain_data",
    "plain_messages",
    "prepare_messages",
    "prepare_each",
    "prepare_tools",
    "prepare_documents",
    "tag_final_message",
    "cut_at_tag",
]

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
"""Names a message's reasoning is passed under; templates read the first (or ``thinking``)."""

CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
_TAG = CONTINUE_TAG.strip()  # what transformers looks for (a template may trim the space)


def _is_numpy_scalar(value: Any) -> bool:
    return any(c.__name__ == "generic" and c.__module__ == "numpy" for c in type(value).__mro__)


def plain_data(value: Any) -> Any:
    """``value`` rebuilt from plain JSON types (transformers' ``_plain_template_data``):
    subclasses of str/int/float lose their extra methods, dataclasses and pydantic
    models become dicts, and anything else becomes an inert ``"<TypeName>"``."""
    kind = type(value)
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value
    if kind is dict or isinstance(value, Mapping):
        return {plain_data(k): plain_data(v) for k, v in value.items()}
    if kind is list:
        return [plain_data(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, list):
        return [plain_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_data(item) for item in value)
    if _is_numpy_scalar(value):
        return plain_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_data(value.model_dump())
    return f"<{kind.__name__}>"


def _is_plain(value: Any) -> bool:
    """Whether ``value`` is already made of plain JSON types only (no ``None`` in a
    message's top level is checked by the caller)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if kind is list:
        return all(_is_plain(item) for item in value)
    if kind is dict:
        return all(type(k) is str and _is_plain(v) for k, v in value.items())
    return False


def _plain_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One message without its ``None`` values, rebuilt from plain types."""
    if type(message) is dict:
        # Most messages are already plain (JSON): the template may read them as they
        # are (the sandbox is immutable, so it cannot change them).
        for key, value in message.items():
            kind = type(value)
            if type(key) is not str or value is None:
                break
            if kind is str or kind is int or kind is float or kind is bool:
                continue
            if not _is_plain(value):
                break
        else:
            return message
    out = {}
    for key, value in message.items():
        if value is None:
            continue
        if type(key) is not str:
            key = plain_data(key)
        kind = type(value)
        if kind is not str and kind is not int and kind is not float and kind is not bool:
            value = plain_data(value)
        out[key] = value
    return out


def plain_messages(messages: Any) -> bool:
    """Whether ``messages`` is a non-empty list of messages that are all
    ``{"role": str, "content": str}`` and nothing else (the commonest conversation:
    read as it is, and by the templates compiled for it)."""
    if type(messages) is not list or not messages:
        return False
    for message in messages:
        if not (
            type(message) is dict
            and len(message) == 2
            and type(message.get("content")) is str
            and type(message.get("role")) is str
        ):
            return False
    return True


def prepare_messages(messages: Any) -> list[dict[str, Any]]:
    """``messages`` as the template sees it: a fresh list; a message that is not
    already plain JSON data without ``None`` values is copied.

    :raises ChatTemplateError: for an empty conversation or a message that is not an object.
    """
    if plain_messages(messages):
        return messages.copy()  # the common case: read as it is
    return prepare_each(messages)


def prepare_each(messages: Any) -> list[dict[str, Any]]:
    """:func:`prepare_messages` for a caller that has found the messages not all plain
    (:func:`plain_messages`): each message read, and copied where it is not plain JSON
    data without ``None`` values.

    :raises ChatTemplateError: for an empty conversation or a message that is not an object.
    """
    if not isinstance(messages, (list, tuple)):
        raise ChatTemplateError(
            f"a conversation is a list of messages, not {type(messages).__name__}",
            hint='write [{"role": "user", "content": "..."}, ...]',
        )
    if len(messages) == 0:
        raise ChatTemplateError("Cannot apply chat template to an empty conversation. Provide at least one message.")
    chat: list[dict[str, Any]] = []
    append = chat.append
    for i, message in enumerate(messages):
        if type(message) is dict:
            # The common case first: a JSON object of strings (and numbers), read as it is.
            for key, value in message.items():
                kind = type(value)
                if type(key) is not str or (
                    kind is not str and kind is not int and kind is not float and kind is not bool
                ):
                    break
            else:
                if "reasoning_content" not in message and "thinking" not in message and "reasoning" not in message:
                    append(message)
                    continue
        elif not isinstance(message, Mapping):
            raise ChatTemplateError(
                f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}.",
                key=f"messages.{i}",
            )
        message = _plain_message(message)
        if "reasoning_content" in message or "thinking" in message or "reasoning" in message:
            # Reasoning is copied under every name templates read it by.
            reasoning = next(message[key] for key in REASONING_FIELDS if key in message)
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        append(message)
    return chat


_DICT_ONLY = frozenset({dict})


def prepare_tools(tools: Any, read: bool = True) -> list[Any] | None:
    """Tool schemas as the template sees them: JSON schemas pass, Python functions
    are converted with their type hints and docstring (transformers' ``get_json_schema``).
    ``read``: whether the template names ``tools`` at all (a template that does not
    cannot see them: a list of schemas is checked, not copied)."""
    if tools is None:
        return None
    if not isinstance(tools, (list, tuple)):
        raise ChatTemplateError(f"tools must be a list of JSON schemas, not {type(tools).__name__}", key="tools")
    # (Whether every tool is a dict: the set of their types, made in C, once.)
    only_dicts = {*map(type, tools)} <= _DICT_ONLY
    if not read and only_dicts:
        return tools  # never read: what plain_data would make of it cannot matter
    if type(tools) is list and only_dicts:
        # The same tools at every render (an evaluation's): prepared once (see tool_cache).
        cached = tool_cache.cached_tools(tools, plain_data)
        if cached is not None:
            return cached
    schemas = []
    for tool in tools:
        if isinstance(tool, dict):
            schemas.append(tool)
        elif inspect.isfunction(tool) or inspect.ismethod(tool):
            from .tool_schema import get_json_schema

            schemas.append(get_json_schema(tool))
        else:
            raise ChatTemplateError(
                "Tools should either be a JSON schema, or a callable function with type hints "
                "and a docstring suitable for auto-conversion to a schema.",
                key="tools",
            )
    return plain_data(schemas)


def prepare_documents(documents: Any, read: bool = True) -> Any:
    """Documents as the template sees them (``read``: as :func:`prepare_tools`)."""
    if documents is None:
        return None
    for document in documents:
        if not isinstance(document, dict):
            raise ChatTemplateError(
                "Documents should be a list of dicts with 'title' and 'text' keys!", key="documents"
            )
    return plain_data(documents) if read else documents


def tag_final_message(chat: list[dict[str, Any]], continue_final_message: bool | str, source: Container[str]) -> Any:
    """Tag the final message so that its end can be found after rendering; returns
    the text to continue. ``chat`` (a fresh list) gets a tagged copy of its last message.
    ``source`` is the template's source (or anything that answers ``name in source``
    as it does)."""
    field = continue_final_message if isinstance(continue_final_message, str) else "content"
    last = chat[-1]
    # A copy: the caller's message is never changed.
    if plain_messages([last]):
        chat[-1] = dict(last)  # plain already (what plain_data would make of it)
    else:
        chat[-1] = plain_data(last)
    final_message = chat[-1].get(field)
    if final_message is None:
        raise ValueError(f'continue_final_message is set but the final message has no "{field}" to continue!')
    fields = [field]
    if field in REASONING_FIELDS:
        # Reasoning is copied under several names: tag every copy.
        fields = [name for name in REASONING_FIELDS if chat[-1].get(name) == final_message]
    if not any(name in source for name in fields):
        raise ValueError(
            f'continue_final_message is set to "{field}" but this is not an accepted field in the chat_template'
        )
    if isinstance(final_message, (list, tuple)):
        for block in reversed(final_message):
            if "text" in block:
                # The last text block is the one continued.
                final_message = block["text"]
                block["text"] = block["text"] + CONTINUE_TAG
                break
        else:
            raise ValueError(
                "continue_final_message is set but we could not find any text to continue in the final message!"
            )
    else:
        for name in fields:
            chat[-1][name] = chat[-1][name] + CONTINUE_TAG
    return final_message


def cut_at_tag(rendered: str, final_message: Any) -> tuple[str, int]:
    """The rendered chat cut where the final message ends, and the cut position."""
    at = rendered.rfind(_TAG)
    # transformers asks whether the final message (stripped) is anywhere in the text; it
    # is when the text has it just before the tag, as templates print it (one search).
    if at < 0 or not (
        (
            type(final_message) is str
            and len(final_message) <= at
            and rendered.startswith(final_message, at - len(final_message))
        )
        or final_message.strip() in rendered
    ):
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the chat after "
            "applying the chat template! This can happen if the chat template deletes portions of "
            "the final message. Please verify the chat template and final message in your chat to "
            "ensure they are compatible."
            f"Final message to continue: {final_message.strip()}\nRendered chat:\n{rendered}"
        )
    if rendered.startswith(CONTINUE_TAG, at):
        return rendered[:at], at
    # The template trimmed the message's trailing space (and the tag's).
    cut = rendered[:at].rstrip()
    return cut, len(cut)
