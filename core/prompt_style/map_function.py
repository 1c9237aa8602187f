"""A task as a picklable map function for dataframe engines (Hugging Face ``datasets``, Ray Data).

:func:`as_map_function` returns a :class:`PromptMapper`: called on a batch of
records with their indices, it returns prompt columns. The engine ships it to
its worker processes by pickling; what it pickles is only a description of the
task (its source, the load options, fingerprints of the files it reads and the
versions of the plugins it uses), and each process loads the task once, on its
first batch. So the pickled bytes, and ``datasets``' cache fingerprint made from
them, are the same in every process and change when the task file, its data,
an option or a plugin version changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import DataError, OptionError
from .loading import Task, load_task

__all__ = ["as_map_function", "PromptMapper", "DEFAULT_COLUMNS"]

DEFAULT_COLUMNS = ("text", "messages", "continuations", "target")
"""The keys of :meth:`~prompt_style.RenderedPrompt.to_json` added as columns by default."""


def _plain(value: Any) -> Any:
    """A value as plain Python: Ray gives columns as numpy arrays, list cells as arrays
    of arrays and numbers as numpy scalars; ``tolist()`` turns each into lists and
    Python numbers (numpy is never imported here)."""
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        value = tolist()
        if not isinstance(value, (list, dict)):
            return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _column(values: Any) -> list[Any]:
    """A batch's column as plain Python values (see :func:`_plain`): a list of scalars,
    or of lists of scalars, is returned as it is; a numpy array (Ray) is made a list at once."""
    tolist = getattr(values, "tolist", None)
    if tolist is not None and type(values) is not list:
        values = tolist()
    if type(values) is list:
        kinds = set(map(type, values))
        if kinds <= _SCALARS or (kinds == {list} and all(set(map(type, v)) <= _SCALARS for v in values)):
            return values
    return [_plain(v) for v in values]


def _digest(path: Path) -> str | None:
    """A file's content hash, for the fingerprint (``None`` when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()  # type: ignore[attr-defined]
    except AttributeError:  # Python 3.10
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _data_files(task: Task) -> list[Path]:
    files: list[Path] = []
    for value in task.config.data.values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, (str, Path)):
                files.append(Path(item))
    return files


def _versions(plugins: Any) -> list[tuple[str, str]]:
    """``(distribution or plugin, version)`` of every plugin in ``Task.plugins`` (nested per hook and key)."""
    if not isinstance(plugins, Mapping):
        return []
    if "plugin" in plugins:
        return [(str(plugins.get("distribution") or plugins["plugin"]), str(plugins.get("version") or ""))]
    return [found for value in plugins.values() for found in _versions(value)]


_LOADED: dict[tuple[Any, ...], Task] = {}
"""Tasks loaded in this process, by their description (a few at most)."""


