"""OpenCompass prompt templates, compiled once per task and filled per record.

This is the engine behind the ``opencompass`` style. It reproduces what
OpenCompass's ``PromptTemplate`` and ``BaseRetriever.generate_ice`` build — a
string, or a ``PromptList`` of role items and plain strings — as our
:data:`~prompt_style.Dialogue`:

* a role item ``dict(role=..., prompt=..., fallback_role=...)`` is a
  :class:`~prompt_style.Turn` with that role, content and fallback role;
* a plain string of the ``PromptList`` (``begin='</E>'`` after the in-context
  examples went in, ``ice_eos_token``, a string ``begin``) is a turn whose role
  is :data:`RAW` (the empty string): meta templates place its text as it is;
* ``Turn.section`` is the ``PromptList`` section the item stands in:
  ``begin``, ``ice`` (an in-context example), ``round`` or ``end``;
* ``Turn.sep`` is what OpenCompass puts before the item when there is no meta
  template (``"\\n"`` between items), so the ``plain`` meta template gives
  OpenCompass's plain join byte for byte.

A string template gives a dialogue of raw turns only, which every OpenCompass
meta template passes through as the string it is.

Placeholders are filled with OpenCompass's replace semantics — ``{field}`` for
every field of the record, values turned to text with ``str()``, a placeholder
no field matches left as written — in one pass: a value is never scanned for
placeholders again (OpenCompass replaces field after field, so a value holding
``{answer}`` would receive the answer; see docs/opencompass.md).

Module API (stable; the multi-turn and multimodal templates build on it):

* :class:`FieldText` — a text with ``{field}`` placeholders, compiled once;
  ``fill(entry, override)``.
* :class:`PromptTemplate` — one ``PromptTemplate`` config compiled:
  ``kind`` (``"string"``, ``"dialogue"`` or ``"labels"``), ``labels``,
  ``ice_item(entry, label)``, ``fill(entry, ice, label, override)``.
* :func:`compile_template` and :data:`TEMPLATE_TYPES` — compile a template
  config by its OpenCompass ``type``; other template types register here
  (:func:`register_template_type`).

An ``infer_cfg``'s templates together, and the joining of in-context examples,
are in :mod:`.infer` (:class:`~.infer.InferPrompts`, :func:`~.infer.join_ice`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ...errors import StyleError, TaskFileError
from ...types import Dialogue, Turn

__all__ = [
    "RAW",
    "SECTIONS",
    "FieldText",
    "Item",
    "PromptTemplate",
    "Ice",
    "compile_template",
    "template_type_name",
    "TEMPLATE_TYPES",
    "TemplateConfigError",
    "register_template_type",
]

RAW = ""
"""The role of a raw-text turn: a plain string of OpenCompass's ``PromptList``."""

SECTIONS = ("begin", "round", "end")
"""The keys of a dialogue template."""

ENCLOSING = ""
"""The section of the separators between in-context examples until the examples
are put into a prompt: then the section the ice token stands in (OpenCompass
keeps them as plain strings of that section, between the examples' sections)."""

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")

Ice = Union[str, Dialogue]
"""In-context examples as OpenCompass hands them to the prompt template: a string
(string ice templates, or no examples) or a dialogue (dialogue ice templates)."""


class TemplateConfigError(TaskFileError):
    """A template config OpenCompass would reject or crash on; ``key`` is the
    dotted path inside the config (``prompt_template.template.round.0.role``)."""


class FieldText:
    """A text with OpenCompass ``{field}`` placeholders, split once into literal
    parts and field names so that filling it is a join."""

    __slots__ = ("source", "_parts", "_names")

    def __init__(self, source: str) -> None:
        self.source = source
        parts: list[str] = []
        names: list[str] = []
        pos = 0
        for match in _PLACEHOLDER.finditer(source):
            parts.append(source[pos : match.start()])
            names.append(match.group(1))
            pos = match.end()
        parts.append(source[pos:])
        self._parts = tuple(parts)
        self._names = tuple(names)

    @property
    def fields(self) -> tuple[str, ...]:
        """The placeholder names, in order (repeats included)."""
        return self._names

    def fill(self, entry: Mapping[str, Any], override: Mapping[str, Any] | None = None) -> str:
        """The text with every ``{name}`` that ``override`` or ``entry`` holds replaced
        by ``str(value)``; other placeholders stay as written. Values are not scanned."""
        names = self._names
        if not names:
            return self.source
        parts = self._parts
        out = [parts[0]]
        append = out.append
        for i, name in enumerate(names):
            if override is not None and name in override:
                value = override[name]
            elif name in entry:
                value = entry[name]
            else:
                append("{" + name + "}")
                append(parts[i + 1])
                continue
            append(value if type(value) is str else str(value))
            append(parts[i + 1])
        return "".join(out)

    def __repr__(self) -> str:
        return f"FieldText({self.source!r})"

    def __getstate__(self) -> str:
        return self.source

    def __setstate__(self, state: str) -> None:
        self.__init__(state)


