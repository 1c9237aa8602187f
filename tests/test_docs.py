"""Every code block of the documentation (docs/*.md and the README) is run or read:

- ``python`` blocks are executed, a page's blocks in order in one namespace (as a
  reader would paste them), from the repository root;
- ``sh``/``console``/``bash`` blocks: each ``prompt-style`` command (after an optional
  ``$``, ``uv run`` or line continuations) is run through the CLI in-process and must
  exit 0 (or 2 when the block shows the error it gives); files it writes go to a
  temporary folder. Set-up lines (``pip install``, ``uv sync``, ``uv run pytest``,
  ``uv build``, ``cd``, ``git clone``...) are not run;
- ``yaml``, ``json`` and ``toml`` blocks must parse (JSON Lines: each line);
- blocks without a language, and ``text``, are output: not run.

A block that cannot run as written (it names a model folder the reader has, a file
written earlier, a placeholder such as ``TASK``) is marked, on the line before its
fence, with ``<!-- illustrative: why -->``; this test checks that the marker is used
only on code blocks and that every other block runs (docs/index.md says so too).

A tutorial's own files are blocks marked ``<!-- file: NAME -->``: they are written to
a temporary folder, and the page's commands and Python run there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
MARKER = re.compile(r"^<!-- illustrative: (.+?) -->$")
FILE = re.compile(r"^<!-- file: ([\w./-]+) -->$")
FENCE = re.compile(r"^(\s*)```([\w+-]*)\s*$")
SHELL = {"sh", "console", "bash", "shell"}
SETUP = re.compile(
    r"^(pip install|python -m pip|uv (sync|build|add|pip)|uv run (pytest|python bench|ruff)|cd |git |export |"
    r"pytest|ruff|mkdocs|python -m venv|source |\. |uv run --group \S+ |lint-imports)"
)
PLACEHOLDER = re.compile(r"\b(TASK|MODEL|PATH|DIR|FILE|NAME|SPLIT|CONVERSATION|OUT)\b|path/to|\.\.\.|<[a-z_]+>")


@dataclass
class Block:
    page: Path
    line: int
    language: str
    text: str
    illustrative: str | None
    file: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, language = match.group(1), match.group(2).lower()
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        previous = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(previous)
        file = FILE.match(previous)
        found.append(
            Block(
                page,
                start + 1,
                language,
                "\n".join(body) + "\n",
                marker.group(1) if marker else None,
                file.group(1) if file else None,
            )
        )
        i += 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]


def workdir(page: Path, tmp_path: Path) -> Path:
    """Where a page's code runs: the repository root, or, for a page with files of its
    own (``<!-- file: NAME -->``), a temporary folder holding them."""
    files = [b for b in blocks(page) if b.file]
    if not files:
        return ROOT
    work = tmp_path / "work"
    for block in files:
        target = work / block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text, encoding="utf-8")
    return work


def test_the_pages_have_code():
    assert len(ALL) > 100
    assert {b.language for b in ALL} >= {"python", "sh", "yaml", "json"}


def test_markers_are_on_code_blocks_only():
    for block in ALL:
        if block.illustrative:
            assert block.language in {"python", *SHELL, "yaml", "json", "toml"}, f"{block.id}: the marker is for code"


# -- python ------------------------------------------------------------------------------


def _python_pages() -> list[Path]:
    return sorted({b.page for b in ALL if b.language == "python" and not b.illustrative})


@pytest.mark.parametrize("page", _python_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(page, monkeypatch, tmp_path):
    monkeypatch.chdir(workdir(page, tmp_path))
    monkeypatch.setenv("PROMPT_STYLE_NOW", "2025-07-10T12:00:00")
    module = types.ModuleType(f"docs_{page.stem.replace('-', '_')}")  # a real module: dataclasses look it up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    for block in blocks(page):
        if block.language != "python" or block.illustrative:
            continue
        code = compile(block.text, f"{block.id}", "exec")
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(code, namespace)  # the documentation's own examples
            except Exception as exc:  # name the block: the traceback's file is the page and line
                raise AssertionError(f"{block.id}: {type(exc).__name__}: {exc}") from exc


# -- shell -------------------------------------------------------------------------------------


def commands(block: Block) -> list[tuple[str, bool]]:
    """``(command, shows_an_error)`` for each prompt-style command of a shell block, or
    raise ``ValueError`` naming a line that is neither a command nor set-up."""
    text = block.text.replace("\\\n", " ")
    out = []
    console = any(line.startswith("$ ") for line in text.splitlines())
    shows_error = "prompt-style: error:" in text
    for raw in text.splitlines():
        line = raw.strip()
        if console:
            if not line.startswith("$ "):
                continue  # output shown in the block
            line = line[2:]
        if not line or line.startswith("#"):
            continue
        line = re.sub(r"\s+#\s.*$", "", line)  # a trailing comment
        line = re.sub(r"^pip install uv && ", "", line)
        if SETUP.match(line):
            continue
        line = re.sub(r"^uv run ", "", line)
        if not line.startswith("prompt-style "):
            raise ValueError(f"{block.id}: {raw.strip()!r} is neither a prompt-style command nor set-up")
        out.append((line, shows_error))
    return out


def _shell_blocks() -> list[Block]:
    return [b for b in ALL if b.language in SHELL and not b.illustrative]


@pytest.mark.parametrize("block", _shell_blocks(), ids=lambda b: b.id)
def test_shell_blocks_run(block, monkeypatch, tmp_path, capsys):
    from prompt_style.cli import main

    try:
        found = commands(block)
    except ValueError as exc:
        pytest.fail(f"{exc}; mark the block <!-- illustrative: why --> or make it runnable")
    work = workdir(block.page, tmp_path)
    monkeypatch.chdir(work)
    monkeypatch.setenv("PROMPT_STYLE_NOW", "2025-07-10T12:00:00")
    for command, shows_error in found:
        if "|" in command or ">" in command:
            command = re.split(r"\s[|>]\s?", command)[0]  # the command itself; not the pipe or redirect
        if PLACEHOLDER.search(command):
            pytest.fail(f"{block.id}: {command!r} has a placeholder; mark the block <!-- illustrative: why -->")
        argv = shlex.split(command)[1:]
        for option in ("--out", "--output", "-o", "--html"):
            if option in argv:  # what it writes goes to a temporary folder
                position = argv.index(option) + 1
                argv[position] = str(tmp_path / Path(argv[position]).name)
        for word in argv:
            if re.fullmatch(r"[\w./-]+\.(yaml|yml|json|jsonl|py|jinja)", word) and not word.startswith("/tmp"):
                assert (work / word).exists(), (
                    f"{block.id}: {word} does not exist; mark the block or use a repository file"
                )
        try:
            code = main(argv)
        except SystemExit as exc:  # a usage error
            code = exc.code
        out, err = capsys.readouterr()
        expected = (0, 2) if shows_error else (0,)
        assert code in expected, f"{block.id}: `{command}` exited {code}: {err[-500:]}"


# -- data -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.language in ("yaml", "json", "toml") and not b.illustrative], ids=lambda b: b.id
)
def test_data_blocks_parse(block):
    from prompt_style import load_yaml

    if block.language == "yaml":
        load_yaml(block.id, text=block.text)
    elif block.language == "toml":
        tomllib = pytest.importorskip("tomllib")  # Python 3.11+
        tomllib.loads(block.text)
    else:
        try:
            json.loads(block.text)
        except json.JSONDecodeError:
            for line in block.text.splitlines():  # JSON Lines
                if line.strip():
                    json.loads(line)


def test_docs_say_how_blocks_are_checked():
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "<!-- illustrative:" in text and "tests/test_docs.py" in text


def test_the_site_builds_with_mkdocs_in_ci():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "mkdocs build --strict" in ci
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, flags=re.M))
    assert listed == {p.name for p in (ROOT / "docs").glob("*.md")}, "every page is in mkdocs.yml's nav"
    assert os.path.exists(ROOT / "mkdocs.yml")
