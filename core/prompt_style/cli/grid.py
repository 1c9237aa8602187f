"""``prompt-style grid``: a task rendered in every format of a grid (or a seeded sample)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from ._common import (
    add_command,
    add_data_argument,
    add_meta_arguments,
    add_style_option_argument,
    non_negative,
)

NAME = "grid"
HELP = "render a task in a grid of formats"
DESCRIPTION = (
    "Render a task in every cell of a format grid (the axes its style declares: labels, separators, spacing, "
    "casing, ...; and the number of examples and the meta template), or a seeded sample of the cells, as "
    "JSON Lines with each cell's id and settings."
)


def _axis(text: str) -> tuple[str, list[str] | None]:
    from ..errors import PromptStyleError
    from ..grid import parse_axis_values

    try:
        return parse_axis_values(text)
    except PromptStyleError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


EXAMPLES = """  prompt-style grid examples/mmlu/task.yaml --sample 40 --seed 0 > grid.jsonl     40 formats of the grid
  prompt-style grid task.yaml --axis labels=A,1,i --axis separator=". ,) " --limit 100"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    grid = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    grid.add_argument("task", metavar="TASK", help="a task file (prompt-style YAML or another installed format)")
    grid.add_argument(
        "--axis",
        metavar="NAME[=V1,V2,...]",
        type=_axis,
        action="append",
        default=[],
        help="an axis and its values (\\, a comma in a value; \\n, \\t escapes); NAME alone: all its values; "
        "repeatable; none: every axis the style declares",
    )
    grid.add_argument("--sample", metavar="N", type=non_negative, help="render a seeded sample of N cells")
    grid.add_argument("--seed", metavar="N", type=int, default=0, help="seed of the sample of cells (default 0)")
    grid.add_argument(
        "--list", action="store_true", help="list the cells (id, settings, style options), one JSON line each"
    )
    grid.add_argument("--style", metavar="S", help="style replacing the task's template (e.g. mcq::gpqa)")
    add_style_option_argument(grid)
    add_meta_arguments(
        grid,
        default="plain",
        meta_help="meta template of every cell (the meta axis's default)",
        option_help="an option of the meta template, VALUE a string unless it is JSON; repeatable",
        model_args_help="lm-evaluation-harness's model args, as for render",
    )
    grid.add_argument("--shots", metavar="K", type=non_negative, help="few-shot examples (the shots axis's default)")
    grid.add_argument("--limit", metavar="N", type=non_negative, help="render only the first N records per cell")
    add_data_argument(grid, help="replace a split's data file (repeatable)")
    grid.add_argument("--trust-code", action="store_true", help="allow the task file to run code")
    grid.add_argument("--template", metavar="N|NAME", help="which of the task file's templates to render")
    grid.add_argument("--task-format", metavar="NAME", help="the task file's format, when detection should not decide")


def run(args: argparse.Namespace, out: TextIO) -> int:
    import sys

    from ..errors import PromptStyleError
    from ..grid import make_grid
    from ..loading import load_task
    from ..safe.json_lines import dumps_line

    task = load_task(
        args.task,
        style=args.style,
        style_options=dict(args.style_option) or None,
        meta=args.meta,
        meta_options=dict(args.meta_option),
        model_args=args.model_args,
        shots=args.shots,
        data=dict(args.data) or None,
        trust_code=args.trust_code,
        template=int(args.template) if args.template and args.template.isdigit() else args.template,
        task_format=args.task_format,
    )
    axes: dict[str, list[str] | None] = {}
    for name, values in args.axis:
        if name in axes and axes[name] is not None and values is not None:
            axes[name] = [*axes[name], *values]  # --axis x=a --axis x=b: both
        else:
            axes[name] = None if values is None or axes.get(name, 0) is None else values
    meta_name = args.meta if isinstance(args.meta, str) else "plain"
    grid = make_grid(task, axes or None, sample=args.sample, seed=args.seed, meta=meta_name)
    allowed = f"{grid.allowed:,} allowed of " if grid.allowed is not None else ""
    print(
        f"prompt-style: grid of style {grid.style!r}: {len(grid.cells):,} cell{'s' * (len(grid.cells) != 1)} "
        f"({allowed}{grid.combinations:,} combinations of {', '.join(a.name for a in grid.axes)})",
        file=sys.stderr,
    )
    write = out.write
    if args.list:
        for cell in grid.cells:
            write(dumps_line({**cell.to_json(), "options": dict(cell.options)}) + "\n")
        out.flush()
        return 0
    for cell, task_of_cell in grid.variants(limit=args.limit):
        # the cell's id first and its settings last, around render --format jsonl's line
        head = dumps_line({"cell": cell.id})[:-1] + ", "
        tail = ", " + dumps_line({"settings": dict(cell.settings)})[1:]
        try:
            _write_cell(task_of_cell, head, tail, write)
        except PromptStyleError as exc:
            exc.message = f"grid cell {cell.id}: {exc.message}"
            raise
    out.flush()
    return 0


def _write_cell(task: Any, head: str, tail: str, write: Any) -> None:
    from ..safe.json_lines import dumps_line
    from .render import _not_json

    for prompt in task.render():
        line = dumps_line(prompt.to_json(), _not_json(prompt.index))
        write(head + line[1:-1] + tail + "\n")
