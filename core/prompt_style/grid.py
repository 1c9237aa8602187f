"""Format grids: one task rendered in many formats (FormatSpread, Sclar et al. 2023).

A grid takes a loaded :class:`~prompt_style.Task`, the axes its style declares
(the ``declare_axes`` hook) plus the core's ``shots`` and ``meta`` axes, and the
values the user asks for; its *cells* are the combinations the style's
constraints allow (all of them, or a seeded sample). Each cell is a variant of
the task (:meth:`Task.variant <prompt_style.Task.variant>`): its style is built
and its templates compiled once, and it renders the evaluated split, read once
for the whole grid.

Cell ids (:func:`~prompt_style.cell_id`) hash the style and the settings that
differ from the task's own, so they do not depend on the process, on the order
axes or values are given in, or on which other axes a grid varies.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .axes import Axis, StyleAxes, canonical_json, cell_id, value_text
from .errors import OptionError, PromptStyleError

if TYPE_CHECKING:
    from .loading import Task
    from .render import RenderedPrompt

__all__ = ["Cell", "Grid", "make_grid", "grid_cell", "parse_axis_values", "MAX_CELLS"]

MAX_CELLS = 1_000_000
"""Grids with more combinations than this are only sampled (``sample=``), never
listed whole."""

SHOT_COUNTS = (0, 1, 3, 5)


@dataclass(frozen=True)
class Cell:
    """One format of a grid: a value for every axis the grid varies."""

    id: str
    """The stable id (12 hex digits)."""
    settings: Mapping[str, Any]
    """Axis name -> value, for every axis of the grid, in the style's axis order."""
    style: str
    """The style name."""
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """The cell's ``template`` options (the task's, with the style's axes applied)."""

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.id, "style": self.style, "settings": dict(self.settings)}


def _unescape(text: str) -> str:
    out = []
    chars = iter(text)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        nxt = next(chars, "")
        out.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\", ",": ","}.get(nxt, "\\" + nxt))
    return "".join(out)


def parse_axis_values(text: str) -> tuple[str, list[str] | None]:
    """``NAME=V1,V2,...`` (``\\,`` a comma inside a value; ``\\n``, ``\\t``, ``\\\\``
    escapes) -> ``(NAME, [V1, V2, ...])``; ``NAME`` alone -> ``(NAME, None)``: every
    value the axis declares.

    :raises OptionError: for an empty name.
    """
    name, sep, values = text.partition("=")
    name = name.strip()
    if not name:
        raise OptionError(f"--axis {text!r}: no axis name", key="axis", hint="write NAME=VALUE,VALUE or NAME")
    if not sep:
        return name, None
    parts, current, escaped = [], [], False
    for char in values:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            parts.append(_unescape("".join(current)))
            current = []
        else:
            current.append(char)
    if escaped:
        current.append("\\")
    parts.append(_unescape("".join(current)))
    return name, parts


@dataclass
class Grid:
    """A task's format grid: its cells, and their prompts (:meth:`render`)."""

    task: Task
    style: str
    axes: tuple[Axis, ...]
    """Every axis the grid varies, in the style's order (then ``shots``, ``meta``)."""
    declared: StyleAxes | None
    cells: list[Cell]
    combinations: int
    """How many combinations the requested values make."""
    _allowed: int | None = None
    base_options: Mapping[str, Any] = field(default_factory=dict)
    _lists: Any = field(default=None, repr=False)

    @property
    def allowed(self) -> int | None:
        """How many combinations the style's constraints allow (the cells before
        ``sample``): counted when first asked for a sampled grid; ``None`` for a grid
        of more than :data:`MAX_CELLS` combinations."""
        if self._allowed is None and self._lists is not None and self.combinations <= MAX_CELLS:
            lists, settings_of, allowed = self._lists
            self._allowed = sum(1 for v in itertools.product(*lists) if allowed(settings_of(v)))
        return self._allowed

    def variants(self, *, limit: int | None = None) -> Iterator[tuple[Cell, Task]]:
        """Each cell with its task (built when reached; the evaluated split is read
        once, on the first cell)."""
        records: list[Any] | None = None
        for cell in self.cells:
            if records is None:
                records = self._records(limit)
            yield cell, self.variant(cell, records)

    def variant(self, cell: Cell, records: list[Any] | None = None) -> Task:
        """The task of one cell.

        :raises PromptStyleError: naming the cell, for a cell the task cannot render.
        """
        settings = cell.settings
        try:
            return self.task.variant(
                template={"template_type": self.style, **cell.options},
                shots=settings.get("shots"),
                meta=settings.get("meta"),
                choice_order=settings.get("choice_order"),
                records=records,
            )
        except PromptStyleError as exc:
            exc.message = f"grid cell {cell.id} {canonical_json(dict(settings))}: {exc.message}"
            raise

    def _records(self, limit: int | None) -> list[Any]:
        records = self.task.records()
        if limit is not None:
            records = itertools.islice(records, limit)
        from .errors import DataError

        try:
            return list(records)
        except DataError as exc:
            raise exc.locate(key=f"data.{self.task.config.test_split}") from None

    def render(self, *, limit: int | None = None) -> Iterator[tuple[Cell, RenderedPrompt]]:
        """``(cell, prompt)`` for every cell, then every record (cell by cell)."""
        for cell, task in self.variants(limit=limit):
            try:
                for prompt in task.render():
                    yield cell, prompt
            except PromptStyleError as exc:
                exc.message = f"grid cell {cell.id}: {exc.message}"
                raise


