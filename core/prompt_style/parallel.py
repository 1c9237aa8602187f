"""Rendering one task's evaluated split across worker processes, in order.

The reading process does no work per record: it reads a JSON Lines file in blocks
of whole lines, as bytes, and counts each block's lines and records with ``bytes``
methods (:func:`~prompt_style.data.byte_chunks`), so that every block carries the
index of its first record and the number of its first line. Each worker decodes and
parses its block (:func:`~prompt_style.data.parse_block`, the serial reader's
errors, lines and all), renders the records with its own copy of the task's
:class:`~prompt_style.TaskRenderer` (the fast path's loop where the serial render
takes it), applies the caller's ``fn`` to every request and, given ``join``, sends
back one piece per block (all its JSON lines as one ``bytes``): the reading process
only writes them. Blocks come back in order: the output is the serial output, byte
for byte, whatever the number of workers (the pool is :mod:`prompt_style._pool`'s:
spawned workers that receive the renderer once, pickled).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ._pool import check_jobs, ordered_map
from .conversation import reply_callback
from .data import _files, byte_chunks, check_data_file, open_records, parse_block
from .errors import DataError, PromptStyleError
from .render import RenderedPrompt, TaskRenderer
from .safe.limits import yaml_limits

__all__ = ["map_rendered", "map_rendered_blocks", "CHUNK_SIZE", "BLOCK_SIZE"]

CHUNK_SIZE = 2000
"""Records per chunk of records held in memory (a JSON array, records given as a list)."""

BLOCK_SIZE = 1 << 18
"""Bytes of JSON Lines per block (about 1,000 records of MMLU): large enough that a
block's round trip costs little beside its rendering, small enough that memory stays
flat and both workers start at once."""

_State = tuple[TaskRenderer, Callable[[RenderedPrompt], Any], Callable[[list[Any]], Any] | None, str, Path | None, int]
_Job = tuple[int, Any, int | None, int | None, tuple[Sequence[Sequence[str]], int] | None]


def _requests(renderer: TaskRenderer, records: Sequence[Any], first: int, reply: Any) -> Iterable[RenderedPrompt]:
    """The requests of ``records`` (the first at index ``first``), as the serial render
    makes them: the fast path's loop where it renders the task, else record by record."""
    single = renderer.choice_order is None and getattr(renderer.style, "infer_mode", None) is None
    if single and renderer._doc_id is None:
        if renderer.fast_render() is not None:
            many = renderer._fast_path.many
            if many is not None:
                return many(records, renderer._render, first)
    converse = renderer.converse
    return (request for index, record in enumerate(records, first) for request in converse(record, index, reply))


def _run_chunk(state: _State, job: _Job) -> tuple[Any, int, PromptStyleError | None]:
    """In a worker: the outputs of one chunk's requests, in order (joined when the
    caller gave ``join``), its number of records, and the error that stopped it."""
    renderer, fn, join, split, path, max_line = state
    first, items, number, stop, given = job
    error: PromptStyleError | None = None
    if number is not None:  # a block of JSON Lines
        assert path is not None
        records, error = parse_block(items, first, number, split, path, max_line)
    else:
        records = items
    if stop is not None and len(records) >= stop:  # --limit: nothing past it is read, nor its errors
        records, error = records[:stop], None
    reply = reply_callback(given[0], first, given[1]) if given is not None else None
    out: list[Any] = []
    try:
        out.extend(map(fn, _requests(renderer, records, first, reply)))
    except PromptStyleError as exc:
        # the outputs before the bad record still come out, as in the serial render
        error = exc
    return (join(out) if join is not None else out), len(records), error


