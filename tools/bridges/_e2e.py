"""What the bridges' end-to-end runners share: the cases, the expected prompts
(``prompt-style render --format jsonl`` in the harness's environment), the
environment itself, and the report.

Standard library only: the runners run with any Python 3.10+, and run the
harness, prompt-style and the comparison's expected output in the harness's
Python (``--python``), or in a venv layered over a harness venv
(``--harness-venv``: a venv whose site-packages see the harness venv's, with
this repository's packages installed editable, without touching the harness venv).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"

# The repository's packages a harness environment gets (editable, no dependencies):
# the core, the first-party plugins without heavy dependencies, the contrib example style.
PACKAGES = [
    ".",
    "plugins/mmlu",
    "plugins/gpqa",
    "plugins/cloze",
    "plugins/chatml",
    "plugins/hf",
    "plugins/chat-formats",
    "contrib/numbered",
]
# pytest runs the bridge's own tests that need the harness (they skip in the dev environment).
CORE_DEPENDENCIES = ["pluggy>=1.3", "jinja2>=3.1.6", "pyyaml>=6.0", "pytest>=8"]


@dataclass(frozen=True)
class Case:
    """One comparison: a task file with render options, run through the harness."""

    name: str
    task: str
    """Relative to ``cases/``, or to the repository when it starts with ``repo:``."""
    options: dict[str, Any] = field(default_factory=dict)
    """``prompt-style render``'s options, by their ``load_task`` names."""
    note: str = ""

    @property
    def path(self) -> Path:
        if self.task.startswith("repo:"):
            return ROOT / self.task[len("repo:") :]
        return CASES / self.task

    @property
    def chat(self) -> bool:
        return self.options.get("meta") == "messages"


def _flag_value(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (dict, list, bool)) or value is None else str(value)


def render_flags(options: dict[str, Any]) -> list[str]:
    """``load_task`` options as ``prompt-style render`` flags."""
    flags: list[str] = []
    for key, value in options.items():
        if key == "data":
            for split, path in value.items():
                flags += ["--data", f"{split}={path}"]
        elif key in ("meta_options", "style_options"):
            flag = "--meta-option" if key == "meta_options" else "--style-option"
            for name, option in value.items():
                flags += [flag, f"{name}={_flag_value(option)}"]
        elif key == "fewshot_as_multiturn":
            flags.append("--fewshot-as-multiturn" if value else "--no-fewshot-as-multiturn")
        elif key == "trust_code":
            if value:
                flags.append("--trust-code")
        else:
            flags += ["--" + key.replace("_", "-"), str(value)]
    return flags


def option_words(options: dict[str, Any]) -> list[str]:
    """``load_task`` options as ``KEY=VALUE`` words (inspect_ai's ``-T``, lighteval's
    entries), each value as JSON, which the YAML both read it with gives back as written."""
    words = []
    for key, value in options.items():
        if key == "data":
            value = ",".join(f"{split}={path}" for split, path in value.items())
        words.append(f"{key}={json.dumps(value, ensure_ascii=False)}")
    return words


@dataclass
class Harness:
    """A Python with the harness, prompt-style and the bridge, and where to write."""

    python: Path
    work: Path
    env: dict[str, str]

    def bin(self, name: str) -> list[str]:
        """A console script next to the Python, else ``python -m MODULE``."""
        script = self.python.parent / name
        if script.exists():
            return [str(script)]
        modules = {"prompt-style": "prompt_style", "inspect": "inspect_ai", "lighteval": "lighteval"}
        return [str(self.python), "-m", modules[name]]

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            cwd=str(cwd or self.work),
        )
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise RuntimeError(f"{shlex.join(argv)} exited with {done.returncode}:\n{tail}")
        return done.stdout

    def expected(self, case: Case) -> list[dict[str, Any]]:
        """What ``prompt-style render --format jsonl`` gives for the case, one dict per record."""
        out = self.run(
            [*self.bin("prompt-style"), "render", str(case.path), "--format", "jsonl", *render_flags(case.options)]
        )
        return json_lines(out)


