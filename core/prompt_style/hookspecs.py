"""The hooks of prompt-style, in pipeline order.

A task is resolved once: its file is read into a :class:`~prompt_style.TaskConfig`
by a reader from the :func:`read_task` catalog, every field spec is compiled by
:func:`extract_field`, and the style, meta template and retriever are looked up
by name in the catalogs that :func:`format_prompt`, :func:`apply_meta_template`
and :func:`retrieve_examples` return. Rendering a record afterwards calls the
compiled objects directly, with no hook call per record.

Catalog hooks return ``{name: factory}``. The core collects them plugin by
plugin, so that every name can be attributed to the plugin that provides it and
a name claimed twice is reported with both claimants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._markers import hookspec

if TYPE_CHECKING:
    from .types import (
        AnswerParserFactory,
        AxesFactory,
        Exporter,
        FieldExtractor,
        Formatter,
        MetaTemplateFactory,
        RetrieverFactory,
        StyleFactory,
        TaskReader,
        TokenizerLoader,
    )

ExampleTask = Any
"""A task file shipped with a plugin: a ``str`` path or an :class:`os.PathLike`."""


@hookspec
def read_task() -> Mapping[str, TaskReader]:
    """Provide task-file readers: named translators from a task-file format into a TaskConfig.

    A reader turns a task written for another system (an lm-evaluation-harness
    YAML file, an OpenCompass dataset config, a task-template file) into the
    one task model every later step works on; there is no second pipeline
    beside it. When a task is loaded, the core parses YAML and JSON files with
    its safe loader and asks every reader whose ``suffixes`` match to
    ``detect(source)``; exactly one must claim the file (prompt-style's own
    format, ``native``, reads what no other reader claims), or the user names
    the format (``task_format=``, ``--task-format``).

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a name claimed twice is an error naming both.

    :returns: A mapping from format name to a reader object with ``suffixes``
        (a tuple such as ``(".yaml", ".yml", ".json")``),
        ``detect(source) -> bool`` and ``read(source, options) -> TaskConfig``,
        where ``source`` is a :class:`~prompt_style.TaskSource` and ``options``
        a :class:`~prompt_style.ReadOptions`.
    """


@hookspec(firstresult=True)
def extract_field(spec: Any, key: str) -> FieldExtractor | None:
    """Compile a field spec into an extractor that pulls one value out of a record.

    Called once per field spec per task, never per record. The built-in
    implementation (``trylast``) understands a plain field name, a single
    ``{{ expression }}`` (its value keeps its type), any other Jinja template
    (renders to a string), a ``{field}`` string template, a callable (called
    with the record) and any other value (a constant). Implement this hook to
    teach prompt-style a new kind of spec; return ``None`` for specs you do not
    handle.

    :param spec: The spec as written in the task file or passed from Python,
        for example ``"question"``, ``"{{choices.text}}"`` or a function.
    :param key: The task key the spec belongs to, for example ``"doc_to_text"``
        or ``"description"``; used in error messages, and ``"description"`` is
        literal text unless it holds Jinja.
    :returns: A picklable callable ``extractor(record) -> value``, or ``None``.
        Stops at the first non-``None`` result (firstresult).
    """


@hookspec
def format_prompt() -> Mapping[str, StyleFactory]:
    """Provide prompt styles: named formatters that turn extracted fields into a dialogue.

    A style receives the extracted question, choices, target and description of
    a record and of its few-shot examples, and returns a
    :class:`~prompt_style.FormattedPrompt`: role-tagged turns plus, for
    multiple choice, the candidate continuations and the gold target. Names use
    ``family::variant`` where there is a family, for example ``mcq::mmlu``.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a name claimed twice is an error naming both.

    :returns: A mapping from style name to a factory called once per task as
        ``factory(options=..., settings=...)``, where ``options`` are the
        task's ``template`` overrides and ``settings`` a
        :class:`~prompt_style.StyleSettings`; the factory returns an object
        with ``format(sample, shots) -> FormattedPrompt``.
    """


@hookspec
def apply_meta_template() -> Mapping[str, MetaTemplateFactory]:
    """Provide meta templates: named adapters from a dialogue to what a model takes.

    A meta template turns a :class:`~prompt_style.Dialogue` into a
    :class:`~prompt_style.ModelInput`: a plain string, a chat string such as
    ChatML, an API message list, or several of these.

    Called once per plugin manager; not firstresult: catalogs are merged and a
    name claimed twice is an error naming both.

    :returns: A mapping from meta template name to a factory called once per
        task as ``factory(options=...)``; the factory returns an object with
        ``apply(dialogue) -> ModelInput``.
    """


@hookspec
def retrieve_examples() -> Mapping[str, RetrieverFactory]:
    """Provide retrievers: named strategies that choose few-shot examples from a pool.

    Called once per plugin manager; not firstresult: catalogs are merged and a
    name claimed twice is an error naming both.

    :returns: A mapping from retriever name to a factory called once per task
        as ``factory(options=..., pool=..., k=..., same_split=..., seed=...)``;
        ``pool`` is the sequence of few-shot records, ``k`` the requested
        number of examples (``None`` when the task does not say), and
        ``same_split`` tells that the pool is the evaluated split, so a record
        must never be its own example. The factory returns an object with
        ``select(index, record) -> Sequence[int]`` giving pool indices; any
        randomness must be seeded from ``seed`` and the record index only.
    """


@hookspec
def format_instances() -> Mapping[str, Formatter]:
    """Provide formatters: named functions that turn a dataset's records into template-ready instances.

    A task-template file names one with ``formatter: {name: NAME, args: {...}}``
    when its Jinja templates cannot read the dataset's records directly (the
    role of SciRIFF's ``tasks/formatters/NAME.py``). The formatter runs over a
    split of the task's own data (``data_dir`` or ``dataset``) before any
    template renders, for ``prompt-style render`` and ``prompt-style
    instantiate`` alike; records given with ``--data`` are used as they are.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a name claimed twice is an error naming both.

    :returns: A mapping from formatter name to a callable
        ``formatter(records, **args) -> Iterable[Mapping]``: ``records`` is an
        iterable of mappings, each carrying ``_id`` (its position in its
        split), and ``args`` are the task's ``formatter.args``. Return a
        generator to keep instantiation in constant memory, and keep each
        instance's ``_id`` (one record may give several instances).
    """


@hookspec
def load_tokenizer() -> Mapping[str, TokenizerLoader]:
    """Provide tokenizer loaders: named readers of local tokenizer files, for token-level prompts.

    When a meta template is given the option ``tokenizer=PATH`` (a file or a
    local folder), the core asks every loader to ``detect(path)``; exactly one
    must claim it, or the user names the loader with ``tokenizer_format=NAME``.
    The loaded tokenizer turns the text of any meta template into
    ``token_ids`` (and, for multiple choice, the context and continuation
    tokens), so a tokenizer format is written once and works with every meta
    template that gives text.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a name claimed twice is an error naming both.

    :returns: A mapping from loader name (for example ``tokenizers`` or
        ``sentencepiece``) to a loader object with ``detect(path) -> bool`` and
        ``load(path, options) -> Tokenizer``, where ``path`` is a
        :class:`pathlib.Path`, ``options`` the ``tokenizer_*`` meta options
        with the prefix removed, and the result implements
        :class:`~prompt_style.Tokenizer`.
    """


@hookspec
def declare_axes() -> Mapping[str, AxesFactory]:
    """Provide format axes: for a style name, the ways its format can vary.

    A style's axes (the labels of the choices, the separator after a label, the
    spacing between blocks, the casing of its descriptors, the answer prefix,
    the order of the choices, ...), the values each takes and the constraints
    between them; ``prompt-style grid`` renders a task in every combination (or
    a seeded sample), FormatSpread style, and ``prompt-style spread`` measures
    how much a score depends on them. Declare the axes of your own styles here,
    beside their ``format_prompt`` entries, and they join every grid.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a style name claimed twice is an error naming both.

    :returns: A mapping from style name (as ``format_prompt`` names it) to a
        factory called once per grid as ``factory(options=...)``, where
        ``options`` are the task's ``template`` options for that style; the
        factory returns a :class:`~prompt_style.StyleAxes` (its ``axes``, its
        ``constraints``, and ``options(settings)`` giving a cell's style options).
    """


@hookspec
def parse_answer() -> Mapping[str, AnswerParserFactory]:
    """Provide answer parsers: for a style name, how a model's generated answer is read.

    Generative multiple choice (a style's ``generation: answer`` or ``cot``
    variant) asks the model to write its answer; the parser of the style that
    built the prompt finds which choice (or choices) the completion names: an
    ``ANSWER: X`` line, ``(B)``, ``**B**``, ``$B$``, ``B.``, the choice's own text,
    in the labels the style showed (letters, numbers, Roman numerals).
    ``prompt-style score`` uses it. Implement it next to the style.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a style name claimed twice is an error naming both.

    :returns: A mapping from style name to a factory called once per task as
        ``factory(style=...)`` with the built style object; the factory returns
        an object with ``parse(completion, *, labels, choices, multiple) ->
        ParsedAnswer | None`` (see :class:`~prompt_style.AnswerParser`).
    """


@hookspec
def export_task() -> Mapping[str, Exporter]:
    """Provide exporters: named writers that turn a task into files another harness runs.

    ``prompt-style export NAME TASK --out PATH`` loads the task with the same
    options ``prompt-style render`` takes, then hands it to the exporter
    ``NAME`` (for example ``lm-eval``, ``lighteval``, ``opencompass``), which
    writes what that harness needs to evaluate the task with the bytes
    ``prompt-style render`` gives: a task directory, a Python module, a
    dataset config. An exporter usually lives in the harness's bridge
    distribution (``prompt-style-lm-eval``, ...), so installing the bridge is
    what makes ``export`` know the harness.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a name claimed twice is an error naming both.

    :returns: A mapping from harness name to an exporter object with a
        ``description`` (one line, listed by ``prompt-style export --help``)
        and ``export(request) -> ExportResult``, where ``request`` is an
        :class:`~prompt_style.ExportRequest` (the loaded task, the options it
        was loaded with, where to write) and the
        :class:`~prompt_style.ExportResult` lists the files written and the
        command that runs them.
    """


@hookspec
def task_examples() -> Mapping[str, ExampleTask]:
    """Provide example tasks: task files a plugin ships with their data, by name.

    ``prompt-style render --example NAME`` (and ``view``) renders one without the
    user writing or downloading anything: the first thing a new user runs after
    ``pip install``. A plugin ships the task file and its data files as package
    data (the data paths in the task file are relative to it, as in any task file)
    and names the task file here; a style plugin's example shows that style.

    Called once per plugin manager; not firstresult: the catalogs of all
    plugins are merged and a name claimed twice is an error naming both.

    :returns: A mapping from example name (for example ``mmlu``) to the task
        file: a path (``str`` or :class:`os.PathLike`), typically
        ``importlib.resources.files(__name__) / "example" / "task.yaml"``.
    """
