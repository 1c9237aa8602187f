"""JSON Lines that every consumer can split: one record per line, whatever the text holds.

``json.dumps(ensure_ascii=False)`` leaves three kinds of characters raw that
break consumers: U+2028 and U+2029 (and U+0085), which ``str.splitlines()`` and
JavaScript treat as line ends, and lone surrogates (``"\\ud800"`` is valid JSON
and reaches Python as a lone surrogate), which cannot be encoded as UTF-8 at all.
:func:`dumps_line` writes them as ``\\uXXXX`` escapes: the line is valid
JSON, valid UTF-8, one line, and decodes to exactly the same strings.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["dumps_line", "json_objects"]

_UNSAFE = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps_line(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``value`` as one line of JSON (no newline), safe to write as UTF-8.

    :param default: called for values JSON cannot hold (as ``json.dumps``'s).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, default=default, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere: null, as JSON.stringify writes it
        text = json.dumps(_finite(value), ensure_ascii=False, default=default, allow_nan=False)
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(_escape, text)
    return text


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
