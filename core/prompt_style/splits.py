"""Which splits a task reads, and the splits its ``process_docs`` makes.

:func:`processed` applies a task's ``process_docs`` (lm-evaluation-harness's, or
any callable given in Python) once per split, when the task loads: the few-shot
pool's first, then the evaluated split's, which a ``process_docs`` that says how
(``streamed``: lm-evaluation-harness's row-wise ``map`` and ``filter``) makes a
split processed as it is read. :func:`locate_data_error` points an error about a
data file at the task file line that names it.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
from pathlib import Path
from typing import Any

from .data import check_data_file, load_records, open_records
from .errors import DataError, PromptStyleError, RenderError
from .task import TaskConfig

__all__ = ["locate_data_error", "pool_split_of", "processed", "read_splits"]


def read_splits(config: TaskConfig) -> list[str]:
    """The splits a task reads that have data: the evaluated split, then the few-shot pool's."""
    splits = dict.fromkeys((config.test_split, pool_split_of(config)))
    return [split for split in splits if split in config.data]


def pool_split_of(config: TaskConfig) -> str:
    """The split few-shot examples come from."""
    split = config.test_split
    return config.fewshot_split or next((s for s in ("train", "validation", "dev") if s in config.data), split)


def locate_data_error(
    exc: PromptStyleError, config: TaskConfig, split: str, named_in_task_file: bool
) -> PromptStyleError:
    """Point an error about a whole data file at the task file line that names it."""
    exc.locate(key=f"data.{split}")
    if exc.file and not Path(exc.file).exists():
        exc.hint = exc.hint or (
            "paths in a task file are relative to the task file"
            if named_in_task_file
            else "paths given to --data (or data=) are relative to the current directory"
        )
    if exc.line is None and named_in_task_file and config.path is not None:
        if exc.file:
            exc.message = f"{exc.message}: {exc.file}"
        exc.file = str(config.path)
        exc.line = config.lines.get(f"data.{split}")
    return exc


def processed(config: TaskConfig, overridden: set[str]) -> TaskConfig:
    """Apply the task's ``process_docs`` once per split, the few-shot pool first
    (the order lm-evaluation-harness loads them in), after ``before_code``."""
    if config.process_docs is None and config.fewshot_process_docs is None:
        return config
    split = config.test_split
    pool_split = pool_split_of(config)
    jobs = []
    # (the pool processed alike when it is the evaluated split: one job, the evaluated
    # split's, which can stream; the pool reads it whole only when examples are asked for)
    same = pool_split == split and config.fewshot_process_docs == config.process_docs
    if config.fewshot_process_docs is not None and pool_split in config.data and not same:
        jobs.append((pool_split, config.fewshot_process_docs, "fewshot_process_docs"))
    if config.process_docs is not None:
        jobs.append((split, config.process_docs, "process_docs"))
    if callable(config.before_code):
        config.before_code()
    data = dict(config.data)
    done: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    for name, function, key in jobs:
        if name in done and done[name] == function:
            continue
        target = name
        if name in done:
            # The same split processed differently for the pool: keep both. The pool
            # is processed first, so its records move aside for the evaluated ones.
            pool_name = changes["fewshot_split"] = f"{name} (few-shot)"
            if key == "fewshot_process_docs":
                target = pool_name
            else:
                data[pool_name] = data[name]
        what = getattr(function, "name", None) or getattr(function, "__qualname__", type(function).__name__)
        fail = functools.partial(_process_error, config, name, key, what, name not in overridden)
        # The evaluated split, processed row by row, can be read as it is rendered (a
        # process_docs that says how: lm-evaluation-harness's, whose rows it streams).
        streamed = getattr(function, "streamed", None) if key == "process_docs" and target == name else None
        # The collector is off while the split is read and processed: every record made
        # (a dict and its lists, each new row of a map) is kept to the end, and collecting
        # meanwhile only walks them again and again (on 200,000 records, 40% of the time).
        enabled = gc.isenabled()
        gc.disable()
        try:
            if streamed is not None:
                given = config.data[name]
                try:
                    check_data_file(given, name)
                except PromptStyleError as exc:
                    raise locate_data_error(exc, config, name, name not in overridden) from None
                try:
                    data[target] = streamed(
                        functools.partial(open_records, given, name), owned=_from_files(given), fail=fail
                    )
                except Exception as exc:
                    error = fail(exc, None)
                    raise error from (None if error is exc else exc)
            else:
                try:
                    records = load_records(config.data[name], name)
                except PromptStyleError as exc:
                    raise locate_data_error(exc, config, name, name not in overridden) from None
                try:
                    data[target] = function(records)
                except Exception as exc:
                    error = fail(exc, None)
                    raise error from (None if error is exc else exc)
        finally:
            if enabled:
                gc.enable()
        done[name] = function
    return dataclasses.replace(config, data=data, **changes)


def _process_error(
    config: TaskConfig, split: str, key: str, what: str, default_data: bool, exc: Exception, index: int | None
) -> PromptStyleError:
    """The error of a ``process_docs`` (``key``) that raised ``exc``, at the split's record
    ``index`` when it runs as the split is read (``None``: when the task loads)."""
    if isinstance(exc, DataError):
        return locate_data_error(exc, config, split, default_data)
    if isinstance(exc, PromptStyleError):
        return exc.locate(**config.where(key))
    return RenderError(f"{what} raised {type(exc).__name__}: {exc}", split=split, index=index, **config.where(key))


def _from_files(given: Any) -> bool:
    """Whether records read from ``given`` are new objects each time (read from files)."""
    return isinstance(given, (str, Path)) or (
        isinstance(given, tuple) and bool(given) and all(isinstance(p, Path) for p in given)
    )
