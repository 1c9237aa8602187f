"""Built-in task-file formats: ``native`` (prompt-style's own keys), ``lm-eval``
(lm-evaluation-harness task YAML) and ``opencompass`` (OpenCompass dataset configs)."""

from __future__ import annotations

from .._lazy import Lazy
from .._markers import hookimpl


@hookimpl
def read_task():
    # Each reader is imported when a task file is read, not when plugins are listed.
    return {
        "native": Lazy("prompt_style.formats.native:NativeReader", instance=True),
        "lm-eval": Lazy("prompt_style.formats.lm_eval:LmEvalReader", instance=True),
        "opencompass": Lazy("prompt_style.formats.opencompass:OpenCompassReader", instance=True),
    }
