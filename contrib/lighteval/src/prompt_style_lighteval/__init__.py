"""prompt-style inside lighteval.

``lighteval ... "NAME|0" --custom-tasks prompt_style_lighteval.tasks`` runs the
tasks ``PROMPT_STYLE_LIGHTEVAL_TASKS`` names; ``prompt-style export lighteval
TASK --out tasks.py`` writes a module of them; :func:`task_config` makes one
``LightevalTaskConfig`` in a module of your own. The names are imported on
first use, so the parts that need no lighteval (the exporter, the task list
reader) import without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bridge import PromptFunction, RenderedDoc, task_config, task_configs, task_configs_from
    from .mapping import DocParts, doc_parts, render_parts
    from .spec import ENV, TaskSpec, read_specs

_LAZY = {
    "PromptFunction": ".bridge",
    "RenderedDoc": ".bridge",
    "task_config": ".bridge",
    "task_configs": ".bridge",
    "task_configs_from": ".bridge",
    "DocParts": ".mapping",
    "doc_parts": ".mapping",
    "render_parts": ".mapping",
    "ENV": ".spec",
    "TaskSpec": ".spec",
    "read_specs": ".spec",
}

__all__ = [
    "ENV",
    "DocParts",
    "PromptFunction",
    "RenderedDoc",
    "TaskSpec",
    "doc_parts",
    "read_specs",
    "render_parts",
    "task_config",
    "task_configs",
    "task_configs_from",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
