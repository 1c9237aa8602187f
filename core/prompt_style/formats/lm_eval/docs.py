"""Records as lm-evaluation-harness task code sees them.

lm-evaluation-harness hands ``process_docs`` a ``datasets.Dataset``. prompt-style
reads records as plain dicts and does not depend on ``datasets``, so task code
receives a :class:`Docs`: a small stand-in with the parts of the
``datasets.Dataset`` API task code uses (``map``, ``filter``, ``select``,
``shuffle``, column access and edits), with the same semantics for plain values.
Whatever the function returns — a ``Docs``, a real ``datasets.Dataset`` (task
code may build one when datasets is installed) or a list of dicts — becomes the
split's records.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import RenderError

__all__ = ["Docs", "ProcessDocs", "as_records"]


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
        result = self.function(docs)
        try:
            return as_records(result)
        except TypeError as exc:
            raise RenderError(f"{self.name} {exc}", key="process_docs") from None
