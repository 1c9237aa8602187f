"""The clock templates see: a fixed time (``fixed_clock``, ``PROMPT_STYLE_NOW``) or the real one.

Renders read it through the sandbox (``strftime_now``): a render's own
``now=`` first, then :func:`fixed_time`. Nothing here imports jinja2, and
``datetime`` is imported on first use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

from ..errors import TaskFileError

if TYPE_CHECKING:
    import datetime

__all__ = ["ENV_NOW", "fixed_clock", "fixed_time"]

ENV_NOW = "PROMPT_STYLE_NOW"
_CLOCK: ContextVar["datetime.datetime | None"] = ContextVar("prompt_style_clock", default=None)


def _as_time(now: datetime.datetime | str | None, what: str = "now") -> datetime.datetime | None:
    import datetime  # on first use: most processes never read a clock

    if now is None or isinstance(now, datetime.datetime):
        return now
    if isinstance(now, str):
        try:
            return datetime.datetime.fromisoformat(now.strip())
        except ValueError:
            pass
    raise TaskFileError(f"{what} must be a date and time such as 2025-07-10T12:00:00, not {now!r}", key=what)


@contextlib.contextmanager
def fixed_clock(now: datetime.datetime | str | None) -> Iterator[None]:
    """Renders inside the block see ``now`` as the time (``strftime_now``)."""
    token = _CLOCK.set(_as_time(now))
    try:
        yield
    finally:
        _CLOCK.reset(token)


def fixed_time() -> datetime.datetime | None:
    """The fixed clock in effect outside a render's own ``now``: the innermost
    :func:`fixed_clock`, else ``PROMPT_STYLE_NOW``, else ``None`` (real time)."""
    now = _CLOCK.get()
    if now is not None:
        return now
    text = os.environ.get(ENV_NOW)
    return _as_time(text, ENV_NOW) if text else None