@dataclass(frozen=True)
class Item:
    """One item of a compiled template: a role item, or a plain string (``role`` is
    :data:`RAW`). ``pieces`` is the text split at the ice token: more than one
    piece means the in-context examples go between them."""

    role: str
    pieces: tuple[FieldText, ...]
    fallback_role: str | None
    section: str
    key: str
    """Where the item stands in the config, for messages."""

    @property
    def has_ice(self) -> bool:
        return len(self.pieces) > 1


def _join_pieces(item: Item, entry: Mapping[str, Any], override: Mapping[str, Any] | None, ice: str) -> str:
    pieces = item.pieces
    if len(pieces) == 1:
        return pieces[0].fill(entry, override)
    return ice.join([p.fill(entry, override) for p in pieces])


class _Builder:
    """Collects the turns of one prompt, computing OpenCompass's plain-join
    separators: ``"\\n"`` before every non-empty item but the first item."""

    __slots__ = ("turns", "seen")

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.seen = False

    def raw(self, text: str, section: str) -> None:
        if text:
            self.turns.append(Turn(RAW, text, "\n" if self.seen else "", None, section))
        self.seen = True

    def role(self, role: str, content: Any, fallback: str | None, section: str) -> None:
        sep = "\n" if self.seen and content else ""
        self.turns.append(Turn(role, content, sep, fallback, section))
        self.seen = True

    def splice(self, ice: Dialogue, section: str) -> None:
        """Add in-context example turns (built with ``sep`` for a non-first position);
        the separators between them stand in ``section``, where the examples go."""
        if not ice:
            return
        if ice[-1].section == ENCLOSING:  # separators present: each example is followed by one
            ice = tuple([t._replace(section=section) if t.section == ENCLOSING else t for t in ice])
        if not self.seen:
            first = ice[0]
            self.turns.append(first._replace(sep=""))
            self.turns.extend(ice[1:])
        else:
            self.turns.extend(ice)
        self.seen = True


def template_type_name(value: Any) -> str | None:
    """The class name of an OpenCompass ``type`` value: a string (its last dotted
    part), a class, or a marker object from a Python config."""
    if isinstance(value, str):
        return value.rsplit(".", 1)[-1]
    name = getattr(value, "__opencompass_name__", None) or getattr(value, "__name__", None)
    return name.rsplit(".", 1)[-1] if isinstance(name, str) else None


