"""The ``hf`` meta template: a model's own Hugging Face chat template.

Options are read once per task (the template file is read and compiled then);
rendering a dialogue or a conversation afterwards is one template call.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from prompt_style import ChatTemplateError, ModelInput, OptionError, StyleError, api_role, message_pieces

from .affixes import closed_turn_texts, content_affixes, marked_text, turn_texts
from .chat_template import ABSENT as _ABSENT
from .chat_template import RESERVED_VARIABLES, ChatTemplate, Rendered
from .conversation import plain_data
from .sources import SPECIAL_TOKENS, TemplateSource, load_source

__all__ = ["HFChat", "SYSTEM_POLICIES", "OPTIONS"]

SYSTEM_POLICIES = ("error", "merge", "drop")

OPTIONS = {
    "template": "a .jinja file, a tokenizer_config.json, or a local model folder",
    "chat_template": "the name of one of the model's templates (e.g. tool_use), or a template's Jinja source",
    "add_generation_prompt": "end with the header of an assistant turn",
    "continue_final_message": "leave the final message open (true: its content; or the key to continue)",
    "now": "the clock strftime_now reads, e.g. 2025-07-10T12:00:00 (default: the real clock)",
    "system_policy": "what to do with a system turn the template cannot show: error, merge, drop",
    "tools": "tool schemas passed to the template",
    "documents": "documents passed to the template",
    "engine": "fast (default): prompt-style's code generator; jinja: Jinja's own renderer (same output)",
    "sanitize_control_tokens": "false only: transformers' option to encode special-token text in contents as text",
}
"""The options the meta template itself reads; every other option is a template variable."""

MERGE_SEPARATOR = "\n\n"


class _Flags(NamedTuple):
    add_generation_prompt: bool
    continue_final_message: bool | str
    variables: Mapping[str, Any]


_UNDEFINED_TOKEN = re.compile(r"'(\w+_token)' is undefined")


def _is_system(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "system"


def _parse_now(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    raise OptionError(
        f"option 'now' must be an ISO date and time such as 2025-07-10T12:00:00, not {value!r}",
        key="now",
    )


def _check_bool(options: Mapping[str, Any], name: str, what: str, allow_str: bool = False) -> Any:
    value = options.get(name)
    if value is None or isinstance(value, bool) or (allow_str and isinstance(value, str)):
        return value
    expected = "true, false or a message key" if allow_str else "true or false"
    raise OptionError(f"{what}: option {name!r} must be {expected}, not {value!r}", key=name)


def _no_sanitizing(value: Any, key: str = "sanitize_control_tokens") -> None:
    """``sanitize_control_tokens``: ``false`` (transformers' default) is what ``hf`` does;
    ``true`` is refused, never ignored."""
    if value is None or value is False:
        return
    if value is not True:
        raise OptionError(f"option 'sanitize_control_tokens' must be true or false, not {value!r}", key=key)
    raise OptionError(
        "sanitize_control_tokens=true is not supported: transformers honours it only when it tokenizes "
        '(apply_chat_template(tokenize=False, sanitize_control_tokens=True) raises "`sanitize_control_tokens=True` '
        'requires `tokenize=True`"), and prompt-style encodes special-token text in contents as the special '
        "token, as transformers does by default",
        key=key,
        hint="leave it out (or false); with --meta-option tokenizer=PATH each record's token_report lists the "
        "special-token text found in contents, so such records can be found and cleaned",
    )


def _system_text(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, (list, tuple)):
        return [part["text"] for part in content if isinstance(part, Mapping) and isinstance(part.get("text"), str)]
    return []


class HFChat:
    """Renders dialogues and conversations with a Hugging Face chat template.

    :param source: the template(s) and special tokens (from :func:`load_source`).
    :param options: the meta options (see :data:`OPTIONS`); the rest are template variables.
    :param name: how to name this meta template in messages.
    """

    chat = True  # a class attribute, not an option: chat templates are a chat format

    def __init__(self, source: TemplateSource, options: Mapping[str, Any], *, name: str = "hf") -> None:
        what = f"meta template {name!r}"
        self.name = name
        self.source = source
        options = dict(options)
        options.pop("template", None)
        self.chat_template = options.pop("chat_template", None)
        if self.chat_template is not None and not isinstance(self.chat_template, str):
            raise OptionError(
                f"{what}: option 'chat_template' must be a template name or Jinja source", key="chat_template"
            )
        self.add_generation_prompt = _check_bool(options, "add_generation_prompt", what)
        self.continue_final_message = _check_bool(options, "continue_final_message", what, allow_str=True)
        options.pop("add_generation_prompt", None)
        options.pop("continue_final_message", None)
        self.now = _parse_now(options.pop("now", None))
        self.system_policy = options.pop("system_policy", "error")
        if self.system_policy not in SYSTEM_POLICIES:
            raise OptionError(
                f"{what}: option 'system_policy' must be one of {', '.join(SYSTEM_POLICIES)}, "
                f"not {self.system_policy!r}",
                key="system_policy",
            )
        self.engine = options.pop("engine", "fast")
        if self.engine not in ("fast", "jinja"):
            raise OptionError(f"{what}: option 'engine' must be fast or jinja, not {self.engine!r}", key="engine")
        self.tools = options.pop("tools", None)
        self.documents = options.pop("documents", None)
        _no_sanitizing(options.pop("sanitize_control_tokens", None))
        for key in options:
            if key in RESERVED_VARIABLES:
                raise OptionError(f"{what}: {key!r} is passed by the renderer, not as an option", key=key)
        tokens = dict(source.special_tokens)
        for key in SPECIAL_TOKENS:
            if key in options and options[key] is None:
                # No such token, as a tokenizer built with bos_token=None has none.
                del options[key]
                tokens.pop(key, None)
            elif key in options and not isinstance(options[key], str):
                raise OptionError(
                    f"{what}: option {key!r} must be a string, not {options[key]!r}",
                    key=key,
                    hint="quote it on the command line, e.g. --meta-option \"bos_token='[BOS]'\"",
                )
        # transformers passes the special tokens, then the caller's keyword arguments over them.
        self.variables = plain_data({**tokens, **options})
        self._default_flags: _Flags | None = None
        self._templates: dict[str, ChatTemplate] = {}
        self._warned = False
        self._affixes: dict[Any, tuple[str, str, bool] | None] = {}  # content_affixes' answers
        # closed_turn's texts (turn_texts) and the probe's text they come from (None: none),
        # made when first asked
        self._turn_texts: Any = False
        self._closed: dict[tuple[str, str], tuple[str, str] | None] = {}  # closed_turn's answers
        # Compile now, so that a syntax error is a load-time error.
        if self.chat_template is not None or "default" in source.templates or not source.templates:
            self._template_for(self.tools)
        for key in source.templates:
            self._compiled(key)
        # The template every tool-less render uses, when the choice never depends on tools.
        self._single: ChatTemplate | None = None
        if self.chat_template is not None or "tool_use" not in source.templates:
            try:
                self._single = self._template_for(None)
            except OptionError:
                self._single = None
        self._plain = self._plain_renderer()
        if self._plain is not None:
            # The commonest call (one template, no tools or documents, at most the generation
            # flags) in one function from the caller to the template's code: an attribute of
            # the instance, over the method (which it calls for anything else).
            self.apply_messages = self._plain
            self._plain.__doc__ = HFChat.apply_messages.__doc__

    # -- which template ----------------------------------------------------------

    def _template_for(self, tools: Any) -> ChatTemplate:
        """transformers' ``get_chat_template``: a named template, else ``tool_use``
        when tools are given and the model has one, else ``default``."""
        templates = self.source.templates
        wanted = self.chat_template
        if wanted is not None and wanted in templates:
            key = wanted
        elif wanted is not None:
            if "{{" not in wanted and "{%" not in wanted:
                raise OptionError(
                    f"no chat template named {wanted!r} in {self.source.origin or 'the model'}",
                    key="chat_template",
                    hint=f"its templates are: {', '.join(sorted(templates))}",
                )
            key = "\0" + wanted  # a template given as source
        elif tools is not None and "tool_use" in templates:
            key = "tool_use"
        elif "default" in templates:
            key = "default"
        else:
            raise OptionError(
                "This model has multiple chat templates with no default specified! Please either pass a chat "
                "template or the name of the template you wish to use to the `chat_template` argument. Available "
                f"template names are {sorted(templates.keys())}.",
                key="chat_template",
            )
        return self._compiled(key)

    def _compiled(self, key: str) -> ChatTemplate:
        template = self._templates.get(key)
        if template is None:
            engine = "auto" if self.engine == "fast" else "jinja"
            if key.startswith("\0"):
                template = ChatTemplate(key[1:], origin="<chat_template option>", engine=engine)
            else:
                origin = self.source.files.get(key, self.source.origin)
                template = ChatTemplate(self.source.templates[key], origin=origin, engine=engine)
            self._templates[key] = template
        return template

    # -- rendering ------------------------------------------------------------------

    def _render_once(self, messages: Sequence[Any], tools: Any, documents: Any, flags: _Flags) -> Rendered:
        return self._template_for(tools).render(
            messages,
            tools=tools,
            documents=documents,
            add_generation_prompt=flags.add_generation_prompt,
            continue_final_message=flags.continue_final_message,
            variables=flags.variables,
            now=self.now,
            plain_variables=True,
        )

    def _render(self, messages: Sequence[Any], tools: Any, documents: Any, flags: _Flags) -> Rendered:
        return self._resolve(messages, tools, documents, flags)[0]

    def _resolve(
        self, messages: Sequence[Any], tools: Any, documents: Any, flags: _Flags
    ) -> tuple[Rendered, Sequence[Any], list[tuple[int, ...]] | None]:
        """The render under the system policy, the messages the template was given and,
        when the policy changed them, which of ``messages`` each one holds."""
        if self.system_policy == "error":
            try:
                return self._render_once(messages, tools, documents, flags), messages, None
            except ChatTemplateError as exc:
                self._hint_system(exc, messages)
                raise
        systems = [m for m in messages if _is_system(m)]
        if not systems:
            return self._render_once(messages, tools, documents, flags), messages, None
        try:
            rendered = self._render_once(messages, tools, documents, flags)
        except ChatTemplateError:
            pass
        else:
            texts = [t.strip() for m in systems for t in _system_text(m) if t.strip()]
            if all(t in rendered.text for t in texts):
                return rendered, messages, None
        # The template cannot show the system turn: it raised, or left it out.
        kept_at = [(i,) for i, m in enumerate(messages) if not _is_system(m)]
        if self.system_policy == "drop":
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"prompt-style: the chat template of {self.name!r} cannot show a system turn; "
                    "system turns are dropped (system_policy=drop)",
                    stacklevel=5,
                )
            kept = [m for m in messages if not _is_system(m)]
            return self._render_once(kept, tools, documents, flags), kept, kept_at
        merged = _merge_system(messages)
        system_at = tuple(i for i, m in enumerate(messages) if _is_system(m))
        if len(merged) > len(kept_at):  # the system text became a user turn of its own
            held = [system_at, *kept_at]
        else:
            first_user = next(k for k, m in enumerate(merged) if isinstance(m, Mapping) and m.get("role") == "user")
            held = list(kept_at)
            held[first_user] = tuple(sorted(system_at + kept_at[first_user]))
        return self._render_once(merged, tools, documents, flags), merged, held

    @staticmethod
    def _hint_system(exc: ChatTemplateError, messages: Sequence[Any]) -> None:
        if exc.hint is not None:
            return
        missing = _UNDEFINED_TOKEN.match(getattr(exc, "template_message", None) or "")
        if missing:
            # A special token the template uses and nothing named (transformers' tokenizer
            # classes may have a default for it; we know only the files and options).
            token = missing.group(1)
            exc.hint = (
                f"the template uses {token}, which neither the template's folder nor the options name: "
                f"give it with --meta-option {token}=..., or point template= at the model's folder or "
                "tokenizer_config.json"
            )
            return
        if any(_is_system(m) for m in messages):
            exc.hint = (
                "if the template cannot show a system turn: --meta-option system_policy=merge "
                "(into the first user turn) or system_policy=drop"
            )

    def _flags(self, overrides: Mapping[str, Any], task: bool, last_role: Any = None) -> _Flags:
        """The generation flags and variables of one render."""
        if not overrides and not task and self._default_flags is not None:
            return self._default_flags
        agp = overrides.get("add_generation_prompt", self.add_generation_prompt)
        cfm = overrides.get("continue_final_message", self.continue_final_message)
        if task and agp is None and cfm is None:
            # A task prompt is answered next: a header for a new assistant turn, or the
            # open assistant turn the dialogue ends with (lm-evaluation-harness's prefill).
            if last_role == "assistant":
                agp, cfm = False, True
            else:
                agp = True
        variables = self.variables
        extra = {k: v for k, v in overrides.items() if k not in ("add_generation_prompt", "continue_final_message")}
        if "sanitize_control_tokens" in extra:
            _no_sanitizing(extra.pop("sanitize_control_tokens"))
        if extra:
            for key in extra:
                if key in RESERVED_VARIABLES or key in OPTIONS:
                    raise OptionError(f"{key!r} cannot be given per conversation", key=key)
            variables = {**variables, **plain_data(extra)}
        flags = _Flags(bool(agp), cfm or False, variables)
        if not overrides and not task:
            self._default_flags = flags
        return flags

    def apply(self, dialogue) -> ModelInput:
        """Render a task's dialogue (role-tagged turns) as the model's chat.

        Unless the options say otherwise, the text ends ready for the model to
        answer: with the generation prompt, or, when the dialogue ends with an
        assistant turn, inside that turn (``continue_final_message``).
        """
        messages, flags = self._task_messages(dialogue)
        rendered = self._render(messages, self.tools, self.documents, flags)
        return ModelInput(text=rendered.text, messages=messages, assistant_spans=rendered.assistant_spans)

    def _task_messages(self, dialogue) -> tuple[list[dict[str, Any]], _Flags]:
        messages: list[dict[str, Any]] = []
        for turn in dialogue:
            content = turn.content
            if not isinstance(content, str):
                content = [dict(part) for part in content]
            messages.append({"role": api_role(turn.role), "content": content})
        if not messages:
            raise StyleError("the dialogue is empty", hint="the style gave no turns to render")
        return messages, self._flags({}, True, messages[-1]["role"])

    def last_turn_affixes(self, dialogue) -> tuple[str, str] | None:
        """For the renderer's fast path (docs/hooks.md): the text before and after the
        last turn's content, when the template writes any content there as it is —
        found by rendering the dialogue with a traced content and with probes
        (:mod:`prompt_style_hf.affixes`); ``None`` otherwise (each record is then
        rendered through the template). Worked out once per dialogue asked about."""
        known = self._content_affixes(dialogue)
        return None if known is None or known[2] else known[:2]

    def stripped_turn_affixes(self, dialogue) -> tuple[str, str] | None:
        """For the renderer's fast path (docs/hooks.md): :meth:`last_turn_affixes` for the
        contents ``strip()`` leaves as they are, which a template that trims the content
        (Llama 3's) writes as they are too; ``None`` where that was not shown."""
        known = self._content_affixes(dialogue)
        return None if known is None else known[:2]

    def prefilled_turn_affixes(self, dialogue) -> tuple[str, str, bool] | None:
        """For the renderer's fast path (docs/hooks.md): ``(before, after, stripped)`` for
        the content of the turn before the dialogue's last, an assistant turn the model
        continues (an answer prefill such as lm-evaluation-harness's ``gen_prefix``): as
        :meth:`last_turn_affixes` (``stripped``: :meth:`stripped_turn_affixes`) for that
        turn, found the same way; ``None`` where that was not shown."""
        return self._content_affixes(dialogue, -2)

    def closed_turn(self, turn) -> tuple[str, str, dict[str, Any]] | None:
        """For the renderer's fast path (docs/hooks.md): the text before and after the
        content of a user turn or an answer that another turn follows, and its message,
        when the template writes that content as it is there (checked on a render with
        it, once per distinct turn; :mod:`prompt_style_hf.affixes`). The renderer joins
        few-shot examples chosen per record from these texts, after checking the whole
        against :meth:`apply` on the task's own turns."""
        if type(turn.content) is not str or turn.role not in ("user", "assistant"):
            return None
        known = self._turn_texts
        if known is False:
            marked = marked_text(self)
            texts = None if marked is None else turn_texts(self, marked)
            known = self._turn_texts = None if texts is None else (texts, marked)
        if known is None:
            return None
        texts, marked = known
        key = (turn.role, turn.content)
        known = self._closed.get(key, False)
        if known is False:
            known = closed_turn_texts(self, texts, turn, marked)
            if len(self._closed) >= 4096:
                self._closed.clear()
            self._closed[key] = known
        if known is None:
            return None
        return known[0], known[1], {"role": turn.role, "content": turn.content}

    def _content_affixes(self, dialogue, position: int = -1) -> tuple[str, str, bool] | None:
        try:
            known = self._affixes.get((position, dialogue), False)
        except TypeError:  # (a turn of parts, which no text stands around)
            return None
        if known is False:
            known = content_affixes(self, dialogue, position)
            if len(self._affixes) < 64:
                self._affixes[(position, dialogue)] = known
        return known

    def pieces(self, dialogue, *, full: bool = False) -> list[tuple[tuple[int, ...], str]]:
        """The text :meth:`apply` gives, cut into the text each message adds
        (``tokenize=turns``), found as trl and openchat-style training find it: by
        rendering the conversation's prefixes without a generation prompt
        (``prompt_style.message_pieces``). Under ``system_policy`` ``merge`` or
        ``drop`` the prefixes are those of the conversation the template was given;
        a merged system turn belongs to the piece of the user turn it went into."""
        messages, flags = self._task_messages(dialogue)
        _, used, held = self._resolve(messages, self.tools, self.documents, flags)
        _, pieces = message_pieces(
            self.apply_messages,
            list(used),
            add_generation_prompt=flags.add_generation_prompt,
            continue_final_message=flags.continue_final_message,
        )
        if held is None:
            return pieces
        return [(tuple(sorted({i for t in turns for i in held[t]})), text) for turns, text in pieces]

    def apply_messages(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Any = None,
        documents: Any = None,
        add_generation_prompt: Any = _ABSENT,
        continue_final_message: Any = _ABSENT,
        **variables: Any,
    ) -> ModelInput:
        """Render a conversation as transformers' ``apply_chat_template(tokenize=False)``.

        :param messages: the messages, passed to the template as they are.
        :param tools: tool schemas (default: the ``tools`` option).
        :param documents: documents (default: the ``documents`` option).
        :param add_generation_prompt: end with the header of an assistant turn (default: the option).
        :param continue_final_message: leave the final message open (default: the option).
        :param variables: template variables for this conversation, over the options.

        When the options allow it (one template, no tools or documents, system turns as
        given), an instance answers this through a function of its own, made once (see
        ``ChatTemplate.plain_renderer``), which renders the commonest call itself and calls
        this method for any other.
        """
        if add_generation_prompt is not _ABSENT:
            variables["add_generation_prompt"] = add_generation_prompt
        if continue_final_message is not _ABSENT:
            variables["continue_final_message"] = continue_final_message
        flags = self._flags(variables, False, None) if variables else self._default_flags or self._flags({}, False)
        if tools is None:
            tools = self.tools
        if documents is None:
            documents = self.documents
        if self.system_policy == "error" and tools is None and self._single is not None:
            # The common case, without the detours: one template, no tools.
            try:
                rendered = self._single.render(
                    messages,
                    None,
                    documents,
                    flags.add_generation_prompt,
                    flags.continue_final_message,
                    flags.variables,
                    self.now,
                    True,
                )
            except ChatTemplateError as exc:
                self._hint_system(exc, messages)
                raise
        else:
            rendered = self._render(messages, tools, documents, flags)
        return ModelInput(text=rendered.text, messages=messages, assistant_spans=rendered.assistant_spans)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_plain"] = None  # a closure: made again on arrival
        state.pop("apply_messages", None)
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._plain = self._plain_renderer()
        if self._plain is not None:
            self.apply_messages = self._plain

    def _plain_renderer(self) -> Any:
        """The one-call renderer of the commonest conversation (see apply_messages), when
        the options allow one: one template, no tools or documents, system turns as given."""
        if (
            self._single is None
            or self.system_policy != "error"
            or self.tools is not None
            or self.documents is not None
        ):
            return None
        flags = self._default_flags or self._flags({}, False)
        defaults = (flags.add_generation_prompt, flags.continue_final_message)
        general = partial(HFChat.apply_messages, self)
        return self._single.plain_renderer(self.variables, self.now, defaults, general, self._hint_system)

    def __repr__(self) -> str:
        return f"HFChat({self.name!r}, template={self.source.origin!r})"


def _merge_system(messages: Sequence[Any]) -> list[Any]:
    """The system turns' text (without trailing whitespace) and a blank line put at
    the start of the first user turn; a user turn of its own when there is none."""
    systems = [m for m in messages if _is_system(m)]
    # Trailing whitespace of the system text would double the separator.
    text = MERGE_SEPARATOR.join(t.rstrip() for m in systems for t in _system_text(m))
    rest = [m for m in messages if not _is_system(m)]
    for i, message in enumerate(rest):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, (list, tuple)):
                merged: Any = [{"type": "text", "text": text}, *content]
            else:
                merged = text + MERGE_SEPARATOR + ("" if content is None else str(content))
            rest[i] = {**message, "content": merged}
            return rest
    return [{"role": "user", "content": text}, *rest]


def hf_meta(options: Mapping[str, Any]) -> HFChat:
    """The ``hf`` factory: ``template=PATH`` (or a ``chat_template`` given as source)."""
    path = options.get("template")
    if path is None:
        literal = options.get("chat_template")
        if isinstance(literal, str) and ("{{" in literal or "{%" in literal):
            return HFChat(TemplateSource({}), options)
        raise OptionError(
            "meta template 'hf' needs template=PATH",
            key="meta.template",
            hint="a chat_template.jinja, a tokenizer_config.json or a local model folder: "
            "--meta-option template=path/to/model",
        )
    if not isinstance(path, (str, Path)):
        raise OptionError(f"option 'template' must be a path, not {path!r}", key="meta.template")
    return HFChat(load_source(path), options)
