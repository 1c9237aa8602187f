"""Reading records from local JSON Lines and JSON files.

JSON Lines are streamed, so a split of any size renders in constant memory; a
JSON file (an array of objects) is read whole.
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from .errors import DataError, cut
from .safe.json_lines import msgspec_json
from .safe.limits import yaml_limits

__all__ = [
    "iter_records",
    "open_records",
    "map_records",
    "load_records",
    "check_data_file",
    "line_chunks",
    "byte_blocks",
    "block_records",
    "read_block",
    "parse_line",
    "SUPPORTED_SUFFIXES",
    "StreamedSplit",
    "read_whole",
]

SUPPORTED_SUFFIXES = (".jsonl", ".ndjson", ".json")
_PATH = type(Path())  # PosixPath or WindowsPath


class StreamedSplit(Sequence):
    """A split whose records a reader streams (:meth:`stream`: read afresh, in order)
    rather than holds, where it reads the split through (rendering it, iterating
    :func:`iter_records`); as a ``Sequence`` (indexing, ``len``) a subclass reads it whole
    (a few-shot pool). A task-template file's split made by a formatter is one: its
    records, streamed, render in constant memory."""

    def stream(self) -> Iterator[Mapping[str, Any]]:
        raise NotImplementedError

    @property
    def records(self) -> Sequence[Mapping[str, Any]]:
        """The split read whole (kept): what indexing, ``len`` and iteration read."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index):  # type: ignore[override]
        return self.records[index]

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.records)

    def records_of(self, split: str) -> Iterator[Mapping[str, Any]]:
        """:meth:`stream`, each record checked to be a mapping and the split to have
        one, as records given in memory are (a subclass that makes its records itself,
        dicts, may check them its own way)."""
        return _streamed(self, split)


