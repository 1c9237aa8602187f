"""The built-in plugin for task-template files, registered like any third-party one.

It provides the ``task-template`` reader, the ``task_template`` style that lays
out what the reader extracts, and the example formatter ``map_fields``.
"""

from __future__ import annotations

from ..._markers import hookimpl
from ...styles.task_template import task_template_style
from .formatters import map_fields
from .reader import TaskTemplateReader


@hookimpl
def read_task():
    return {"task-template": TaskTemplateReader()}


@hookimpl
def format_prompt():
    return {"task_template": task_template_style}


@hookimpl
def format_instances():
    return {"map_fields": map_fields}
