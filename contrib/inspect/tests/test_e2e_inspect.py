"""The real harness, end to end: ``tools/bridges/e2e_inspect.py`` against the inspect_ai venv.

Slow (a few minutes: it layers a venv over the harness venv, then runs the
harness's command line for every case). Skipped where the harness venv is
absent (``PROMPT_STYLE_INSPECT_VENV``, default ``/tmp/venvs/inspect``, ready when it
holds ``.ready``), and inside the harness's own environment, where the
runner itself runs this directory's other tests.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
VENV = Path(os.environ.get("PROMPT_STYLE_INSPECT_VENV", "/tmp/venvs/inspect"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (VENV / ".ready").exists(), reason=f"no inspect_ai venv at {VENV} (.ready missing)"),
    pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is not None, reason="runs from outside the harness"),
]


def test_what_the_harness_hands_the_model_is_what_render_gives(tmp_path):
    runner = ROOT / "tools" / "bridges" / "e2e_inspect.py"
    argv = [sys.executable, str(runner), "--harness-venv", str(VENV), "--work", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
