"""``lighteval ... --custom-tasks prompt_style_lighteval.tasks``: the tasks
``PROMPT_STYLE_LIGHTEVAL_TASKS`` names (see :mod:`prompt_style_lighteval.spec`
for the variable's format), as ``TASKS_TABLE``.

Each task is loaded and every record rendered when lighteval imports this
module, so a task, option or record that is wrong stops the run before any
model is loaded: on lighteval's command line as one line,
``prompt-style: error: ...``, with exit status 2.
"""

from __future__ import annotations

from prompt_style import OptionError, PromptStyleError

from .bridge import fail, task_configs
from .spec import ENV, specs_from_environment

__all__ = ["TASKS_TABLE"]


def _table() -> list:
    specs = specs_from_environment()
    if not specs:
        raise OptionError(
            f"{ENV} names no task",
            hint=f"e.g. {ENV}='path/to/task.yaml shots=5' (see prompt_style_lighteval's README), "
            "or write a module with prompt-style export lighteval TASK --out tasks.py",
        )
    return task_configs(specs)


try:
    TASKS_TABLE = _table()
except PromptStyleError as exc:
    raise fail(exc) from None
