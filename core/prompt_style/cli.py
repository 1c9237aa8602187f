"""The ``prompt-style`` command: ``plugins`` and ``render``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, TextIO

from .errors import PromptStyleError

EXIT_BAD_INPUT = 2


def _split_assignment(text: str) -> tuple[str, str]:
    split, sep, path = text.partition("=")
    if not sep or not split or not path:
        raise argparse.ArgumentTypeError(f"expected SPLIT=PATH, got {text!r}")
    return split, path


def _meta_option(text: str) -> tuple[str, object]:
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, yaml.safe_load(value) if value else ""
    except yaml.YAMLError:
        return key, value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """Usage errors in the same one-line form as every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"prompt-style: error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    # --debug is accepted before and after the command; SUPPRESS keeps the
    # command's parser from resetting a --debug given before it.
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
    parser = _Parser(
        prog="prompt-style",
        description="Build the exact prompts LLM evaluations send to models.",
    )
    parser.add_argument("--debug", action="store_true", default=False, help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    plugins = sub.add_parser(
        "plugins",
        parents=[common],
        help="list installed plugins and the names they provide",
        description="List plugins: distribution, version and the names each provides per hook.",
    )
    plugins.add_argument("--all", action="store_true", help="include built-in, blocked and skipped plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")

    render = sub.add_parser(
        "render",
        parents=[common],
        help="render a task's prompts",
        description="Render the prompts of a task file.",
    )
    render.add_argument("task", metavar="TASK", help="a YAML task file")
    render.add_argument("--style", metavar="S", help="style replacing the task's template (e.g. mcq::gpqa, cloze)")
    render.add_argument(
        "--meta", metavar="M", default="plain", help="meta template: plain (default), messages, chatml, ..."
    )
    render.add_argument(
        "--meta-option",
        metavar="KEY=VALUE",
        type=_meta_option,
        action="append",
        default=[],
        help="an option of the meta template, VALUE read as YAML (e.g. add_generation_prompt=false); repeatable",
    )
    render.add_argument(
        "--shots", metavar="K", type=_non_negative, help="number of few-shot examples (replaces num_fewshot)"
    )
    render.add_argument("--seed", metavar="N", type=int, help="seed for random retrieval")
    render.add_argument("--limit", metavar="N", type=_non_negative, help="render only the first N records")
    render.add_argument(
        "--data",
        metavar="SPLIT=PATH",
        type=_split_assignment,
        action="append",
        default=[],
        help="replace a split's data file (repeatable)",
    )
    render.add_argument("--format", choices=("text", "jsonl"), default="text", help="output format (default: text)")
    render.add_argument(
        "--trust-code",
        action="store_true",
        help="allow the task file to run code (lm-evaluation-harness !function, OpenCompass .py configs)",
    )
    render.add_argument(
        "--template",
        metavar="N|NAME",
        help="which of the task file's templates to render (task-template files: number, name or id)",
    )
    render.add_argument(
        "--task-format", metavar="NAME", help="the task file's format, when detection should not decide"
    )
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = str(message)
    if not text.startswith("prompt-style:"):
        text = f"prompt-style: {category.__name__}: {text}"
    print(text.replace("prompt-style: ", "prompt-style: warning: ", 1), file=sys.stderr)


def _hooks_text(hooks: dict[str, list[str]]) -> str:
    parts = []
    for hook, names in hooks.items():
        parts.append(f"{hook}: {', '.join(names)}" if names else hook)
    return "; ".join(parts) or "-"


def cmd_plugins(args: argparse.Namespace, out: TextIO) -> int:
    from .plugins import create_plugin_manager

    manager = create_plugin_manager()
    rows = [
        row for row in manager.describe() if args.all or (not row["builtin"] and row["status"] in ("loaded", "broken"))
    ]
    if args.json:
        out.write(json.dumps(rows, indent=2) + "\n")
    else:
        if not rows:
            out.write("no plugins installed (built-ins: prompt-style plugins --all)\n")
        for row in rows:
            dist = row["distribution"] or "-"
            version = row["version"] or "-"
            if row["status"] == "loaded":
                detail = _hooks_text(row["hooks"])
            else:
                detail = row["status"].upper()
                if row["errors"]:
                    detail += ": " + "; ".join(row["errors"])
            out.write(f"{row['name']}\t{dist}\t{version}\t{detail}\n")
    for hook, name, providers in manager.conflicts():
        owners = " and ".join(p.plugin.label() for p in providers)
        print(
            f"prompt-style: warning: {hook} name {name!r} is provided by {owners}; "
            f"choose with PROMPT_STYLE_PREFER='{name}=PLUGIN'",
            file=sys.stderr,
        )
    return 0


def _text_block(result: Any) -> str:
    header = f"=== record {result.index} · target: {json.dumps(result.target, ensure_ascii=False)}"
    if result.continuations:
        header += " · continuations: " + json.dumps(list(result.continuations), ensure_ascii=False)
    body = result.text
    if body is None:
        body = json.dumps(result.messages, ensure_ascii=False, indent=2)
    return f"{header}\n{body}\n"


def cmd_render(args: argparse.Namespace, out: TextIO) -> int:
    from .loading import load_task

    task = load_task(
        args.task,
        style=args.style,
        meta=args.meta,
        meta_options=dict(args.meta_option),
        shots=args.shots,
        seed=args.seed,
        data=dict(args.data) or None,
        trust_code=args.trust_code,
        template=int(args.template) if args.template and args.template.isdigit() else args.template,
        task_format=args.task_format,
    )
    write = out.write
    if args.format == "jsonl":
        dumps = json.dumps
        for result in task.render(limit=args.limit):
            write(dumps(result.to_json(), ensure_ascii=False) + "\n")
    else:
        for result in task.render(limit=args.limit):
            write(_text_block(result))
    out.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    out = sys.stdout
    try:
        out.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    command = {"plugins": cmd_plugins, "render": cmd_render}[args.command]
    try:
        return command(args, out)
    except PromptStyleError as exc:
        if args.debug:
            raise
        print(f"prompt-style: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader (for example `head`) went away; that is not an error. Point
        # stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
