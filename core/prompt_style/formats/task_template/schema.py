"""The task-template schema: every key, checked, with every problem reported at once.

A task-template file (SciRIFF's format, close to promptsource's) holds one task:

.. code-block:: yaml

    name: scifact_entailment        # must equal the file name
    dataset: allenai/scifact        # or data_dir: scifact (local JSON Lines)
    metadata: {task: entailment, domains: [biomedicine], ...}
    templates:
      0:
        jinja: "Claim: {{ claim }} ||| {{ label }}"
        evaluate: true

:func:`check` returns a :class:`TaskTemplateFile` (as much of the file as could
be understood) and the list of :class:`Problem` s. A problem's ``level`` is
``error`` (``prompt-style validate`` fails) or ``warning`` (reported; fails
only with ``--strict``); ``blocking`` problems make the file, or the one
template they name, impossible to render.

Errors are what SciRIFF's own code rejects (a task that does not load, a
``metadata`` that breaks ``task_schema.yaml``, a ``name`` that is not the file
name, template ids other than 0..n-1, more than one ``evaluate: true``) and
what can never render (bad Jinja, no ``|||``, values of the wrong type).
Warnings are about template metadata, which the reference does not check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..._suggest import did_you_mean, suggest
from ..._where import nearest_line
from ...errors import cut
from ...safe.yaml_loader import load_yaml
from . import jsonschema_lite
from .template import PIPE, SEMANTICS, TaskTemplate

__all__ = [
    "Problem",
    "TaskTemplateFile",
    "check",
    "load_schema",
    "CANONICAL_SPLITS",
    "TASK_KEYS",
    "TEMPLATE_KEYS",
    "TEMPLATE_METADATA",
    "DESCRIPTION_LOCS",
    "SCHEMA_FILE",
]

SCHEMA_FILE = Path(__file__).with_name("task_schema.yaml")
"""The allowed task ``metadata`` (a copy of SciRIFF's ``task_schema.yaml``)."""

CANONICAL_SPLITS = ("train", "validation", "test")

TASK_KEYS: Mapping[str, str] = {
    "name": "the task's name; must equal the file name",
    "dataset": "the Hugging Face dataset, when the data is on the Hub",
    "subset": "the Hugging Face dataset's subset (configuration)",
    "data_dir": "local data: a directory of {train,validation,test}.jsonl under the data root",
    "skip_splits": "splits not to use (e.g. a test split with blank outputs)",
    "split_lookup": "canonical split name -> the dataset's own split name",
    "standardize_splits": "re-balance to train/validation/test when splits are missing (default true)",
    "formatter": "a formatter plugin that turns dataset records into template-ready instances",
    "evaluate": "the evaluation protocol: metrics, output_transform",
    "metadata": "the task's metadata (allowed values: task_schema.yaml)",
    "templates": "the numbered templates",
}
TEMPLATE_KEYS: Mapping[str, str] = {
    "jinja": "the template: input ||| output",
    "evaluate": "true for the one template used for evaluation",
    "answer_choices": "Jinja giving the choices separated by |||",
    "name": "the template's name",
    "metadata": "the template's metadata",
}
DESCRIPTION_LOCS = ("before", "after", "none", "interleaved")
TEMPLATE_METADATA: Mapping[str, str] = {
    "original_task": "true or false",
    "choices_in_prompt": "true or false",
    "metrics": "a list of metric names",
    "languages": "a list of language codes",
    "description_loc": "one of " + ", ".join(DESCRIPTION_LOCS),
    "promptsource_id": "the template's id in promptsource (kept by prompt-style convert)",
    "reference": "promptsource's reference (author or paper)",
    "render_as": "Jinja semantics: sciriff (default) or promptsource",
}
EVALUATE_KEYS = ("metrics", "output_transform")
FORMATTER_KEYS = ("name", "args")

_MISSING = object()
_COMMENT = re.compile(r"{#.*?#}", re.DOTALL)  # a ||| only inside a Jinja comment never renders


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a task-template file."""

    level: str
    """``error`` or ``warning``."""
    key: str
    """Dotted key path: ``metadata.task``, ``templates.2.metadata.description_loc``."""
    message: str
    line: int | None = None
    value: Any = _MISSING
    """The bad value, when there is one."""
    allowed: tuple[Any, ...] | None = None
    hint: str | None = None
    """What to do (or the closest allowed value)."""
    blocking: bool = False
    """The file (or the template in ``template``) cannot be rendered."""
    template: Any = None
    """The template the problem is about, when it is about one."""

    def text(self) -> str:
        """``key: message, got VALUE (allowed: ...; hint)`` without the location."""
        return f"{self.key}: {self.detail()}" if self.key else self.detail()

    def detail(self) -> str:
        """``message, got VALUE (allowed: ...; hint)``: the text without the key."""
        text = self.message
        if self.value is not _MISSING:
            text += f", got {cut(self.value)}"
        notes = []
        if self.allowed is not None:
            notes.append("allowed: " + ", ".join(str(a) for a in self.allowed))
        if self.hint:
            notes.append(self.hint)
        if notes:
            text += f" ({'; '.join(notes)})"
        return text

    def format(self, file: str | None) -> str:
        """``file:line: key: message ...``, one line."""
        where = f"{file}:{self.line}" if file and self.line else (file or "")
        return f"{where}: {self.text()}" if where else self.text()


@dataclass
class TaskTemplateFile:
    """A task-template file as understood (see :func:`check` for its problems)."""

    name: str
    templates: list[TaskTemplate]
    """In file order; each has its ``id`` (the key in ``templates``)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    dataset: str | None = None
    subset: str | None = None
    data_dir: str | None = None
    skip_splits: tuple[str, ...] = ()
    split_lookup: Mapping[str, str] = field(default_factory=dict)
    standardize_splits: bool = True
    formatter: tuple[str, Mapping[str, Any]] | None = None
    """``(name, args)``."""
    evaluate: Mapping[str, Any] | None = None
    path: Path | None = None
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)
    problems: list[Problem] = field(default_factory=list, repr=False)

    @property
    def file(self) -> str | None:
        return str(self.path) if self.path is not None else None

    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]

    def eval_templates(self) -> list[TaskTemplate]:
        """Templates with ``evaluate: true`` (``is True``, as the reference tests it)."""
        return [t for t in self.templates if t.evaluate is True]

    def default_template(self) -> TaskTemplate:
        """The ``evaluate: true`` template, else template 0, else the first."""
        chosen = self.eval_templates()
        if chosen:
            return chosen[0]
        return next((t for t in self.templates if t.id == 0), self.templates[0])

    def template(self, selector: Any = None) -> TaskTemplate:
        """A template by number, by name or by promptsource id (``None``: the default).

        :raises TaskFileError: for an unknown or ambiguous selector, listing the templates.
        """
        from ...errors import TaskFileError

        if selector is None:
            return self.default_template()
        text = str(selector).strip()
        by_id = [t for t in self.templates if str(t.id) == text]
        if by_id:
            return by_id[0]
        raw = str(selector)
        # names are matched as written first (promptsource has names ending in a space), then stripped
        exact = [t for t in self.templates if t.name == raw]
        for label, found in (
            ("name", exact or [t for t in self.templates if isinstance(t.name, str) and t.name.strip() == text]),
            ("promptsource id", [t for t in self.templates if (t.metadata or {}).get("promptsource_id") == text]),
        ):
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise TaskFileError(
                    f"{len(found)} templates have the {label} {text!r}: " + ", ".join(str(t.id) for t in found),
                    file=self.file,
                    key="templates",
                    hint="choose one by number",
                )
        names = [t.name for t in self.templates if t.name] + [str(t.id) for t in self.templates]
        listing = "; ".join(f"{t.id}" + (f" {t.name!r}" if t.name else "") for t in self.templates)
        raise TaskFileError(
            f"no template {text!r}",
            file=self.file,
            line=self.lines.get("templates"),
            key="templates",
            hint=(did_you_mean(text, names) + " " if did_you_mean(text, names) else "") + f"templates: {listing}",
        )


