"""The JSON lines ``prompt-style render --format jsonl`` writes, made in the render's loop.

Each line is a request's JSON with its provenance and fingerprint
(:meth:`Provenance.line_bytes <prompt_style.provenance.Provenance.line_bytes>`), as
UTF-8 with its newline. For the records the task's fast path takes
(:mod:`prompt_style.fastpath`), no prompt object is made at all: the fast path's
loop hands the fields that vary (index, text, continuations, target) to
:meth:`Provenance.fast_line <prompt_style.provenance.Provenance.fast_line>`, which
writes the line from them, the text every prompt of the task shares encoded and
hashed once. Every other record is rendered as :meth:`Task.render
<prompt_style.Task.render>` renders it and its prompt's line made the usual way.
The bytes are the same either way (``tests/test_jsonl.py`` holds them equal).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from .data import _given as _given_records
from .data import map_records
from .errors import DataError
from .lines import PromptEncoder

__all__ = ["json_lines", "json_line_batches"]


def json_lines(
    task: Any,
    limit: int | None = None,
    *,
    replies: Any = None,
    default_for: Callable[[int], Callable[[Any], Any]] | None = None,
) -> Iterator[bytes]:
    """Each request's JSON line of ``task`` (a :class:`~prompt_style.Task`), in the
    order of ``task.render(limit, replies=replies)``; see the module's documentation.

    :param default_for: given a prompt's ``index``, the ``default`` for ``json.dumps``
        (for values JSON cannot hold), as :class:`~prompt_style.lines.PromptEncoder` takes it.
    """
    line_of, loop = _lines_of(task, default_for)
    if loop is None:
        for prompt in task.render(limit, replies=replies):
            yield line_of(prompt)
        return
    fast_line, general_line, many = loop
    split = task.config.test_split
    source = task.source()
    try:
        if isinstance(source, list) and limit is None:  # records in memory
            yield from many(_given_records(source, split), general_line)
            return
        lines = map_records(source, split, fast_line, general_line, many)
        yield from lines if limit is None else itertools.islice(lines, limit)
    except DataError as exc:
        raise exc.locate(key=f"data.{split}") from None


def json_line_batches(
    task: Any,
    limit: int | None = None,
    *,
    replies: Any = None,
    default_for: Callable[[int], Callable[[Any], Any]] | None = None,
) -> Iterator[list[bytes]]:
    """:func:`json_lines`'s lines, in order, in lists: for the fast path's records a
    list per block of the data file, made by ``list.extend`` (no generator resumed per
    line). When making a line raises, the lines made before it come first, then the
    error."""
    loop = _lines_of(task, default_for)[1] if limit is None else None
    source = task.source() if loop is not None else None
    if loop is None or isinstance(source, list):  # (the lines one by one, in lists of _BATCH)
        lines = json_lines(task, limit, replies=replies, default_for=default_for)
        while True:
            count = 0
            for batch in _collected(itertools.islice(lines, _BATCH)):
                count = len(batch)
                yield batch
            if count < _BATCH:
                return
    fast_line, general_line, many = loop

    def one(record: Any, index: int) -> list[bytes] | None:
        made = fast_line(record, index)
        return None if made is None else [made]

    def general(record: Any, index: int) -> list[bytes]:
        return [general_line(record, index)]

    def block(records: Any, fallback: Any, start: int) -> Iterator[list[bytes]]:
        # (fallback is general(): the fast path's loop is given general_line itself)
        return _collected(many(records, general_line, start))

    split = task.config.test_split
    try:
        yield from map_records(source, split, one, general, block)
    except DataError as exc:
        raise exc.locate(key=f"data.{split}") from None


_BATCH = 256  # lines per list where they come one at a time
_NONE: Any = object()


def _collected(lines: Iterator[bytes]) -> Iterator[list[bytes]]:
    """``lines`` in one list, made by ``list.extend`` (no generator resumed per line).
    When ``lines`` raises, the lines before the error come first, then the error."""
    out: list[bytes] = []
    try:
        out.extend(lines)
    except BaseException:
        if out:
            yield out
        raise
    if out:
        yield out


def _lines_of(task: Any, default_for: Any) -> tuple[Callable[[Any], bytes], tuple[Any, Any, Any] | None]:
    """``(line_of, loop)``: a prompt's line, and :func:`fused_loop` of ``task`` (``None``
    when its prompts' lines are made one by one)."""
    encoder = PromptEncoder(default_for)
    line_bytes = task.provenance.line_bytes

    def line_of(prompt: Any) -> bytes:
        return line_bytes(prompt, encoder)

    return line_of, _fused(task, encoder, line_of)


