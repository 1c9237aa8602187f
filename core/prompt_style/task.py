"""The task model: what every task-file format is read into.

A :class:`TaskConfig` names the data, the field specs, the style and the
retriever. prompt-style's own YAML keys map onto it one to one
(:meth:`TaskConfig.from_dict`); readers of other formats (``prompt_style.formats``)
translate into it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._suggest import did_you_mean, suggest
from .errors import TaskFileError, cut

__all__ = ["TaskConfig", "TASK_KEYS", "OUTPUT_TYPES"]

# key -> (accepted types, what it is); the order is the order of docs/task-files.md.
TASK_KEYS: dict[str, tuple[tuple[type, ...] | None, str]] = {
    "task": ((str,), "the task's name"),
    "data": ((dict, str), "data per split: a file relative to the task file, or a list of records"),
    "test_split": ((str,), "the split to render (default: test)"),
    "fewshot_split": ((str,), "the split few-shot examples come from"),
    "doc_to_text": (None, "field spec of the question text"),
    "doc_to_choice": (None, "field spec of the choices"),
    "doc_to_target": (None, "field spec of the gold answer"),
    "template": ((str, dict), "the style: a name, or a dict with template_type and options"),
    "description": ((str,), "text (or Jinja) placed before the prompt"),
    "num_fewshot": ((int,), "number of few-shot examples"),
    "fewshot_delimiter": ((str,), "text between few-shot examples (default: two newlines)"),
    "target_delimiter": ((str,), "text between a question and its answer (default: a space)"),
    "retriever": ((str, dict), "how few-shot examples are chosen: a name, or a dict with name and options"),
    "seed": ((int,), "seed for random retrieval (default: 1234)"),
    "allow_null_target": ((bool,), "a generation record may have a null target (default: false, an error)"),
    "metadata": ((dict,), "free-form information, not used for rendering"),
    "output_type": ((str,), "multiple_choice, generate_until, loglikelihood or loglikelihood_rolling"),
    "gen_prefix": (None, "field spec of text the answer starts with (an assistant prefill)"),
    "until": ((list, str), "stop sequences of a generation task"),
    "doc_id": (None, "field spec of the record's own id, carried by every output line"),
}

OUTPUT_TYPES = ("multiple_choice", "generate_until", "loglikelihood", "loglikelihood_rolling")
"""lm-evaluation-harness's request types; ``None`` means multiple choice when the
task has choices and generation otherwise."""

_TYPE_NAMES = {str: "a string", dict: "a mapping", int: "an integer", list: "a list", bool: "true or false"}


@dataclass(frozen=True)
class TaskConfig:
    """A validated task: what the YAML file says, with paths resolved."""

    task: str = "task"
    data: Mapping[str, Path | Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    """Per split, a data file or the records themselves (none: give ``data=`` to
    :func:`~prompt_style.load_task`)."""
    doc_to_text: Any = None
    doc_to_choice: Any = None
    doc_to_target: Any = None
    template: str | Mapping[str, Any] | None = None
    description: Any = None
    test_split: str = "test"
    fewshot_split: str | None = None
    num_fewshot: int | None = None
    fewshot_delimiter: str = "\n\n"
    target_delimiter: str = " "
    retriever: str | Mapping[str, Any] | None = None
    seed: int = 1234
    allow_null_target: bool = False
    """A generation record's target may be null (no reference); few-shot examples
    and multiple-choice records always need one."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None
    """The task file, when the task came from one."""
    format: str = "native"
    """The task-file format it was read from (a ``read_task`` reader name)."""
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Line of each key in the task file (``template.suffix`` for nested keys)."""
    output_type: str | None = None
    """One of :data:`OUTPUT_TYPES`; ``None``: multiple choice when the task has
    choices, generation otherwise."""
    until: tuple[str, ...] | None = None
    """Stop sequences of a generation task (lm-evaluation-harness ``generation_kwargs.until``)."""
    gen_prefix: Any = None
    """Field spec of the text the answer starts with: an assistant prefill after
    the question (lm-evaluation-harness ``gen_prefix``)."""
    fewshot_overrides: Mapping[str, Any] = field(default_factory=dict)
    """What few-shot examples use instead of the task's own settings
    (lm-evaluation-harness ``fewshot_config``): field specs ``doc_to_text``,
    ``doc_to_choice``, ``doc_to_target``, ``gen_prefix`` and the strings
    ``target_delimiter``, ``fewshot_delimiter``."""
    process_docs: Any = None
    """``process_docs(records) -> records``, applied once to the evaluated split
    before rendering (lm-evaluation-harness ``process_docs``)."""
    fewshot_process_docs: Any = None
    """The same for the few-shot pool; ``None``: the pool is used as read. When
    it is ``process_docs`` and the pool is the evaluated split, the split is
    processed once and serves both."""
    before_code: Any = None
    """Called with no arguments once per load, before ``process_docs`` runs
    (lm-evaluation-harness tasks: seeds the global random generators as
    ``simple_evaluate`` does)."""
    origins: Mapping[str, Path] = field(default_factory=dict, repr=False)
    """The file a key was written in, when it is not :attr:`path` (a key
    inherited through lm-evaluation-harness ``include``)."""
    extras: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Keys of the task file that do not change prompts (lm-evaluation-harness
    ``metric_list``, ``filter_list``, ``generation_kwargs``, ...), kept as written."""
    data_source: str | None = None
    """Where the task's data lives when prompt-style cannot read it (a Hugging
    Face dataset), for the message when no data is given."""
    doc_id: Any = None
    """Field spec of the record's own id (``None``: records are known by their
    position); every rendered prompt carries it (``RenderedPrompt.doc_id``)."""

    def where(self, key: str) -> dict[str, Any]:
        """Location keywords for an error about ``key``."""
        top = key.split(".")[0]
        origin = self.origins.get(key) or self.origins.get(top)
        return {
            "file": str(origin) if origin else str(self.path) if self.path else None,
            "line": self.lines.get(key) or self.lines.get(top),
            "key": key,
        }

    def error(self, key: str, message: str, hint: str | None = None) -> TaskFileError:
        return TaskFileError(message, hint=hint, **self.where(key))

    @property
    def template_config(self) -> Any:
        """The ``template`` as a :class:`~prompt_style.TemplateConfig` (lm-evaluation-harness's
        template system's ``TaskConfig.template_config``); ``None`` without a template or for a style
        that is neither ``mcq`` nor ``cloze``."""
        from .styles.templates import TemplateFactory

        if self.template is None:
            return None
        name, options = self.style_spec()
        if name.split("::", 1)[0] not in ("mcq", "cloze"):
            return None
        return TemplateFactory.from_dict({"template_type": name, **options})

    def style_spec(self) -> tuple[str, dict[str, Any]]:
        """The style name and its options (``template_type`` defaults to ``mcq``, as in
        lm-evaluation-harness's template system)."""
        template = self.template
        if hasattr(template, "to_dict"):  # a TemplateConfig
            template = template.to_dict()
        if template is None:
            return "passthrough", {}
        if isinstance(template, str):
            return template, {}
        options = dict(template)
        name = options.pop("template_type", "mcq")
        if not isinstance(name, str):
            raise self.error("template.template_type", f"must be a string, not {name!r}")
        return name, options

    def retriever_spec(self) -> tuple[str, dict[str, Any]] | None:
        retriever = self.retriever
        if retriever is None:
            return None
        if isinstance(retriever, str):
            return retriever, {}
        options = dict(retriever)
        name = options.pop("name", None)
        if not isinstance(name, str):
            raise self.error(
                "retriever.name",
                "a retriever mapping needs a name",
                hint="for example retriever: {name: fixed, ids: [0, 3]}",
            )
        return name, options

    @classmethod
    def from_dict(
        cls,
        raw: Mapping[str, Any],
        *,
        base: str | Path = ".",
        path: Path | None = None,
        lines: Mapping[str, int] | None = None,
    ) -> "TaskConfig":
        """Validate a task given as a mapping (from YAML or from Python).

        :param raw: the task keys.
        :param base: the directory data paths are relative to.
        :param path: the task file, for messages.
        :param lines: line numbers of the keys, for messages.
        :raises TaskFileError: for an unknown key (with did-you-mean), a value
            of the wrong type, or missing data.
        """
        lines = dict(lines or {})
        where = {"file": str(path) if path else None}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            if key not in TASK_KEYS:
                raise TaskFileError(
                    f"unknown key {key!r}",
                    key=str(key),
                    line=lines.get(str(key)),
                    hint=suggest(key, TASK_KEYS, listing="known keys"),
                    **where,
                )
            types, _ = TASK_KEYS[key]
            if value is None:
                continue
            if key == "template" and hasattr(value, "to_dict"):  # a TemplateConfig, from Python
                value = value.to_dict()
            if types is not None and (not isinstance(value, types) or (int in types and isinstance(value, bool))):
                expected = " or ".join(_TYPE_NAMES[t] for t in types)
                raise TaskFileError(
                    f"must be {expected}, not {type(value).__name__} {cut(value)}",
                    key=key,
                    line=lines.get(key),
                    **where,
                )
            values[key] = value

        def fail(key: str, message: str, hint: str | None = None) -> TaskFileError:
            return TaskFileError(message, key=key, line=lines.get(key), hint=hint, **where)

        # A task may name no data of its own: load_task(data=...) / --data give it.
        data = values.pop("data", None) or {}
        if isinstance(data, str):
            data = {values.get("test_split", "test"): data}
        base = base if isinstance(base, Path) else Path(base)
        paths: dict[str, Path | Sequence[Mapping[str, Any]]] = {}
        for split, file in (data or {}).items():
            if isinstance(file, (list, tuple)):
                paths[str(split)] = file  # the records themselves
                continue
            if not isinstance(file, (str, Path)) or not str(file):
                raise fail(f"data.{split}", f"must be a file path or a list of records, not {cut(file)}")
            file = (file if isinstance(file, Path) else Path(file)).expanduser()
            paths[str(split)] = file if file.is_absolute() else base / file
        test_split = values.pop("test_split", "test")
        if values.get("num_fewshot", 0) < 0:
            raise fail("num_fewshot", f"must be 0 or more, not {values['num_fewshot']}")
        if "doc_to_text" not in values and values.get("output_type") != "loglikelihood_rolling":
            raise fail("doc_to_text", "the task has no doc_to_text", "name the field that holds the question")
        output_type = values.get("output_type")
        if output_type is not None and output_type not in OUTPUT_TYPES:
            raise fail(
                "output_type",
                f"unknown output type {output_type!r}",
                suggest(output_type, OUTPUT_TYPES, listing="use one of"),
            )
        until = values.pop("until", None)
        if until is not None:
            until = (until,) if isinstance(until, str) else tuple(until)
            if not all(isinstance(stop, str) for stop in until):
                raise fail("until", f"must be a string or a list of strings, not {raw['until']!r}")
            values["until"] = until
        name = values.pop("task", None) or (path.stem if path else "task")
        # Data may come later (``--data``, ``load_task(data=...)``): checked by check_data.
        return cls(
            task=name,
            data=paths,
            test_split=test_split,
            path=path,
            lines=lines,
            **values,
        )

    def needs_examples(self) -> bool:
        """Whether rendering needs the few-shot pool: ``num_fewshot`` is positive, or
        a ``retriever`` is named and ``num_fewshot`` is not set (an explicit 0 is zero-shot)."""
        if self.num_fewshot is not None:
            return self.num_fewshot > 0
        return self.retriever is not None

    def check_data(self) -> None:
        """Check that the evaluated split, and a named few-shot split, have data.

        Called by ``load_task`` once ``--data`` (``data=``) has been applied, so a
        task file that names no data of its own renders with data given there.

        :raises TaskFileError: naming the key, its line, and what data there is.
        """
        paths = self.data
        split = self.test_split
        if split not in paths:
            source = f": the task's data is {self.data_source}, which prompt-style does not download"
            message = f"there is no data for the evaluated split {split!r}" + (source if self.data_source else "")
            give = f"give --data {split}=PATH, or data={{{split!r}: ...}} from Python"
            if not paths:
                raise self.error("data", message, give)
            key = "test_split" if "test_split" in self.lines else "data"
            raise self.error(key, message, f"data has: {', '.join(paths)}; set test_split, or {give}")
        fewshot_split = self.fewshot_split
        # Without examples the pool is not needed, unless the task file lists its
        # data: then a few-shot split missing from it is a mistake worth reporting.
        needed = self.needs_examples() or "data" in self.lines
        if fewshot_split is not None and fewshot_split not in paths and needed:
            raise self.error(
                "fewshot_split",
                f"there is no data for the few-shot split {fewshot_split!r}",
                did_you_mean(fewshot_split, paths) or f"data has: {', '.join(paths)}; give --data {fewshot_split}=PATH",
            )