class PromptMapper:
    """A task's renderer as a map function; see :func:`as_map_function`."""

    def __init__(
        self,
        task: str | Path | Mapping[str, Any],
        load_options: Mapping[str, Any],
        *,
        batched: bool,
        columns: Sequence[str],
        prefix: str,
        index_column: str | None,
        processed: bool = False,
        _spec: tuple[Any, ...] | None = None,
    ) -> None:
        self.task = task
        self.load_options = dict(load_options)
        self.batched = batched
        self.columns = tuple(columns)
        self.prefix = prefix
        self.index_column = index_column
        self.processed = processed
        self._loaded: Task | None = None
        self._spec = _spec if _spec is not None else self._describe()

    def _describe(self) -> tuple[Any, ...]:
        """What identifies the prompts this mapper makes (loads the task, so errors show now)."""
        loaded = self.loaded()
        if loaded.multiturn:
            raise OptionError(
                f"task {loaded.name!r} is multi-turn (one request per model reply), which a map "
                "function cannot give as one row per record",
                hint="render it with prompt-style render (--replies for the model's replies)",
            )
        if loaded.config.process_docs is not None and not self.processed:
            raise OptionError(
                f"task {loaded.name!r} has a process_docs, which changes the evaluated split's records as a "
                "whole before they are rendered; a map function sees batches of rows and cannot apply it, so "
                "the prompts of raw rows would not be prompt-style render's",
                key="process_docs",
                hint="map the task's processed records (datasets.Dataset.from_list(list(load_task(TASK).records())))"
                " and say so with processed=True",
            ).locate(**loaded.config.where("process_docs"))
        try:
            options = json.dumps(self.load_options, sort_keys=True, default=str)
        except (TypeError, ValueError):
            raise OptionError("the load options of a map function must be JSON-like values") from None
        if isinstance(self.task, (str, Path)):
            source = str(Path(self.task).resolve())
            files = [Path(self.task), *_data_files(loaded)]
        else:
            source = json.dumps(self.task, sort_keys=True, default=repr)
            files = _data_files(loaded)
        digests = tuple((str(f), _digest(f)) for f in files)
        versions = tuple(sorted(set(_versions(loaded.plugins))))
        return (source, options, self.batched, self.columns, self.prefix, self.index_column, digests, versions)

    def loaded(self) -> Task:
        """The task, loaded on first use in each process (once per process: an engine
        that unpickles the function for every batch, as Ray's tasks do, finds it loaded)."""
        if self._loaded is None:
            spec = getattr(self, "_spec", None)
            known = _LOADED.get(spec) if spec is not None else None
            if known is None:
                known = load_task(self.task, **self.load_options)
                if spec is not None:
                    if len(_LOADED) >= 8:
                        _LOADED.pop(next(iter(_LOADED)))
                    _LOADED[spec] = known
            self._loaded = known
        return self._loaded

    def __reduce__(self) -> tuple[Any, ...]:
        # Only the description travels: the same bytes in every process (datasets'
        # fingerprint), and each worker loads the task itself.
        arguments = (self.task, self.load_options)
        keywords = (self.batched, self.columns, self.prefix, self.index_column, self.processed, self._spec)
        return (_restore, (arguments, keywords))

    def _indices(self, batch: Mapping[str, Any], indices: Any, size: int) -> list[int]:
        if indices is None:
            if self.index_column is None or self.index_column not in batch:
                raise DataError(
                    "the map function needs each record's index (few-shot examples and seeds depend on it)",
                    hint="with datasets pass with_indices=True; with Ray give index_column= a column of record "
                    "indices (e.g. add one before map_batches)",
                )
            indices = batch[self.index_column] if self.batched else [batch[self.index_column]]
        elif not self.batched:
            indices = [indices]
        out = [int(_plain(i)) for i in (indices.tolist() if hasattr(indices, "tolist") else indices)]
        if len(out) != size:
            raise DataError(f"the batch has {size} records but {len(out)} indices")
        return out

    def __call__(self, batch: Any, indices: Any = None) -> dict[str, Any]:
        """Prompt columns for a batch (``batched``: ``{column: values}``, one value per
        record) or for one record (``{column: value}``), with the records' indices.
        With ``indices`` (``datasets``' ``with_indices=True``) only the prompt columns
        are returned, which ``datasets`` adds to the records; without them (Ray, whose
        ``map_batches`` replaces each batch with the result, the indices coming from
        ``index_column``) the batch's own columns are returned too."""
        table = None
        if _is_arrow_table(batch):  # Ray's batch_format="pyarrow": the records in one call of C++
            if not self.batched:
                raise OptionError("a pyarrow batch needs a batched map function", key="batched")
            table, records = batch, batch.to_pylist()
            given = (
                {} if self.index_column is None else {self.index_column: [r.get(self.index_column) for r in records]}
            )
            return self._arrow(table, records, self._indices(given, indices, len(records)), indices)
        if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # a pandas DataFrame (Ray, batch_format="pandas")
            batch = batch.to_dict("list")
        keys = list(batch.keys())
        if self.batched and isinstance(indices, int):
            raise OptionError(
                "this map function takes batches, and was given one record",
                key="batched",
                hint="pass batched=True to the engine's map, or make it with as_map_function(..., batched=False)",
            )
        if self.batched:
            size = len(batch[keys[0]]) if keys else 0
            # column by column: a column of plain values (datasets' batches) is used as it is
            records = [dict(zip(keys, row)) for row in zip(*[_column(batch[k]) for k in keys])] if keys else []
        else:
            size = 1
            records = [{k: _plain(batch[k]) for k in keys}]
        where = self._indices(batch, indices, size)
        out = self._columns(records, where)
        if not self.batched:
            out = {k: v[0] for k, v in out.items()}  # type: ignore[misc]
        if indices is None:
            # An engine that passes no indices (Ray) replaces the batch with what the
            # function returns: give the record columns back with the prompt columns.
            return {**batch, **out}
        return out

    def _columns(self, records: Sequence[Any], where: Sequence[int]) -> dict[str, list[Any]]:
        columns, prefix = self.columns, self.prefix
        out: dict[str, list[Any]] = {prefix + c: [] for c in columns}
        appends = [(c, out[prefix + c].append) for c in columns]
        for made in self._rendered(records, where):
            made = made.to_json()
            for c, append in appends:
                append(made.get(c))
        return out

    def _rendered(self, records: Sequence[Any], where: Sequence[int]) -> Any:
        """The prompts of ``records`` at indices ``where``, as ``TaskRenderer.render``
        makes them: with the fast path's loop for a batch of consecutive indices."""
        renderer = self.loaded().renderer
        if where and renderer._doc_id is None and renderer.fast_render() is not None:
            many = renderer._fast_path.many
            if many is not None and list(where) == list(range(where[0], where[0] + len(where))):
                return many(records, renderer._render, where[0])
        return map(renderer.render, records, where)

    def _arrow(self, table: Any, records: list[Any], where: list[int], indices: Any) -> Any:
        """A pyarrow batch's prompt columns, as a table: the batch's with the prompt
        columns after them (or the prompt columns only, given ``indices``)."""
        import pyarrow  # the batch's own library

        out = self._columns(records, where)
        try:
            arrays = {name: pyarrow.array(values) for name, values in out.items()}
        except (pyarrow.ArrowException, TypeError, ValueError):  # values of mixed types: plain lists
            return {**{name: table.column(name).to_pylist() for name in table.column_names}, **out}
        if indices is not None:
            return pyarrow.table(arrays)
        for name, array in arrays.items():
            if name in table.column_names:
                table = table.drop_columns([name])
            table = table.append_column(name, array)
        return table

    def __repr__(self) -> str:
        return f"PromptMapper({self.task!r}, batched={self.batched})"


