"""Records as lm-evaluation-harness task code sees them.

lm-evaluation-harness hands ``process_docs`` a ``datasets.Dataset``. prompt-style
reads records as plain dicts and does not depend on ``datasets``, so task code
receives a :class:`Docs`: a small stand-in with the parts of the
``datasets.Dataset`` API task code uses (``map``, ``filter``, ``select``,
``shuffle``, column access and edits), with the same semantics for plain values.
Whatever the function returns — a ``Docs``, a real ``datasets.Dataset`` (task
code may build one when datasets is installed) or a list of dicts — becomes the
split's records.

The evaluated split's records are not held in memory where that changes nothing:
its ``process_docs`` receives a :class:`StreamedDocs`, whose row-wise ``map`` and
``filter`` (what nearly every lm-evaluation-harness ``process_docs`` does) are
recorded rather than run when their function computes from the row alone
(:mod:`.stateless`). Returned as they are, they become a :class:`ProcessedSplit`,
which runs them on each record as the split is read through (rendered): the same
records, in constant memory, each function called once per record in the same
order. A function that may keep state or draw random numbers (GPQA's
``random.shuffle`` of the choices), and anything else task code asks of the rows
(their number, an index, a batched ``map``, ``shuffle``), reads the split whole
when the task loads, as before.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...data import StreamedSplit, read_whole
from ...errors import RenderError
from .stateless import inert, stateless

__all__ = ["Docs", "ProcessDocs", "ProcessedSplit", "StreamedDocs", "as_records"]


_ATOMIC = frozenset({str, int, float, bool, type(None)})


def _fresh(value: Any) -> Any:
    """A copy of a record's value as ``datasets`` decodes one afresh: new dicts and lists
    all the way down (without ``copy.deepcopy``'s memo, so a list that appears twice is
    two lists, as Arrow gives it back), texts and numbers as they are, anything else
    deep-copied."""
    kind = type(value)
    if kind is dict:
        new = value.copy()
        for key, item in value.items():
            if type(item) not in _ATOMIC:
                new[key] = _fresh(item)
        return new
    if kind is list:
        if _ATOMIC.issuperset(map(type, value)):
            return value.copy()
        return [item if type(item) in _ATOMIC else _fresh(item) for item in value]
    if kind in _ATOMIC:
        return value
    return copy.deepcopy(value)


def _batches(n: int, size: int | None) -> Iterator[range]:
    if size is None or size <= 0:
        size = max(n, 1)
    for start in range(0, n, size):
        yield range(start, min(start + size, n))


class Docs(Sequence):
    """A list of records with the ``datasets.Dataset`` methods task code uses.

    Rows are dicts; ``docs[i]``, iteration and the examples handed to ``map`` and
    ``filter`` are deep copies, as ``datasets`` decodes a fresh row each time (task
    code may change them in place).
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]] = ()) -> None:
        self._rows = [dict(row) for row in rows]

    @classmethod
    def _owned(cls, rows: list[dict[str, Any]]) -> Docs:
        """Docs of rows made for it (no one else's): kept, not copied."""
        made = cls.__new__(cls)
        made._rows = rows
        return made

    # -- construction, as datasets.Dataset -------------------------------------

    @classmethod
    def from_list(cls, mapping: Iterable[Mapping[str, Any]], *args: Any, **kwargs: Any) -> Docs:
        return cls(mapping)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Sequence[Any]], *args: Any, **kwargs: Any) -> Docs:
        columns = list(mapping)
        n = len(mapping[columns[0]]) if columns else 0
        return cls({c: mapping[c][i] for c in columns} for i in range(n))

    # -- reading ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def num_rows(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (_fresh(row) for row in self._rows)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return [row.get(key) for row in self._rows]
        if isinstance(key, slice):
            return self._batch(range(len(self._rows))[key])
        if isinstance(key, int):
            return _fresh(self._rows[key])
        if isinstance(key, Iterable):
            return self._batch(list(key))
        raise TypeError(f"cannot index records with {type(key).__name__}")

    @property
    def column_names(self) -> list[str]:
        names: dict[str, None] = {}
        for row in self._rows:
            names.update(dict.fromkeys(row))
        return list(names)

    @property
    def features(self) -> dict[str, Any]:
        return dict.fromkeys(self.column_names)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self._rows), len(self.column_names))

    def to_list(self) -> list[dict[str, Any]]:
        return [_fresh(row) for row in self._rows]

    def to_dict(self) -> dict[str, list[Any]]:
        return self._batch(range(len(self._rows)))

    def unique(self, column: str) -> list[Any]:
        seen: dict[Any, None] = {}
        for value in self[column]:
            seen.setdefault(value, None)
        return list(seen)

    def __repr__(self) -> str:
        return f"Docs(num_rows={len(self._rows)}, columns={self.column_names})"

    def _batch(self, indices: Iterable[int]) -> dict[str, list[Any]]:
        rows = [self._rows[i] for i in indices]
        columns = self.column_names
        return _fresh({c: [row.get(c) for row in rows] for c in columns})

    def _calls(
        self,
        function: Callable[..., Any],
        with_indices: bool,
        input_columns: str | list[str] | None,
        batched: bool,
        batch_size: int | None,
        fn_kwargs: Mapping[str, Any] | None,
    ) -> Iterator[tuple[Any, Any, Any]]:
        """``function`` called as ``datasets`` calls it for ``map`` and ``filter``: per
        row (a copy), or per batch (a dict of column lists), with ``input_columns``
        only and the index (indices) when asked. Yields ``(index or range of
        indices, the row or batch given, the result)``."""
        kwargs = dict(fn_kwargs or {})
        columns = [input_columns] if isinstance(input_columns, str) else input_columns
        if not batched:
            for i, row in enumerate(self._rows):
                example = _fresh(row)
                args = [example[c] for c in columns] if columns else [example]
                if with_indices:
                    args.append(i)
                yield i, example, function(*args, **kwargs)
            return
        for chunk in _batches(len(self._rows), batch_size):
            batch = self._batch(chunk)
            args = [batch[c] for c in columns] if columns else [batch]
            if with_indices:
                args.append(list(chunk))
            yield chunk, batch, function(*args, **kwargs)

    # -- transforming (each returns new Docs) ---------------------------------------

    def map(
        self,
        function: Callable[..., Any] | None = None,
        with_indices: bool = False,
        with_rank: bool = False,
        input_columns: str | list[str] | None = None,
        batched: bool = False,
        batch_size: int | None = 1000,
        drop_last_batch: bool = False,
        remove_columns: str | list[str] | None = None,
        fn_kwargs: Mapping[str, Any] | None = None,
        **ignored: Any,
    ) -> Docs:
        """``datasets.Dataset.map``: each returned mapping updates (and extends) its row."""
        if function is None:
            function = lambda x, *a, **k: x  # noqa: E731 - the identity, as datasets
        removed = [remove_columns] if isinstance(remove_columns, str) else list(remove_columns or ())
        values_only = bool([input_columns] if isinstance(input_columns, str) else input_columns)
        out: list[dict[str, Any]] = []
        calls = self._calls(function, with_indices, input_columns, batched, batch_size, fn_kwargs)
        if not batched:
            for i, example, result in calls:
                # the row the function was given (and may have changed), or a copy when it got column values
                new = _fresh(self._rows[i]) if values_only else example
                if result is not None:
                    if not isinstance(result, Mapping):
                        raise TypeError(f"map's function must return a dict, not {type(result).__name__}")
                    new.update(result)
                for name in removed:
                    new.pop(name, None)
                out.append(new)
            return Docs._owned(out)
        for chunk, batch, result in calls:
            result = batch if result is None else result
            if not isinstance(result, Mapping):
                raise TypeError(f"map's function must return a dict of lists, not {type(result).__name__}")
            lengths = {len(v) for v in result.values()}
            if len(lengths) > 1:
                raise TypeError("map's function returned columns of different lengths")
            n = lengths.pop() if lengths else len(chunk)
            kept = [c for c in batch if c not in removed and c not in result]
            if n != len(chunk) and kept:
                raise TypeError(
                    f"map's function returned {n} rows for {len(chunk)}; remove the other columns "
                    f"({', '.join(kept)}) with remove_columns, as datasets requires"
                )
            for j in range(n):
                new = {c: batch[c][j] for c in kept}
                new.update({c: v[j] for c, v in result.items()})
                for name in removed:
                    new.pop(name, None)
                out.append(new)
        return Docs._owned(out)

    def filter(
        self,
        function: Callable[..., Any] | None = None,
        with_indices: bool = False,
        input_columns: str | list[str] | None = None,
        batched: bool = False,
        batch_size: int | None = 1000,
        fn_kwargs: Mapping[str, Any] | None = None,
        **ignored: Any,
    ) -> Docs:
        """``datasets.Dataset.filter``: the rows for which ``function`` is true."""
        if function is None:
            return Docs(self._rows)
        keep: list[bool] = []
        for _, _, result in self._calls(function, with_indices, input_columns, batched, batch_size, fn_kwargs):
            if batched:
                keep.extend(bool(x) for x in result)
            else:
                keep.append(bool(result))
        return Docs(row for row, ok in zip(self._rows, keep) if ok)

    def select(self, indices: Iterable[int], **ignored: Any) -> Docs:
        return Docs(self._rows[i] for i in indices)

    def shuffle(self, seed: int | None = None, generator: Any = None, **ignored: Any) -> Docs:
        """``datasets.Dataset.shuffle``: numpy's ``default_rng(seed).permutation``."""
        try:
            import numpy as np
        except ImportError:
            raise RenderError("Dataset.shuffle in task code needs numpy: pip install numpy") from None
        if generator is None:
            if seed is None:
                seed = np.random.get_state()[1][0]
            generator = np.random.default_rng(seed)
        return self.select(int(i) for i in generator.permutation(len(self._rows)))

    def sort(self, column_names: str | Sequence[str], reverse: bool | Sequence[bool] = False, **ignored: Any) -> Docs:
        names = [column_names] if isinstance(column_names, str) else list(column_names)
        rows = list(self._rows)
        flags = [reverse] * len(names) if isinstance(reverse, bool) else list(reverse)
        for name, flag in reversed(list(zip(names, flags))):
            rows.sort(key=lambda row: row.get(name), reverse=flag)
        return Docs(rows)

    def remove_columns(self, column_names: str | Sequence[str], **ignored: Any) -> Docs:
        names = {column_names} if isinstance(column_names, str) else set(column_names)
        return Docs({k: v for k, v in row.items() if k not in names} for row in self._rows)

    def select_columns(self, column_names: str | Sequence[str], **ignored: Any) -> Docs:
        names = [column_names] if isinstance(column_names, str) else list(column_names)
        return Docs({k: row.get(k) for k in names} for row in self._rows)

    def rename_column(self, original_column_name: str, new_column_name: str, **ignored: Any) -> Docs:
        return self.rename_columns({original_column_name: new_column_name})

    def rename_columns(self, column_mapping: Mapping[str, str], **ignored: Any) -> Docs:
        return Docs({column_mapping.get(k, k): v for k, v in row.items()} for row in self._rows)

    def add_column(self, name: str, column: Sequence[Any], *args: Any, **ignored: Any) -> Docs:
        if len(column) != len(self._rows):
            raise ValueError(f"add_column: {len(column)} values for {len(self._rows)} rows")
        return Docs({**row, name: value} for row, value in zip(self._rows, column))

    def flatten_indices(self, *args: Any, **kwargs: Any) -> Docs:
        return self


