"""``prompt-style view``: prompts as the model gets them, whitespace and special
tokens visible; the differences between two ways of rendering them; an HTML page
with several side by side.

What varies is given the way ``render`` takes it, repeated: two task files (an
lm-evaluation-harness task and its OpenCompass config), ``--style A --style B``,
``--meta A --meta B``, ``--shots 0 --shots 5``. Every combination is a *variant*;
each record is shown in every variant.
"""

from __future__ import annotations

import argparse
import itertools
import os
from dataclasses import dataclass, field
from typing import Any, TextIO

from ._common import add_command, add_task_arguments, load_options, non_negative
from ._task import add_task_source, example_path
from ._task import usage_problem as task_problem

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_parser", "run", "usage_problem", "Variant", "load_variants"]

NAME = "view"
HELP = "see prompts as the model gets them: whitespace, turns, tokens; --diff; --html"
DESCRIPTION = (
    "Show prompts as the model gets them, with spaces (·), tabs (→), newlines (↵) and special tokens "
    "visible, the dialogue turns before the meta template, the continuations and the target. "
    "Give two task files, or --style, --meta or --shots twice, to compare: --diff shows what changes, "
    "--html OUT.html writes a page with every variant side by side."
)
EXAMPLES = """  prompt-style view --example mmlu                             the first prompt, whitespace visible
  prompt-style view task.yaml --meta chatml --record 3         record 3, as ChatML
  prompt-style view task.yaml --diff --style mcq --style cloze what changes between two styles
  prompt-style view task.yaml --diff --shots 0 --shots 5
  prompt-style view lm_eval_task.yaml opencompass_config.py --diff --data test=test.jsonl --trust-code
  prompt-style view task.yaml --style mcq --style cloze --meta plain --meta chatml --limit 3 --html view.html
  prompt-style view task.yaml --meta hf --meta-option template=MODEL --meta-option tokenizer=MODEL --html v.html"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    add_task_source(parser, several=True)
    add_task_arguments(parser, variants=True)
    parser.add_argument(
        "--limit", metavar="N", type=non_negative, default=None, help="show the first N records (default: 1)"
    )
    parser.add_argument(
        "--record",
        metavar="I",
        type=non_negative,
        action="append",
        default=[],
        help="show record I (its index in the evaluated split); repeatable",
    )
    parser.add_argument("--diff", action="store_true", help="show what changes between two variants")
    parser.add_argument("--html", metavar="OUT.html", help="write one self-contained page, every variant side by side")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour: on a terminal (auto, the default; not when NO_COLOR is set), always, never",
    )
    parser.add_argument("--no-dialogue", action="store_true", help="leave out the dialogue turns")


@dataclass
class Variant:
    """One way of rendering: a task file with a style, meta template and shot count
    (``None``: the task's own)."""

    task: str
    style: str | None = None
    meta: str | None = None
    shots: int | None = None
    label: str = ""
    loaded: Any = None
    prompts: dict[int, list[Any]] = field(default_factory=dict)
    """Record index -> its requests (one, or one per turn of a multi-turn record)."""


def _variants(args: argparse.Namespace) -> list[Variant]:
    tasks = list(args.task) or [example_path(args.example)]
    styles = args.style or [None]
    metas = args.meta or [None]
    shots = args.shots or [None]
    # tasks are labelled by file name, or by path when two share a name
    names = [os.path.basename(t) for t in tasks]
    if len(set(names)) < len(names):
        names = list(tasks)
    variants = []
    for (number, task), style, meta, k in itertools.product(enumerate(tasks), styles, metas, shots):
        parts = []
        if len(tasks) > 1:
            parts.append(names[number])
        if len(styles) > 1:
            parts.append(f"style {style}")
        if len(metas) > 1:
            parts.append(f"meta {meta}")
        if len(shots) > 1:
            parts.append(f"{k}-shot")
        variants.append(Variant(task, style, meta, k, label=" · ".join(parts)))
    return variants


def usage_problem(args: argparse.Namespace) -> str | None:
    """Usage errors argparse cannot see: TASK or --example, and --diff's two variants."""
    problem = task_problem(args)
    if problem:
        return problem
    count = (len(args.task) or 1) * len(args.style or [None]) * len(args.meta or [None]) * len(args.shots or [None])
    if args.diff and count != 2:
        return (
            f"--diff compares two variants, not {count}: give two task files, or one of --style, --meta, --shots twice"
        )
    if args.diff and args.html:
        return "--html already shows the variants side by side; leave out --diff"
    return None


def load_variants(args: argparse.Namespace) -> tuple[list[Variant], list[int]]:
    """Every variant loaded, with the requested records rendered; and those records' indices."""
    from ..errors import PromptStyleError
    from ..loading import load_task

    options = load_options(args)
    for varied in ("style", "meta", "shots"):  # each variant has its own
        options.pop(varied)
    variants = _variants(args)
    wanted = sorted(set(args.record)) or list(range(1 if args.limit is None else args.limit))
    count = 0  # records seen: the split's size when a requested record is past its end
    for variant in variants:
        try:
            variant.loaded = load_task(
                variant.task,
                style=variant.style,
                meta=variant.meta or "plain",
                shots=variant.shots,
                **options,
            )
            if wanted:
                chosen = set(wanted)
                for prompt in variant.loaded.render(limit=max(wanted) + 1):
                    count = max(count, prompt.index + 1)
                    if prompt.index in chosen:
                        variant.prompts.setdefault(prompt.index, []).append(prompt)
        except PromptStyleError as exc:
            if len(variants) > 1:
                exc.message = f"{variant.label}: {exc.message}"
            raise
    found = sorted({i for v in variants for i in v.prompts})
    missing = [i for i in wanted if i not in found]
    if missing and args.record:
        from ..errors import OptionError

        raise OptionError(
            f"there is no record {missing[0]}: the split has {count} record{'s' if count != 1 else ''}",
            key="--record",
        )
    return variants, found


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..safe.limits import configured, parse_assignments

    with configured(parse_assignments(args.budget, what="--budget")):
        variants, records = load_variants(args)
        if args.html:
            from ._html import page
            from ._output import atomic_output

            with atomic_output(args.html) as handle:
                handle.write(page(variants, records))
            out.write(f"wrote {args.html}: {len(records)} record(s) × {len(variants)} variant(s)\n")
            return 0
        painter = _painter(args.color, out)
        if args.diff:
            from ._view_text import diff

            out.write(diff(variants, records, painter))
        else:
            from ._view_text import show

            out.write(show(variants, records, painter, dialogue=not args.no_dialogue))
        out.flush()
    return 0


def _painter(color: str, out: TextIO) -> Any:
    from ._visible import Painter

    if color == "auto":
        try:
            tty = out.isatty()
        except (AttributeError, ValueError):
            tty = False
        return Painter(tty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb")
    return Painter(color == "always")
