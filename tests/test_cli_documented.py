"""Every command of ``prompt-style`` has a section in docs/cli.md and a test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prompt_style.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "cli.md"


def test_parser_knows_every_command():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_command_documented(name):
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    assert f"## `prompt-style {name}`" in lines, f"docs/cli.md has no section for {name}"


@pytest.mark.parametrize("name", COMMANDS)
def test_command_tested(name):
    here = Path(__file__).resolve()
    call = re.compile(rf"""(?:main\(\[|run\(capsys,\s*|cli\(\s*)["']{re.escape(name)}["']""")
    testing = [
        path.name
        for path in ROOT.glob("**/tests/test_*.py")
        if path != here and ".venv" not in path.parts and call.search(path.read_text(encoding="utf-8"))
    ]
    assert testing, f"no test runs `prompt-style {name}`"


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_documented(name):
    # the command's section of docs/cli.md names each option its parser takes
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(f"## `prompt-style {name}`", 1)[1].split("\n## ", 1)[0]
    parser = build_parser()
    command = next(a for a in parser._actions if a.dest == "command").choices[name]
    options = [o for a in command._actions for o in a.option_strings if o not in ("-h", "--help", *global_options())]
    missing = [o for o in options if f"`{o}" not in section]
    assert not missing, f"docs/cli.md's section on {name} does not name {missing}"


def global_options() -> list[str]:
    """The options of ``prompt-style`` itself, which every command also takes (``--debug``, ...)."""
    parser = build_parser()
    return [o for a in parser._actions for o in a.option_strings if o not in ("-h", "--help")]


def test_global_options_documented_before_the_commands():
    text = DOCS.read_text(encoding="utf-8")
    head = text.split("\n## ", 1)[0]
    missing = [o for o in global_options() if f"`{o}" not in head]
    assert not missing, f"docs/cli.md's introduction does not name {missing}"
