"""JSON Lines that every consumer can split: one record per line, whatever the text holds.

``json.dumps(ensure_ascii=False)`` leaves three kinds of characters raw that
break consumers: U+2028 and U+2029 (and U+0085), which ``str.splitlines()`` and
JavaScript treat as line ends, and lone surrogates (``"\\ud800"`` is valid JSON
and reaches Python as a lone surrogate), which cannot be encoded as UTF-8 at all.
:func:`dumps_line` writes them as ``\\uXXXX`` escapes: the line is valid
JSON, valid UTF-8, one line, and decodes to exactly the same strings.

Writing many lines (:class:`LineWriter`) checks them a batch at a time: an ASCII
batch (``str.isascii()``, constant time) has none of those characters; another is
searched for the three line ends, and a lone surrogate shows when the batch is
encoded to UTF-8, which writing does anyway. Only a batch that holds one of them
is escaped, line by line, so the bytes written are exactly :func:`dumps_line`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import IO, Any

__all__ = ["dumps_line", "escape_unsafe", "encode_str", "LineWriter"]

_UNSAFE = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")

encode_str: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A ``str`` as a JSON string, exactly as ``json.dumps(s, ensure_ascii=False)``
writes it (the C encoder when there is one); :func:`escape_unsafe` makes it safe."""


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
    return escape_unsafe(json.dumps(value, ensure_ascii=False, default=default))


def _unsafe_ends(text: str) -> bool:
    return "\u2028" in text or "\u2029" in text or "\x85" in text


class LineWriter:
    """Writes JSON lines (each ending with ``\\n``, as ``json.dumps(...,
    ensure_ascii=False)`` and :func:`encode_str` make them) to a text stream,
    ``batch`` lines at a time, making them safe as :func:`dumps_line` does: the
    output is byte for byte that of writing ``dumps_line(value) + "\\n"`` per line.

    When the stream has a binary buffer (a file, standard output) the batch is
    encoded to UTF-8 and written to it: the stream must be UTF-8 (:meth:`for_stream`
    says whether it is), and is flushed first so that what was written to it as
    text comes before.
    """

    def __init__(self, out: IO[str], batch: int = 256) -> None:
        self.out = out
        self.batch = batch
        buffer = getattr(out, "buffer", None)
        encoding = (getattr(out, "encoding", None) or "").lower().replace("_", "-")
        self._binary = buffer is not None and encoding in ("utf-8", "utf8") and hasattr(buffer, "write")
        self._buffer = buffer if self._binary else None

    def write_all(self, lines: Iterable[str]) -> int:
        """Write every line of ``lines``; returns how many. When ``lines`` raises, the
        lines it gave before are written, then the error propagates."""
        pending: list[str] = []
        append = pending.append
        size = self.batch
        count = 0
        if self._binary:
            self.out.flush()
        try:
            for line in lines:
                append(line)
                if len(pending) >= size:
                    count += len(pending)
                    self._write(pending)
                    pending.clear()
        finally:
            if pending:
                count += len(pending)
                self._write(pending)
            if self._buffer is not None:
                self._buffer.flush()
            else:
                self.out.flush()
        return count

    def _write(self, lines: list[str]) -> None:
        text = "".join(lines)
        if text.isascii():
            if self._buffer is None:
                self.out.write(text)
            else:
                self._buffer.write(text.encode("ascii"))
            return
        if _unsafe_ends(text):
            text = "".join([escape_unsafe(line) for line in lines])
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate somewhere in the batch
            text = "".join([escape_unsafe(line) for line in lines])
            data = text.encode("utf-8")
        if self._buffer is None:
            self.out.write(text)
        else:
            self._buffer.write(data)
