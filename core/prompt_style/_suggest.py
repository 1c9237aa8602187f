"""Did-you-mean suggestions for unknown names."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """A hint naming the closest known names, or ``None`` when nothing is close."""
    import difflib  # on the first unknown name, not at start-up

    close = difflib.get_close_matches(str(name), sorted(known), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"


def suggest(name: object, known: Iterable[str], *, listing: str, shown: Iterable[str] | None = None) -> str:
    """The hint for an unknown ``name``: :func:`did_you_mean`'s, else ``"LISTING: a, b"``
    naming the known names (only ``shown`` when given; ``none`` when there are none)."""
    known = list(known)
    close = did_you_mean(str(name), known)
    if close:
        return close
    return f"{listing}: {', '.join(known if shown is None else shown) or 'none'}"