def read_whole(records: Iterable[Any]) -> list[Any]:
    """``list(records)``, read with the garbage collector off: records hold no reference
    cycles, and the collector's passes over a growing list of them while it is read
    cost several times the reading (four times, on 200,000 task-template instances)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return list(records)
    finally:
        if enabled:
            gc.enable()


def _streamed(records: StreamedSplit, split: str) -> Iterator[Mapping[str, Any]]:
    """:meth:`StreamedSplit.stream`, checked as :func:`_given` checks records in memory."""
    index = -1
    for index, record in enumerate(records.stream()):
        if type(record) is not dict and not isinstance(record, Mapping):
            raise DataError(f"split '{split}': record {index} is a {type(record).__name__}, not a mapping")
        yield record
    if index < 0:
        raise DataError(f"split '{split}': the list of records is empty")


def _files(path: Any) -> list[Path] | None:
    """The files of a split given as several files (a tuple of ``Path`` objects, as a
    reader of ``data_files`` lists makes), else ``None``."""
    if isinstance(path, tuple) and path and all(isinstance(p, Path) for p in path):
        return list(path)
    return None


def check_data_file(path: Path | Sequence[Any], split: str) -> None:
    """Raise :class:`DataError` unless ``path`` is an existing file of a supported type
    (records given directly are checked as they are read; several files, each)."""
    files = _files(path)
    if files is not None:
        for file in files:
            check_data_file(file, split)
        return
    if not isinstance(path, (str, Path)):
        return
    if type(path) is not _PATH:  # Path() of a Path costs as much as of a str
        path = Path(path)
    _check_suffix(path, split)
    if not path.is_file():
        try:
            exists = path.exists()
        except (OSError, ValueError):
            exists = False
        if exists and not path.is_dir():
            raise DataError(f"split '{split}': the data file is not a regular file", file=str(path))
        raise DataError(f"split '{split}': data file not found", file=str(path))


def _check_suffix(path: Path, split: str) -> None:
    """:func:`check_data_file`'s check of the file's type; reading the file (``_open_text``)
    says what the rest of it says, in the same words."""
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise DataError(
            f"split '{split}': unsupported data file type {path.suffix or '(none)'!r}",
            file=str(path),
            hint="use JSON Lines (.jsonl) or a JSON array of objects (.json)",
        )


def iter_records(path: str | Path | Sequence[Mapping[str, Any]], split: str = "test") -> Iterator[Mapping[str, Any]]:
    """Yield the records of a data file (or of a list of records) in order.

    :raises DataError: naming the file and line for a missing file, a line that
        is not JSON, a record that is not an object, or a file with no records.
    """
    files = _files(path)
    if files is not None:
        for file in files:
            yield from iter_records(file, split)
        return
    if not isinstance(path, (str, Path)):
        yield from path.records_of(split) if isinstance(path, StreamedSplit) else _given(path, split)
        return
    path = Path(path)
    _check_suffix(path, split)
    if path.suffix.lower() == ".json":
        yield from _load_json(path, split)
        return
    yield from _json_lines(path, split)


def open_records(path: str | Path | Sequence[Mapping[str, Any]], split: str = "test") -> Iterator[Mapping[str, Any]]:
    """:func:`iter_records` for a renderer's loop: records given as a list are checked
    now (the same :class:`DataError`, raised by this call) and iterated directly, a
    JSON Lines file is read by one generator; anything else is :func:`iter_records`."""
    if not isinstance(path, (str, Path)) and _files(path) is None:
        return path.records_of(split) if isinstance(path, StreamedSplit) else iter(_given(path, split))
    if isinstance(path, (str, Path)):
        if type(path) is not _PATH:
            path = Path(path)
        if path.suffix.lower() != ".json":
            _check_suffix(path, split)
            return _json_lines(path, split)
    return iter_records(path, split)


# The scanner json.loads runs, without json.loads's per-call checks (about half its
# time on a record line), run over a block of lines rather than line by line: a line
# that is one JSON object from its first character to its newline parses here to
# exactly what json.loads gives; any other line (blank, leading whitespace, trailing
# text, a byte-order mark, invalid JSON, a value that is not an object) goes to
# json.loads, which gives its value or its error, as before.
_scan = json.JSONDecoder().scan_once
_BLOCK = 1 << 16  # characters read at a time: memory stays constant whatever the file's size


def map_records(
    path: str | Path | Sequence[Mapping[str, Any]],
    split: str,
    fn: Callable[[Mapping[str, Any], int], Any],
    fallback: Callable[[Mapping[str, Any], int], Any],
    many: Callable[..., Iterator[Any]] | None = None,
) -> Iterator[Any]:
    """``fn(record, index)`` for every record of a split, in order, and
    ``fallback(record, index)`` where ``fn`` gives ``None``: a renderer's loop. A JSON
    Lines file is read and mapped in one loop (one generator, not two); records are
    read as :func:`open_records` reads them, with the same errors.

    :param many: ``many(records, fallback, start)`` doing the same for a list of
        records whose first is at index ``start``, given a block of records read at
        once (the fast path's loop, without a call per record)."""
    if isinstance(path, (str, Path)):
        if type(path) is not _PATH:
            path = Path(path)
        if path.suffix.lower() != ".json":
            _check_suffix(path, split)
            return _json_lines(path, split, fn, fallback, many)
    if many is not None:  # a JSON array, several files, a streamed split, records given
        return _blocks(open_records(path, split), fallback, many)
    return _mapped(open_records(path, split), fn, fallback)


def _mapped(records: Iterator[Mapping[str, Any]], fn: Any, fallback: Any, start: int = 0) -> Iterator[Any]:
    for index, record in enumerate(records, start):
        made = fn(record, index)
        yield made if made is not None else fallback(record, index)


_STREAMED_BLOCK = 256  # records handed to ``many`` at once


def _blocks(records: Iterator[Mapping[str, Any]], fallback: Any, many: Any) -> Iterator[Any]:
    """:func:`map_records` of records read otherwise than from one JSON Lines file (a
    JSON array, a formatter's streamed split, ...): ``many`` over blocks of them. When
    reading a record raises, the records read before it are mapped first, then the
    error is raised."""
    start = 0
    while True:
        block: list[Mapping[str, Any]] = []
        error = None
        try:
            for record in records:
                block.append(record)
                if len(block) == _STREAMED_BLOCK:
                    break
        except Exception as exc:  # raised after the records before it
            error = exc
        if block:
            yield from many(block, fallback, start)
            start += len(block)
        if error is not None:
            raise error
        if len(block) < _STREAMED_BLOCK:
            return


def _json_lines(path: Path, split: str, fn: Any = None, fallback: Any = None, many: Any = None) -> Iterator[Any]:
    """The records of a JSON Lines file; with ``fn``, what :func:`map_records` gives.

    Read a block at a time: a line longer than a block is gathered in pieces and joined
    once (linear in its length), up to ``max_line_length`` characters. A large file is
    read as bytes by msgspec when the ``fast`` extra is installed (:func:`_byte_lines`),
    which hands the rest of the file to :func:`_text_lines` at the first block it does
    not take whole.

    Not a generator itself: it returns the reader's, so that a record passes through
    one generator fewer on its way to the caller. Nothing is read before the first
    record is asked for; every error is raised then.
    """
    if not _FAST or _FAST[0] is not None:  # (no stat once msgspec is known absent)
        try:
            size = os.stat(path).st_size
        except (OSError, ValueError):
            size = 0  # opening it says what is wrong
        if size >= _FAST_BLOCK:
            decode_lines = _FAST[0] if _FAST else _fast_decoder()
            if decode_lines is not None:
                return _byte_lines(path, split, fn, fallback, many, decode_lines)
    return _text_lines(path, split, fn, fallback, many, 0, 0, 0)


def _text_lines(
    path: Path, split: str, fn: Any, fallback: Any, many: Any, offset: int, count: int, before: int
) -> Iterator[Any]:
    """:func:`_json_lines` read as text (from byte ``offset``, after ``count`` records
    on ``before`` lines)."""
    scan = _scan
    limit = yaml_limits().max_line_length
    try:
        # universal newlines; a leading BOM dropped, as datasets does (the utf-8-sig
        # codec would too, with a decoder written in Python)
        with _open_text(path, split, "utf-8", small=True, offset=offset) as handle:
            pieces: list[str] = []  # the unfinished line, in the blocks read since its start
            pending = 0  # its length
            first = offset == 0
            while True:
                chunk = handle.read(_BLOCK)
                if first:
                    first = False
                    if chunk[:1] == "\ufeff":
                        chunk = chunk[1:]
                if chunk:
                    cut = chunk.rfind("\n") + 1  # the block ends after its last complete line
                    if not cut:
                        pieces.append(chunk)
                        pending += len(chunk)
                        if pending > limit:
                            raise _line_too_long(split, path, before + 1, limit)
                        continue
                    if pieces:
                        if pending + chunk.find("\n") > limit:
                            raise _line_too_long(split, path, before + 1, limit)
                        pieces.append(chunk)
                        text = "".join(pieces)
                        stop = len(text) - len(chunk) + cut
                    else:
                        text, stop = chunk, cut
                    rest = text[stop:]
                    pieces = [rest] if rest else []
                    pending = len(rest)
                elif pieces:  # the last line, without a newline
                    text = "".join(pieces)
                    stop = len(text)
                    pieces = []
                else:
                    break
                if limit < _BLOCK:  # a limit below a block: lines within one are checked too
                    _check_lengths(text, stop, limit, split, path, before)
                records = _whole_lines(text, stop)
                if records is not None:  # the usual block: one object on every line
                    if fn is None:
                        count += len(records)
                        yield from records
                    elif many is not None:
                        yield from many(records, fallback, count)
                        count += len(records)
                    else:
                        for record in records:
                            made = fn(record, count)
                            yield made if made is not None else fallback(record, count)
                            count += 1
                    before += text.count("\n", 0, stop)
                    continue
                pos = 0
                while pos < stop:
                    eol = text.find("\n", pos, stop)
                    if eol < 0:
                        eol = stop
                    try:
                        record, end = scan(text, pos)
                    except Exception:
                        end = -1
                    if end == eol and type(record) is dict:
                        pos = eol + 1
                        if fn is None:
                            count += 1
                            yield record
                            continue
                        made = fn(record, count)
                        yield made if made is not None else fallback(record, count)
                        count += 1
                        continue
                    line = text[pos : eol + 1]
                    number = before + text.count("\n", 0, pos) + 1
                    pos = eol + 1
                    if not line.strip():
                        continue
                    record = parse_line(line, number, count, split, path)
                    if fn is None:
                        count += 1
                        yield record
                        continue
                    made = fn(record, count)
                    yield made if made is not None else fallback(record, count)
                    count += 1
                before += text.count("\n", 0, stop)
    except UnicodeDecodeError as exc:
        raise DataError(f"split '{split}': file is not UTF-8 ({exc.reason})", file=str(path)) from None
    if count == 0:
        raise DataError(f"split '{split}': the data file has no records", file=str(path))


# msgspec (the `fast` extra), when installed, parses a block's lines about three times
# as fast as the scanner, in one call, to exactly what json.loads gives: the same numbers
# (integers of any size, floats correctly rounded), strings, and objects (a repeated key
# keeps its first place and its last value). What json.loads reads and msgspec refuses
# (NaN, Infinity, 1e400, lone surrogate escapes), and any bad line, goes to the scanner
# as before; so does a line that might nest deeper than json.loads's recursion limit.
# The output bytes never depend on whether it is installed.
_FAST: list[Any] = []  # [decode_lines or None], looked up on the first large block
_FAST_BLOCK = 1 << 14  # smaller blocks (small files) are not worth its import
_DEEP_LINE = 1800  # a line nesting 900 levels holds at least 1,800 brackets


_BOM = b"\xef\xbb\xbf"


def _byte_lines(path: Path, split: str, fn: Any, fallback: Any, many: Any, decode_lines: Any) -> Iterator[Any]:
    """:func:`_json_lines` of a large file, its blocks of whole lines read as bytes and
    parsed by msgspec (no text made of them: msgspec checks the UTF-8 itself). The first
    block it does not take whole — a carriage return (universal newlines), a line
    longer than a block or than ``max_line_length``, a line that is not one object, bad
    UTF-8, the last line without a newline — and the rest of the file are read by
    :func:`_json_lines` from that block's first byte, with the same records and errors.

    The blocks' results are chained in C (:func:`_byte_blocks` gives an iterator a
    block): a record passes through no generator of the reader's on its way out."""
    return chain.from_iterable(_byte_blocks(path, split, fn, fallback, many, decode_lines))


def _byte_blocks(path: Path, split: str, fn: Any, fallback: Any, many: Any, decode_lines: Any) -> Iterator[Any]:
    """:func:`_byte_lines`' results, an iterator (or list) a block, the text reader's last."""
    count = before = 0
    limit = yaml_limits().max_line_length
    offset = 0
    with _open_text(path, split, binary=True) as handle:
        read = handle.read
        rest = b""
        first = True
        while True:
            chunk = read(_BLOCK)
            if first:
                first = False
                if chunk[:3] == _BOM:  # dropped, as the text reader drops it
                    chunk = chunk[3:]
                    offset = 3
            if not chunk:
                if not rest and count:
                    return  # all read: nothing for the text reader to say
                break
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n") + 1
            if not cut:
                break
            block = data[:cut]
            records = _fast_block(decode_lines, block, limit)
            if records is None:
                break
            rest = data[cut:]
            # (each consumed whole before this generator resumes: count is the records before the next)
            if fn is None:
                yield records
            elif many is not None:
                yield many(records, fallback, count)
            else:
                yield _mapped(records, fn, fallback, count)
            count += len(records)
            before += len(records)  # one line each
            offset += cut
    # the rest: from the block not taken, or the last line without a newline
    yield _text_lines(path, split, fn, fallback, many, offset, count, before)


def _fast_block(decode_lines: Any, block: bytes, limit: int) -> list[dict[str, Any]] | None:
    """The records of a block of whole lines (bytes), as :func:`_whole_lines` gives them
    for its text; ``None`` where the text reader must decide (a carriage return, which
    universal newlines would turn into a line break; a line that may be too long)."""
    if len(block) > limit or b"\r" in block:
        return None
    return _fast_records(decode_lines, block)


def _fast_decoder() -> Any:
    if not _FAST:
        module = msgspec_json()
        _FAST.append(None if module is None else module.Decoder().decode_lines)
    return _FAST[0]


def _fast_records(decode_lines: Any, body: Any) -> list[dict[str, Any]] | None:
    """The records of ``body`` (text or bytes, whole lines) by msgspec's ``decode_lines``,
    exactly ``json.loads`` of each line; ``None`` where the scanner must read the lines:
    a body msgspec refuses, a line that is not one JSON object, a line break that does
    not end a line's ``}`` and start the next line's ``{`` (a blank line, a value over two
    lines, spaces before a line break), or a line long enough to nest near the recursion
    limit.

    msgspec reads a line break as a space, so its records alone do not say where lines
    end. The breaks between ``}`` and ``{`` say it: none can lie inside a value (a
    ``}`` followed by a ``{`` is not JSON there) or inside a string (which may not hold
    a line break), so each lies between two records, at most one between any two. With
    every line break but the body's last of that kind, and one more record than such
    breaks, every record is one whole line.
    """
    if type(body) is str:
        newline, between, mark = "\n", "}\n{", "}\t{"
    else:
        newline, between, mark = b"\n", b"}\n{", b"}\t{"
    # one search for the 3-character text (which skips), a copy and one memchr: about
    # what counting the line breaks one character at a time cost, and exact
    lines = body.split(between)
    stray = mark.join(lines).find(newline)
    if stray >= 0 and stray != len(body) - 1:
        return None  # (the last character may be the last line's line break)
    if len(body) >= _DEEP_LINE and max(map(len, lines)) >= _DEEP_LINE - 2 and _has_deep_line(body.split(newline)):
        return None
    try:
        records = decode_lines(body)
    except Exception:  # msgspec.DecodeError, ValidationError, UnicodeDecodeError, RecursionError
        return None
    if len(records) != len(lines):
        return None
    for record in records:
        if type(record) is not dict:
            return None
    return records


def _has_deep_line(lines: list[Any]) -> bool:
    """Whether one of ``lines`` (``str`` or ``bytes``) has enough brackets to nest 900 levels."""
    square, curly = ("[", "{") if type(lines[0]) is str else (b"[", b"{")
    return any(len(line) >= _DEEP_LINE and line.count(square) + line.count(curly) >= _DEEP_LINE // 2 for line in lines)


def _whole_lines(text: str, stop: int) -> list[dict[str, Any]] | None:
    """The records of ``text[:stop]`` (whole lines) when each of its lines is one JSON
    object from its first character to its newline, parsed as ``json.loads`` parses
    it; ``None`` for a block with any other line (blank, padded, invalid, not an
    object, two values, one value over two lines), which the line-by-line loop reads.
    One tight loop, no search for each line's end: every object must end at a newline,
    and there must be as many objects as lines. A large block goes to msgspec first
    when it is installed (:func:`_fast_records`)."""
    if stop >= _FAST_BLOCK:
        decode_lines = _FAST[0] if _FAST else _fast_decoder()
        if decode_lines is not None:
            records = _fast_records(decode_lines, text[:stop])
            if records is not None:
                return records
    scan = _scan
    records: list[dict[str, Any]] = []
    append = records.append
    pos = 0
    try:
        while pos < stop:
            record, pos = scan(text, pos)
            if type(record) is not dict or pos > stop or (pos < stop and text[pos] != "\n"):
                return None  # (past stop: a value running on into the next block)
            append(record)
            pos += 1
    except Exception:  # invalid JSON, nesting too deep...: the line-by-line loop says what
        return None
    lines = text.count("\n", 0, stop) + (text[stop - 1] != "\n")
    return records if len(records) == lines else None


def _check_lengths(text: str, stop: int, limit: int, split: str, path: Path, before: int) -> None:
    """Raise for the first of the whole lines in ``text[:stop]`` longer than ``limit``
    (``before``: the lines of the file before ``text``)."""
    for number, line in enumerate(text[:stop].split("\n"), before + 1):
        if len(line) > limit:
            raise _line_too_long(split, path, number, limit)


def _line_too_long(split: str, path: Path, line: int, limit: int) -> DataError:
    return DataError(
        f"split '{split}': line is longer than {limit:,} characters (limit max_line_length={limit:,})",
        file=str(path),
        line=line,
        hint="if the data is trusted, raise it with --budget max_line_length=N or PROMPT_STYLE_LIMITS",
    )


def _open_text(
    path: Path, split: str, encoding: str = "utf-8-sig", small: bool = False, binary: bool = False, offset: int = 0
) -> Any:
    """``path`` opened as text (universal newlines; ``utf-8-sig``: a leading BOM dropped,
    as datasets does): a regular file only, never blocked on (a FIFO, a device).
    ``small``: a file of at most a block is read at once (:class:`_WholeText`, whose
    ``read`` is all a caller may use)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise DataError(f"split '{split}': data file not found", file=str(path)) from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or "the name holds a NUL character"
        raise DataError(f"split '{split}': cannot read the data file: {reason}", file=str(path)) from None
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if stat.S_ISDIR(mode):  # as check_data_file names it
            raise DataError(f"split '{split}': data file not found", file=str(path))
        if not stat.S_ISREG(mode):
            raise DataError(f"split '{split}': the data file is not a regular file", file=str(path))
        if offset:  # (the rest of a file read in part as bytes)
            os.lseek(fd, offset, os.SEEK_SET)
        if binary:
            return open(fd, "rb", closefd=True)
        if small and info.st_size - offset < _BLOCK:
            return _WholeText(fd, encoding)
        return open(fd, encoding=encoding, closefd=True)
    except BaseException:
        os.close(fd)
        raise


class _WholeText:
    """A small file's text, read and decoded at once as ``open(fd, encoding=...)`` would
    give it (universal newlines): a few-shot split of a handful of records costs a
    read, not the three layers of a text stream. Closes ``fd``."""

    def __init__(self, fd: int, encoding: str) -> None:
        try:
            parts = []
            while True:  # (to its end, should it have grown since it was looked at)
                part = os.read(fd, _BLOCK)
                if not part:
                    break
                parts.append(part)
        finally:
            os.close(fd)
        self._data: bytes | None = b"".join(parts)
        self._encoding = encoding

    def read(self, size: int = -1) -> str:
        data = self._data
        if data is None:
            return ""
        self._data = None
        text = data.decode(self._encoding)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text

    def __enter__(self) -> "_WholeText":
        return self

    def __exit__(self, *exc: object) -> None:
        self._data = None


def parse_line(line: str, number: int, count: int, split: str, path: Path) -> dict[str, Any]:
    """The record on one non-blank JSON Lines line (``number``: its line in the file;
    ``count``: the record's index), or the :class:`DataError` that names it."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"split '{split}': line is not valid JSON ({exc.msg} at column {exc.colno})",
            file=str(path),
            line=number,
        ) from None
    except (ValueError, RecursionError) as exc:
        raise _unreadable(exc, split, path, number) from None
    if not isinstance(record, dict):
        raise DataError(
            f"split '{split}': record {count} is a JSON {type(record).__name__}, not an object",
            file=str(path),
            line=number,
        )
    return record


def line_chunks(path: Path, split: str, size: int) -> Iterator[list[tuple[int, str]]]:
    """The non-blank lines of a JSON Lines file, unparsed, ``size`` at a time, each with
    its line number: for workers that parse and render them (:mod:`prompt_style.parallel`),
    so the reading process only splits lines. Lines are numbered and blank lines
    skipped as :func:`iter_records` does; :func:`parse_line` gives each line's record."""
    chunk: list[tuple[int, str]] = []
    count = 0
    limit = yaml_limits().max_line_length
    try:
        with _open_text(path, split) as handle:  # universal newlines, a leading BOM dropped
            for number, line in enumerate(iter(lambda: handle.readline(limit + 1), ""), 1):
                if len(line) > limit and line[-1] != "\n":  # (its newline aside, a line may have limit)
                    raise _line_too_long(split, path, number, limit)
                if line.isspace() or not line:
                    continue
                chunk.append((number, line))
                count += 1
                if len(chunk) == size:
                    yield chunk
                    chunk = []
    except UnicodeDecodeError as exc:
        raise DataError(f"split '{split}': file is not UTF-8 ({exc.reason})", file=str(path)) from None
    if chunk:
        yield chunk
    if count == 0:
        raise DataError(f"split '{split}': the data file has no records", file=str(path))


_NOT_AN_OBJECT_LINE = re.compile(rb"\n(?!\{)")


def byte_blocks(path: Path, split: str, size: int) -> Iterator[tuple[int, int, int, int, int]]:
    """A JSON Lines file as blocks of whole lines, about ``size`` bytes each, for workers
    that read, decode, parse and render a block each (:mod:`prompt_style.parallel`), so
    that the reading process does almost nothing per record: ``(first record index,
    first line number, offset in the file, length in bytes, records in the block)``.
    A leading BOM is left out of the first block; records are counted as
    :func:`iter_records` counts them (blank lines skipped, newlines universal), in C
    unless a line of the block does not start with ``{``. :func:`read_block` reads a
    block and :func:`block_records` gives its records."""
    limit = yaml_limits().max_line_length
    index, number, offset = 0, 1, 0
    with _open_text(path, split, binary=True) as handle:
        pieces: list[bytes] = []
        pending = 0
        first = True
        while True:
            data = handle.read(size)
            if first:
                first = False
                if data[:3] == _BOM:
                    data, offset = data[3:], 3
            if data:
                cut = data.rfind(b"\n") + 1
                if not cut:
                    pieces.append(data)
                    pending += len(data)
                    if pending > 4 * limit + 4:  # more characters than the limit, whatever they are
                        raise _line_too_long(split, path, number, limit)
                    continue
                pieces.append(data[:cut])
                raw = b"".join(pieces)
                pieces = [data[cut:]] if cut < len(data) else []
                pending = len(data) - cut
            elif pieces:  # the last line, without a newline
                raw = b"".join(pieces)
                pieces = []
            else:
                break
            block = _universal(raw)
            lines = block.count(b"\n") + (block[-1:] != b"\n")
            if block[:1] == b"{" and not _NOT_AN_OBJECT_LINE.search(block, 0, len(block) - 1):
                records = lines
            else:  # blank lines are not records: counted as the readers count them
                try:
                    records = sum(1 for line in block.decode("utf-8").split("\n") if line.strip())
                except UnicodeDecodeError:
                    records = lines  # the worker reports it, after the records before it
            if records:
                yield index, number, offset, len(raw), records
            index += records
            number += lines
            offset += len(raw)
    if index == 0:
        raise DataError(f"split '{split}': the data file has no records", file=str(path))


_BOM = b"\xef\xbb\xbf"


def _universal(raw: bytes) -> bytes:
    """Universal newlines (a block ends at a ``\\n``: no ``\\r\\n`` spans two)."""
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in raw else raw


def read_block(fd: int, offset: int, length: int) -> bytes:
    """A block of :func:`byte_blocks`, read from ``fd`` (the data file, open for reading)."""
    parts = []
    while length > 0:
        part = os.pread(fd, length, offset)
        if not part:
            break
        parts.append(part)
        offset += len(part)
        length -= len(part)
    return _universal(b"".join(parts))


def block_records(
    block: bytes, split: str, path: Path, number: int, index: int, limit: int | None = None
) -> tuple[list[dict[str, Any]], DataError | None]:
    """The records of a block of :func:`byte_blocks` (``number``: its first line's number
    in the file, ``index``: its first record's index), and the error that stopped them
    (the records before it are given), as :func:`iter_records` reads and reports them."""
    if len(block) >= _FAST_BLOCK:
        decode_lines = _FAST[0] if _FAST else _fast_decoder()
        if decode_lines is not None:  # msgspec, on the bytes (see _byte_lines)
            records = _fast_block(decode_lines, block, yaml_limits().max_line_length if limit is None else limit)
            if records is not None:
                return records, None
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = block.rfind(b"\n", 0, exc.start) + 1  # the whole lines before the bad byte
        records, error = block_records(block[:good], split, path, number, index, limit) if good else ([], None)
        return records, error or DataError(f"split '{split}': file is not UTF-8 ({exc.reason})", file=str(path))
    if limit is None:  # (a worker process is given the reading process's max_line_length)
        limit = yaml_limits().max_line_length
    if len(text) <= limit:
        stop = len(text)
        whole = _whole_lines(text, stop)
        if whole is not None:
            return whole, None
    records: list[dict[str, Any]] = []
    for line in text.split("\n"):
        if len(line) > limit:
            return records, _line_too_long(split, path, number, limit)
        if line.strip():
            try:
                records.append(parse_line(line, number, index + len(records), split, path))
            except DataError as exc:
                return records, exc
        number += 1
    return records, None


def _load_json(path: Path, split: str) -> list[dict[str, Any]]:
    try:
        with _open_text(path, split) as handle:
            data = json.loads(handle.read())
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and exc.lineno > 1:
            # JSON Lines in a .json file, which Hugging Face datasets' json loader reads too.
            return list(_json_lines(path, split))
        hint = "is it JSON Lines? name it .jsonl" if exc.msg == "Extra data" else None
        raise DataError(
            f"split '{split}': not valid JSON ({exc.msg} at column {exc.colno})",
            file=str(path),
            line=exc.lineno,
            hint=hint,
        ) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"split '{split}': file is not UTF-8 ({exc.reason})", file=str(path)) from None
    except (ValueError, RecursionError) as exc:
        raise _unreadable(exc, split, path, None) from None
    except MemoryError:
        raise DataError(
            f"split '{split}': the JSON data file is too large to read at once",
            file=str(path),
            hint="write it as JSON Lines (.jsonl), which is read one record at a time",
        ) from None
    if not isinstance(data, list):
        raise DataError(
            f"split '{split}': a JSON data file must hold an array of objects, not a {type(data).__name__}",
            file=str(path),
        )
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise DataError(
                f"split '{split}': record {index} is a JSON {type(record).__name__}, not an object",
                file=str(path),
            )
    if not data:
        raise DataError(f"split '{split}': the data file has no records", file=str(path))
    return data


def _unreadable(exc: Exception, split: str, path: Path, line: int | None) -> DataError:
    """JSON that Python cannot hold: nesting too deep, or an integer too long to convert."""
    if isinstance(exc, RecursionError):
        reason = "values nest too deeply"
    else:
        reason = str(exc).split(";")[0]
    return DataError(f"split '{split}': the JSON cannot be read ({reason})", file=str(path), line=line)


def _given(records: Sequence[Any], split: str) -> Sequence[Mapping[str, Any]]:
    if not isinstance(records, Sequence) or isinstance(records, (str, bytes)):
        raise DataError(f"split '{split}': data must be a file path or a list of records, not {cut(records)}")
    if records and set(map(type, records)) == {dict}:  # the usual case, checked in one pass of C
        return records
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise DataError(f"split '{split}': record {index} is a {type(record).__name__}, not a mapping")
    if not records:
        raise DataError(f"split '{split}': the list of records is empty")
    return records


def load_records(path: str | Path | Sequence[Mapping[str, Any]], split: str = "test") -> Sequence[Mapping[str, Any]]:
    """All records of a data file, as a list (see :func:`iter_records`)."""
    if not isinstance(path, (str, Path)) and _files(path) is None:
        return _given(path, split)
    return list(open_records(path, split))