Rows = Iterator[dict[str, Any]]


def _noted(root: StreamedDocs, rows: Rows) -> Rows:
    for root._position, row in enumerate(rows):  # noqa: B007 - for error messages
        yield row


def _own(row: Mapping[str, Any]) -> dict[str, Any]:
    return _fresh(row if type(row) is dict else dict(row))


def _streamable(function: Any, fn_kwargs: Mapping[str, Any] | None) -> bool:
    """Whether a step's function can run record by record as the split is read: it
    computes from the row alone (:func:`~.stateless.stateless`), and so do its ``fn_kwargs``."""
    return (function is None or stateless(function)) and all(inert(v) for v in (fn_kwargs or {}).values())


class StreamedDocs(Docs):
    """:class:`Docs` over a split read as it is iterated. A row-wise ``map`` or
    ``filter`` (and the column edits) gives a ``StreamedDocs`` that runs it on each
    row of its parent's stream (:meth:`stream`); anything else reads the rows whole
    first (``_rows``, kept), and from then on the rows are those.

    :param source: gives the split's records afresh, in order (a new reader each call).
    :param owned: whether they are new objects no one else holds (read from a file);
        otherwise each is copied before task code sees it, as ``Docs`` hands out copies.
    """

    def __init__(
        self,
        source: Callable[[], Iterator[Mapping[str, Any]]] | None = None,
        owned: bool = False,
        *,
        parent: StreamedDocs | None = None,
        stage: Callable[[Rows], Rows] | None = None,
    ) -> None:
        self._source = source
        self._owned_rows = owned
        self._parent = parent
        self._stage = stage
        self._read: list[dict[str, Any]] | None = None
        self._root: StreamedDocs = self if parent is None else parent._root
        self._position = -1  # (the root's) the split's record read last, for error messages

    @property  # type: ignore[override]
    def _rows(self) -> list[dict[str, Any]]:
        if self._read is None:
            self._read = read_whole(self.stream())
        return self._read

    def stream(self) -> Rows:
        """The rows in order: those read whole, else made afresh (not kept)."""
        if self._read is not None:
            return iter(self._read)
        if self._parent is not None:
            assert self._stage is not None
            rows = self._parent.stream()
            if self._parent._read is not None:  # (kept rows: the steps change theirs in place)
                rows = map(_fresh, rows)
            return self._stage(rows)
        assert self._source is not None
        records = self._source()
        # (rows read from a file are this stream's own; others are copied, as Docs hands out copies)
        return records if self._owned_rows else map(_own, records)

    def _then(self, stage: Callable[[Rows], Rows], *, notes: bool = False) -> StreamedDocs:
        """The rows of ``stage`` over this stream's. The first step notes the position of
        each row it takes (``notes``: it does so itself), for the messages of any step's
        error: rows are pulled one at a time through the steps."""
        if self is self._root and not notes:
            root = self
            inner = stage

            def stage(rows: Rows) -> Rows:
                return inner(_noted(root, rows))

        return StreamedDocs(parent=self, stage=stage)

    def map(  # type: ignore[override]
        self,
        function: Callable[..., Any] | None = None,
        with_indices: bool = False,
        with_rank: bool = False,
        input_columns: str | list[str] | None = None,
        batched: bool = False,
        batch_size: int | None = 1000,
        drop_last_batch: bool = False,
        remove_columns: str | list[str] | None = None,
        fn_kwargs: Mapping[str, Any] | None = None,
        **ignored: Any,
    ) -> Docs:
        if batched or self._read is not None or not _streamable(function, fn_kwargs):
            return Docs.map(
                self,
                function,
                with_indices=with_indices,
                input_columns=input_columns,
                batched=batched,
                batch_size=batch_size,
                remove_columns=remove_columns,
                fn_kwargs=fn_kwargs,
            )
        if function is None:
            function = lambda x, *a, **k: x  # noqa: E731 - the identity, as datasets
        removed = [remove_columns] if isinstance(remove_columns, str) else list(remove_columns or ())
        columns = [input_columns] if isinstance(input_columns, str) else input_columns
        kwargs = dict(fn_kwargs or {})

        root = self._root if self is self._root else None  # the first step notes each row's position

        def stage(rows: Rows) -> Rows:
            # Docs.map, one row at a time: the row is this stream's own, so the function
            # gets it (a copy when it gets column values: the row stays as it was)
            for i, row in enumerate(rows):
                if root is not None:
                    root._position = i
                if columns:
                    example = _fresh(row)
                    args = [example[c] for c in columns]
                    if with_indices:
                        args.append(i)
                    result = function(*args, **kwargs)
                elif with_indices or kwargs:
                    result = function(row, i, **kwargs) if with_indices else function(row, **kwargs)
                else:
                    result = function(row)
                if result is not None:
                    if type(result) is not dict and not isinstance(result, Mapping):
                        raise TypeError(f"map's function must return a dict, not {type(result).__name__}")
                    row.update(result)
                for name in removed:
                    row.pop(name, None)
                yield row

        return self._then(stage, notes=True)

    def filter(  # type: ignore[override]
        self,
        function: Callable[..., Any] | None = None,
        with_indices: bool = False,
        input_columns: str | list[str] | None = None,
        batched: bool = False,
        batch_size: int | None = 1000,
        fn_kwargs: Mapping[str, Any] | None = None,
        **ignored: Any,
    ) -> Docs:
        if batched or self._read is not None or not _streamable(function, fn_kwargs):
            return Docs.filter(
                self,
                function,
                with_indices=with_indices,
                input_columns=input_columns,
                batched=batched,
                batch_size=batch_size,
                fn_kwargs=fn_kwargs,
            )
        if function is None:
            return self._then(lambda rows: rows)
        columns = [input_columns] if isinstance(input_columns, str) else input_columns
        kwargs = dict(fn_kwargs or {})

        root = self._root if self is self._root else None

        def stage(rows: Rows) -> Rows:
            # the function gets a copy (as datasets decodes one): the row kept is as it was
            for i, row in enumerate(rows):
                if root is not None:
                    root._position = i
                example = _fresh(row)
                args = [example[c] for c in columns] if columns else [example]
                if with_indices:
                    args.append(i)
                if function(*args, **kwargs):
                    yield row

        return self._then(stage, notes=True)

    def remove_columns(self, column_names: str | Sequence[str], **ignored: Any) -> Docs:
        if self._read is not None:
            return Docs.remove_columns(self, column_names)
        names = {column_names} if isinstance(column_names, str) else set(column_names)
        return self._then(lambda rows: ({k: v for k, v in row.items() if k not in names} for row in rows))

    def select_columns(self, column_names: str | Sequence[str], **ignored: Any) -> Docs:
        if self._read is not None:
            return Docs.select_columns(self, column_names)
        names = [column_names] if isinstance(column_names, str) else list(column_names)
        return self._then(lambda rows: ({k: row.get(k) for k in names} for row in rows))

    def rename_columns(self, column_mapping: Mapping[str, str], **ignored: Any) -> Docs:
        if self._read is not None:
            return Docs.rename_columns(self, column_mapping)
        mapping = dict(column_mapping)
        return self._then(lambda rows: ({mapping.get(k, k): v for k, v in row.items()} for row in rows))


