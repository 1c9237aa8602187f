"""Loading a task: plugins resolved, field specs compiled and data checked, once.

:func:`load_task` turns a task file (or mapping) into a :class:`Task` whose
:class:`~prompt_style.render.TaskRenderer` renders records with no further
lookups.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .choice_order import ChoiceOrder, option_keys_for
from .conversation import reply_callback
from .data import _given as _given_records
from .data import check_data_file, iter_records, load_records, map_records, open_records
from .errors import DataError, OptionError, PluginError, PromptStyleError, RenderError
from .formats import load_task_config
from .jsonl import json_lines
from .meta.chat_rules import ChatRules, continuation_delimiter
from .meta.files import is_meta_path, resolve_meta
from .meta.model_args import apply_model_args
from .meta.tokens import split_token_options, with_tokenizer
from .plugins import PluginManager, Provider, default_plugin_manager
from .provenance import Provenance
from .render import RenderedPrompt, TaskRenderer
from .safe.limits import JinjaLimits, limits_scope
from .split_rendering import SKIPPED, kept, with_doc_id
from .splits import locate_data_error, pool_split_of, processed, read_splits
from .task import TASK_KEYS, TaskConfig
from .types import ReadOptions, StyleSettings

__all__ = ["Task", "load_task", "render_records"]

_FIELD_KEYS = ("doc_to_text", "doc_to_choice", "doc_to_target", "description", "gen_prefix", "doc_id")
_SHOT_FIELD_KEYS = ("doc_to_text", "doc_to_choice", "doc_to_target", "gen_prefix")
_PROTOCOL_METHOD = {"format_prompt": "format", "apply_meta_template": "apply", "retrieve_examples": "select"}


class Task:
    """A loaded task: its config, its resolved renderer, and its data."""

    def __init__(
        self,
        config: TaskConfig,
        renderer: TaskRenderer,
        records: list[Any] | None,
        source_data: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.renderer = renderer
        self._records = records  # the evaluated split, when it was loaded for few-shot use
        self._source_data = dict(source_data) if source_data is not None else None
        self._prepared: Any = None  # what load_task compiled, for variant()
        self._settings: Any = None
        self._meta_built: Any = None
        self._provenance: Provenance | None = None

    def __getstate__(self) -> dict[str, Any]:
        # What variant() reuses (the plugin manager, compiled objects) stays in this
        # process: a Task pickles as its config, renderer and records.
        state = self.__dict__.copy()
        state.update(_prepared=None, _settings=None, _meta_built=None)
        return state

    def variant(
        self,
        *,
        template: str | Mapping[str, Any] | None = None,
        shots: int | None = None,
        meta: str | Path | Mapping[str, Any] | None = None,
        meta_options: Mapping[str, Any] | None = None,
        choice_order: str | ChoiceOrder | None = None,
        records: list[Any] | None = None,
        system_instruction: str | None = None,
        fewshot_as_multiturn: bool | None = None,
    ) -> Task:
        """The same task with another style (a name, or a mapping with ``template_type``
        and options, as the ``template`` key), number of examples, meta template, choice
        order or chat rules (``system_instruction``, ``fewshot_as_multiturn``, as
        :func:`load_task` takes them). Everything else is shared with this task and not done again:
        the task file is not read, field specs are not compiled, the few-shot pool is
        not read (only the style, retriever and meta template are built: templates
        are compiled once per variant). ``records``: the evaluated split's records,
        already in memory, to render from instead of the data file.

        :raises PromptStyleError: as :func:`load_task` would.
        """
        if self._prepared is None:
            raise RenderError(
                "this Task has no variants: it was not made by load_task in this process (or was unpickled)",
                hint="load the task again with load_task",
            )
        config = self.config
        changes: dict[str, Any] = {}
        if template is not None:
            changes["template"] = template
        if shots is not None:
            if shots < 0:
                raise config.error("num_fewshot", f"shots must be 0 or more, not {shots}")
            changes["num_fewshot"] = shots
        if changes:
            config = dataclasses.replace(config, **changes)
        settings = self._settings
        meta_built = self._meta_built
        if system_instruction is not None:
            settings = dataclasses.replace(settings, system_instruction=system_instruction)
        if fewshot_as_multiturn is not None:
            settings = dataclasses.replace(settings, fewshot_as_multiturn=fewshot_as_multiturn)
        if template is not None:
            settings = dataclasses.replace(settings, style=None)
        if meta is not None:
            settings = dataclasses.replace(settings, meta=meta, meta_options=meta_options)
            meta_built = None
        if choice_order is not None:
            settings = dataclasses.replace(settings, choice_order=choice_order)
        task = _assemble(config, self._prepared, settings, meta_built, first=False)
        if records is not None:
            task._records = records
        return task

    @property
    def provenance(self) -> Provenance:
        """What every output line says about how its prompt was made (the task, style,
        meta template, retriever, seed, distributions), worked out once per task:
        ``task.provenance.line(prompt)`` is the prompt's JSON line with its provenance
        and fingerprint, as ``prompt-style render --format jsonl`` writes it."""
        if self._provenance is None:
            spec = self.config.retriever_spec() if self.config.retriever is not None else None
            seed = spec[1].get("seed", self.config.seed) if spec is not None else self.config.seed
            self._provenance = Provenance(
                task=self.config.task,
                plugins=self.renderer.plugins,
                seed=seed,
                fewshot_split=self.renderer.pool_split,
            )
        return self._provenance

    def json_lines(
        self,
        limit: int | None = None,
        *,
        replies: Callable[[RenderedPrompt], str] | Sequence[Sequence[str]] | None = None,
        default_for: Callable[[int], Callable[[Any], Any]] | None = None,
    ) -> Iterator[bytes]:
        """The lines ``prompt-style render --format jsonl`` writes: each request's
        :meth:`provenance` line, as UTF-8 with its newline, in :meth:`render`'s order
        (same arguments); made in the render's loop (:mod:`prompt_style.jsonl`).

        :param default_for: given a prompt's ``index``, the ``default`` for
            ``json.dumps`` (values JSON cannot hold); ``None``: they are an error.
        """
        return json_lines(self, limit, replies=replies, default_for=default_for)

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

    def source(self) -> str | Path | Sequence[Mapping[str, Any]]:
        """The evaluated split's data: its file (or files), or its records when they
        are held in memory (given as records, or read whole as the few-shot pool)."""
        return self._records if self._records is not None else self.config.data[self.config.test_split]

    def source_data(self) -> dict[str, Any]:
        """The data of the splits this task reads, as it was given to the task.

        The evaluated split first, then the split few-shot examples come from
        (whether or not examples are asked for, so that a harness can render
        with more shots later), each as the task received it before any
        ``process_docs`` ran: a file, a tuple of files, or records in memory.
        ``load_task(same task file, data=task.source_data(), same options)``
        loads the same task from them; harness bridges copy them next to the
        files they export (``prompt-style export``).
        """
        if self._source_data is not None:
            return dict(self._source_data)
        return {split: self.config.data[split] for split in read_splits(self.config)}

    @property
    def multiturn(self) -> bool:
        """Whether records are multi-turn dialogues, with one request per model reply."""
        return getattr(self.renderer.style, "infer_mode", None) is not None

    def render(
        self,
        limit: int | None = None,
        *,
        replies: Callable[[RenderedPrompt], str] | Sequence[Sequence[str]] | None = None,
        errors: list[PromptStyleError] | None = None,
    ) -> Iterator[RenderedPrompt]:
        """Render the evaluated split in order, lazily (constant memory for JSON Lines).

        With ``limit``, no record past the first ``limit`` is read. A multi-turn
        task gives one :class:`RenderedPrompt` per request (``turn`` 0, 1, ...),
        record after record; in ``every`` mode the model's replies come from
        ``replies``: a callback given each request, or one list of replies per
        record (``replies[index][turn]``). See :meth:`TaskRenderer.converse` to
        hand replies back one at a time.

        :param errors: where a record that cannot be rendered goes: its error (naming
            the record) is appended and the render goes on with the next record, so
            that a caller can report every bad record at once (:class:`RecordErrors`);
            that record gives no prompt. Without it, the first such error is raised.
            A data file that cannot be read on (a line that is not JSON) raises either way.
        """
        # With errors, each way of rendering a record is wrapped: a record that cannot be
        # rendered gives SKIPPED, its error kept, and the render goes on.
        keep = None if errors is None else functools.partial(kept, errors=errors)
        try:
            split = self.config.test_split
            source = self.source()
            if self.renderer.choice_order is not None:  # one or several orders of each record's choices
                if self.multiturn:
                    raise RenderError("a choice order applies to single-request tasks, not multi-turn dialogues")
                records = open_records(source, split)
                if limit is not None:
                    records = itertools.islice(records, limit)
                ordered = self.renderer.render_ordered if keep is None else keep(self.renderer.render_ordered)
                for index, record in enumerate(records):
                    made = ordered(record, index)
                    if made is not SKIPPED:
                        yield from made
                return
            fast = None if self.multiturn else self.renderer.fast_render()
            if fast is not None:
                # A record the fast path cannot take goes to the general path.
                general = self.renderer._render
                many = self.renderer._fast_path.many
                if self.renderer._doc_id is not None:  # each prompt carries its record's own id
                    fast, general, many = with_doc_id(fast, self.renderer), with_doc_id(general, self.renderer), None
                if keep is not None:  # (the fast path's own loop never raises: general does)
                    fast, general = keep(fast), keep(general)
                if isinstance(source, list) and limit is None and many is not None:  # records in memory
                    rendered = many(_given_records(source, split), general)
                else:
                    # JSON Lines are read and rendered in one loop.
                    rendered = map_records(source, split, fast, general, many)
                    if limit is not None:
                        rendered = itertools.islice(rendered, limit)
                yield from rendered if keep is None else (made for made in rendered if made is not SKIPPED)
                return
            records = open_records(source, split)
            if limit is not None:
                records = itertools.islice(records, limit)
            if not self.multiturn:
                render = self.renderer.render if keep is None else keep(self.renderer.render)
                for index, record in enumerate(records):
                    made = render(record, index)
                    if made is not SKIPPED:
                        yield made
                return
            reply = reply_callback(replies)
            converse = self.renderer.converse
            if keep is None:
                for index, record in enumerate(records):
                    yield from converse(record, index, reply)
                return
            # a record's requests all at once: none of a record that stops halfway
            conversation = keep(lambda record, index: list(converse(record, index, reply)))
            for index, record in enumerate(records):
                made = conversation(record, index)
                if made is not SKIPPED:
                    yield from made
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


def _within_limits(load: Any) -> Any:
    """Templates compiled while the task loads check the task's budgets (``max_source``)."""

    @functools.wraps(load)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with limits_scope(kwargs.get("limits")):
            return load(*args, **kwargs)

    return wrapper


