"""Differential runner: every case through the compiled paths and through the sandbox alone.

prompt-style renders simple Jinja (``{{ q.strip() }}``, ``Q: {{ a.b[0] }}``) as plain
Python (``fields/jinja_compiler.py``) and common tasks through a generated fast path
(``fastpath.py``, ``styles/compiled.py``). Neither may ever run what the sandbox
stops, nor give another text or another error. This runner renders each case,
each mode in a fresh process with a memory limit and a deadline:

- ``fast``: ``TaskRenderer.render`` record by record (the fast path, compiled Jinja);
- ``many``: ``Task.render()`` (the fast path's loop over records in memory or on disk);
- ``pickled``: ``fast`` on a renderer pickled and loaded again in a fresh
  interpreter state (what a harness's worker process gets);
- ``worker-env``: ``pickled`` for a task loaded without budgets of its own, in a
  process whose budgets are the case's, in ``PROMPT_STYLE_LIMITS``, not yet read;
- ``general``: ``TaskRenderer._render`` record by record (the general path,
  compiled Jinja);
- ``sandbox``: the general path with compiled Jinja switched off (every template
  rendered by the sandbox);
- ``cli`` and ``cli-sandbox``: ``prompt-style render TASK --format jsonl`` as it
  is, and with both the fast path and compiled Jinja switched off.

``python differential.py [--jobs N] [--memory BYTES] [--deadline S] < cases.json``
(``--serve``: one case per line, each answered as soon as it is done, then a line
``{"end": id}``; test_compiled_paths.py keeps one such runner per test process)
prints one JSON line per case and mode: ``id``, ``mode``, ``outcome`` (``ran``,
``crash``, ``hang``, ``killed``), ``records`` (per record ``["ok", text,
continuations, target]`` or ``["error", class, limit, message]``; texts longer
than 2,000 characters as length and SHA-256), ``first`` (``Task.render()``'s
prompts up to its first error) and ``seconds``.

A case: ``id``, ``files`` (``{name: text}``), ``task`` (the task file),
``limits`` (``JinjaLimits`` keywords for ``load_task(limits=...)``, optional),
``budget`` (``--budget NAME=VALUE`` list for the CLI, optional) and ``load``
(other ``load_task`` keywords, optional).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

MODES = ("fast", "many", "pickled", "worker-env", "general", "sandbox", "cli", "cli-sandbox")
SANDBOX_MODES = frozenset({"sandbox", "cli-sandbox"})


def digest(text: object) -> object:
    if isinstance(text, str) and len(text) > 2000:
        return {"len": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}
    return text


def _plain(value: object) -> object:
    """A JSON-safe rendering of a prompt's target or continuations."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return digest(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return digest(repr(value))


def sandbox_only() -> None:
    """Switch compiled Jinja and the renderer's fast path off in this process."""
    from prompt_style import fastpath
    from prompt_style.fields import extractors, jinja_compiler
    from prompt_style.formats.lm_eval import fields as lm_fields

    def never(*args: object, **kwargs: object) -> None:
        return None

    for module in (jinja_compiler, extractors, lm_fields):
        module.compile_simple = never
    jinja_compiler._template_renderer.cache_clear()
    jinja_compiler._expression_evaluator.cache_clear()
    jinja_compiler._RENDERERS.clear()
    fastpath.compile_fast_path = never


def _outcome(call, *args):
    import prompt_style

    try:
        made = call(*args)
    except prompt_style.PromptStyleError as exc:
        return ["error", type(exc).__name__, getattr(exc, "limit", None), str(exc)]
    return ["ok", digest(made.text), _plain(made.continuations), _plain(made.target)]


class _Text(str):
    """A str subclass (numpy.str_, markupsafe.Markup are others)."""


class _Shown:
    """An object with a text form of its own."""

    def __str__(self) -> str:
        return "shown"


class _Opaque:
    """An object with Python's default repr (which names its address)."""


