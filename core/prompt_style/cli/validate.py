"""``prompt-style validate``: check task files, every problem at once."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from ._common import EXIT_BAD_INPUT, add_command

NAME = "validate"
HELP = "check task files (task-template files: the whole schema)"
DESCRIPTION = (
    "Check task files and directories of them. Task-template files are checked against "
    "the whole schema, every problem reported at once; other task files must load. Exits 2 when "
    "any file has an error."
)

_SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__"}

EXAMPLES = """  prompt-style validate examples/sciq/                 every task file below a folder
  prompt-style validate task.yaml --strict --format json"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    parser.add_argument("paths", metavar="PATH", nargs="+", help="a task file, or a directory (*.yaml, *.yml)")
    parser.add_argument("--strict", action="store_true", help="warnings fail too")
    parser.add_argument(
        "--schema", metavar="FILE", help="the allowed task metadata (a JSON Schema in YAML; default: SciRIFF's)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--quiet", action="store_true", help="print only the problems, not the summary")


def _files(paths: list[str]) -> list[tuple[Path, bool]]:
    """``(file, named)``: every file given, and the YAML files below each directory given."""
    from ..errors import TaskFileError

    found: list[tuple[Path, bool]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted([*path.rglob("*.yaml"), *path.rglob("*.yml")]):
                parts = candidate.relative_to(path).parts
                if not any(part in _SKIP_DIRS or part.startswith(".") for part in parts[:-1]):
                    found.append((candidate, False))
        elif path.exists():
            found.append((path, True))
        else:
            raise TaskFileError("no such file or directory", file=str(path))
    return found


def _is_task(source: Any, manager: Any) -> bool:
    """Whether a YAML file found in a directory is a task file: some format claims it,
    or it has a key of prompt-style's own task files (a schema or a config is skipped)."""
    from ..formats import _readers
    from ..task import TASK_KEYS

    if source.data is None:
        return True
    for reader in _readers(manager).values():
        if not getattr(reader, "fallback", False) and reader.detect(source):
            return True
    return hasattr(source.data, "keys") and any(key in TASK_KEYS for key in source.data)


def _check_file(path: Path, schema: Any, manager: Any, named: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """The file's format and its problems as JSON-ready rows (format ``None``: skipped)."""
    from ..errors import PromptStyleError
    from ..formats import choose_reader, read_source
    from ..formats.task_template.reader import TaskTemplateReader
    from ..formats.task_template.schema import check

    def row(level: str, message: str, line: int | None = None, key: str | None = None) -> dict[str, Any]:
        return {"file": str(path), "line": line, "level": level, "key": key, "message": message}

    def error_row(exc: PromptStyleError) -> dict[str, Any]:
        return row("error", exc.message + (f" ({exc.hint})" if exc.hint else ""), exc.line, exc.key)

    try:
        source = read_source(path, manager)
    except PromptStyleError as exc:
        return "?", [error_row(exc)]
    if not named and not _is_task(source, manager):
        return None, []  # type: ignore[return-value]
    if source.data is not None and TaskTemplateReader().detect(source):
        from ..formats.task_template.promptsource import converted_source, is_promptsource, not_promptsource_s

        kind = "task-template"
        if is_promptsource(source.data):
            # a promptsource templates.yaml: its templates, as convert would write them
            kind = "promptsource"
            try:
                source = converted_source(source)
            except PromptStyleError as exc:
                return kind, [error_row(exc)]
        spec = check(source.data, lines=source.lines, path=path, schema=schema, duplicates=source.duplicates)
        problems = [p for p in spec.problems if kind != "promptsource" or not not_promptsource_s(p)]
        rows = [row(p.level, p.detail(), p.line, p.key or None) for p in problems]
        missing = _formatter_not_installed(spec, manager)
        if missing is not None:
            key = "formatter.name"
            rows.append(row("warning", missing, spec.lines.get(key) or spec.lines.get("formatter"), key))
        return kind, rows
    try:
        name, _ = choose_reader(manager, source)
        from ..formats import load_task_config

        load_task_config(path, plugins=manager)
    except PromptStyleError as exc:
        return "?", [error_row(exc)]
    return name, []


def _formatter_not_installed(spec: Any, manager: Any) -> str | None:
    """The task's own data goes through a formatter plugin: say so when none provides it
    (the task still renders records given with --data, which no formatter touches)."""
    if spec.formatter is None:
        return None
    name = spec.formatter[0]
    known = manager.names("format_instances")
    if name in known:
        return None
    from .._suggest import did_you_mean

    hint = did_you_mean(name, known)
    return (
        f"the formatter {name!r} is not installed, so the task's own data cannot be formatted "
        f"(installed formatters: {', '.join(known) or 'none'}{'; ' + hint if hint else ''}); install the plugin "
        "that provides it, or give the instances, already formatted, with --data SPLIT=PATH"
    )


def _line(problem: dict[str, Any]) -> str:
    where = f"{problem['file']}:{problem['line']}" if problem["line"] else problem["file"]
    key = f"{problem['key']}: " if problem["key"] else ""
    return f"{where}: {problem['level']}: {key}{problem['message']}"


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..formats.task_template.schema import load_schema
    from ..plugins import default_plugin_manager

    schema = load_schema(str(Path(args.schema).resolve())) if args.schema else load_schema()
    manager = default_plugin_manager()
    report = []
    skipped: list[str] = []
    for path, named in _files(args.paths):
        kind, problems = _check_file(path, schema, manager, named)
        if kind is None:
            skipped.append(str(path))
            continue
        errors = sum(p["level"] == "error" for p in problems)
        warnings = len(problems) - errors
        report.append({"file": str(path), "format": kind, "errors": errors, "warnings": warnings, "problems": problems})
    failed = [r for r in report if r["errors"] or (args.strict and r["warnings"])]
    files = report
    if args.format == "json":
        import json  # with the command, not with the parser (prompt-style plugins)

        document = {"files": report, "skipped": skipped, "ok": not failed}
        out.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    else:
        for entry in report:
            for problem in entry["problems"]:
                out.write(_line(problem) + "\n")
        if not args.quiet:
            errors = sum(r["errors"] for r in report)
            warnings = sum(r["warnings"] for r in report)
            verdict = "FAILED" if failed else "ok"
            out.write(
                f"{len(files)} file{'s' if len(files) != 1 else ''} checked, {len(files) - len(failed)} ok, "
                f"{len(failed)} failed ({errors} error{'s' if errors != 1 else ''}, "
                f"{warnings} warning{'s' if warnings != 1 else ''}): {verdict}"
                + (f"; {len(skipped)} skipped (not task files): {', '.join(skipped)}" if skipped else "")
                + "\n"
            )
    out.flush()
    return EXIT_BAD_INPUT if failed else 0
