"""Reading an lm-evaluation-harness task file with its ``include`` chain.

``include: base.yaml`` (or a list) merges the included files' keys first, each
include overriding the previous ones, then the including file's own keys on
top (a shallow merge, as lm-evaluation-harness's ``load_yaml``); ``task_list``
of an included file is dropped. Includes are relative to the including file.
Every key remembers the file and line it was written at, so errors point at
``_default_template_yaml:5`` rather than the file that included it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import TaskFileError, YamlLimitError, cut, one_line
from ...safe.limits import yaml_limits
from ...safe.yaml_loader import load_yaml
from ...types import TaskSource
from .code import TAGS, FunctionRef

__all__ = ["LmEvalFile", "Problems", "read_file"]


class Problems:
    """Collects what is wrong with a task file, to report it all at once."""

    def __init__(self) -> None:
        self.items: list[TaskFileError] = []

    def add(
        self,
        message: str,
        *,
        file: Path | None,
        key: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.items.append(TaskFileError(message, file=str(file) if file else None, key=key, line=line, hint=hint))

    def raise_if_any(self) -> None:
        if not self.items:
            return
        if len(self.items) == 1:
            raise self.items[0]
        first = self.items[0]
        error = TaskFileError(
            f"{len(self.items)} problems: " + "; ".join(str(p) for p in self.items),
            hint=None,
        )
        error.problems = list(self.items)  # type: ignore[attr-defined]
        error.file = first.file
        error.line = first.line
        raise _Combined(error)


class _Combined(TaskFileError):
    """Several problems of one file; ``str()`` lists them all (each with file and line)."""

    def __init__(self, error: TaskFileError) -> None:
        super().__init__(error.message)
        self.__dict__.update(error.__dict__)

    def __str__(self) -> str:
        return one_line(self.message)


@dataclass
class LmEvalFile:
    """A task file with its includes merged."""

    path: Path | None
    values: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, Path] = field(default_factory=dict)
    """The file each top-level key comes from."""
    lines: dict[str, int] = field(default_factory=dict)
    """Line of each key (dotted paths for nested keys), in the file it comes from."""

    def file_of(self, key: str) -> Path | None:
        return self.origins.get(key.split(".")[0], self.path)

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key) or self.lines.get(key.split(".")[0])


def _attach(value: Any, file: Path | None) -> None:
    """Tell every ``!function`` marker in ``value`` which file names it."""
    if isinstance(value, FunctionRef):
        if value.file is None:
            value.file = file
    elif isinstance(value, Mapping):
        for item in value.values():
            _attach(item, file)
    elif isinstance(value, list):
        for item in value:
            _attach(item, file)


def _set(out: LmEvalFile, key: str, value: Any, file: Path | None, lines: Mapping[str, int]) -> None:
    out.values[key] = value
    if file is not None:
        out.origins[key] = file
    prefix = key + "."
    for name in [n for n in out.lines if n == key or n.startswith(prefix)]:
        del out.lines[name]
    for name, line in lines.items():
        if name == key or name.startswith(prefix):
            out.lines[name] = line


class _Reads:
    """The files one task has read so far, against ``max_task_files`` and ``max_task_bytes``:
    a file included many times (or by many files) counts each time."""

    def __init__(self) -> None:
        self.limits = yaml_limits()
        self.files = 1  # the task file itself
        self.bytes = 0

    def add(self, path: Path, where: Path | None, line: int | None) -> None:
        limits = self.limits
        self.files += 1
        if self.files > limits.max_task_files:
            raise YamlLimitError(
                f"the task reads more than {limits.max_task_files:,} files (its includes, each time included)",
                limit="max_task_files",
                value=limits.max_task_files,
                file=str(where) if where else None,
                key="include",
                line=line,
            )
        try:
            self.bytes += path.stat().st_size
        except (OSError, ValueError):
            return  # reading it says what is wrong
        if self.bytes > limits.max_task_bytes:
            raise YamlLimitError(
                f"the task reads more than {limits.max_task_bytes:,} bytes of files (its includes, each time included)",
                limit="max_task_bytes",
                value=limits.max_task_bytes,
                file=str(where) if where else None,
                key="include",
                line=line,
            )


def _resolved(path: Path) -> Path | None:
    """``path`` with symbolic links resolved, or ``None`` when it cannot be (a loop, a NUL)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _merge(
    data: Mapping[str, Any],
    lines: Mapping[str, int],
    path: Path | None,
    ancestors: tuple[Path, ...],
    problems: Problems,
    reads: _Reads,
) -> LmEvalFile:
    out = LmEvalFile(path)
    own = dict(data)
    includes = own.pop("include", None)
    if includes is not None:
        base = path.parent if path is not None else Path(".")
        for position, name in enumerate(includes if isinstance(includes, list) else [includes]):
            line = lines.get(f"include.{position}") or lines.get("include")
            if not isinstance(name, str) or not name:
                problems.add(f"must name a file, not {name!r}", file=path, key="include", line=line)
                continue
            if "\0" in name:
                problems.add(
                    f"{cut(name)} is not a file name (it holds a NUL character)", file=path, key="include", line=line
                )
                continue
            included = Path(name).expanduser()
            included = included if included.is_absolute() else base / included
            resolved = _resolved(included)
            if resolved is None:
                problems.add(
                    f"{cut(name)} cannot be resolved (a loop of symbolic links?)", file=path, key="include", line=line
                )
                continue
            if resolved in ancestors:
                problems.add(f"{name} includes this file again (an include cycle)", file=path, key="include", line=line)
                continue
            reads.add(included, path, line)
            try:
                document = load_yaml(included, tags=TAGS, what="included task file", duplicate_keys="last")
            except TaskFileError as exc:
                if exc.line is None:
                    exc = TaskFileError(
                        f"{exc.message}: {included}", file=str(path) if path else None, key="include", line=line
                    )
                problems.items.append(exc)
                continue
            if not isinstance(document.data, Mapping):
                kind = type(document.data).__name__
                problems.add(
                    f"the included file {name} is a {kind}, not a mapping", file=path, key="include", line=line
                )
                continue
            _attach(document.data, included)
            sub = _merge(document.data, document.lines, included, (*ancestors, resolved), problems, reads)
            sub.values.pop("task_list", None)  # a task list belongs to the file that writes it
            for key, value in sub.values.items():
                _set(out, key, value, sub.origins.get(key), {k: v for k, v in sub.lines.items()})
    for key, value in own.items():
        _set(out, str(key), value, path, lines)
    return out


def read_file(source: TaskSource, problems: Problems) -> LmEvalFile:
    """The task's keys, includes merged, with the file and line of each."""
    data = dict(source.data or {})
    _attach(data, source.path)
    ancestors = (source.path.resolve(),) if source.path is not None else ()
    merged = _merge(data, source.lines, source.path, ancestors, problems, _Reads())
    merged.path = source.path
    return merged
