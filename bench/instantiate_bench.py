"""Instantiation of a task-template file: constant memory up to 1M records, and its speed.

    uv run python bench/instantiate_bench.py                 # 100k and 1M records, about 2-3 minutes
    uv run python bench/instantiate_bench.py --sizes 20000 100000 --baseline-sizes 20000

For each size it writes a task-template file (two templates, one of them ``evaluate: true``,
SciRIFF's shape) and a ``train.jsonl`` of that many records (some holding ``|||``), then runs
``prompt-style instantiate`` in a fresh subprocess, which reports its peak resident memory
(``ru_maxrss``) and time. With one split, instantiation carves validation and test (20% each)
and renders train and validation with both templates, test with the evaluation template.

The baseline, measured in the same run on the same files, is the reference's way of doing
it: SciRIFF's ``Task.apply`` + ``Instantiator`` load the split, render every instance into a
list in memory, then split and write -- here reduced to its core, a plain
``jinja2.Environment`` with SciRIFF's ``|||`` protection, the records and rendered instances
held in lists, ``json.dumps`` at the end (no datasets, no tokenizer). Its memory grows with
the data; prompt-style's must not.

Prints, per size: seconds, records per second, peak RSS (MiB), and the ratios
prompt-style / baseline. Exits 0 (a report, not a test); 1 if a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TASK = """\
name: bench_task
data_dir: bench_task
metadata:
  task: qa.abstractive
  domains: [misc]
  source_type: single_source
  input_context: paragraph
  output_context: sentence
  contributor: bench
templates:
  0:
    name: with_context
    evaluate: true
    jinja: |
      Read the passage and answer the question.

      Passage: {{ context }}

      Question: {{ question }}
      |||
      {{ answer }}
  1:
    name: question_only
    jinja: "Q: {{ question }}\\nA: ||| {{ answer }}"
"""

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def write_data(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    task = folder / "bench_task.yaml"
    task.write_text(TASK, encoding="utf-8")
    data = folder / "data" / "processed" / "bench_task"
    data.mkdir(parents=True, exist_ok=True)
    with (data / "train.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(n):
            words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(40))
            record = {
                "context": f"Passage {i}: {words}." + (" a ||| b" if i % 97 == 0 else ""),
                "question": f"What is item {i}?",
                "answer": f"Item {i} is {WORDS[i % len(WORDS)]}.",
            }
            handle.write(json.dumps(record) + "\n")
    return task


CHILD_OURS = """
import resource, sys, time
from prompt_style.formats.task_template.instantiate import instantiate
from prompt_style.formats.task_template.reader import read_spec
started = time.perf_counter()
result = instantiate(read_spec(sys.argv[1]), sys.argv[2])
elapsed = time.perf_counter() - started
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, sum(result.instances.values()))
"""

CHILD_BASELINE = """
import json, random, resource, sys, time
import jinja2, yaml
started = time.perf_counter()
PROTECT = "3ed2dface8203c4c9dfb1a5dc58e41e0"
env = jinja2.Environment(loader=jinja2.BaseLoader, undefined=jinja2.StrictUndefined)
env.globals.update(zip=zip)
task = yaml.safe_load(open(sys.argv[1]))
templates = {k: env.from_string(v["jinja"]) for k, v in task["templates"].items()}
evaluate = [k for k, v in task["templates"].items() if v.get("evaluate") is True]
records = [json.loads(line) for line in open(sys.argv[3])]           # the split, in memory
def apply(template_id, record, index):
    protected = {k: v.replace("|||", PROTECT) if isinstance(v, str) else v for k, v in record.items()}
    protected["answer_choices"] = None
    parts = [p.replace(PROTECT, "|||").strip() for p in templates[template_id].render(**protected).split("|||")]
    assert len(parts) == 2
    metadata = dict(task["metadata"], split="train", template_metadata={"use_for_eval": template_id in evaluate})
    return {"input": parts[0], "output": parts[1], "metadata": metadata,
            "_instance_id": f"bench_task:train:{index}", "_template_id": template_id}
rendered = [[apply(t, r, i) for t in templates] for i, r in enumerate(records)]  # every instance, in memory
rng = random.Random(0)
order = list(range(len(records)))
rng.shuffle(order)
n = round(len(records) * 0.2)
splits = {"test": order[:n], "validation": order[n:2 * n], "train": order[2 * n:]}
count = 0
for split, ids in splits.items():
    with open(f"{sys.argv[2]}/{split}.jsonl", "w") as handle:
        for i in ids:
            for instance in (rendered[i][:1] if split == "test" else rendered[i]):
                handle.write(json.dumps(instance, ensure_ascii=False) + "\\n")
                count += 1
elapsed = time.perf_counter() - started
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, count)
"""


def run_child(code: str, *args: str) -> tuple[float, float, int]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed")
    seconds, rss_kib, instances = done.stdout.split()
    return float(seconds), int(rss_kib) / 1024, int(instances)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--baseline-sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    args = parser.parse_args(argv)
    print(f"instantiate benchmark: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"{'size':>10} {'who':<12} {'seconds':>8} {'records/s':>10} {'peak MiB':>9} {'instances':>10}")
    rows: dict[tuple[int, str], tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory(prefix="ps-instantiate-bench-") as tmp:
        for size in sorted(set(args.sizes) | set(args.baseline_sizes)):
            folder = Path(tmp) / str(size)
            task = write_data(folder, size)
            train = folder / "data" / "processed" / "bench_task" / "train.jsonl"
            runs = []
            if size in args.sizes:
                runs.append(("prompt-style", CHILD_OURS, (str(task), str(folder / "out-ours"))))
            if size in args.baseline_sizes:
                (folder / "out-base").mkdir()
                runs.append(("baseline", CHILD_BASELINE, (str(task), str(folder / "out-base"), str(train))))
            for who, code, child_args in runs:
                try:
                    seconds, peak, instances = run_child(code, *child_args)
                except RuntimeError as exc:
                    print(f"{size:>10} {who:<12} FAILED: {exc}")
                    return 1
                rows[(size, who)] = (seconds, peak, instances)
                print(f"{size:>10,} {who:<12} {seconds:>8.2f} {size / seconds:>10,.0f} {peak:>9.1f} {instances:>10,}")
            for out in ("out-ours", "out-base"):
                for file in (folder / out).glob("*.jsonl") if (folder / out).exists() else ():
                    file.unlink()
            train.unlink()
    print()
    ours = sorted((size, row) for (size, who), row in rows.items() if who == "prompt-style")
    if len(ours) >= 2:
        (small, a), (big, b) = ours[0], ours[-1]
        print(
            f"prompt-style peak memory: {a[1]:.1f} MiB at {small:,} records, {b[1]:.1f} MiB at {big:,} "
            f"({b[1] / a[1]:.2f}x for {big / small:.0f}x the records): "
            f"{'constant' if b[1] < a[1] * 1.25 else 'NOT constant'}"
        )
    for size in sorted({s for s, _ in rows}):
        if (size, "prompt-style") in rows and (size, "baseline") in rows:
            o, r = rows[(size, "prompt-style")], rows[(size, "baseline")]
            print(
                f"at {size:,} records: prompt-style / baseline time {o[0] / r[0]:.2f}x, "
                f"peak memory {o[1] / r[1]:.2f}x ({o[1]:.0f} vs {r[1]:.0f} MiB)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