def _task_axes(task: Task, manager: Any, meta: str) -> list[Axis]:
    shots = task.config.num_fewshot or 0

    def parse_shots(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise OptionError(f"axis 'shots': {text!r} is not a number of examples", key="axis.shots")
        return value

    metas = ["plain", "messages", *(["chatml"] if "chatml" in manager.catalog("apply_meta_template") else [])]
    return [
        Axis("shots", SHOT_COUNTS, shots, "the number of few-shot examples", parse_shots),
        Axis("meta", tuple(metas), meta, "the meta template", str),
    ]


def _axes_of(task: Task, meta: str = "plain") -> tuple[str, dict[str, Any], StyleAxes | None, list[Axis]]:
    """The style's name, its task options, its declared axes and every axis a grid offers."""
    manager = task._prepared.manager if task._prepared is not None else None
    if manager is None:
        raise OptionError("a grid needs a task made by load_task")
    style_name = task.plugins["format_prompt"]["name"]
    _, task_options = task.config.style_spec()
    base = dict(task_options)
    declared: StyleAxes | None = None
    if style_name in manager.catalog("declare_axes"):
        from .errors import PluginError

        provider = manager.resolve("declare_axes", style_name)
        try:
            declared = provider.factory(options=dict(base))
        except PromptStyleError:
            raise
        except Exception as exc:
            raise PluginError(f"{provider.label()} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(declared, StyleAxes):
            raise PluginError(f"{provider.label()} returned {type(declared).__name__}, not a StyleAxes")
    offered = list(declared.axes if declared is not None else ()) + _task_axes(task, manager, meta)
    return style_name, base, declared, offered


def grid_cell(task: Task, settings: Mapping[str, Any], *, meta: str = "plain") -> Cell:
    """The cell of ``task``'s grid with these settings (as a grid line records them),
    for scoring its predictions.

    :raises OptionError: an axis the style does not have, a value it does not take,
        settings a constraint rules out.
    """
    style_name, base, declared, offered = _axes_of(task, meta)
    by_name = {axis.name: axis for axis in offered}
    checked: dict[str, Any] = {}
    for axis in offered:  # the style's order
        if axis.name not in settings:
            continue
        value = settings[axis.name]
        if value not in axis.values and value != axis.default:
            value = axis.value(value_text(value))
        checked[axis.name] = value
    unknown = [name for name in settings if name not in by_name]
    if unknown:
        raise OptionError(f"style {style_name!r} has no axis {unknown[0]!r}", key="settings")
    if declared is not None:
        broken = declared.violated({**{a.name: a.default for a in offered}, **checked})
        if broken is not None:
            raise OptionError(f"the settings break a constraint of the style: {broken.reason}", key="settings")
    return _cell(style_name, checked, {axis.name: axis.default for axis in offered}, declared, base)


def make_grid(
    task: Task,
    axes: Sequence[tuple[str, Sequence[str] | None]] | Mapping[str, Sequence[str] | None] | None = None,
    *,
    sample: int | None = None,
    seed: int = 0,
    meta: str = "plain",
) -> Grid:
    """The format grid of ``task``.

    :param task: a task from :func:`~prompt_style.load_task` (its style, options,
        meta template and number of examples are the grid's defaults).
    :param axes: ``{axis: values}`` (or pairs): the values as written on the command
        line (``"A"``, ``". "``, ``"5"``), ``None`` for every value the axis declares.
        ``None`` or empty: every axis the style declares, with all its values.
    :param sample: render only this many cells: combinations drawn without
        replacement with ``random.Random(seed)`` (numbered in the style's order of
        axes and values, so the draw does not depend on the order they are given in),
        keeping those the constraints allow; a uniform sample of the allowed cells.
    :param seed: the seed of the draw.
    :param meta: the task's meta template name (the ``meta`` axis's default).
    :raises PromptStyleError: an unknown axis or value (naming the axis and its
        values), a style that declares no axes, a grid with no allowed cell.
    """
    style_name, base, declared, offered = _axes_of(task, meta)
    by_name = {axis.name: axis for axis in offered}

    requested: list[tuple[str, Sequence[str] | None]]
    if axes is None or len(axes) == 0:
        if declared is None:
            raise OptionError(
                f"style {style_name!r} declares no format axes (no plugin implements declare_axes for it)",
                key="axis",
                hint="vary the task-level axes only: --axis shots=0,5 --axis meta=plain,chatml",
            )
        requested = [(axis.name, None) for axis in declared.axes]
    else:
        requested = list(axes.items()) if isinstance(axes, Mapping) else list(axes)
    chosen: dict[str, list[Any]] = {}
    for name, texts in requested:
        axis = by_name.get(name)
        if axis is None:
            from ._suggest import suggest

            raise OptionError(
                f"style {style_name!r} has no axis {name!r}",
                key="axis",
                hint=suggest(name, by_name, listing="its axes are", shown=list(by_name)),
            )
        values = list(axis.values) if texts is None else [axis.value(text) for text in texts]
        if not values:
            raise OptionError(f"axis {name!r}: no values", key=f"axis.{name}")
        chosen.setdefault(name, [])
        for value in values:
            if value not in chosen[name]:
                chosen[name].append(value)
    # the style's order of axes and of values, whatever order they were given in
    grid_axes = tuple(axis for axis in offered if axis.name in chosen)
    for axis in grid_axes:
        declared_order = list(axis.values)
        chosen[axis.name].sort(
            key=lambda v, order=declared_order: (0, order.index(v), "") if v in order else (1, 0, value_text(v))
        )
    defaults = {axis.name: axis.default for axis in offered}
    total = 1
    for axis in grid_axes:
        total *= len(chosen[axis.name])

    def settings_of(values: Sequence[Any]) -> dict[str, Any]:
        return {axis.name: value for axis, value in zip(grid_axes, values)}

    def allowed(settings: Mapping[str, Any]) -> bool:
        return declared is None or declared.violated({**defaults, **settings}) is None

    names = [axis.name for axis in grid_axes]
    lists = [chosen[n] for n in names]

    def combination(number: int) -> dict[str, Any]:
        """Combination ``number`` of the grid, in the style's order (the last axis fastest)."""
        values = []
        for options in reversed(lists):
            number, at = divmod(number, len(options))
            values.append(options[at])
        return settings_of(list(reversed(values)))

    if sample is None or sample >= total:
        if total > MAX_CELLS:
            raise OptionError(
                f"the grid has {total:,} combinations, more than {MAX_CELLS:,}",
                key="axis",
                hint="render a sample of them with --sample N, or vary fewer axes",
            )
        picked = [s for s in (settings_of(v) for v in itertools.product(*lists)) if allowed(s)]
        count: int | None = len(picked)
    else:
        # Combinations drawn without replacement with random.Random(seed), in the style's
        # order of axes and values (whatever order the user gave them in), keeping those
        # the constraints allow: a uniform sample of the allowed cells, without listing them.
        rng = random.Random(seed)
        tried: set[int] = set()
        numbers = []
        while len(numbers) < sample and len(tried) < total:
            number = rng.randrange(total)
            if number in tried:
                continue
            tried.add(number)
            if allowed(combination(number)):
                numbers.append(number)
        picked = [combination(number) for number in sorted(numbers)]
        count = None
    made = [_cell(style_name, s, defaults, declared, base) for s in picked]
    if not made:
        reason = ""
        if declared is not None and declared.constraints:
            reason = " (the style's constraints: " + "; ".join(c.reason for c in declared.constraints) + ")"
        raise OptionError(f"no cell of the grid is allowed{reason}", key="axis")
    grid = Grid(task, style_name, grid_axes, declared, made, total, count, base)
    grid._lists = (lists, settings_of, allowed)
    return grid


def _cell(
    style: str,
    settings: Mapping[str, Any],
    defaults: Mapping[str, Any],
    declared: StyleAxes | None,
    base: Mapping[str, Any],
) -> Cell:
    options = dict(base)
    if declared is not None:
        options.update(declared.style_options(settings))
    return Cell(cell_id(style, settings, defaults), dict(settings), style, options)