def _fused(task: Any, encoder: PromptEncoder, line_of: Callable[[Any], bytes]) -> tuple[Any, Any, Any] | None:
    """:func:`fused_loop` of a :class:`~prompt_style.Task`."""
    return fused_loop(task.renderer, task.provenance, encoder, line_of)


def fused_loop(
    renderer: Any, provenance: Any, encoder: PromptEncoder, line_of: Callable[[Any], bytes]
) -> tuple[Any, Any, Any] | None:
    """``(fast, general, many)`` giving lines, as :func:`~prompt_style.data.map_records`
    takes them, when the fast path of ``renderer`` (a task's
    :class:`~prompt_style.TaskRenderer`) makes its lines itself with ``provenance``
    (the task's); else ``None`` (the lines of its prompts, one by one)."""
    # what Task.render hands to its fast path's loop, and nothing else
    if renderer.choice_order is not None or renderer._doc_id is not None:
        return None
    if getattr(renderer.style, "infer_mode", None) is not None:  # multi-turn
        return None
    fast = renderer.fast_render()
    path = renderer._fast_path
    if fast is None or path is None:
        return None
    emitting = getattr(path, "lines_emitting", None)
    if emitting is None and (path.lines is None or path.deferred is None):
        return None
    emit = None
    if emitting is None:
        emit = provenance.fast_line(encoder, path.deferred)
        if emit is None:
            return None
    general = renderer._render

    def general_line(record: Any, index: int) -> bytes:
        return line_of(general(record, index))

    def fast_line(record: Any, index: int) -> bytes | None:
        made = fast(record, index)
        return None if made is None else line_of(made)

    if emitting is not None:  # an emit per DeferredDialogue (a fast path per description)
        emits: dict[int, Any] = {}

        def emit_for(deferred: Any) -> Any:
            made = emits.get(id(deferred), _NONE)
            if made is _NONE:
                made = emits[id(deferred)] = (deferred, provenance.fast_line(encoder, deferred))
            return made[1]

        many = functools.partial(emitting, emit_for=emit_for, line_of=line_of)
    else:
        many = functools.partial(path.lines, emit=emit, line_of=line_of)
    return fast_line, general_line, many


def record_lines(
    renderer: Any,
    provenance: Any,
    records: Any,
    start: int,
    default_for: Callable[[int], Callable[[Any], Any]] | None = None,
    state: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    """The JSON lines of ``records`` (the first at index ``start``) of a task that is not
    multi-turn, made as :func:`json_lines` makes them. ``state``: a dict kept between
    calls for the same task (the encoder and the loop, made once)."""
    if state is None:
        state = {}
    made = state.get("loop")
    if made is None:
        encoder = PromptEncoder(default_for)
        line_bytes = provenance.line_bytes

        def line_of(prompt: Any) -> bytes:
            return line_bytes(prompt, encoder)

        made = state["loop"] = (line_of, fused_loop(renderer, provenance, encoder, line_of))
    line_of, loop = made
    if loop is not None:
        return loop[2](records, loop[1], start)
    return _each(renderer, line_of, records, start)


def _each(renderer: Any, line_of: Callable[[Any], bytes], records: Any, start: int) -> Iterator[bytes]:
    converse = renderer.converse  # (a record's choice orders too)
    for index, record in enumerate(records, start):
        for request in converse(record, index):
            yield line_of(request)
