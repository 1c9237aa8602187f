"""Format axes: the ways a prompt format varies, as a style declares them.

A style says along which *axes* its format can vary (the labels of the choices,
the separator after a label, the spacing between blocks, the casing of its
descriptors, ...), which *values* each axis takes, and which combinations make
no sense (*constraints*). The ``declare_axes`` hook hands these declarations to
the core, which builds format grids from them (``prompt-style grid``, FormatSpread
style): a *cell* is one value per axis, identified by a stable hash of its
settings (:func:`cell_id`).

This module is the data model only (no plugin machinery, no rendering): an
:class:`Axis`, a :class:`Constraint` and :class:`StyleAxes`, the object a
``declare_axes`` factory returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import OptionError

__all__ = [
    "Axis",
    "Constraint",
    "StyleAxes",
    "cell_id",
    "TASK_AXES",
    "CELL_ID_VERSION",
]

CELL_ID_VERSION = "ps-cell-1"
"""Hashed with every cell's settings, so that a future change of the id scheme
gives different ids rather than colliding ones."""

TASK_AXES = ("shots", "meta", "choice_order")
"""Axes the core applies itself rather than the style's options: the number of
few-shot examples, the meta template, and the order of the choices (a style
declares ``choice_order`` when it shows choices; ``shots`` and ``meta`` are
available for every style)."""


@dataclass(frozen=True)
class Axis:
    """One way a format varies.

    ``values`` are the values the axis offers (strings, or numbers for
    ``shots``), in the order a grid lists them; ``default`` is the value the
    style has when nothing is varied (it need not be among ``values``). A value
    given on the command line is matched against ``values`` by its text; when
    ``parse`` is set, any other text is accepted through it (a separator of your
    own: ``--axis separator=" :: "``) and must return the value or raise
    :class:`~prompt_style.OptionError`.
    """

    name: str
    values: tuple[Any, ...]
    default: Any
    help: str = ""
    parse: Callable[[str], Any] | None = field(default=None, compare=False, repr=False)

    def value(self, text: str) -> Any:
        """The value written ``text`` (a declared one, else ``parse(text)``).

        :raises OptionError: naming the axis and its values when ``text`` is neither.
        """
        for value in (*self.values, self.default):
            if str(value) == text:
                return value
        if self.parse is not None:
            return self.parse(text)
        import json

        shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in self.values)
        raise OptionError(
            f"axis {self.name!r} has no value {json.dumps(text, ensure_ascii=False)}",
            key=f"axis.{self.name}",
            hint=f"its values: {shown}",
        )


@dataclass(frozen=True)
class Constraint:
    """A combination of values a style rules out.

    ``check`` is called with the values of ``axes`` (in that order) and returns
    whether the combination is allowed; ``reason`` says why it may not be (shown
    by ``prompt-style grid --list`` and in errors). A constraint only applies when
    every axis it names is in the grid.
    """

    axes: tuple[str, ...]
    check: Callable[..., bool] = field(compare=False)
    reason: str = ""

    def allows(self, settings: Mapping[str, Any]) -> bool:
        return bool(self.check(*(settings[name] for name in self.axes)))


@dataclass(frozen=True)
class StyleAxes:
    """What a ``declare_axes`` factory returns: a style's axes, its constraints,
    and how a cell's settings become the style's options.

    ``options(settings)`` gets a value for **every** axis in ``axes`` whose name
    is not a task axis (``choice_order``), the defaults filling what the grid
    does not vary, and returns the ``template`` options that give that format
    (merged over the task's own options). It must be a pure function of the
    settings, so that a cell renders the same in any process.
    """

    axes: tuple[Axis, ...]
    options: Callable[[Mapping[str, Any]], Mapping[str, Any]] = field(compare=False)
    constraints: tuple[Constraint, ...] = ()

    def __post_init__(self) -> None:
        names = [axis.name for axis in self.axes]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise OptionError(f"axes declared twice: {', '.join(twice)}")
        for constraint in self.constraints:
            unknown = [name for name in constraint.axes if name not in names]
            if unknown:
                raise OptionError(f"constraint {constraint.reason!r} names unknown axes {', '.join(unknown)}")

    def axis(self, name: str) -> Axis | None:
        for axis in self.axes:
            if axis.name == name:
                return axis
        return None

    def defaults(self) -> dict[str, Any]:
        return {axis.name: axis.default for axis in self.axes}

    def violated(self, settings: Mapping[str, Any]) -> Constraint | None:
        """The first constraint ``settings`` break (only constraints whose axes are all set)."""
        for constraint in self.constraints:
            if all(name in settings for name in constraint.axes) and not constraint.allows(settings):
                return constraint
        return None

    def style_options(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The style options of a cell: ``options`` called with every style axis set."""
        full = {axis.name: axis.default for axis in self.axes if axis.name not in TASK_AXES}
        full.update((k, v) for k, v in settings.items() if k in full)
        return dict(self.options(full))


def canonical_json(value: Any) -> str:
    """JSON that is the same for equal settings whatever their key order or process."""
    import json

    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def cell_id(style: str, settings: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> str:
    """The stable id of a cell: 12 hex digits of the SHA-256 of its style and the
    settings that differ from ``defaults`` (so a cell keeps its id when a grid
    varies more axes, or a style declares a new one).

    Independent of ``PYTHONHASHSEED``, of dict order and of the order axes are
    given in.
    """
    import hashlib

    defaults = defaults or {}
    changed = {k: v for k, v in settings.items() if k not in defaults or defaults[k] != v}
    payload = canonical_json([CELL_ID_VERSION, style, changed])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def value_text(value: Any) -> str:
    """An axis value as written on the command line (``shots`` 5 -> ``5``)."""
    import json

    return value if isinstance(value, str) else json.dumps(value)
