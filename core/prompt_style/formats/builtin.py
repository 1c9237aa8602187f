"""Built-in task-file formats: ``native`` (prompt-style's own keys), ``lm-eval``
(lm-evaluation-harness task YAML) and ``opencompass`` (OpenCompass dataset configs)."""

from __future__ import annotations

from .._markers import hookimpl
from .lm_eval import LmEvalReader
from .native import NativeReader
from .opencompass import OpenCompassReader


@hookimpl
def read_task():
    return {"native": NativeReader(), "lm-eval": LmEvalReader(), "opencompass": OpenCompassReader()}
