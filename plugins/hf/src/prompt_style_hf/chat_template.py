"""One Hugging Face chat template, compiled once, rendering conversations exactly as
transformers' ``apply_chat_template(tokenize=False)``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from prompt_style import ChatTemplateError, ModelInput, PromptStyleError, safe

from . import conversation as conv
from .environment import GENERATION_MARK, HF_CHAT, TRACK_GENERATION, fixed_strftime_now

__all__ = ["ChatTemplate", "Rendered", "RESERVED_VARIABLES"]

_GENERATION_TAG = re.compile(r"\{%-?\s*generation\s*-?%\}")

_NO_CLOCK: dict[str, Any] = {}
_CONFLICT = (
    "continue_final_message and add_generation_prompt are not compatible. Use "
    "continue_final_message when you want the model to continue the final message, and "
    "add_generation_prompt when you want to add a header that will prompt it to start a new "
    "assistant message instead."
)

RESERVED_VARIABLES = frozenset({"messages", "tools", "documents", "add_generation_prompt"})
"""Names the renderer passes itself; a variable cannot replace them."""


class _SourceNames:
    """``name in source`` for a template's source, each answer remembered: what
    ``continue_final_message`` asks of the template at every render (whether it
    reads the field continued), without searching the source each time."""

    __slots__ = ("source", "seen")

    def __init__(self, source: str) -> None:
        self.source = source
        self.seen: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        found = self.seen.get(name)  # type: ignore[call-overload]
        if found is None:
            found = self.seen[name] = name in self.source  # type: ignore[index, operator]
        return found


class Rendered(NamedTuple):
    """A rendered conversation: the text and the ``{% generation %}`` spans in it."""

    text: str
    assistant_spans: list[tuple[int, int]] | None = None


def _template_line(exc: BaseException, fast: Any = None) -> int | None:
    """The template line an exception was raised from: Jinja rewrites tracebacks so
    that template frames carry the template's line; the fast path's frames carry
    lines of the generated code, mapped back here."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename == "<template>":
            line = tb.tb_lineno
        elif fast is not None and filename == fast.filename:
            line = fast.template_line(tb.tb_lineno)
        tb = tb.tb_next
    return line


