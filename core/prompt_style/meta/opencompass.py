"""OpenCompass meta templates: how a model wants to see an OpenCompass dialogue.

A meta template (``begin``, ``round``, ``reserved_roles``, ``end``,
``eos_token_id``) wraps each role's speech in the model's markers, as
OpenCompass's ``LMTemplateParser`` does, or — when its roles carry
``api_role`` — turns the dialogue into API messages, as ``APITemplateParser``
and OpenCompass's API models do. Generation (:meth:`OpenCompassMeta.apply`)
stops at the ``begin`` of the ``generate=True`` role in the last round;
perplexity (:meth:`OpenCompassMeta.apply_full`) renders everything. With no
meta template, the dialogue is OpenCompass's plain join (every item's text,
``"\\n"`` between items).

Dialogues come from the ``opencompass`` style (see
:mod:`prompt_style.styles.opencompass.template` for how a ``PromptList``
maps onto turns): a turn with the empty role is a plain string of the
``PromptList``, placed as it is; ``Turn.section`` tells the ``begin`` and
``end`` items, rendered one by one, from the ``round`` and ``ice`` turns,
which are split into rounds by the meta template's round order.

``RawPromptTemplate`` messages and meta templates that are a list of messages
are sent as :mod:`prompt_style.meta.opencompass_messages` builds them.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._suggest import suggest
from ..errors import OptionError, StyleError
from ..options import check_options
from ..types import Dialogue, ModelInput, Turn
from .opencompass_chat import chat_messages, chat_roles, chat_text, is_chat
from .opencompass_messages import compile_messages_meta, merge_messages, raw_messages
from .opencompass_named import NAMED_META_TEMPLATES
from .roles import API_ROLES, api_role

__all__ = [
    "OpenCompassMeta",
    "MetaTemplateSpec",
    "compile_meta_template",
    "NAMED_META_TEMPLATES",
    "opencompass_meta",
    "compile_messages_meta",
    "merge_messages",
    "raw_messages",
]

RAW = ""
MESSAGES = "messages"
"""The section of RawPromptTemplate messages (``prompt_style.styles.opencompass.raw_prompt.MESSAGES``)."""
_META_KEYS = ("round", "reserved_roles", "begin", "end", "eos_token_id")
_ROLE_KEYS = ("role", "begin", "end", "prompt", "generate", "api_role")
_API_ROLES = {role: name for role, name in API_ROLES.items() if role}
"""The roles an ``api_role`` may name (HUMAN, BOT, SYSTEM and the API names), as API message roles."""
_OC_API_ROLES = {"user": "HUMAN", "assistant": "BOT", "system": "SYSTEM"}


@dataclass(frozen=True)
class RoleSpec:
    """One role of a meta template."""

    name: str
    begin: str = ""
    end: str = ""
    prompt: str = ""
    generate: bool = False
    api_role: str | None = None
    index: int | None = None
    """Position in ``round``; ``None`` for a reserved role."""


@dataclass(frozen=True)
class MetaTemplateSpec:
    """A meta template, checked and compiled."""

    round: tuple[RoleSpec | str, ...]
    roles: Mapping[str, RoleSpec]
    begin: str = ""
    end: str = ""
    eos_token_id: Any = None
    api: bool = False

    def names(self) -> str:
        return ", ".join(self.roles) or "none"


def _text(value: Any, key: str, what: str) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        # OpenCompass's meta template documentation allows a list of strings or token ids; its
        # LMTemplateParser raises NotImplementedError (a role's) or TypeError (the meta template's).
        # Strings are joined, as its unreachable _encode_speical_tokens would join them.
        for i, part in enumerate(value):
            if not isinstance(part, str):
                raise OptionError(
                    f"{what} is a list holding {type(part).__name__} {part!r}: prompt-style writes meta templates "
                    "as text, and a token id has no text until a tokenizer decodes it (OpenCompass does not "
                    "support lists either)",
                    key=f"{key}.{i}",
                    hint="write the token's text instead of its id (e.g. '<s>' for 1)",
                )
        return "".join(value)
    if not isinstance(value, str):
        raise OptionError(f"{what} must be a string, not {type(value).__name__} {value!r}", key=key)
    return value


def _check_keys(mapping: Mapping[str, Any], known: Sequence[str], key: str, what: str) -> None:
    for name in mapping:
        if name not in known:
            raise OptionError(
                f"{what} has no key {name!r}", key=f"{key}.{name}", hint=suggest(name, known, listing="its keys are")
            )


def compile_meta_template(template: Mapping[str, Any], *, api: bool | None = None) -> MetaTemplateSpec:
    """Check and compile a meta template mapping.

    :param template: ``{round: [...], reserved_roles: [...], begin, end, eos_token_id}``.
    :param api: ``True`` for API messages, ``False`` for a string; ``None``: API
        when a role has an ``api_role``.
    :raises OptionError: naming the key (``template.round.1.generate``) for what is wrong.
    """
    if not isinstance(template, Mapping):
        raise OptionError(
            f"a meta template must be a mapping, not {type(template).__name__}",
            key="template",
            hint="for example {round: [{role: HUMAN, begin: 'User: ', end: '\\n'}, {role: BOT, generate: true}]}",
        )
    _check_keys(template, _META_KEYS, "template", "a meta template")
    if "round" not in template:
        raise OptionError("a meta template needs a round", key="template", hint="round: a list of role mappings")
    roles: dict[str, RoleSpec] = {}
    round_items: list[RoleSpec | str] = []
    has_api_role = False
    for part in ("round", "reserved_roles"):
        items = template.get(part)
        if items is None:
            continue
        if not isinstance(items, list):
            raise OptionError(f"must be a list, not {type(items).__name__}", key=f"template.{part}")
        for i, item in enumerate(items):
            key = f"template.{part}.{i}"
            if isinstance(item, str):
                if part == "round":
                    round_items.append(item)
                continue
            if not isinstance(item, Mapping):
                raise OptionError(f"a role must be a mapping, not {type(item).__name__} {item!r}", key=key)
            _check_keys(item, _ROLE_KEYS, key, "a meta template role")
            name = item.get("role")
            if not isinstance(name, str) or not name:
                raise OptionError(f"a meta template role needs a name, not {name!r}", key=f"{key}.role")
            if name in roles:
                raise OptionError(f"the role {name!r} appears twice (role in meta prompt must be unique)", key=key)
            api_role = item.get("api_role")
            if api_role is not None:
                has_api_role = True
                if api_role not in _API_ROLES:
                    raise OptionError(
                        f"api_role {api_role!r} is not HUMAN, BOT or SYSTEM",
                        key=f"{key}.api_role",
                        hint="OpenCompass's API models know HUMAN (user), BOT (assistant) and SYSTEM (system)",
                    )
            generate = item.get("generate", False)
            if not isinstance(generate, bool):
                raise OptionError(f"generate must be true or false, not {generate!r}", key=f"{key}.generate")
            spec = RoleSpec(
                name=name,
                begin=_text(item.get("begin"), f"{key}.begin", "begin"),
                end=_text(item.get("end"), f"{key}.end", "end"),
                prompt=_text(item.get("prompt"), f"{key}.prompt", "prompt"),
                generate=generate,
                api_role=api_role,
                index=len(round_items) if part == "round" else None,
            )
            roles[name] = spec
            if part == "round":
                round_items.append(spec)
    is_api = has_api_role if api is None else api
    if is_api:
        for item in round_items:
            if isinstance(item, str):
                raise OptionError(
                    f"the round of an API meta template holds the plain string {item!r}",
                    key="template.round",
                    hint="API models take role messages only (OpenCompass fails here too)",
                )
            if item.api_role is None:
                raise OptionError(
                    f"the role {item.name!r} of an API meta template has no api_role",
                    key=f"template.round.{item.index}",
                    hint="give it api_role: HUMAN, BOT or SYSTEM",
                )
    return MetaTemplateSpec(
        round=tuple(round_items),
        roles=roles,
        begin=_text(template.get("begin"), "template.begin", "begin"),
        end=_text(template.get("end"), "template.end", "end"),
        eos_token_id=template.get("eos_token_id"),
        api=is_api,
    )


_MARK = "\u27e6prompt-style:content\u27e7"
"""A last turn's content in :meth:`OpenCompassMeta.last_turn_affixes`: text no template holds."""


