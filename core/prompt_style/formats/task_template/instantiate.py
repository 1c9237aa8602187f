"""A task-template file into a prompted dataset: ``{train,validation,test}.jsonl``.

Each output line is one record rendered with one template, in SciRIFF's shape::

    {"input": ..., "output": ..., "metadata": {<task metadata>, "split": "train",
     "template_metadata": {"use_for_eval": false}},
     "_instance_id": "TASK:SPLIT:ID", "_template_id": 0}

``split`` and ``SPLIT`` name the split the record came from (the dataset's own
name for it), ``ID`` is the record's ``_id`` (its position in that split unless
the data or a formatter gives one). Train and validation records are rendered
with every template (or the chosen ones, or one random template per record);
test records with the ``evaluate: true`` template.

Two passes over each split keep memory constant: the first counts the records
(through the formatter, spooled to a temporary file, when there is one), the
second renders them into temporary files, which replace the outputs only when
every split is done (a crash leaves no half-written file).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any

from ...data import iter_records
from ...errors import DataError, PromptStyleError, TaskFileError
from ...safe.json_lines import dumps_line
from .reader import DEFAULT_SEED, problems_error, template_problems
from .schema import TaskTemplateFile
from .sources import SplitSource, split_sources, with_ids
from .splits import Carve, plan_splits
from .template import TaskTemplate

__all__ = ["Instantiation", "instantiate", "OUTPUT_SPLITS", "DEFAULT_SEED"]

OUTPUT_SPLITS = ("train", "validation", "test")

Progress = Callable[[str, int, int], None]
"""``progress(split, records done, records in the split)``."""


@dataclass
class Instantiation:
    """What an instantiation wrote."""

    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    """Output split -> records rendered into it."""
    instances: dict[str, int] = field(default_factory=dict)
    """Output split -> lines written (records x templates)."""
    dropped_blank: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class _Split:
    """A source split ready to stream: where its instances come from and how many."""

    source: SplitSource
    count: int = 0
    spool: Path | None = None

    def instances(self, plugins: Any) -> Iterator[Mapping[str, Any]]:
        if self.spool is not None:
            yield from iter_records(self.spool, self.source.split)
        else:
            yield from with_ids(self.source.records(plugins))


@dataclass(frozen=True)
class _Rendering:
    """How every split's records are rendered: the templates and the choices of
    :func:`instantiate`'s caller."""

    plugins: Any
    train_templates: Sequence[TaskTemplate]
    """For train and validation records (one drawn per record with ``random_template``)."""
    test_template: TaskTemplate | None
    random_template: bool
    seed: int | str
    n_instances: int | None
    drop_blank: bool
    progress: Progress | None
    jobs: int = 1


def _given_source(split: str, given: Any) -> SplitSource:
    """A split given directly (``--data SPLIT=PATH``): used as it is, no formatter."""
    if isinstance(given, (str, Path)):
        return SplitSource(split, split, path=Path(given))
    return _RecordsSource(split, split, records_given=list(given))


@dataclass
class _RecordsSource(SplitSource):
    records_given: list[Mapping[str, Any]] = field(default_factory=list)

    def raw(self) -> Iterator[Mapping[str, Any]]:
        yield from iter_records(self.records_given, self.split)


def _resolve_templates(spec: TaskTemplateFile, selectors: Sequence[Any] | None) -> list[TaskTemplate]:
    if not selectors:
        return list(spec.templates)
    chosen: list[TaskTemplate] = []
    for selector in selectors:
        template = spec.template(selector)
        if template not in chosen:
            chosen.append(template)
    return chosen


def _eval_template(spec: TaskTemplateFile, selector: Any) -> TaskTemplate:
    if selector is not None:
        return spec.template(selector)
    marked = spec.eval_templates()
    if not marked:
        raise TaskFileError(
            "no template has evaluate: true, so the test split has no template",
            file=spec.file,
            line=spec.lines.get("templates"),
            key="templates",
            hint="mark one template evaluate: true, or choose one with --eval-template N",
        )
    return marked[0]


def _prepare(templates: Sequence[TaskTemplate], spec: TaskTemplateFile, seed: int | str) -> None:
    for template in templates:
        blocking = template_problems(spec, template)
        if blocking:
            raise problems_error(spec, blocking)
        template.seed = seed
        template.compile()


