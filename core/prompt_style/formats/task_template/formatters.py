"""Formatters: plugins that turn a dataset's records into the instances templates see.

A task names one with ``formatter: {name: NAME, args: {...}}``. Formatters are
found through the ``format_instances`` hook: a plugin returns ``{name:
formatter}``, where a formatter is a callable ``formatter(records, **args)``
taking an iterable of records (mappings, each with ``_id``, its position in
its split) and returning an iterable of instances (mappings). Returning a
generator keeps instantiation in constant memory. An instance should keep the
``_id`` of the record it came from (SciRIFF's formatters do; one record may
give several instances, e.g. ``"12.0"``, ``"12.1"``).

The built-in ``map_fields`` is the example formatter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...errors import DataError, PluginError, PromptStyleError

__all__ = ["run_formatter", "map_fields", "get_path"]


def get_path(record: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` (``answer.text.0``: keys, and indices into lists).

    :raises KeyError: naming the first step that is missing.
    """
    return _follow(record, _steps(path))


def _steps(path: str) -> tuple[tuple[str, int | None], ...]:
    """A path's steps, each with its list index when it may be one (split once per task)."""
    return tuple((step, _index(step)) for step in path.split("."))


def _index(step: str) -> int | None:
    if not step.lstrip("-").isdigit():
        return None
    try:
        return int(step)
    except ValueError:  # digits int() does not read ('²'): a key only
        return None


def _follow(record: Mapping[str, Any], steps: tuple[tuple[str, int | None], ...]) -> Any:
    value: Any = record
    for step, index in steps:
        kind = type(value)  # (the exact types first: isinstance of an ABC costs more)
        if kind is dict or (kind is not list and kind is not tuple and isinstance(value, Mapping)):
            if step not in value:
                raise KeyError(step)
            value = value[step]
        elif index is not None and (kind is list or kind is tuple or isinstance(value, (list, tuple))):
            if not -len(value) <= index < len(value):
                raise KeyError(step)
            value = value[index]
        else:
            raise KeyError(step)
    return value


def map_fields(
    records: Iterable[Mapping[str, Any]],
    *,
    fields: Mapping[str, str],
    keep: bool = True,
) -> Iterator[dict[str, Any]]:
    """Rename, copy or pull up fields.

    ``args: {fields: {question: "data.q", label: "answers.0"}, keep: false}``
    gives each instance ``question`` and ``label`` taken from those paths (dots
    go into mappings and, with numbers, into lists). With ``keep: true`` (the
    default) the record's other fields stay; with ``keep: false`` only the
    mapped fields and ``_id`` are kept. A missing path is an error naming the
    record.
    """
    if not isinstance(fields, Mapping) or not all(isinstance(v, str) for v in fields.values()):
        raise DataError(
            "formatter 'map_fields': args.fields must map new field names to paths such as 'answers.text.0'",
            key="formatter.args.fields",
        )
    paths = [(new, path, _steps(path)) for new, path in fields.items()]
    mapped = _mapper(paths, keep)
    for position, record in enumerate(records):
        if type(record) is dict:
            try:
                yield mapped(record)
                continue
            except Exception:  # (the loop below gives the value or the error)
                pass
        out: dict[str, Any] = dict(record) if keep else ({"_id": record["_id"]} if "_id" in record else {})
        for new, path, steps in paths:
            try:
                value = record
                for step, index in steps:  # _follow's walk, with dict keys and list items inline
                    if type(value) is dict and step in value:
                        value = value[step]
                    elif type(value) is list and index is not None:
                        try:
                            value = value[index]
                        except IndexError:
                            raise KeyError(step) from None
                    else:
                        value = _follow(value, ((step, index),))
                out[new] = value
            except KeyError as exc:
                shown = ", ".join(map(str, list(record)[:12]))
                raise DataError(
                    f"formatter 'map_fields': record {record.get('_id', position)} has no {path!r} "
                    f"(missing {exc.args[0]!r})",
                    key=f"formatter.args.fields.{new}",
                    hint=f"the record has: {shown}",
                ) from None
        yield out


