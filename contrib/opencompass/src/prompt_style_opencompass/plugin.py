"""The prompt-style plugin: the ``opencompass`` exporter (``prompt-style export opencompass``)."""

from __future__ import annotations

from prompt_style import hookimpl

from .exporter import OpenCompassExporter


@hookimpl
def export_task():
    return {"opencompass": OpenCompassExporter()}