@_within_limits
def load_task(
    task: str | Path | TaskConfig | Mapping[str, Any],
    *,
    plugins: PluginManager | None = None,
    style: str | None = None,
    meta: str | Path | Mapping[str, Any] | None = "plain",
    meta_options: Mapping[str, Any] | None = None,
    shots: int | None = None,
    seed: int | None = None,
    data: Mapping[str, str | Path | Sequence[Mapping[str, Any]]] | None = None,
    trust_code: bool = False,
    template: str | int | None = None,
    task_format: str | None = None,
    system_instruction: str | None = None,
    fewshot_as_multiturn: bool | None = None,
    read_options: Mapping[str, Any] | None = None,
    model_args: str | Mapping[str, Any] | None = None,
    mode: str | None = None,
    limits: JinjaLimits | None = None,
    choice_order: str | ChoiceOrder | None = None,
    option_keys: Sequence[str] | None = None,
    answer_key: str | None = None,
    style_options: Mapping[str, Any] | None = None,
    retriever: str | Mapping[str, Any] | None = None,
    fewshot_split: str | None = None,
    doc_id: Any = None,
) -> Task:
    """Load a task and resolve everything rendering needs, once.

    :param task: a task file of any installed format (see ``prompt-style plugins
        --all``, hook ``read_task``), a :class:`TaskConfig`, or a mapping of task
        keys (paths relative to the current directory).
    :param plugins: the plugin manager; defaults to :func:`default_plugin_manager`.
    :param style: a style name replacing the task's ``template`` name (its options stay).
    :param meta: the meta template name (``plain``, ``messages``, ``chatml``, ...), a
        meta template file (``.yaml``, ``.json``; OpenCompass ``.py`` model configs
        with ``trust_code``) or a mapping (an OpenCompass meta template); ``None``
        is the default, ``plain``.
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
    :param system_instruction: text for the start of the system message, before
        the task's description (lm-evaluation-harness ``--system_instruction``).
    :param fewshot_as_multiturn: with a chat meta template, few-shot examples as
        user/assistant turns (``None``: yes); ``False`` puts the whole plain-text
        prompt in one user message. ``True`` needs a chat meta template.
    :param read_options: format-specific reading options (``ReadOptions.options``),
        e.g. ``{"data_root": "data/processed"}`` for task-template files.
    :param model_args: lm-evaluation-harness's model-args form,
        ``"pretrained=./model,chat_template=hf,add_generation_prompt=false"`` (or a
        mapping): ``chat_template`` chooses the meta template, ``pretrained`` /
        ``tokenizer`` the tokenizer, the rest are meta options (see
        :func:`~prompt_style.parse_model_args`).
    :param mode: ``gen`` or ``ppl`` for styles with modes (OpenCompass tasks); the
        default comes from the task (an OpenCompass ``PPLInferencer`` means ``ppl``).
    :param limits: budgets for the task's Jinja templates (docs/security.md),
        while loading and for every record; default: the process defaults
        (``PROMPT_STYLE_LIMITS``).
    :param choice_order: show each record's choices in another order, the gold
        answer following: ``"shuffle:SEED"`` (seeded per record), ``"reversed"``,
        ``"rotate:K"``, ``"correct:K"`` (the gold choice at position ``K``) or
        ``"circular"`` (every rotation, OpenCompass's CircularEval: one prompt per
        choice); each prompt records its ``permutation``.
    :param option_keys: where the choices are, for a choice order: by default the
        extracted choices (``doc_to_choice``), or for an OpenCompass dataset its
        option columns (``A``, ``B``, ... as OpenCompass's CircularEval datasets
        name them); give the record's option columns, or the one field holding the
        list of choices, when the question's text is built from them.
    :param style_options: options of the style, over the task's ``template`` options
        (``{"generation": "cot"}``; ``--style-option`` on the command line).
    :param answer_key: with ``option_keys``: the field holding the answer
        (default: OpenCompass's ``output_column``, or a ``doc_to_target`` that is a
        field name).
    :param retriever: replaces the task's retriever: a name (the task's retriever
        options are kept only when it names the same retriever) or a mapping with
        ``name`` and options.
    :param fewshot_split: replaces ``fewshot_split``: the split few-shot examples come from.
    :param doc_id: replaces ``doc_id``: the field spec of each record's own id.
    :returns: the :class:`Task`.
    :raises PromptStyleError: naming the file, line and key; an error about a value
        given here (not in the task file) names the keyword (``style``, ``shots``,
        ``retriever``, ``style_options.KEY``, ...) and no file or line.
    """
    manager = plugins or default_plugin_manager()
    if meta is None:
        meta = "plain"
    if model_args is not None:
        meta, meta_options = apply_model_args(model_args, meta, meta_options)
    format_options = dict(read_options or {})
    if seed is not None:
        format_options.setdefault("seed", seed)
    options = ReadOptions(
        trust_code=trust_code, template=template, options=format_options, data=dict(data or {}), plugins=manager
    )
    config = _config_of(task, manager, options, task_format)
    given = _given(style, shots, seed, retriever, fewshot_split, doc_id)
    try:
        return _resolve_task(
            config,
            manager,
            given=given,
            style=style,
            meta=meta,
            meta_options=meta_options,
            shots=shots,
            seed=seed,
            data=data,
            trust_code=trust_code,
            system_instruction=system_instruction,
            fewshot_as_multiturn=fewshot_as_multiturn,
            mode=mode,
            limits=limits,
            style_options=style_options,
            retriever=retriever,
            fewshot_split=fewshot_split,
            doc_id=doc_id,
            choice_order=choice_order,
            option_keys=option_keys,
            answer_key=answer_key,
        )
    except PromptStyleError as exc:
        raise _blame_caller(exc, given, style_options or {}) from None


