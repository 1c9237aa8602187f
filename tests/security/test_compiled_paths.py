"""The compiled paths against the sandbox, on hostile records and tight budgets.

Every case of compiled_payloads.py is rendered (differential.py) in fresh processes
with 1 GiB and a deadline: by the fast path, by ``Task.render()``, by a renderer
that went through pickle (a worker process), by the general path, by the sandbox
alone, and by ``prompt-style render --format jsonl`` with and without the
compiled paths. All must agree record by record: the same prompt, or the same
typed error (class, budget and message); no crash, no hang.

Run ``uv run python tests/security/test_compiled_paths.py`` for the figures.
Each test runs its own case only, through one runner per test process (so that
pytest-xdist spreads the cases over the cores); the corpus is marked ``slow``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
MEMORY = 1 << 30
DEADLINE = float(os.environ.get("PS_SECURITY_DEADLINE", "6"))

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="the runner forks one process per case"),
    pytest.mark.slow,
]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"ps_security_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


PAYLOADS = _module("compiled_payloads")
# The suite runs the quick cases; PS_SECURITY_FULL=1 (and the figures below) the full corpus.
FULL = os.environ.get("PS_SECURITY_FULL") == "1" or __name__ == "__main__"
CASES = {case["id"]: case for case in (PAYLOADS.cases() if FULL else PAYLOADS.quick_cases())}
API_MODES = ("fast", "pickled", "worker-env", "general", "sandbox")


@lru_cache(maxsize=1)
def results() -> dict[str, dict[str, dict]]:
    """Every case in every mode at once, for the figures (``python test_compiled_paths.py``)."""
    jobs = max(2, min(4, (os.cpu_count() or 2)))
    proc = subprocess.run(
        [sys.executable, str(HERE / "differential.py"), "--jobs", str(jobs), "--memory", str(MEMORY)]
        + ["--deadline", str(DEADLINE)],
        input=json.dumps(list(CASES.values())),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        out[row["id"]][row["mode"]] = row
    return out


def problems(case_id: str, rows: dict[str, dict]) -> list[str]:
    """What is wrong with one case's results (empty: all modes agree)."""
    bad = []
    for mode, row in rows.items():
        if row["outcome"] != "ran":
            bad.append(f"{mode}: {row['outcome']} {row.get('stderr', '')[-1500:]}")
    if bad:
        return bad
    want = rows["sandbox"]
    for mode in API_MODES:
        if mode not in rows or mode == "sandbox":
            continue
        got = rows[mode]
        if got.get("load") != want.get("load"):
            bad.append(f"{mode}: load {got.get('load')} != sandbox {want.get('load')}")
            continue
        for index, (a, b) in enumerate(zip(got.get("records", []), want.get("records", []))):
            if a != b:
                bad.append(f"{mode}: record {index} ({_name(case_id, index)}): {_cut(a)} != sandbox {_cut(b)}")
    if "many" in rows and "load" not in want:
        expected = []
        for record in want["records"]:
            expected.append(record)
            if record[0] == "error":
                break
        if rows["many"].get("records") != expected:
            bad.append(f"many: {_cut(rows['many'].get('records'))} != sandbox {_cut(expected)}")
    if "cli" in rows and "cli-sandbox" in rows:
        a, b = rows["cli"], rows["cli-sandbox"]
        for what in ("exit", "stdout", "stderr"):
            if a.get(what) != b.get(what):
                bad.append(f"cli: {what} {_cut(a.get(what))} != cli-sandbox {_cut(b.get(what))}")
    return bad


def _name(case_id: str, index: int) -> str:
    """The hostile value's name of record ``index`` (for messages)."""
    rows = CASES[case_id].get("rows", "")
    values = PAYLOADS.VALUES
    if rows.endswith("-small"):
        values = [v for v in values if v[0] not in ("just-over-threshold", "at-threshold")]
    elif rows not in ("q", "options", "gold"):
        return str(index)
    return values[index][0] if index < len(values) else str(index)


def _cut(value: object, size: int = 400) -> str:
    text = repr(value)
    return text if len(text) <= size else text[:size] + "..."


@pytest.fixture(scope="session")
def run_case(tmp_path_factory):
    """``run_case(case)``: one case's rows by mode, from a runner kept for this test process."""
    log = tmp_path_factory.mktemp("differential-runner") / "stderr"
    # its modes in parallel when this process is alone; one at a time beside other workers
    jobs = 1 if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1 else 2
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "differential.py"), "--serve", "--jobs", str(jobs), "--memory", str(MEMORY)]
            + ["--deadline", str(DEADLINE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )

    def run(case: dict) -> dict[str, dict]:
        proc.stdin.write(json.dumps(case).encode("ascii") + b"\n")
        proc.stdin.flush()
        rows: dict[str, dict] = {}
        while True:
            line = proc.stdout.readline()
            assert line, f"the runner stopped: {log.read_text(errors='replace')[-3000:]}"
            row = json.loads(line)
            if "end" in row:
                return rows
            rows[row["mode"]] = row

    yield run
    proc.stdin.close()
    proc.wait(timeout=60)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_compiled_path_agrees_with_the_sandbox(case_id, run_case):
    rows = run_case(CASES[case_id])
    assert set(rows) == set(CASES[case_id].get("modes", _module("differential").MODES)), sorted(rows)
    found = problems(case_id, rows)
    assert not found, "\n".join(found)


def summary() -> str:
    rows = results()
    by_category: Counter[str] = Counter()
    records: Counter[str] = Counter()
    stopped: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    lines_bad = []
    for cid, case in CASES.items():
        category = case["category"]
        by_category[category] += 1
        found = problems(cid, rows[cid])
        for row in rows[cid].values():
            outcomes[row["outcome"]] += 1
        sandbox = rows[cid].get("sandbox", {})
        for record in sandbox.get("records", []):
            records[category] += 1
            if record[0] == "error":
                stopped[category] += 1
        if found:
            failed[category] += 1
            lines_bad.append(f"{cid}: " + "; ".join(found)[:600])
    runs = sum(len(r) for r in rows.values())
    slowest = max((row for r in rows.values() for row in r.values()), key=lambda row: row["seconds"])
    out = [
        f"{len(CASES)} cases, {runs} runs, memory {MEMORY >> 20} MiB, deadline {DEADLINE} s; outcomes {dict(outcomes)}"
    ]
    for category in sorted(by_category):
        out.append(
            f"  {category:14} {by_category[category]:4} cases, {records[category]:5} records "
            f"({stopped[category]:5} typed errors in the sandbox), {failed[category]:3} cases differ"
        )
    out.append(f"  slowest: {slowest['id']} {slowest['mode']} {slowest['seconds']:.3f} s")
    out.extend("    " + line for line in lines_bad)
    return "\n".join(out)


if __name__ == "__main__":
    os.environ.setdefault("PS_SECURITY_DEADLINE", "2")
    DEADLINE = float(os.environ["PS_SECURITY_DEADLINE"])
    only = sys.argv[1:]
    if only:
        CASES = {cid: case for cid, case in CASES.items() if any(part in cid for part in only)}
    print(summary())
