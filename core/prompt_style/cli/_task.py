"""The options that choose and load a task, shared by ``render`` and ``view``: the
task file (or ``--example NAME``), the style, meta template, few-shot examples, data
and everything else :func:`~prompt_style.load_task` takes."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_data_argument, add_meta_arguments, key_value, non_negative

__all__ = ["add_task_arguments", "load_from_args", "task_path", "example_path", "load_options", "usage_problem"]


def add_task_arguments(parser: argparse.ArgumentParser, *, styles: bool = False) -> None:
    """The task and how to render it. ``styles``: several task files, and ``--style``,
    ``--meta`` and ``--shots`` more than once (``view`` compares them)."""
    parser.add_argument(
        "task",
        metavar="TASK",
        nargs="*" if styles else "?",
        help="a task file (prompt-style YAML, an lm-evaluation-harness task, an OpenCompass config, "
        "a task-template file, or another installed format)" + ("; two to compare them" if styles else ""),
    )
    parser.add_argument(
        "--example",
        metavar="NAME",
        help="an example task a plugin ships instead of TASK (mmlu with prompt-style-mmlu, gpqa, arc)",
    )
    parser.add_argument(
        "--style",
        metavar="S",
        action="append" if styles else "store",
        help="style replacing the task's template (e.g. mcq::gpqa, cloze)" + ("; repeatable" if styles else ""),
    )
    parser.add_argument(
        "--style-option",
        metavar="KEY=VALUE",
        type=key_value,
        action="append",
        default=[],
        help="an option of the style, over the task's (VALUE a string unless it is JSON); repeatable",
    )
    add_meta_arguments(
        parser,
        default=None if styles else "plain",
        meta_help="meta template: plain (default), messages, chatml, ..., or a meta template file (.yaml, .json, "
        "OpenCompass .py model config)" + ("; repeatable" if styles else ""),
        option_help="an option of the meta template, VALUE a string unless it is JSON "
        "(e.g. add_generation_prompt=false, 'human=\"User: \"'); repeatable",
        model_args_help="lm-evaluation-harness's model args: chat_template=NAME chooses the meta template, "
        "pretrained=PATH / tokenizer=PATH the tokenizer, other keys are meta options",
        repeat=styles,
    )
    parser.add_argument(
        "--shots",
        metavar="K",
        type=non_negative,
        action="append" if styles else "store",
        help="number of few-shot examples (replaces num_fewshot)" + ("; repeatable" if styles else ""),
    )
    parser.add_argument(
        "--retriever", metavar="NAME", help="how few-shot examples are chosen (first_n, random, fixed, bm25, ...)"
    )
    parser.add_argument(
        "--fewshot-split", metavar="SPLIT", help="the split few-shot examples come from (replaces fewshot_split)"
    )
    parser.add_argument("--seed", metavar="N", type=int, help="seed for random retrieval")
    parser.add_argument(
        "--doc-id", metavar="FIELD", help="the record field holding each record's own id (replaces doc_id)"
    )
    add_data_argument(parser, help="replace a split's data file (repeatable)")
    parser.add_argument(
        "--trust-code",
        action="store_true",
        help="allow the task file to run code (lm-evaluation-harness !function, OpenCompass .py configs)",
    )
    parser.add_argument(
        "--template",
        metavar="N|NAME",
        help="which of the task file's templates to render (task-template files: number, name or id)",
    )
    parser.add_argument(
        "--task-format", metavar="NAME", help="the task file's format, when detection should not decide"
    )
    parser.add_argument(
        "--system-instruction",
        metavar="TEXT",
        help="text starting the system message, before the task's description (lm-eval --system_instruction)",
    )
    parser.add_argument(
        "--fewshot-as-multiturn",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with a chat meta template, few-shot examples as user/assistant turns (the default); "
        "--no-fewshot-as-multiturn puts the plain-text prompt in one user message",
    )
    parser.add_argument(
        "--mode",
        choices=("gen", "ppl"),
        help="generation or perplexity prompts, for tasks with modes (OpenCompass; default: from the inferencer)",
    )
    parser.add_argument(
        "--data-root",
        metavar="DIR",
        help="where task-template files find their data_dir (default: next to the task file, or data/processed/)",
    )
    parser.add_argument(
        "--budget",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="raise or lower a safety budget for templates and task files, e.g. deadline=2 or "
        "max_output=50000000 (repeatable; see docs/security.md)",
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
    from ..loading import default_plugin_manager

    manager = manager or default_plugin_manager()
    try:
        path = manager.resolve("task_examples", name).factory
    except PromptStyleError as exc:
        raise exc.locate(key="--example") from None
    return os.fspath(path)


def load_options(args: argparse.Namespace) -> dict[str, Any]:
    """The :func:`~prompt_style.load_task` keywords the command line gives (all but
    ``style``, ``meta``, ``meta_options`` and ``shots``, which ``view`` varies)."""
    template = args.template
    return {
        "data": dict(args.data) or None,
        "trust_code": args.trust_code,
        "template": int(template) if template and template.isdigit() else template,
        "task_format": args.task_format,
        "system_instruction": args.system_instruction,
        "fewshot_as_multiturn": args.fewshot_as_multiturn,
        "mode": args.mode,
        "read_options": {"data_root": args.data_root} if args.data_root else None,
        "model_args": args.model_args,
        "seed": args.seed,
        "style_options": dict(args.style_option) or None,
        "retriever": args.retriever,
        "fewshot_split": args.fewshot_split,
        "doc_id": args.doc_id,
    }


def load_from_args(args: argparse.Namespace) -> Any:
    """The task the command line names, loaded (``render``)."""
    from ..loading import load_task

    return load_task(
        task_path(args),
        style=args.style,
        meta=args.meta,
        meta_options=dict(args.meta_option),
        shots=args.shots,
        **load_options(args),
    )
