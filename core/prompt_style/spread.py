"""How much a score depends on the format: per-cell accuracy of a grid's results and
its spread (``prompt-style spread``).

The input is a results file in a plain, documented format that any harness's
logs convert to (docs/format-sensitivity.md#results-files): JSON Lines, one line
per record scored in one cell::

    {"cell": "596a4001630f", "record": 17, "correct": true}
    {"cell": "596a4001630f", "record": 18, "score": 0.0, "settings": {"labels": "1"}}

``record`` may be ``index`` (the grid line's key); ``score`` (0 to 1) may stand for
``correct``; ``settings`` (the cell's axis values) and ``task`` are optional;
``rotation`` marks the rotations of circular evaluation, and a record then counts
as correct only if every rotation is.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import DataError

__all__ = ["CellResult", "Spread", "read_results", "spread_of", "plot_spread", "PLOT_INSTALL"]

PLOT_INSTALL = "pip install 'prompt-style[plot]'"


@dataclass
class CellResult:
    """One cell's results."""

    cell: str
    settings: Mapping[str, Any]
    records: int
    accuracy: float
    """The mean score of the cell's records (0 to 1)."""

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.cell, "settings": dict(self.settings), "records": self.records, "accuracy": self.accuracy}


@dataclass
class Spread:
    """The spread of a grid's accuracy across its cells."""

    cells: list[CellResult]
    """Best first."""
    minimum: float
    median: float
    maximum: float
    mean: float
    std: float
    """Sample standard deviation across cells (``n - 1``; 0 for one cell)."""
    by_axis: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """For each axis in the settings: per value, the cells with it and their mean,
    minimum and maximum accuracy (which axis moves the score)."""
    uneven: bool = False
    """Whether the cells were scored on different sets of records."""

    @property
    def spread(self) -> float:
        """Maximum minus minimum accuracy."""
        return self.maximum - self.minimum

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [c.to_json() for c in self.cells],
            "overall": {
                "cells": len(self.cells),
                "min": self.minimum,
                "median": self.median,
                "max": self.maximum,
                "spread": self.spread,
                "mean": self.mean,
                "std": self.std,
                "same_records": not self.uneven,
            },
            "by_axis": self.by_axis,
        }


