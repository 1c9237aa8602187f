"""Scale-out: one MMLU task over many records, 5-shot, on every engine prompt-style uses.

Compared, each in a fresh process, on the same JSON Lines file:

- ``render``: ``prompt-style render TASK --format jsonl`` in one process (the baseline);
- ``render --jobs 2``: the same with two worker processes;
- ``datasets 1`` / ``datasets 2``: ``Dataset.map(as_map_function(TASK), batched=True,
  with_indices=True, num_proc=N)`` over the file loaded with ``datasets`` (loading and
  Arrow conversion untimed; the map writes its cache, as datasets does);
- ``ray num_cpus=1`` / ``ray num_cpus=2``: ``ray.data.read_json(FILE, override_num_blocks=20)
  .map_batches(as_map_function(TASK, index_column="index"), batch_format="pyarrow")`` on a
  local Ray with that many CPUs, consumed with ``iter_batches(batch_size=None)`` (the
  blocks as they come: re-batching to a fixed size copies every prompt in the driver)
  (Ray's start-up untimed,
  including the stats and autoscaling-coordinator actors that Ray Data starts once per
  cluster, on a first small dataset). 20 blocks rather than the 200 Ray Data reads one
  file as: every block costs Ray's driver and raylet 25-30 ms of CPU beside the
  workers, and on 2 cores that CPU is taken from the workers (docs/scale.md);
- ``ray default num_cpus=1`` / ``=2`` (``--engines ray-default``, not run by default):
  the same with Ray's own block count and no warm-up, for comparison.

Each path's figure is records per second over wall time, its speed-up over the same
engine in one process (``x 1 proc``) and over the single-process render (``x render``;
the CLI also writes every JSON line, the map functions do not) (the pool, the engine's
workers and their task loading included), and its peak resident memory: the largest
of the process and the children it waited for (GNU time's ``%M``; Linux). Outputs are compared with the
single-process render (prompt text and target of every record) before any timing.
The target: each two-process path >= 1.7x the single process, and memory flat from
100,000 to 1,000,000 records.

Run (the engines are the ``scale`` dependency group)::

    uv run --group scale python bench/scale_bench.py                  # 100k and 1M records, 3 rounds
    uv run --group scale python bench/scale_bench.py --sizes 20000 --rounds 1   # a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu"
TARGET = 1.7

TASK = """\
task: mmlu_scale
data:
  test: {test}
  dev: {dev}
fewshot_split: dev
description: "The following are multiple choice questions (with answers) about {{{{ subject.replace('_', ' ') }}}}.\\n\\n"
doc_to_text: "{{{{question.strip()}}}}"
doc_to_choice: choices
doc_to_target: answer
template: mcq::mmlu
num_fewshot: 5
retriever: first_n
"""

DATASETS = """
import sys, time, json, os, tempfile
import datasets
from prompt_style import as_map_function
task, data, num_proc, check = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
datasets.disable_progress_bars()
ds = datasets.load_dataset("json", data_files={"test": data}, split="test")
fn = as_map_function(task)
# a map's first run: its own cache file (datasets keeps the number of shards of a cached
# map with the same fingerprint, so a num_proc=1 cache would make num_proc=2 one shard)
cache = os.path.join(tempfile.mkdtemp(dir=os.environ.get("HF_DATASETS_CACHE")), "map.arrow")
start = time.perf_counter()
out = ds.map(fn, batched=True, with_indices=True, num_proc=num_proc if num_proc > 1 else None, batch_size=1000, load_from_cache_file=False, cache_file_name=cache)
elapsed = time.perf_counter() - start
if check != "-":
    json.dump({"text": list(out["prompt_text"]), "target": list(out["prompt_target"])}, open(check, "w"))
