"""The ``prompt_style`` entry point: the ``lighteval`` exporter of ``prompt-style export``.

Listing plugins imports this module, so it imports only ``hookimpl``; the
exporter (:mod:`.exporter`) is imported when an export runs.
"""

from __future__ import annotations

from typing import Any

from prompt_style import hookimpl

__all__ = ["export_task", "LightevalExport"]


class LightevalExport:
    """The ``lighteval`` exporter, imported on first use (see :class:`.exporter.LightevalExporter`)."""

    description = "a lighteval custom tasks module: lighteval ... 'NAME|0' --custom-tasks tasks.py"

    def export(self, request: Any) -> Any:
        from .exporter import LightevalExporter

        return LightevalExporter().export(request)


@hookimpl
def export_task() -> dict[str, LightevalExport]:
    return {"lighteval": LightevalExport()}