def _given(style: Any, shots: Any, seed: Any, retriever: Any, fewshot_split: Any, doc_id: Any) -> dict[str, str]:
    """The task keys the caller replaced, with the keyword that replaced each."""
    pairs = (
        ("template", "style", style),
        ("num_fewshot", "shots", shots),
        ("seed", "seed", seed),
        ("retriever", "retriever", retriever),
        ("fewshot_split", "fewshot_split", fewshot_split),
        ("doc_id", "doc_id", doc_id),
    )
    return {key: keyword for key, keyword, value in pairs if value is not None}


def _blame_caller(
    exc: PromptStyleError, given: Mapping[str, str], style_options: Mapping[str, Any]
) -> PromptStyleError:
    """An error about a value the caller gave (``--style``, ``--shots``,
    ``--style-option``...) names that keyword, not a line of the task file that the
    value replaced."""
    key = exc.key or ""
    keyword = given.get(key)
    if keyword is None and key.startswith("template.") and key[len("template.") :] in style_options:
        keyword = f"style_options.{key[len('template.') :]}"
    if keyword is not None:
        exc.key, exc.file, exc.line = keyword, None, None
    return exc


def _resolve_task(
    config: TaskConfig,
    manager: PluginManager,
    *,
    given: Mapping[str, str],
    style: str | None,
    meta: str | Path | Mapping[str, Any],
    meta_options: Mapping[str, Any] | None,
    shots: int | None,
    seed: int | None,
    data: Mapping[str, Any] | None,
    trust_code: bool,
    system_instruction: str | None,
    fewshot_as_multiturn: bool | None,
    mode: str | None,
    limits: JinjaLimits | None,
    style_options: Mapping[str, Any] | None,
    retriever: str | Mapping[str, Any] | None,
    fewshot_split: str | None,
    doc_id: Any,
    choice_order: str | ChoiceOrder | None,
    option_keys: Sequence[str] | None,
    answer_key: str | None,
) -> Task:
    """:func:`load_task` once the task is read: overrides applied, plugins resolved."""
    named = _named_splits(config)
    config = _with_overrides(
        config, data=data, shots=shots, seed=seed, retriever=retriever, fewshot_split=fewshot_split, doc_id=doc_id
    )
    if style_options:
        name, own = config.style_spec()
        config = dataclasses.replace(config, template={"template_type": style or name, **own, **style_options})
    config.check_data()
    overridden = set(data or ())
    source_data = {split: config.data[split] for split in read_splits(config)}
    config = processed(config, overridden)
    used: dict[str, Any] = {}
    specs = {key: getattr(config, key) for key in _FIELD_KEYS}
    extractors, used["extract_field"] = _compile_fields(config, manager, specs)
    # Few-shot examples' own field specs (lm-evaluation-harness's fewshot_config).
    shot_specs = {key: config.fewshot_overrides.get(key) for key in _SHOT_FIELD_KEYS}
    shot_extractors, _ = _compile_fields(config, manager, shot_specs, where="fewshot_config.")
    prepared = _Prepared(
        manager,
        extractors,
        shot_extractors,
        used,
        overridden,
        named,
        trust_code,
        given=dict(given),
        source_data=source_data,
    )
    settings = _Settings(
        style=style,
        meta=meta,
        meta_options=meta_options,
        mode=mode,
        system_instruction=system_instruction,
        fewshot_as_multiturn=fewshot_as_multiturn,
        limits=limits,
        choice_order=choice_order,
        option_keys=option_keys,
        answer_key=answer_key,
    )
    return _assemble(config, prepared, settings)


