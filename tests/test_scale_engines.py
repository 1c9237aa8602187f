"""``as_map_function`` on the real engines: Hugging Face ``datasets`` (``Dataset.map``
with ``num_proc``) and Ray Data (``map_batches`` on a local Ray). Skipped when the
engine is not installed (``uv sync --group scale`` installs both; .ci/run does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_style
from prompt_style import as_map_function

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
BASE = [json.loads(line) for line in (ROOT / "examples" / "mmlu" / "data" / "test.jsonl").open(encoding="utf-8")]
RECORDS = [dict(BASE[i % len(BASE)], question=f"{BASE[i % len(BASE)]['question']} #{i}") for i in range(300)]
OPTIONS = {"shots": 3, "seed": 7}


def _report(case: str, records: int) -> None:
    """One line for tools/harnesses/run.py's summary (``$PROMPT_STYLE_E2E_REPORT``)."""
    path = os.environ.get("PROMPT_STYLE_E2E_REPORT")
    if path:
        line = {"bridge": "scale", "case": case, "compared_with": "render", "records": records}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


@pytest.fixture(scope="module")
def task_file(tmp_path_factory):
    """The MMLU example with a seeded random retriever, so that prompts depend on the record index."""
    path = tmp_path_factory.mktemp("task") / "task.yaml"
    text = MMLU.read_text(encoding="utf-8").replace("data/", str(MMLU.parent / "data") + "/")
    path.write_text(text.replace("retriever: first_n", "retriever: random"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def expected(task_file):
    task = prompt_style.load_task(task_file, data={"test": RECORDS}, **OPTIONS)
    return [r.to_json() for r in task.render()]


@pytest.mark.slow
@pytest.mark.parametrize(("num_proc", "batch_size"), [(None, 1000), (2, 7), (2, 64)])
def test_datasets_map(task_file, expected, tmp_path, monkeypatch, num_proc, batch_size):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    ds = datasets.Dataset.from_list(RECORDS)
    fn = as_map_function(task_file, **OPTIONS)
    out = ds.map(fn, batched=True, with_indices=True, num_proc=num_proc, batch_size=batch_size)
    assert out["prompt_text"] == [e["text"] for e in expected]
    assert out["prompt_target"] == [e["target"] for e in expected]
    assert out["prompt_continuations"] == [e["continuations"] for e in expected]
    assert out["question"] == [r["question"] for r in RECORDS]  # the records' own columns stay
    _report(f"datasets Dataset.map num_proc={num_proc} batch_size={batch_size}", len(RECORDS))


@pytest.mark.slow
def test_datasets_one_record_at_a_time(task_file, expected):
    datasets = pytest.importorskip("datasets")
    out = datasets.Dataset.from_list(RECORDS[:20]).map(
        as_map_function(task_file, batched=False, **OPTIONS), with_indices=True
    )
    assert out["prompt_text"] == [e["text"] for e in expected[:20]]


_FINGERPRINT = """
import sys
from datasets.fingerprint import Hasher
import prompt_style
print(Hasher.hash(prompt_style.as_map_function(sys.argv[1], **{k: int(v) for k, v in (a.split("=") for a in sys.argv[2:])})))
"""


def _fingerprint(task_file: Path, *options: str, hashseed: str = "0") -> str:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    run = subprocess.run(
        [sys.executable, "-c", _FINGERPRINT, str(task_file), *options], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


@pytest.mark.slow
def test_datasets_fingerprint_is_stable_across_processes_and_follows_the_task(task_file, tmp_path):
    pytest.importorskip("datasets")
    first = _fingerprint(task_file, "shots=3", hashseed="1")
    assert first == _fingerprint(task_file, "shots=3", hashseed="2")
    assert first != _fingerprint(task_file, "shots=2")
    edited = tmp_path / "edited.yaml"
    edited.write_text(task_file.read_text(encoding="utf-8"), encoding="utf-8")
    same_text = _fingerprint(edited, "shots=3")
    edited.write_text(
        task_file.read_text(encoding="utf-8").replace("multiple choice", "multiple-choice"), encoding="utf-8"
    )
    assert _fingerprint(edited, "shots=3") != same_text


@pytest.mark.slow
def test_ray_map_batches(task_file, expected, monkeypatch):
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    # Under `uv run`, Ray starts its workers with `uv run` in their own directory, where
    # uv builds another environment without Ray; the workers must use this interpreter.
    # (Read by ray_constants at import, so the module attribute is what counts.)
    from ray._private import ray_constants

    monkeypatch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    monkeypatch.setattr(ray_constants, "RAY_ENABLE_UV_RUN_RUNTIME_ENV", False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        rows = [{**r, "idx": i} for i, r in enumerate(RECORDS)]
        for partitions, batch_size, batch_format in ((5, 16, "numpy"), (2, 100, "pandas"), (3, 50, "pyarrow")):
            ds = ray.data.from_items(rows).repartition(partitions)
            fn = as_map_function(task_file, index_column="idx", **OPTIONS)
            out = sorted(
                ds.map_batches(fn, batch_size=batch_size, batch_format=batch_format).take_all(), key=lambda r: r["idx"]
            )
            assert [o["prompt_text"] for o in out] == [e["text"] for e in expected]
            assert [int(o["prompt_target"]) for o in out] == [e["target"] for e in expected]
            assert [list(o["prompt_continuations"]) for o in out] == [e["continuations"] for e in expected]
            _report(f"Ray map_batches {partitions} blocks, batch_size={batch_size}, {batch_format}", len(out))
    finally:
        ray.shutdown()
