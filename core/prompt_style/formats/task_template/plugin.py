"""The built-in plugin for task-template files, registered like any third-party one.

It provides the ``task-template`` reader, the ``task_template`` style that lays
out what the reader extracts, and the example formatter ``map_fields``.
"""

from __future__ import annotations

from ..._lazy import Lazy
from ..._markers import hookimpl

# Imported when used, not when plugins are listed.


@hookimpl
def read_task():
    return {"task-template": Lazy("prompt_style.formats.task_template.reader:TaskTemplateReader", instance=True)}


@hookimpl
def format_prompt():
    return {"task_template": Lazy("prompt_style.styles.task_template:task_template_style")}


@hookimpl
def format_instances():
    return {"map_fields": Lazy("prompt_style.formats.task_template.formatters:map_fields")}