@dataclasses.dataclass
class _Prepared:
    """What a task's variants share: the plugin manager, the compiled field specs,
    the few-shot pools read so far."""

    manager: PluginManager
    extractors: dict[str, Any]
    shot_extractors: dict[str, Any]
    used: dict[str, Any]
    overridden: set[str]
    named: set[str]
    trust_code: bool
    given: dict[str, str] = dataclasses.field(default_factory=dict)
    """The task keys the caller replaced (their lines are not blamed for errors)."""
    source_data: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The data of the splits the task reads, before ``process_docs`` (:meth:`Task.source_data`)."""
    pools: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class _Settings:
    """The choices :func:`load_task` makes after reading the task (and a variant may change)."""

    style: str | None = None
    meta: Any = "plain"
    meta_options: Mapping[str, Any] | None = None
    mode: str | None = None
    system_instruction: str | None = None
    fewshot_as_multiturn: bool | None = None
    limits: JinjaLimits | None = None
    choice_order: Any = None
    option_keys: Sequence[str] | None = None
    answer_key: str | None = None


def _assemble(
    config: TaskConfig, prepared: _Prepared, settings: _Settings, meta_built: Any = None, *, first: bool = True
) -> Task:
    """The renderer of ``config`` with ``settings``: meta template, style, chat rules,
    retriever (field specs already compiled)."""
    manager = prepared.manager
    overridden = prepared.overridden
    used = dict(prepared.used)
    # The meta template is built before the style: a chat format changes the style's settings.
    if meta_built is None:
        meta_built = _meta(manager, settings.meta, settings.meta_options, prepared.trust_code)
    built_meta, meta_used = meta_built
    chat = bool(getattr(built_meta, "chat", False))
    generate_role = bool(getattr(built_meta, "generate_role", False))
    built_style, used["format_prompt"] = _style(
        config, manager, settings.style, chat, settings.mode, generate_role=generate_role
    )
    used["apply_meta_template"] = meta_used
    _check_repeated_texts(config, settings.meta_options)
    rules = _chat_rules(config, chat, settings.system_instruction, settings.fewshot_as_multiturn)

    split = config.test_split
    try:
        check_data_file(config.data[split], split)
    except PromptStyleError as exc:
        raise locate_data_error(exc, config, split, split not in overridden) from None
    provider, options, where = _retriever_provider(config, manager)
    pool_split = pool_split_of(config)
    if config.needs_examples() and pool_split in prepared.pools:
        pool = prepared.pools[pool_split]
    else:
        pool_split, pool = _pool(config, overridden)
        if pool:
            prepared.pools[pool_split] = pool
    if first:  # said once, when the task loads, not again for each variant
        _warn_unread(overridden - prepared.named - {split, pool_split}, split, pool_split)
    built_retriever = _build(
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

    compile_fast_path = _FAST_PATH[0]
    if compile_fast_path is None:
        # passed down to the renderer, which sits beneath it (imported with the first task)
        from .fastpath import compile_fast_path

        _FAST_PATH[0] = compile_fast_path
    renderer = TaskRenderer(
        task=config.task,
        extractors=prepared.extractors,
        style=built_style,
        meta=built_meta,
        retriever=built_retriever,
        pool=pool,
        split=split,
        pool_split=pool_split,
        source=str(config.path) if config.path else None,
        plugins=used,
        # a key the caller replaced is not blamed on the task file's line for it
        lines={k: v for k, v in config.lines.items() if k not in prepared.given},
        shot_extractors=prepared.shot_extractors,
        chat=rules,
        output_type=config.output_type,
        until=config.until,
        origins={key: str(path) for key, path in config.origins.items()},
        allow_null_target=config.allow_null_target,
        limits=settings.limits,
        fast_path=compile_fast_path,
        **_choice_order(config, built_style, settings.choice_order, settings.option_keys, settings.answer_key),
    )
    task = Task(config, renderer, pool if pool and pool_split == split else None, prepared.source_data)
    task._prepared, task._settings, task._meta_built = prepared, settings, meta_built
    return task


def _choice_order(
    config: TaskConfig,
    style: Any,
    order: str | ChoiceOrder | None,
    option_keys: Sequence[str] | None,
    answer_key: str | None,
) -> dict[str, Any]:
    """The renderer's ``choice_order``, ``option_keys`` and ``answer_key``."""
    meta = (config.metadata.get("opencompass") or {}) if config.format == "opencompass" else {}
    dataset_type = str(meta.get("type") or "").rsplit(".", 1)[-1]
    if order is None and dataset_type.startswith("Circular"):
        # OpenCompass makes a Circular* dataset's records circular when it loads them
        patterns = meta.get("circular_patterns", "circular")
        if patterns not in ("circular", "all_possible"):
            raise config.error(
                "circular_patterns",
                f"circular_patterns must be 'circular' or 'all_possible', not {patterns!r}",
                hint="OpenCompass 0.5.4 knows these two (a list of patterns is not implemented there either)",
            )
        order = patterns
        if option_keys is None and isinstance(meta.get("option_keys"), list):
            option_keys = meta["option_keys"]
        if answer_key is None and isinstance(meta.get("answer_key"), str):
            answer_key = meta["answer_key"]
    if order is None:
        if option_keys is not None or answer_key is not None:
            raise OptionError(
                "option_keys and answer_key say where a choice order finds the choices, but no order is given",
                key="option_keys",
                hint="add --shuffle-choices SEED, --circular or --place-correct-choice-position K",
            )
        return {}
    parsed = order if isinstance(order, ChoiceOrder) else ChoiceOrder.parse(order)
    if parsed.kind == "original":
        return {}
    if option_keys is not None:
        keys: tuple[str, ...] | None = tuple(option_keys)
        if not keys:
            raise OptionError("option_keys is empty", key="option_keys")
    elif config.format == "opencompass":  # templates read the option columns: rewrite the record
        found = option_keys_for(
            (config.metadata.get("opencompass") or {}).get("type"),
            getattr(style, "input_columns", None),
            getattr(style, "output_column", None),
        )
        if found is None:
            raise OptionError(
                "cannot tell which of the dataset's columns hold the choices",
                key="option_keys",
                hint="name them with --option-keys (option_keys= in Python), e.g. --option-keys A,B,C,D",
            )
        keys, default_answer = found
        answer_key = answer_key or default_answer
    else:
        keys = None
    if keys is not None and answer_key is None and config.format != "opencompass":
        answer_key = _field_name(config.doc_to_target)
        if answer_key is None:
            raise OptionError(
                "option_keys names the record's choices, but which field holds the answer?",
                key="answer_key",
                hint="give --answer-key FIELD (answer_key= in Python)",
            )
    return {"choice_order": parsed, "option_keys": keys, "answer_key": answer_key}