class PromptTemplate:
    """An OpenCompass ``PromptTemplate`` (``template``, ``ice_token``,
    ``sep_token``), compiled once.

    ``kind`` is ``"string"`` (a string template), ``"dialogue"`` (a mapping of
    ``begin``/``round``/``end``) or ``"labels"`` (a mapping from label to a
    string or dialogue template, for perplexity evaluation).
    """

    type_name = "PromptTemplate"
    """The OpenCompass class name: the config's ``type`` (:data:`TEMPLATE_TYPES`)."""
    arguments: tuple[str, ...] = ("template", "ice_token", "sep_token")
    """The config keys the type takes besides ``type``; the first one is required."""
    argument_hints: Mapping[str, str] = {}
    """What to say about a config key the type does not take, by key."""

    def __init__(
        self,
        template: Any,
        ice_token: str | None = None,
        sep_token: str | None = None,
        *,
        key: str = "prompt_template",
    ) -> None:
        self.key = key
        self.ice_token = ice_token
        self.sep_token = sep_token
        for name, value in (("ice_token", ice_token), ("sep_token", sep_token)):
            if value is not None and (not isinstance(value, str) or not value):
                raise TemplateConfigError(f"must be a non-empty string, not {value!r}", key=f"{key}.{name}")
        tkey = f"{key}.template"
        self.labels: tuple[Any, ...] = ()
        if isinstance(template, str):
            self.kind = "string"
            self._check_ice_token(template, tkey)
            self.string = self._pieces(template, tkey)
        elif isinstance(template, Mapping):
            if not template:
                raise TemplateConfigError("is an empty mapping", key=tkey)
            if all(k in SECTIONS for k in template):
                self.kind = "dialogue"
                self.dialogue = self._dialogue(template, tkey)
            else:
                self.kind = "labels"
                self.labels = tuple(template)
                self.by_label: dict[Any, tuple[str, Any]] = {}
                for label, value in template.items():
                    lkey = f"{tkey}.{label}"
                    if isinstance(value, str):
                        self._check_ice_token(value, lkey)
                        self.by_label[label] = ("string", self._pieces(value, lkey))
                    elif isinstance(value, Mapping):
                        unknown = [k for k in value if k not in SECTIONS]
                        if unknown:
                            raise TemplateConfigError(
                                f"a label's dialogue template has keys {', '.join(map(str, unknown))}",
                                key=f"{lkey}.{unknown[0]}",
                                hint="a dialogue template has only begin, round and end",
                            )
                        self.by_label[label] = ("dialogue", self._dialogue(value, lkey))
                    else:
                        raise TemplateConfigError(
                            f"the template of label {label!r} must be a string or a dialogue mapping, "
                            f"not {type(value).__name__}",
                            key=lkey,
                        )
                self._label_index = {_label_key(label): label for label in self.labels}
        else:
            raise TemplateConfigError(
                f"must be a string or a mapping, not {type(template).__name__}",
                key=tkey,
                hint="a string with {field} placeholders, a dialogue (begin/round/end) or {label: template}",
            )

    def _require_dialogue(self, message: str, hint: str) -> None:
        """For template types that take only a dialogue template (``begin``/``round``/``end``)."""
        if self.kind != "dialogue":
            raise TemplateConfigError(message, key=f"{self.key}.template", hint=hint)

    # -- compiling -------------------------------------------------------------------

    def _check_ice_token(self, text: str, key: str) -> None:
        # OpenCompass raises LookupError at construction for a string without it.
        if self.ice_token is not None and self.ice_token not in text:
            raise TemplateConfigError(
                f"ice_token {self.ice_token!r} does not appear in the template {text!r}",
                key=key,
                hint="put the ice_token where the in-context examples go, or drop ice_token",
            )

    def _pieces(self, text: str, key: str) -> tuple[FieldText, ...]:
        if not isinstance(text, str):
            raise TemplateConfigError(f"must be a string, not {type(text).__name__} {text!r}", key=key)
        if self.sep_token is not None:
            text = text.replace(self.sep_token, "")
        if self.ice_token is not None and self.ice_token in text:
            return tuple(FieldText(p) for p in text.split(self.ice_token))
        return (FieldText(text),)

    def _dialogue(self, template: Mapping[str, Any], key: str) -> dict[str, tuple[Item, ...]]:
        if "round" not in template:
            raise TemplateConfigError(
                "a dialogue template needs a round",
                key=key,
                hint="for example round: [{role: HUMAN, prompt: '{question}'}, {role: BOT, prompt: '{answer}'}]",
            )
        out: dict[str, tuple[Item, ...]] = {}
        for section in SECTIONS:
            if section not in template:
                continue
            value = template[section]
            skey = f"{key}.{section}"
            if section == "round":
                if not isinstance(value, list):
                    raise TemplateConfigError(f"must be a list of role items, not {type(value).__name__}", key=skey)
                entries = list(enumerate(value))
            elif isinstance(value, list):
                entries = list(enumerate(value))
            else:
                entries = [(None, value)]
            items = []
            for i, raw in entries:
                ikey = skey if i is None else f"{skey}.{i}"
                items.append(self._item(raw, section, ikey))
            out[section] = tuple(items)
        return out

    def _item(self, raw: Any, section: str, key: str) -> Item:
        if isinstance(raw, str):
            return Item(RAW, self._pieces(raw, key), None, section, key)
        if not isinstance(raw, Mapping):
            raise TemplateConfigError(
                f"an item must be a string or a role mapping, not {type(raw).__name__} {raw!r}", key=key
            )
        return self.role_item(raw, section, key)

    def role_item(self, raw: Mapping[str, Any], section: str, key: str) -> Item:
        """Compile one role item; template types with other item keys override this."""
        unknown = [k for k in raw if k not in ("role", "prompt", "fallback_role")]
        if unknown:
            raise TemplateConfigError(
                f"a role item has unknown key(s) {', '.join(map(str, unknown))}",
                key=f"{key}.{unknown[0]}",
                hint="a role item has role, prompt and optionally fallback_role",
            )
        role = raw.get("role")
        if not isinstance(role, str) or not role:
            raise TemplateConfigError(f"a role item needs a role name, not {role!r}", key=f"{key}.role")
        fallback = raw.get("fallback_role")
        if fallback is not None and not isinstance(fallback, str):
            raise TemplateConfigError(f"must be a role name, not {fallback!r}", key=f"{key}.fallback_role")
        prompt = raw.get("prompt", "")
        return Item(role, self._pieces(prompt, f"{key}.prompt"), fallback, section, key)

    # -- what is in it ---------------------------------------------------------------

    @property
    def is_dialogue(self) -> bool:
        """A dialogue template (OpenCompass's ``prompt_type == 'meta'``): in-context
        examples are then joined without separators."""
        return self.kind == "dialogue"

    def has_ice_slot(self) -> bool:
        """Whether the in-context examples have somewhere to go."""
        if self.ice_token is None:
            return False
        return any(item.has_ice for items in self._all_items() for item in items) or self._string_has_ice()

    def _string_has_ice(self) -> bool:
        if self.kind == "string":
            return len(self.string) > 1
        if self.kind == "labels":
            return any(kind == "string" and len(value) > 1 for kind, value in self.by_label.values())
        return False

    def _all_items(self):
        if self.kind == "dialogue":
            yield from self.dialogue.values()
        elif self.kind == "labels":
            for kind, value in self.by_label.values():
                if kind == "dialogue":
                    yield from value.values()

    def select(self, label: Any) -> tuple[str, Any]:
        """The (kind, compiled) template for ``label`` of a label-keyed template."""
        found = self.by_label.get(label, _MISSING) if _hashable(label) else _MISSING
        if found is _MISSING:
            found_label = self._label_index.get(_label_key(label), _MISSING)
            if found_label is not _MISSING:
                return self.by_label[found_label]
            shown = ", ".join(repr(x) for x in self.labels)
            raise StyleError(
                f"the label-keyed template has no template for the label {label!r} (its labels: {shown})",
                key=self.key + ".template",
                hint="the output column of an in-context example must name one of the labels",
            )
        return found

    # -- filling ---------------------------------------------------------------------

    def ice_item(self, entry: Mapping[str, Any], label: Any) -> Ice:
        """One in-context example (OpenCompass's ``generate_ice_item``): the
        template for ``label`` (label-keyed templates), its ``round`` only for a
        dialogue, the ice token removed, filled with the example's whole record."""
        kind, compiled = self._chosen(label)
        if kind == "string":
            return "".join([p.fill(entry) for p in compiled])
        turns = []
        for item in compiled["round"]:
            text = "".join([p.fill(entry) for p in item.pieces])
            if item.role == RAW:
                if text:
                    turns.append(Turn(RAW, text, "\n", None, "ice"))
            else:
                turns.append(Turn(item.role, text, "\n" if text else "", item.fallback_role, "ice"))
        return tuple(turns)

    def _chosen(self, label: Any) -> tuple[str, Any]:
        if self.kind == "string":
            return "string", self.string
        if self.kind == "dialogue":
            return "dialogue", self.dialogue
        return self.select(label)

    def fill(
        self,
        entry: Mapping[str, Any],
        ice: Ice,
        label: Any = None,
        override: Mapping[str, Any] | None = None,
    ) -> Dialogue:
        """The prompt for a record (OpenCompass's ``generate_item`` and
        ``generate_label_prompt_item``): the template for ``label`` (the first
        label's when ``label`` is ``None``), ``ice`` where the ice token stands,
        placeholders filled from ``override`` then ``entry``."""
        if self.kind == "labels":
            kind, compiled = self.by_label[self.labels[0]] if label is None else self.select(label)
        else:
            kind, compiled = self._chosen(label)
        build = _Builder()
        if kind == "string":
            if len(compiled) > 1 and isinstance(ice, tuple) and ice:
                raise StyleError(
                    "the in-context examples are dialogue turns but the prompt template is a string",
                    key=self.key + ".template",
                    hint="use a string ice_template with a string prompt_template (OpenCompass fails here too)",
                )
            glue = ice if isinstance(ice, str) else ""
            build.raw(glue.join([p.fill(entry, override) for p in compiled]), "round")
            return tuple(build.turns)
        for section in SECTIONS:
            items = compiled.get(section)
            if items is not None:
                self._fill_items(build, items, entry, override, ice, section)
        return tuple(build.turns)

    def _fill_items(
        self,
        build: _Builder,
        items: Sequence[Item],
        entry: Mapping[str, Any],
        override: Mapping[str, Any] | None,
        ice: Ice,
        section: str,
    ) -> None:
        """The items of one section of a dialogue template, filled, into ``build``."""
        for item in items:
            if item.role == RAW:
                self._raw_item(build, item, entry, override, ice)
                continue
            if item.has_ice and isinstance(ice, tuple):
                if ice:
                    raise StyleError(
                        f"the ice token stands inside the prompt of a {item.role} item, but the in-context "
                        "examples are dialogue turns, which cannot go inside a text",
                        key=item.key,
                        hint="put the ice token on its own as a string item, e.g. begin: '</E>'",
                    )
                text = _join_pieces(item, entry, override, "")
            else:
                text = _join_pieces(item, entry, override, ice if isinstance(ice, str) else "")
            build.role(item.role, text, item.fallback_role, section)

    @staticmethod
    def _raw_item(
        build: _Builder, item: Item, entry: Mapping[str, Any], override: Mapping[str, Any] | None, ice: Ice
    ) -> None:
        pieces = item.pieces
        if len(pieces) == 1 or isinstance(ice, str):
            build.raw(_join_pieces(item, entry, override, ice if isinstance(ice, str) else ""), item.section)
            return
        # OpenCompass splits the string at the ice token and puts the example
        # items between the non-empty pieces.
        last = len(pieces) - 1
        for i, piece in enumerate(pieces):
            if piece.source:
                build.raw(piece.fill(entry, override), item.section)
            if i < last:
                build.splice(ice, item.section)


