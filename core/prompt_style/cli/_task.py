"""The task a command loads: a task file (``TASK``; ``view`` takes two to compare) or
``--example NAME``, an example task a plugin ships (the ``task_examples`` hook).
The options that say how to render it are :func:`._common.add_task_arguments`'s."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import load_options

__all__ = ["add_task_source", "usage_problem", "task_path", "example_path", "load_from_args"]


def add_task_source(parser: argparse.ArgumentParser, *, several: bool = False) -> None:
    """``TASK`` (one, or with ``several`` one or two) and ``--example NAME``."""
    parser.add_argument(
        "task",
        metavar="TASK",
        nargs="*" if several else "?",
        help="a task file (prompt-style YAML, an lm-evaluation-harness task, an OpenCompass config, "
        "a task-template file, or another installed format)" + ("; two to compare them" if several else ""),
    )
    parser.add_argument(
        "--example",
        metavar="NAME",
        help="an example task a plugin ships instead of TASK (mmlu with prompt-style-mmlu, gpqa, arc)",
    )


def usage_problem(args: argparse.Namespace) -> str | None:
    """``TASK`` or ``--example NAME``: exactly one (a usage error otherwise)."""
    given = args.task if isinstance(args.task, list) else [args.task] if args.task is not None else []
    if not given and args.example is None:
        return "give a task file (TASK), or --example NAME for an example a plugin ships (e.g. --example mmlu)"
    if given and args.example is not None:
        return f"give a task file ({given[0]}) or --example {args.example}, not both"
    return None


def task_path(args: argparse.Namespace, manager: Any = None) -> str:
    """``TASK``, or the file of ``--example NAME``."""
    if args.example is None:
        return args.task
    return example_path(args.example, manager)


def example_path(name: str, manager: Any = None) -> str:
    """The task file of the example ``name`` a plugin ships (``task_examples``)."""
    import os

    from ..errors import PromptStyleError
    from ..plugins import default_plugin_manager

    manager = manager or default_plugin_manager()
    try:
        path = manager.resolve("task_examples", name).factory
    except PromptStyleError as exc:
        raise exc.locate(key="--example") from None
    return os.fspath(path)


def load_from_args(args: argparse.Namespace, **more: Any) -> Any:
    """The task the command line names, loaded (``render``); ``more``: other
    :func:`~prompt_style.load_task` keywords (a choice order)."""
    from ..loading import load_task

    return load_task(task_path(args), **load_options(args), **more)
