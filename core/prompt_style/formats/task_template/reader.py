"""The ``task-template`` reader: a task-template file, translated into a TaskConfig.

One template of the file is chosen (``--template N|NAME|ID``; by default the
``evaluate: true`` one, else template 0). Its input, output and answer choices
become ``doc_to_text``, ``doc_to_target`` and ``doc_to_choice`` (one render per
record feeds all three), and the ``task_template`` style lays them out, so the
task renders with any retriever and any meta template, like every other task.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import DataError, TaskFileError, TaskFileWarning
from ...task import TaskConfig
from ...types import ReadOptions, TaskSource

if TYPE_CHECKING:
    from .schema import Problem, TaskTemplateFile
    from .template import TaskTemplate

# The schema, the data sources and the templates are imported when a file is
# read, not when the built-in plugin registers this reader.

__all__ = ["TaskTemplateReader", "read_spec", "problems_error", "STYLE", "DEFAULT_SEED"]

STYLE = "task_template"
_NO_TEMPLATE: Any = object()
DEFAULT_SEED = 1234
_NATIVE_KEYS = ("task", "doc_to_text", "template", "data")
# keys only task-template files have (no other format's task files use them)
_OWN_KEYS = ("dataset", "subset", "data_dir", "skip_splits", "split_lookup", "standardize_splits", "formatter")
_OWN_METADATA = ("domains", "source_type", "input_context", "output_context")


def problems_error(spec: TaskTemplateFile, problems: Sequence[Problem]) -> TaskFileError:
    """One error for several problems: the first with its location, then the others."""
    first, rest = problems[0], problems[1:]
    message = first.detail()
    if rest:
        message += "; also: " + "; ".join(f"line {p.line}: {p.text()}" if p.line else p.text() for p in rest)
    return TaskFileError(message, file=spec.file, line=first.line, key=first.key or None)


def read_spec(
    source: TaskSource | Mapping[str, Any] | str | Path,
    *,
    schema: Mapping[str, Any] | None = None,
    template: Any = _NO_TEMPLATE,
) -> TaskTemplateFile:
    """Read and check a task-template file (or parsed mapping), raising only for
    what makes the whole file unusable -- or, when ``template`` is given (a
    selector, ``None`` for the default), the template about to be used -- all
    such problems in one error; the rest stays in ``.problems``."""
    if isinstance(source, (str, Path)):
        from ...safe.yaml_loader import load_yaml

        document = load_yaml(source, duplicate_keys="last")
        source = TaskSource(
            path=Path(source),
            data=document.data,
            lines=document.lines,
            base=Path(source).parent,
            duplicates=document.duplicates,
        )
    if not isinstance(source, TaskSource):
        source = TaskSource(path=None, data=source)
    from .schema import check

    spec = check(source.data, lines=source.lines, path=source.path, schema=schema, duplicates=source.duplicates)
    blocking = [p for p in spec.problems if p.blocking and p.template is None]
    if spec.templates and template is not _NO_TEMPLATE:
        blocking += template_problems(spec, spec.template(template))
    if blocking or not spec.templates:
        raise problems_error(spec, blocking or [p for p in spec.problems if p.level == "error"] or spec.problems)
    return spec


def template_problems(spec: TaskTemplateFile, template: TaskTemplate) -> list[Problem]:
    return [p for p in spec.problems if p.blocking and p.template == template.id]


def warn_problems(spec: TaskTemplateFile, template: TaskTemplate | None = None) -> None:
    """One warning for the errors that do not stop rendering (metadata, the name
    check, ...; not other templates' problems): the first, and how many more."""
    found = [
        problem
        for problem in spec.problems
        if problem.level == "error"
        and not problem.blocking
        and (problem.template is None or template is None or problem.template == template.id)
    ]
    if not found:
        return
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    warnings.warn(
        f"prompt-style: {found[0].format(spec.file)}{more}; the task still renders, "
        f"but fails validation: prompt-style validate {spec.file or 'FILE'}",
        TaskFileWarning,
        stacklevel=4,
    )


class TaskTemplateReader:
    """Reads SciRIFF/promptsource-like task-template files (a ``templates`` mapping)."""

    suffixes: tuple[str, ...] = (".yaml", ".yml", ".json")
    duplicate_keys = True  # SciRIFF's own files repeat keys; PyYAML keeps the last, and so do we

    def detect(self, source: TaskSource) -> bool:
        data = source.data
        if not isinstance(data, Mapping) or any(k in data for k in _NATIVE_KEYS):
            return False
        if "templates" in data or any(k in data for k in _OWN_KEYS):
            return True
        # a file that lost its templates is still a task-template file: say what it lacks
        metadata = data.get("metadata")
        return isinstance(metadata, Mapping) and any(k in metadata for k in _OWN_METADATA)

    @property
    def yaml_tags(self) -> Mapping[str, Any]:
        """promptsource's ``!Template`` tags, read as marked plain mappings, so that a
        promptsource ``templates.yaml`` renders directly (converted in memory)."""
        from .promptsource import TAGS

        return TAGS

    def read(self, source: TaskSource, options: ReadOptions) -> TaskConfig:
        from .promptsource import converted_source, is_promptsource, not_promptsource_s

        promptsource = is_promptsource(source.data)
        if promptsource:
            source = converted_source(source)
        spec = read_spec(source, template=options.template)
        if promptsource:
            spec.problems = [p for p in spec.problems if not not_promptsource_s(p)]
        template = spec.template(options.template)
        warn_problems(spec, template)
        seed = options.options.get("seed", DEFAULT_SEED)
        template.seed = seed
        if options.data and spec.formatter is not None:
            # Said only when a field is then missing: usually --data holds instances already.
            template.missing_hint = (
                f"records given with --data are used as they are: the task's formatter {spec.formatter[0]!r} "
                "runs only on its own data (data_dir, dataset)"
            )
        template.compile()
        data, test_split = self._data(spec, options)
        from .template import template_parts

        text, target, choices = template_parts(template)
        return TaskConfig(
            task=spec.name,
            data=data,
            doc_to_text=text,
            doc_to_target=target,
            doc_to_choice=choices if template.answer_choices is not None else None,
            template=STYLE,
            test_split=test_split,
            seed=seed if isinstance(seed, int) else DEFAULT_SEED,
            metadata={
                **dict(spec.metadata),
                "template": {"id": template.id, "name": template.name, "evaluate": template.evaluate is True},
            },
            path=source.path,
            lines={**source.lines, "template": source.lines.get(template.key) or source.lines.get("templates") or 1},
        )

    @staticmethod
    def _data(spec: TaskTemplateFile, options: ReadOptions) -> tuple[dict[str, Any], str]:
        """The task's own splits (lazily read), and the split to render: the one
        split given with ``--data``, else test, validation or train, whichever
        the task has first."""
        given = list(options.data)
        from .sources import LazySplit, split_sources

        # The Hub is asked which splits a dataset has only when no split is given.
        sources = split_sources(spec, data_root=options.options.get("data_root"), probe_hub=not given)
        data: dict[str, Any] = {}
        for split, found in sources.splits.items():
            if found.formatter is None and found.path is not None:
                data[split] = found.path
            else:
                data[split] = LazySplit(found, options.plugins)
        if len(given) == 1:
            return data, given[0]
        if given:
            return data, "test" if "test" in given else given[0]
        for split in ("test", "validation", "train"):
            if split in data:
                return data, split
        problem = DataError(
            sources.missing or "the task has no data",
            file=spec.file,
            line=spec.lines.get("data_dir") or spec.lines.get("dataset"),
            key="data_dir" if spec.data_dir else ("dataset" if spec.dataset else "name"),
            hint=(sources.hint + "; or " if sources.hint else "") + "give the records with --data SPLIT=PATH",
        )
        return {"test": LazySplit(None, problem=problem)}, "test"