def _id_hash(value: Any) -> int:
    digest = blake2b(repr(value).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _count(split: _Split, plugins: Any, workdir: Path) -> None:
    """Count the split's instances; spool them when a formatter makes them; check
    that ids given by the data or the formatter are unique (8 bytes per record)."""
    hashes = array("q")
    position = 0
    handle = None
    if split.source.formatter is not None:
        split.spool = workdir / f"spool-{split.source.split}.jsonl"
        handle = split.spool.open("w", encoding="utf-8")
    try:
        source = split.source.records(plugins) if handle is not None else split.source.raw()
        for position, record in enumerate(source, 1):
            if "_id" in record:
                hashes.append(_id_hash(record["_id"]))
            if handle is not None:
                out = dict(record)
                out.setdefault("_id", position - 1)
                handle.write(dumps_line(out, default=str) + "\n")
    finally:
        if handle is not None:
            handle.close()
    split.count = position
    if len(hashes) > 1:
        ordered = sorted(hashes)
        if any(a == b for a, b in zip(ordered, ordered[1:])):
            duplicate = _find_duplicate(split, plugins)
            raise DataError(
                f"split {split.source.split!r}: the _id {duplicate!r} is given to more than one record",
                hint="each instance needs its own _id (a formatter that splits a record can use "
                "'<id>.0', '<id>.1', ...)",
            )


def _find_duplicate(split: _Split, plugins: Any) -> Any:
    seen: set[Any] = set()
    for record in split.instances(plugins):
        key = repr(record.get("_id"))
        if key in seen:
            return record.get("_id")
        seen.add(key)
    return None


def _limit(split: _Split, n: int, seed: int | str, task: str) -> Iterator[bool]:
    """Keep ``n`` of the split's records, chosen uniformly (selection sampling)."""
    rng = random.Random(f"{seed}:{task}:{split.source.split}:limit")
    need, left = min(n, split.count), split.count
    while True:
        keep = need > 0 and rng.randrange(left) < need
        need -= keep
        left -= 1
        yield keep


def instantiate(
    spec: TaskTemplateFile,
    out_dir: str | Path,
    *,
    data: Mapping[str, Any] | None = None,
    data_root: str | Path | None = None,
    plugins: Any = None,
    templates: Sequence[Any] | None = None,
    random_template: bool = False,
    eval_template: Any = None,
    seed: int | str | None = None,
    n_instances: int | None = None,
    drop_blank: bool = False,
    progress: Progress | None = None,
    jobs: int = 1,
) -> Instantiation:
    """Render a task's data into ``out_dir/{train,validation,test}.jsonl``.

    :param spec: the task (:func:`~prompt_style.formats.task_template.reader.read_spec`).
    :param data: ``{split: path or records}`` used instead of the task's own data for those
        splits, as they are (no formatter).
    :param data_root: where ``data_dir`` lives (see ``sources.find_data_dir``).
    :param plugins: the plugin manager (formatters).
    :param templates: templates for train and validation (numbers, names or promptsource
        ids); default all.
    :param random_template: one template per record, drawn from ``templates`` with
        ``random.Random(f"{seed}:{task}:{split}:{_id}")``.
    :param eval_template: the test template instead of the ``evaluate: true`` one.
    :param seed: seeds split carving, ``n_instances`` and ``random_template`` (default 1234).
    :param n_instances: at most this many records per source split, chosen at random.
    :param drop_blank: drop (and count) renders with an empty input or output instead of
        failing, as SciRIFF does.
    :param progress: called as records are rendered.
    :param jobs: worker processes applying the templates (the output is the same).
    :raises PromptStyleError: naming the file, key, split and record; no output file is
        replaced then.
    """
    started = time.perf_counter()
    seed = DEFAULT_SEED if seed is None else seed
    out_dir = Path(out_dir)
    result = Instantiation(out_dir)
    train_templates = _resolve_templates(spec, templates)
    test_template: TaskTemplate | None = None
    given = dict(data or {})
    own = split_sources(spec, data_root=data_root, probe_hub=len(given) < 3)
    sources: dict[str, SplitSource] = {s: v for s, v in own.splits.items() if s not in given}
    for split, value in given.items():
        sources[split] = _given_source(split, value)
    if not sources:
        raise DataError(
            own.missing or f"task {spec.name!r} has no data",
            file=spec.file,
            key="data_dir" if spec.data_dir else "dataset",
            hint=(own.hint + "; or " if own.hint else "") + "give the splits with --data SPLIT=PATH",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".instantiate-", dir=out_dir) as work:
        workdir = Path(work)
        splits = {name: _Split(source) for name, source in sources.items()}
        for split in splits.values():
            try:
                _count(split, plugins, workdir)
            except PromptStyleError as exc:
                raise exc.locate(split=split.source.split) from None
        counts = {name: split.count for name, split in splits.items()}
        if n_instances is not None:
            counts = {name: min(count, n_instances) for name, count in counts.items()}
        plan = plan_splits(counts, task=spec.name, seed=seed, standardize=spec.standardize_splits)
        result.notes.extend(plan.notes)
        if "test" in plan.sizes():
            test_template = _eval_template(spec, eval_template)
        _prepare([*train_templates, *([test_template] if test_template else [])], spec, seed)
        rendering = _Rendering(
            plugins, train_templates, test_template, random_template, seed, n_instances, drop_blank, progress, jobs
        )
        targets = list(dict.fromkeys(target for carve in plan.carves.values() for target in carve.counts))
        temporary = {target: workdir / f"{target}.jsonl" for target in targets}
        handles = {target: path.open("w", encoding="utf-8") for target, path in temporary.items()}
        try:
            for name, carve in plan.carves.items():
                _render_split(spec, splits[name], carve, handles, result, rendering)
        finally:
            for handle in handles.values():
                handle.close()
        for target in OUTPUT_SPLITS:
            stale = out_dir / f"{target}.jsonl"
            if target not in temporary and stale.exists():
                stale.unlink()
                result.notes.append(f"removed {stale.name} from an earlier run (this task has no {target} split)")
        for target, path in temporary.items():
            final = out_dir / f"{target}.jsonl"
            os.replace(path, final)
            result.files[target] = final
    result.seconds = time.perf_counter() - started
    return result


def _render_split(
    spec: TaskTemplateFile,
    split: _Split,
    carve: Carve,
    handles: Mapping[str, Any],
    result: Instantiation,
    rendering: _Rendering,
) -> None:
    """Render one source split into the output files. The reading process decides
    each record's output split and templates (the carving, ``n_instances`` and
    ``random_template`` draws); the templates are applied chunk by chunk, in this
    process or, with ``jobs``, in worker processes, the lines coming back in order."""
    source = split.source
    assign = carve.assigner()
    seed, n_instances, train_templates = rendering.seed, rendering.n_instances, rendering.train_templates
    progress = rendering.progress
    keep = _limit(split, n_instances, seed, spec.name) if n_instances is not None else None
    templates = [*train_templates, *([rendering.test_template] if rendering.test_template else [])]
    position_of = {id(t): i for i, t in enumerate(templates)}
    test_ids = (position_of[id(rendering.test_template)],) if rendering.test_template else ()
    all_train = tuple(range(len(train_templates)))
    metadata_base = dict(spec.metadata)
    metadata_base["split"] = source.name
    state = _ApplyState(templates, spec.file, metadata_base, rendering.drop_blank, source.split)

    def chunks() -> Iterator[list[tuple[int, Mapping[str, Any], str, tuple[int, ...], str]]]:
        chunk = []
        for position, record in enumerate(split.instances(rendering.plugins)):
            if keep is not None and not next(keep):
                continue
            target = assign.next()
            record_id = record.get("_id", position)
            if target == "test":
                chosen = test_ids
            elif rendering.random_template:
                rng = random.Random(f"{seed}:{spec.name}:{source.name}:{record_id}")
                chosen = (rng.randrange(len(train_templates)),)
            else:
                chosen = all_train
            chunk.append((position, record, target, chosen, f"{spec.name}:{source.name}:{record_id}"))
            if len(chunk) == _CHUNK:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    if rendering.jobs > 1:
        from ..._pool import ordered_map

        applied = ordered_map(_apply_chunk, state, chunks(), jobs=rendering.jobs)
    else:
        applied = (_apply_chunk(state, chunk) for chunk in chunks())
    done = 0
    total = split.count
    for outputs in applied:
        for target, lines, dropped in outputs:
            handles[target].write("".join(lines))
            result.instances[target] = result.instances.get(target, 0) + len(lines)
            result.records[target] = result.records.get(target, 0) + 1
            result.dropped_blank += dropped
            done += 1
            if progress is not None:
                progress(source.split, done, total)
    if assign.remaining:
        raise DataError(
            f"split {source.split!r} gave {assign.remaining} fewer records than when it was counted",
            hint="was the data changed while instantiating? Is the formatter deterministic?",
        )
    for target in carve.counts:
        result.records.setdefault(target, 0)
        result.instances.setdefault(target, 0)


_CHUNK = 1000
"""Records per chunk of template applications (what one worker does at a time)."""


@dataclass
class _ApplyState:
    """What applying templates to a split's records needs (sent once to each worker)."""

    templates: Sequence[TaskTemplate]
    file: Any
    metadata_base: Mapping[str, Any]
    drop_blank: bool
    split: str
    metadata: dict[Any, dict[str, Any]] = field(default_factory=dict)


def _apply_chunk(
    state: _ApplyState, chunk: Sequence[tuple[int, Mapping[str, Any], str, tuple[int, ...], str]]
) -> list[tuple[str, list[str], int]]:
    """Each record of a chunk with its templates: ``(output split, its JSON lines, blank
    renders dropped)`` per record, in order."""
    out = []
    for position, record, target, chosen, instance_id in chunk:
        lines = []
        dropped = 0
        for number in chosen:
            template = state.templates[number]
            try:
                applied = template.apply(record)
            except PromptStyleError as exc:
                raise exc.locate(split=state.split, index=position, file=state.file) from None
            if not applied.input or not applied.output:
                if state.drop_blank:
                    dropped += 1
                    continue
                part = "input" if not applied.input else "output"
                raise DataError(
                    f"{template.label} rendered a blank {part}",
                    file=state.file,
                    line=template.lines.get("jinja"),
                    key=f"{template.key}.jinja",
                    split=state.split,
                    index=position,
                    hint="fix the record or the template, or pass --drop-blank to leave such renders out",
                )
            metadata = state.metadata.get(template.id)
            if metadata is None:
                metadata = state.metadata[template.id] = {
                    **state.metadata_base,
                    "template_metadata": {"use_for_eval": template.evaluate},
                }
            line = {
                "input": applied.input,
                "output": applied.output,
                "metadata": metadata,
                "_instance_id": instance_id,
                "_template_id": template.id,
            }
            lines.append(dumps_line(line) + "\n")
        out.append((target, lines, dropped))
    return out
