"""Task-template files: SciRIFF's promptsource-like YAML with numbered ``input ||| output`` Jinja templates.

* :mod:`.schema` — the keys, checked, every problem at once (``prompt-style validate``);
* :mod:`.template` — one template rendered exactly as the reference renders it;
* :mod:`.reader` — the ``task-template`` reader (``read_task`` hook): a file into a TaskConfig;
* :mod:`.sources`, :mod:`.splits`, :mod:`.formatters` — data, split standardization, formatter plugins;
* :mod:`.instantiate` — a task into a prompted dataset (``prompt-style instantiate``);
* :mod:`.promptsource` — promptsource ``templates.yaml`` into task-template files (``prompt-style convert``).

The names below load their modules on first use: registering the built-in
plugin (``.plugin``) must not pay for the schema, the instantiation machinery
or Jinja. See docs/task-templates.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._lazy import exports

if TYPE_CHECKING:
    from .instantiate import Instantiation
    from .schema import TaskTemplateFile

__all__ = [
    "Problem",
    "TaskTemplateFile",
    "check",
    "TaskTemplate",
    "Applied",
    "PIPE",
    "PIPE_PROTECTOR",
    "Instantiation",
    "read_task_template",
    "instantiate_task_template",
]

__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(("Problem", "TaskTemplateFile", "check"), ".schema"),
        **dict.fromkeys(("TaskTemplate", "Applied", "PIPE", "PIPE_PROTECTOR"), ".template"),
        "Instantiation": ".instantiate",
    },
)


def read_task_template(path: str | Path) -> TaskTemplateFile:
    """Read and check a task-template file; ``.problems`` lists what is wrong, and
    ``.template(selector).apply(record)`` renders a record.

    :raises TaskFileError: when the file cannot be used at all (all such problems at once).
    """
    from .reader import read_spec

    return read_spec(path)


def instantiate_task_template(
    task: str | Path | TaskTemplateFile, out_dir: str | Path, **options: Any
) -> Instantiation:
    """Write ``out_dir/{train,validation,test}.jsonl`` for a task-template file (see
    :func:`.instantiate.instantiate` for the options: ``data``, ``data_root``,
    ``plugins``, ``templates``, ``random_template``, ``eval_template``, ``seed``,
    ``n_instances``, ``drop_blank``, ``progress``)."""
    from .instantiate import instantiate
    from .reader import read_spec

    spec = read_spec(task) if isinstance(task, (str, Path)) else task
    return instantiate(spec, out_dir, **options)
