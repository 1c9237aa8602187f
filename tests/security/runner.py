"""Run security payloads, each in a fresh process with a memory limit and a deadline.

``python runner.py [--jobs N] [--memory BYTES] [--deadline S] < cases.json``
prints one JSON line per case (``python test_security.py`` runs the corpus so).
With ``--serve`` it reads one case per line and answers each with its line as soon
as it is done: test_security.py keeps one such runner per test process and sends
each test's own case. The runner imports prompt-style once and forks a
child per case (a fresh process, started in milliseconds); each child sets
``RLIMIT_AS``, writes the case's files into its own directory and runs either
the CLI (``prompt_style.cli.main``, exactly what the ``prompt-style`` command
runs) or the Python API. The parent kills a child at the deadline.

A case (JSON object):

- ``id``: a name;
- ``files``: ``{name: text}`` written into the child's directory (``bytes:``
  prefixed values are hex for binary files; ``fifo:`` makes a named pipe,
  ``symlink:TARGET`` a symbolic link, ``sparse:SIZE:HEX`` a sparse file of SIZE
  bytes starting with the bytes HEX);
- ``cli``: argv for ``prompt-style`` (``["render", "task.yaml", "--format", "jsonl"]``), or
- ``api``: ``{"task": "task.yaml", ...load_task keywords}``: renders every record; or
  ``{"call": "render_records" | "lm_eval" | "render_chat", "template": ..., "records_py":
  ..., "options_py": ...}``: records (or messages) made by a Python expression (objects no
  JSON file holds: paths, open files, str subclasses...) rendered with ``template`` as
  ``doc_to_text`` (an lm-evaluation-harness task file for ``lm_eval``) or as the chat
  template of ``render_chat``;
- ``stdout``: ``"closed"`` (the command's standard output closed, as ``>&-``) or ``"full"``
  (``/dev/full``);
- ``forbid``: text that must appear nowhere (a secret the payload tries to read);
  ``forbid_files``: files that must not exist afterwards (one it tries to write).

Reported: ``id``, ``outcome`` (``ok``, ``error`` for a typed error / one-line
CLI error, ``crash`` for anything else, ``hang`` when killed at the deadline,
``killed`` for a signal), ``exit``, ``error`` (class name), ``limit``,
``message``, ``stdout`` (cut), ``stderr`` (cut), ``seconds`` (wall clock),
``cpu_seconds`` (the child's CPU time: what the payload cost, however loaded the
machine), ``maxrss_mb`` (the child's peak resident memory, which starts at the
runner's) and ``forbidden`` (what of ``forbid``/``forbid_files`` was found).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

CUT = 20000


def _write_files(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("bytes:"):
            path.write_bytes(bytes.fromhex(text[6:]))
        elif text == "fifo:":
            os.mkfifo(path)
        elif text.startswith("symlink:"):
            os.symlink(text[8:], path)
        elif text.startswith("sparse:"):
            size, _, head = text[7:].partition(":")
            with open(path, "wb") as handle:
                handle.write(bytes.fromhex(head))
                handle.truncate(int(size))
        else:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")


def _namespace() -> dict:
    """What ``records_py`` expressions may use (test code: trusted)."""
    import collections
    import datetime
    import decimal
    import types

    return {
        "Path": Path,
        "open": open,
        "os": os,
        "datetime": datetime,
        "Decimal": decimal.Decimal,
        "defaultdict": collections.defaultdict,
        "OrderedDict": collections.OrderedDict,
        "SimpleNamespace": types.SimpleNamespace,
    }


def _api_call(prompt_style, api: dict) -> list:
    """The rendered prompts (as JSON) of a Python API case."""
    call = api.pop("call", "load_task")
    if call == "load_task":
        task = prompt_style.load_task(api.pop("task"), **api)
        return [r.to_json() for r in task.render()]
    records = eval(api["records_py"], _namespace())  # noqa: S307 - test code
    if call == "render_records":
        return [
            r.to_json() for r in prompt_style.render_records(records, doc_to_text=api["template"], doc_to_target="a")
        ]
    if call == "lm_eval":
        task_file = Path("lm_task.yaml")
        task_file.write_text(
            "task: t\ndataset_path: json\noutput_type: generate_until\n"
            f"doc_to_text: {json.dumps(api['template'])}\ndoc_to_target: '{{{{a}}}}'\n",
            encoding="utf-8",
        )
        task = prompt_style.load_task(task_file, data={"test": records})
        return [r.to_json() for r in task.render()]
    if call == "render_chat":
        Path("chat.jinja").write_text(api["template"], encoding="utf-8")
        options = eval(api.get("options_py") or "{}", _namespace())  # noqa: S307 - test code
        made = prompt_style.render_chat(records, meta="hf", meta_options={"template": "chat.jinja", **options})
        return [{"text": made.text}]
    raise ValueError(f"unknown call {call!r}")


def _child(case: dict, directory: Path, memory: int) -> int:
    """Runs in the forked child; returns the exit status."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    os.chdir(directory)
    out = os.open("stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open("stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    if case.get("stdout") == "full":
        out = os.open("/dev/full", os.O_WRONLY)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    if case.get("stdout") == "closed":
        os.close(1)
        sys.stdout = None  # what Python sets when started with its output closed
    report: dict = {}
    try:
        import prompt_style
        from prompt_style.cli import main

        if "cli" in case:
            status = main(case["cli"])
            if sys.stdout is not None:
                sys.stdout.flush()
            return status
        rendered = _api_call(prompt_style, dict(case["api"]))
        report = {"outcome": "ok", "results": rendered}
    except SystemExit as exc:  # argparse usage errors
        if sys.stdout is not None:
            sys.stdout.flush()
        return exc.code if isinstance(exc.code, int) else 2
    except prompt_style.PromptStyleError as exc:
        report = {
            "outcome": "error",
            "error": type(exc).__name__,
            "limit": getattr(exc, "limit", None),
            "message": str(exc),
        }
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        return 99
    with open("report.json", "w", encoding="utf-8") as handle:
        json.dump(report, handle, ensure_ascii=True)
    return 0


def _read(path: Path) -> str:
    try:
        return path.read_bytes()[:CUT].decode("utf-8", "backslashreplace")
    except OSError:
        return ""


def _digest(text: object) -> object:
    """Texts travel whole when small, as length and SHA-256 when large."""
    if isinstance(text, str) and len(text) > 2000:
        import hashlib

        return {"len": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}
    return text


def _first(rows: list) -> dict:
    first = rows[0] if rows else {}
    return {
        "first_text": _digest(first.get("text")),
        "first_continuations": [_digest(c) for c in first.get("continuations", [])],
        "records": len(rows),
    }


def _check_lines(path: Path) -> dict:
    """Parse the JSON Lines the CLI wrote: each line valid UTF-8 and JSON, one record per line."""
    try:
        data = path.read_bytes()
    except OSError:
        return {"lines_ok": False, "lines_problem": "no stdout"}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {"lines_ok": False, "lines_problem": f"not UTF-8: {exc}"}
    rows = []
    for line in text.split("\n")[:-1]:
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            return {"lines_ok": False, "lines_problem": f"not JSON: {exc}"}
    if len(rows) != len(text.splitlines()):
        return {"lines_ok": False, "lines_problem": "a record spans several lines for str.splitlines()"}
    return {"lines_ok": True, **_first(rows)}


def _forbidden(case: dict, directory: Path) -> list[str]:
    """What the payload must not have done: a forbidden text anywhere, a forbidden file made."""
    found = [name for name in case.get("forbid_files", []) if os.path.lexists(directory / name)]
    if case.get("forbid"):
        texts = []
        for name in ("stdout", "stderr", "report.json"):
            try:
                texts.append((directory / name).read_bytes().decode("utf-8", "backslashreplace"))
            except OSError:
                pass
        found += [text for text in case["forbid"] if any(text in t for t in texts)]
    return found


def _result(case: dict, directory: Path, status: int, seconds: float, hung: bool, usage: object = None) -> dict:
    stdout, stderr = _read(directory / "stdout"), _read(directory / "stderr")
    out = {"id": case["id"], "exit": status, "seconds": round(seconds, 3), "stdout": stdout, "stderr": stderr}
    out["maxrss_mb"] = round(getattr(usage, "ru_maxrss", 0) / 1024, 1)
    # CPU time: what the payload itself cost, whatever else the machine runs.
    out["cpu_seconds"] = round(getattr(usage, "ru_utime", 0) + getattr(usage, "ru_stime", 0), 3)
    out["forbidden"] = _forbidden(case, directory)
    if hung:
        out["outcome"] = "hang"
    elif status < 0:
        out["outcome"] = "killed"
    elif status == 99:
        out["outcome"] = "crash"
    elif "api" in case:
        try:
            report = json.loads((directory / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            report = {"outcome": "crash", "message": "no report"}
        rows = report.pop("results", None)
        out.update(report)
        if rows is not None:
            out.update(_first(rows))
            out["leak_text"] = json.dumps(rows[:5])[:20000]
    else:
        lines = [
            line for line in stderr.splitlines() if line.strip() and not line.startswith("prompt-style: warning: ")
        ]
        one_line = len(lines) == 1 and lines[0].startswith("prompt-style: error: ")
        if status == 0:
            out["outcome"] = "ok" if not stderr.strip() or "warning" in stderr else "crash"
            if case["cli"][:1] == ["render"] and "jsonl" in case["cli"]:
                out.update(_check_lines(directory / "stdout"))
        elif status == 2 and one_line:
            out["outcome"] = "error"
            out["message"] = lines[0]
        else:
            out["outcome"] = "crash"
    return out


def run(cases: list[dict], jobs: int, memory: int, deadline: float, collect: bool = True) -> None:
    import gc
    import shutil

    base = Path(tempfile.mkdtemp(prefix="ps-security-"))
    pending = []
    # Files first, then forks: children of a small parent start faster.
    for number, case in enumerate(cases):
        directory = base / f"case{number}"
        directory.mkdir()
        _write_files(directory, case.pop("files", {}))
        pending.append((case, directory))
    del cases
    if collect:
        gc.collect()
    running: dict[int, tuple[dict, Path, float]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            case, directory = pending.pop(0)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:  # the child
                status = 99
                try:
                    status = _child(case, directory, memory)
                finally:
                    for stream in (sys.stdout, sys.stderr):
                        try:
                            stream.flush()
                        except Exception:
                            pass
                    os._exit(status if isinstance(status, int) else 99)
            running[pid] = (case, directory, time.monotonic())
        time.sleep(0.002)
        for pid, (case, directory, started) in list(running.items()):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            elapsed = time.monotonic() - started
            hung = False
            if not done:
                if elapsed < deadline:
                    continue
                os.kill(pid, signal.SIGKILL)
                _, _, usage = os.wait4(pid, 0)
                hung, code = True, -9
            else:
                code = os.waitstatus_to_exitcode(status)
            del running[pid]
            result = _result(case, directory, code, elapsed, hung, usage)
            print(json.dumps(result), flush=True)
            shutil.rmtree(directory, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)


def _read_case(line: bytes) -> dict:
    return json.loads(line.decode("utf-8", "surrogatepass"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=max(2, (os.cpu_count() or 2)))
    parser.add_argument("--memory", type=int, default=1 << 30)
    parser.add_argument("--deadline", type=float, default=2.0)
    parser.add_argument("--serve", action="store_true", help="one case per line of stdin, answered at once")
    args = parser.parse_args()
    cases = None if args.serve else _read_case(sys.stdin.buffer.read())
    # A render's own deadline is a last resort above its counted budgets (3.3 s by
    # default): here it is half the time a child may take, so that whatever only the
    # clock stops (a bomb within every count) stops typed before the child is killed.
    os.environ.setdefault("PROMPT_STYLE_LIMITS", f"deadline={args.deadline / 2:g}")
    # Import once, before forking: every child starts with the modules loaded.
    import jinja2  # noqa: F401
    import yaml  # noqa: F401

    import prompt_style.cli  # noqa: F401
    import prompt_style.cli.render  # noqa: F401
    import prompt_style.safe._sandbox  # noqa: F401
    from prompt_style.plugins import default_plugin_manager

    default_plugin_manager()  # entry points scanned once, as a long-lived harness would
    if cases is not None:
        run(cases, args.jobs, args.memory, args.deadline)
        return
    import gc

    gc.collect()
    gc.freeze()  # what is loaded now stays out of the children's collections
    for line in sys.stdin.buffer:
        run([_read_case(line)], 1, args.memory, args.deadline, collect=False)


if __name__ == "__main__":
    main()