def _field_name(spec: Any) -> str | None:
    """The record field a target spec reads as it is (``answer``, ``{{answer}}``), or ``None``."""
    import re

    source = getattr(spec, "source", spec)  # lm-evaluation-harness's field specs keep their text
    if not isinstance(source, str):
        return None
    match = re.fullmatch(r"\s*(?:\{\{\s*([A-Za-z_]\w*)\s*\}\}|([A-Za-z_]\w*))\s*", source)
    return (match.group(1) or match.group(2)) if match else None


_FAST_PATH: list[Any] = [None]  # fastpath.compile_fast_path once imported (an import per task costs)


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
    retriever: str | Mapping[str, Any] | None = None,
    fewshot_split: str | None = None,
    doc_id: Any = None,
) -> TaskConfig:
    changes: dict[str, Any] = {}
    if retriever is not None:
        if isinstance(retriever, str):
            spec = config.retriever_spec()
            # the task's options stay with the retriever they were written for
            retriever = {"name": retriever, **spec[1]} if spec is not None and spec[0] == retriever else retriever
        elif not isinstance(retriever, Mapping) or not isinstance(retriever.get("name"), str):
            raise OptionError(
                f"retriever must be a name or a mapping with a name, not {retriever!r}",
                key="retriever",
                hint="for example retriever='random' or {'name': 'fixed', 'ids': [0, 3]}",
            )
        changes["retriever"] = retriever
        config = dataclasses.replace(config, retriever=retriever)
    if fewshot_split is not None:
        changes["fewshot_split"] = fewshot_split
    if doc_id is not None:
        changes["doc_id"] = doc_id
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


