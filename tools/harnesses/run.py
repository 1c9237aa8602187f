"""Build a venv per harness release, install the bridges into it, and run every bridge end to end.

    python tools/harnesses/run.py                      # every harness that has end-to-end tests
    python tools/harnesses/run.py --harness lm-eval    # one (comma-separated for several)
    python tools/harnesses/run.py --list               # the harnesses, their releases, their tests
    python tools/harnesses/run.py --rebuild            # build the venvs afresh
    python tools/harnesses/run.py --skip-unavailable   # a release pip cannot install is reported, not failed (CI)

Needs only Python (3.10+) and pip. Each harness is a spec in tools/harnesses/specs/NAME.json:

* ``install``: pip install steps in order, each one line of arguments (``"torch==2.13.0"`` first
  for the harnesses that need torch, so that pip takes the CPU wheel the machine has);
* ``after_install``: commands run in the venv after it is built (its python is ``{python}``),
  e.g. the workarounds a harness release needs before it runs offline;
* ``bridges``: the bridge distributions (folders of this repository) installed, editable,
  with prompt-style itself and its first-party plugins without heavy dependencies;
* ``tests``: the bridge's end-to-end test files, run with pytest *inside* the venv (the venv's
  python, so the harness is importable there and the tests do not skip).

A venv is built once and reused while its spec's ``install`` and ``after_install`` are
unchanged (``.harness-spec`` in the venv holds their digest); prompt-style and the bridges
are reinstalled (editable, quick) on every run. The venvs live in ``--venvs`` (default
``$PROMPT_STYLE_HARNESS_VENVS`` or ``/tmp/prompt-style-harness-venvs``). Harnesses whose spec
has no tests yet are listed and skipped. Each end-to-end test appends what it compared to
``$PROMPT_STYLE_E2E_REPORT``; the summary counts the records compared per harness.

Exit status: 0 when every harness selected passed (or, with ``--skip-unavailable``, could not
be installed: its ``install`` steps failed, which says nothing of the bridges), 1 otherwise, 2
for bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPECS = Path(__file__).resolve().parent / "specs"
DEFAULT_VENVS = Path(os.environ.get("PROMPT_STYLE_HARNESS_VENVS", "/tmp/prompt-style-harness-venvs"))
# prompt-style's first-party plugins without heavy dependencies, installed in every harness venv
# (the bridges' tests use their styles and meta templates).
PLUGINS = ("plugins/mmlu", "plugins/gpqa", "plugins/cloze", "plugins/chatml", "plugins/hf", "plugins/chat-formats")


@dataclass
class Spec:
    harness: str
    release: str
    install: list[str]
    bridges: list[str] = field(default_factory=list)
    after_install: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    notes: str = ""

    @property
    def digest(self) -> str:
        recipe = {"install": self.install, "after_install": self.after_install, "python": sys.version_info[:2]}
        return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


@dataclass
class Outcome:
    harness: str
    status: str  # passed, failed, skipped (no tests), unavailable (--skip-unavailable)
    build_seconds: float = 0.0
    install_seconds: float = 0.0
    test_seconds: float = 0.0
    comparisons: int = 0
    records: int = 0
    detail: str = ""


def load_specs() -> dict[str, Spec]:
    specs = {}
    for path in sorted(SPECS.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        spec = Spec(**raw)
        if spec.harness != path.stem:
            raise SystemExit(f"{path}: harness {spec.harness!r} must be the file's name ({path.stem!r})")
        specs[spec.harness] = spec
    return specs


def run(command: list[str], log, **kwargs) -> None:
    """Run ``command``, its output into ``log``; raise on failure."""
    log.write(f"$ {shlex.join(command)}\n")
    log.flush()
    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command[:6])}{' ...' if len(command) > 6 else ''} exited {done.returncode}")


class Unavailable(RuntimeError):
    """The harness release (or pytest) could not be installed: pip failed on the spec's
    ``install`` steps, before any of this repository's code ran."""