class ProcessedSplit(StreamedSplit):
    """The evaluated split after a ``process_docs`` that returned a :class:`StreamedDocs`:
    its row-wise steps run on each record as the split is read through, in constant
    memory; read whole (kept) where it is used as a ``Sequence``.

    :param fail: ``fail(exc, index)``, the error to raise for an exception of task code
        (or of the reader) at the split's record ``index``.
    """

    def __init__(self, docs: StreamedDocs, fail: Callable[[Exception, int], Exception] | None = None) -> None:
        self.docs = docs
        self.fail = fail

    def _failed(self, exc: Exception) -> Exception:
        index = self.docs._root._position
        if self.fail is not None:
            return self.fail(exc, index)
        return RenderError(f"process_docs raised {type(exc).__name__}: {exc}", key="process_docs", index=index)

    @property
    def records(self) -> list[dict[str, Any]]:
        try:
            return self.docs._rows
        except Exception as exc:
            error = self._failed(exc)
            raise error from (None if error is exc else exc)

    def stream(self) -> Iterator[Mapping[str, Any]]:
        if self.docs._read is not None:
            return iter(self.docs._read)
        return self._streaming(None)

    def records_of(self, split: str) -> Iterator[Mapping[str, Any]]:
        # its rows are dicts (the reader's, or made by the steps): checked for none only
        if self.docs._read is not None:
            return super().records_of(split)
        return self._streaming(split)

    def _streaming(self, split: str | None) -> Iterator[Mapping[str, Any]]:
        empty = True
        try:
            for empty, row in enumerate(self.docs.stream(), -1):  # noqa: B007 - (-1: not empty)
                yield row
        except Exception as exc:
            error = self._failed(exc)
            raise error from (None if error is exc else exc)
        if empty is True and split is not None:
            raise self._failed(
                RenderError(
                    f"split '{split}' has no records left after process_docs",
                    hint="check what process_docs filters out, and the split's data",
                )
            )

    def __bool__(self) -> bool:
        return True  # (an empty split is said when it is read)

    def __repr__(self) -> str:
        return "<split after process_docs, read as it is rendered>"

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (self.records,)


