"""Rendering one task's evaluated split across worker processes, in order.

The reading process only cuts the data file into chunks of raw lines (it parses
nothing); each worker parses its chunk's lines, renders the records with its own
copy of the task's :class:`~prompt_style.TaskRenderer` and applies the caller's
``fn`` to every request, so what comes back is already the output (a JSON line,
a text block). Chunks are returned in order: the output is the serial output,
byte for byte, whatever the number of workers (the pool is :mod:`prompt_style._pool`'s:
spawned workers that receive the renderer once, pickled).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ._pool import check_jobs, ordered_map
from .conversation import reply_callback
from .data import _files, check_data_file, line_chunks, open_records, parse_line
from .errors import DataError, PromptStyleError
from .render import RenderedPrompt, TaskRenderer

__all__ = ["map_rendered", "CHUNK_SIZE"]

CHUNK_SIZE = 2000
"""Records per chunk: large enough that a chunk's round trip costs little beside
its rendering, small enough that memory stays flat and both workers start at once."""


def _run_chunk(
    state: tuple[TaskRenderer, Callable[[RenderedPrompt], Any], str, Path | None],
    job: tuple[int, Sequence[Any], bool, tuple[Sequence[Sequence[str]], int] | None],
) -> tuple[list[Any], PromptStyleError | None]:
    """In a worker: the outputs of one chunk's requests, in order, and the error that
    stopped it."""
    renderer, fn, split, path = state
    first, items, raw, given = job
    reply = reply_callback(given[0], first, given[1]) if given is not None else None
    converse = renderer.converse
    out: list[Any] = []
    try:
        for offset, item in enumerate(items):
            index = first + offset
            if raw:
                number, line = item
                record = parse_line(line, number, index, split, path)
            else:
                record = item
            for request in converse(record, index, reply):
                out.append(fn(request))
    except PromptStyleError as exc:
        # the outputs before the bad record still come out, as in the serial render
        return out, exc
    return out, None


def _chunks(
    source: Any, split: str, limit: int | None, size: int
) -> tuple[Iterator[tuple[int, Sequence[Any], bool]], str | None]:
    """``(first index, items, raw)`` chunks of the evaluated split, ``limit`` records at
    most, and the path workers name in their errors."""
    if limit is not None and limit < size:
        size = max(limit, 1)
    if isinstance(source, (str, Path)) and _files(source) is None and Path(source).suffix.lower() != ".json":
        path = Path(source)
        check_data_file(path, split)
        raw: Iterator[list[Any]] = line_chunks(path, split, size)
        is_raw, name = True, str(path)
    else:
        records = open_records(source, split)
        raw = iter(lambda: list(itertools.islice(records, size)), [])
        is_raw, name = False, None

    def numbered() -> Iterator[tuple[int, Sequence[Any], bool]]:
        first = 0
        for chunk in raw:
            if limit is not None and first + len(chunk) > limit:
                chunk = chunk[: limit - first]
            if chunk:
                yield first, chunk, is_raw
            first += len(chunk)
            if limit is not None and first >= limit:
                return

    return numbered(), name


def map_rendered(
    task: Any,
    fn: Callable[[RenderedPrompt], Any],
    *,
    jobs: int,
    limit: int | None = None,
    replies: Sequence[Sequence[str]] | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> Iterator[Any]:
    """``fn(request)`` for every request of ``task``'s evaluated split, in order, the
    records rendered by ``jobs`` worker processes (the serial path for ``jobs`` 1).

    :param task: a loaded :class:`~prompt_style.Task`.
    :param fn: a picklable function (module-level) applied to each rendered request
        in the worker, e.g. one that makes its JSON line.
    :param jobs: the number of worker processes.
    :param limit: render only the first ``limit`` records.
    :param replies: for multi-turn tasks, the model's replies per record (as
        :meth:`~prompt_style.Task.render` takes them as lists).
    :returns: the outputs, in the order :meth:`~prompt_style.Task.render` gives requests.
    :raises PromptStyleError: the first bad record's error, after every output before it.
    """
    if check_jobs(jobs) == 1:
        yield from map(fn, task.render(limit=limit, replies=replies))
        return
    split = task.config.test_split
    chunks, name = _chunks(task.source(), split, limit, chunk_size)
    state = (task.renderer, fn, split, Path(name) if name is not None else None)
    work = (
        (first, items, raw, None if replies is None else (replies[first : first + len(items)], len(replies)))
        for first, items, raw in chunks
    )
    for outputs, error in ordered_map(_run_chunk, state, work, jobs=jobs):
        yield from outputs
        if error is not None:
            if isinstance(error, DataError):  # as Task.render locates them
                error.locate(key=f"data.{split}")
            raise error
