"""One Hugging Face chat template, compiled once, rendering conversations exactly as
transformers' ``apply_chat_template(tokenize=False)``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prompt_style import ChatTemplateError, PromptStyleError
from prompt_style.safe import jinja_env

from . import conversation as conv
from .environment import GENERATION_END, GENERATION_START, HF_CHAT, TRACK_GENERATION, fixed_strftime_now

__all__ = ["ChatTemplate", "Rendered", "RESERVED_VARIABLES"]

_GENERATION_TAG = re.compile(r"\{%-?\s*generation\s*-?%\}")

RESERVED_VARIABLES = frozenset({"messages", "tools", "documents", "add_generation_prompt"})
"""Names the renderer passes itself; a variable cannot replace them."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered conversation: the text and the ``{% generation %}`` spans in it."""

    text: str
    assistant_spans: list[tuple[int, int]] | None = None


def _template_line(exc: BaseException) -> int | None:
    """The template line an exception was raised from (Jinja rewrites tracebacks so
    that template frames carry the template's file name and line)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _spans(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Remove the generation markers from ``text``; the spans they enclosed."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    size = 0
    start = 0
    for i, char in enumerate(text):
        if char == GENERATION_START or char == GENERATION_END:
            out.append(text[start:i])
            size += i - start
            start = i + 1
            if char == GENERATION_START:
                opened.append(size)
            elif opened:
                spans.append((opened.pop(), size))
    out.append(text[start:])
    spans.sort()
    return "".join(out), spans


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


class ChatTemplate:
    """A chat template's source, compiled once per process.

    :param source: the Jinja source.
    :param origin: the file it comes from, for messages.
    :param engine: ``auto`` (default): the compiled fast path when it covers the
        template, else Jinja; ``jinja``: always Jinja's own renderer.
    :raises ChatTemplateError: for a template that does not compile.
    """

    def __init__(self, source: str, *, origin: str | None = None, engine: str = "auto") -> None:
        self.source = source
        self.origin = origin
        self.engine = engine
        self.has_generation = bool(_GENERATION_TAG.search(source))
        self._compiled = self._compile()

    def _compile(self) -> Any:
        try:
            return jinja_env.compile_template(self.source, HF_CHAT)
        except jinja_env.errors()[0] as exc:  # TemplateSyntaxError
            raise ChatTemplateError(
                f"the chat template does not compile: {exc.message}",
                template_message=str(exc),
                file=self.origin,
                line=exc.lineno,
            ) from None

    def __reduce__(self):  # compiled templates do not pickle; compile again (cached) on arrival
        return (ChatTemplate, (self.source,), {"origin": self.origin, "engine": self.engine})

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.origin = state["origin"]
        self.engine = state["engine"]

    # -- rendering -------------------------------------------------------------

    def render(
        self,
        messages: Any,
        *,
        tools: Any = None,
        documents: Any = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        variables: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> Rendered:
        """Render one conversation.

        :param messages: the messages (dicts with ``role``, ``content``, and any other keys).
        :param tools: JSON schemas (or, from Python, functions) passed as ``tools``.
        :param documents: dicts passed as ``documents``.
        :param add_generation_prompt: passed to the template.
        :param continue_final_message: leave the final message open (``True``: its
            ``content``; a string: that key, e.g. ``reasoning_content``).
        :param variables: every other template variable, special tokens included.
        :param now: the clock ``strftime_now`` reads; ``None``: the real clock.
        :raises ChatTemplateError: when the template raises, or transformers would
            refuse the conversation; the message is the template's own.
        """
        try:
            chat = conv.prepare_messages(messages)
            if continue_final_message and add_generation_prompt:
                raise ValueError(
                    "continue_final_message and add_generation_prompt are not compatible. Use "
                    "continue_final_message when you want the model to continue the final message, and "
                    "add_generation_prompt when you want to add a header that will prompt it to start a new "
                    "assistant message instead."
                )
            context: dict[str, Any] = {}
            if now is not None:
                context["strftime_now"] = fixed_strftime_now(now)
            if variables:
                context.update(conv.plain_data(dict(variables)))
            context["messages"] = chat
            context["tools"] = conv.prepare_tools(tools)
            context["documents"] = conv.prepare_documents(documents)
            context["add_generation_prompt"] = add_generation_prompt
            final = None
            if continue_final_message:
                final = conv.tag_final_message(chat, continue_final_message, self.source)
            track = self.has_generation and not any(
                GENERATION_START in s or GENERATION_END in s for s in _strings(context)
            )
            if track:
                context[TRACK_GENERATION] = True
            text = self._render(context)
            spans = None
            if track:
                text, spans = _spans(text)
            if continue_final_message:
                text, cut = conv.cut_at_tag(text, final)
                if spans is not None:
                    spans = [(a, min(b, cut)) for a, b in spans if a < cut]
        except PromptStyleError as exc:
            raise exc.locate(file=self.origin) from None
        except Exception as exc:  # the template's own error, or transformers' refusal
            raise ChatTemplateError(str(exc), file=self.origin, line=_template_line(exc)) from exc
        return Rendered(text, spans if self.has_generation else None)

    def _render(self, context: dict[str, Any]) -> str:
        return jinja_env.render(self._compiled, context)
