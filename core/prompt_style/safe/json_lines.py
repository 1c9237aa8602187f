"""JSON Lines that every consumer can split: one record per line, whatever the text holds.

``json.dumps(ensure_ascii=False)`` leaves three kinds of characters raw that
break consumers: U+2028 and U+2029 (and U+0085), which ``str.splitlines()`` and
JavaScript treat as line ends, and lone surrogates (``"\\ud800"`` is valid JSON
and reaches Python as a lone surrogate), which cannot be encoded as UTF-8 at all.
:func:`dumps_line` writes them as ``\\uXXXX`` escapes: the line is valid
JSON, valid UTF-8, one line, and decodes to exactly the same strings.

:func:`safe_utf8` does the same and gives the UTF-8 bytes, without a search of
the whole text in the common case: an ASCII text (``str.isascii()``, constant
time) has none of those characters; another is searched for the three line ends
only, and a lone surrogate shows when the text is encoded, which writing does
anyway. The escape is one character at a time, so pieces of a line made safe one
by one join to the line made safe whole. :class:`LineWriter` writes such lines a
batch at a time.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

__all__ = [
    "dumps_line",
    "escape_unsafe",
    "dumps_json",
    "encode_str",
    "safe_utf8",
    "json_utf8",
    "LineWriter",
    "json_objects",
]

_UNSAFE = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")

encode_str: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A ``str`` as a JSON string, exactly as ``json.dumps(s, ensure_ascii=False)``
writes it (the C encoder when there is one); :func:`safe_utf8` makes it safe."""


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_unsafe(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``'s) with U+0085, U+2028,
    U+2029 and lone surrogates written as ``\\uXXXX`` escapes; unchanged (the same
    object) when it holds none, which an ASCII text never does."""
    if text.isascii() or not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_escape, text)


def dumps_line(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``value`` as one line of JSON (no newline), safe to write as UTF-8.

    :param default: called for values JSON cannot hold (as ``json.dumps``'s).
    """
    return escape_unsafe(dumps_json(value, default))


def dumps_json(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, default=default)``, with every NaN and
    infinity written as ``null`` (as JavaScript's ``JSON.stringify`` writes them):
    ``NaN`` is not JSON, and strict readers refuse the line."""
    try:
        return json.dumps(value, ensure_ascii=False, default=default, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere
        return json.dumps(_finite(value), ensure_ascii=False, default=default, allow_nan=False)


def safe_utf8(text: str) -> bytes:
    """``escape_unsafe(text).encode("utf-8")``, searching ``text`` only for what it
    can hold (see the module's documentation)."""
    if text.isascii():
        return text.encode("ascii")
    if "\u2028" in text or "\u2029" in text or "\x85" in text:
        text = _UNSAFE.sub(_escape, text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return _UNSAFE.sub(_escape, text).encode("utf-8")


def json_utf8(text: str) -> bytes:
    """``safe_utf8(encode_str(text))``: a ``str`` as a JSON string (quotes included), in
    safe UTF-8. msgspec's encoder (the ``fast`` extra), when installed, makes these bytes
    in one pass, four to seven times as fast as the two steps (it writes every character
    as ``json.dumps(ensure_ascii=False)`` does, in UTF-8: checked on every code point);
    what it does not make safe (U+0085, U+2028, U+2029, a lone surrogate, which it
    refuses) takes the two steps, so the bytes never depend on whether it is installed.
    It is looked up once the process has encoded :data:`_BEFORE_MSGSPEC` characters:
    its import (about 18 ms) would cost a short render more than it saves."""
    encode = _ENCODE[0]
    if encode is None:
        if _WAIT[0] > 0 and type(text) is str:
            _WAIT[0] -= len(text)
            if _WAIT[0] <= 0:
                module = msgspec_json()
                _ENCODE[0] = None if module is None else module.Encoder().encode
        return safe_utf8(encode_str(text))  # (a TypeError for what is not a str)
    if type(text) is str and "\u2028" not in text and "\u2029" not in text and "\x85" not in text:
        try:
            return encode(text)
        except UnicodeEncodeError:  # a lone surrogate
            pass
    return safe_utf8(encode_str(text))


_BEFORE_MSGSPEC = 8 << 20
"""Characters encoded by the standard library before msgspec is looked up: about what
saves its import's time (1.3 to 2 ns a character)."""
_ENCODE: list[Any] = [None]  # msgspec's encode, once looked up and installed
_WAIT = [_BEFORE_MSGSPEC]  # characters still to encode before it is looked up


def msgspec_json() -> Any:
    """``msgspec.json`` when the ``fast`` extra is installed, else ``None`` (its import
    tried once per process, when first needed: it costs start-up time)."""
    if not _MSGSPEC:
        try:
            import msgspec.json
        except ImportError:
            _MSGSPEC.append(None)
        else:
            _MSGSPEC.append(msgspec.json)
    return _MSGSPEC[0]


_MSGSPEC: list[Any] = []


class LineWriter:
    """Writes lines given as UTF-8 bytes (safe ones: :func:`safe_utf8`) to a text
    stream, ``batch`` lines at a time: to its binary buffer when it has one (a file,
    standard output), is UTF-8 and newlines need no translation, after flushing what
    was written to it as text; else decoded, as text.
    """

    def __init__(self, out: IO[str], batch: int = 256) -> None:
        self.out = out
        self.batch = batch
        buffer = getattr(out, "buffer", None)
        encoding = (getattr(out, "encoding", None) or "").lower().replace("_", "-")
        # (where the text layer turns "\n" into os.linesep, it writes the text itself)
        binary = buffer is not None and encoding in ("utf-8", "utf8") and hasattr(buffer, "write")
        binary = binary and os.linesep == "\n"
        self._buffer = buffer if binary else None

    def write_all(self, lines: Iterable[bytes]) -> int:
        """Write every line of ``lines``; returns how many. When ``lines`` raises, the
        lines it gave before are written, then the error propagates."""
        pending: list[bytes] = []
        append = pending.append
        size = self.batch
        count = 0
        buffer = self._buffer
        if buffer is not None:
            self.out.flush()
        write = buffer.write if buffer is not None else self._write_text
        try:
            for line in lines:
                append(line)
                if len(pending) >= size:
                    count += len(pending)
                    write(b"".join(pending))
                    pending.clear()
        finally:
            if pending:
                count += len(pending)
                write(b"".join(pending))
            if buffer is not None:
                buffer.flush()
            else:
                self.out.flush()
        return count

    def write_batches(self, batches: Iterable[list[bytes]]) -> int:
        """Write every line of ``batches`` (lists of lines), each list joined; returns how
        many. When ``batches`` raises, the lines it gave before are written, then the
        error propagates."""
        count = 0
        buffer = self._buffer
        if buffer is not None:
            self.out.flush()
        write = buffer.write if buffer is not None else self._write_text
        join = b"".join
        try:
            for batch in batches:
                count += len(batch)
                write(join(batch))
        finally:
            if buffer is not None:
                buffer.flush()
            else:
                self.out.flush()
        return count

    def _write_text(self, data: bytes) -> None:
        self.out.write(data.decode("utf-8"))


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, infinities) as ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def json_objects(path: str, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines file of
    objects (results, predictions), in order.

    :raises DataError: naming the file (and the line): the file cannot be read, a
        line is not JSON, or not an object.
    """
    from ..errors import DataError
    from .files import open_text
    from .limits import yaml_limits

    limit = yaml_limits().max_line_length
    # A regular file only (never a FIFO or a device), lines of at most max_line_length.
    with open_text(path, what=what, error=DataError) as handle:
        for number, text in enumerate(iter(lambda: handle.readline(limit + 1), ""), 1):
            if len(text) > limit:
                raise DataError(f"line is longer than {limit:,} characters (max_line_length)", file=path, line=number)
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataError(f"not JSON: {exc.msg}", file=path, line=number) from None
            if not isinstance(line, dict):
                raise DataError(f"a line must be a JSON object, not {type(line).__name__}", file=path, line=number)
            yield number, line
