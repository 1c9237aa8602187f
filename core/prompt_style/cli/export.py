"""``prompt-style export``: a task written for another harness, through an ``export_task`` plugin."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from ._common import add_command, add_task_arguments, key_value, load_options, output_path

NAME = "export"
HELP = "write a task for another harness (lm-eval, lighteval, OpenCompass, ...)"
DESCRIPTION = (
    "Write a task as files another evaluation harness runs, with the prompts `prompt-style render` gives for "
    "the same options. The harnesses are plugins (hook export_task): installing a bridge such as "
    "prompt-style-lm-eval adds its name; `prompt-style plugins --all` lists them."
)

EXAMPLES = """  prompt-style export lm-eval task.yaml --out lm_eval_tasks/     with prompt-style-lm-eval installed
  prompt-style export opencompass task.yaml --out configs/ --meta chatml --shots 5"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    export = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    export.add_argument("harness", metavar="HARNESS", help="the exporter, e.g. lm-eval, lighteval, opencompass")
    export.add_argument("task", metavar="TASK", help="a task file of any installed format")
    export.add_argument(
        "--out", metavar="PATH", type=output_path, required=True, help="where to write (a directory or a file)"
    )
    export.add_argument("--name", metavar="NAME", help="the task's name in the harness (default: the task's own)")
    export.add_argument(
        "--export-option",
        metavar="KEY=VALUE",
        type=key_value,
        action="append",
        default=[],
        help="an option of the exporter (repeatable; see its documentation)",
    )
    add_task_arguments(export)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..safe.limits import configured, parse_assignments

    with configured(parse_assignments(args.budget, what="--budget")):
        return _run(args, out)


def _absolute(options: dict[str, Any]) -> dict[str, Any]:
    """Paths as absolute paths: the exported files run from another directory.

    Data paths always; and any other option naming an existing file or folder
    relative to the current directory (a meta template file, a chat template or
    tokenizer given as a meta option or in ``--model-args``, ``--data-root``)."""
    data = options.get("data")
    if data:
        options["data"] = {split: str(Path(path).resolve()) for split, path in data.items()}
    options["meta"] = _absolute_path(options.get("meta"))
    if options.get("meta_options"):
        options["meta_options"] = {key: _absolute_path(value) for key, value in options["meta_options"].items()}
    if options.get("read_options"):
        read = options["read_options"]
        options["read_options"] = {key: _absolute_path(value, key == "data_root") for key, value in read.items()}
    model_args = options.get("model_args")
    if isinstance(model_args, str) and not any(quote in model_args for quote in "'\""):
        pairs = [pair.partition("=") for pair in model_args.split(",")]
        options["model_args"] = ",".join(k + sep + str(_absolute_path(v)) for k, sep, v in pairs)
    return options


def _absolute_path(value: Any, is_path: bool = False) -> Any:
    """``value`` as an absolute path when it is a relative path naming an existing file
    or folder (with a ``/`` or a suffix, unless ``is_path`` says it is a path);
    otherwise as it is."""
    if not isinstance(value, str) or not value or (not is_path and "/" not in value and "." not in value):
        return value
    path = Path(value).expanduser()
    if path.is_absolute() or not path.exists():
        return value
    return str(path.resolve())


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from ..errors import PluginError, PromptStyleError
    from ..loading import load_task
    from ..plugins import default_plugin_manager
    from ..types import ExportRequest

    manager = default_plugin_manager()
    provider = manager.resolve("export_task", args.harness)
    options = _absolute(load_options(args))
    task = load_task(args.task, plugins=manager, **options)
    request = ExportRequest(
        task=task,
        source=Path(args.task).resolve(),
        load_options=options,
        out=Path(args.out),
        name=args.name,
        options=dict(args.export_option),
    )
    try:
        result = provider.factory.export(request)
    except PromptStyleError:
        raise
    except Exception as exc:  # a plugin's bug, reported as such
        raise PluginError(f"{provider.label()} raised {type(exc).__name__}: {exc}") from exc
    for path in result.files:
        out.write(f"wrote {path}\n")
    if result.usage:
        out.write(f"run it with: {result.usage}\n")
    out.flush()
    return 0
