"""Run the prompt-style benchmarks and print a summary.

    uv run python bench/run.py            # from the repository root

Exits 0 whether or not the targets are met: this is a report, not a test, and
a missed target is printed as FAIL in the summary. It exits 1 only when a
benchmark cannot run at all (for example when prompt-style's prompts are not
byte-identical to the f-string ones, which makes the timing meaningless). ``--quick`` shrinks the workload for a smoke run;
``--profile`` adds cProfile output for the render loop and the CLI.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cli_bench  # noqa: E402
import render_bench  # noqa: E402


def _status(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the prompt-style benchmarks.")
    parser.add_argument("--quick", action="store_true", help="small workload (smoke run; figures are noisier)")
    parser.add_argument("--profile", action="store_true", help="also print cProfile output")
    parser.add_argument("--skip-render", action="store_true", help="skip the render benchmark")
    parser.add_argument("--skip-cli", action="store_true", help="skip the CLI benchmark")
    args = parser.parse_args(argv)

    print(
        f"prompt-style benchmarks: Python {platform.python_version()} ({sys.executable}), "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    )
    started = time.perf_counter()
    render = cli = None
    errors: list[str] = []
    if not args.skip_render:
        try:
            if args.quick:
                render = render_bench.run(n=2_000, n_big=20_000, repeat=5, do_profile=args.profile)
            else:
                render = render_bench.run(do_profile=args.profile)
        except Exception:  # a broken benchmark (e.g. outputs differ) must be loud, but not hide the rest
            traceback.print_exc()
            errors.append("render")
        print()
    if not args.skip_cli:
        try:
            cli = cli_bench.run(runs=5 if args.quick else cli_bench.RUNS, do_profile=args.profile)
        except Exception:
            traceback.print_exc()
            errors.append("cli")
        print()

    print("== summary")
    if render is not None:
        plain = render["plain"]
        print(
            f"  render  {plain['records']} records 5-shot mcq::mmlu: prompt-style {plain['prompt_style_us']:.1f} us/record, "
            f"f-string {plain['fstring_us']:.1f} us/record, ratio {plain['ratio']:.2f}x "
            f"(target <= {render_bench.TARGET_RATIO:g}x): {_status(plain['ratio'] <= render_bench.TARGET_RATIO)}"
        )
        if "jinja" in render:
            jin = render["jinja"]
            print(
                f"  render  with Jinja description + {{{{question.strip()}}}}: {jin['prompt_style_us']:.1f} vs "
                f"{jin['fstring_us']:.1f} us/record, ratio {jin['ratio']:.2f}x (reference, no target)"
            )
        if "memory" in render:
            mem = render["memory"]
            print(
                f"  memory  peak {mem['small_peak'] / 2**20:.2f} MiB for {mem['small_records']} records, "
                f"{mem['big_peak'] / 2**20:.2f} MiB for {mem['big_records']} streamed: "
                f"{'constant' if mem['constant'] else 'GROWS'}"
            )
    if cli is not None:
        wall = cli["wall"]
        print(
            f"  cli     prompt-style plugins median {wall['cli_median_ms']:.1f} ms (min {wall['cli_min_ms']:.1f}), "
            f'python -c "{cli_bench.BASELINE_CODE}" median {wall["base_median_ms"]:.1f} ms '
            f"(min {wall['base_min_ms']:.1f}), ratio {wall['ratio']:.2f}x "
            f"(target <= {cli_bench.TARGET_RATIO:g}x): {_status(cli['pass'])}"
        )
        top = [name for name, _ in cli["imports"]["by_self_extra"][:5]]
        print(f"  cli     heaviest own-time imports beyond the baseline: {', '.join(top)}")
    missed = [name for name, res in (("render", render), ("cli", cli)) if res is not None and not res["pass"]]
    verdict = "MISSED: " + ", ".join(missed) if missed else "all met" if not errors else "not all measured"
    print(f"  targets: {verdict}  ({time.perf_counter() - started:.0f} s)")
    if errors:
        print(
            f"  ERROR: the {' and '.join(errors)} benchmark failed to run (see the traceback above); "
            "its figures are missing"
        )
        return 1
    return 0  # a report, not a test: a missed target still exits 0


if __name__ == "__main__":
    raise SystemExit(main())
