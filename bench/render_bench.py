"""Rendering throughput: prompt-style against a hand-written f-string renderer.

14,000 MMLU-shaped records (the size of the MMLU test set) are written as JSON
Lines to a temporary directory, with a 5-record dev split, and rendered 5-shot
with the ``mcq::mmlu`` style:

* through the public API: ``prompt_style.load_task(task.yaml)`` then
  ``for r in task.render(): r.text``;
* by a plain Python function that reads the same JSONL file (``json.loads`` per
  line) and builds each prompt with f-strings, few-shot blocks included, per
  record.

Both are timed in the same process, interleaved, best of N, and their outputs
are asserted byte-identical for every record. Two task variants are measured:

``plain``  ``doc_to_text: question`` (no Jinja at all; the headline figure)
``jinja``  a Jinja ``description`` rendered per record and ``{{question.strip()}}``

Peak traced memory (tracemalloc) of streaming 14,000 and 200,000 records with
only a running checksum shows that rendering a split is constant-memory.

Run: ``uv run python bench/render_bench.py`` (or via ``bench/run.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import prompt_style

N_RECORDS = 14_000
N_STREAM = 200_000
REPEAT = 7
TARGET_RATIO = 3.0
SEED = 20240517

# ---------------------------------------------------------------------------
# Data: deterministic MMLU-shaped records, varied by index
# ---------------------------------------------------------------------------

SUBJECTS = (
    "abstract_algebra",
    "anatomy",
    "astronomy",
    "college_biology",
    "college_chemistry",
    "computer_security",
    "elementary_mathematics",
    "high_school_physics",
    "high_school_world_history",
    "international_law",
    "machine_learning",
    "moral_scenarios",
    "professional_medicine",
    "world_religions",
)

# Question shapes seen in examples/mmlu/data: plain text, braces that are not
# placeholders, non-ASCII, trailing whitespace, multi-sentence stems.
QUESTIONS = (
    "What is the value of {a} × {b}?",
    "Let {{x}} denote the number of apples in basket {a}. If {{x}} + {b} = {c}, what is {{x}}?",
    "Which of the following best describes item #{a} in a list of {c} {s} concepts? ",
    "A car accelerates uniformly from rest to {a} m/s in {b} s. What is the magnitude of its acceleration?",
    "In {s}, which statement about case {a} is most accurate, given the evidence presented in study {c}?",
    "  Which of the following is closest to {a}/{b} (question {i})?",
    "Statement 1 | Every group of order {a} is cyclic. Statement 2 | Every subgroup of index {b} is normal. (variant {i})",
    "Which enzyme is inhibited in experiment {i} when substrate concentration rises to {a} mM?\n",
)

CHOICE_SHAPES = (
    ("{a}", "{b}", "{c}", "{d}"),
    ("True, True", "False, False", "True, False", "False, True"),
    ("{a} m/s²", "{b} m/s²", "{c} m/s²", "{d} m/s²"),
    ("Option {i}-α", "Option {i}-β", "Option {i}-γ", "Option {i}-δ"),
    ("It increases by {a}%", "It decreases by {b}%", "It stays the same", "It cannot be determined from case {i}"),
)


def make_record(i: int, rng: random.Random) -> dict[str, Any]:
    subject = SUBJECTS[i % len(SUBJECTS)]
    values = {
        "i": i,
        "a": rng.randint(2, 999),
        "b": rng.randint(2, 99),
        "c": rng.randint(100, 9999),
        "d": rng.randint(1, 50),
        "s": subject.replace("_", " "),
    }
    question = QUESTIONS[i % len(QUESTIONS)].format(**values)
    shape = CHOICE_SHAPES[(i + i // len(QUESTIONS)) % len(CHOICE_SHAPES)]
    choices = [c.format(**values) for c in shape]
    return {"question": question, "subject": subject, "choices": choices, "answer": rng.randrange(4)}


def write_jsonl(path: Path, n: int, seed: int, start: int = 0) -> Path:
    rng = random.Random(seed)
    dumps = json.dumps
    with path.open("w", encoding="utf-8") as handle:
        for i in range(start, start + n):
            handle.write(dumps(make_record(i, rng), ensure_ascii=False) + "\n")
    return path


# ---------------------------------------------------------------------------
# Tasks (YAML in the temp dir, loaded through the public API)
# ---------------------------------------------------------------------------

PLAIN_TASK = """\
task: bench_mmlu_plain
data:
  test: test.jsonl
  dev: dev.jsonl