def _score(line: Mapping[str, Any], where: dict[str, Any]) -> float:
    if "correct" in line:
        value = line["correct"]
        if not isinstance(value, bool):
            raise DataError(f"'correct' must be true or false, not {value!r}", key="correct", **where)
        return 1.0 if value else 0.0
    if "score" in line:
        value = line["score"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1 or math.isnan(value):
            raise DataError(f"'score' must be a number from 0 to 1, not {value!r}", key="score", **where)
        return float(value)
    raise DataError(
        "the line has neither 'correct' nor 'score'",
        key="correct",
        hint='each line needs {"cell": ..., "record": ..., "correct": true|false} (or "score": 0..1)',
        **where,
    )


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The lines of a results file, checked: every problem is a :class:`DataError`
    naming the file, the line and the key.

    :returns: ``[{"cell", "record", "task", "rotation", "score", "settings"}]``.
    """
    from .safe.json_lines import json_objects

    name = str(path)
    out = []
    for number, line in json_objects(name, "results"):
        where: dict[str, Any] = {"file": name, "line": number}
        cell = line.get("cell")
        if not isinstance(cell, str) or not cell:
            raise DataError(
                "the line has no 'cell' (the cell id of prompt-style grid)",
                key="cell",
                hint="keep the 'cell' of the grid line the prompt came from",
                **where,
            )
        record = line.get("record", line.get("index"))
        if record is None or isinstance(record, (bool, float, list, dict)):
            raise DataError(
                "the line has no 'record' (or 'index'): a string or integer id of the record",
                key="record",
                **where,
            )
        settings = line.get("settings", {})
        if not isinstance(settings, dict):
            raise DataError(f"'settings' must be an object, not {settings!r}", key="settings", **where)
        rotation = line.get("rotation")
        if rotation is not None and (isinstance(rotation, bool) or not isinstance(rotation, int)):
            raise DataError(f"'rotation' must be an integer, not {rotation!r}", key="rotation", **where)
        out.append(
            {
                "cell": cell,
                "record": record,
                "task": line.get("task"),
                "rotation": rotation,
                "score": _score(line, where),
                "settings": settings,
                "line": number,
                "file": name,
            }
        )
    if not out:
        raise DataError("the results file has no lines", file=name)
    return out


def spread_of(lines: Iterable[Mapping[str, Any]]) -> Spread:
    """Per-cell accuracy and the spread across cells of checked result lines
    (:func:`read_results`).

    :raises DataError: a record scored twice in a cell, one cell with two
        different settings.
    """
    scores: dict[str, dict[Any, dict[Any, float]]] = {}
    settings: dict[str, dict[str, Any]] = {}
    for line in lines:
        cell = line["cell"]
        key = (line.get("task"), line["record"])
        rotations = scores.setdefault(cell, {}).setdefault(key, {})
        rotation = line.get("rotation")
        if rotation in rotations:
            what = f"record {line['record']!r}" + (f" rotation {rotation}" if rotation is not None else "")
            raise DataError(
                f"{what} of cell {cell} is scored twice",
                file=line.get("file"),
                line=line.get("line"),
                key="record",
                hint="each (cell, record) once; circular evaluation marks its lines with 'rotation'",
            )
        rotations[rotation] = line["score"]
        given = line.get("settings") or {}
        if given:
            known = settings.setdefault(cell, dict(given))
            if known != given:
                raise DataError(
                    f"cell {cell} has two different settings: {known} and {given}",
                    file=line.get("file"),
                    line=line.get("line"),
                    key="settings",
                )
    cells = []
    record_sets = set()
    for cell, records in scores.items():
        # circular evaluation: a record is correct only if every rotation is
        values = [min(rotations.values()) for rotations in records.values()]
        cells.append(CellResult(cell, settings.get(cell, {}), len(values), sum(values) / len(values)))
        record_sets.add(frozenset(records))
    cells.sort(key=lambda c: (-c.accuracy, c.cell))
    accuracies = [c.accuracy for c in cells]
    return Spread(
        cells,
        min(accuracies),
        statistics.median(accuracies),
        max(accuracies),
        statistics.fmean(accuracies),
        statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0,
        _by_axis(cells),
        len(record_sets) > 1,
    )


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _by_axis(cells: Sequence[CellResult]) -> dict[str, list[dict[str, Any]]]:
    axes: dict[str, dict[str, list[float]]] = {}
    for cell in cells:
        for axis, value in cell.settings.items():
            text = _value_text(value)
            axes.setdefault(axis, {}).setdefault(text, []).append(cell.accuracy)
    out = {}
    for axis, values in axes.items():
        if len(values) < 2:
            continue  # an axis the grid did not vary
        out[axis] = [
            {"value": value, "cells": len(accs), "mean": statistics.fmean(accs), "min": min(accs), "max": max(accs)}
            for value, accs in sorted(values.items(), key=lambda item: -statistics.fmean(item[1]))
        ]
    return out


def _settings_text(settings: Mapping[str, Any]) -> str:
    import json

    return " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in settings.items())


def format_table(result: Spread, *, top: int | None = None) -> str:
    """The terminal report: the cells, best first, then the overall figures and the axes."""
    lines = [f"{'rank':>4}  {'cell':<12}  {'accuracy':>8}  {'records':>7}  settings"]
    shown = result.cells if top is None else result.cells[:top]
    for rank, cell in enumerate(shown, 1):
        accuracy = f"{100 * cell.accuracy:>7.1f}%"
        lines.append(f"{rank:>4}  {cell.cell:<12}  {accuracy}  {cell.records:>7}  {_settings_text(cell.settings)}")
    if top is not None and len(result.cells) > top:
        lines.append(f"      ... {len(result.cells) - top} more cells")
    lines.append("")
    lines.append(
        f"{len(result.cells)} cells: accuracy min {100 * result.minimum:.1f}%, median {100 * result.median:.1f}%, "
        f"max {100 * result.maximum:.1f}%; spread {100 * result.spread:.1f} points; "
        f"mean {100 * result.mean:.1f}%, standard deviation {100 * result.std:.1f} points"
    )
    if result.uneven:
        lines.append("note: the cells were scored on different records; their accuracies are not comparable as such")
    for axis, values in result.by_axis.items():
        lines.append("")
        lines.append(f"by {axis}:")
        for item in values:
            lines.append(
                f"  {item['value']!r:<20} {100 * item['mean']:>6.1f}% mean of {item['cells']} cells "
                f"({100 * item['min']:.1f}-{100 * item['max']:.1f}%)"
            )
    return "\n".join(lines) + "\n"


def plot_spread(result: Spread, path: str | Path, *, title: str | None = None) -> None:
    """A PNG of the spread: every cell's accuracy, best first, with the median, and
    per axis the cells of each value.

    :raises DataError: naming the install command, when matplotlib is missing.
    """
    import json

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise DataError(
            "drawing the plot needs matplotlib, which is not installed",
            key="plot",
            hint=f"install it with {PLOT_INSTALL} (or pip install matplotlib)",
        ) from None
    axes_shown = list(result.by_axis)
    per_row = max(1, min(5, len(axes_shown)))
    rows = -(-len(axes_shown) // per_row)  # ceiling
    figure = plt.figure(figsize=(max(7.0, 2.4 * per_row), 3.4 + 2.7 * rows))
    grid = figure.add_gridspec(1 + rows, per_row, height_ratios=[1.3] + [1] * rows)
    accuracies = [100 * c.accuracy for c in result.cells]
    first = figure.add_subplot(grid[0, :])
    first.bar(range(1, len(accuracies) + 1), accuracies, color="#4C72B0", width=0.8)
    first.axhline(100 * result.median, color="#333333", linewidth=1, linestyle="--", label="median")
    first.set_xlabel("cell (best first)", fontsize=8)
    first.set_ylabel("accuracy (%)", fontsize=8)
    first.set_title(
        f"{len(accuracies)} cells: min {min(accuracies):.1f}%, median {100 * result.median:.1f}%, "
        f"max {max(accuracies):.1f}%; spread {100 * result.spread:.1f} points, std {100 * result.std:.1f}",
        fontsize=9,
    )
    first.legend(fontsize=7, loc="upper right")
    first.set_ylim(max(0.0, min(accuracies) - 5), min(100.0, max(accuracies) + 5))
    for number, axis in enumerate(axes_shown):
        panel = figure.add_subplot(grid[1 + number // per_row, number % per_row])
        values = result.by_axis[axis]
        names = [item["value"] for item in values]
        for position, name in enumerate(names):
            points = [100 * c.accuracy for c in result.cells if _value_text(c.settings.get(axis)) == name]
            panel.scatter([position] * len(points), points, s=10, alpha=0.7, color="#DD8452")
            panel.hlines(statistics.fmean(points), position - 0.3, position + 0.3, color="#333333", linewidth=1.5)
        panel.set_xticks(range(len(names)))
        panel.set_xticklabels([json.dumps(n, ensure_ascii=False) for n in names], rotation=30, ha="right", fontsize=7)
        panel.tick_params(axis="y", labelsize=7)
        panel.set_title(f"by {axis}", fontsize=8)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
