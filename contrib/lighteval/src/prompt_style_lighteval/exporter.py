"""``prompt-style export lighteval TASK --out tasks.py``: a lighteval custom tasks module.

The module written names the task file and the options given to ``export``
(data paths made absolute), and builds its ``TASKS_TABLE`` with
:func:`prompt_style_lighteval.task_configs_from` when lighteval imports it:
prompt-style renders at lighteval's run time, with the same renderer as
``prompt-style render``, so lighteval sends the same bytes. Exporting another
task to the same file adds it (or replaces the task of the same name); a file
not written by this exporter is never overwritten.

The export checks the task first, without lighteval: every record is rendered
and mapped onto lighteval's requests (:mod:`.mapping`), so what lighteval could
not send as rendered is reported now, naming the record.

Exporter options (``--export-option KEY=VALUE``): ``metrics`` (lighteval metric
names, comma-separated), ``generation_size``, ``version``.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from prompt_style import ExportRequest, ExportResult, OptionError, PromptStyleError, check_options

from .mapping import render_parts
from .spec import bridge_options

__all__ = ["LightevalExporter", "read_entries"]

MARKER = "# prompt-style export lighteval: the tasks below"


@dataclass(frozen=True)
class ExportOptions:
    metrics: Any = None
    generation_size: Any = None
    version: Any = 0


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The tasks of a module this exporter wrote (``[]`` for a new file).

    :raises OptionError: for a file this exporter did not write.
    """
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    if MARKER not in text:
        raise OptionError(
            f"{path} exists and was not written by prompt-style export lighteval",
            key="--out",
            hint="choose another --out, or delete the file",
        )
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["ENTRIES"]:
            return list(ast.literal_eval(node.value))
    raise OptionError(f"{path} has no ENTRIES list", key="--out", hint="delete the file and export again")


def _literal(value: Any) -> Any:
    """``value`` as the module holds it: Python literals only."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _literal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_literal(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise OptionError(f"the option value {value!r} cannot be written into a module", key="--export-option")


def _py(value: Any) -> str:
    """A literal as Python source (strings in double quotes, as the house formats)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"


def _in_docstring(text: str) -> str:
    """``text`` inside the module's docstring, reading back as it is (the system prompt in the
    command may hold backslashes and triple quotes)."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def module_text(entries: list[dict[str, Any]], usage: str) -> str:
    blocks = ["    {\n" + "".join(f"        {_py(k)}: {_py(v)},\n" for k, v in e.items()) + "    },\n" for e in entries]
    listing = "[\n" + "".join(blocks) + "]"
    return f'''"""lighteval custom tasks written by `prompt-style export lighteval`
(prompt-style {_version("prompt-style")}, prompt-style-lighteval {_version("prompt-style-lighteval")}).

Run with:

    {_in_docstring(usage)}

prompt-style renders every record when lighteval imports this module, with the
task files and options below; exporting another task to this file adds it.
"""

from prompt_style_lighteval import task_configs_from

{MARKER} (edit with care: each entry is one task)
ENTRIES = {listing}

TASKS_TABLE = task_configs_from(ENTRIES, __file__)
'''


class LightevalExporter:
    """Writes a lighteval custom tasks module for a task (registered by :mod:`.plugin`)."""

    def export(self, request: ExportRequest) -> ExportResult:
        given = check_options(ExportOptions, dict(request.options), what="exporter 'lighteval'")
        ours = bridge_options(
            {
                "name": request.name,
                "metrics": given.metrics,
                "generation_size": given.generation_size,
                "version": given.version,
            },
            where="--export-option",
        )
        out = request.out
        if out.suffix != ".py" or out.is_dir():
            raise OptionError(f"--out {out} is not a Python file", key="--out", hint="e.g. --out tasks.py")
        if request.source is None:
            raise OptionError("the task must be a file to export to lighteval", key="TASK")
        try:
            system = render_parts(request.task).system  # what lighteval could not send is reported now
        except PromptStyleError as exc:
            raise exc.locate(file=str(request.source)) from None
        name = ours.get("name") or request.task.name
        entry = {
            "task": str(request.source),
            "name": name,
            "load_options": _literal(
                {k: v for k, v in request.load_options.items() if v not in (None, {}, "") and v is not False}
            ),
            "metrics": ours.get("metrics"),
            "generation_size": ours.get("generation_size"),
            "version": ours.get("version", 0),
        }
        entries = [e for e in read_entries(out) if e.get("name") != name] + [entry]
        model = "model_name=MODEL" + (f",system_prompt={system!r}" if system is not None else "")
        names = ",".join(f"{e['name']}|0" for e in entries)
        usage = f'lighteval accelerate "{model}" "{names}" --custom-tasks {out}'
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(module_text(entries, usage), encoding="utf-8")
        return ExportResult(files=(out,), usage=usage)
