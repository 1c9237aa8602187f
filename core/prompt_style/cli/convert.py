"""``prompt-style convert``: task files of other systems into task-template files."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TextIO

from ._common import add_command, key_value, output_path

NAME = "convert"
HELP = "convert promptsource templates into task-template files"
DESCRIPTION = (
    "Convert promptsource templates.yaml files (or directories of them) into task-template "
    "files, one per dataset/subset, keeping each template's Jinja, answer choices, name and promptsource "
    "id; converted templates render exactly as promptsource 0.2.3 renders them."
)
SOURCES = ("promptsource",)

EXAMPLES = """  prompt-style convert promptsource templates.yaml --out converted/
  prompt-style convert promptsource promptsource/templates/ --out converted/ --metadata task=qa --force"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    parser.add_argument("source", choices=SOURCES, help="the system the files come from")
    parser.add_argument("paths", metavar="PATH", nargs="+", help="a templates.yaml, or a directory of them")
    parser.add_argument("--out", metavar="DIR", type=output_path, required=True, help="where to write the task files")
    parser.add_argument("--name", help="the task's name (one input file only; default: DATASET_SUBSET)")
    parser.add_argument(
        "--metadata",
        metavar="KEY=VALUE",
        type=key_value,
        action="append",
        default=[],
        help="task metadata, VALUE a string unless it is JSON (e.g. task=classification, 'domains=[\"misc\"]'); "
        "repeatable",
    )
    parser.add_argument("--evaluate", metavar="N|NAME|ID", help="mark this template evaluate: true")
    parser.add_argument("--force", action="store_true", help="overwrite existing task files")


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..errors import TaskFileError
    from ..formats.task_template.promptsource import convert, dump_task_template, find_templates, load_promptsource
    from ..formats.task_template.schema import check

    files = [found for raw in args.paths for found in find_templates(raw)]
    if not files:
        raise TaskFileError("no templates.yaml found", file=", ".join(args.paths))
    if args.name and len(files) > 1:
        raise TaskFileError(f"--name names one task, but {len(files)} files were given", key="name")
    out_dir = Path(args.out)
    converted: list[tuple[Path, str, int]] = []
    for path in files:
        document = load_promptsource(path)
        for key, line, first in document.duplicates:
            out.write(f"warning: {path}:{line}: {key}: appears twice (also on line {first}); the last one counts\n")
        task = convert(document, name=args.name, metadata=dict(args.metadata), evaluate=args.evaluate)
        text = dump_task_template(task)
        target = out_dir / f"{task['name']}.yaml"
        if any(target == seen for seen, _, _ in converted):
            raise TaskFileError(f"two inputs convert to the same task name {task['name']!r}", file=str(path))
        if target.exists() and not args.force:
            raise TaskFileError("the task file exists", file=str(target), hint="pass --force to overwrite it")
        converted.append((target, text, len(task["templates"])))
        missing = [p for p in check(task, path=target).problems if p.level == "error"]
        for problem in missing:
            out.write(f"note: {target}: {problem.text()}\n")
    out_dir.mkdir(parents=True, exist_ok=True)
    for target, text, count in converted:
        temporary = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
        out.write(f"wrote {target} ({count} template{'s' if count != 1 else ''})\n")
    out.flush()
    return 0
