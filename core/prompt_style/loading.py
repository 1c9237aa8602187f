"""Loading a task: plugins resolved, field specs compiled and data checked, once.

:func:`load_task` turns a task file (or mapping) into a :class:`Task` whose
:class:`~prompt_style.render.TaskRenderer` renders records with no further
lookups.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .data import check_data_file, iter_records, load_records
from .errors import DataError, PluginError, PromptStyleError
from .formats import load_task_config
from .plugins import PluginManager, Provider, create_plugin_manager
from .render import RenderedPrompt, TaskRenderer
from .safe.limits import JinjaLimits, limits_scope
from .task import TASK_KEYS, TaskConfig
from .types import ReadOptions, StyleSettings

__all__ = ["Task", "load_task", "render_records", "default_plugin_manager"]

_FIELD_KEYS = ("doc_to_text", "doc_to_choice", "doc_to_target", "description")
_PROTOCOL_METHOD = {"format_prompt": "format", "apply_meta_template": "apply", "retrieve_examples": "select"}

_default_manager: PluginManager | None = None


def default_plugin_manager() -> PluginManager:
    """The process-wide manager, created on first use (never at import time)."""
    global _default_manager
    if _default_manager is None:
        _default_manager = create_plugin_manager()
    return _default_manager


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
    return PluginError(f"{provider.label()} raised {type(exc).__name__}: {exc}")


def _build(provider: Provider, where: dict[str, Any], lines: Mapping[str, int], **kwargs: Any) -> Any:
    try:
        built = provider.factory(**kwargs)
    except PromptStyleError as exc:
        if exc.key and where.get("key") and exc.key not in TASK_KEYS and not exc.key.startswith(where["key"]):
            exc.key = f"{where['key']}.{exc.key}"
        raise exc.locate(**{**where, "line": lines.get(exc.key or "") or where.get("line")}) from None
    except Exception as exc:
        raise _plugin_error(provider, exc).locate(**where) from exc
    method = _PROTOCOL_METHOD[provider.hook]
    if not callable(getattr(built, method, None)):
        raise PluginError(
            f"{provider.label()} built a {type(built).__name__}, which has no {method}() method",
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
    trust_code: bool = False,
    template: str | int | None = None,
    task_format: str | None = None,
    read_options: Mapping[str, Any] | None = None,
    limits: JinjaLimits | None = None,
) -> Task:
    """Load a task and resolve everything rendering needs, once.

    :param task: a task file of any installed format (see ``prompt-style plugins
        --all``, hook ``read_task``), a :class:`TaskConfig`, or a mapping of task
        keys (paths relative to the current directory).
    :param plugins: the plugin manager; defaults to :func:`default_plugin_manager`.
    :param style: a style name replacing the task's ``template`` name (its options stay).
    :param meta: the meta template name (``plain``, ``messages``, ``chatml``, ...).
    :param meta_options: options for the meta template.
    :param shots: replaces ``num_fewshot``.
    :param seed: replaces ``seed``.
    :param data: ``{split: path or list of records}`` replacing a split's data (so any
        task can be rendered on other records, including records already in memory).
    :param trust_code: allow the task file to run code (lm-evaluation-harness
        ``!function``, OpenCompass ``.py`` configs); off by default.
    :param template: which of a task file's templates to render, for formats
        that hold several (task-template files).
    :param task_format: the task file's format, when detection should not decide.
    :param read_options: format-specific reading options (``ReadOptions.options``),
        e.g. ``{"data_root": "data/processed"}`` for task-template files.
    :param limits: budgets for the task's Jinja templates (docs/security.md),
        while loading and for every record; default: the process defaults
        (``PROMPT_STYLE_LIMITS``).
    :returns: the :class:`Task`.
    :raises PromptStyleError: naming the file, line and key.
    """
    manager = plugins or default_plugin_manager()
    format_options = dict(read_options or {})
    if seed is not None:
        format_options.setdefault("seed", seed)
    options = ReadOptions(
        trust_code=trust_code, template=template, options=format_options, data=dict(data or {}), plugins=manager
    )
    with limits_scope(limits):  # templates compiled while loading check max_source against them
        task_ = _load(task, manager, options, task_format, style, meta, meta_options, shots, seed, data)
    task_.renderer.limits = limits
    return task_


def _load(
    task: str | Path | TaskConfig | Mapping[str, Any],
    manager: PluginManager,
    options: ReadOptions,
    task_format: str | None,
    style: str | None,
    meta: str,
    meta_options: Mapping[str, Any] | None,
    shots: int | None,
    seed: int | None,
    data: Mapping[str, Any] | None,
) -> Task:
    config = _with_overrides(_config_of(task, manager, options, task_format), data=data, shots=shots, seed=seed)
    overridden = set(data or ())
    used: dict[str, Any] = {}
    extractors, used["extract_field"] = _compile_fields(config, manager)
    built_style, used["format_prompt"] = _style(config, manager, style)
    built_meta, used["apply_meta_template"] = _meta(manager, meta, meta_options)

    split = config.test_split
    if split not in config.data:
        raise config.error(
            "data",
            f"there is no data for the evaluated split {split!r}",
            hint=f"give --data {split}=PATH, or data={{{split!r}: ...}} from Python",
        )
    try:
        check_data_file(config.data[split], split)
    except PromptStyleError as exc:
        raise _locate_data_error(exc, config, split, split not in overridden) from None
    provider, options, where = _retriever_provider(config, manager)
    pool_split, pool = _pool(config, overridden)
    retriever = _build(
        provider,
        where,
        config.lines,
        options=options,
        pool=pool,
        k=config.num_fewshot,
        same_split=bool(pool) and pool_split == split,
        seed=config.seed,
    )
    used["retrieve_examples"] = provider.describe()

    renderer = TaskRenderer(
        task=config.task,
        extractors=extractors,
        style=built_style,
        meta=built_meta,
        retriever=retriever,
        pool=pool,
        split=split,
        pool_split=pool_split,
        source=str(config.path) if config.path else None,
        plugins=used,
        lines=config.lines,
        allow_null_target=config.allow_null_target,
    )
    return Task(config, renderer, pool if pool and pool_split == split else None)


def _config_of(
    task: str | Path | TaskConfig | Mapping[str, Any],
    manager: PluginManager,
    options: ReadOptions,
    task_format: str | None,
) -> TaskConfig:
    if isinstance(task, TaskConfig):
        return task
    return load_task_config(task, plugins=manager, options=options, task_format=task_format)


def _with_overrides(
    config: TaskConfig,
    *,
    data: Mapping[str, Any] | None,
    shots: int | None,
    seed: int | None,
) -> TaskConfig:
    changes: dict[str, Any] = {}
    if data:
        given = {split: Path(p) if isinstance(p, (str, Path)) else p for split, p in data.items()}
        changes["data"] = {**config.data, **given}
    if shots is not None:
        if shots < 0:
            raise config.error("num_fewshot", f"--shots must be 0 or more, not {shots}")
        changes["num_fewshot"] = shots
    if seed is not None:
        changes["seed"] = seed
        spec = config.retriever_spec()
        if spec is not None and "seed" in spec[1]:
            # An explicit seed (--seed) wins over the one written in the task file.
            changes["retriever"] = {"name": spec[0], **spec[1], "seed": seed}
    return dataclasses.replace(config, **changes) if changes else config


def _compile_fields(config: TaskConfig, manager: PluginManager) -> tuple[dict[str, Any], dict[str, Any]]:
    extractors: dict[str, Any] = {}
    used: dict[str, Any] = {}
    for key in _FIELD_KEYS:
        spec = getattr(config, key)
        if spec is None:
            continue
        try:
            extractor, info = manager.extractor(spec, key)
        except PromptStyleError as exc:
            raise exc.locate(**config.where(key)) from None
        extractors[key] = extractor
        used[key] = {"plugin": info.name, "distribution": info.distribution, "version": info.version}
    return extractors, used


def _resolve(manager: PluginManager, hook: str, name: str, where: dict[str, Any]) -> Provider:
    try:
        return manager.resolve(hook, name)
    except PromptStyleError as exc:
        raise exc.locate(**where) from None


def _style(config: TaskConfig, manager: PluginManager, override: str | None) -> tuple[Any, dict[str, Any]]:
    name, options = config.style_spec()
    where = config.where("template")
    provider = _resolve(manager, "format_prompt", override or name, where)
    settings = StyleSettings(
        target_delimiter=config.target_delimiter,
        fewshot_delimiter=config.fewshot_delimiter,
        task=config.task,
    )
    built = _build(provider, where, config.lines, options=options, settings=settings)
    return built, provider.describe()


def _meta(manager: PluginManager, name: str, options: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    where = {"key": "meta"}
    provider = _resolve(manager, "apply_meta_template", name, where)
    return _build(provider, where, {}, options=dict(options or {})), provider.describe()


def _pool(config: TaskConfig, overridden: set[str]) -> tuple[str, Sequence[Mapping[str, Any]]]:
    """The few-shot split and its records, loaded only when examples are asked for."""
    split = config.test_split
    pool_split = config.fewshot_split or next((s for s in ("train", "validation", "dev") if s in config.data), split)
    if not config.num_fewshot and config.retriever is None:
        return pool_split, []
    if pool_split not in config.data:
        raise config.error(
            "fewshot_split",
            f"there is no data for the few-shot split {pool_split!r}",
            hint=f"give --data {pool_split}=PATH, or data={{{pool_split!r}: ...}} from Python",
        )
    if config.doc_to_target is None:
        raise config.error(
            "num_fewshot" if config.num_fewshot else "retriever",
            "few-shot examples need their answers, but the task has no doc_to_target",
            hint="set doc_to_target, or render zero-shot",
        )
    try:
        return pool_split, load_records(config.data[pool_split], pool_split)
    except PromptStyleError as exc:
        raise _locate_data_error(exc, config, pool_split, pool_split not in overridden) from None


def _retriever_provider(config: TaskConfig, manager: PluginManager) -> tuple[Provider, dict[str, Any], dict[str, Any]]:
    """The retriever's provider, options and error location (``first_n`` when only
    ``num_fewshot`` is given, ``zero`` when neither is)."""
    spec = config.retriever_spec() or (("first_n", {}) if config.num_fewshot else ("zero", {}))
    where = config.where("retriever" if config.retriever is not None else "num_fewshot")
    return _resolve(manager, "retrieve_examples", spec[0], where), spec[1], where


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
