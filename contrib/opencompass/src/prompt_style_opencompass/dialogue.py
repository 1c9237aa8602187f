"""prompt-style's dialogue as OpenCompass's ``PromptList``, for OpenCompass's meta templates.

On the render route with an OpenCompass meta template, OpenCompass receives
each record's dialogue, not a finished string, and its own template parser
(``LMTemplateParser``, ``APITemplateParser``) applies the model's
``meta_template``. The items are those of the ``PromptList`` OpenCompass's
``PromptTemplate`` builds: ``{'section': ..., 'pos': 'begin'|'end'}`` markers
around ``begin``, ``ice``, ``round`` and ``end`` sections, role items
``{'role': ..., 'prompt': ...}`` and plain strings.

The items are written so that OpenCompass's parser gives what prompt-style's
``opencompass`` meta template gives:

* roles are resolved against the meta template first, as prompt-style resolves
  them (``user``/``assistant``/``system`` read as ``HUMAN``/``BOT``/``SYSTEM``,
  ``SYSTEM`` falling back to ``HUMAN``; a ``fallback_role`` when the role is
  missing), so OpenCompass never looks a missing role up inside a round;
* consecutive turns of one section form one section (in-context examples are
  split into rounds together, as prompt-style splits them);
* a reserved role (one outside the meta template's ``round``) met in a round
  or an example stands in a ``begin`` section of its own, shown where it is;
* an ``end`` section gets proper markers (OpenCompass's own ``PromptTemplate``
  opens it with ``pos='end'``, and its parser then fails);
* a dialogue of plain strings only is the string itself.

What OpenCompass's parser cannot show as prompt-style does raises
:class:`Unsupported`; the exporter then applies the meta template itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prompt_style import Dialogue

SECTIONS = ("begin", "ice", "round", "end")
_ALIASES = {"user": "HUMAN", "assistant": "BOT", "system": "SYSTEM"}


class Unsupported(Exception):
    """A dialogue OpenCompass's template parser would show otherwise."""


@dataclass(frozen=True)
class MetaRoles:
    """What the conversion needs of an OpenCompass meta template."""

    round: tuple[str, ...]
    """The roles of its ``round``, in order."""
    reserved: tuple[str, ...]
    """Its ``reserved_roles``."""
    api: bool
    """Whether it is an API meta template (roles with ``api_role``)."""
    generating: tuple[str, ...] = ()
    """The roles with ``generate: true``."""

    @classmethod
    def of(cls, template: Mapping[str, Any], api: bool | None = None) -> MetaRoles:
        """The roles of a meta template mapping; :class:`Unsupported` for what
        OpenCompass 0.5.4's parsers fail on or show otherwise."""
        round_roles = tuple(r["role"] for r in template.get("round", ()) if isinstance(r, Mapping))
        reserved = tuple(r["role"] for r in template.get("reserved_roles", ()) or () if isinstance(r, Mapping))
        everything = (*template.get("round", ()), *(template.get("reserved_roles") or ()))
        items = [r for r in everything if isinstance(r, Mapping)]
        if api is None:
            api = any("api_role" in r for r in items)
        for holder in (template, *items):
            for key in ("begin", "end"):
                if isinstance(holder.get(key), (list, tuple)):
                    raise Unsupported(f"a {key} given as a list (OpenCompass 0.5.4's parser fails on it)")
        if api and template.get("begin"):
            raise Unsupported("an API meta template with a begin (OpenCompass puts it first as a bare string)")
        generating = tuple(r["role"] for r in items if r.get("generate"))
        return cls(round_roles, reserved, bool(api), generating)

    def resolve(self, role: str, fallback: str | None) -> str:
        """The meta template's role for a turn, as prompt-style's meta template finds it."""
        roles = (*self.round, *self.reserved)
        if role in roles:
            return role
        alias = _ALIASES.get(role)
        if alias is not None and fallback is None:
            if alias in roles:
                return alias
            if alias == "SYSTEM" and "HUMAN" in roles:
                return "HUMAN"
        if fallback is not None and fallback in roles:
            return fallback
        raise Unsupported(f"the meta template has no role for a {role!r} turn")