def json_lines(text: str) -> list[Any]:
    """The JSON values of a JSON Lines text. Lines end at ``\\n`` only: ``str.splitlines()``
    would also split a prompt holding U+2028, U+2029 or U+0085 written unescaped."""
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def overlay_venv(harness_venv: Path, dest: Path, bridge: str) -> Path:
    """A venv layered over ``harness_venv`` with this repository's packages and ``bridge``
    installed editable; made once per destination. Returns its Python."""
    python = dest / "bin" / "python"
    marker = dest / ".prompt-style-overlay"
    # Editable installs follow the code, but not their metadata: a changed pyproject.toml
    # (an entry point, say) installs again.
    projects = {p: (ROOT / p / "pyproject.toml").read_text() for p in [*PACKAGES, bridge]}
    wanted = json.dumps({"harness": str(harness_venv.resolve()), "root": str(ROOT), "bridge": bridge, **projects})
    if marker.exists() and marker.read_text() == wanted:
        return python
    base = _base_python(harness_venv)
    subprocess.run([base, "-m", "venv", "--clear", str(dest)], check=True)
    site = subprocess.run(
        [str(harness_venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(own, "_harness_site.pth").write_text(site + "\n")
    pip = [str(python), "-m", "pip", "install", "-qq", "--disable-pip-version-check"]
    subprocess.run([*pip, *CORE_DEPENDENCIES], check=True)
    editable = [arg for package in [*PACKAGES, bridge] for arg in ("-e", str(ROOT / package))]
    subprocess.run([*pip, "--no-deps", *editable], check=True)
    for script in ("inspect", "lighteval"):  # the harness's command, run by this venv's Python
        source = harness_venv / "bin" / script
        if source.exists():
            lines = source.read_text().splitlines(keepends=True)
            target = dest / "bin" / script
            target.write_text(f"#!{python}\n" + "".join(lines[1:]))
            target.chmod(0o755)
    marker.write_text(wanted)
    return python


def _base_python(venv: Path) -> str:
    cfg = (venv / "pyvenv.cfg").read_text().splitlines()
    executable = [line.split("=", 1)[1].strip() for line in cfg if line.startswith("executable")]
    if executable and Path(executable[0]).exists():
        return executable[0]
    home = [line.split("=", 1)[1].strip() for line in cfg if line.startswith("home")]
    return str(Path(home[0]) / "python3") if home else sys.executable


def harness_from_args(args: argparse.Namespace, bridge: str, default_venv: str) -> Harness:
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.python:
        python = Path(args.python)
    else:
        venv = Path(args.harness_venv or default_venv)
        if not (venv / "bin" / "python").exists():
            raise SystemExit(f"no harness venv at {venv} (give --harness-venv DIR or --python PY)")
        python = overlay_venv(venv, work / "venv", bridge)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPT_STYLE_", "VIRTUAL_ENV"))}
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "HF_HOME": str(work / "hf"),
            "NO_COLOR": "1",
            "PYTHONIOENCODING": "utf-8",
            "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    return Harness(python.absolute(), work, env)


def parser(description: str, default_venv: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--python", help="a Python with the harness, prompt-style and the bridge installed")
    where.add_argument(
        "--harness-venv",
        help=f"a venv with the harness only: the runner layers a venv over it with this repository's packages "
        f"(default {default_venv})",
    )
    p.add_argument("--work", default=None, help="where to write (default: a directory under /tmp)")
    p.add_argument("--case", action="append", default=[], help="run only these cases (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--no-pytest", action="store_true", help="do not run the bridge's own tests in the harness's Python")
    return p


@dataclass
class Result:
    case: str
    compared: int = 0
    differences: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.differences and self.compared > 0


def run_pytest(harness: Harness, tests: str) -> Result:
    """The bridge's own tests, in the harness's Python (those that need the harness run there)."""
    result = Result(f"pytest {tests}")
    done = subprocess.run(
        # One process (the harness's Python has no pytest-xdist): the repository's addopts without -n.
        # PROMPT_STYLE_E2E_RUNNER: the end-to-end test files skip (this runner is running).
        [str(harness.python), "-m", "pytest", str(ROOT / tests), "-q", "-p", "no:cacheprovider", "-rs"]
        + ["-o", "addopts=--import-mode=importlib --strict-markers"],
        capture_output=True,
        text=True,
        env={**harness.env, "PROMPT_STYLE_E2E_RUNNER": "1"},
        cwd=str(ROOT),
    )
    lines = done.stdout.strip().splitlines() or [""]
    last = lines[-1]
    # The tests that need the harness must run here (they skip only where it is absent).
    harness_skipped = [line for line in lines if line.startswith("SKIPPED") and "test_e2e_" not in line]
    if done.returncode != 0 or harness_skipped:
        tail = "\n".join(done.stdout.strip().splitlines()[-15:])
        result.error = f"pytest exited with {done.returncode}:\n{tail}"
    else:
        result.compared = int(last.split()[0]) if last.split() and last.split()[0].isdigit() else 1
    print(f"{result.case:<34} {result.compared:>4} passed    {'ok' if result.ok else 'FAILED'}", flush=True)
    if result.error:
        print("    " + result.error.replace("\n", "\n    "), flush=True)
    return result


def run_cases(cases: Sequence[Case], run: Callable[[Case], Result], only: Sequence[str]) -> list[Result]:
    results = []
    for case in cases:
        if only and case.name not in only:
            continue
        try:
            result = run(case)
        except Exception as exc:  # a failed run is a result, not the end of the report
            result = Result(case.name, error=f"{type(exc).__name__}: {exc}")
        results.append(result)
        status = "identical" if result.ok else "FAILED"
        print(f"{case.name:<34} {result.compared:>4} compared  {status}", flush=True)
        for line in ([result.error] if result.error else []) + result.differences[:5]:
            print("    " + line.replace("\n", "\n    "), flush=True)
    return results


def finish(harness_name: str, results: list[Result], json_path: str | None) -> int:
    failed = [r for r in results if not r.ok]
    cases = [r for r in results if not r.case.startswith("pytest ")]
    tests = [r for r in results if r.case.startswith("pytest ")]
    report = os.environ.get("PROMPT_STYLE_E2E_REPORT")  # tools/harnesses/run.py's summary counts these
    if report:
        with open(report, "a", encoding="utf-8") as out:
            for r in cases:
                if r.ok:
                    line = {"bridge": harness_name, "case": r.case, "run": "command line", "compared_with": "render"}
                    out.write(json.dumps({**line, "records": r.compared}) + "\n")
    summary = f"{harness_name}: {sum(r.ok for r in cases)}/{len(cases)} cases identical, "
    summary += f"{sum(r.compared for r in cases)} prompts compared"
    if tests:
        summary += (
            f"; {sum(r.compared for r in tests)} tests passed in the harness's Python"
            if all(r.ok for r in tests)
            else "; the tests in the harness's Python FAILED"
        )
    print(summary)
    if json_path:
        Path(json_path).write_text(
            json.dumps(
                [
                    {"case": r.case, "compared": r.compared, "ok": r.ok, "error": r.error, "differences": r.differences}
                    for r in results
                ],
                indent=2,
            )
        )
    return 1 if failed or not results else 0


def differ(what: str, index: Any, expected: Any, got: Any) -> str:
    return f"record {index}: {what} differ:\n  render:  {json.dumps(expected, ensure_ascii=False)[:300]}\n  harness: {json.dumps(got, ensure_ascii=False)[:300]}"