def _compile_fields(
    config: TaskConfig, manager: PluginManager, specs: Mapping[str, Any], where: str = ""
) -> tuple[dict[str, Any], dict[str, Any]]:
    """An extractor per field spec given (``None``: none), and the plugin that made
    each; an error is located at the task key ``where + key``."""
    extractors: dict[str, Any] = {}
    used: dict[str, Any] = {}
    for key, spec in specs.items():
        if spec is None:
            continue
        try:
            extractor, info = manager.extractor(spec, key)
        except PromptStyleError as exc:
            raise exc.locate(**config.where(where + key)) from None
        extractors[key] = extractor
        used[key] = {"plugin": info.name, "distribution": info.distribution, "version": info.version}
    return extractors, used


def _resolve(manager: PluginManager, hook: str, name: str, where: dict[str, Any]) -> Provider:
    try:
        return manager.resolve(hook, name)
    except PromptStyleError as exc:
        raise exc.locate(**where) from None


def _texts_length(value: Any) -> int:
    """Characters of every string in ``value`` (a task's option, a mapping or list of them)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return total


def _check_repeated_texts(config: TaskConfig, meta_options: Mapping[str, Any] | None) -> None:
    """The task's own texts (delimiters, a style's prefixes and labels, a meta template's
    markers) are repeated with every few-shot example and choice of every prompt: bounded
    when the task loads, before a prompt repeats a megabyte a thousand times (no Jinja
    budget sees these joins). Each delimiter is at most ``max_output / 1000`` characters
    (and always may have 1,000); all of them together, times the examples of a prompt, at
    most ``max_output`` (and always may have 1,000,000)."""
    from .errors import LimitError
    from .safe.limits import jinja_limits

    limits = jinja_limits()
    fewshot = config.fewshot_overrides
    delimiters = {
        "target_delimiter": config.target_delimiter,
        "fewshot_delimiter": fewshot.get("fewshot_delimiter", config.fewshot_delimiter),
        "fewshot_config.target_delimiter": fewshot.get("target_delimiter"),
    }
    each = max(limits.max_output // 1000, 1000)
    for key, value in delimiters.items():
        if isinstance(value, str) and len(value) > each:
            raise LimitError(
                f"a delimiter of {len(value):,} characters, repeated with every example and choice of a prompt "
                f"(at most max_output / 1,000 = {each:,})",
                limit="max_output",
                value=limits.max_output,
                key=key,
                file=str(config.path) if config.path else None,
                line=config.lines.get(key.split(".")[0]),
            )
    _, options = config.style_spec()
    texts = _texts_length(list(delimiters.values())) + _texts_length(options) + _texts_length(dict(meta_options or {}))
    shots = config.num_fewshot if isinstance(config.num_fewshot, int) and config.num_fewshot > 0 else 0
    if texts * (shots + 1) > max(limits.max_output, 1_000_000):
        raise LimitError(
            f"the task's texts ({texts:,} characters: delimiters, the template's prefixes and labels, meta options) "
            f"repeated for each of {shots + 1:,} examples would build more than {limits.max_output:,} characters",
            limit="max_output",
            value=limits.max_output,
            key="num_fewshot",
            file=str(config.path) if config.path else None,
            line=config.lines.get("num_fewshot"),
        )


def _style(
    config: TaskConfig,
    manager: PluginManager,
    override: str | None,
    chat: bool,
    mode: str | None = None,
    extra_options: Mapping[str, Any] | None = None,
    *,
    generate_role: bool = False,
) -> tuple[Any, dict[str, Any]]:
    name, options = config.style_spec()
    if extra_options:
        options = {**options, **extra_options}
    where = config.where("template")
    provider = _resolve(manager, "format_prompt", override or name, where)
    fewshot = config.fewshot_overrides
    settings = StyleSettings(
        target_delimiter=config.target_delimiter,
        fewshot_delimiter=fewshot.get("fewshot_delimiter", config.fewshot_delimiter),
        task=config.task,
        output_type=config.output_type,
        continuation_delimiter=continuation_delimiter(config.target_delimiter, config.gen_prefix) if chat else None,
        fewshot_target_delimiter=fewshot.get("target_delimiter"),
        mode=mode,
        chat=chat and not generate_role,
    )
    built = _build(provider, where, config.lines, options=options, settings=settings)
    if override is not None and name == "passthrough" and override != name:
        _warn_second_answer_prompt(config, override, built)
    if mode is not None and mode not in getattr(built, "modes", ()):
        modes = getattr(built, "modes", ())
        raise PluginError(
            f"style {override or name!r} has no mode {mode!r}"
            + (f" (its modes: {', '.join(modes)})" if modes else " (it has no generation/perplexity modes)"),
            key="mode",
            hint="--mode applies to styles with modes, such as OpenCompass tasks",
        )
    return built, provider.describe()


def _warn_second_answer_prompt(config: TaskConfig, style: str, built: Any) -> None:
    """``--style`` on a task whose ``doc_to_text`` is its whole prompt (lm-evaluation-harness's
    ``Question: {{question}}\nAnswer:``): when that text already ends with an answer prompt
    and the style adds its own, the prompt would ask twice; say so, and which style keeps the
    task's layout."""
    suffix = getattr(built, "suffix", None)
    spec = config.doc_to_text
    source = getattr(spec, "source", spec)
    if not isinstance(suffix, str) or not suffix.strip() or not isinstance(source, str):
        return
    last = source.rstrip().rsplit("\n", 1)[-1].strip()
    if not last.endswith(":") or "{{" in last or "{%" in last or len(last) > 40:
        return
    where = f"{config.path}: " if config.path else ""
    warnings.warn(
        f"prompt-style: {where}doc_to_text already ends with an answer prompt ({last!r}) and style {style!r} "
        f"adds its own ({suffix.strip()!r}), so each prompt asks twice; --style passthrough (the task's own "
        "style, without --style) keeps the task's layout, or point doc_to_text at the question alone "
        "(e.g. '{{question}}') to use this style",
        UserWarning,
        stacklevel=4,
    )