def as_records(value: Any) -> list[dict[str, Any]]:
    """The records of what task code returned: a :class:`Docs`, a ``datasets.Dataset``
    (anything with ``to_list``), or an iterable of mappings.

    :raises TypeError: for anything else.
    """
    if isinstance(value, Docs):
        # its rows, not copies: a Docs never changes a row in place nor hands one out
        # (its methods give copies), so no one else can change these
        return list(value._rows)
    to_list = getattr(value, "to_list", None)
    if callable(to_list):
        value = to_list()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"gave a {type(value).__name__}, not records")
    rows = list(value)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"record {i} is a {type(row).__name__}, not a mapping")
    return [dict(row) for row in rows]


@dataclass(frozen=True)
class ProcessDocs:
    """An lm-evaluation-harness ``process_docs`` function, applied to a split's records."""

    function: Callable[[Any], Any]
    name: str
    """The ``!function`` name as written, for messages."""

    def __call__(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        # the split's records, not copies: a Docs never changes a row in place (its
        # methods make new rows, and hand out copies), so the records stay as they are
        rows = list(records)
        docs = Docs._owned(rows) if all(type(row) is dict for row in rows) else Docs(rows)
        return self._records(self.function(docs))

    def streamed(
        self,
        source: Callable[[], Iterator[Mapping[str, Any]]],
        *,
        owned: bool,
        fail: Callable[[Exception, int], Exception] | None = None,
    ) -> list[dict[str, Any]] | ProcessedSplit:
        """The function applied to a split read from ``source`` (see :class:`StreamedDocs`):
        a :class:`ProcessedSplit` when it returned row-wise steps, else its records."""
        result = self.function(StreamedDocs(source, owned))
        if isinstance(result, StreamedDocs) and result._read is None:
            return ProcessedSplit(result, fail)
        return self._records(result)

    def _records(self, result: Any) -> list[dict[str, Any]]:
        try:
            return as_records(result)
        except TypeError as exc:
            raise RenderError(f"{self.name} {exc}", key="process_docs") from None