_TURNS = 4096
"""How many turns' items are kept (the shared examples come back; a bound for the rest)."""
_PREFIXES = 256
"""How many dialogue beginnings are kept (records with examples of their own share none)."""
_MARKERS = {(s, p): {"section": s, "pos": p} for s in SECTIONS for p in ("begin", "end")}


def prompt_items(
    dialogue: Dialogue,
    roles: MetaRoles,
    memo: dict[int, Any] | None = None,
    prefixes: dict[int, Any] | None = None,
) -> str | list[Any]:
    """The ``PromptList`` items (or the string) OpenCompass's parser shows as prompt-style shows ``dialogue``.

    :param memo: where each turn's item is kept, by the turn's identity, to be
        reused the next time the turn comes (a task's shared in-context examples);
        the items are never changed by OpenCompass's parsers.
    :param prefixes: where the items of a dialogue's turns before its ``round`` are
        kept, by its first turn: the next dialogue starting with equal turns (every
        record of a task whose examples are shared) reuses them whole.
    """
    if memo is None:
        memo = {}
    start = 0
    state: tuple[Any, ...] = ([], None, 0, False)
    first: Any = None
    if prefixes is not None and dialogue:
        try:
            first = dialogue[0]
            known = prefixes.get(first)
        except TypeError:  # a turn that cannot be hashed (content parts): no reuse
            first = known = None
        if known is not None and dialogue[: len(known[0])] == known[0]:
            start = len(known[0])
            state = (list(known[1]), *known[2:])
    items, current, rounds, spoken = state
    append = items.append
    get = memo.get
    for position in range(start, len(dialogue)):
        turn = dialogue[position]
        entry = get(id(turn))
        if entry is None or entry[0] is not turn:
            entry = (turn, *_item(turn, roles))
            if turn.section != "round":  # a record's own question is not kept: it does not come again
                if len(memo) >= _TURNS:
                    memo.clear()
                memo[id(turn)] = entry
        if entry[2] is not current:
            if current is not None:
                append(_MARKERS[current, "end"])
            current = entry[2]
            if current == "round":
                if first is not None and position and start == 0:
                    # the turns before the round, for the next dialogue that starts with them
                    if len(prefixes) >= _PREFIXES:  # type: ignore[arg-type]
                        prefixes.clear()  # type: ignore[union-attr]
                    prefixes[first] = (dialogue[:position], tuple(items), None, rounds, spoken)  # type: ignore[index]
                rounds += 1
            append(_MARKERS[current, "begin"])
        append(entry[1])
        if entry[3]:
            spoken = True
    if not spoken:  # plain strings only: the string itself
        return "".join(_text(turn.content) for turn in dialogue)
    if current is not None:
        append(_MARKERS[current, "end"])
    if rounds > 1:
        raise Unsupported("a round interrupted by a reserved role (OpenCompass would stop generating at the first)")
    return items


def _item(turn: Any, roles: MetaRoles) -> tuple[Any, str, bool]:
    """One turn's item, the section it stands in (one of :data:`SECTIONS`, the very
    string), and whether it is a role item."""
    content = _text(turn.content)
    if turn.section not in SECTIONS:
        raise Unsupported(f"a turn of the section {turn.section!r}")
    section = SECTIONS[SECTIONS.index(turn.section)]
    if turn.role == "":
        return content, section, False
    role = roles.resolve(turn.role, turn.fallback_role)
    if section in ("ice", "round") and role not in roles.round:
        return {"role": role, "prompt": content}, "begin", True  # shown on its own, where it stands
    if roles.api and section in ("begin", "end") and role in roles.generating:
        # OpenCompass's API parser stops there in generation and then fails merging.
        raise Unsupported(f"a {role} item in {section} with an API meta template")
    return {"role": role, "prompt": content}, section, True


def _text(content: str | Sequence[Any]) -> str:
    if not isinstance(content, str):
        raise Unsupported("multimodal content")
    return content
