"""The ``prompt-style`` command.

Each command is a module of this package with ``NAME``, ``add_parser(sub,
common)`` and ``run(args, out) -> int``, listed in :data:`COMMANDS` (the
built-in ones also hold their ``HELP`` line and ``DESCRIPTION``, and build
their parser with ``_common.add_command``); every command is documented in
docs/cli.md, option by option, and tested (tests/test_cli_documented.py
checks both).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

from ..errors import PromptStyleError
from ._common import EXIT_BAD_INPUT, Parser

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_BAD_INPUT"]

COMMANDS: tuple[str, ...] = (
    "plugins",
    "render",
    "validate",
    "instantiate",
    "convert",
    "chat",
    "export",
    "grid",
    "spread",
    "score",
    "lint",
    "new",
)
"""The command modules, in the order ``--help`` lists them."""


PLUGINS_DIR_HELP = (
    "load every *.py file of DIR as a plugin, without packaging (repeatable; "
    "also PROMPT_STYLE_PLUGINS_DIR, os.pathsep-separated)"
)


def _module(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def build_parser() -> argparse.ArgumentParser:
    # --debug is accepted before and after the command; SUPPRESS keeps the
    # command's parser from resetting a --debug given before it.
    common = Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
    common.add_argument(
        "--plugins-dir", metavar="DIR", action="append", dest="plugins_dir_after", default=[], help=PLUGINS_DIR_HELP
    )
    parser = Parser(
        prog="prompt-style",
        description="Build the exact prompts LLM evaluations send to models.",
    )
    parser.add_argument("--debug", action="store_true", default=False, help="show tracebacks for errors")
    parser.add_argument("--plugins-dir", metavar="DIR", action="append", default=[], help=PLUGINS_DIR_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        _module(name).add_parser(sub, common)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = str(message)
    if not text.startswith("prompt-style:"):
        text = f"prompt-style: {category.__name__}: {text}"
    print(text.replace("prompt-style: ", "prompt-style: warning: ", 1), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    folders = [*args.plugins_dir, *getattr(args, "plugins_dir_after", [])]
    if not folders:
        return _run_command(args)
    # Through the environment, so that every plugin manager of the command and any
    # worker process it starts load the same folders (restored for in-process callers).
    from .._plugins_dir import ENV_DIRS

    before = os.environ.get(ENV_DIRS)
    os.environ[ENV_DIRS] = os.pathsep.join([os.path.abspath(f) for f in folders] + ([before] if before else []))
    try:
        return _run_command(args)
    finally:
        if before is None:
            del os.environ[ENV_DIRS]
        else:
            os.environ[ENV_DIRS] = before


def _check_folders(args: argparse.Namespace) -> None:
    """A plugins folder that does not exist is an error even for a command that loads no plugins."""
    from .._plugins_dir import check_folder

    for folder in [*args.plugins_dir, *getattr(args, "plugins_dir_after", [])]:
        check_folder(folder, "--plugins-dir")


def _run_command(args: argparse.Namespace) -> int:
    out = sys.stdout
    try:
        # Text that UTF-8 cannot hold (a lone surrogate from a JSON record) is
        # written as a \udXXX escape; JSON Lines escape it themselves.
        out.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass
    command = _module(args.command).run
    try:
        _check_folders(args)
        return command(args, out)
    except PromptStyleError as exc:
        if args.debug:
            raise
        message = " ".join(str(exc).split("\n"))  # one line, whatever the message quotes
        print(f"prompt-style: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader (for example `head`) went away; that is not an error. Point
        # stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except (RecursionError, MemoryError) as exc:
        # Last resort: input too large or too deep for a budget to have caught first.
        if args.debug:
            raise
        print(
            f"prompt-style: error: the input is too large or too deeply nested ({type(exc).__name__})", file=sys.stderr
        )
        return EXIT_BAD_INPUT