@cache
def load_schema(path: str | None = None) -> Mapping[str, Any]:
    """The metadata schema (the shipped ``task_schema.yaml`` unless ``path`` is given)."""
    return load_yaml(Path(path) if path else SCHEMA_FILE, what="task schema").data


class _Checker:
    def __init__(self, data: Any, lines: Mapping[str, int], path: Path | None, schema: Mapping[str, Any]) -> None:
        self.data = data
        self.lines = lines
        self.path = path
        self.schema = schema
        self.problems: list[Problem] = []

    def add(
        self,
        level: str,
        key: str,
        message: str,
        value: Any = _MISSING,
        *,
        allowed: Sequence[Any] | None = None,
        hint: str | None = None,
        blocking: bool = False,
        template: Any = None,
    ) -> None:
        allowed = tuple(allowed) if allowed is not None else None
        line = nearest_line(self.lines, key)
        if line is None and self.lines:
            line = 1  # a top-level key the file lacks: the file's start is where it goes
        self.problems.append(Problem(level, key, message, line, value, allowed, hint, blocking, template))

    def unknown_key(
        self, level: str, key: str, name: Any, known: Mapping[str, str], message: str, listing: str, **extra: Any
    ) -> None:
        """``name`` (at ``key``) is not one of the ``known`` keys of its mapping: the
        closest known key, else ``listing: ...`` naming them all."""
        self.add(level, key, message, hint=suggest(name, known, listing=listing), **extra)

    def not_one_of(self, level: str, key: str, message: str, value: Any, allowed: Sequence[str], **extra: Any) -> None:
        """A value outside ``allowed``: the allowed values and the closest one."""
        self.add(level, key, message, value, allowed=allowed, hint=did_you_mean(str(value), allowed), **extra)

    # -- typed getters -------------------------------------------------------------

    def optional_str(self, key: str, value: Any, *, blocking: bool = True) -> str | None:
        if value is None or isinstance(value, str):
            return value
        self.add("error", key, "must be a string", value, blocking=blocking)
        return None

    def str_list(self, key: str, value: Any, *, level: str = "error") -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(level, key, "must be a list of strings", value, blocking=level == "error")
            return None
        return value

    # -- the file ----------------------------------------------------------------------

    def run(self) -> TaskTemplateFile:
        data = self.data
        stem = self.path.stem if self.path else None
        if not isinstance(data, Mapping):
            self.add("error", "", f"a task-template file is a mapping of keys, not {_kind(data)}", blocking=True)
            return TaskTemplateFile(name=stem or "task", templates=[], path=self.path, problems=self.problems)
        for key in data:
            if key not in TASK_KEYS:
                self.unknown_key(
                    "error", str(key), key, TASK_KEYS, "is not a key of task-template files", listing="known keys"
                )
        name = self._name(data.get("name", _MISSING), stem)
        spec = TaskTemplateFile(name=name, templates=[], path=self.path, lines=self.lines, problems=self.problems)
        spec.dataset = self.optional_str("dataset", data.get("dataset"))
        spec.subset = self.optional_str("subset", data.get("subset"))
        spec.data_dir = self.optional_str("data_dir", data.get("data_dir"))
        spec.skip_splits = tuple(self._skip_splits(data.get("skip_splits")))
        spec.split_lookup = self._split_lookup(data.get("split_lookup"))
        standardize = data.get("standardize_splits")
        if standardize is not None and not isinstance(standardize, bool):
            self.add("error", "standardize_splits", "must be true or false", standardize, blocking=True)
        spec.standardize_splits = standardize if isinstance(standardize, bool) else True
        spec.formatter = self._formatter(data.get("formatter"))
        spec.evaluate = self._evaluate(data.get("evaluate"))
        spec.metadata = self._metadata(data.get("metadata", _MISSING))
        spec.templates = self._templates(data.get("templates", _MISSING))
        return spec

    def _name(self, name: Any, stem: str | None) -> str:
        if name is _MISSING or name is None:
            self.add("error", "name", "is required", hint=f"add name: {stem}" if stem else "add a name")
            return stem or "task"
        if not isinstance(name, str):
            self.add("error", "name", "must be a string", name)
            return stem or str(name)
        if stem is not None and name != stem:
            self.add(
                "error",
                "name",
                f"must equal the file name {stem!r}",
                name,
                hint=f"rename the file to {name}.yaml or set name: {stem}",
            )
        return name

    def _skip_splits(self, value: Any) -> list[str]:
        splits = self.str_list("skip_splits", value) or []
        for i, split in enumerate(splits):
            if split not in CANONICAL_SPLITS:
                self.not_one_of("warning", f"skip_splits.{i}", "is not a canonical split name", split, CANONICAL_SPLITS)
        return splits

    def _split_lookup(self, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.add("error", "split_lookup", "must be a mapping of canonical split -> dataset split", value)
            return {}
        out: dict[str, str] = {}
        for split, name in value.items():
            key = f"split_lookup.{split}"
            if split not in CANONICAL_SPLITS:
                self.not_one_of("error", key, "keys are canonical split names", split, CANONICAL_SPLITS)
                continue
            if not isinstance(name, str) or not name:
                self.add("error", key, "must be the dataset's name for the split", name, blocking=True)
                continue
            out[split] = name
        return out

    def _formatter(self, value: Any) -> tuple[str, Mapping[str, Any]] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.add("error", "formatter", "must be a mapping with name and args", value, blocking=True)
            return None
        for key in value:
            if key not in FORMATTER_KEYS:
                self.add("error", f"formatter.{key}", "is not a key of formatter", allowed=FORMATTER_KEYS)
        name = value.get("name")
        args = value.get("args")
        if not isinstance(name, str) or not name:
            self.add("error", "formatter.name", "must name a formatter", name, blocking=True)
            return None
        if args is not None and not isinstance(args, Mapping):
            self.add("error", "formatter.args", "must be a mapping of keyword arguments (or null)", args, blocking=True)
            return None
        return name, dict(args or {})

    def _evaluate(self, value: Any) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.add("error", "evaluate", "must be a mapping with metrics and output_transform", value)
            return None
        for key in value:
            if key not in EVALUATE_KEYS:
                self.add("warning", f"evaluate.{key}", "is not a key of evaluate", allowed=EVALUATE_KEYS)
        self.str_list("evaluate.metrics", value.get("metrics"))
        self.optional_str("evaluate.output_transform", value.get("output_transform"), blocking=False)
        return dict(value)

    def _metadata(self, value: Any) -> Mapping[str, Any]:
        if value is _MISSING or value is None:
            required = self.schema.get("required", ())
            self.add(
                "error",
                "metadata",
                "is required",
                hint=f"add metadata with {', '.join(required)}" if required else None,
            )
            return {}
        for violation in jsonschema_lite.validate(value, self.schema):
            key = ".".join(["metadata", *map(str, violation.path)])
            value_arg = _MISSING if violation.value is jsonschema_lite.NO_VALUE else violation.value
            self.add("error", key, violation.message, value_arg, allowed=violation.allowed, hint=violation.hint)
        return dict(value) if isinstance(value, Mapping) else {}

    # -- templates -----------------------------------------------------------------------

    def _templates(self, value: Any) -> list[TaskTemplate]:
        if value is _MISSING or value is None:
            self.add("error", "templates", "is required: a mapping of numbered templates", blocking=True)
            return []
        if not isinstance(value, Mapping):
            self.add("error", "templates", "must be a mapping 0: {jinja: ...}, 1: ...", _kind(value), blocking=True)
            return []
        if not value:
            self.add("error", "templates", "is empty", hint="add template 0", blocking=True)
            return []
        if self.path is not None and self.path.suffix.lower() == ".json":
            # JSON keys are always strings: "0", "1", ... are the template numbers there
            value = {int(k) if isinstance(k, str) and k.isdigit() and k.isascii() else k: v for k, v in value.items()}
        ids = list(value)
        numbers = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
        if len(numbers) != len(ids) or sorted(numbers) != list(range(len(ids))):
            self.add(
                "error",
                "templates",
                f"template ids must be the numbers 0..{len(ids) - 1}",
                ", ".join(str(i) if isinstance(i, int) else repr(i) for i in ids),
                hint="number the templates from 0, as written in the file"
                + (
                    "; a quoted id such as '0' is a string: write 0:, unquoted"
                    if any(isinstance(i, str) and i.strip().isdigit() for i in ids)
                    else ""
                ),
            )
        templates = []
        for template_id, body in value.items():
            template = self._template(template_id, body)
            if template is not None:
                templates.append(template)
        evaluated = [t for t in templates if t.evaluate is True]
        if len(evaluated) > 1:
            self.add(
                "error",
                "templates",
                f"{len(evaluated)} templates have evaluate: true ({', '.join(str(t.id) for t in evaluated)})",
                hint="at most one template is the evaluation template",
            )
        return templates

    def _template(self, template_id: Any, body: Any) -> TaskTemplate | None:
        key = f"templates.{template_id}"
        if not isinstance(body, Mapping):
            self.add("error", key, "must be a mapping with jinja", _kind(body), blocking=True, template=template_id)
            return None
        for name in body:
            if name not in TEMPLATE_KEYS:
                self.unknown_key(
                    "error",
                    f"{key}.{name}",
                    name,
                    TEMPLATE_KEYS,
                    "is not a key of a template",
                    listing="template keys",
                    template=template_id,
                )
        jinja = body.get("jinja")
        if not isinstance(jinja, str):
            message = "is required" if jinja is None else "must be a string"
            value = _MISSING if jinja is None else jinja
            self.add("error", f"{key}.jinja", message, value, blocking=True, template=template_id)
            jinja = None
        elif PIPE not in _COMMENT.sub("", jinja):
            self.add(
                "error",
                f"{key}.jinja",
                "has no ||| between the input and the output"
                + (" (only inside a {# comment #})" if PIPE in jinja else ""),
                hint="write the input, then |||, then the output",
                blocking=True,
                template=template_id,
            )
        choices = body.get("answer_choices")
        if choices is not None and not isinstance(choices, str):
            self.add(
                "error",
                f"{key}.answer_choices",
                "must be a string (Jinja) with the choices separated by |||",
                choices,
                hint="for example: yes ||| no",
                blocking=True,
                template=template_id,
            )
            choices = None
        evaluate = body.get("evaluate", False)
        if evaluate is not None and not isinstance(evaluate, bool):
            self.add("warning", f"{key}.evaluate", "must be true or false", evaluate, template=template_id)
        name = body.get("name")
        if name is not None and not isinstance(name, str):
            self.add("warning", f"{key}.name", "must be a string", name, template=template_id)
            name = str(name)
        metadata = self._template_metadata(key, template_id, body.get("metadata"))
        semantics = metadata.get("render_as") or "sciriff"
        if semantics not in SEMANTICS:
            semantics = "sciriff"
        if jinja is None:
            return None
        template = TaskTemplate(
            id=template_id,
            jinja=jinja,
            answer_choices=choices,
            name=name,
            evaluate=evaluate,
            metadata=metadata,
            semantics=semantics,
            file=str(self.path) if self.path else None,
            lines={part: self.lines.get(f"{key}.{part}") for part in ("jinja", "answer_choices")},
        )
        self._compiles(template)
        return template

    def _compiles(self, template: TaskTemplate) -> None:
        for part, exc in template.syntax_errors():
            hint = None
            message = str(exc.message or "")
            if template.semantics != "promptsource" and any(
                f"No filter named '{name}'" in message for name in ("choice", "most_frequent", "highlight")
            ):
                hint = "that filter is promptsource's: set the template's metadata.render_as: promptsource"
            self.add(
                "error",
                f"{template.key}.{part}",
                f"is not valid Jinja (template line {exc.lineno}): {exc.message}",
                hint=hint,
                blocking=True,
                template=template.id,
            )

    def _template_metadata(self, key: str, template_id: Any, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        key = f"{key}.metadata"
        if not isinstance(value, Mapping):
            self.add("warning", key, "must be a mapping", value, template=template_id)
            return {}
        for name, item in value.items():
            where = f"{key}.{name}"
            if name not in TEMPLATE_METADATA:
                if name not in ("name", "answer_choices"):  # SciRIFF files carry these two here
                    self.unknown_key(
                        "warning",
                        where,
                        name,
                        TEMPLATE_METADATA,
                        "is not a known template metadata key",
                        listing="known keys",
                        template=template_id,
                    )
                continue
            if item is None:
                continue
            if name in ("original_task", "choices_in_prompt") and not isinstance(item, bool):
                self.add("warning", where, "must be true or false", item, template=template_id)
            elif name in ("metrics", "languages"):
                self.str_list(where, item, level="warning")
            elif name == "description_loc" and item not in DESCRIPTION_LOCS:
                self.not_one_of(
                    "warning", where, "is not an allowed value", item, DESCRIPTION_LOCS, template=template_id
                )
            elif name in ("promptsource_id", "reference") and not isinstance(item, str):
                self.add("warning", where, "must be a string", item, template=template_id)
            elif name == "render_as" and item not in SEMANTICS:
                self.add(
                    "error",
                    where,
                    "is not a known Jinja semantics",
                    item,
                    allowed=tuple(SEMANTICS),
                    blocking=True,
                    template=template_id,
                )
        return dict(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


def check(
    data: Any,
    *,
    lines: Mapping[str, int] | None = None,
    path: str | Path | None = None,
    schema: Mapping[str, Any] | None = None,
    duplicates: Sequence[tuple[str, int, int]] = (),
) -> TaskTemplateFile:
    """Understand and check a parsed task-template file.

    :param data: the parsed YAML.
    :param lines: line of each key by dotted path (from :func:`prompt_style.load_yaml`).
    :param path: the file, for messages and the ``name`` check.
    :param schema: the metadata schema (default: the shipped ``task_schema.yaml``).
    :param duplicates: keys written twice (``YamlDocument.duplicates``); the last
        one counts, as in SciRIFF's loader, and each is a warning.
    :returns: the file as understood; ``.problems`` lists everything wrong, in file order.
    """
    checker = _Checker(data, lines or {}, Path(path) if path is not None else None, schema or load_schema())
    for key, line, first in duplicates:
        checker.problems.append(
            Problem(
                "warning",
                key,
                f"appears twice (also on line {first}); the last one counts",
                line,
                hint="merge the two into one",
            )
        )
    spec = checker.run()
    spec.problems.sort(key=lambda p: p.line or 0)
    return spec