class _Chunks:
    """The jobs of a split's chunks; an error of the reading process (a line too long,
    no records) is kept in :attr:`error`, to be raised after the chunks before it."""

    def __init__(self, source: Any, split: str, limit: int | None, size: int, block: int, replies: Any) -> None:
        self.error: PromptStyleError | None = None
        self.limit = limit
        self.replies = replies
        self.path: Path | None = None
        if isinstance(source, (str, Path)) and _files(source) is None and Path(source).suffix.lower() != ".json":
            self.path = Path(source)
            check_data_file(self.path, split)
            self._blocks: Iterator[tuple[int, Any, int | None, int]] = (
                (first, data, number, count) for first, number, data, count in byte_chunks(self.path, split, block)
            )
        else:
            records = open_records(source, split)
            if limit is not None and limit < size:
                size = max(limit, 1)

            def chunks() -> Iterator[tuple[int, Any, int | None, int]]:
                first = 0
                for chunk in iter(lambda: list(itertools.islice(records, size)), []):
                    yield first, chunk, None, len(chunk)
                    first += len(chunk)

            self._blocks = chunks()

    def __iter__(self) -> Iterator[_Job]:
        limit, replies = self.limit, self.replies
        try:
            for first, items, number, count in self._blocks:
                if limit is not None and first >= limit:
                    return
                stop = None if limit is None else limit - first
                given = None if replies is None else (replies[first : first + count], len(replies))
                yield first, items, number, stop, given
                if limit is not None and first + count >= limit:
                    return
        except PromptStyleError as exc:
            self.error = exc


def map_rendered_blocks(
    task: Any,
    fn: Callable[[RenderedPrompt], Any],
    join: Callable[[list[Any]], Any] | None,
    *,
    jobs: int,
    limit: int | None = None,
    replies: Sequence[Sequence[str]] | None = None,
    chunk_size: int = CHUNK_SIZE,
    block_size: int = BLOCK_SIZE,
) -> Iterator[tuple[Any, int]]:
    """``(join(outputs), records)`` for each chunk of ``task``'s evaluated split, in
    order, where ``outputs`` are ``fn(request)`` for the chunk's requests (``join``
    ``None``: the list itself) and ``records`` the number of records they render; made
    by ``jobs`` worker processes (``jobs`` 1: in this one). See :func:`map_rendered`.

    :param join: a picklable function (module-level, e.g. ``b"".join``) that joins
        the outputs of a chunk in the worker: one piece per chunk to send back and write.
    :param block_size: bytes of a JSON Lines file per chunk.
    """
    if check_jobs(jobs) == 1:
        made = (fn(request) for request in task.render(limit=limit, replies=replies))
        outputs: list[Any] = []
        failed: PromptStyleError | None = None
        try:
            for output in made:
                outputs.append(output)
                if len(outputs) == chunk_size:
                    yield (join(outputs) if join is not None else outputs), len(outputs)
                    outputs = []
        except PromptStyleError as exc:  # the outputs before it come out first
            failed = exc
        if outputs:
            yield (join(outputs) if join is not None else outputs), len(outputs)
        if failed is not None:
            raise failed
        return
    split = task.config.test_split
    try:
        chunks = _Chunks(task.source(), split, limit, chunk_size, block_size, replies)
        state = (task.renderer, fn, join, split, chunks.path, yaml_limits().max_line_length)
        for outputs, count, error in ordered_map(_run_chunk, state, chunks, jobs=jobs):
            yield outputs, count
            if error is not None:
                raise error
        if chunks.error is not None:
            raise chunks.error
    except DataError as exc:  # as Task.render locates them
        raise exc.locate(key=f"data.{split}") from None


def map_rendered(
    task: Any,
    fn: Callable[[RenderedPrompt], Any],
    *,
    jobs: int,
    limit: int | None = None,
    replies: Sequence[Sequence[str]] | None = None,
    chunk_size: int = CHUNK_SIZE,
    block_size: int = BLOCK_SIZE,
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
    :param chunk_size: records per chunk, for records held in memory.
    :param block_size: bytes per chunk, for a JSON Lines file.
    :returns: the outputs, in the order :meth:`~prompt_style.Task.render` gives requests.
    :raises PromptStyleError: the first bad record's error, after every output before it.
    """
    if check_jobs(jobs) == 1:
        yield from map(fn, task.render(limit=limit, replies=replies))
        return
    blocks = map_rendered_blocks(
        task, fn, None, jobs=jobs, limit=limit, replies=replies, chunk_size=chunk_size, block_size=block_size
    )
    for outputs, _ in blocks:
        yield from outputs
