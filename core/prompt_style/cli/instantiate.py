"""``prompt-style instantiate``: a task-template file into {train,validation,test}.jsonl."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._common import add_command, add_data_argument, add_jobs_argument, non_negative, output_path, whole_number
from ._output import Progress, show_progress

NAME = "instantiate"
HELP = "render a task-template file's data into a prompted dataset"
DESCRIPTION = (
    "Render every record of a task-template file's splits with its templates into "
    "OUT/{train,validation,test}.jsonl (input, output, metadata, _instance_id, _template_id). "
    "Train and validation use every template (or --templates, or one --random-template per record); "
    "test uses the evaluate: true template. Splits are re-balanced when the task asks for it "
    "(standardize_splits). Files are written in full or not at all."
)

EXAMPLES = """  prompt-style instantiate examples/sciq/sciq_mcq.yaml --out prompted/
  prompt-style instantiate task.yaml --out prompted/ --random-template --seed 7 --n-instances 1000"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    parser.add_argument("task", metavar="TASK", help="a task-template file")
    parser.add_argument("--out", metavar="DIR", type=output_path, required=True, help="the output directory")
    add_data_argument(parser, help="use PATH's records for SPLIT, as they are (repeatable)")
    parser.add_argument("--data-root", metavar="DIR", help="the directory holding the task's data_dir")
    parser.add_argument(
        "--templates",
        metavar="LIST",
        action="append",
        default=[],
        help="templates for train and validation: numbers, names or promptsource ids, comma-separated",
    )
    parser.add_argument(
        "--random-template", action="store_true", help="one template per record, drawn at random (seeded)"
    )
    parser.add_argument("--eval-template", metavar="N|NAME", help="the test template (default: evaluate: true)")
    parser.add_argument(
        "--seed", metavar="N", type=whole_number, help="seed for split carving and random choices (1234)"
    )
    parser.add_argument(
        "--n-instances", metavar="N", type=non_negative, help="at most N records per split, chosen at random"
    )
    parser.add_argument(
        "--drop-blank", action="store_true", help="leave out renders with a blank input or output (counted)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    add_jobs_argument(parser)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..formats.task_template.instantiate import instantiate
    from ..formats.task_template.reader import read_spec, warn_problems
    from ..plugins import default_plugin_manager

    spec = read_spec(args.task)
    warn_problems(spec)
    selectors = [item.strip() for chunk in args.templates for item in chunk.split(",") if item.strip()]
    progress = Progress(spec.name) if show_progress(args.no_progress, to_file=True) else None
    bar = None if progress is None else (lambda split, done, total: progress(done, total, split))
    try:
        result = instantiate(
            spec,
            args.out,
            data=dict(args.data),
            data_root=args.data_root,
            plugins=default_plugin_manager(),
            templates=selectors or None,
            random_template=args.random_template,
            eval_template=args.eval_template,
            seed=args.seed,
            n_instances=args.n_instances,
            drop_blank=args.drop_blank,
            progress=bar,
            jobs=args.jobs,
        )
    finally:
        if progress is not None:
            progress.close()
    for split, path in result.files.items():
        out.write(f"{path}: {result.records.get(split, 0)} records, {result.instances.get(split, 0)} instances\n")
    for note in result.notes:
        out.write(f"note: {note}\n")
    if result.dropped_blank:
        out.write(f"note: {result.dropped_blank} renders with a blank input or output were left out (--drop-blank)\n")
    out.flush()
    return 0
