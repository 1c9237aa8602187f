"""Did-you-mean suggestions for unknown names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """A hint naming the closest known names, or ``None`` when nothing is close."""
    import difflib  # on the first unknown name, not at start-up

    close = difflib.get_close_matches(str(name), sorted(known), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"


def record_keys(record: Any, missing: object = None) -> str:
    """The hint for a field ``missing`` from ``record``: the record's keys closest to
    it (a mistyped field), then the keys it has (the first twelve)."""
    if not isinstance(record, Mapping):
        return f"the value is a {type(record).__name__}"
    keys = [str(key) for key in record]
    listed = ", ".join(keys[:12]) + (", ..." if len(keys) > 12 else "")
    has = f"the record has: {listed}" if keys else "the record is empty"
    close = did_you_mean(str(missing), keys) if missing is not None and keys else None
    return f"{close} {has}" if close else has


def undefined_name(message: str | None) -> str | None:
    """The name in Jinja's ``'name' is undefined`` (a field the record lacks), else ``None``."""
    if message and message.endswith("' is undefined") and message.startswith("'"):
        return message[1:-14]
    return None


def suggest(name: object, known: Iterable[str], *, listing: str, shown: Iterable[str] | None = None) -> str:
    """The hint for an unknown ``name``: :func:`did_you_mean`'s, else ``"LISTING: a, b"``
    naming the known names (only ``shown`` when given; ``none`` when there are none)."""
    known = list(known)
    close = did_you_mean(str(name), known)
    if close:
        return close
    return f"{listing}: {', '.join(known if shown is None else shown) or 'none'}"