def _mapper(paths: list[tuple[str, str, tuple[tuple[str, int | None], ...]]], keep: bool) -> Any:
    """``map_fields``'s instance of a ``dict`` record, each path's walk written out
    (a dict's key, a list's index): what the general walk gives for a record whose
    every step is a ``dict`` key or a ``list`` item there; it raises for any other
    record (the general walk then gives its value or its error). The code holds names
    and indices only: keys and field names are values passed in."""
    values: dict[str, Any] = {}
    lines = ["    out = record.copy()" if keep else '    out = {"_id": record["_id"]} if "_id" in record else {}']
    for n, (new, _path, steps) in enumerate(paths):
        values[f"N{n}"] = new
        lines.append("    v = record")
        for s, (step, index) in enumerate(steps):
            values[f"K{n}_{s}"] = step
            if index is None:
                lines.append("    if type(v) is not dict:")
                lines.append("        raise LookupError")
                lines.append(f"    v = v[K{n}_{s}]")
            else:
                values[f"I{n}_{s}"] = index
                lines.append("    if type(v) is dict:")
                lines.append(f"        v = v[K{n}_{s}]")
                lines.append("    elif type(v) is list:")
                lines.append(f"        v = v[I{n}_{s}]")
                lines.append("    else:")
                lines.append("        raise LookupError")
        lines.append(f"    out[N{n}] = v")
    params = ", ".join(values)
    code = f"def make({params}):\n  def mapped(record):\n" + "\n".join("  " + line for line in lines)
    code += "\n      return out\n  return mapped\n"
    namespace: dict[str, Any] = {}
    exec(compile(code, "<prompt_style.map_fields>", "exec"), namespace)  # names and indices only
    return namespace["make"](**values)


def run_formatter(
    formatter: tuple[str, Mapping[str, Any]],
    records: Iterable[Mapping[str, Any]],
    *,
    plugins: Any = None,
    split: str | None = None,
    file: str | None = None,
    line: int | None = None,
) -> Iterator[Mapping[str, Any]]:
    """Run a formatter by name over ``records``, checking what it gives.

    :raises PluginNotFoundError: for an unknown name, listing the installed formatters.
    :raises PluginError: when the formatter raises or gives something that is not a mapping.
    """
    name, args = formatter
    if plugins is None:
        from ...plugins import default_plugin_manager

        plugins = default_plugin_manager()
    where = {"file": file, "line": line, "key": "formatter.name", "split": split}
    try:
        provider = plugins.resolve("format_instances", name)
    except PromptStyleError as exc:
        known = plugins.names("format_instances")
        exc.hint = (exc.hint + "; " if exc.hint and "known" not in exc.hint else "") + (
            f"installed formatters: {', '.join(known) or 'none'}; or give the split's instances, already "
            f"formatted, with --data {split or 'SPLIT'}=PATH (no formatter runs on them)"
        )
        exc.message += " (formatters are plugins: see docs/task-templates.md#formatters)"
        if split:
            exc.message = f"the task's own {split!r} split: {exc.message}"
        raise exc.locate(**where) from None
    function = provider.factory
    try:
        produced = function(records, **dict(args))
        if isinstance(produced, Mapping) or not isinstance(produced, Iterable):
            raise PluginError(
                f"{provider.label()} returned {type(produced).__name__}, not an iterable of instances",
            )
        for position, instance in enumerate(produced):
            if type(instance) is not dict and not isinstance(instance, Mapping):
                raise PluginError(
                    f"{provider.label()} gave a {type(instance).__name__} as instance {position}, not a mapping"
                )
            yield instance
    except PromptStyleError as exc:
        raise exc.locate(**{**where, "key": exc.key or "formatter"}) from None
    except TypeError as exc:
        raise PluginError(
            f"{provider.label()} raised TypeError: {exc}",
            hint=f"check formatter.args (given: {', '.join(args) or 'none'})",
        ).locate(**{**where, "key": "formatter.args"}) from exc
    except Exception as exc:
        raise PluginError(f"{provider.label()} raised {type(exc).__name__}: {exc}").locate(**where) from exc