_MISSING = object()


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _label_key(label: Any) -> str:
    return str(label)


TEMPLATE_TYPES: dict[str, Callable[..., PromptTemplate]] = {}
"""OpenCompass template class name -> compiler ``(key=, **config)`` (the config's keys
but ``type``). ``PromptTemplate`` is here; the multi-turn, multimodal and raw message
templates register themselves (:func:`register_template_type`)."""


def register_template_type(cls: type) -> type:
    """Register a template class under its ``type_name`` (a class decorator).

    Its compiler checks the config's keys against ``cls.arguments`` (the first one
    is required), as OpenCompass's constructor would, and calls
    ``cls(**config, key=key)``.
    """
    required = cls.arguments[0]

    def compile_config(*, key: str, **config: Any) -> Any:
        if required not in config:
            raise TemplateConfigError(f"has no {required}", key=key)
        for name in config:
            if name not in cls.arguments:
                raise TemplateConfigError(
                    f"{cls.type_name} has no argument {name!r}",
                    key=f"{key}.{name}",
                    hint=cls.argument_hints.get(name) or "it takes " + ", ".join(cls.arguments),
                )
        return cls(**config, key=key)

    TEMPLATE_TYPES[cls.type_name] = compile_config
    return cls


register_template_type(PromptTemplate)

