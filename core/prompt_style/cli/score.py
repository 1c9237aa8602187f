"""``prompt-style score``: accuracy of generated answers to a multiple-choice task."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._common import (
    add_choice_order_arguments,
    add_command,
    add_data_argument,
    add_style_option_argument,
)

NAME = "score"
HELP = "score generated answers to a multiple-choice task (accuracy, unparsable rate)"
DESCRIPTION = (
    "Read a model's completions (JSON Lines of index and completion), find the choice each names with the "
    "answer parser of the task's style, and report the accuracy and the rate of unparsable answers."
)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    score = add_command(sub, common, NAME, HELP, DESCRIPTION)
    score.add_argument("task", metavar="TASK", help="the task file the prompts were rendered from")
    score.add_argument(
        "predictions",
        metavar="PREDICTIONS.jsonl",
        help='one JSON object per line: {"index": N, "completion": "..."} (and rotation, cell, settings)',
    )
    score.add_argument("--style", metavar="S", help="the style the prompts were rendered with (its answer parser)")
    add_style_option_argument(score)
    add_data_argument(score, help="replace a split's data file (repeatable), as for render")
    add_choice_order_arguments(score)
    score.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    score.add_argument(
        "--results",
        metavar="FILE",
        help="also write one line per prediction in the results format of prompt-style spread "
        "(cell, record, correct, parsed, rule)",
    )
    score.add_argument("--trust-code", action="store_true", help="allow the task file to run code")
    score.add_argument("--template", metavar="N|NAME", help="which of the task file's templates")
    score.add_argument("--task-format", metavar="NAME", help="the task file's format, when detection should not decide")


def run(args: argparse.Namespace, out: TextIO) -> int:
    import json

    from ..loading import load_task
    from ..safe.json_lines import dumps_line
    from ..scoring import format_score, read_predictions, score_predictions
    from ._common import choice_order_of

    predictions = read_predictions(args.predictions)
    task = load_task(
        args.task,
        style=args.style,
        style_options=dict(args.style_option) or None,
        data=dict(args.data) or None,
        trust_code=args.trust_code,
        template=int(args.template) if args.template and args.template.isdigit() else args.template,
        task_format=args.task_format,
        **choice_order_of(args),
    )
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
        out.write(json.dumps(score.to_json(), ensure_ascii=False) + "\n")
    else:
        out.write(format_score(score))
    out.flush()
    return 0
