"""Scoring generated answers to multiple-choice prompts (``prompt-style score``).

Each prediction names a record of the task's evaluated split (``index``) and the
model's ``completion``; the record is extracted again, its choices put in the
order the prompt showed them (the task's choice order, the ``rotation`` of
circular evaluation, a grid cell's settings), and the answer parser of the
style that built the prompt (the ``parse_answer`` hook) reads which choice the
completion names. A prediction is correct when it names exactly the gold
choice(s); one that names none is *unparsable* (and wrong).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import DataError, PluginError, PromptStyleError

if TYPE_CHECKING:
    from .loading import Task

__all__ = ["Score", "Prediction", "read_predictions", "score_predictions", "answer_parser_of"]


@dataclass(frozen=True)
class Prediction:
    """One line of a predictions file."""

    index: int
    completion: str
    rotation: int | None = None
    cell: str | None = None
    settings: Mapping[str, Any] | None = None
    line: int | None = None


@dataclass
class Score:
    """The accuracy of a set of predictions (overall, or of one grid cell)."""

    predictions: int = 0
    correct: int = 0
    unparsable: int = 0
    rules: Counter = field(default_factory=Counter)
    """How many answers each parser rule read (``answer line``, ``label``, ...)."""
    circular_records: int = 0
    circular_correct: int = 0
    """Circular evaluation: records, and records whose every rotation is right."""
    cells: dict[str, Score] = field(default_factory=dict)
    """Per grid cell, when the predictions name cells."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """One line per prediction in the results format of ``prompt-style spread``."""

    @property
    def accuracy(self) -> float:
        return self.correct / self.predictions if self.predictions else 0.0

    @property
    def unparsable_rate(self) -> float:
        return self.unparsable / self.predictions if self.predictions else 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "predictions": self.predictions,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "unparsable": self.unparsable,
            "unparsable_rate": self.unparsable_rate,
            "rules": dict(sorted(self.rules.items())),
        }
        if self.circular_records:
            out["circular"] = {
                "records": self.circular_records,
                "correct": self.circular_correct,
                "accuracy": self.circular_correct / self.circular_records,
            }
        if self.settings:
            out["settings"] = dict(self.settings)
        if self.cells:
            out["cells"] = {cell: score.to_json() for cell, score in self.cells.items()}
        return out


def read_predictions(path: str) -> list[Prediction]:
    """The lines of a predictions file: ``{"index": N, "completion": "..."}``, with
    ``rotation`` (circular evaluation) and ``cell``/``settings`` (a grid's) where they
    apply. Every problem is a :class:`DataError` naming the file, line and key."""
    from .safe.json_lines import json_objects

    out = []
    for number, line in json_objects(path, "predictions"):
        where: dict[str, Any] = {"file": path, "line": number}
        index = line.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise DataError(
                f"'index' must be the record's position in the evaluated split, not {index!r}",
                key="index",
                hint='each line is {"index": N, "completion": "..."}',
                **where,
            )
        completion = line.get("completion")
        if not isinstance(completion, str):
            raise DataError(
                f"'completion' must be the model's text, not {completion!r}",
                key="completion",
                hint="an empty completion is the empty string",
                **where,
            )
        rotation = line.get("rotation")
        if rotation is not None and (isinstance(rotation, bool) or not isinstance(rotation, int)):
            raise DataError(f"'rotation' must be an integer, not {rotation!r}", key="rotation", **where)
        settings = line.get("settings")
        if settings is not None and not isinstance(settings, dict):
            raise DataError(f"'settings' must be an object, not {settings!r}", key="settings", **where)
        cell = line.get("cell")
        if cell is not None and not isinstance(cell, str):
            raise DataError(f"'cell' must be a cell id, not {cell!r}", key="cell", **where)
        out.append(Prediction(index, completion, rotation, cell, settings, number))
    if not out:
        raise DataError("the predictions file has no lines", file=path)
    return out


def answer_parser_of(task: Task) -> Any:
    """The answer parser of ``task``'s style: its ``parse_answer`` plugin, or the
    built-in one for a :class:`~prompt_style.ChoiceStyle` without a parser of its own.

    :raises PluginError: for a style that has no parser and is not a ChoiceStyle.
    """
    from .styles.answers import choice_answer_parser
    from .styles.base import ChoiceStyle

    manager = task._prepared.manager
    name = task.plugins["format_prompt"]["name"]
    style = task.renderer.style
    if name in manager.catalog("parse_answer"):
        provider = manager.resolve("parse_answer", name)
        try:
            parser = provider.factory(style=style)
        except PromptStyleError:
            raise
        except Exception as exc:
            raise PluginError(f"{provider.label()} raised {type(exc).__name__}: {exc}") from exc
        if not callable(getattr(parser, "parse", None)):
            raise PluginError(f"{provider.label()} built a {type(parser).__name__}, which has no parse() method")
        return parser
    if isinstance(style, ChoiceStyle) or getattr(task.renderer, "option_keys", None) is not None:
        return choice_answer_parser(style=style)
    if task.config.format == "opencompass":
        return choice_answer_parser(style=style)
    raise PluginError(
        f"style {name!r} has no answer parser (no plugin implements parse_answer for it)",
        key="style",
        hint="score with a multiple-choice style: --style mcq::mmlu, or implement parse_answer for it",
    )


def _shown(task: Task, record: Mapping[str, Any], index: int, rotation: int | None) -> tuple[Any, ...]:
    """``(labels, choices, gold indices, permutation)`` of a record as its prompt shows it."""
    from .choice_order import record_gold, remap_gold
    from .styles.base import DEFAULT_LABELS

    renderer = task.renderer
    order = renderer.choice_order
    keys = renderer.option_keys
    if keys is None and task.config.format == "opencompass":
        from .choice_order import option_keys_for

        found = option_keys_for(
            (task.config.metadata.get("opencompass") or {}).get("type"),
            getattr(renderer.style, "input_columns", None),
            getattr(renderer.style, "output_column", None),
        )
        if found is not None:
            keys, answer_key = found
        else:
            answer_key = None
    else:
        answer_key = renderer.answer_key
    if keys is not None:
        n, gold = record_gold(record, keys, answer_key)
        choices = list(record[keys[0]]) if len(keys) == 1 else [record[k] for k in keys]
        sample = None
    else:
        sample = renderer.sample(record, index)
        if sample.choices is None:
            raise DataError("the record has no choices (doc_to_choice) to score an answer against", key="doc_to_choice")
        n, gold, choices = len(sample.choices), sample.gold, list(sample.choices)
    permutation: tuple[int, ...] = tuple(range(n))
    if order is not None:
        permutations = order.permutations(index, n, gold)
        if order.many:
            if rotation is None or not 0 <= rotation < len(permutations):
                raise DataError(
                    f"circular evaluation: the prediction needs its 'rotation' (0 to {len(permutations) - 1})",
                    key="rotation",
                )
            permutation = permutations[rotation]
        else:
            permutation = permutations[0]
    elif rotation not in (None, 0):
        raise DataError(
            f"the prediction has rotation {rotation}, but the task is not scored circularly",
            key="rotation",
            hint="score with --circular, as the prompts were rendered",
        )
    choices = [choices[p] for p in permutation]
    gold = remap_gold(gold, permutation)
    if sample is not None and hasattr(renderer.style, "labels"):
        from .types import Sample

        shown = Sample(index, record, sample.question, choices, sample.target, gold=gold)
        labels = [str(label) for label in renderer.style.labels(shown)]
    else:
        labels = list(DEFAULT_LABELS[:n]) if n <= len(DEFAULT_LABELS) else [str(i + 1) for i in range(n)]
    golds = tuple(sorted(gold)) if isinstance(gold, list) else ((gold,) if gold is not None else ())
    return labels, [str(c) for c in choices], golds, permutation


def score_predictions(task: Task, predictions: Iterable[Prediction], *, limit: int | None = None) -> Score:
    """Score generated answers against ``task``'s records.

    Predictions that name a grid ``cell`` with its ``settings`` are scored in that
    cell's format (its labels, its order of choices) and reported per cell too.

    :raises PromptStyleError: naming the predictions file's line, for a record
        index past the split, a prediction given twice, a missing rotation.
    """
    from .axes import cell_id

    predictions = list(predictions)
    records = list(task.records())
    total = Score()
    variants: dict[str, tuple[Task, Any, Mapping[str, Any]]] = {}
    seen: set[tuple[Any, ...]] = set()
    by_record: dict[tuple[Any, ...], list[bool]] = {}
    style_name = task.plugins["format_prompt"]["name"]
    own_cell = cell_id(style_name, {})
    for prediction in predictions:
        where = {"line": prediction.line}
        key = (prediction.cell, prediction.index, prediction.rotation)
        try:
            if key in seen:
                raise DataError(
                    f"record {prediction.index}"
                    + (f" rotation {prediction.rotation}" if prediction.rotation is not None else "")
                    + (f" of cell {prediction.cell}" if prediction.cell else "")
                    + " is predicted twice",
                    key="index",
                )
            seen.add(key)
            if prediction.index >= len(records):
                raise DataError(
                    f"index {prediction.index} is past the evaluated split ({len(records)} records)",
                    key="index",
                )
            cell = prediction.cell or own_cell
            if cell not in variants:
                variants[cell] = _variant(task, prediction)
            scored, parser, settings = variants[cell]
            record = records[prediction.index]
            labels, choices, golds, _ = _shown(scored, record, prediction.index, prediction.rotation)
            parsed = parser.parse(prediction.completion, labels=labels, choices=choices, multiple=len(golds) > 1)
        except PromptStyleError as exc:
            if exc.line is None and exc.file is None:
                exc.locate(**where)
            raise
        indices = tuple(parsed.indices) if parsed is not None else ()
        right = bool(golds) and tuple(sorted(indices)) == golds
        for score in (total, total.cells.setdefault(cell, Score(settings=settings))):
            score.predictions += 1
            score.correct += right
            if parsed is None:
                score.unparsable += 1
            else:
                score.rules[parsed.rule or "parsed"] += 1
        if prediction.rotation is not None:
            by_record.setdefault((cell, prediction.index), []).append(right)
        result = {"cell": cell, "record": prediction.index, "correct": right}
        if prediction.rotation is not None:
            result["rotation"] = prediction.rotation
        result["parsed"] = [labels[i] for i in indices if i < len(labels)] if parsed is not None else None
        result["rule"] = parsed.rule if parsed is not None else None
        if settings:
            result["settings"] = dict(settings)
        total.results.append(result)
    if by_record:
        for (cell, _), rights in by_record.items():
            for score in (total, total.cells[cell]):
                score.circular_records += 1
                score.circular_correct += all(rights)
    if set(total.cells) == {own_cell}:
        total.cells = {}
    return total


def _variant(task: Task, prediction: Prediction) -> tuple[Task, Any, Mapping[str, Any]]:
    """The task, answer parser and settings of the cell a prediction names."""
    if prediction.settings is None or prediction.cell is None:
        if prediction.cell is not None:
            raise DataError(
                f"the prediction names cell {prediction.cell} but not its settings",
                key="settings",
                hint="keep the 'settings' of the grid line with the 'cell'",
            )
        return task, answer_parser_of(task), {}
    from .grid import grid_cell

    cell = grid_cell(task, prediction.settings)
    if cell.id != prediction.cell:
        raise DataError(
            f"cell {prediction.cell}'s settings {json.dumps(prediction.settings)} make cell {cell.id} here",
            key="cell",
            hint="score with the task, style and options the grid was rendered with",
        )
    from .grid import Grid

    variant = Grid(task, cell.style, (), None, [cell], 1, 1).variant(cell)
    return variant, answer_parser_of(variant), cell.settings


def format_score(score: Score) -> str:
    """The terminal report."""
    lines = [
        f"accuracy {100 * score.accuracy:.1f}% ({score.correct} of {score.predictions}); "
        f"unparsable {100 * score.unparsable_rate:.1f}% ({score.unparsable})"
    ]
    if score.circular_records:
        lines.append(
            f"circular: {100 * score.circular_correct / score.circular_records:.1f}% of "
            f"{score.circular_records} records right in every rotation"
        )
    if score.rules:
        lines.append("read by: " + ", ".join(f"{rule} {count}" for rule, count in score.rules.most_common()))
    if score.cells:
        lines.append("")
        lines.append(f"{'cell':<12}  {'accuracy':>8}  {'unparsable':>10}  settings")
        for cell, part in sorted(score.cells.items(), key=lambda item: -item[1].accuracy):
            settings = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in part.settings.items())
            lines.append(f"{cell:<12}  {100 * part.accuracy:>7.1f}%  {100 * part.unparsable_rate:>9.1f}%  {settings}")
    return "\n".join(lines) + "\n"
