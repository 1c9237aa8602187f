"""What every command shares: the exit status for bad input, the one-line usage
errors, the argument types, and the arguments two commands take alike."""

from __future__ import annotations

import argparse
from typing import Any

EXIT_BAD_INPUT = 2

ENVIRONMENT = """environment variables:
  PROMPT_STYLE_PLUGINS    load only these plugins (comma-separated entry-point or distribution names)
  PROMPT_STYLE_DISABLE    block these plugins (comma-separated), built-ins included
  PROMPT_STYLE_PREFER     NAME=PLUGIN pairs choosing who provides a name two plugins provide
  PROMPT_STYLE_LIMITS     sandbox budgets, e.g. deadline=2,max_output=50000000
  PROMPT_STYLE_NOW        the clock chat templates read, e.g. 2025-07-10T12:00:00
  PROMPT_STYLE_DATA_ROOT  where task-template files find their data_dir
  PROMPT_STYLE_PLUGINS_DIR  folders of *.py plugins to load without packaging (as --plugins-dir)"""


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
    """``KEY=VALUE``, by the one rule of every ``KEY=VALUE`` option (``--meta-option``,
    ``--style-option``, ``convert --metadata``): ``VALUE`` is a string, as written,
    unless it is JSON — ``true``, ``false``, ``null``, a number, a ``"quoted string"``
    (with JSON's escapes: ``"\\n"`` is a newline), a ``[list]`` or an ``{object}``."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    parsed = json_value(value)
    if parsed is _NOT_JSON:
        if _has_escape(value):
            import warnings

            warnings.warn(
                f"prompt-style: {key}={value}: the value is kept as written, backslashes included; "
                f"for a newline or tab write it as a JSON string: {key}='\"{value}\"'",
                UserWarning,
                stacklevel=2,
            )
        return key, value
    return key, parsed


_NOT_JSON: object = object()
_JSON_START = frozenset('-0123456789"[{tfn')


def _has_escape(value: str) -> bool:
    """``\\n``, ``\\t`` or ``\\r`` in a value that is not JSON: probably meant as an escape."""
    return "\\n" in value or "\\t" in value or "\\r" in value


def json_value(value: str) -> object:
    """``value`` parsed as JSON, or ``_NOT_JSON`` (``NaN`` and ``Infinity``, which
    Python's JSON reader accepts, are not JSON)."""
    stripped = value.strip()
    if not stripped or stripped[0] not in _JSON_START:
        return _NOT_JSON  # most values: no need to import json
    import json

    def reject(constant: str) -> object:
        raise ValueError(constant)

    try:
        return json.loads(stripped, parse_constant=reject)
    except ValueError:
        return _NOT_JSON


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
    sub: argparse._SubParsersAction,
    common: argparse.ArgumentParser,
    name: str,
    help: str,
    description: str,
    examples: str | None = None,
) -> argparse.ArgumentParser:
    """A command's parser (``help``: its line in ``prompt-style --help``; ``description``:
    the start of its own ``--help``; ``examples``: command lines with what each does,
    shown at the end of its ``--help`` with the environment variables), with the
    options every command takes (``common``: ``--debug``)."""
    epilog = (f"examples:\n{examples}\n\n" if examples else "") + ENVIRONMENT
    return sub.add_parser(
        name,
        parents=[common],
        help=help,
        description=description,
        epilog=epilog,
        formatter_class=_Formatter,
    )


class _Formatter(argparse.HelpFormatter):
    """Options wrapped as usual; the examples and environment variables kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(("examples:", "environment variables:")):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def add_meta_arguments(
    parser: argparse.ArgumentParser,
    *,
    default: str | None,
    meta_help: str,
    option_help: str,
    model_args_help: str,
    repeat: bool = False,
) -> None:
    """``--meta`` (repeatable with ``repeat``), ``--meta-option KEY=VALUE`` (repeatable,
    values by :func:`key_value`'s rule) and ``--model-args`` (or ``--model_args``, as
    lm-evaluation-harness spells it): how ``render``, ``view`` and ``chat`` choose and
    configure the meta template."""
    parser.add_argument("--meta", metavar="M", default=default, action="append" if repeat else "store", help=meta_help)
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
        help="an option of the style, over the task's template options (VALUE a string unless it is JSON, "
        "e.g. generation=cot, suffix=Answer:); repeatable",
    )


def add_task_arguments(parser: argparse.ArgumentParser, *, variants: bool = False) -> None:
    """The options that load a task the way ``render`` does (style and its options,
    meta template, shots, retriever, data, ...), shared by every command that loads
    one; :func:`load_options` turns them into :func:`~prompt_style.load_task` keyword
    arguments. ``variants``: ``--style``, ``--meta`` and ``--shots`` may be given more
    than once (``view`` compares them). The task itself is the command's own argument."""
    repeat = "; repeatable" if variants else ""
    parser.add_argument(
        "--style",
        metavar="S",
        action="append" if variants else "store",
        help="style replacing the task's template (e.g. mcq::gpqa, cloze)" + repeat,
    )
    add_style_option_argument(parser)
    add_meta_arguments(
        parser,
        default=None if variants else "plain",
        meta_help="meta template: plain (default), messages, chatml, ..., or a meta template file (.yaml, .json, "
        "OpenCompass .py model config)" + repeat,
        option_help="an option of the meta template, VALUE a string unless it is JSON "
        "(e.g. add_generation_prompt=false, 'human=\"User: \"'); repeatable",
        model_args_help="lm-evaluation-harness's model args: chat_template=NAME chooses the meta template, "
        "pretrained=PATH / tokenizer=PATH the tokenizer, other keys are meta options",
        repeat=variants,
    )
    parser.add_argument(
        "--shots",
        metavar="K",
        type=non_negative,
        action="append" if variants else "store",
        help="number of few-shot examples (replaces num_fewshot)" + repeat,
    )
    parser.add_argument(
        "--retriever", metavar="NAME", help="how few-shot examples are chosen (first_n, random, fixed, bm25, ...)"
    )
    parser.add_argument(
        "--fewshot-split", metavar="SPLIT", help="the split few-shot examples come from (replaces fewshot_split)"
    )
    parser.add_argument("--seed", metavar="N", type=whole_number, help="seed for random retrieval")
    parser.add_argument(
        "--doc-id", metavar="FIELD", help="the record field holding each record's own id (replaces doc_id)"
    )
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
    :func:`add_task_arguments`'s options ask for (``view`` replaces ``style``,
    ``meta`` and ``shots``, which it varies)."""
    template = args.template
    return {
        "style": args.style,
        "meta": args.meta,
        "meta_options": dict(args.meta_option),
        "shots": args.shots,
        "seed": args.seed,
        "data": dict(args.data) or None,
        "trust_code": args.trust_code,
        "template": int(template) if template and template.isdigit() else template,
        "task_format": args.task_format,
        "system_instruction": args.system_instruction,
        "fewshot_as_multiturn": args.fewshot_as_multiturn,
        "mode": args.mode,
        "read_options": {"data_root": args.data_root} if args.data_root else None,
        "model_args": args.model_args,
        "style_options": dict(args.style_option) or None,
        "retriever": args.retriever,
        "fewshot_split": args.fewshot_split,
        "doc_id": args.doc_id,
    }