def _chat_rules(
    config: TaskConfig, chat: bool, system_instruction: str | None, fewshot_as_multiturn: bool | None
) -> ChatRules | None:
    """The chat rules to apply between style and meta template, or ``None`` when
    they would change nothing."""
    if fewshot_as_multiturn and not chat:
        raise OptionError(
            "few-shot examples as multi-turn messages need a chat meta template",
            key="fewshot_as_multiturn",
            hint="add --meta chatml, --meta messages or another chat format (meta= in Python)",
        )
    multiturn = True if fewshot_as_multiturn is None else fewshot_as_multiturn
    if not system_instruction and (not chat or multiturn):
        return None
    return ChatRules(system_instruction or None, multiturn, chat, config.fewshot_delimiter)


def _meta(
    manager: PluginManager,
    name: str | Path | Mapping[str, Any],
    options: Mapping[str, Any] | None,
    trust_code: bool = False,
) -> tuple[Any, dict[str, Any]]:
    where: dict[str, Any] = {"key": "meta"}
    options = dict(options or {})
    if isinstance(name, (Mapping, list)) or is_meta_path(name):
        # A meta template file or mapping: its reader names the plugin that renders it.
        if not isinstance(name, Mapping):
            where["file"] = str(name)
        plugin, from_file = resolve_meta(name, trust_code=trust_code)
        name, options = plugin, {**from_file, **options}
    # The tokenizer options (tokenizer=PATH, ...) are the core's, for every meta template that gives text.
    own, token_options = split_token_options(options)
    provider = _resolve(manager, "apply_meta_template", name, where)
    built, used = _build(provider, where, {}, options=own), provider.describe()
    if token_options:
        built, used["tokenizer"] = with_tokenizer(manager, built, token_options, name=name)
    return built, used


