"""The per-record cost of provenance in ``render --format jsonl`` lines.

Workload: the render benchmark's MMLU workspace (57 subject tasks, 14,000 records,
5-shot; see render_bench.py), its prompts rendered once beforehand. Timed, per
round and in a rotating order, over every prompt of every task:

``line, before provenance``  what ``render --format jsonl`` wrote per record before
                             provenance: ``dumps_line(prompt.to_json(), default)``
``line with provenance``     what it writes now: ``task.provenance.line(prompt, default)``
                             (the prompt's keys, doc_id, fewshot_indices, the task-level
                             keys worked out once per task, the SHA-256 fingerprint)
``hand-written json.dumps``  a hand-written script's line: ``json.dumps({...})`` of the
                             same five prompt keys, no provenance

and end to end in process (``Task.render()`` of the loaded tasks, then the line of each
prompt, into memory): ``render + line, before`` against ``render + line with provenance``.

Method: one untimed warm-up, then ``--rounds`` rounds, ``gc.collect()`` before each
timed run; each ratio is taken within a round, the median over rounds is reported.

Run: ``uv run python bench/provenance_bench.py [--records N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import render_bench  # noqa: E402

import prompt_style  # noqa: E402
from prompt_style.cli.render import _not_json  # noqa: E402
from prompt_style.safe.json_lines import dumps_line  # noqa: E402


def lines_before(prepared):
    out = []
    for _, prompts in prepared:
        for p in prompts:
            out.append(dumps_line(p.to_json(), _not_json(p.index)) + "\n")
    return out


def lines_after(prepared):
    out = []
    for task, prompts in prepared:
        line = task.provenance.line
        for p in prompts:
            out.append(line(p, _not_json(p.index)) + "\n")
    return out


def lines_handwritten(prepared):
    out = []
    dumps = json.dumps
    for _, prompts in prepared:
        for p in prompts:
            row = {"index": p.index, "text": p.text, "messages": None, "continuations": list(p.continuations)}
            row["target"] = p.target
            out.append(dumps(row, ensure_ascii=False) + "\n")
    return out


def end_to_end_before(tasks):
    out = []
    for task in tasks:
        for p in task.render():
            out.append(dumps_line(p.to_json(), _not_json(p.index)) + "\n")
    return out


def end_to_end_after(tasks):
    out = []
    for task in tasks:
        line = task.provenance.line
        for p in task.render():
            out.append(line(p, _not_json(p.index)) + "\n")
    return out


def run(records: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        ws = render_bench.MmluWorkspace(Path(folder), n=records)
        tasks = [prompt_style.load_task(ws.tasks[s]) for s in ws.subjects]
        prepared = [(task, list(task.render())) for task in tasks]
        n = sum(len(prompts) for _, prompts in prepared)
        # the same prompt keys before and after: the line grows by the provenance keys only
        for before, after in zip(lines_before(prepared[:1]), lines_after(prepared[:1])):
            assert after.startswith(before[:-2]), "the prompt keys changed"
        jobs = {
            "line, before provenance": lambda: lines_before(prepared),
            "line with provenance": lambda: lines_after(prepared),
            "hand-written json.dumps": lambda: lines_handwritten(prepared),
            "render + line, before": lambda: end_to_end_before(tasks),
            "render + line with provenance": lambda: end_to_end_after(tasks),
        }
        for job in jobs.values():
            job()
        times: dict[str, list[float]] = {name: [] for name in jobs}
        names = list(jobs)
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                gc.collect()
                start = time.perf_counter()
                jobs[name]()
                times[name].append(time.perf_counter() - start)
    return {"records": n, "rounds": rounds, "times": times}


def report(result: dict) -> None:
    n, times = result["records"], result["times"]
    print(f"provenance in JSON Lines: {n:,} records (57 MMLU tasks, 5-shot), {result['rounds']} rounds")
    print(f"{'':34} {'median':>10} {'per record':>11} {'min':>10} {'per record':>11}")
    for name, values in times.items():
        median, least = statistics.median(values), min(values)
        print(
            f"{name:34} {median * 1e3:7.1f} ms {median / n * 1e6:8.2f} µs {least * 1e3:7.1f} ms {least / n * 1e6:8.2f} µs"
        )

    def ratio(a: str, b: str) -> float:
        return statistics.median([x / y for x, y in zip(times[a], times[b])])

    def ratio_of_min(a: str, b: str) -> float:
        return min(times[a]) / min(times[b])

    extra = (min(times["line with provenance"]) - min(times["line, before provenance"])) / n * 1e6
    print(f"provenance adds {extra:.2f} µs per record to the line (from the fastest rounds: the least disturbed)")
    for a, b in (
        ("line with provenance", "line, before provenance"),
        ("line, before provenance", "hand-written json.dumps"),
        ("render + line with provenance", "render + line, before"),
    ):
        print(f"{a} / {b} = {ratio(a, b):.2f}x (median of rounds), {ratio_of_min(a, b):.2f}x (fastest rounds)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=render_bench.N_RECORDS)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    report(run(args.records, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
