"""Resolving a task once, then rendering records with plain Python.

``load_task`` resolves plugins and compiles field specs; the resulting
:class:`TaskRenderer` holds only picklable objects (extractors keep their Jinja
source and compile lazily in each process), so harnesses can ship it to worker
processes. Few-shot examples are extracted and formatted once per example.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .data import check_data_file, iter_records, load_records
from .errors import DataError, FieldError, PluginError, PromptStyleError, RenderError
from .plugins import PluginManager, Provider, create_plugin_manager
from .task import TASK_KEYS, TaskConfig, load_task_config
from .types import Dialogue, Sample, StyleSettings

__all__ = [
    "RenderedPrompt",
    "TaskRenderer",
    "Task",
    "load_task",
    "render_records",
    "default_plugin_manager",
]

_FIELD_KEYS = ("doc_to_text", "doc_to_choice", "doc_to_target", "description")


@dataclass(slots=True)
class RenderedPrompt:
    """One rendered record (treat as read-only; not frozen because a frozen
    dataclass costs several times more to create, once per record)."""

    index: int
    """Position of the record in the evaluated split."""
    text: str | None
    """The prompt as a string, when the meta template gives one."""
    messages: list[dict[str, Any]] | None
    """The prompt as API messages, when the meta template gives them."""
    continuations: tuple[str, ...]
    """Candidate continuations (multiple choice), each scored after ``text``."""
    target: Any
    """Gold answer: index into ``continuations``, or the reference text."""
    plugins: Mapping[str, Any]
    """The plugins used, per hook, with distributions and versions (shared by all records)."""
    dialogue: Dialogue = ()
    """The intermediate dialogue, before the meta template."""
    token_ids: list[int] | None = None
    """The prompt as token ids, when the meta template gives them."""

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready view: ``index``, ``text``, ``messages``, ``continuations``,
        ``target``, and ``token_ids`` when the meta template gives them."""
        out = {
            "index": self.index,
            "text": self.text,
            "messages": self.messages,
            "continuations": list(self.continuations),
            "target": self.target,
        }
        if self.token_ids is not None:
            out["token_ids"] = self.token_ids
        return out


_default_manager: PluginManager | None = None


def default_plugin_manager() -> PluginManager:
    """The process-wide manager, created on first use (never at import time)."""
    global _default_manager
    if _default_manager is None:
        _default_manager = create_plugin_manager()
    return _default_manager


def _choices(value: Any) -> list[Any] | None:
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, str):
        # A rendered template gives text; lm-evaluation-harness reads it as a Python literal.
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, (list, tuple)):
            return list(parsed)
    raise FieldError(
        f"gave {type(value).__name__} {value!r}, not a list of choices",
        key="doc_to_choice",
        hint="use a single {{ expression }} such as '{{choices}}' to keep the list",
    )