def _spans(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Remove the generation marks from ``text``; the spans they enclosed."""
    mark = GENERATION_MARK
    size_mark = len(mark) + 1
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    size = 0
    pos = 0
    while True:
        at = text.find(mark, pos)
        if at < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:at])
        size += at - pos
        if text[at + len(mark)] == ">":
            opened.append(size)
        elif opened:
            spans.append((opened.pop(), size))
        pos = at + size_mark
    spans.sort()
    return "".join(out), spans


def _has_generation_block(source: str) -> bool:
    """Whether the template has a ``{% generation %}`` block (not just the words)."""
    from jinja2 import nodes

    try:
        ast = safe.environment(HF_CHAT).parse(source)
    except safe.errors()[0]:
        return False
    return any(
        isinstance(block.call, nodes.Call)
        and isinstance(block.call.node, nodes.ExtensionAttribute)
        and block.call.node.name == "_generation"
        for block in ast.find_all(nodes.CallBlock)
    )


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
        self._names = _SourceNames(source)
        self.has_generation = bool(_GENERATION_TAG.search(source)) and _has_generation_block(source)
        self._compiled = self._compile()

    def _compile(self) -> Any:
        try:
            compiled = safe.compile_template(self.source, HF_CHAT)
        except safe.errors()[0] as exc:  # TemplateSyntaxError
            raise ChatTemplateError(
                f"the chat template does not compile: {exc.message}",
                template_message=str(exc),
                file=self.origin,
                line=exc.lineno,
            ) from None
        self._fast = self._fast_plain = None
        self._globals: dict[str, Any] = {}  # Jinja's own render adds the environment's globals itself
        if self.engine != "jinja":
            from .fastpath import compile_fast

            try:
                self._fast = compile_fast(safe.environment(HF_CHAT), self.source)
            except Exception:  # a template the fast generator cannot take: Jinja renders it
                self._fast = None
            else:
                self._globals = self._fast.new_variables()
        return compiled

    def __reduce__(self):  # compiled templates do not pickle; compile again (cached) on arrival
        return (ChatTemplate, (self.source,), {"origin": self.origin, "engine": self.engine})

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.origin = state["origin"]
        if state["engine"] != self.engine:
            self.engine = state["engine"]
            self._compiled = self._compile()

    # -- rendering -------------------------------------------------------------

    def render(
        self,
        messages: Any,
        tools: Any = None,
        documents: Any = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        variables: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        plain_variables: bool = False,
    ) -> Rendered:
        """Render one conversation.

        Arguments after ``messages`` may be given by keyword or, by callers on a hot
        path, in order.

        :param messages: the messages (dicts with ``role``, ``content``, and any other keys).
        :param tools: JSON schemas (or, from Python, functions) passed as ``tools``.
        :param documents: dicts passed as ``documents``.
        :param add_generation_prompt: passed to the template.
        :param continue_final_message: leave the final message open (``True``: its
            ``content``; a string: that key, e.g. ``reasoning_content``).
        :param variables: every other template variable, special tokens included.
        :param now: the clock ``strftime_now`` reads; ``None``: the real clock.
        :param plain_variables: ``variables`` are already plain JSON types (callers
            that prepare them once with :func:`~prompt_style_hf.conversation.plain_data`).
        :raises ChatTemplateError: when the template raises, or transformers would
            refuse the conversation; the message is the template's own.
        """
        try:
            plain = conv.plain_messages(messages)
            chat = messages.copy() if plain else conv.prepare_each(messages)
            # All {"role": str, "content": str} (and still so once tagged to continue its
            # content): the template compiled for plain messages renders it.
            plain = plain and continue_final_message in (False, True, "content")
            if continue_final_message and add_generation_prompt:
                raise ValueError(_CONFLICT)
            # The template's variables: the fixed clock, then the caller's variables
            # (special tokens first, as transformers passes them), then its own.
            if variables and not plain_variables:
                variables = conv.plain_data(dict(variables))
            names = self._names
            context = {
                **self._globals,
                **({"strftime_now": fixed_strftime_now(now)} if now is not None else _NO_CLOCK),
                **(variables or _NO_CLOCK),
                "messages": chat,
                "tools": None if tools is None else conv.prepare_tools(tools, "tools" in names),
                "documents": None if documents is None else conv.prepare_documents(documents, "documents" in names),
                "add_generation_prompt": add_generation_prompt,
            }
            final = None
            if continue_final_message:
                final = conv.tag_final_message(chat, continue_final_message, self._names)
            if self.has_generation:
                context[TRACK_GENERATION] = True
            text = self._render(context, plain)
            spans = None
            if self.has_generation:
                text, spans = _spans(text)
            if continue_final_message:
                text, cut = conv.cut_at_tag(text, final)
                if spans is not None:
                    spans = [(a, min(b, cut)) for a, b in spans if a < cut]
        except PromptStyleError as exc:
            raise exc.locate(file=self.origin) from None
        except Exception as exc:  # the template's own error, or transformers' refusal
            raise ChatTemplateError(str(exc), file=self.origin, line=_template_line(exc, self._fast)) from exc
        return Rendered(text, spans if self.has_generation else None)

    def render_as_given(
        self,
        messages: list[dict[str, Any]],
        add_generation_prompt: bool,
        variables: Mapping[str, Any] | None,
        now: datetime | None,
    ) -> str:
        """The text of ``messages`` passed to the template as they are, not rebuilt
        from plain JSON types as :meth:`render` rebuilds them (no tools, documents,
        ``continue_final_message`` or generation blocks): for probes whose objects
        must reach the template (``prompt_style_hf.affixes``). ``variables`` are plain."""
        context = {
            **self._globals,
            **({"strftime_now": fixed_strftime_now(now)} if now is not None else _NO_CLOCK),
            **(variables or _NO_CLOCK),
            "messages": messages,
            "tools": None,
            "documents": None,
            "add_generation_prompt": add_generation_prompt,
        }
        return self._render(context)

    def _render(self, context: dict[str, Any], plain: bool = False) -> str:
        if self._fast is not None:
            return (self._fast_for(context) if plain else self._fast).render_owned(context)
        return safe.render(self._compiled, context)

    def _fast_for(self, variables: Mapping[str, Any]) -> Any:
        """The fast template for renders of plain messages with ``variables``: the one
        compiled for them (see ``FastTemplate``), made when first asked for, unless
        ``variables`` name a list of messages it reads as plain (``loop_messages``, where
        the template assigns none), then the general one. Both have the same lines of
        code, so errors map to the same template lines."""
        fast = self._fast_plain
        if fast is None:
            from .fastpath import compile_fast

            fast = self._fast_plain = compile_fast(self._fast.environment, self.source, plain_messages=True)
        return fast if fast.plain_names.isdisjoint(variables) else self._fast

    def plain_renderer(
        self,
        variables: Mapping[str, Any],
        now: datetime | None,
        defaults: tuple[bool, bool | str] = (False, False),
        general: Any = None,
        hint: Any = None,
    ) -> Any:
        """A function with the signature of ``HFChat.apply_messages`` (``messages``, then
        ``tools``, ``documents``, ``add_generation_prompt``, ``continue_final_message``
        and variables by keyword) returning a ``ModelInput`` (its ``text``, ``messages``
        and, for a template with ``{% generation %}`` blocks, ``assistant_spans``), that
        renders the commonest conversation itself, with everything that does not change
        prepared once: plain ``variables``, the clock, no tools, no documents, the flags
        ``defaults`` unless given (as bools, or a key to continue). Any other call goes
        to ``general(messages, **keywords)``. ``hint(error, messages)`` may add a hint to
        a ``ChatTemplateError`` before it is raised. ``None`` when the template needs the
        general :meth:`render` (the Jinja engine)."""
        if self._fast is None:
            return None
        fixed = {**self._globals, **({"strftime_now": fixed_strftime_now(now)} if now is not None else {}), **variables}
        fixed = {**fixed, "tools": None, "documents": None}
        hint = hint or _no_hint
        if self.has_generation:
            fixed[TRACK_GENERATION] = True
            return _with_signature(self._plain_spans_renderer(fixed, hint), defaults, general)
        copy = fixed.copy
        fast = self._fast
        run = fast.run_owned  # fast.render_owned(context), without its frame
        # For messages that are all plain ({"role": str, "content": str}, as most are):
        # the template compiled to read them without asking what they are, made by the first.
        run_plain = None
        fast_for = self._fast_for
        prepare = conv.prepare_each  # (after the test of plain_messages, inline below)
        origin = self.origin
        source = self._names
        tag, cut = conv.tag_final_message, conv.cut_at_tag
        new, direct = _new, _MODEL_INPUT_DIRECT
        default_agp, default_cfm = defaults

        content_read = "content" in source  # what continue_final_message asks of the template
        continue_tag = conv.CONTINUE_TAG
        # The variables of finished renders, to reuse (the template cannot change them).
        spare: list[dict[str, Any]] = []
        take, give = spare.pop, spare.append

        # (One function from the caller to the template's code: the checks of the call, of
        # the messages and the flags, the render's variables, the result.)
        def render(
            messages: Any,
            *,
            tools: Any = None,
            documents: Any = None,
            add_generation_prompt: Any = ABSENT,
            continue_final_message: Any = ABSENT,
            **variables: Any,
        ) -> Any:
            nonlocal run_plain
            agp = default_agp if add_generation_prompt is ABSENT else add_generation_prompt
            cfm = default_cfm if continue_final_message is ABSENT else continue_final_message
            if (
                tools is not None
                or documents is not None
                or variables
                or type(agp) is not bool
                or not (cfm is False or cfm is True or type(cfm) is str)
            ):
                return general(
                    messages,
                    tools=tools,
                    documents=documents,
                    add_generation_prompt=add_generation_prompt,
                    continue_final_message=continue_final_message,
                    **variables,
                )
            try:
                chat = messages
                if type(messages) is list and messages:
                    # conversation.plain_messages, inline (a call costs as much as the test):
                    # {"role": str, "content": str} messages are read as they are (the
                    # template cannot change them).
                    try:
                        for message in messages:
                            if (
                                type(message) is not dict
                                or len(message) != 2
                                or type(message["content"]) is not str
                                or type(message["role"]) is not str
                            ):
                                chat = prepare(messages)
                                break
                    except KeyError:
                        chat = prepare(messages)
                else:
                    chat = prepare(messages)
                if chat is messages:
                    runner = run_plain
                    if runner is None:
                        runner = run_plain = fast_for(fixed).run_owned
                else:
                    runner = run
                if cfm:
                    if agp:
                        raise ValueError(_CONFLICT)
                    if cfm is True and chat is messages and content_read:
                        # tag_final_message for {"role": str, "content": str} messages, inline
                        # (the tagged message is as plain).
                        chat = list(chat)  # tagged: never the caller's list or message
                        final = chat[-1]["content"]
                        chat[-1] = tagged = chat[-1].copy()
                        tagged["content"] = final + continue_tag
                    else:
                        chat = list(chat)
                        final = tag(chat, cfm, source)
                        runner = run
                try:
                    context = take()
                except IndexError:
                    context = copy()
                context["messages"] = chat
                context["add_generation_prompt"] = agp
                text = runner(context)
                context["messages"] = None  # nothing of this render is kept
                give(context)  # (as many as renders run at once)
                if cfm:
                    text = cut(text, final)[0]
                if not direct:
                    return ModelInput(text, messages)
                # ModelInput(text, messages), made directly: a call of the dataclass's
                # __init__ (from C) costs as much as the checks above.
                made = new(ModelInput)
                made.text = text
                made.messages = messages
                made.token_ids = made.context_token_ids = made.continuation_token_ids = None
                made.token_report = made.assistant_spans = None
                return made
            except PromptStyleError as exc:
                error = exc.locate(file=origin)
                if isinstance(error, ChatTemplateError):
                    hint(error, messages)
                raise error from None
            except Exception as exc:  # as in render()
                error = ChatTemplateError(str(exc), file=origin, line=_template_line(exc, fast))
                hint(error, messages)
                raise error from exc

        return render

    def _plain_spans_renderer(self, fixed: dict[str, Any], hint: Any) -> Any:
        """:meth:`plain_renderer` for a template with ``{% generation %}`` blocks: the
        spans tracked, the text and the spans as :meth:`render` gives them."""
        fast = self._fast
        run = fast.run_owned
        prepare, tag, cut = conv.prepare_messages, conv.tag_final_message, conv.cut_at_tag
        origin, source = self.origin, self._names
        copy = fixed.copy
        mark = GENERATION_MARK

        def render(messages: Any, add_generation_prompt: bool, continue_final_message: bool | str = False) -> Any:
            try:
                chat = prepare(messages)
                context = copy()
                context["messages"] = chat
                context["add_generation_prompt"] = add_generation_prompt
                if continue_final_message:
                    if add_generation_prompt:
                        raise ValueError(_CONFLICT)
                    final = tag(chat, continue_final_message, source)
                text = run(context)
                spans: list[tuple[int, int]] = []
                if mark in text:
                    text, spans = _spans(text)
                if continue_final_message:
                    text, at = cut(text, final)
                    spans = [(a, min(b, at)) for a, b in spans if a < at]
            except PromptStyleError as exc:
                error = exc.locate(file=origin)
                if isinstance(error, ChatTemplateError):
                    hint(error, messages)
                raise error from None
            except Exception as exc:  # as in render()
                error = ChatTemplateError(str(exc), file=origin, line=_template_line(exc, fast))
                hint(error, messages)
                raise error from exc
            return ModelInput(text, messages, None, None, None, None, spans)

        return render


ABSENT: Any = object()
"""A keyword argument not given (``None`` is a value of its own)."""


def _no_hint(error: ChatTemplateError, messages: Any) -> None:
    pass


_new = object.__new__
_MODEL_INPUT_DIRECT = {f.name: f.default for f in dataclasses.fields(ModelInput)} == {
    "text": None,
    "messages": None,
    "token_ids": None,
    "context_token_ids": None,
    "continuation_token_ids": None,
    "token_report": None,
    "assistant_spans": None,
}
"""Whether ``ModelInput`` has the fields the plain renderer sets when it makes one directly
(should it change, it is made by its own ``__init__`` again)."""


def _with_signature(render: Any, defaults: tuple[bool, bool | str], general: Any) -> Any:
    """``render(messages, add_generation_prompt, continue_final_message)`` with the
    signature :meth:`ChatTemplate.plain_renderer` gives (see there)."""
    default_agp, default_cfm = defaults

    def apply(
        messages: Any,
        *,
        tools: Any = None,
        documents: Any = None,
        add_generation_prompt: Any = ABSENT,
        continue_final_message: Any = ABSENT,
        **variables: Any,
    ) -> Any:
        agp = default_agp if add_generation_prompt is ABSENT else add_generation_prompt
        cfm = default_cfm if continue_final_message is ABSENT else continue_final_message
        if (
            tools is not None
            or documents is not None
            or variables
            or type(agp) is not bool
            or not (cfm is False or cfm is True or type(cfm) is str)
        ):
            return general(
                messages,
                tools=tools,
                documents=documents,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
                **variables,
            )
        return render(messages, agp, cfm)

    return apply
