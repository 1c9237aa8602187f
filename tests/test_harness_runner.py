"""tools/harnesses/run.py, the end-to-end runner .ci/run calls: its specs, and what it
reports when a harness release cannot be installed (pip is replaced by a stand-in here;
the real builds run in CI)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def runner():
    spec = importlib.util.spec_from_file_location("harness_runner", ROOT / "tools" / "harnesses" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["harness_runner"] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("harness_runner", None)


def test_every_harness_has_end_to_end_tests_that_exist(runner):
    specs = runner.load_specs()
    assert {"lm-eval", "inspect", "lighteval", "opencompass", "scale"} <= set(specs)
    for spec in specs.values():
        assert spec.tests, spec.harness
        for path in [*spec.tests, *spec.bridges]:
            assert (ROOT / path).exists(), (spec.harness, path)
        assert "TODO" not in spec.notes, spec.harness


def _fake_pip(failing: str):
    calls = []

    def run(command, log, cwd=None, env=None):
        calls.append(command)
        if any(failing in str(part) for part in command):
            raise RuntimeError(f"{failing} exited 1")
        if command[1:3] == ["-m", "venv"]:
            Path(command[3]).mkdir(parents=True)

    return run, calls


@pytest.mark.parametrize("skip", [False, True])
def test_a_release_pip_cannot_install_is_unavailable_only_when_asked(runner, tmp_path, monkeypatch, skip):
    run, calls = _fake_pip("no-such-release==0")
    monkeypatch.setattr(runner, "run", run)
    spec = runner.Spec("demo", "demo 0", install=["no-such-release==0"], tests=["tests/test_scale_engines.py"])
    outcome = runner.one(spec, tmp_path, True, tmp_path, skip_unavailable=skip)
    assert outcome.status == ("unavailable" if skip else "failed")
    assert outcome.detail.startswith("build: ") and "demo.log" in outcome.detail
    assert not any("-m" in command and "pytest" in command[command.index("-m") + 1] for command in calls)


def test_our_own_failures_always_fail(runner, tmp_path, monkeypatch):
    # an after_install command is this repository's code, and so are the bridges' tests
    for failing, step in (("workarounds.py", "build"), ("test_scale_engines.py", "tests")):
        run, _ = _fake_pip(failing)
        monkeypatch.setattr(runner, "run", run)
        spec = runner.Spec(
            "demo",
            "demo 0",
            install=["demo==0"],
            after_install=["{python} workarounds.py"],
            tests=["tests/test_scale_engines.py"],
        )
        outcome = runner.one(spec, tmp_path / step, True, tmp_path, skip_unavailable=True)
        assert outcome.status == "failed" and outcome.detail.startswith(f"{step}: "), outcome


def test_main_exits_0_with_unavailable_and_says_so(runner, tmp_path, monkeypatch, capsys):
    run, _ = _fake_pip("lm-eval==0.4.13")
    monkeypatch.setattr(runner, "run", run)
    out = tmp_path / "outcomes.json"
    args = ["--harness", "lm-eval", "--venvs", str(tmp_path), "--rebuild", "--json", str(out)]
    assert runner.main([*args, "--skip-unavailable"]) == 0
    assert "unavailable: build: " in capsys.readouterr().out
    assert json.loads(out.read_text())[0]["status"] == "unavailable"
    assert runner.main(args) == 1
