"""What every command shares: the exit status for bad input, the one-line usage
errors, the argument types, and the arguments two commands take alike."""

from __future__ import annotations

import argparse
from typing import Any

EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """Usage errors in the same one-line form as every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        from ..errors import MESSAGE_LIMIT, one_line

        prefix = "prompt-style: error: "
        text = one_line(f"{message} (see: {self.prog} --help)", MESSAGE_LIMIT - len(prefix))
        self.exit(EXIT_BAD_INPUT, f"{prefix}{text}\n")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        try:
            super().exit(status, message)
        except (OSError, ValueError, AttributeError):  # standard error closed or full
            raise SystemExit(status) from None


def split_assignment(text: str) -> tuple[str, str]:
    """``SPLIT=PATH``."""
    split, sep, path = text.partition("=")
    if not sep or not split or not path:
        raise argparse.ArgumentTypeError(f"expected SPLIT=PATH, got {text!r}")
    return split, path


def key_value(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with ``VALUE`` read as YAML by the task-file rules (YAML 1.2:
    ``false`` is ``False``, ``yes`` and ``0755`` stay strings); text that is not
    YAML stays as written."""
    from ..errors import PromptStyleError
    from ..safe.yaml_loader import load_yaml

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    if not value:
        return key, ""
    try:
        return key, load_yaml(f"--meta-option {key}", text=value, what="option value").data
    except PromptStyleError:
        return key, value


def non_negative(text: str) -> int:
    """A count: 0 or more (one larger than any count there can be counts as the largest)."""
    import sys

    from ..errors import cut

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {cut(text, 40)}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {cut(text, 40)}")
    return min(value, sys.maxsize)


def whole_number(text: str) -> int:
    """A whole number of any sign (a seed), quoted short when it is not one."""
    from ..errors import cut

    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {cut(text, 40)}") from None


def output_path(text: str) -> str:
    """Where a command writes (``--out``): a path, which cannot hold a NUL character."""
    if "\0" in text:
        raise argparse.ArgumentTypeError("a path cannot hold a NUL character")
    return text


def jobs(text: str) -> int:
    """``--jobs N``: a number of worker processes, or ``auto`` for one per core."""
    if text == "auto":
        import os

        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    value = non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError("expected 1 or more worker processes (or auto)")
    if value > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_JOBS:,} worker processes, got {value:,}")
    return value


MAX_JOBS = 1024
"""The most worker processes ``--jobs`` starts."""


def add_jobs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        "-j",
        metavar="N",
        type=jobs,
        default=1,
        help="render with N worker processes (auto: one per core); the output is the same, in the same order",
    )


def add_command(
    sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str, help: str, description: str
) -> argparse.ArgumentParser:
    """A command's parser (``help``: its line in ``prompt-style --help``; ``description``:
    the start of its own ``--help``), with the options every command takes (``common``: ``--debug``)."""
    return sub.add_parser(name, parents=[common], help=help, description=description)


def add_meta_arguments(
    parser: argparse.ArgumentParser, *, default: str, meta_help: str, option_help: str, model_args_help: str
) -> None:
    """``--meta``, ``--meta-option KEY=VALUE`` (repeatable, values read as YAML) and
    ``--model-args`` (or ``--model_args``, as lm-evaluation-harness spells it): how
    ``render`` and ``chat`` choose and configure the meta template."""
    parser.add_argument("--meta", metavar="M", default=default, help=meta_help)
    parser.add_argument(
        "--meta-option", metavar="KEY=VALUE", type=key_value, action="append", default=[], help=option_help
    )
    # --model_args: lm-evaluation-harness's spelling, accepted as written there.
    parser.add_argument(
        "--model-args", "--model_args", dest="model_args", metavar="KEY=VALUE,...", help=model_args_help
    )


def add_data_argument(parser: argparse.ArgumentParser, *, help: str) -> None:
    """``--data SPLIT=PATH``, repeatable: records for a split, instead of the task's own."""
    parser.add_argument("--data", metavar="SPLIT=PATH", type=split_assignment, action="append", default=[], help=help)


def _keys(text: str) -> list[str]:
    keys = [key.strip() for key in text.split(",")]
    if not all(keys):
        raise argparse.ArgumentTypeError(f"expected KEY,KEY,..., got {text!r}")
    return keys


def add_choice_order_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that reorder each record's choices (the gold answer following):
    ``--shuffle-choices SEED``, ``--circular``, ``--place-correct-choice-position K``,
    ``--choice-order ORDER``, and where the choices are: ``--option-keys``, ``--answer-key``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--shuffle-choices",
        metavar="SEED",
        type=int,
        help="shuffle each record's choices, seeded by SEED and the record's index; the gold answer follows",
    )
    group.add_argument(
        "--circular",
        action="store_true",
        help="every rotation of each record's choices, one prompt each (OpenCompass's CircularEval)",
    )
    group.add_argument(
        "--place-correct-choice-position",
        metavar="K",
        type=non_negative,
        help="show the gold choice at position K (0 is the first), the others in their order",
    )
    group.add_argument(
        "--choice-order",
        metavar="ORDER",
        help="original, reversed, shuffle:SEED, rotate:K, correct:K, circular or all_possible",
    )
    parser.add_argument(
        "--option-keys",
        metavar="KEY,...",
        type=_keys,
        help="the record's option columns (or the one field holding the list of choices) that a choice order "
        "permutes, when the question's text is built from them (default: the extracted choices; OpenCompass: "
        "its CircularEval option keys)",
    )
    parser.add_argument(
        "--answer-key",
        metavar="KEY",
        help="with --option-keys: the field holding the answer, remapped with its choice",
    )


