"""How an OpenCompass meta template shows a ``ChatInferencer`` chat.

OpenCompass's ``ChatInferencer`` replaces the model's template parser with its
own (``icl_chat_inferencer.LMTemplateParser`` and ``APITemplateParser``), which
reads OpenAI-style messages (``{role, content}``) rather than a ``PromptList``.
Its meta template roles are looked up by OpenAI name (``SYSTEM`` is ``system``,
``HUMAN`` ``user``, ``BOT`` ``assistant``; other names stay as they are):

* a language model gets, for every message, its role's ``begin``, the content and
  the role's ``end`` (a message whose role the meta template lacks: its content
  alone), then the ``begin`` of the assistant role. The meta template's own
  ``begin`` and ``end`` are not used, there is no ``generate`` cut and no round:
  no empty turn for a role the chat does not have. With no meta template the
  contents are joined with ``"\\n"`` (the turns' ``sep``);
* an API model gets one message per chat message, with its role's ``api_role``
  (a role the meta template lacks passes through); consecutive messages of one
  role are not merged.

The chat turns carry the section :data:`CHAT`; the ``opencompass`` style builds
them (``prompt_style.styles.opencompass.chat``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import StyleError
from ..types import Dialogue, Turn

if TYPE_CHECKING:
    from .opencompass import MetaTemplateSpec, RoleSpec

__all__ = ["CHAT", "chat_roles", "chat_text", "chat_messages", "is_chat"]

CHAT = "chat"
"""The section of the turns of a ``ChatInferencer`` chat."""

_OPENAI_NAMES = {"SYSTEM": "system", "HUMAN": "user", "BOT": "assistant"}
_API_ROLE_NAMES = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}
_DEFAULT_API_ROLES = {"system": "SYSTEM", "user": "HUMAN", "assistant": "BOT"}
"""ChatInferencer's APITemplateParser without a meta template."""


def is_chat(dialogue: Dialogue) -> bool:
    """Whether a dialogue is a ``ChatInferencer`` chat: its turns are in section :data:`CHAT`
    (the last one decides: a system instruction may have been put first)."""
    return bool(dialogue) and dialogue[-1].section == CHAT


def chat_roles(spec: MetaTemplateSpec) -> dict[str, RoleSpec]:
    """The meta template's roles by OpenAI name, round first, then reserved roles (a
    later role of the same name wins, as in OpenCompass's dict).

    :raises StyleError: for a plain string in the round, which ChatInferencer's parser
        cannot read (OpenCompass fails with a ``TypeError``).
    """
    for item in spec.round:
        if isinstance(item, str):
            raise StyleError(
                f"the meta template's round holds the plain string {item!r}, which OpenCompass's "
                "ChatInferencer cannot read (it looks up every round item's role and fails too)",
                hint="render the chat with a meta template whose round holds roles only",
            )
    roles: dict[str, RoleSpec] = {}
    for role in spec.roles.values():
        roles[_OPENAI_NAMES.get(role.name, role.name)] = role
    return roles


def _text(turn: Turn) -> str:
    content = turn.content
    if isinstance(content, str):
        return content
    raise StyleError(
        f"a {turn.role} message holds multimodal parts, which this text meta template cannot show",
        hint="use an API meta template (roles with api_role), which sends the parts as messages",
    )


def chat_text(dialogue: Dialogue, roles: Mapping[str, RoleSpec]) -> str:
    """A language model's prompt for a chat (ChatInferencer's ``LMTemplateParser``):
    every message wrapped in its role's ``begin`` and ``end``, then the assistant's
    ``begin``.

    :raises StyleError: when the meta template has no assistant (``BOT``) role
        (OpenCompass fails with a ``KeyError``).
    """
    assistant = roles.get("assistant")
    if assistant is None:
        raise StyleError(
            "OpenCompass's ChatInferencer ends a language model's prompt with the begin of the BOT "
            f"(assistant) role, and the meta template has none (its roles: {', '.join(roles) or 'none'})",
            hint="add the BOT role to the meta template's round",
        )
    out = []
    for turn in dialogue:
        role = roles.get(turn.role)
        text = _text(turn)
        out.append(text if role is None else role.begin + text + role.end)
    out.append(assistant.begin)
    return "".join(out)


def chat_messages(dialogue: Dialogue, roles: Mapping[str, RoleSpec] | None, api_format: str) -> list[dict[str, Any]]:
    """An API model's messages for a chat (ChatInferencer's ``APITemplateParser``).

    ``api_format="opencompass"`` gives OpenCompass's list ``[{"role": api_role,
    "prompt": content}]``; ``"openai"`` the OpenAI messages its ``OpenAI`` model
    sends, where a role the meta template lacks keeps the chat's name (OpenCompass
    sends such a message without a role).

    :param roles: :func:`chat_roles`; ``None`` without a meta template (ChatInferencer's
        defaults: ``system``, ``user`` and ``assistant`` as SYSTEM, HUMAN and BOT).
    :raises StyleError: for a meta template role without ``api_role`` (OpenCompass: ``KeyError``).
    """
    out = []
    for turn in dialogue:
        content = turn.content
        if not isinstance(content, str):
            content = [dict(part) for part in content]
        if roles is None:
            role = _DEFAULT_API_ROLES.get(turn.role, turn.role)
        else:
            spec = roles.get(turn.role)
            if spec is None:
                role = turn.role
            elif spec.api_role is None:
                raise StyleError(
                    f"the meta template's role {spec.name!r} has no api_role, which OpenCompass's "
                    "ChatInferencer needs for an API model",
                    hint="give it api_role: HUMAN, BOT or SYSTEM",
                )
            else:
                role = spec.api_role
        if api_format == "opencompass":
            out.append({"role": role, "prompt": content})
        else:
            out.append({"role": _API_ROLE_NAMES.get(role, role), "content": content})
    return out