def _is_arrow_table(batch: Any) -> bool:
    """Whether ``batch`` is a ``pyarrow.Table`` (asked without importing pyarrow)."""
    kind = type(batch)
    return kind.__name__ == "Table" and kind.__module__.startswith("pyarrow")


def _restore(arguments: tuple[Any, ...], keywords: tuple[Any, ...]) -> PromptMapper:
    task, load_options = arguments
    batched, columns, prefix, index_column, processed, spec = keywords
    return PromptMapper(
        task,
        load_options,
        batched=batched,
        columns=columns,
        prefix=prefix,
        index_column=index_column,
        processed=processed,
        _spec=spec,
    )


def as_map_function(
    task: str | Path | Mapping[str, Any],
    *,
    batched: bool = True,
    columns: Sequence[str] = DEFAULT_COLUMNS,
    prefix: str = "prompt_",
    index_column: str | None = None,
    processed: bool = False,
    **load_options: Any,
) -> PromptMapper:
    """A task as a picklable map function that adds prompt columns to records.

    For Hugging Face ``datasets``::

        ds = ds.map(as_map_function("task.yaml", shots=5), batched=True, with_indices=True, num_proc=2)

    and for Ray Data (which gives no row index: name a column that holds it)::

        ds = ds.map_batches(as_map_function("task.yaml", index_column="index"), batch_format="numpy")

    The prompts are those :meth:`~prompt_style.Task.render` gives for the same
    records and options, whatever the engine, the number of processes or the
    batch size: each record is rendered with its own index (its position in the
    evaluated split), which seeds its few-shot examples.

    :param task: a task file or a mapping of task keys, as for :func:`load_task`.
    :param batched: called with batches (``{column: [values]}``, the default) or
        with one record at a time.
    :param columns: which keys of :meth:`~prompt_style.RenderedPrompt.to_json` to add.
    :param prefix: the prefix of the added columns' names.
    :param index_column: a column holding each record's index, for engines that do
        not pass indices (Ray).
    :param processed: the rows are the task's records after its ``process_docs``
        (:meth:`~prompt_style.Task.records`); a task with a ``process_docs`` (an
        lm-evaluation-harness task file) is refused without it, since a map over
        batches cannot apply a function of the whole split.
    :param load_options: the keyword arguments of :func:`load_task` (``shots``,
        ``style``, ``meta``, ``data``, ...): JSON-like values, since they are pickled.
    :returns: the :class:`PromptMapper`.
    :raises PromptStyleError: when the task does not load, or is multi-turn.
    """
    if "plugins" in load_options:
        raise OptionError(
            "a map function loads its task with the default plugin manager in each process",
            key="plugins",
            hint="choose plugins with PROMPT_STYLE_PLUGINS / PROMPT_STYLE_DISABLE / PROMPT_STYLE_PREFER",
        )
    if isinstance(task, (str, Path)):
        task = str(Path(task).resolve())  # the same description from any process and directory
    return PromptMapper(
        task,
        load_options,
        batched=batched,
        columns=columns,
        prefix=prefix,
        index_column=index_column,
        processed=processed,
    )