fewshot_split: dev
doc_to_text: question
doc_to_choice: choices
doc_to_target: answer
template:
  template_type: mcq::mmlu
num_fewshot: 5
retriever: first_n
"""

JINJA_TASK = """\
task: bench_mmlu_jinja
data:
  test: test.jsonl
  dev: dev.jsonl
fewshot_split: dev
description: "The following are multiple choice questions (with answers) about {{ subject }}.\\n\\n"
doc_to_text: "{{question.strip()}}"
doc_to_choice: choices
doc_to_target: answer
template:
  template_type: mcq::mmlu
num_fewshot: 5
retriever: first_n
"""


class Workspace:
    """The temporary directory with data and task files."""

    def __init__(self, root: Path, n: int = N_RECORDS) -> None:
        self.root = root
        self.test = write_jsonl(root / "test.jsonl", n, SEED)
        self.dev = write_jsonl(root / "dev.jsonl", 5, SEED + 1, start=3)  # shapes 3..7: whitespace to strip
        self.plain_task = root / "plain.yaml"
        self.plain_task.write_text(PLAIN_TASK, encoding="utf-8")
        self.jinja_task = root / "jinja.yaml"
        self.jinja_task.write_text(JINJA_TASK, encoding="utf-8")
        self._big: Path | None = None

    def big(self, n: int) -> Path:
        if self._big is None:
            self._big = write_jsonl(self.root / "big.jsonl", n, SEED + 2)
        return self._big


# ---------------------------------------------------------------------------
# The two renderers
# ---------------------------------------------------------------------------


def render_prompt_style(task_file: Path) -> list[str]:
    """The public API, end to end: load the task, render every record."""
    task = prompt_style.load_task(task_file)
    texts = []
    for r in task.render():
        texts.append(r.text)
    return texts


def render_fstring_plain(test_file: Path, dev_file: Path) -> list[str]:
    """What a developer would write by hand for 5-shot MMLU."""
    with open(dev_file, encoding="utf-8") as f:
        dev = [json.loads(line) for line in f]
    texts = []
    with open(test_file, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            blocks = []
            for shot in dev:
                options = "\n".join(f"{'ABCD'[i]}. {c}" for i, c in enumerate(shot["choices"]))
                blocks.append(f"{shot['question']}\n{options}\nAnswer: {'ABCD'[shot['answer']]}")
            options = "\n".join(f"{'ABCD'[i]}. {c}" for i, c in enumerate(doc["choices"]))
            blocks.append(f"{doc['question']}\n{options}\nAnswer:")
            texts.append("\n\n".join(blocks))
    return texts


def render_fstring_jinja(test_file: Path, dev_file: Path) -> list[str]:
    """The f-string equivalent of the ``jinja`` task (description + stripped question)."""
    with open(dev_file, encoding="utf-8") as f:
        dev = [json.loads(line) for line in f]
    texts = []
    with open(test_file, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            blocks = []
            for shot in dev:
                options = "\n".join(f"{'ABCD'[i]}. {c}" for i, c in enumerate(shot["choices"]))
                blocks.append(f"{shot['question'].strip()}\n{options}\nAnswer: {'ABCD'[shot['answer']]}")
            options = "\n".join(f"{'ABCD'[i]}. {c}" for i, c in enumerate(doc["choices"]))
            blocks.append(f"{doc['question'].strip()}\n{options}\nAnswer:")
            description = f"The following are multiple choice questions (with answers) about {doc['subject']}.\n\n"
            texts.append(description + "\n\n".join(blocks))
    return texts


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def _time_once(fn: Callable[[], list[str]]) -> tuple[float, list[str]]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def compare(
    name: str,
    ours: Callable[[], list[str]],
    theirs: Callable[[], list[str]],
    n: int,
    repeat: int,
) -> dict[str, Any]:
    """Time both renderers interleaved (best of ``repeat``) and check every output."""
    ours_times: list[float] = []
    theirs_times: list[float] = []
    ours_out: list[str] = []
    theirs_out: list[str] = []
    # One untimed warm-up each (imports, Jinja compile caches, page cache).
    ours()
    theirs()
    for _ in range(repeat):
        t, ours_out = _time_once(ours)
        ours_times.append(t)
        t, theirs_out = _time_once(theirs)
        theirs_times.append(t)
    if len(ours_out) != n or len(theirs_out) != n:
        raise AssertionError(f"{name}: rendered {len(ours_out)} and {len(theirs_out)} records, expected {n}")
    mismatches = [i for i, (a, b) in enumerate(zip(ours_out, theirs_out)) if a != b]
    if mismatches:
        i = mismatches[0]
        raise AssertionError(
            f"{name}: {len(mismatches)} of {n} prompts differ; first at record {i}:\n"
            f"--- prompt-style\n{ours_out[i]!r}\n--- f-string\n{theirs_out[i]!r}"
        )
    best_ours, best_theirs = min(ours_times), min(theirs_times)
    return {
        "name": name,
        "records": n,
        "repeat": repeat,
        "identical": True,
        "prompt_style_s": best_ours,
        "fstring_s": best_theirs,
        "prompt_style_median_s": statistics.median(ours_times),
        "fstring_median_s": statistics.median(theirs_times),
        "prompt_style_us": best_ours / n * 1e6,
        "fstring_us": best_theirs / n * 1e6,
        "ratio": best_ours / best_theirs,
        "median_ratio": statistics.median(ours_times) / statistics.median(theirs_times),
        "bytes": sum(len(t.encode("utf-8")) for t in ours_out),
    }


def time_load_task(task_file: Path, repeat: int) -> float:
    """Best time of ``load_task`` alone (plugin manager already created, as in a harness)."""
    prompt_style.load_task(task_file)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        prompt_style.load_task(task_file)
        times.append(time.perf_counter() - start)
    return min(times)


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


def stream_peak(task_file: Path, data_file: Path) -> tuple[int, int, int]:
    """Render ``data_file`` lazily, keeping only a running CRC; returns (records, crc, peak bytes)."""
    gc.collect()
    tracemalloc.start()
    try:
        task = prompt_style.load_task(task_file, data={"test": data_file})
        crc = 0
        count = 0
        for r in task.render():
            crc = zlib.crc32(r.text.encode("utf-8"), crc)
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, crc, peak


def measure_memory(ws: Workspace, n_big: int) -> dict[str, Any]:
    big = ws.big(n_big)
    small_n, _, small_peak = stream_peak(ws.plain_task, ws.test)
    big_n, _, big_peak = stream_peak(ws.plain_task, big)
    return {
        "small_records": small_n,
        "small_peak": small_peak,
        "small_file_bytes": ws.test.stat().st_size,
        "big_records": big_n,
        "big_peak": big_peak,
        "big_file_bytes": big.stat().st_size,
        "growth": big_peak / small_peak,
    }


# ---------------------------------------------------------------------------
# Profiling (optional: --profile)
# ---------------------------------------------------------------------------


def profile(task_file: Path, top: int = 25) -> None:
    import cProfile
    import pstats

    task = prompt_style.load_task(task_file)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in task.render():
        pass
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
    print(f"\ncProfile of the render loop ({task_file.name}), by own time:")
    stats.sort_stats("tottime").print_stats(top)
    print(f"cProfile of the render loop ({task_file.name}), by cumulative time:")
    stats.sort_stats("cumulative").print_stats(top)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def print_comparison(result: dict[str, Any], headline: bool) -> None:
    status = "PASS" if result["ratio"] <= TARGET_RATIO else "FAIL"
    label = "target" if headline else "reference (not a target)"
    print(
        f"  [{result['name']}] {result['records']} records, 5-shot mcq::mmlu, best of {result['repeat']}, "
        f"outputs byte-identical ({result['bytes'] / 2**20:.1f} MiB of prompts)"
    )
    print(
        f"    prompt-style : {result['prompt_style_s']:.3f} s  {result['prompt_style_us']:7.1f} us/record"
        f"  (median {result['prompt_style_median_s']:.3f} s)"
    )
    print(
        f"    f-string     : {result['fstring_s']:.3f} s  {result['fstring_us']:7.1f} us/record"
        f"  (median {result['fstring_median_s']:.3f} s)"
    )
    verdict = f"{status} (target <= {TARGET_RATIO:g}x)" if headline else f"{label}; <= {TARGET_RATIO:g}x: {status}"
    print(f"    ratio        : {result['ratio']:.2f}x (medians {result['median_ratio']:.2f}x)  {verdict}")


def run(
    *,
    n: int = N_RECORDS,
    n_big: int = N_STREAM,
    repeat: int = REPEAT,
    memory: bool = True,
    jinja: bool = True,
    do_profile: bool = False,
) -> dict[str, Any]:
    print(f"== render benchmark (Python {sys.version.split()[0]}, prompt-style {_version()})")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="prompt-style-bench-") as tmp:
        ws = Workspace(Path(tmp), n)
        prompt_style.default_plugin_manager()  # discovery once, as any harness process would
        results["load_task_s"] = time_load_task(ws.plain_task, repeat)

        plain = compare(
            "plain",
            lambda: render_prompt_style(ws.plain_task),
            lambda: render_fstring_plain(ws.test, ws.dev),
            n,
            repeat,
        )
        results["plain"] = plain
        print_comparison(plain, headline=True)
        print(f"    (load_task alone: {results['load_task_s'] * 1e3:.2f} ms, included in the prompt-style time)")

        if jinja:
            jin = compare(
                "jinja description + {{question.strip()}}",
                lambda: render_prompt_style(ws.jinja_task),
                lambda: render_fstring_jinja(ws.test, ws.dev),
                n,
                repeat,
            )
            results["jinja"] = jin
            print_comparison(jin, headline=False)

        if memory:
            mem = measure_memory(ws, n_big)
            results["memory"] = mem
            print("  [memory] tracemalloc peak while streaming with a running CRC (plain task):")
            print(
                f"    {mem['small_records']:>7} records ({_mib(mem['small_file_bytes'])} JSONL): peak {_mib(mem['small_peak'])}"
            )
            print(
                f"    {mem['big_records']:>7} records ({_mib(mem['big_file_bytes'])} JSONL): peak {_mib(mem['big_peak'])}"
            )
            flat = mem["growth"] < 1.5
            print(
                f"    growth {mem['growth']:.2f}x for {mem['big_records'] / mem['small_records']:.1f}x the records: "
                f"{'constant memory' if flat else 'MEMORY GROWS WITH THE INPUT'}"
            )
            results["memory"]["constant"] = flat

        if do_profile:
            profile(ws.plain_task)
            if jinja:
                profile(ws.jinja_task)

    results["pass"] = plain["ratio"] <= TARGET_RATIO
    return results


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("prompt-style")
    except Exception:
        return "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=N_RECORDS, help=f"records to render (default {N_RECORDS})")
    parser.add_argument("--stream", type=int, default=N_STREAM, help=f"records for the memory run (default {N_STREAM})")
    parser.add_argument("--repeat", type=int, default=REPEAT, help=f"timed runs, best kept (default {REPEAT})")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--no-jinja", action="store_true", help="skip the Jinja-description variant")
    parser.add_argument("--profile", action="store_true", help="also print cProfile of the render loop")
    args = parser.parse_args(argv)
    run(
        n=args.records,
        n_big=args.stream,
        repeat=max(1, args.repeat),
        memory=not args.no_memory,
        jinja=not args.no_jinja,
        do_profile=args.profile,
    )
    return 0  # a report, not a test


if __name__ == "__main__":
    raise SystemExit(main())
