"""``prompt-style lint``: mistakes in a task that quietly skew its score."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._common import add_command, add_data_argument, add_style_option_argument, non_negative

NAME = "lint"
HELP = "check a task for mistakes that skew its score"
DESCRIPTION = (
    "Check a task's records as it renders them: instructions naming another number of choices, labels colliding "
    "with choice texts, the answer leaking into the prompt or the few-shot examples, examples from the evaluated "
    "split, duplicate records, choices differing only in whitespace, a doubled target delimiter. One line per "
    "finding; exit status 0 when there is none, 1 when there are findings, 2 when the task cannot be read."
)

EXIT_FINDINGS = 1


def _codes(text: str) -> list[str]:
    from ..lint import CHECKS

    codes = [code.strip() for code in text.split(",") if code.strip()]
    unknown = [code for code in codes if code not in CHECKS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown check {unknown[0]!r} (checks: {', '.join(CHECKS)})")
    return codes


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    lint = add_command(sub, common, NAME, HELP, DESCRIPTION)
    lint.add_argument("task", metavar="TASK", help="a task file (prompt-style YAML or another installed format)")
    lint.add_argument("--select", metavar="CHECK,...", type=_codes, help="run only these checks")
    lint.add_argument("--ignore", metavar="CHECK,...", type=_codes, default=[], help="skip these checks")
    lint.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    lint.add_argument("--limit", metavar="N", type=non_negative, help="check only the first N records")
    lint.add_argument("--style", metavar="S", help="style replacing the task's template")
    add_style_option_argument(lint)
    lint.add_argument("--shots", metavar="K", type=non_negative, help="number of few-shot examples")
    add_data_argument(lint, help="replace a split's data file (repeatable)")
    lint.add_argument("--trust-code", action="store_true", help="allow the task file to run code")
    lint.add_argument("--template", metavar="N|NAME", help="which of the task file's templates")
    lint.add_argument("--task-format", metavar="NAME", help="the task file's format, when detection should not decide")


def run(args: argparse.Namespace, out: TextIO) -> int:
    import sys

    from ..lint import CHECKS, lint_task
    from ..loading import load_task
    from ..safe.json_lines import dumps_line

    task = load_task(
        args.task,
        style=args.style,
        style_options=dict(args.style_option) or None,
        shots=args.shots,
        data=dict(args.data) or None,
        trust_code=args.trust_code,
        template=int(args.template) if args.template and args.template.isdigit() else args.template,
        task_format=args.task_format,
    )
    checks = [code for code in (args.select or CHECKS) if code not in args.ignore]
    source = args.task
    counts: dict[str, int] = {}
    records: set[int | None] = set()
    for finding in lint_task(task, limit=args.limit, checks=checks):
        counts[finding.code] = counts.get(finding.code, 0) + 1
        records.add(finding.index)
        if args.format == "json":
            out.write(dumps_line({"file": source, **finding.to_json()}) + "\n")
        else:
            out.write(finding.line(source) + "\n")
    out.flush()
    total = sum(counts.values())
    if total:
        summary = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()))
        print(f"prompt-style: {source}: {total} finding{'s' * (total != 1)} ({summary})", file=sys.stderr)
        return EXIT_FINDINGS
    print(f"prompt-style: {source}: no findings ({len(checks)} checks)", file=sys.stderr)
    return 0
