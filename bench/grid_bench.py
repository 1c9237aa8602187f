"""Format grids: rendering a 50-cell grid against rendering one format, per prompt.

    uv run python bench/grid_bench.py [--records N] [--cells N] [--rounds N] [--profile]

Workload: the 57 MMLU subject tasks of render_bench.py (14,000 test records, 5-shot,
``mcq::mmlu``). Two renderers, each timed end to end from the task files:

- **single format**: per subject, ``load_task(task_file)`` then ``[r.text for r in
  task.render()]`` (the test split read from JSON Lines and rendered): 14,000 prompts;
- **grid**: per subject, ``load_task(task_file)``, ``make_grid(task, sample=50, seed=0)``
  (a seeded sample of the whole grid of ``mcq::mmlu``'s axes: labels, wrapper,
  separator, spacing, choice spacing, casing, answer prefix, instruction, choice
  order — the same 50 cells for every subject), then every cell's prompts
  (``Grid.variants()``: the test split read once, each cell's style built and its
  templates compiled once): 700,000 prompts.

The ratio is the grid's prompts per second over the single format's, taken within
each round (both run in every round, in alternating order, after ``gc.collect()``)
and reported as the median over rounds. Target: **>= 0.8x**. Before timing, the
prompts of some cells are checked against the same format rendered by a task
loaded on its own with the cell's style options (``load_task(...,
style_options=cell.options, choice_order=...)``), so that the grid is timed doing
the right work.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import render_bench  # noqa: E402

import prompt_style  # noqa: E402
from prompt_style.grid import make_grid  # noqa: E402

TARGET = 0.8
CELLS = 50
ROUNDS = 3


def single(ws: render_bench.MmluWorkspace) -> int:
    count = 0
    for subject in ws.subjects:
        task = prompt_style.load_task(ws.tasks[subject])
        texts = [r.text for r in task.render()]
        count += len(texts)
    return count


def grid(ws: render_bench.MmluWorkspace, cells: int) -> int:
    count = 0
    for subject in ws.subjects:
        task = prompt_style.load_task(ws.tasks[subject])
        made = make_grid(task, sample=cells, seed=0)
        for _, variant in made.variants():
            texts = [r.text for r in variant.render()]
            count += len(texts)
    return count


def check(ws: render_bench.MmluWorkspace, cells: int) -> list[dict]:
    """The grid's prompts of a few cells equal those of the cell's format loaded on its own."""
    subject = ws.subjects[0]
    task = prompt_style.load_task(ws.tasks[subject])
    made = make_grid(task, sample=cells, seed=0)
    for cell, variant in list(made.variants())[:6]:
        alone = prompt_style.load_task(
            ws.tasks[subject],
            style_options={k: v for k, v in cell.options.items()},
            choice_order=cell.settings.get("choice_order"),
        )
        expected = [r.text for r in alone.render()]
        got = [r.text for r in variant.render()]
        if got != expected:
            raise AssertionError(f"cell {cell.id} {cell.settings}: the grid's prompts differ from the format alone")
    return [dict(c.settings) for c in made.cells]


def timed(fn, *args) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    count = fn(*args)
    return time.perf_counter() - start, count


def run(records: int, cells: int, rounds: int, profile: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        ws = render_bench.MmluWorkspace(Path(tmp), n=records)
        settings = check(ws, cells)
        single(ws)  # warm-up (imports, compiled code)
        grid(ws, 2)
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            grid(ws, cells)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        rows = []
        for r in range(rounds):
            order = [("single", single, (ws,)), ("grid", grid, (ws, cells))]
            if r % 2:
                order.reverse()
            times = {}
            for name, fn, args in order:
                times[name] = timed(fn, *args)
            (t_single, n_single), (t_grid, n_grid) = times["single"], times["grid"]
            rows.append(
                {
                    "single_s": t_single,
                    "single_prompts": n_single,
                    "grid_s": t_grid,
                    "grid_prompts": n_grid,
                    "ratio": (n_grid / t_grid) / (n_single / t_single),
                }
            )
        return {"records": ws.n, "cells": cells, "rows": rows, "settings": settings}


def report(result: dict) -> tuple[float, bool]:
    rows = result["rows"]
    ratios = [row["ratio"] for row in rows]
    ratio = statistics.median(ratios)
    single_rate = statistics.median(row["single_prompts"] / row["single_s"] for row in rows)
    grid_rate = statistics.median(row["grid_prompts"] / row["grid_s"] for row in rows)
    print(f"grid benchmark: {result['records']:,} MMLU records (57 subjects, 5-shot), {result['cells']} cells")
    print(f"  single format: {rows[0]['single_prompts']:,} prompts, median {single_rate:,.0f} prompts/s")
    print(f"  grid:          {rows[0]['grid_prompts']:,} prompts, median {grid_rate:,.0f} prompts/s")
    for i, row in enumerate(rows, 1):
        print(f"  round {i}: single {row['single_s']:.3f} s, grid {row['grid_s']:.3f} s, ratio {row['ratio']:.2f}x")
    ok = ratio >= TARGET
    print(
        f"  grid / single-format throughput per prompt: {ratio:.2f}x "
        f"(range {min(ratios):.2f}-{max(ratios):.2f}; target >= {TARGET}x): {'PASS' if ok else 'FAIL'}"
    )
    return ratio, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Format grid throughput against one format.")
    parser.add_argument("--records", type=int, default=render_bench.N_RECORDS)
    parser.add_argument("--cells", type=int, default=CELLS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    report(run(args.records, args.cells, args.rounds, args.profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
