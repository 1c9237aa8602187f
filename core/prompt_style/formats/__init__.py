"""Step 1 of the pipeline: task files of every format, read into one :class:`TaskConfig`.

The core parses YAML and JSON with its safe loader (``prompt_style.safe``) and
hands the result, as a :class:`~prompt_style.TaskSource`, to the readers that
plugins provide through the ``read_task`` hook. Exactly one reader claims a
file; prompt-style's own format (``native``) reads what no other reader claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import resolved
from ..errors import PromptStyleError, TaskFileError

if TYPE_CHECKING:
    from ..plugins import PluginManager
    from ..task import TaskConfig
    from ..types import ReadOptions, TaskReader, TaskSource

__all__ = ["load_task_config", "read_source", "choose_reader", "PARSED_SUFFIXES"]

PARSED_SUFFIXES = (".yaml", ".yml", ".json")
"""File types the core parses itself before asking the readers."""


def read_source(path: str | Path, manager: PluginManager) -> TaskSource:
    """Parse a task file into a :class:`TaskSource` (YAML and JSON, or left to a
    reader that lists the file's suffix)."""
    # imported here: listing plugins imports this package, and needs neither
    from ..safe.yaml_loader import load_yaml
    from ..types import TaskSource

    if not isinstance(path, Path):
        path = Path(path)
    suffix = path.suffix.lower()
    readers = _readers(manager)
    if suffix not in PARSED_SUFFIXES and any(suffix in reader.suffixes for reader in readers.values()):
        if not path.is_file():
            raise TaskFileError("task file not found", file=str(path))
        return TaskSource(path=path, data=None, base=path.parent)
    # Formats with YAML tags of their own (lm-evaluation-harness's ``!function``)
    # name them on their reader; the tags build markers, never run code.
    tags: dict[str, Any] = {}
    for reader in readers.values():
        tags.update(getattr(reader, "yaml_tags", None) or {})
    try:
        document = load_yaml(path, tags=tags or None, duplicate_keys="last")
    except TaskFileError as exc:
        if "!Template" in exc.message:  # promptsource's tag: a file to convert, not to render
            exc.hint = f"a promptsource file: prompt-style convert promptsource {path} --out DIR"
        raise
    data = document.data
    if data is None:
        raise TaskFileError("the task file is empty", file=str(path), hint="see docs/task-files.md")
    if not isinstance(data, Mapping):
        raise TaskFileError(f"a task file must be a mapping of keys, not a {type(data).__name__}", file=str(path))
    return TaskSource(path=path, data=data, lines=document.lines, base=path.parent, duplicates=document.duplicates)


def _readers(manager: PluginManager) -> dict[str, TaskReader]:
    # the readers of a manager do not change once its catalog is read: worked out once
    readers = manager.__dict__.get("_task_readers")
    if readers is None:
        names = manager.names("read_task")
        readers = manager.__dict__["_task_readers"] = {
            name: resolved(manager.resolve("read_task", name).factory) for name in names
        }
    return readers


def _effective_suffix(source: TaskSource, readers: Mapping[str, TaskReader]) -> str:
    """The suffix that decides which readers may read ``source``: a Python mapping
    counts as YAML, and so does a file of a type no reader names."""
    if source.path is None:
        return ".yaml"
    suffix = source.path.suffix.lower()
    if suffix in PARSED_SUFFIXES or any(suffix in reader.suffixes for reader in readers.values()):
        return suffix
    return ".yaml"


def choose_reader(manager: PluginManager, source: TaskSource, task_format: str | None = None) -> tuple[str, Any]:
    """The reader for ``source``: the one named by ``task_format``, else the one
    that claims it (a ``fallback`` reader when none does).

    :raises TaskFileError: when two readers claim the file, naming both.
    """
    if task_format is not None:
        try:
            provider = manager.resolve("read_task", task_format)
        except PromptStyleError as exc:
            raise exc.locate(file=source.name if source.path else None, key="task_format") from None
        return task_format, resolved(provider.factory)
    readers = _readers(manager)
    suffix = _effective_suffix(source, readers)
    claims: list[str] = []
    fallback: list[str] = []
    for name, reader in readers.items():
        if suffix not in reader.suffixes:
            continue
        if getattr(reader, "fallback", False):
            fallback.append(name)
        elif reader.detect(source):
            claims.append(name)
    if len(claims) > 1:
        raise TaskFileError(
            f"the task is in more than one known format: {', '.join(claims)}",
            file=source.name if source.path else None,
            hint="name one with --task-format (task_format= in Python)",
        )
    chosen = claims or fallback
    if not chosen:
        known = ", ".join(sorted(readers))
        raise TaskFileError(
            "no reader understands this task file",
            file=source.name if source.path else None,
            hint=f"known task formats: {known}",
        )
    return chosen[0], readers[chosen[0]]


def load_task_config(
    task: str | Path | Mapping[str, Any],
    *,
    plugins: PluginManager | None = None,
    options: ReadOptions | None = None,
    task_format: str | None = None,
) -> TaskConfig:
    """Read a task file (or a mapping of task keys) into a :class:`TaskConfig`.

    :param task: a task file of any installed format, or a mapping (whose
        relative paths resolve against the current directory).
    :param plugins: the plugin manager; defaults to the process-wide one.
    :param options: the user's reading choices (``trust_code``, ``template``).
    :param task_format: the format's name, when detection should not decide.
    :raises TaskFileError: naming the file, the line and the key.
    """
    from ..types import ReadOptions, TaskSource

    if plugins is None:
        from ..plugins import default_plugin_manager

        plugins = default_plugin_manager()
    if isinstance(task, Mapping):
        source = TaskSource(path=None, data=task, base=Path("."))
    else:
        source = read_source(task, plugins)
    name, reader = choose_reader(plugins, source, task_format)
    if source.duplicates and not getattr(reader, "duplicate_keys", False):
        key, line, _ = source.duplicates[0]
        raise TaskFileError(
            f"key {key!r} appears twice",
            file=source.name,
            line=line,
            key=key,
            hint="remove one of them; YAML keeps only the last",
        )
    options = options or ReadOptions()
    if options.plugins is None:
        import dataclasses

        options = dataclasses.replace(options, plugins=plugins)
    config = reader.read(source, options)
    if config.format != name:
        import dataclasses

        config = dataclasses.replace(config, format=name)
    return config