def _named_splits(config: TaskConfig) -> set[str]:
    """The split names a task file itself names: its data's, and those of keys such
    as lm-evaluation-harness's ``validation_split`` that it keeps as written."""
    named = set(config.data)
    named.update(v for k, v in config.extras.items() if isinstance(v, str) and k.endswith("split"))
    return named


def _warn_unread(unread: set[str], split: str, pool_split: str) -> None:
    """Data given for a split the task never reads, and that its file does not name,
    is most often a misspelt split name: say so rather than drop the file without a
    word."""
    if not unread:
        return
    from ._suggest import did_you_mean

    reads = f"{split!r}" + (f" and few-shot examples from {pool_split!r}" if pool_split != split else "")
    for name in sorted(unread):
        hint = did_you_mean(name, {split, pool_split}) or ""
        warnings.warn(
            f"prompt-style: data given for split {name!r} is not read: the task renders {reads}"
            + (f"; {hint}" if hint else ""),
            UserWarning,
            stacklevel=4,
        )


def _pool(config: TaskConfig, overridden: set[str]) -> tuple[str, Sequence[Mapping[str, Any]]]:
    """The few-shot split and its records, loaded only when examples are asked for."""
    pool_split = pool_split_of(config)
    if not config.needs_examples():
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
        raise locate_data_error(exc, config, pool_split, pool_split not in overridden) from None


def _retriever_provider(config: TaskConfig, manager: PluginManager) -> tuple[Provider, dict[str, Any], dict[str, Any]]:
    """The retriever's provider, options and error location (``first_n`` when only
    ``num_fewshot`` is given, ``zero`` when neither is, and ``zero`` whenever
    ``num_fewshot`` is 0: an explicit zero (``--shots 0``) is zero-shot whatever
    retriever the task names, as :meth:`TaskConfig.needs_examples` says)."""
    if config.num_fewshot == 0:
        spec: tuple[str, dict[str, Any]] = ("zero", {})
    else:
        spec = config.retriever_spec() or (("first_n", {}) if config.num_fewshot else ("zero", {}))
    where = config.where("retriever" if config.retriever is not None else "num_fewshot")
    return _resolve(manager, "retrieve_examples", spec[0], where), spec[1], where


def render_records(
    records: Sequence[Mapping[str, Any]],
    *,
    fewshot: Sequence[Mapping[str, Any]] | None = None,
    plugins: PluginManager | None = None,
    meta: str | Path | Mapping[str, Any] | None = "plain",
    meta_options: Mapping[str, Any] | None = None,
    system_instruction: str | None = None,
    fewshot_as_multiturn: bool | None = None,
    mode: str | None = None,
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
    :param system_instruction: as for :func:`load_task`.
    :param fewshot_as_multiturn: as for :func:`load_task`.
    :param mode: ``gen`` or ``ppl`` for styles with modes (OpenCompass tasks).
    :param task: task keys, as in a task file (``doc_to_text``, ``template``, ...).
    :returns: one :class:`RenderedPrompt` per record.
    """
    data: dict[str, Any] = {"test": list(records)}
    if fewshot is not None:
        data["dev"] = list(fewshot)
        task.setdefault("fewshot_split", "dev")
    config = {"data": data, **task}
    loaded = load_task(
        config,
        plugins=plugins,
        meta=meta,
        meta_options=meta_options,
        mode=mode,
        system_instruction=system_instruction,
        fewshot_as_multiturn=fewshot_as_multiturn,
    )
    return list(loaded.render())