def _py_namespace() -> dict:
    import collections
    import datetime
    import decimal

    return {
        "Text": _Text,
        "Shown": _Shown,
        "Opaque": _Opaque,
        "OrderedDict": collections.OrderedDict,
        "defaultdict": collections.defaultdict,
        "datetime": datetime,
        "Decimal": decimal.Decimal,
    }


_PY_NAMESPACE = _py_namespace()


def _load(case: dict, mode: str = ""):
    import prompt_style

    options = dict(case.get("load", {}))
    if case.get("limits") and mode == "worker-env":
        pass  # the process's budgets instead (see _run_api)
    elif case.get("limits"):
        options["limits"] = prompt_style.JinjaLimits(**case["limits"])
    if case.get("records_py"):
        # records no JSON file can hold (str subclasses, tuples, objects...): test code, trusted
        options["data"] = {"test": eval(case["records_py"], _PY_NAMESPACE)}  # noqa: S307
    return prompt_style.load_task(case["task"], **options)


def _run_api(case: dict, mode: str) -> dict:
    import prompt_style

    try:
        task = _load(case, mode)
    except prompt_style.PromptStyleError as exc:
        return {"outcome": "ran", "load": ["error", type(exc).__name__, getattr(exc, "limit", None), str(exc)]}
    if mode == "pickled":
        import pickle

        blob = pickle.dumps(task)
        _forget_limits()
        task = pickle.loads(blob)
    if mode == "worker-env":
        # a harness's worker: the task shipped without budgets of its own, the process's
        # budgets in PROMPT_STYLE_LIMITS, nothing read yet
        import pickle

        blob = pickle.dumps(task)
        os.environ["PROMPT_STYLE_LIMITS"] = ",".join(case.get("budget", []))
        _forget_limits()
        task = pickle.loads(blob)
    renderer = task.renderer
    out: dict = {"outcome": "ran"}
    if mode == "many":
        made = []
        try:
            for prompt in task.render():
                made.append(["ok", digest(prompt.text), _plain(prompt.continuations), _plain(prompt.target)])
        except prompt_style.PromptStyleError as exc:
            made.append(["error", type(exc).__name__, getattr(exc, "limit", None), str(exc)])
        out["records"] = made
        return out
    render = renderer._render if mode in ("general", "sandbox") else renderer.render
    out["records"] = [_outcome(render, record, i) for i, record in enumerate(task.records())]
    return out


def _forget_limits() -> None:
    """What a fresh worker process knows of budgets: only what it made itself."""
    from prompt_style.safe import limits

    limits.SIZE_FLOOR[0] = limits.CLOCK_CAP
    limits._cache.clear()


