"""prompt-style inside inspect_ai.

``inspect eval prompt_style_inspect/task -T task_file=TASK ...`` runs any
prompt-style task; :func:`record_to_sample`, the :func:`render` solver and the
:func:`style_answer` scorer put prompt-style into tasks of your own; the
``prompt_style_inspect/echo`` and ``prompt_style_inspect/fixed`` models run
offline. The names are imported on first use, so the plain-Python parts
(:mod:`prompt_style_inspect.answers`) import without inspect_ai.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .answers import final_answer, matches_reference
    from .dataset import load, record_to_sample, task_samples
    from .messages import chat_messages, message_dicts, prompt_input
    from .model import OfflineModel
    from .scorer import answer_parser, style_answer
    from .solver import render
    from .task import prompt_style_task

_LAZY = {
    "final_answer": ".answers",
    "matches_reference": ".answers",
    "load": ".dataset",
    "record_to_sample": ".dataset",
    "task_samples": ".dataset",
    "chat_messages": ".messages",
    "message_dicts": ".messages",
    "prompt_input": ".messages",
    "OfflineModel": ".model",
    "style_answer": ".scorer",
    "answer_parser": ".scorer",
    "render": ".solver",
    "prompt_style_task": ".task",
}

__all__ = [
    "OfflineModel",
    "answer_parser",
    "chat_messages",
    "final_answer",
    "load",
    "matches_reference",
    "message_dicts",
    "prompt_input",
    "prompt_style_task",
    "record_to_sample",
    "render",
    "style_answer",
    "task_samples",
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