print(json.dumps({"seconds": elapsed}))
"""

RAY = """
import sys, time, json, os
os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] = "0"  # workers use this interpreter, not `uv run`
import ray
from ray._private import ray_constants
ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
from prompt_style import as_map_function
task, data, check = sys.argv[1], sys.argv[2], sys.argv[4]
ray.init(num_cpus=int(sys.argv[3]), include_dashboard=False, log_to_driver=False)
ray.data.DataContext.get_current().enable_progress_bars = False
tuned = os.environ.get("SCALE_BENCH_RAY_DEFAULT") != "1"  # "ray default": Ray's own settings
if tuned:
    # Ray Data's first dataset in a cluster starts its stats and autoscaling-coordinator
    # actors (about 1 s of CPU each, importing Ray Data): the cluster's start-up, untimed
    ray.data.range(8, override_num_blocks=2).map_batches(lambda b: b, batch_format="pyarrow").materialize()
fn = as_map_function(task, index_column="index")
start = time.perf_counter()
# 20 blocks, not the 200 Ray reads one file as: each block costs the driver's
# scheduling loop and the raylet 25-30 ms of CPU, beside the workers
ds = ray.data.read_json(data, **({"override_num_blocks": 20} if tuned else {}))
ds = ds.map_batches(fn, batch_size=1000, batch_format="pyarrow")
texts = {}
count = 0
# consumed as Arrow tables (the rows counted; with a check, read back): a driver that
# turned every prompt into a Python string would time its own conversion, in one process
for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
    count += batch.num_rows
    if check != "-":
        for i, t, g in zip(*(batch.column(c).to_pylist() for c in ("index", "prompt_text", "prompt_target"))):
            texts[int(i)] = (str(t), int(g))
elapsed = time.perf_counter() - start
if check != "-":
    order = sorted(texts)
    json.dump({"text": [texts[i][0] for i in order], "target": [texts[i][1] for i in order]}, open(check, "w"))
print(json.dumps({"seconds": elapsed, "count": count}))
"""


def write_data(folder: Path, size: int) -> tuple[Path, Path]:
    base = [json.loads(line) for line in (MMLU / "data" / "test.jsonl").open(encoding="utf-8")]
    data = folder / f"test-{size}.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for i in range(size):
            record = dict(base[i % len(base)])
            record["question"] = f"{record['question']} (variant {i})"
            record["index"] = i
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    task = folder / f"task-{size}.yaml"
    task.write_text(TASK.format(test=data, dev=MMLU / "data" / "dev.jsonl"), encoding="utf-8")
    return task, data


def run(cmd: list[str], out: Path | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in KiB and stdout. The peak is GNU time's ``%M``: the
    largest resident set of the command and the children it waited for (measured from
    a small ``time`` process, so that this process's own memory, copied into a forked
    child before it runs the command, is not counted)."""
    start = time.perf_counter()
    with open(out or os.devnull, "wb") as sink, tempfile.TemporaryFile() as captured:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "PEAK %M", *cmd], stdout=sink if out else captured, stderr=subprocess.PIPE
        )
        elapsed = time.perf_counter() - start
        captured.seek(0)
        stdout = captured.read().decode()
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed:\n{stderr[-2000:]}")
    peak = int(next(line for line in reversed(stderr.splitlines()) if line.startswith("PEAK "))[5:])
    return elapsed, peak, stdout


def cli(jobs: int, task: Path, out: Path | None = None) -> list[str]:
    script = Path(sys.executable).parent / "prompt-style"
    return [str(script), "render", str(task), "--format", "jsonl", "--jobs", str(jobs)]


def reference(task: Path, folder: Path) -> tuple[list[str], list[int]]:
    out = folder / "reference.jsonl"
    run(cli(1, task), out)
    texts, targets = [], []
    with out.open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            texts.append(item["text"])
            targets.append(item["target"])
    out.unlink()
    return texts, targets


