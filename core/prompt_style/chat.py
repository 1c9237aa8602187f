"""Rendering one conversation (a list of messages) through any meta template.

Meta templates that render conversations themselves — Hugging Face chat
templates (``hf`` and the chat formats built on it) — implement
``apply_messages(messages, *, tools=None, documents=None, **variables) ->
ModelInput`` and receive the messages as they are (with ``tool_calls``,
``reasoning_content``, multimodal parts, ...). Every other meta template gets
the conversation as a dialogue of role-tagged turns, through ``apply``, so any
meta template (``chatml``, ``plain``, ``messages``, third-party ones) can render
a conversation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import DataError, StyleError
from .safe.files import read_text
from .types import ModelInput, Turn

__all__ = ["Conversation", "read_conversation", "chat_meta", "render_chat", "DEFAULT_CHAT_META"]

DEFAULT_CHAT_META = "hf"
"""The meta template ``prompt-style chat`` and :func:`render_chat` use unless told."""


@dataclass(frozen=True)
class Conversation:
    """A conversation as read from a file: messages, and what goes with them."""

    messages: list[Any]
    tools: list[Any] | None = None
    documents: list[Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    """The file's other keys (and its ``kwargs`` mapping): meta options for this
    conversation, such as ``add_generation_prompt`` or a template variable."""


def read_conversation(source: str | Path | Sequence[Any] | Mapping[str, Any]) -> Conversation:
    """Read a conversation: a JSON file (or its parsed content) holding a list of
    messages, or an object with ``messages`` and optionally ``tools``, ``documents``
    and other keys (meta options, e.g. ``"add_generation_prompt": true``).

    :raises DataError: naming the file (and line, for bad JSON).
    """
    where: dict[str, Any] = {}
    data: Any = source
    if isinstance(source, (str, Path)):
        path = Path(source)
        where = {"file": str(path)}
        # A regular file only, of a bounded size (max_file_bytes): never a FIFO or a device.
        text = read_text(path, what="conversation file", error=DataError)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno, **where) from None
        except RecursionError:
            raise DataError("not valid JSON: values nest too deeply", **where) from None
    hint = 'write a list of messages [{"role": "user", "content": "..."}] or {"messages": [...], "tools": [...]}'
    if isinstance(data, list):
        return Conversation(data)
    if not isinstance(data, Mapping):
        raise DataError(
            f"a conversation is a list of messages or an object, not {type(data).__name__}", hint=hint, **where
        )
    if not isinstance(data.get("messages"), list):
        raise DataError("the conversation object has no 'messages' list", key="messages", hint=hint, **where)
    options = {k: v for k, v in data.items() if k not in ("messages", "tools", "documents", "kwargs")}
    kwargs = data.get("kwargs")
    if kwargs is not None:
        if not isinstance(kwargs, Mapping):
            raise DataError("'kwargs' must be an object of meta options", key="kwargs", **where)
        options.update(kwargs)
    for key in ("tools", "documents"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise DataError(f"{key!r} must be a list", key=key, **where)
    return Conversation(list(data["messages"]), data.get("tools"), data.get("documents"), options)


def chat_meta(
    meta: str = DEFAULT_CHAT_META,
    meta_options: Mapping[str, Any] | None = None,
    *,
    plugins: Any = None,
    model_args: str | Mapping[str, Any] | None = None,
) -> Any:
    """The meta template ``meta`` built once with ``meta_options``, to render many
    conversations with :func:`render_chat` (``meta=`` accepts the built object).

    :param model_args: lm-evaluation-harness's model-args form
        (``"pretrained=./model,chat_template=true"``): the meta template and options
        it names, merged with ``meta``/``meta_options`` (see ``parse_model_args``).
    """
    from .loading import _meta
    from .meta.model_args import apply_model_args
    from .plugins import default_plugin_manager

    if model_args is not None:
        meta, meta_options = apply_model_args(model_args, meta, meta_options, default=DEFAULT_CHAT_META)
    built, _ = _meta(plugins or default_plugin_manager(), meta, meta_options)
    return built


def _as_dialogue(messages: Sequence[Any], name: str) -> tuple[Turn, ...]:
    turns = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise StyleError(f"message {i} is {type(message).__name__}, not an object", key=f"messages.{i}")
        extra = sorted(k for k, v in message.items() if k not in ("role", "content") and v is not None)
        role, content = message.get("role"), message.get("content")
        if extra:
            raise StyleError(
                f"meta template {name!r} renders a message's role and content only; message {i} also has "
                f"{', '.join(repr(k) for k in extra)}",
                key=f"messages.{i}",
                hint="render it with a chat template: --meta hf --meta-option template=PATH",
            )
        if not isinstance(role, str):
            raise StyleError(f"message {i} has no role", key=f"messages.{i}.role")
        if isinstance(content, list):
            content = tuple(content)
        elif not isinstance(content, str):
            raise StyleError(f"message {i} has no text content", key=f"messages.{i}.content")
        turns.append(Turn(role, content))
    return tuple(turns)


def render_chat(
    messages: Sequence[Any],
    *,
    meta: Any = DEFAULT_CHAT_META,
    meta_options: Mapping[str, Any] | None = None,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Any] | None = None,
    plugins: Any = None,
    model_args: str | Mapping[str, Any] | None = None,
    **variables: Any,
) -> ModelInput:
    """Render one conversation through a meta template.

    ``render_chat(messages, meta="hf", meta_options={"template": "path/to/model"},
    add_generation_prompt=True)`` returns the same text as transformers'
    ``tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)``.

    :param messages: the conversation, ``[{"role": ..., "content": ...}, ...]``.
    :param meta: a meta template name, or an object built by :func:`chat_meta`
        (build once to render many conversations).
    :param meta_options: its options (when ``meta`` is a name).
    :param tools: tool schemas, for meta templates that take them (``hf``).
    :param documents: documents, for meta templates that take them (``hf``).
    :param plugins: the plugin manager; defaults to the process-wide one.
    :param model_args: lm-evaluation-harness's model-args form (when ``meta`` is a name),
        e.g. ``"pretrained=./model,chat_template=true"``.
    :param variables: for this conversation only: ``add_generation_prompt``,
        ``continue_final_message`` and template variables (``hf``).
    :returns: the :class:`~prompt_style.ModelInput` (``text``, ``messages``, ...).
    :raises PromptStyleError: for a bad option or message;
        :class:`~prompt_style.ChatTemplateError` when the template raises.
    """
    name = meta if isinstance(meta, str) else type(meta).__name__
    built = chat_meta(meta, meta_options, plugins=plugins, model_args=model_args) if isinstance(meta, str) else meta
    apply_messages = getattr(built, "apply_messages", None)
    if apply_messages is not None:
        return apply_messages(list(messages), tools=tools, documents=documents, **variables)
    for what, value in (("tools", tools), ("documents", documents)):
        if value is not None:
            raise StyleError(
                f"meta template {name!r} cannot show {what}",
                key=what,
                hint="render it with a chat template: --meta hf --meta-option template=PATH",
            )
    if variables:
        raise StyleError(
            f"meta template {name!r} takes no per-conversation variables ({', '.join(sorted(variables))})",
            hint="pass them as meta options",
        )
    return built.apply(_as_dialogue(messages, name))
