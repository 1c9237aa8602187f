"""The real harness, end to end: ``tools/bridges/e2e_inspect.py`` (every case: the harness's
command line with an offline model recording what it receives, compared with
``prompt-style render --format jsonl``, record by record).

Slow (minutes). Where inspect_ai is importable (a venv with the harness, prompt-style
and the bridge: tools/harnesses/run.py builds one), the runner uses this Python.
Elsewhere (the development environment) it layers a venv over the harness venv
``PROMPT_STYLE_INSPECT_VENV`` (default ``/tmp/venvs/inspect``, ready when it holds
``.ready``), and skips without it. It skips inside the runner's own pytest run.
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
HERE = importlib.util.find_spec("inspect_ai") is not None

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(os.environ.get("PROMPT_STYLE_E2E_RUNNER")), reason="the runner is running these tests"),
    pytest.mark.skipif(not HERE and not (VENV / ".ready").exists(), reason=f"no inspect_ai here, nor a venv at {VENV}"),
]


def test_what_the_harness_hands_the_model_is_what_render_gives(tmp_path):
    runner = ROOT / "tools" / "bridges" / "e2e_inspect.py"
    where = ["--python", sys.executable, "--no-pytest"] if HERE else ["--harness-venv", str(VENV)]
    argv = [sys.executable, str(runner), *where, "--work", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