class TaskRenderer:
    """Renders records of one resolved task. Picklable; safe to use from many processes."""

    def __init__(
        self,
        *,
        task: str,
        extractors: Mapping[str, Callable[[Mapping[str, Any]], Any]],
        style: Any,
        meta: Any,
        retriever: Any,
        pool: Sequence[Mapping[str, Any]] = (),
        split: str = "test",
        pool_split: str | None = None,
        source: str | None = None,
        plugins: Mapping[str, Any] | None = None,
        lines: Mapping[str, int] | None = None,
    ) -> None:
        self.task = task
        self.extractors = dict(extractors)
        self.style = style
        self.meta = meta
        self.retriever = retriever
        self.pool = pool
        self.split = split
        self.pool_split = pool_split
        self.source = source
        self.plugins = dict(plugins or {})
        self.lines = dict(lines or {})
        self._setup()

    def _setup(self) -> None:
        get = self.extractors.get
        self._text = get("doc_to_text")
        self._choice = get("doc_to_choice")
        self._target = get("doc_to_target")
        self._description = get("description")
        self._shots: list[Sample | None] = [None] * len(self.pool)
        self._style_format = self.style.format
        self._meta_apply = self.meta.apply
        self._select = self.retriever.select

    def __getstate__(self) -> dict[str, Any]:
        return {
            key: value
            for key, value in self.__dict__.items()
            if not key.startswith("_")
        }

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    def sample(self, record: Mapping[str, Any], index: int, *, description: bool = True) -> Sample:
        """Extract the fields of one record."""
        key = "doc_to_text"
        try:
            question = self._text(record)
            if question is None:
                raise FieldError(
                    "gave null, so the prompt would read 'None'",
                    key=key,
                    hint="fix the record, or point doc_to_text at a field that holds the question",
                )
            choices = target = None
            text = ""
            if self._choice is not None:
                key = "doc_to_choice"
                choices = self._choice(record)
                if type(choices) is not list:
                    choices = _choices(choices)
            if self._target is not None:
                key = "doc_to_target"
                target = self._target(record)
            if description and self._description is not None:
                key = "description"
                value = self._description(record)
                text = "" if value is None else str(value)
        except PromptStyleError:
            raise
        except Exception as exc:  # user callables and plugin extractors
            raise FieldError(f"raised {type(exc).__name__}: {exc}", key=key) from exc
        return Sample(index, record, question, choices, target, text)

    def _shot(self, i: int) -> Sample:
        shot = self._shots[i]
        if shot is None:
            try:
                shot = self._shots[i] = self.sample(self.pool[i], i, description=False)
            except PromptStyleError as exc:
                exc.message = f"few-shot example: {exc.message}"
                raise exc.locate(split=self.pool_split, index=i) from None
        return shot

    def render(self, record: Mapping[str, Any], index: int) -> RenderedPrompt:
        """Render one record; ``index`` is its position in the evaluated split.

        :raises PromptStyleError: naming the key and the record, for bad data.
        """
        try:
            sample = self.sample(record, index)
            ids = self._select(index, record)
            shots = [self._shot(i) for i in ids] if ids else ()
            formatted = self._style_format(sample, shots)
            made = self._meta_apply(formatted.dialogue)
        except PromptStyleError as exc:
            line = self.lines.get(exc.key or "") or self.lines.get((exc.key or "").split(".")[0])
            raise exc.locate(split=self.split, index=index, file=self.source, line=line) from None
        except Exception as exc:  # a plugin's bug, reported with where it happened
            raise RenderError(
                f"{type(exc).__name__}: {exc}", split=self.split, index=index, file=self.source
            ) from exc
        return RenderedPrompt(
            index,
            made.text,
            made.messages,
            formatted.continuations,
            formatted.target,
            self.plugins,
            formatted.dialogue,
            made.token_ids,
        )


class Task:
    """A loaded task: its config, its resolved renderer, and its data."""

    def __init__(self, config: TaskConfig, renderer: TaskRenderer, records: list[Any] | None) -> None:
        self.config = config
        self.renderer = renderer
        self._records = records  # the evaluated split, when it was loaded for few-shot use

    @property
    def name(self) -> str:
        return self.config.task

    @property
    def plugins(self) -> Mapping[str, Any]:
        return self.renderer.plugins

    def records(self) -> Iterator[Mapping[str, Any]]:
        """The records of the evaluated split, streamed from disk."""
        if self._records is not None:
            return iter(self._records)
        split = self.config.test_split
        return iter_records(self.config.data[split], split)

    def render(self, limit: int | None = None) -> Iterator[RenderedPrompt]:
        """Render the evaluated split in order, lazily (constant memory for JSON Lines).

        With ``limit``, no record past the first ``limit`` is read.
        """
        render = self.renderer.render
        records = self.records()
        if limit is not None:
            records = itertools.islice(records, limit)
        try:
            for index, record in enumerate(records):
                yield render(record, index)
        except DataError as exc:
            raise exc.locate(key=f"data.{self.config.test_split}") from None


def _plugin_error(provider: Provider, exc: Exception) -> PluginError:
    return PluginError(
        f"{provider.hook} {provider.name!r} from plugin {provider.plugin.label()} "
        f"raised {type(exc).__name__}: {exc}"
    )


_PROTOCOL_METHOD = {"format_prompt": "format", "apply_meta_template": "apply", "retrieve_examples": "select"}


