"""CLI start-up: ``prompt-style plugins`` against ``python -c "import pluggy, yaml"``.

Both run as subprocesses with the interpreter of this environment
(``sys.executable``; the console script is the ``prompt-style`` next to it),
interleaved, after one untimed warm-up each (so ``.pyc`` files exist and the
files are in the page cache). The baseline is the floor any pluggy + YAML tool
pays: interpreter start-up plus those two imports.

Then ``-X importtime`` on the real command lists what the CLI imports, and
cProfile of ``main(["plugins"])`` in a fresh process shows where the rest of
the time goes.

Run: ``uv run python bench/cli_bench.py`` (or via ``bench/run.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RUNS = 20
TARGET_RATIO = 2.0
BASELINE_CODE = "import pluggy, yaml"


def console_script() -> Path:
    bindir = Path(sys.executable).parent
    for name in ("prompt-style", "prompt-style.exe"):
        candidate = bindir / name
        if candidate.exists():
            return candidate
    raise SystemExit(
        f"no prompt-style console script next to {sys.executable}; run `uv sync` and "
        "`uv run python bench/cli_bench.py` from the repository root"
    )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Measure the default configuration, whatever the caller's shell says.
    for name in ("PROMPT_STYLE_PLUGINS", "PROMPT_STYLE_DISABLE", "PROMPT_STYLE_PREFER", "PYTHONPROFILEIMPORTTIME"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')}")
    return elapsed


def wall_times(runs: int) -> dict[str, Any]:
    env = _env()
    script = console_script()
    cli = [str(script), "plugins"]
    base = [sys.executable, "-c", BASELINE_CODE]
    _run(cli, env)
    _run(base, env)
    cli_times, base_times = [], []
    for _ in range(runs):
        cli_times.append(_run(cli, env))
        base_times.append(_run(base, env))
    cli_median, base_median = statistics.median(cli_times), statistics.median(base_times)
    return {
        "runs": runs,
        "script": str(script),
        "cli_median_ms": cli_median * 1e3,
        "cli_min_ms": min(cli_times) * 1e3,
        "base_median_ms": base_median * 1e3,
        "base_min_ms": min(base_times) * 1e3,
        "ratio": cli_median / base_median,
        "min_ratio": min(cli_times) / min(base_times),
    }


def _parse_importtime(stderr: str) -> list[tuple[str, int, int, int]]:
    """``(module, self_us, cumulative_us, depth)`` per ``-X importtime`` line."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        fields = line[len("import time:") :].split("|")
        if len(fields) != 3:
            continue
        self_us, cumulative_us, raw_name = fields
        depth = (len(raw_name) - len(raw_name.lstrip(" ")) - 1) // 2
        rows.append((raw_name.strip(), int(self_us), int(cumulative_us), depth))
    return rows


def importtime(command: list[str]) -> list[tuple[str, int, int, int]]:
    env = _env()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return _parse_importtime(proc.stderr)


def import_costs(repeat: int = 5) -> dict[str, Any]:
    """Import times of the CLI (median per module over ``repeat`` fresh processes)."""
    script = str(console_script())
    runs = [importtime([script, "plugins"]) for _ in range(repeat)]
    base_runs = [importtime(["-c", BASELINE_CODE]) for _ in range(repeat)]

    def medians(all_runs: list[list[tuple[str, int, int, int]]]) -> dict[str, tuple[int, int, int]]:
        per: dict[str, list[tuple[int, int, int]]] = {}
        for rows in all_runs:
            for name, self_us, cum_us, depth in rows:
                per.setdefault(name, []).append((self_us, cum_us, depth))
        return {
            name: (
                int(statistics.median(v[0] for v in values)),
                int(statistics.median(v[1] for v in values)),
                values[0][2],
            )
            for name, values in per.items()
        }

    cli = medians(runs)
    base = medians(base_runs)
    top_level = sum(cum for _, cum, depth in cli.values() if depth == 0)
    base_top_level = sum(cum for _, cum, depth in base.values() if depth == 0)
    extra = {name: v for name, v in cli.items() if name not in base}
    return {
        "modules": len(cli),
        "base_modules": len(base),
        "total_ms": top_level / 1e3,
        "base_total_ms": base_top_level / 1e3,
        "extra_modules": len(extra),
        "extra_self_ms": sum(v[0] for v in extra.values()) / 1e3,
        "by_cumulative": sorted(cli.items(), key=lambda kv: -kv[1][1]),
        "by_self_extra": sorted(extra.items(), key=lambda kv: -kv[1][0]),
    }


PROFILE_CODE = r"""
import cProfile, io, pstats, sys
sys.argv = ["prompt-style", "plugins"]
profiler = cProfile.Profile()
profiler.enable()
from prompt_style.cli import main
out = sys.stdout
sys.stdout = io.StringIO()
try:
    main(["plugins"])
finally:
    sys.stdout = out
profiler.disable()
stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
stats.sort_stats("cumulative").print_stats(%d)
"""


def profile_cli(top: int = 30) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", PROFILE_CODE % top],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc.stdout + proc.stderr


def run(*, runs: int = RUNS, top: int = 15, do_profile: bool = False) -> dict[str, Any]:
    print(f"== CLI benchmark ({sys.executable})")
    wall = wall_times(runs)
    status = "PASS" if wall["ratio"] <= TARGET_RATIO else "FAIL"
    print(f"  {runs} runs each, interleaved, after a warm-up:")
    print(
        f"    prompt-style plugins            : median {wall['cli_median_ms']:6.1f} ms   min {wall['cli_min_ms']:6.1f} ms"
    )
    print(
        f'    python -c "{BASELINE_CODE}" : median {wall["base_median_ms"]:6.1f} ms   min {wall["base_min_ms"]:6.1f} ms'
    )
    print(
        f"    ratio (medians) {wall['ratio']:.2f}x (mins {wall['min_ratio']:.2f}x)  {status} (target <= {TARGET_RATIO:g}x)"
    )

    costs = import_costs()
    print("  -X importtime of `prompt-style plugins` (median of 5 fresh processes):")
    print(
        f"    {costs['modules']} modules, {costs['total_ms']:.1f} ms of imports; "
        f"the baseline imports {costs['base_modules']} modules in {costs['base_total_ms']:.1f} ms"
    )
    print(
        f"    {costs['extra_modules']} modules beyond the baseline's, {costs['extra_self_ms']:.1f} ms of their own time"
    )
    print("    top cumulative import costs (ms, module):")
    for name, (_self_us, cum_us, depth) in costs["by_cumulative"][:top]:
        print(f"      {cum_us / 1e3:7.2f}  {'  ' * depth}{name}")
    print("    top own-time costs of modules the baseline does not import (ms, module):")
    for name, (self_us, _cum_us, _depth) in costs["by_self_extra"][:top]:
        print(f"      {self_us / 1e3:7.2f}  {name}")
    if do_profile:
        print("  cProfile of main(['plugins']) in a fresh process (imports included), by cumulative time:")
        print(profile_cli())
    return {"wall": wall, "imports": costs, "pass": wall["ratio"] <= TARGET_RATIO}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs of each command (default {RUNS})")
    parser.add_argument("--top", type=int, default=15, help="import-time rows to show (default 15)")
    parser.add_argument("--profile", action="store_true", help="also print cProfile of the plugins command")
    args = parser.parse_args(argv)
    run(runs=max(1, args.runs), top=args.top, do_profile=args.profile)
    return 0  # a report, not a test


if __name__ == "__main__":
    raise SystemExit(main())
