"""Where in a file a dotted key stands, for error messages."""

from __future__ import annotations

from collections.abc import Mapping


def nearest_line(lines: Mapping[str, int], key: str) -> int | None:
    """The line of ``key`` (a dotted path, as :func:`prompt_style.load_yaml` gives
    lines), else of the nearest enclosing key the file writes: ``a.b.c``, then
    ``a.b``, then ``a``; ``None`` when none of them is there."""
    probe = key
    while probe:
        line = lines.get(probe)
        if line is not None:
            return line
        probe = probe.rpartition(".")[0]
    return None