def build(spec: Spec, venv: Path, rebuild: bool, log) -> bool:
    """Build the harness's venv unless an identical one is there; ``True`` when built.

    :raises Unavailable: when the venv or the release cannot be installed.
    :raises RuntimeError: when an ``after_install`` command fails.
    """
    marker = venv / ".harness-spec"
    if not rebuild and marker.is_file() and marker.read_text().strip() == spec.digest:
        return False
    shutil.rmtree(venv, ignore_errors=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    try:
        run([sys.executable, "-m", "venv", str(venv)], log)
        for step in spec.install:
            run([*pip, *shlex.split(step)], log)
        # pytest runs the tests; hatchling builds prompt-style's distributions without a build
        # environment per package (an editable install each run is then a matter of seconds).
        run([*pip, "pytest", "hatchling>=1.21", "editables"], log)
    except RuntimeError as exc:
        raise Unavailable(str(exc)) from None
    python = str(venv / "bin" / "python")
    for command in spec.after_install:
        run(shlex.split(command.replace("{python}", python)), log, cwd=ROOT)
    marker.write_text(spec.digest + "\n")
    return True


def install_bridges(spec: Spec, venv: Path, log) -> None:
    """prompt-style, its light first-party plugins and the harness's bridges, editable."""
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    pip.append("--no-build-isolation")
    editable = [arg for folder in (".", *PLUGINS, *spec.bridges) for arg in ("-e", str(ROOT / folder))]
    run([*pip, *editable], log)


def run_tests(spec: Spec, venv: Path, report: Path, log) -> None:
    env = dict(os.environ)
    env["PROMPT_STYLE_E2E_REPORT"] = str(report)
    env.pop("PROMPT_STYLE_LM_EVAL_PYTHON", None)  # the venv's own python runs the harness
    # One process (the repository's addopts ask for pytest-xdist, which would run each test
    # module's harness set-up once per worker): the module-scoped runs happen once.
    command = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE"]
    command += ["-o", "addopts=--import-mode=importlib --strict-markers"]
    run([*command, *(str(ROOT / test) for test in spec.tests)], log, cwd=ROOT, env=env)


def one(spec: Spec, venvs: Path, rebuild: bool, logs: Path, skip_unavailable: bool = False) -> Outcome:
    """Build, install and test one harness. ``status`` is ``passed``, ``failed``, ``skipped``
    (no tests) or, with ``skip_unavailable``, ``unavailable`` (its release could not be
    installed)."""
    outcome = Outcome(spec.harness, "skipped")
    if not spec.tests:
        outcome.detail = "no end-to-end tests yet" + (f" ({spec.notes})" if spec.notes else "")
        return outcome
    venv = venvs / spec.harness
    report = logs / f"{spec.harness}.report.jsonl"
    report.unlink(missing_ok=True)
    log_path = logs / f"{spec.harness}.log"
    with open(log_path, "w", encoding="utf-8") as log:
        step = "build"
        try:
            start = time.perf_counter()
            built = build(spec, venv, rebuild, log)
            outcome.build_seconds = time.perf_counter() - start if built else 0.0
            step, start = "install", time.perf_counter()
            install_bridges(spec, venv, log)
            outcome.install_seconds = time.perf_counter() - start
            step, start = "tests", time.perf_counter()
            try:
                run_tests(spec, venv, report, log)
            finally:
                outcome.test_seconds = time.perf_counter() - start
            outcome.status = "passed"
        except Unavailable as exc:
            outcome.status = "unavailable" if skip_unavailable else "failed"
            outcome.detail = f"{step}: {exc} (log: {log_path})"
        except RuntimeError as exc:
            outcome.status = "failed"
            outcome.detail = f"{step}: {exc} (log: {log_path})"
    if report.is_file():
        lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines() if line.strip()]
        outcome.comparisons = len(lines)
        outcome.records = sum(line.get("records", 0) for line in lines)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", help="comma-separated harness names (default: every one with tests)")
    parser.add_argument("--venvs", type=Path, default=DEFAULT_VENVS, help=f"where the venvs live ({DEFAULT_VENVS})")
    parser.add_argument("--rebuild", action="store_true", help="build the venvs afresh")
    parser.add_argument("--list", action="store_true", help="list the harnesses and exit")
    parser.add_argument("--json", type=Path, help="also write the outcomes as JSON to this file")
    parser.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="report a harness whose release pip cannot install (its install steps fail) without failing the run",
    )
    args = parser.parse_args(argv)

    specs = load_specs()
    if args.list:
        for spec in specs.values():
            tests = ", ".join(spec.tests) or "no end-to-end tests yet"
            print(f"{spec.harness}\t{spec.release}\t{tests}")
        return 0
    names = args.harness.split(",") if args.harness else [s.harness for s in specs.values()]
    unknown = [name for name in names if name not in specs]
    if unknown:
        parser.error(f"unknown harness {', '.join(unknown)} (known: {', '.join(specs)})")
    args.venvs.mkdir(parents=True, exist_ok=True)
    logs = args.venvs / "logs"
    logs.mkdir(exist_ok=True)

    outcomes = []
    for name in names:
        print(f"== {name} ({specs[name].release})", flush=True)
        outcome = one(specs[name], args.venvs, args.rebuild, logs, args.skip_unavailable)
        outcomes.append(outcome)
        timing = (
            f"build {outcome.build_seconds:.0f}s, install {outcome.install_seconds:.0f}s, "
            f"tests {outcome.test_seconds:.0f}s"
        )
        compared = f"{outcome.comparisons} comparisons of {outcome.records} records"
        if outcome.status in ("skipped", "unavailable"):
            print(f"   {outcome.status}: {outcome.detail}")
        else:
            print(f"   {outcome.status}: {compared}; {timing}" + (f"\n   {outcome.detail}" if outcome.detail else ""))
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1) + "\n", encoding="utf-8")
    return 1 if any(o.status == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
