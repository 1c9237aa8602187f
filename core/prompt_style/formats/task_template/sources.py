"""Where a task-template file's records come from: local JSON Lines first, the Hub as an extra.

* ``data_dir: NAME`` — a directory holding ``train.jsonl``, ``validation.jsonl``
  and ``test.jsonl`` (or ``.json``; any subset of them), found under the *data
  root* (see :func:`find_data_dir`).
* ``dataset: owner/name`` (and ``subset``) — a Hugging Face dataset, read with
  the optional ``datasets`` package (``pip install datasets``); never needed when
  the data is local or given with ``--data``.

``split_lookup`` maps a canonical split (``train``, ``validation``, ``test``) to
the dataset's own name for it (the file ``eval.jsonl`` for ``test: eval``);
``skip_splits`` drops canonical splits. A ``formatter`` turns the records of
these sources into template-ready instances; each record it receives carries
``_id``, its position in its split, as in SciRIFF.

Records given directly (``--data SPLIT=PATH``) are the instances the templates
see: no formatter runs on them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...data import StreamedSplit, open_records, read_whole
from ...errors import DataError
from .schema import CANONICAL_SPLITS, TaskTemplateFile

__all__ = [
    "DATA_ROOT_ENV",
    "hub_split_names",
    "SplitSource",
    "LazySplit",
    "find_data_dir",
    "split_sources",
    "with_ids",
]

DATA_ROOT_ENV = "PROMPT_STYLE_DATA_ROOT"
"""Environment variable naming the data root (like ``--data-root``)."""

_SUFFIXES = (".jsonl", ".json")


def find_data_dir(
    data_dir: str, task_path: Path | None, data_root: str | Path | None = None
) -> tuple[Path | None, list[Path]]:
    """The directory of ``data_dir`` and the places looked at.

    With a data root (``--data-root``, ``data_root=``, or ``$PROMPT_STYLE_DATA_ROOT``):
    ``ROOT/data_dir`` only. Otherwise, first of: ``data_dir`` next to the task
    file; then, from the task file's directory upwards, ``data/processed/data_dir``
    and ``data/preprocessing/processed/data_dir`` (SciRIFF's two layouts).
    """
    root = data_root if data_root is not None else os.environ.get(DATA_ROOT_ENV) or None
    if root is not None:
        candidate = Path(root).expanduser() / data_dir
        return (candidate if candidate.is_dir() else None), [candidate]
    tried: list[Path] = []
    base = (task_path.parent if task_path is not None else Path(".")).resolve()
    candidates = [base / data_dir]
    for ancestor in (base, *base.parents):
        candidates.append(ancestor / "data" / "processed" / data_dir)
        candidates.append(ancestor / "data" / "preprocessing" / "processed" / data_dir)
    for candidate in candidates:
        tried.append(candidate)
        if candidate.is_dir():
            return candidate, tried
    return None, tried


@dataclass
class SplitSource:
    """One canonical split of a task's own data."""

    split: str
    """The canonical name: ``train``, ``validation`` or ``test``."""
    name: str
    """The dataset's name for it (``split_lookup``), used in instance ids and metadata."""
    path: Path | None = None
    """A local JSON Lines (or JSON) file."""
    hub: tuple[str, str | None] | None = None
    """``(dataset, subset)`` on the Hugging Face Hub."""
    formatter: tuple[str, Mapping[str, Any]] | None = None
    task: str = ""
    file: str | None = None
    line: int | None = None

    def describe(self) -> str:
        if self.path is not None:
            return str(self.path)
        dataset, subset = self.hub or ("?", None)
        return f"Hugging Face dataset {dataset!r}" + (f" ({subset})" if subset else "") + f", split {self.name!r}"

    def raw(self) -> Iterator[Mapping[str, Any]]:
        """The records as stored, streamed: the reader's own iterator (no generator of
        this method's between it and the caller, for each record). Called where the
        records are first asked for (inside the generators that read them)."""
        if self.path is not None:
            return open_records(self.path, self.split)
        return _hub_records(self)

    def records(self, plugins: Any = None) -> Iterator[Mapping[str, Any]]:
        """The instances the templates see: the records, through the formatter
        when the task has one (its input records carry ``_id``)."""
        if self.formatter is None:
            return self.raw()
        from .formatters import run_formatter

        # (records read from a file are new objects, no one else's: given their _id in place)
        records = with_ids(self.raw(), fresh=self.path is not None)
        return run_formatter(self.formatter, records, plugins=plugins, split=self.split, file=self.file, line=self.line)


def with_ids(records: Iterator[Mapping[str, Any]], fresh: bool = False) -> Iterator[dict[str, Any]]:
    """Each record with ``_id``, its position in the split (kept when the record has one):
    a copy, or with ``fresh`` (records made for this call, no one else's) a ``dict``
    record itself, given its ``_id``."""
    for index, record in enumerate(records):
        if fresh and type(record) is dict:
            if "_id" not in record:
                record["_id"] = index
            yield record
        elif "_id" in record:
            yield dict(record)
        else:
            out = dict(record)
            out["_id"] = index
            yield out


def _hub_records(source: SplitSource) -> Iterator[Mapping[str, Any]]:
    dataset, subset = source.hub or ("", None)
    try:
        import datasets  # type: ignore[import-not-found]
    except ImportError:
        raise DataError(
            f"split {source.split!r} comes from the Hugging Face dataset {dataset!r}, "
            "but the optional 'datasets' package is not installed",
            file=source.file,
            line=source.line,
            key="dataset",
            hint=f"pip install datasets, or give the records with --data {source.split}=PATH",
        ) from None
    try:
        loaded = datasets.load_dataset(dataset, subset, split=source.name)
    except Exception as exc:  # the Hub, the network, a missing split: all the user's to fix
        raise DataError(
            f"cannot load split {source.name!r} of the Hugging Face dataset {dataset!r}: {type(exc).__name__}: {exc}",
            file=source.file,
            line=source.line,
            key="dataset",
            hint=f"give the records with --data {source.split}=PATH",
        ) from None
    for record in loaded:
        yield dict(record)


class LazySplit(StreamedSplit):
    """A split made by a formatter or read from the Hub: streamed where it is read
    through (the evaluated split, rendered in constant memory), read whole on first
    use as a ``Sequence`` (the few-shot pool); pickles as its records."""

    def __init__(self, source: SplitSource | None, plugins: Any = None, *, problem: DataError | None = None) -> None:
        self.source = source
        self.plugins = plugins
        self.problem = problem
        self._records: list[Mapping[str, Any]] | None = None

    @property
    def records(self) -> list[Mapping[str, Any]]:
        if self._records is None:
            if self.problem is not None:
                raise self.problem
            assert self.source is not None
            self._records = read_whole(self.source.records(self.plugins))
        return self._records

    def stream(self) -> Iterator[Mapping[str, Any]]:
        """The records in order: those already read, else read afresh (not kept)."""
        if self._records is not None:
            return iter(self._records)
        if self.problem is not None:
            raise self.problem
        assert self.source is not None
        return self.source.records(self.plugins)

    def __bool__(self) -> bool:
        return bool(self.records)

    def __repr__(self) -> str:
        if self.source is not None:
            return f"<split {self.source.split!r} from {self.source.describe()}>"
        return "<split with no data>"

    def __getstate__(self) -> dict[str, Any]:
        return {"source": self.source, "plugins": None, "problem": self.problem, "_records": self.records}


@dataclass
class Sources:
    """The task's own splits, and why there are none when there are none."""

    splits: dict[str, SplitSource] = field(default_factory=dict)
    missing: str | None = None
    """Why the task's own data cannot be read (no data_dir found, no dataset named)."""
    hint: str | None = None


def hub_split_names(dataset: str, subset: str | None) -> set[str] | None:
    """The split names of a Hugging Face dataset (``datasets.get_dataset_split_names``),
    or ``None`` when they cannot be known here (no ``datasets``, no network): then every
    split is tried, and reading a missing one says why."""
    try:
        import datasets  # type: ignore[import-not-found]

        return set(datasets.get_dataset_split_names(dataset, subset))
    except Exception:
        return None


def split_sources(
    spec: TaskTemplateFile,
    *,
    data_root: str | Path | None = None,
    probe_hub: bool = True,
) -> Sources:
    """The task's own data, split by split (local ``data_dir`` first, else the Hub).

    Splits in ``skip_splits`` are left out; ``split_lookup`` names the files
    (or Hub splits). A Hub dataset's splits are those it has (asked of the Hub
    with ``probe_hub``; every canonical split otherwise). No record is read here.
    """
    wanted = [split for split in CANONICAL_SPLITS if split not in spec.skip_splits]
    lookup = spec.split_lookup
    where = {"task": spec.name, "file": spec.file, "formatter": spec.formatter}
    if spec.data_dir:
        directory, tried = find_data_dir(spec.data_dir, spec.path, data_root)
        line = spec.lines.get("data_dir")
        if directory is None:
            shown = ", ".join(str(p) for p in tried[:4]) + (", ..." if len(tried) > 4 else "")
            return Sources(
                missing=f"the data directory {spec.data_dir!r} was not found (looked in {shown})",
                hint=f"set --data-root DIR (or ${DATA_ROOT_ENV}) to the directory holding {spec.data_dir}/",
            )
        splits: dict[str, SplitSource] = {}
        for split in wanted:
            name = lookup.get(split, split)
            for suffix in _SUFFIXES:
                file = directory / f"{name}{suffix}"
                if file.is_file():
                    splits[split] = SplitSource(split, name, path=file, line=line, **where)
                    break
        if not splits:
            present = sorted(p.name for p in directory.iterdir() if p.is_file())
            expected = ", ".join(f"{lookup.get(s, s)}.jsonl" for s in wanted)
            return Sources(
                missing=f"the data directory {directory} holds none of {expected}",
                hint=f"it holds: {', '.join(present) or 'nothing'}",
            )
        return Sources(splits)
    if spec.dataset:
        line = spec.lines.get("dataset")
        # Only the splits the dataset has: a dataset with train and test only re-balances
        # (instantiate) or renders what it has (render), as SciRIFF's instantiation does.
        names = hub_split_names(spec.dataset, spec.subset) if probe_hub else None
        found = {
            split: SplitSource(split, lookup.get(split, split), hub=(spec.dataset, spec.subset), line=line, **where)
            for split in wanted
            if names is None or lookup.get(split, split) in names
        }
        if not found:
            expected = ", ".join(lookup.get(s, s) for s in wanted)
            return Sources(
                missing=f"the Hugging Face dataset {spec.dataset!r} has none of the splits {expected} "
                f"(its splits: {', '.join(sorted(names or ())) or 'none'})",
                hint="name its splits with split_lookup, e.g. split_lookup: {test: NAME}",
            )
        return Sources(found)
    return Sources(missing="the task names neither data_dir nor dataset", hint="add data_dir: NAME")
