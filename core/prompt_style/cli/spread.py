"""``prompt-style spread``: per-cell accuracy of a grid's results and its spread."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._common import add_command, non_negative

NAME = "spread"
HELP = "how much a score depends on the format: accuracy per grid cell and its spread"
DESCRIPTION = (
    "Read per-record results keyed by grid cell and record (JSON Lines: cell, record, correct or score) and "
    "report each cell's accuracy and, over the cells, the minimum, median, maximum, spread and standard deviation, "
    "as a table and optionally a PNG plot."
)


EXAMPLES = """  prompt-style spread results.jsonl                        accuracy per cell, the spread, per axis
  prompt-style spread results.jsonl --top 3 --plot spread.png"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    spread = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    spread.add_argument("results", metavar="RESULTS.jsonl", help="per-record results, one JSON object per line")
    spread.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    spread.add_argument("--plot", metavar="FILE.png", help="also draw the spread as a PNG (needs prompt-style[plot])")
    spread.add_argument("--title", metavar="TEXT", help="the plot's title")
    spread.add_argument("--top", metavar="N", type=non_negative, help="show only the N best cells in the table")


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..spread import format_table, plot_spread, read_results, spread_of

    result = spread_of(read_results(args.results))
    if args.plot:
        plot_spread(result, args.plot, title=args.title)
    if args.format == "json":
        from ..safe.json_lines import dumps_line

        out.write(dumps_line(result.to_json()) + "\n")
    else:
        out.write(format_table(result, top=args.top))
    out.flush()
    return 0
