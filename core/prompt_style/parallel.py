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
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ._pool import check_jobs, ordered_map
from .conversation import reply_callback
from .data import _files, block_records, byte_blocks, check_data_file, line_chunks, open_records, parse_line, read_block
from .errors import DataError, PromptStyleError
from .jsonl import record_lines
from .render import RenderedPrompt, TaskRenderer

__all__ = ["map_rendered", "json_line_blocks", "CHUNK_SIZE", "BLOCK_BYTES"]

BLOCK_BYTES = 1 << 20
"""Bytes of a JSON Lines file per block a worker renders into JSON lines
(:func:`json_line_blocks`): about two thousand records of MMLU, enough that a
block's round trip costs little beside its rendering, small enough that memory
stays flat and both workers start at once."""

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


# -- JSON lines, a block at a time ---------------------------------------------------

_WORKER: dict[str, Any] = {}  # per worker process: the data file's descriptor, the task's encoder and loop


def _json_block(
    state: tuple[TaskRenderer, Any, Any, str, Path, str | None],
    job: tuple[int, int, int, int, int],
) -> tuple[bytes | str, int, PromptStyleError | None]:
    """In a worker: the JSON lines of one block of the data file (joined; or the name of
    the file in ``spill`` they were written to), the number of records they are for,
    and the error that stopped them."""
    renderer, provenance, default_for, split, path, spill = state
    index, number, offset, length, take = job
    fd = _WORKER.get("fd")
    if fd is None:
        fd = _WORKER["fd"] = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    records, error = block_records(read_block(fd, offset, length), split, path, number, index)
    if len(records) > take:
        records, error = records[:take], None
    out: list[bytes] = []
    try:
        out.extend(record_lines(renderer, provenance, records, index, default_for, _WORKER))
    except PromptStyleError as exc:  # the lines before the bad record still come out
        error = exc
    lines = b"".join(out)
    if spill is not None and lines:
        # written to a file the reading process copies to the output in the kernel: the
        # lines never pass through a pipe, nor through the reading process's memory
        made, name = tempfile.mkstemp(dir=spill)
        with open(made, "wb") as handle:
            handle.write(lines)
        return name, len(records), error
    return lines, len(records), error


def json_line_blocks(
    task: Any,
    *,
    jobs: int,
    limit: int | None = None,
    default_for: Callable[[int], Callable[[Any], Any]] | None = None,
    block_size: int = BLOCK_BYTES,
    spill: str | None = None,
) -> Iterator[tuple[bytes | str, int]] | None:
    """The lines of :meth:`Task.json_lines <prompt_style.Task.json_lines>`, made by
    ``jobs`` worker processes a block of the data file at a time: ``(lines, records)``
    per block, in order, the lines joined as UTF-8. The reading process only finds the
    blocks' bounds and counts their records; each worker reads, decodes, parses and
    renders its blocks. ``None`` when the task's evaluated split is not a JSON Lines
    file, or the task is multi-turn (then :func:`map_rendered`).

    :param default_for: as :meth:`Task.json_lines` takes it (picklable: module-level).
    :param spill: a folder: each block's lines are written to a file there, and its
        name given instead of the lines (the caller copies and removes it).
    :raises PromptStyleError: the first bad record's error, after every line before it.
    """
    check_jobs(jobs)
    split = task.config.test_split
    source = task.source()
    if task.multiturn or not isinstance(source, (str, Path)) or _files(source) is not None:
        return None
    path = Path(source)
    if path.suffix.lower() == ".json":
        return None
    check_data_file(path, split)
    return _blocks(task, path, split, jobs, limit, default_for, block_size, spill)


def _blocks(
    task: Any,
    path: Path,
    split: str,
    jobs: int,
    limit: int | None,
    default_for: Any,
    block_size: int,
    spill: str | None,
) -> Iterator[tuple[bytes | str, int]]:
    def work() -> Iterator[tuple[int, int, int, int, int]]:
        for index, number, offset, length, records in byte_blocks(path, split, block_size):
            if limit is not None:
                if index >= limit:
                    return
                records = min(records, limit - index)
            yield index, number, offset, length, records

    state = (task.renderer, task.provenance, default_for, split, path, spill)
    try:
        for lines, count, error in ordered_map(_json_block, state, work(), jobs=jobs):
            if lines:
                yield lines, count
            if error is not None:
                raise error
    except DataError as exc:
        raise exc.locate(key=f"data.{split}") from None
