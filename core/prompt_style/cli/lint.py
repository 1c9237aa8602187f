"""``prompt-style lint``: mistakes in a task that quietly skew its score."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from ._common import add_command, add_task_arguments, non_negative

NAME = "lint"
HELP = "check a task for mistakes that skew its score"
DESCRIPTION = (
    "Check a task's records as it renders them: instructions naming another number of choices, labels colliding "
    "with choice texts, the answer leaking into the prompt or the few-shot examples, examples from the evaluated "
    "split, duplicate records, choices differing only in whitespace, a doubled target delimiter. One line per "
    "finding; exit status 0 when there is none, 1 when there are findings, 2 when the task cannot be read."
)

EXIT_FINDINGS = 1
EXIT_ERRORS = 2  # a record the task cannot render (as for a task it cannot read)


def _codes(text: str) -> list[str]:
    from ..lint import CHECKS

    codes = [code.strip() for code in text.split(",") if code.strip()]
    unknown = [code for code in codes if code not in CHECKS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown check {unknown[0]!r} (checks: {', '.join(CHECKS)})")
    return codes


EXAMPLES = """  prompt-style lint examples/mmlu/task.yaml               what would skew a score, before any model runs
  prompt-style lint task.yaml --format json --ignore CHECK"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    lint = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    lint.add_argument("task", metavar="TASK", help="a task file (prompt-style YAML or another installed format)")
    lint.add_argument("--select", metavar="CHECK,...", type=_codes, help="run only these checks")
    lint.add_argument("--ignore", metavar="CHECK,...", type=_codes, default=[], help="skip these checks")
    lint.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    lint.add_argument("--limit", metavar="N", type=non_negative, help="check only the first N records")
    add_task_arguments(lint)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..loading import load_task
    from ..safe.limits import configured, parse_assignments
    from ._common import load_options

    with configured(parse_assignments(args.budget, what="--budget")):
        task = load_task(args.task, **load_options(args))
        return _lint(task, args, out)


def _lint(task: Any, args: argparse.Namespace, out: TextIO) -> int:
    import sys

    from ..lint import CHECKS, lint_task
    from ..safe.json_lines import dumps_line

    checks = [code for code in (args.select or CHECKS) if code not in args.ignore]
    source = args.task
    counts: dict[str, int] = {}
    records: set[int | None] = set()
    errors: list[Any] = []  # every record the task cannot render, reported at the end
    try:
        for finding in lint_task(task, limit=args.limit, checks=checks, errors=errors):
            counts[finding.code] = counts.get(finding.code, 0) + 1
            records.add(finding.index)
            if args.format == "json":
                out.write(dumps_line({"file": source, **finding.to_json()}) + "\n")
            else:
                out.write(finding.line(source) + "\n")
    finally:
        # each record found bad, also when the data cannot be read on (a line that is not
        # JSON: its own error follows)
        out.flush()
        for error in errors:
            print(f"prompt-style: error: {error}", file=sys.stderr)
    total = sum(counts.values())
    if errors:
        found = f", {total} finding{'s' * (total != 1)} in the others" if total else ""
        print(
            f"prompt-style: {source}: {len(errors)} record{'s' * (len(errors) != 1)} cannot be rendered{found}",
            file=sys.stderr,
        )
        return EXIT_ERRORS
    if total:
        summary = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()))
        print(f"prompt-style: {source}: {total} finding{'s' * (total != 1)} ({summary})", file=sys.stderr)
        return EXIT_FINDINGS
    print(f"prompt-style: {source}: no findings ({len(checks)} checks)", file=sys.stderr)
    return 0