def _content(turn: Turn) -> str:
    content = turn.content
    if isinstance(content, str):
        return content
    raise StyleError(
        f"a {turn.role or 'text'} turn holds multimodal parts, which this text meta template cannot show",
        hint="use an API meta template (roles with api_role), which sends the parts as messages",
    )


@dataclass(frozen=True)
class OpenCompassMeta:
    """An OpenCompass meta template (or none: OpenCompass's plain join)."""

    template: Mapping[str, Any] | list[Mapping[str, Any]] | None = None
    """The meta template; ``None`` gives OpenCompass's plain join. A list of messages
    (``[{role: system, content: ...}, ...]``) is an API meta template merged into the
    messages of a ``RawPromptTemplate`` (:func:`merge_messages`)."""
    api: bool | None = None
    """API messages (``True``) or a string (``False``); default: API when a role has an ``api_role``."""
    api_format: str = "openai"
    """API messages as ``openai`` (``{"role": "user", "content": ...}``) or
    ``opencompass`` (``{"role": "HUMAN", "prompt": ...}``, what OpenCompass hands its API models)."""
    spec: MetaTemplateSpec | None = field(default=None, init=False, repr=False, compare=False)
    # The answer's place in a generation prompt is this meta template's to decide (its
    # ``generate`` role): the opencompass style leaves the dialogue whole for it
    # (prompt_style.types.StyleSettings.chat).
    generate_role: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.api_format not in ("openai", "opencompass"):
            raise OptionError(f"api_format must be openai or opencompass, not {self.api_format!r}", key="api_format")
        messages = None
        if isinstance(self.template, (list, tuple)):
            if self.api is False:
                raise OptionError("a meta template that is a list of messages is for API models", key="api")
            messages = compile_messages_meta(self.template)
        elif self.template is not None:
            object.__setattr__(self, "spec", compile_meta_template(self.template, api=self.api))
        object.__setattr__(self, "messages_meta", messages)
        # API meta templates format for chat models (prompt_style.types.MetaTemplate).
        chat = messages is not None or bool(self.spec.api if self.spec is not None else self.api)
        object.__setattr__(self, "chat", chat)
        object.__setattr__(self, "_warned", [])
        object.__setattr__(self, "_runs_cache", {})
        object.__setattr__(self, "_chat_roles", None)

    def __getstate__(self) -> dict[str, Any]:
        return {"template": self.template, "api": self.api, "api_format": self.api_format}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "spec", None)
        self.__post_init__()

    # -- the two modes ---------------------------------------------------------------

    def apply(self, dialogue: Dialogue) -> ModelInput:
        """Generation: up to the ``begin`` of the ``generate`` role of the last round."""
        return self._render(dialogue, True)

    def apply_full(self, dialogue: Dialogue) -> ModelInput:
        """Perplexity: the whole dialogue, meta template ``end`` included."""
        return self._render(dialogue, False)

    def last_turn_affixes(self, dialogue: Dialogue) -> tuple[str, str] | None:
        """For the renderer's fast path (docs/hooks.md): the text :meth:`apply` gives
        before and after the last turn's content. A text meta template writes every
        content as it is (``_content``) where the turns' roles and sections put it, so
        for any text ``x`` there the prompt is ``before + x + after``; found by applying
        the dialogue with a mark as that content. ``None`` for API messages, a
        ChatInferencer chat, RawPromptTemplate messages and multimodal contents."""
        if (
            not dialogue
            or self.messages_meta is not None
            or is_chat(dialogue)
            or dialogue[-1].section == MESSAGES
            or not all(type(turn.content) is str for turn in dialogue)
        ):
            return None
        try:
            made = self.apply((*dialogue[:-1], dialogue[-1]._replace(content=_MARK)))
        except StyleError:
            return None  # (the general path says why, for every record)
        if made.messages is not None or type(made.text) is not str or made.text.count(_MARK) != 1:
            return None
        before, after = made.text.split(_MARK)
        return before, after

    def prefilled_turn_affixes(self, dialogue: Dialogue) -> tuple[str, str, bool] | None:
        """For the renderer's fast path (docs/hooks.md): ``(before, after, False)`` for the
        content of the turn before the dialogue's last, the same for every record (an
        answer prefill; OpenCompass's answer item with its field masked in generation):
        a text meta template writes that content as it is too, so the split is found by
        applying the dialogue with a mark there. ``None`` where :meth:`last_turn_affixes`
        gives ``None``."""
        if len(dialogue) < 2 or self.last_turn_affixes(dialogue[:-1]) is None or dialogue[-1].section == MESSAGES:
            return None
        if type(dialogue[-1].content) is not str:
            return None
        try:
            made = self.apply((*dialogue[:-2], dialogue[-2]._replace(content=_MARK), dialogue[-1]))
        except StyleError:
            return None
        if made.messages is not None or type(made.text) is not str or made.text.count(_MARK) != 1:
            return None
        before, after = made.text.split(_MARK)
        return before, after, False

    def pieces(self, dialogue: Dialogue, *, full: bool = False) -> list[tuple[tuple[int, ...], str]]:
        """The text :meth:`apply` (``full``: :meth:`apply_full`) gives, cut into what each
        turn adds (``tokenize=turns``): a role's ``begin``, the turn's content and the
        role's ``end``, or a plain string as it is; the meta template's ``begin`` and
        ``end``, plain strings of the round, a role the dialogue does not fill (its
        default ``prompt``) and the generation role's ``begin`` are pieces of no turn."""
        out: list[tuple[tuple[int, ...], str]] = []
        self._render(dialogue, not full, out)
        n = len(dialogue)
        # (a turn the renderer adds itself, such as a round's default turn, is no turn of the dialogue)
        return [(tuple(t for t in turns if t < n), text) for turns, text in out]

    def _render(self, dialogue: Dialogue, gen: bool, pieces: list | None = None) -> ModelInput:
        spec = self.spec
        if is_chat(dialogue):
            return self._chat(dialogue, pieces)
        if self.messages_meta is not None:
            return self._messages_meta(dialogue)
        api = spec.api if spec is not None else bool(self.api)
        if dialogue and dialogue[-1].section == MESSAGES:
            # RawPromptTemplate messages: API models receive them as they are (OpenCompass's
            # APITemplateParser passes them through); language models read them as the
            # equivalent PromptTemplate dialogue (OpenCompass's LMTemplateParser fails).
            if api:
                return ModelInput(messages=raw_messages(dialogue))
            if spec is not None:
                return ModelInput(text=self._lm(self._as_prompt_dialogue(dialogue, spec), gen, spec, pieces))
        if spec is None or all(turn.role == RAW for turn in dialogue):
            # No meta template, or a string prompt: OpenCompass passes the string
            # through (an API model sends it as the user's message).
            text = (
                "".join([t.sep + _content(t) for t in dialogue])
                if spec is None
                else "".join([_content(t) for t in dialogue])
            )
            if pieces is not None:
                pieces += [((i,), (t.sep if spec is None else "") + _content(t)) for i, t in enumerate(dialogue)]
            if not api or self.api_format == "opencompass":
                # OpenCompass hands an API model the string itself.
                return ModelInput(text=text)
            return ModelInput(messages=self._messages([("HUMAN", text)]))
        if api:
            return ModelInput(messages=self._messages(self._api(dialogue, gen, spec)))
        return ModelInput(text=self._lm(dialogue, gen, spec, pieces))

    def _chat(self, dialogue: Dialogue, pieces: list | None = None) -> ModelInput:
        """A ChatInferencer chat, as its own template parsers show it (the same in
        generation and perplexity: they have no modes)."""
        spec = self.spec
        if self.messages_meta is not None:
            # OpenCompass's ChatInferencer fails on a list meta template (AttributeError);
            # merged as into RawPromptTemplate messages, which a chat is.
            messages = [{"role": t.role, "content": _api_content(t)} for t in dialogue]
            return ModelInput(messages=merge_messages(self.messages_meta, messages))
        if spec is None:
            if self.api:
                return ModelInput(messages=chat_messages(dialogue, None, self.api_format))
            if pieces is not None:
                pieces += [((i,), t.sep + _content(t)) for i, t in enumerate(dialogue)]
            return ModelInput(text="".join([t.sep + _content(t) for t in dialogue]))
        roles = self._chat_roles
        if roles is None:
            roles = chat_roles(spec)
            object.__setattr__(self, "_chat_roles", roles)
        if spec.api:
            return ModelInput(messages=chat_messages(dialogue, roles, self.api_format))
        return ModelInput(text=chat_text(dialogue, roles, pieces))

    def _messages_meta(self, dialogue: Dialogue) -> ModelInput:
        """A list-of-messages meta template: merged into RawPromptTemplate messages."""
        if dialogue and dialogue[-1].section == MESSAGES:
            return ModelInput(messages=merge_messages(self.messages_meta, raw_messages(dialogue)))
        if all(turn.role == RAW for turn in dialogue):
            # A string prompt: OpenCompass hands the API model the string (sent as the user's).
            text = "".join([_content(t) for t in dialogue])
            if self.api_format == "opencompass":
                return ModelInput(text=text)
            return ModelInput(messages=[{"role": "user", "content": text}])
        raise StyleError(
            "a meta template that is a list of messages applies to RawPromptTemplate messages only; "
            "this prompt is a PromptTemplate dialogue (OpenCompass fails on it too)",
            hint="give the model a meta template with round and api_role, or use a RawPromptTemplate",
        )

    def _as_prompt_dialogue(self, dialogue: Dialogue, spec: MetaTemplateSpec) -> Dialogue:
        """RawPromptTemplate messages as the PromptTemplate dialogue a language model
        reads: a system message is a ``SYSTEM`` item on its own (``fallback_role``
        ``HUMAN``), user and assistant messages are ``HUMAN`` and ``BOT`` items of
        the round (a meta template that names the roles ``system``, ``user``,
        ``assistant`` itself keeps those names)."""
        roles = spec.roles
        out = []
        in_round = False
        for turn in dialogue:
            role = turn.role
            if turn.section != MESSAGES:
                out.append(turn)
                continue
            name = role if role in roles else _OC_API_ROLES.get(role, role)
            if api_role(role) == "system":
                out.append(turn._replace(role=name, fallback_role="HUMAN", section="begin"))
            else:
                out.append(turn._replace(role=name, section="round"))
                in_round = True
        if not in_round:
            # System messages only: a PromptTemplate dialogue still has its round, which
            # shows the meta template's roles with their default prompts (and, in
            # generation, opens the model's turn).
            first = next((item for item in spec.round if not isinstance(item, str)), None)
            if first is not None:
                out.append(Turn(first.name, first.prompt, "", None, "round"))
        return tuple(out)

    def _messages(self, items: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
        if self.api_format == "opencompass":
            return [{"role": _OC_API_ROLES.get(role, role), "prompt": text} for role, text in items]
        return [{"role": _API_ROLES[role], "content": text} for role, text in items]

    # -- roles -----------------------------------------------------------------------

    def _role(self, turn: Turn, spec: MetaTemplateSpec) -> RoleSpec:
        roles = spec.roles
        found = roles.get(turn.role)
        if found is not None:
            return found
        fallback = turn.fallback_role
        alias = _OC_API_ROLES.get(turn.role)
        if alias is not None and fallback is None:
            # Dialogues of other task formats say user/assistant/system: OpenCompass's
            # HUMAN/BOT/SYSTEM, with SYSTEM falling back to HUMAN as its datasets do.
            found = roles.get(alias) or (roles.get("HUMAN") if alias == "SYSTEM" else None)
            if found is not None:
                return found
        if fallback is not None:
            found = roles.get(fallback)
            if found is not None:
                return found
            raise StyleError(
                f"the dialogue has a {turn.role!r} turn, and the meta template has neither the role "
                f"{turn.role!r} nor its fallback_role {fallback!r} (its roles: {spec.names()})",
                hint="add the role to the meta template (reserved_roles for SYSTEM), or fix the dataset template",
            )
        raise StyleError(
            f"the dialogue has a {turn.role!r} turn with no fallback_role, and the meta template has no "
            f"role {turn.role!r} (its roles: {spec.names()})",
            hint=f"add the role to the meta template (reserved_roles for {turn.role}), "
            "or give the dataset item a fallback_role",
        )

    def _runs(self, dialogue: Dialogue, spec: MetaTemplateSpec):
        """The dialogue in pieces, in OpenCompass's order: ``("raw", turn)`` for a
        plain string, ``("one", turn, role)`` for an item rendered on its own
        (``begin``/``end`` items, reserved roles) and ``("rounds", [[(role, turn),
        ...], ...], last)`` for a run of one section's round or ice turns split into
        rounds by the meta template's round order; ``last`` marks the run holding
        the last round. As in OpenCompass, the plain strings of a run come before
        its rounds."""
        pieces: list[tuple] = []
        n = len(dialogue)
        last_round_turn = self._last_round_turn(dialogue, spec)
        i = 0
        while i < n:
            turn = dialogue[i]
            section = turn.section
            if turn.role == RAW:
                if section not in ("round", "ice"):
                    pieces.append(("raw", turn))
                    i += 1
                    continue
                role = None
            else:
                role = self._role(turn, spec)
                if section not in ("round", "ice") or role.index is None:
                    pieces.append(("one", turn, role))
                    i += 1
                    continue
            rounds: list[list[tuple[RoleSpec, Turn]]] = []
            current: list[tuple[RoleSpec, Turn]] = []
            previous = -1
            holds_last = False
            while i < n:
                turn = dialogue[i]
                if turn.section != section:
                    break
                if turn.role == RAW:
                    pieces.append(("raw", turn))
                    i += 1
                    continue
                role = self._role(turn, spec)
                if role.index is None:
                    break
                if role.index <= previous:
                    rounds.append(current)
                    current = []
                current.append((role, turn))
                previous = role.index
                holds_last = holds_last or i == last_round_turn
                i += 1
            if current:
                rounds.append(current)
            if rounds:
                pieces.append(("rounds", rounds, holds_last))
        return pieces

    # -- language models -------------------------------------------------------------

    def _lm(self, dialogue: Dialogue, gen: bool, spec: MetaTemplateSpec, pieces: list | None = None) -> str:
        # The pieces of _runs, rendered in one pass. A run of in-context examples
        # is rendered once and kept (a fixed retriever gives every record the same
        # example turns; their tuple hashes fast, its strings keep their hashes).
        # ``pieces`` (tokenize=turns) collects (turns, text) as the text is built.
        roles = spec.roles
        out: list[str] = [spec.begin]
        append = out.append
        if pieces is not None:
            pieces.append(((), spec.begin))
        last = self._last_round_turn(dialogue, spec) if gen else -1
        cache = self._runs_cache
        i, n = 0, len(dialogue)
        while i < n:
            turn = dialogue[i]
            section = turn.section
            if section != "round" and section != "ice":
                if turn.role == RAW:
                    append(_content(turn))
                else:
                    role = self._role(turn, spec)
                    append(role.begin + _content(turn) + role.end)
                if pieces is not None:
                    pieces.append(((i,), out[-1]))
                i += 1
                continue
            j = i
            while j < n:
                other = dialogue[j]
                if other.section != section:
                    break
                if other.role != RAW:
                    role = roles.get(other.role)
                    if role is None:
                        role = self._role(other, spec)
                    if role.index is None:
                        break
                j += 1
            if j == i:  # a reserved role inside a round: on its own, in place
                role = self._role(turn, spec)
                append(role.begin + _content(turn) + role.end)
                if pieces is not None:
                    pieces.append(((i,), out[-1]))
                i += 1
                continue
            run = dialogue[i:j]
            if pieces is not None:
                text, stopped = self._lm_run(run, spec, gen and section != "ice" and i <= last < j, pieces, i)
                append(text)
                if stopped:
                    return "".join(out)
            elif section == "ice":
                text = cache.get(run)
                if text is None:
                    if len(cache) > 256:
                        cache.clear()
                    text = cache[run] = self._lm_run(run, spec, False)[0]
                append(text)
            else:
                text, stopped = self._lm_run(run, spec, gen and i <= last < j)
                append(text)
                if stopped:
                    return "".join(out)
            i = j
        append(spec.end)
        if pieces is not None:
            pieces.append(((), spec.end))
        return "".join(out)

    def _last_round_turn(self, dialogue: Dialogue, spec: MetaTemplateSpec) -> int:
        for i in range(len(dialogue) - 1, -1, -1):
            turn = dialogue[i]
            if turn.role != RAW and turn.section == "round" and self._role(turn, spec).index is not None:
                return i
        return -1

    def _lm_run(
        self, run: Dialogue, spec: MetaTemplateSpec, for_gen: bool, pieces: list | None = None, offset: int = 0
    ) -> tuple[str, bool]:
        """One section's run of turns: its plain strings, then its rounds; generation
        stops in the last round at the ``generate`` role's ``begin``. ``pieces``
        collects ``(turns, text)`` (turn indices counted from ``offset``)."""
        out = [_content(t) for t in run if t.role == RAW]
        owners: list[dict[str, int]] | None = None
        if pieces is not None:
            pieces += [((offset + k,), _content(t)) for k, t in enumerate(run) if t.role == RAW]
            owners = [{}]
        rounds: list[dict[str, str]] = []
        current: dict[str, str] = {}
        previous = -1
        for k, turn in enumerate(run):
            if turn.role == RAW:
                continue
            role = self._role(turn, spec)
            if role.index <= previous:
                rounds.append(current)
                current = {}
                if owners is not None:
                    owners.append({})
            current[role.name] = _content(turn)
            if owners is not None:
                owners[-1][role.name] = offset + k
            previous = role.index
        rounds.append(current)
        last = len(rounds) - 1
        for r, prompts in enumerate(rounds):
            stop = for_gen and r == last
            for item in spec.round:
                if isinstance(item, str):
                    out.append(item)
                elif stop and item.generate:
                    out.append(item.begin)
                    if pieces is not None:
                        pieces.append(((), item.begin))
                    return "".join(out), True
                else:
                    out.append(item.begin + prompts.get(item.name, item.prompt) + item.end)
                if owners is not None:
                    # the text of a turn of the dialogue, or of none (a round string, a role's default prompt)
                    owner = None if isinstance(item, str) else owners[r].get(item.name)
                    pieces.append((() if owner is None else (owner,), out[-1]))
        return "".join(out), False

    # -- API models ------------------------------------------------------------------

    def _api(self, dialogue: Dialogue, gen: bool, spec: MetaTemplateSpec) -> list[tuple[str, Any]]:
        items: list[tuple[str, Any]] = []
        if spec.begin:
            # OpenCompass puts the string first in the list, which its API models
            # cannot send; it goes as a system message here.
            items.append(("SYSTEM", spec.begin))
        stopped = False
        for piece in self._runs(dialogue, spec):
            kind = piece[0]
            if kind == "raw":
                text = piece[1].content
                if isinstance(text, str) and text.strip() and not self._warned:
                    self._warned.append(True)
                    warnings.warn(
                        "prompt-style: plain text in an OpenCompass dialogue (outside any role) is left out of "
                        f"API messages, as OpenCompass does: {text[:60]!r}",
                        stacklevel=2,
                    )
                continue
            if kind == "one":
                # A begin/end item (or a reserved role) is sent whole, as language models show
                # it: OpenCompass's API parser stops at a generate role here and then fails
                # (TypeError) merging the messages, so a few-shot answer in `begin` crashed it.
                turn, role = piece[1], piece[2]
                items.append((self._api_role(role, spec), role.begin + _api_content(turn) + role.end))
                continue
            rounds, holds_last = piece[1], piece[2]
            last = len(rounds) - 1
            for r, turns in enumerate(rounds):
                prompts = {role.name: turn.content for role, turn in turns}
                for_gen = gen and holds_last and r == last
                for item in spec.round:
                    if for_gen and item.generate:
                        stopped = True
                        break
                    content = prompts.get(item.name, item.prompt)
                    if isinstance(content, str):
                        content = item.begin + content + item.end
                    else:  # multimodal parts: a list of OpenAI-style content parts
                        content = [dict(p) for p in content]
                    items.append((item.api_role, content))
                if stopped:
                    break
            if stopped:
                break
        return _merge(items)

    @staticmethod
    def _api_role(role: RoleSpec, spec: MetaTemplateSpec) -> str:
        if role.api_role is None:
            raise StyleError(
                f"the role {role.name!r} of the API meta template has no api_role",
                hint="give it api_role: HUMAN, BOT or SYSTEM",
            )
        return role.api_role


def _api_content(turn: Turn) -> Any:
    content = turn.content
    return content if isinstance(content, str) else [dict(p) for p in content]


def _merge(items: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Consecutive messages of the same role joined with a newline, as OpenCompass does."""
    merged: list[tuple[str, Any]] = []
    for role, content in items:
        if merged and _API_ROLES[merged[-1][0]] == _API_ROLES[role]:
            previous = merged[-1][1]
            if isinstance(previous, str) and isinstance(content, str):
                merged[-1] = (merged[-1][0], previous + "\n" + content)
                continue
            merged[-1] = (merged[-1][0], _parts(previous) + [{"type": "text", "text": "\n"}] + _parts(content))
            continue
        merged.append((role, content))
    return merged


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(p) for p in content]


def opencompass_meta(*, options: dict[str, Any]) -> OpenCompassMeta:
    """``opencompass``: the meta template given as option ``template`` (none: the plain join)."""
    return check_options(OpenCompassMeta, options, what="meta template 'opencompass'")


opencompass_meta.options = OpenCompassMeta  # type: ignore[attr-defined]  # for listings


@dataclass(frozen=True)
class _Named:
    """Factory of a named meta template: ``opencompass::NAME``."""

    name: str
    options: ClassVar[Mapping[str, str]] = {
        "api": "API messages (true) or a string (false); default: API when a role has an api_role",
        "api_format": "API messages as openai (the default) or opencompass",
    }
    """The options it takes, for listings (its template is built in)."""

    def __call__(self, *, options: dict[str, Any]) -> OpenCompassMeta:
        if "template" in options:
            raise OptionError(
                f"meta template 'opencompass::{self.name}' has its template built in",
                key="template",
                hint="use --meta opencompass (or a meta template file) to give your own",
            )
        return check_options(
            OpenCompassMeta,
            {"template": NAMED_META_TEMPLATES[self.name], **options},
            what=f"meta template 'opencompass::{self.name}'",
        )