def _build(
    provider: Provider, where: dict[str, Any], lines: Mapping[str, int], **kwargs: Any
) -> Any:
    try:
        built = provider.factory(**kwargs)
    except PromptStyleError as exc:
        if (
            exc.key
            and where.get("key")
            and exc.key not in TASK_KEYS
            and not exc.key.startswith(where["key"])
        ):
            exc.key = f"{where['key']}.{exc.key}"
        raise exc.locate(**{**where, "line": lines.get(exc.key or "") or where.get("line")}) from None
    except Exception as exc:
        raise _plugin_error(provider, exc).locate(**where) from exc
    method = _PROTOCOL_METHOD[provider.hook]
    if not callable(getattr(built, method, None)):
        raise PluginError(
            f"{provider.hook} {provider.name!r} from plugin {provider.plugin.label()} built a "
            f"{type(built).__name__}, which has no {method}() method",
            hint="see docs/hooks.md for the protocol each factory's object implements",
        ).locate(**where)
    return built


def _locate_data_error(
    exc: PromptStyleError, config: TaskConfig, split: str, named_in_task_file: bool
) -> PromptStyleError:
    """Point an error about a whole data file at the task file line that names it."""
    exc.locate(key=f"data.{split}")
    if exc.file and not Path(exc.file).exists():
        exc.hint = exc.hint or (
            "paths in a task file are relative to the task file"
            if named_in_task_file
            else "paths given to --data (or data=) are relative to the current directory"
        )
    if exc.line is None and named_in_task_file and config.path is not None:
        if exc.file:
            exc.message = f"{exc.message}: {exc.file}"
        exc.file = str(config.path)
        exc.line = config.lines.get(f"data.{split}")
    return exc


def load_task(
    task: str | Path | TaskConfig | Mapping[str, Any],
    *,
    plugins: PluginManager | None = None,
    style: str | None = None,
    meta: str = "plain",
    meta_options: Mapping[str, Any] | None = None,
    shots: int | None = None,
    seed: int | None = None,
    data: Mapping[str, str | Path | Sequence[Mapping[str, Any]]] | None = None,
) -> Task:
    """Load a task and resolve everything rendering needs, once.

    :param task: a YAML task file, a :class:`TaskConfig`, or a mapping of task keys
        (paths relative to the current directory).
    :param plugins: the plugin manager; defaults to :func:`default_plugin_manager`.
    :param style: a style name replacing the task's ``template`` name (its options stay).
    :param meta: the meta template name (``plain``, ``messages``, ``chatml``, ...).
    :param meta_options: options for the meta template.
    :param shots: replaces ``num_fewshot``.
    :param seed: replaces ``seed``.
    :param data: ``{split: path or list of records}`` replacing a split's data (so any
        task can be rendered on other records, including records already in memory).
    :returns: the :class:`Task`.
    :raises PromptStyleError: naming the file, line and key.
    """
    if isinstance(task, TaskConfig):
        config = task
    elif isinstance(task, Mapping):
        config = TaskConfig.from_dict(task)
    else:
        config = load_task_config(task)
    if data:
        merged = {
            **config.data,
            **{
                split: Path(path) if isinstance(path, (str, Path)) else path
                for split, path in data.items()
            },
        }
        config = _replace(config, data=merged)
    if shots is not None:
        if shots < 0:
            raise config.error("num_fewshot", f"--shots must be 0 or more, not {shots}")
        config = _replace(config, num_fewshot=shots)
    if seed is not None:
        config = _replace(config, seed=seed)
    manager = plugins or default_plugin_manager()
    source = str(config.path) if config.path else None
    used: dict[str, Any] = {"extract_field": {}}

    extractors = {}
    for key in _FIELD_KEYS:
        spec = getattr(config, key)
        if spec is None:
            continue
        try:
            extractor, info = manager.extractor(spec, key)
        except PromptStyleError as exc:
            raise exc.locate(**config.where(key)) from None
        extractors[key] = extractor
        used["extract_field"][key] = {
            "plugin": info.name,
            "distribution": info.distribution,
            "version": info.version,
        }

    style_name, style_options = config.style_spec()
    if style is not None:
        style_name = style
    where = config.where("template")
    try:
        provider = manager.resolve("format_prompt", style_name)
    except PromptStyleError as exc:
        raise exc.locate(**where) from None
    settings = StyleSettings(
        target_delimiter=config.target_delimiter,
        fewshot_delimiter=config.fewshot_delimiter,
        task=config.task,
    )
    built_style = _build(provider, where, config.lines, options=style_options, settings=settings)
    used["format_prompt"] = provider.describe()

    meta_where = {"key": "meta"}
    try:
        meta_provider = manager.resolve("apply_meta_template", meta)
    except PromptStyleError as exc:
        raise exc.locate(**meta_where) from None
    built_meta = _build(meta_provider, meta_where, {}, options=dict(meta_options or {}))
    used["apply_meta_template"] = meta_provider.describe()

    retriever_spec = config.retriever_spec()
    if seed is not None and retriever_spec is not None and "seed" in retriever_spec[1]:
        # An explicit seed (--seed) wins over the one written in the task file.
        retriever_spec = (retriever_spec[0], {**retriever_spec[1], "seed": seed})
    k = config.num_fewshot
    if retriever_spec is None:
        retriever_spec = ("first_n", {}) if k else ("zero", {})
    retriever_where = config.where("retriever" if config.retriever is not None else "num_fewshot")
    try:
        retriever_provider = manager.resolve("retrieve_examples", retriever_spec[0])
    except PromptStyleError as exc:
        raise exc.locate(**retriever_where) from None

    split = config.test_split
    pool_split = config.fewshot_split
    if pool_split is None:
        pool_split = next((s for s in ("train", "validation", "dev") if s in config.data), split)
    overridden = set(data or ())
    try:
        check_data_file(config.data[split], split)
    except PromptStyleError as exc:
        raise _locate_data_error(exc, config, split, split not in overridden) from None
    needs_pool = bool(k) or config.retriever is not None
    if needs_pool and config.doc_to_target is None:
        key = "num_fewshot" if k else "retriever"
        raise config.error(
            key,
            "few-shot examples need their answers, but the task has no doc_to_target",
            hint="set doc_to_target, or render zero-shot",
        )
    pool: list[Any] = []
    records: list[Any] | None = None
    if needs_pool:
        try:
            pool = load_records(config.data[pool_split], pool_split)
        except PromptStyleError as exc:
            raise _locate_data_error(exc, config, pool_split, pool_split not in overridden) from None
        if pool_split == split:
            records = pool
    retriever = _build(
        retriever_provider,
        retriever_where,
        config.lines,
        options=retriever_spec[1],
        pool=pool,
        k=k,
        same_split=needs_pool and pool_split == split,
        seed=config.seed,
    )
    used["retrieve_examples"] = retriever_provider.describe()

    renderer = TaskRenderer(
        task=config.task,
        extractors=extractors,
        style=built_style,
        meta=built_meta,
        retriever=retriever,
        pool=pool,
        split=split,
        pool_split=pool_split,
        source=source,
        plugins=used,
        lines=config.lines,
    )
    return Task(config, renderer, records)


