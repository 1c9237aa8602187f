"""The ``prompt-style`` command.

Each command is a module of this package with ``NAME``, ``add_parser(sub,
common)`` and ``run(args, out) -> int`` (and, optionally, ``usage_problem(args)``:
a usage error argparse cannot see, or ``None``), listed in :data:`COMMANDS` (the
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
from typing import Any

from ..errors import MESSAGE_LIMIT, PromptStyleError, one_line
from ._common import ENVIRONMENT, EXIT_BAD_INPUT, Parser

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_BAD_INPUT"]

COMMANDS: tuple[str, ...] = (
    "plugins",
    "render",
    "view",
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


EXAMPLES = """examples:
  prompt-style render --example mmlu                      the bundled MMLU example, 5-shot
  prompt-style render task.yaml --limit 3                 a task's first three prompts
  prompt-style render task.yaml --meta chatml --shots 1   as a ChatML model sees it, 1-shot
  prompt-style view task.yaml --diff --style mcq --style cloze
                                                          what changes between two styles
  prompt-style render task.yaml --format jsonl --output prompts.jsonl
  prompt-style plugins --all                              every style, meta template and retriever

Run `prompt-style COMMAND --help` for a command's options; docs/cli.md has them all."""


class _Version(argparse.Action):
    """``--version``: the version from the installed metadata, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .. import __version__

        sys.stdout.write(f"prompt-style {__version__}\n")
        parser.exit(0)


PLUGINS_DIR_HELP = (
    "load every *.py file of DIR as a plugin, without packaging (repeatable; "
    "also PROMPT_STYLE_PLUGINS_DIR, os.pathsep-separated)"
)


def _module(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, when it names one plainly after the global options
    (``--debug``, ``--plugins-dir DIR``), else ``None``."""
    tokens = iter(argv)
    for token in tokens:
        if token == "--debug" or token.startswith("--plugins-dir="):
            continue
        if token == "--plugins-dir":
            next(tokens, None)
            continue
        return token if token in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; given the arguments that will be parsed, only the
    command they name is built (building every command's parser, with its help and
    examples, is a good part of the start-up), else all of them."""
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
        epilog=EXAMPLES + "\n\n" + ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", default=False, help="show tracebacks for errors")
    parser.add_argument("--version", action=_Version, help="print the version of prompt-style and exit")
    parser.add_argument("--plugins-dir", metavar="DIR", action="append", default=[], help=PLUGINS_DIR_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    command = None if argv is None else _command_of(argv)
    for name in COMMANDS if command is None else (command,):
        _module(name).add_parser(sub, common)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = str(message)
    if not text.startswith("prompt-style:"):
        text = f"prompt-style: {category.__name__}: {text}"
    _print_error(one_line(text.replace("prompt-style: ", "prompt-style: warning: ", 1)))


_PREFIX = "prompt-style: error: "


def _print_error(line: str) -> None:
    """One line on standard error (which may be closed, or full: then nothing is said)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _error_line(text: str) -> str:
    """``prompt-style: error: ...``: one printable line of at most 2,000 characters."""
    return _PREFIX + one_line(text, MESSAGE_LIMIT - len(_PREFIX))


class _ClosedOutput:
    """Standard output when the command was started with it closed (``>&-``): writing
    to it is an error, one line, instead of a traceback about ``None``."""

    def write(self, text: str) -> int:
        raise PromptStyleError("the standard output is closed", hint="give the command somewhere to write")

    def flush(self) -> None:
        pass


# load_task's keywords, as the command line spells them, and their argparse dests:
# an error about a value given on the command line names the option, not a file or line
_OPTIONS = {
    "style": ("--style", "style"),
    "shots": ("--shots", "shots"),
    "seed": ("--seed", "seed"),
    "retriever": ("--retriever", "retriever"),
    "fewshot_split": ("--fewshot-split", "fewshot_split"),
    "doc_id": ("--doc-id", "doc_id"),
}


def _name_the_option(exc: PromptStyleError, args: argparse.Namespace) -> None:
    key = exc.key or ""
    if exc.line is not None:
        return
    if key in _OPTIONS:
        flag, dest = _OPTIONS[key]
        if getattr(args, dest, None) is not None:
            exc.key, exc.file = flag, None
    elif key.startswith("style_options.") and getattr(args, "style_option", None):
        exc.key, exc.file = f"--style-option {key[len('style_options.') :]}", None


def main(argv: Sequence[str] | None = None) -> int:
    own_process = argv is None  # the command line's own process (not a caller's, in-process)
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        args = parser.parse_args(argv)  # KEY=VALUE options may warn
        problem = getattr(_module(args.command), "usage_problem", None)
        message = problem(args) if problem is not None else None
        if message:
            sub = next(a for a in parser._actions if a.dest == "command")
            sub.choices[args.command].error(message)
        args.own_process = own_process
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
    out = sys.stdout if sys.stdout is not None else _ClosedOutput()
    try:
        # Text that UTF-8 cannot hold (a lone surrogate from a JSON record) is
        # written as a \udXXX escape; JSON Lines escape it themselves.
        out.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        pass
    command = _module(args.command).run
    try:
        _check_folders(args)
        status = command(args, out)
        _flush(out)
        return status
    except PromptStyleError as exc:
        _name_the_option(exc, args)
        if args.debug:  # the traceback, then the one-line error; bad input still exits 2
            _print_traceback()
        _print_error(_error_line(str(exc)))
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader (for example `head`) went away; that is not an error. Point
        # stdout at devnull so the interpreter's final flush does not fail again.
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        # A file that cannot be written (--out where no directory can be made, a full
        # disk, standard output on /dev/full): one line, naming it.
        if args.debug:
            _print_traceback()
        where = exc.filename if exc.filename is not None else "the output"
        _print_error(_error_line(f"cannot write {where}: {exc.strerror or exc}"))
        _silence_stdout()
        return EXIT_BAD_INPUT
    except (RecursionError, MemoryError) as exc:
        # Last resort: input too large or too deep for a budget to have caught first.
        if args.debug:
            _print_traceback()
        _print_error(_error_line(f"the input is too large or too deeply nested ({type(exc).__name__})"))
        return EXIT_BAD_INPUT
    except Exception as exc:
        # Never a raw traceback: a bug of ours (or of a plugin), said in one line (--debug
        # prints the traceback first).
        if args.debug:
            _print_traceback()
        _print_error(
            _error_line(f"internal error: {type(exc).__name__}: {exc} (--debug shows the traceback; please report it)")
        )
        return EXIT_BAD_INPUT


def _print_traceback() -> None:
    """``--debug``: the traceback, before the one-line error."""
    import traceback

    try:
        traceback.print_exc(file=sys.stderr)
    except (OSError, ValueError, AttributeError):
        pass


def _flush(out: Any) -> None:
    """Write out what is buffered now, so that a full disk is this command's error."""
    flush = getattr(out, "flush", None)
    if flush is not None:
        flush()


def _silence_stdout() -> None:
    """Point standard output at devnull, so the interpreter's final flush of what could
    not be written does not fail again (after a broken pipe or a full disk)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