KNOWN_TEMPLATE_TYPES: tuple[str, ...] = (
    "PromptTemplate",
    "MultiTurnPromptTemplate",
    "MMPromptTemplate",
    "RawPromptTemplate",
)
"""The template types an OpenCompass config may name (some may not be installed)."""


def compile_template(config: Any, key: str) -> PromptTemplate | None:
    """Compile an ``ice_template`` or ``prompt_template`` config (a mapping with
    ``type``, ``template``, ``ice_token``, ``sep_token``); ``None`` stays ``None``.

    :raises TemplateConfigError: naming ``key`` and the wrong part.
    """
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise TemplateConfigError(
            f"must be a mapping with type and template, not {type(config).__name__}",
            key=key,
            hint="for example {type: PromptTemplate, template: 'Q: {question}'}",
        )
    options = dict(config)
    type_value = options.pop("type", "PromptTemplate")
    name = template_type_name(type_value)
    if name not in TEMPLATE_TYPES:
        known = sorted(set(TEMPLATE_TYPES) | set(KNOWN_TEMPLATE_TYPES))
        if name in KNOWN_TEMPLATE_TYPES:
            message = f"{name} is not supported by this installation"
        else:
            message = f"unknown template type {type_value!r}"
        raise TemplateConfigError(message, key=f"{key}.type", hint="known template types: " + ", ".join(known))
    return TEMPLATE_TYPES[name](key=key, **options)