def render_records(
    records: Sequence[Mapping[str, Any]],
    *,
    fewshot: Sequence[Mapping[str, Any]] | None = None,
    plugins: PluginManager | None = None,
    meta: str = "plain",
    meta_options: Mapping[str, Any] | None = None,
    **task: Any,
) -> list[RenderedPrompt]:
    """Render records held in memory with a task given as keyword arguments.

    A shortcut for tests and notebooks: ``render_records(records, doc_to_text="q",
    template="mcq::mmlu", num_fewshot=1, fewshot=dev_records)``.

    :param records: the records to render (the ``test`` split).
    :param fewshot: records of a ``dev`` split to draw few-shot examples from
        (sets ``fewshot_split: dev`` unless ``task`` names another).
    :param plugins: the plugin manager; defaults to :func:`default_plugin_manager`.
    :param meta: the meta template name.
    :param meta_options: options for the meta template.
    :param task: task keys, as in a task file (``doc_to_text``, ``template``, ...).
    :returns: one :class:`RenderedPrompt` per record.
    """
    data: dict[str, Any] = {"test": list(records)}
    if fewshot is not None:
        data["dev"] = list(fewshot)
        task.setdefault("fewshot_split", "dev")
    config = {"data": data, **task}
    return list(load_task(config, plugins=plugins, meta=meta, meta_options=meta_options).render())


def _replace(config: TaskConfig, **changes: Any) -> TaskConfig:
    import dataclasses

    return dataclasses.replace(config, **changes)
