"""promptsource ``templates.yaml`` files, converted into task-template files.

A promptsource file holds the templates of one dataset (and subset), keyed by
UUID and tagged ``!Template`` / ``!TemplateMetadata``. It is read with the one
safe YAML loader, taught those two tags (they become plain mappings; no Python
object is ever built). Conversion keeps every template as written — Jinja,
answer choices, name — numbers them 0..n-1 in file order, and records in each
template's metadata:

* ``promptsource_id``: the template's id (``--template`` accepts it);
* ``reference``: promptsource's reference (author or paper), when given;
* ``render_as: promptsource``: render with promptsource 0.2.3's semantics
  (``Template.apply`` with its defaults ``truncate=True``,
  ``highlight_variables=False``: lenient undefined values; the ``choice``,
  ``most_frequent`` and ``highlight`` filters; every ``{{ ... }}`` truncated to
  2048 characters), so a converted template renders exactly as promptsource does;
* ``original_task``, ``choices_in_prompt``, ``metrics`` (and ``languages``):
  promptsource's own template metadata.

The task-level ``metadata`` that the task-template schema requires (task type,
domains, ...) is not in promptsource: ``contributor`` defaults to
``promptsource`` and the rest comes from ``--metadata KEY=VALUE``;
``prompt-style validate`` names what is still missing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import TaskFileError
from ...safe.yaml_loader import YamlDocument, load_yaml

__all__ = [
    "TAGS",
    "PromptsourceTemplate",
    "load_promptsource",
    "convert",
    "converted_source",
    "dump_task_template",
    "find_templates",
    "is_promptsource",
    "task_name",
]

_METADATA_KEYS = ("original_task", "choices_in_prompt", "metrics", "languages")


class PromptsourceTemplate(dict):
    """A mapping read from promptsource's ``!Template`` tag: plain data, marked so that
    a promptsource file is told from a task-template file once parsed."""


def _mapping(loader: Any, node: Any) -> dict[str, Any]:
    return loader.construct_mapping(node, deep=True)


def _template(loader: Any, node: Any) -> PromptsourceTemplate:
    return PromptsourceTemplate(loader.construct_mapping(node, deep=True))


TAGS = {"!Template": _template, "!TemplateMetadata": _mapping}
"""promptsource's YAML tags, read as (marked) plain mappings; no Python object is built."""


def is_promptsource(data: Any) -> bool:
    """Whether parsed ``data`` is a promptsource file (its templates tagged ``!Template``)."""
    templates = data.get("templates") if isinstance(data, Mapping) else None
    return isinstance(templates, Mapping) and any(isinstance(t, PromptsourceTemplate) for t in templates.values())


TASK_LEVEL_KEYS = ("name", "metadata")
"""Task-level keys that promptsource files do not have: a promptsource file read
directly (``render``, ``validate``) is not held to them; ``convert`` adds them."""


def converted_source(source: Any) -> Any:
    """A promptsource file's :class:`~prompt_style.TaskSource` as the task-template
    file ``convert`` would write (kept in memory), with the lines of its keys."""
    from ...types import TaskSource

    document = YamlDocument(source.data, source.lines, source.path, source.duplicates)
    task = convert(document)
    numbers = {str(key): str(number) for number, key in enumerate(source.data["templates"])}

    def renumbered(path: str) -> str:
        # templates.<promptsource id>.jinja -> templates.<number>.jinja, as convert numbers them
        parts = path.split(".")
        if len(parts) >= 2 and parts[0] == "templates" and parts[1] in numbers:
            parts[1] = numbers[parts[1]]
        return ".".join(parts)

    lines = {renumbered(path): line for path, line in source.lines.items()}
    duplicates = tuple((renumbered(path), line, first) for path, line, first in source.duplicates)
    return TaskSource(path=source.path, data=task, lines=lines, base=source.base, duplicates=duplicates)


def not_promptsource_s(problem: Any) -> bool:
    """Whether a schema problem is about a task-level key promptsource files lack."""
    key = problem.key or ""
    return problem.template is None and any(key == k or key.startswith(k + ".") for k in TASK_LEVEL_KEYS)


def load_promptsource(path: str | Path, text: str | None = None) -> YamlDocument:
    """Read a promptsource ``templates.yaml`` with the safe loader and its two tags.

    :raises TaskFileError: for a file that is not YAML or not a promptsource file.
    """
    # a key written twice: the last one counts, as in promptsource's (PyYAML's) loader;
    # ``document.duplicates`` lists them, and ``prompt-style convert`` warns about each
    document = load_yaml(path, text=text, tags=TAGS, what="promptsource file", duplicate_keys="last")
    data = document.data
    if not isinstance(data, Mapping) or not isinstance(data.get("templates"), Mapping):
        raise TaskFileError(
            "not a promptsource templates file: it needs 'dataset' and a 'templates' mapping",
            file=str(path),
            hint="promptsource keeps them in promptsource/templates/DATASET[/SUBSET]/templates.yaml",
        )
    return document


