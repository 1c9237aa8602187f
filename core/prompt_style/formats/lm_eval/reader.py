"""The ``lm-eval`` reader: an lm-evaluation-harness task file -> ``TaskConfig``.

This module stays light (it is imported whenever plugins load); the translation
itself (``translate.py``) is imported when a task file is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .code import TAGS, FunctionRef
from .keys import LM_EVAL_ONLY, NATIVE_ONLY

if TYPE_CHECKING:
    from ...task import TaskConfig
    from ...types import ReadOptions, TaskSource

__all__ = ["LmEvalReader", "TAGS"]


def _has_function(value: Any) -> bool:
    if isinstance(value, FunctionRef):
        return True
    if isinstance(value, Mapping):
        return any(_has_function(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_function(v) for v in value)
    return False


@dataclass(frozen=True)
class LmEvalReader:
    """Reads lm-evaluation-harness 0.4.13 task YAML (see docs/lm-eval.md)."""

    suffixes: tuple[str, ...] = (".yaml", ".yml")
    yaml_tags = TAGS
    """YAML tags the core's loader must know before this reader sees the file (``!function``)."""
    duplicate_keys = True
    """lm-evaluation-harness reads task files with PyYAML, where a key written twice keeps the last
    value; some shipped files do (kmmlu's ``regex_pattern``, tinyGSM8k's ``num_fewshot``)."""

    def detect(self, source: TaskSource) -> bool:
        data = source.data
        if not isinstance(data, Mapping) or any(key in data for key in NATIVE_ONLY):
            return False
        return any(key in LM_EVAL_ONLY for key in data) or _has_function(data)

    def read(self, source: TaskSource, options: ReadOptions) -> TaskConfig:
        from .files import Problems, read_file
        from .translate import Translation

        problems = Problems()
        task = read_file(source, problems)
        problems.raise_if_any()  # a file that cannot be read has nothing more to say
        return Translation(task, options, problems).config()
