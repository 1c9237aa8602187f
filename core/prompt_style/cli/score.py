"""``prompt-style score``: accuracy of generated answers to a multiple-choice task."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._common import add_choice_order_arguments, add_command, add_task_arguments

NAME = "score"
HELP = "score generated answers to a multiple-choice task (accuracy, unparsable rate)"
DESCRIPTION = (
    "Read a model's completions (JSON Lines of index and completion), find the choice each names with the "
    "answer parser of the task's style, and report the accuracy and the rate of unparsable answers."
)


EXAMPLES = """  prompt-style score task.yaml predictions.jsonl --style-option generation=cot
  prompt-style score task.yaml predictions.jsonl --circular --results results.jsonl"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    score = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    score.add_argument("task", metavar="TASK", help="the task file the prompts were rendered from")
    score.add_argument(
        "predictions",
        metavar="PREDICTIONS.jsonl",
        help='one JSON object per line: {"index": N, "completion": "..."} (and rotation, cell, settings)',
    )
    add_task_arguments(score)
    add_choice_order_arguments(score)
    score.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    score.add_argument(
        "--results",
        metavar="FILE",
        help="also write one line per prediction in the results format of prompt-style spread "
        "(cell, record, correct, parsed, rule)",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..safe.limits import configured, parse_assignments

    with configured(parse_assignments(args.budget, what="--budget")):
        return _score(args, out)


def _score(args: argparse.Namespace, out: TextIO) -> int:

    from ..loading import load_task
    from ..safe.json_lines import dumps_line
    from ..scoring import format_score, read_predictions, score_predictions
    from ._common import choice_order_of, load_options

    predictions = read_predictions(args.predictions)
    task = load_task(args.task, **load_options(args), **choice_order_of(args))
    try:
        score = score_predictions(task, predictions)
    except Exception as exc:
        from ..errors import PromptStyleError

        if isinstance(exc, PromptStyleError) and exc.file is None and exc.line is not None:
            exc.file = args.predictions  # a prediction's line
        raise
    if args.results:
        try:
            with open(args.results, "w", encoding="utf-8") as handle:
                for line in score.results:
                    handle.write(dumps_line(line) + "\n")
        except OSError as exc:
            from ..errors import DataError

            raise DataError(f"cannot write the results: {exc.strerror}", file=args.results) from None
    if args.format == "json":
        out.write(dumps_line(score.to_json()) + "\n")
    else:
        out.write(format_score(score))
    out.flush()
    return 0
