"""Task-template files: SciRIFF's promptsource-like YAML with numbered ``input ||| output`` Jinja templates.

* :mod:`.schema` — the keys, checked, every problem at once (``prompt-style validate``);
* :mod:`.template` — one template rendered exactly as the reference renders it;
* :mod:`.reader` — the ``task-template`` reader (``read_task`` hook): a file into a TaskConfig;
* :mod:`.sources`, :mod:`.splits`, :mod:`.formatters` — data, split standardization, formatter plugins;
* :mod:`.instantiate` — a task into a prompted dataset (``prompt-style instantiate``);
* :mod:`.promptsource` — promptsource ``templates.yaml`` into task-template files (``prompt-style convert``).

See docs/task-templates.md.
"""

from .schema import Problem, TaskTemplateFile, check
from .template import PIPE, PIPE_PROTECTOR, Applied, TaskTemplate

__all__ = ["Problem", "TaskTemplateFile", "check", "TaskTemplate", "Applied", "PIPE", "PIPE_PROTECTOR"]
