"""What every command shares: the exit status for bad input, the one-line usage
errors, the argument types, and the arguments two commands take alike."""

from __future__ import annotations

import argparse

EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """Usage errors in the same one-line form as every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"prompt-style: error: {message} (see: {self.prog} --help)\n")


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
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


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