def find_templates(path: str | Path) -> list[Path]:
    """``path`` itself, or every ``templates.yaml`` below a directory (sorted)."""
    path = Path(path)
    if path.is_dir():
        found = path.rglob("templates.yaml")
        return sorted(p for p in found if not any(part.startswith(".") for part in p.relative_to(path).parts))
    return [path]


def task_name(dataset: str, subset: str | None) -> str:
    """``super_glue`` + ``rte`` -> ``super_glue_rte``: letters, digits and ``_`` only."""
    raw = f"{dataset}_{subset}" if subset else str(dataset)
    return re.sub(r"[^A-Za-z0-9_]+", "_", raw).strip("_") or "task"


def convert(
    document: YamlDocument,
    *,
    name: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    evaluate: str | int | None = None,
) -> dict[str, Any]:
    """A task-template mapping for a promptsource file.

    :param document: from :func:`load_promptsource`.
    :param name: the task's name (default: dataset and subset, see :func:`task_name`).
    :param metadata: task metadata to set (``task``, ``domains``, ...); ``contributor``
        defaults to ``promptsource``.
    :param evaluate: the template (number, name or promptsource id) to mark ``evaluate: true``.
    :raises TaskFileError: for a template without Jinja, or an unknown ``evaluate``.
    """
    data = document.data
    file = str(document.path) if document.path else None
    dataset = data.get("dataset")
    subset = data.get("subset")
    if not data["templates"]:
        raise TaskFileError(
            "the promptsource file has no templates to convert",
            file=file,
            line=document.lines.get("templates"),
            key="templates",
        )
    bad = [
        (key, template)
        for key, template in data["templates"].items()
        if not isinstance(template, Mapping) or not isinstance(template.get("jinja"), str)
    ]
    if bad:
        # every template without its Jinja, at once
        problems = [
            f"templates.{key}: "
            + (
                "is not a template mapping"
                if not isinstance(template, Mapping)
                else "has no jinja"
                if template.get("jinja") is None
                else f"its jinja must be a string, got {template.get('jinja')!r}"
            )
            + (f" (line {document.lines[f'templates.{key}']})" if f"templates.{key}" in document.lines else "")
            for key, template in bad
        ]
        first = f"templates.{bad[0][0]}"
        raise TaskFileError(
            f"{len(bad)} promptsource template{'s' if len(bad) != 1 else ''} without Jinja: " + "; ".join(problems),
            file=file,
            line=document.lines.get(first),
            key=first,
            hint="each template needs jinja: INPUT ||| OUTPUT",
        )
    templates: dict[int, dict[str, Any]] = {}
    for number, (key, template) in enumerate(data["templates"].items()):
        out: dict[str, Any] = {"jinja": template["jinja"]}
        if template.get("answer_choices") is not None:
            out["answer_choices"] = template["answer_choices"]
        if template.get("name") is not None:
            out["name"] = template["name"]
        meta: dict[str, Any] = {}
        given = template.get("metadata") or {}
        for field in _METADATA_KEYS:
            if isinstance(given, Mapping) and given.get(field) is not None:
                meta[field] = given[field]
        meta["promptsource_id"] = str(template.get("id") or key)
        if template.get("reference"):
            meta["reference"] = template["reference"]
        meta["render_as"] = "promptsource"
        out["metadata"] = meta
        templates[number] = out
    if evaluate is not None:
        chosen = _select(templates, evaluate)
        if chosen is None:
            listing = "; ".join(f"{i} {t.get('name')!r}" for i, t in templates.items())
            raise TaskFileError(f"no template {evaluate!r} to mark evaluate: true", file=file, hint=listing)
        templates[chosen] = {**templates[chosen], "evaluate": True}
    if not dataset and name is None and document.path is not None:
        # promptsource itself names a dataset by its folder (templates/DATASET[/SUBSET]/templates.yaml)
        path = Path(document.path)
        name = task_name(path.parent.name if path.stem == "templates" else path.stem, None)
    task: dict[str, Any] = {"name": name or task_name(str(dataset), subset)}
    if dataset:
        task["dataset"] = dataset
    if subset:
        task["subset"] = subset
    task["metadata"] = {"contributor": "promptsource", **dict(metadata or {})}
    task["templates"] = templates
    return task


def _select(templates: Mapping[int, Mapping[str, Any]], selector: str | int) -> int | None:
    text = str(selector)
    for number, template in templates.items():
        if text in (str(number), template.get("name"), template["metadata"].get("promptsource_id")):
            return number
    return None


def dump_task_template(task: Mapping[str, Any]) -> str:
    """YAML text for a task-template mapping: keys in schema order, multi-line
    strings as ``|`` block scalars where YAML can hold them exactly (else quoted).

    :raises TaskFileError: if the text would not read back to the same values
        (a safety net: conversion must never change a template).
    """
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    dumped = yaml.dump(
        dict(task),
        Dumper=Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
        default_flow_style=False,
    )
    back = load_yaml("<converted>", text=dumped).data
    if back != _plain(task):
        raise TaskFileError("internal error: the converted YAML does not read back to the same templates")
    return dumped


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
