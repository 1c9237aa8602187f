"""Built-in task-file format: ``native`` (prompt-style's own keys)."""

from __future__ import annotations

from .._markers import hookimpl
from .native import NativeReader
from .opencompass import OpenCompassReader


@hookimpl
def read_task():
    return {"native": NativeReader(), "opencompass": OpenCompassReader()}