def _child(case: dict, mode: str, directory: Path, memory: int) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    os.chdir(directory)
    out = os.open(f"stdout-{mode}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open(f"stderr-{mode}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    try:
        if mode in SANDBOX_MODES:
            sandbox_only()
        if mode.startswith("cli"):
            from prompt_style.cli import main

            argv = ["render", case["task"], "--format", "jsonl"]
            for item in case.get("budget", []):
                argv += ["--budget", item]
            if case.get("cli_data"):
                argv += ["--data", case["cli_data"]]
            status = main(argv)
            sys.stdout.flush()
            return status
        report = _run_api(case, mode)
    except SystemExit as exc:
        sys.stdout.flush()
        return exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        return 99
    with open(f"report-{mode}.json", "w", encoding="utf-8") as handle:
        json.dump(report, handle, ensure_ascii=True)
    return 0


def _read(path: Path, cut: int = 1 << 20) -> str:
    try:
        return path.read_bytes()[:cut].decode("utf-8", "backslashreplace")
    except OSError:
        return ""


def _result(case: dict, mode: str, directory: Path, status: int, seconds: float, hung: bool) -> dict:
    out: dict = {"id": case["id"], "mode": mode, "exit": status, "seconds": round(seconds, 3)}
    stderr = _read(directory / f"stderr-{mode}", 20000)
    if hung:
        out["outcome"] = "hang"
    elif status < 0:
        out["outcome"] = "killed"
    elif status == 99:
        out["outcome"] = "crash"
        out["stderr"] = stderr[-3000:]
    elif mode.startswith("cli"):
        lines = [line for line in stderr.splitlines() if line.strip()]
        if status not in (0, 2) or (status == 2 and not (len(lines) == 1 and lines[0].startswith("prompt-style:"))):
            out["outcome"] = "crash"
            out["stderr"] = stderr[-3000:]
        else:
            out["outcome"] = "ran"
            out["stderr"] = stderr
            out["stdout"] = [digest(line) for line in _read(directory / f"stdout-{mode}", 1 << 28).split("\n")]
    else:
        try:
            out.update(json.loads((directory / f"report-{mode}.json").read_text(encoding="utf-8")))
        except (OSError, ValueError):
            out["outcome"] = "crash"
            out["stderr"] = stderr[-3000:]
    return out


def _write_files(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")


def _payloads():
    import importlib.util

    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("ps_security_compiled_payloads", here / "compiled_payloads.py")
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


def run(
    cases: list[dict],
    jobs: int,
    memory: int,
    deadline: float,
    modes: tuple[str, ...] = MODES,
    base: Path | None = None,
) -> None:
    """Run ``cases`` in every mode, in the directory ``base`` (a new one when not
    given: a served runner keeps one, so that the shared records are written once)."""
    import shutil

    own = base is None
    if base is None:
        base = Path(tempfile.mkdtemp(prefix="ps-differential-"))
    pending = []
    left: dict[Path, int] = {}
    for case in cases:
        directory = Path(tempfile.mkdtemp(prefix="case", dir=base))
        _write_files(directory, case.pop("files", {}))
        rows = case.get("rows")
        if rows:  # the records (megabytes) written once, linked into each case's directory
            shared = base / f"rows-{rows}.jsonl"
            if not shared.exists():
                _write_files(base, {shared.name: _payloads().data_text(rows)})
            (directory / "test.jsonl").symlink_to(shared)
        for mode in case.get("modes", modes):
            pending.append((case, mode, directory))
            left[directory] = left.get(directory, 0) + 1
    del cases
    running: dict[int, tuple[dict, str, Path, float]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            case, mode, directory = pending.pop(0)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                status = 99
                try:
                    status = _child(case, mode, directory, memory)
                finally:
                    for stream in (sys.stdout, sys.stderr):
                        try:
                            stream.flush()
                        except Exception:
                            pass
                    os._exit(status if isinstance(status, int) else 99)
            running[pid] = (case, mode, directory, time.monotonic())
        time.sleep(0.002)
        for pid, (case, mode, directory, started) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - started
            hung = False
            if not done:
                if elapsed < deadline:
                    continue
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                hung, code = True, -9
            else:
                code = os.waitstatus_to_exitcode(status)
            del running[pid]
            print(json.dumps(_result(case, mode, directory, code, elapsed, hung)), flush=True)
            left[directory] -= 1
            if not left[directory]:
                shutil.rmtree(directory, ignore_errors=True)
    if own:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--memory", type=int, default=1 << 30)
    parser.add_argument("--deadline", type=float, default=2.0)
    parser.add_argument("--serve", action="store_true", help="one case per line of stdin, answered at once")
    args = parser.parse_args()
    cases = None if args.serve else json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
    import jinja2  # noqa: F401
    import yaml  # noqa: F401

    import prompt_style.cli  # noqa: F401
    import prompt_style.cli.render  # noqa: F401
    import prompt_style.fastpath  # noqa: F401
    import prompt_style.formats.lm_eval.fields  # noqa: F401
    import prompt_style.safe._sandbox  # noqa: F401
    from prompt_style.plugins import default_plugin_manager

    default_plugin_manager()
    if cases is not None:
        run(cases, args.jobs, args.memory, args.deadline)
        return
    import shutil

    base = Path(tempfile.mkdtemp(prefix="ps-differential-"))
    try:
        for line in sys.stdin.buffer:
            case = json.loads(line.decode("utf-8", "surrogatepass"))
            run([case], args.jobs, args.memory, args.deadline, base=base)
            print(json.dumps({"end": case["id"]}), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
