"""prompt-style's bridge into lm-evaluation-harness 0.4.13.

* ``prompt-style export lm-eval TASK --out DIR`` (:mod:`.export`) writes a task
  folder that ``lm-eval run --include_path DIR --tasks NAME`` runs;
* :class:`prompt_style_lm_eval.task.PromptStyleTask` is the task class lm-eval
  builds from such a folder, or from a task file of the user's own that adds a
  ``metadata.prompt_style`` block and ``class: !function
  prompt_style_lm_eval.task.PromptStyleTask``; its prompts are rendered record by
  record by the task's resolved ``prompt_style.TaskRenderer``.

Importing this package does not import lm_eval (only :mod:`.task` does), so the
exporter runs wherever prompt-style runs.
"""

from __future__ import annotations

from typing import Any

from prompt_style import hookimpl

__all__ = ["export_task"]


class _Exporter:
    """The ``lm-eval`` exporter, its module imported when it exports (listing the
    plugins, ``prompt-style plugins``, imports nothing of it)."""

    description = "an lm-evaluation-harness task folder: lm-eval run --include_path DIR --tasks NAME"

    def export(self, request: Any) -> Any:
        from .export import LmEvalExporter

        return LmEvalExporter().export(request)


@hookimpl
def export_task() -> dict[str, Any]:
    return {"lm-eval": _Exporter()}