def choice_order_of(args: argparse.Namespace) -> dict[str, object]:
    """``load_task``'s ``choice_order``, ``option_keys`` and ``answer_key`` from the options."""
    order = None
    if args.shuffle_choices is not None:
        order = f"shuffle:{args.shuffle_choices}"
    elif args.circular:
        order = "circular"
    elif args.place_correct_choice_position is not None:
        order = f"correct:{args.place_correct_choice_position}"
    elif args.choice_order is not None:
        order = args.choice_order
    return {"choice_order": order, "option_keys": args.option_keys, "answer_key": args.answer_key}


def add_style_option_argument(parser: argparse.ArgumentParser) -> None:
    """``--style-option KEY=VALUE``, repeatable: an option of the style over the task's ``template`` options."""
    parser.add_argument(
        "--style-option",
        metavar="KEY=VALUE",
        type=key_value,
        action="append",
        default=[],
        help="an option of the style, VALUE read as YAML, over the task's template options "
        "(e.g. generation=cot, suffix=Answer:); repeatable",
    )


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that load a task the way ``render`` does (style, meta template,
    shots, data, ...), shared by every command that loads one; :func:`load_options`
    turns them into :func:`~prompt_style.load_task` keyword arguments."""
    parser.add_argument("--style", metavar="S", help="style replacing the task's template (e.g. mcq::gpqa, cloze)")
    add_style_option_argument(parser)
    add_meta_arguments(
        parser,
        default="plain",
        meta_help="meta template: plain (default), messages, chatml, ..., or a meta template file (.yaml, .json, "
        "OpenCompass .py model config)",
        option_help="an option of the meta template, VALUE read as YAML (e.g. add_generation_prompt=false); repeatable",
        model_args_help="lm-evaluation-harness's model args: chat_template=NAME chooses the meta template, "
        "pretrained=PATH / tokenizer=PATH the tokenizer, other keys are meta options",
    )
    parser.add_argument(
        "--shots", metavar="K", type=non_negative, help="number of few-shot examples (replaces num_fewshot)"
    )
    parser.add_argument("--seed", metavar="N", type=whole_number, help="seed for random retrieval")
    add_data_argument(parser, help="replace a split's data file (repeatable)")
    parser.add_argument(
        "--trust-code",
        action="store_true",
        help="allow the task file to run code (lm-evaluation-harness !function, OpenCompass .py configs)",
    )
    parser.add_argument(
        "--template",
        metavar="N|NAME",
        help="which of the task file's templates to render (task-template files: number, name or id)",
    )
    parser.add_argument(
        "--task-format", metavar="NAME", help="the task file's format, when detection should not decide"
    )
    parser.add_argument(
        "--system-instruction",
        metavar="TEXT",
        help="text starting the system message, before the task's description (lm-eval --system_instruction)",
    )
    parser.add_argument(
        "--fewshot-as-multiturn",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with a chat meta template, few-shot examples as user/assistant turns (the default); "
        "--no-fewshot-as-multiturn puts the plain-text prompt in one user message",
    )
    parser.add_argument(
        "--mode",
        choices=("gen", "ppl"),
        help="generation or perplexity prompts, for tasks with modes (OpenCompass; default: from the inferencer)",
    )
    parser.add_argument(
        "--data-root",
        metavar="DIR",
        help="where task-template files find their data_dir (default: next to the task file, or data/processed/)",
    )
    parser.add_argument(
        "--budget",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="raise or lower a safety budget for templates and task files, e.g. deadline=2 or "
        "max_output=50000000 (repeatable; see docs/security.md)",
    )


def load_options(args: argparse.Namespace) -> dict[str, Any]:
    """The :func:`~prompt_style.load_task` keyword arguments that
    :func:`add_task_arguments`'s options ask for."""
    return {
        "style": args.style,
        "meta": args.meta,
        "meta_options": dict(args.meta_option),
        "shots": args.shots,
        "seed": args.seed,
        "data": dict(args.data) or None,
        "trust_code": args.trust_code,
        "template": int(args.template) if args.template and args.template.isdigit() else args.template,
        "task_format": args.task_format,
        "system_instruction": args.system_instruction,
        "fewshot_as_multiturn": args.fewshot_as_multiturn,
        "mode": args.mode,
        "read_options": {"data_root": args.data_root} if args.data_root else None,
        "model_args": args.model_args,
        "style_options": dict(args.style_option) or None,
    }
