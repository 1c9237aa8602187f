"""No file of the repository's own text over 1,200 lines: a longer one is split by what
its parts hold (docs/architecture.md, "Where the code lives"). Data is exempt: golden
files and records (JSON, JSON Lines, compressed), and the lock file uv writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 1200
# data, not text anyone edits: goldens, records, tokenizer files, uv's lock file
EXEMPT_SUFFIXES = (".json", ".jsonl", ".gz", ".lock", ".png", ".parquet", ".arrow", ".model")


def _tracked() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [ROOT / name for name in done.stdout.decode("utf-8").split("\0") if name]


def test_no_file_over_1200_lines():
    too_long = []
    for path in _tracked():
        if path.name.endswith(EXEMPT_SUFFIXES) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        lines = text.count("\n") + (not text.endswith("\n") and text != "")
        if lines > MAX_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not too_long, f"over {MAX_LINES} lines (split them by what the parts hold): " + "; ".join(too_long)