def check(name: str, got: Path, texts: list[str], targets: list[int]) -> None:
    data = json.loads(got.read_text(encoding="utf-8"))
    if data["text"] != texts or data["target"] != targets:
        raise SystemExit(f"{name}: the prompts differ from prompt-style render's")
    got.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--engines",
        nargs="+",
        default=["render", "jobs", "datasets", "ray"],
        help="render, jobs, datasets, ray; ray-default: Ray with its own block count and no warm-up",
    )
    args = parser.parse_args()
    have_datasets = subprocess.run([sys.executable, "-c", "import datasets"], capture_output=True).returncode == 0
    have_ray = subprocess.run([sys.executable, "-c", "import ray.data"], capture_output=True).returncode == 0
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    if not have_datasets or not have_ray:
        print("datasets/Ray missing: run with `uv run --group scale python bench/scale_bench.py`")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["HF_DATASETS_CACHE"] = str(folder / "hf-cache")
        for size in args.sizes:
            task, data = write_data(folder, size)
            texts, targets = reference(task, folder) if size <= 200_000 else (None, None)
            paths: dict[str, list[str]] = {}
            if "render" in args.engines:
                paths["render"] = cli(1, task)
            if "jobs" in args.engines:
                paths["render --jobs 2"] = cli(2, task)
            if "datasets" in args.engines and have_datasets:
                for n in (1, 2):
                    paths[f"datasets num_proc={n}"] = [sys.executable, "-c", DATASETS, str(task), str(data), str(n)]
            if "ray" in args.engines and have_ray:
                for n in (1, 2):
                    paths[f"ray num_cpus={n}"] = [sys.executable, "-c", RAY, str(task), str(data), str(n)]
            if "ray-default" in args.engines and have_ray:
                for n in (1, 2):
                    cmd = ["env", "SCALE_BENCH_RAY_DEFAULT=1", sys.executable, "-c", RAY, str(task), str(data), str(n)]
                    paths[f"ray default num_cpus={n}"] = cmd
            if texts is not None:  # outputs first: the timings compare the same work
                for name, cmd in paths.items():
                    if name.startswith("render"):
                        out = folder / "check.jsonl"
                        run(cmd, out)
                        lines = [json.loads(line) for line in out.open(encoding="utf-8")]
                        out.unlink()
                        if [x["text"] for x in lines] != texts or [x["target"] for x in lines] != targets:
                            raise SystemExit(f"{name}: the prompts differ")
                    else:
                        got = folder / "check.json"
                        run([*cmd, str(got)])
                        check(name, got, texts, targets)
                print(f"{size:,} records: every path gives prompt-style render's prompts")
            times: dict[str, list[float]] = {name: [] for name in paths}
            peaks: dict[str, int] = {}
            for _ in range(args.rounds):
                for name, cmd in paths.items():  # interleaved: each round runs every path once
                    full = cmd if name.startswith("render") else [*cmd, "-"]
                    wall, peak, stdout = run(full)
                    if not name.startswith("render"):
                        wall = json.loads(stdout.strip().splitlines()[-1])["seconds"]
                    times[name].append(wall)
                    peaks[name] = max(peaks.get(name, 0), peak)
            medians = {name: statistics.median(values) for name, values in times.items()}
            for name, values in times.items():
                # the same engine in one process: render, datasets num_proc=1, ray num_cpus=1
                single = {"render --jobs 2": "render"}.get(name, name.replace("=2", "=1"))
                speedup = medians[single] / medians[name] if single in medians else float("nan")
                versus = medians["render"] / medians[name] if "render" in medians else float("nan")
                rows.append(
                    (
                        size,
                        name,
                        size / medians[name],
                        min(values),
                        medians[name],
                        max(values),
                        speedup,
                        versus,
                        peaks[name],
                    )
                )
            for path in (task, data):
                path.unlink()
    print()
    print(
        f"{'records':>9}  {'path':<22} {'records/s':>10} {'min s':>7} {'median s':>8} {'max s':>7}"
        f" {'x 1 proc':>8} {'x render':>8} {'peak RSS':>9}"
    )
    for size, name, rate, lo, mid, hi, speedup, versus, peak in rows:
        two = name.endswith("2")
        mark = ("  ok" if speedup >= TARGET else "  FAIL") if two else ""
        print(
            f"{size:>9,}  {name:<22} {rate:>10,.0f} {lo:>7.2f} {mid:>8.2f} {hi:>7.2f}"
            f" {speedup:>7.2f}x {versus:>7.2f}x {peak / 1024:>6.0f} MB{mark}"
        )
    print(f"\nload at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
