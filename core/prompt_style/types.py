"""The data that flows between the hooks, and the protocols plugins implement.

task file --read_task--> TaskConfig (once per task)
record --extract_field--> Sample --format_prompt--> FormattedPrompt(Dialogue)
       --apply_meta_template--> ModelInput
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .task import TaskConfig

__all__ = [
    "TaskSource",
    "ReadOptions",
    "TaskReader",
    "Sample",
    "Turn",
    "Dialogue",
    "FormattedPrompt",
    "ModelInput",
    "StyleSettings",
    "FieldExtractor",
    "Style",
    "MetaTemplate",
    "Retriever",
    "StyleFactory",
    "MetaTemplateFactory",
    "RetrieverFactory",
    "Formatter",
    "Tokenizer",
    "TokenizerLoader",
    "ParsedAnswer",
    "AnswerParser",
    "AnswerParserFactory",
    "AxesFactory",
    "ExportRequest",
    "ExportResult",
    "Exporter",
]


@dataclass(frozen=True)
class TaskSource:
    """A task as handed to the task-file readers (the ``read_task`` hook)."""

    path: Path | None
    """The task file; ``None`` for a mapping given from Python."""
    data: Mapping[str, Any] | None
    """The parsed mapping (YAML or JSON files, Python mappings); ``None`` for a
    file type the core does not parse (a reader that lists its suffix parses it)."""
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Line of each key by dotted path (``template.suffix``, ``templates.0.jinja``)."""
    base: Path = Path(".")
    """The directory relative paths in the task resolve against."""
    duplicates: tuple[tuple[str, int, int], ...] = ()
    """Keys written twice in one mapping: ``(key path, line, first line)``. The
    last one is in ``data`` (as PyYAML keeps it); it is an error unless the
    chosen reader sets ``duplicate_keys = True``."""

    @property
    def name(self) -> str:
        """The file name, for messages (``<mapping>`` for a Python mapping)."""
        return str(self.path) if self.path is not None else "<mapping>"


@dataclass(frozen=True)
class ReadOptions:
    """Choices the user makes when loading a task, passed to every reader."""

    trust_code: bool = False
    """Allow the task to run code: lm-evaluation-harness ``!function`` tags,
    OpenCompass ``.py`` configs. Off by default; a reader that needs code and
    is not allowed to run it raises an error saying how to allow it."""
    template: str | int | None = None
    """Which of a task file's several templates to render (task-template files:
    by number, name or promptsource id); ``None``: the file's default."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Format-specific options, by name (task-template files: ``data_root``, ``seed``)."""
    data: Mapping[str, Any] = field(default_factory=dict)
    """The splits the user gives directly (``--data SPLIT=PATH``, ``data=``); they
    replace the task's own data for those splits after reading, so a reader need
    not find data for them (and may render the one split given)."""
    plugins: Any = field(default=None, compare=False, repr=False)
    """The plugin manager the task is loaded with, for readers that look plugins
    up (task-template files: formatters)."""


@runtime_checkable
class TaskReader(Protocol):
    """Reads one task-file format into a :class:`~prompt_style.TaskConfig`."""

    suffixes: tuple[str, ...]
    """File suffixes it reads, e.g. ``(".yaml", ".yml", ".json")``."""

    def detect(self, source: TaskSource) -> bool:
        """Whether ``source`` is in this format (cheap: look at keys, not values)."""
        ...

    def read(self, source: TaskSource, options: ReadOptions) -> TaskConfig:
        """Translate ``source``; raise :class:`~prompt_style.TaskFileError`
        naming the file, line and key for what is wrong (all problems at once
        where possible)."""
        ...


@dataclass(eq=False, slots=True)
class Sample:
    """The fields extracted from one record.

    Compared and hashed by identity, so that styles may cache what they build
    from a few-shot example.
    """

    index: int
    """Position of the record in its split."""
    record: Mapping[str, Any]
    """The raw record, for styles that need more than the standard fields."""
    question: Any
    """What ``doc_to_text`` extracted."""
    choices: list[Any] | None = None
    """What ``doc_to_choice`` extracted, as a list; ``None`` for generation."""
    target: Any = None
    """What ``doc_to_target`` extracted: an index, a label, a choice or a text."""
    description: str = ""
    """The task description rendered for this record (empty for few-shot examples)."""
    gold: Any = None
    """The gold answer as an index into ``choices`` (a list of indices for several
    gold answers), resolved once by the renderer from ``target`` and ``choices``
    with lm-evaluation-harness's rules (:func:`~prompt_style.resolve_gold`), before
    any style runs; ``None`` without choices or without a target. Styles display
    it, they never re-interpret ``target``."""
    gen_prefix: str | None = None
    """Text the answer starts with (``gen_prefix``): after the question as an
    assistant prefill, and before a few-shot example's answer."""


class Turn(NamedTuple):
    """One role-tagged item of a dialogue (the ``PromptList`` item of OpenCompass).

    Immutable, so that the turns of a few-shot example are built once and shared
    by every prompt that shows the example (a named tuple: cheap to create).
    """

    role: str
    """``system``, ``user`` or ``assistant`` (OpenCompass names ``SYSTEM``,
    ``HUMAN``, ``BOT`` are understood too)."""
    content: str | tuple[Mapping[str, Any], ...]
    """Text, or multimodal parts such as ``{"type": "image_url", ...}``."""
    sep: str = ""
    """Text placed before this turn when the dialogue is flattened to a plain
    string (for example the few-shot or target delimiter); chat formats ignore it."""
    fallback_role: str | None = None
    """Role to use when a meta template does not know ``role``."""
    section: str = "round"
    """Where the turn comes from: ``begin``, ``ice`` (in-context example), ``round`` or ``end``;
    ``messages`` for an API message of OpenCompass's ``RawPromptTemplate``."""
    extra: Mapping[str, Any] | None = None
    """More keys of an API message (``name``, ...) that API meta templates send with it;
    ``None`` for most turns."""


Dialogue = tuple[Turn, ...]
"""A dialogue is an immutable sequence of turns."""


@dataclass(slots=True)
class FormattedPrompt:
    """What a style makes of one record (treat as read-only)."""

    dialogue: Dialogue
    continuations: tuple[str, ...] = ()
    """Candidate continuations scored after the prompt (multiple choice); empty for generation."""
    target: Any = None
    """Gold answer: an index into ``continuations`` for multiple choice, else the reference."""
    extra: dict[str, Any] | None = None
    """More per-record fields the style reports, added to the JSON view of the
    rendered prompt (the ``task_template`` style gives ``answer_choices``)."""
    infer_mode: str | None = None
    """For a multi-turn dialogue: how it is cut into one request per model reply
    (``every``, ``every_with_gt``, ``last``; see :meth:`TaskRenderer.converse`).
    ``None``: the dialogue is one request."""
    candidates: tuple[tuple[Any, Dialogue], ...] | None = None
    """Perplexity mode: ``(label, dialogue)`` per candidate, each scored whole
    (OpenCompass's ``PPLInferencer``); ``None`` otherwise."""
    mode: str | None = None
    """``gen`` or ``ppl`` for styles with modes (OpenCompass); ``None`` otherwise."""
    contexts: tuple[Dialogue, ...] | None = None
    """Multiple-input multiple choice (lm-evaluation-harness's winogrande): one
    dialogue per request, in choice order, each scored with the continuation at
    the same position (``dialogue`` is the first); ``None`` otherwise."""


@dataclass(slots=True)
class ModelInput:
    """What a meta template makes of a dialogue; fields a format does not give are ``None``
    (treat as read-only)."""

    text: str | None = None
    messages: list[dict[str, Any]] | None = None
    token_ids: list[int] | None = None
    context_token_ids: list[int] | None = None
    """Multiple choice: the context as scored before each continuation (token level)."""
    continuation_token_ids: list[list[int]] | None = None
    """Multiple choice: each continuation's tokens, split from the whole at token level."""
    token_report: list[dict[str, Any]] | None = None
    """What tokenization noticed for this record (special-token text in contents,
    a BOS not added twice, a context/continuation boundary that differs from
    tokenizing the whole string); ``None`` when no tokenizer is used."""
    assistant_spans: list[tuple[int, int]] | None = None
    """``(start, end)`` character offsets in ``text`` of what the model is trained
    to produce: the ``{% generation %}`` blocks of a Hugging Face chat template
    (transformers' ``return_assistant_tokens_mask``); ``None`` when the format has none."""


@dataclass(frozen=True, slots=True)
class StyleSettings:
    """Task-level settings every style receives at construction."""

    target_delimiter: str = " "
    fewshot_delimiter: str = "\n\n"
    task: str = ""
    """The task's name, for messages."""
    output_type: str | None = None
    """``multiple_choice``, ``generate_until``, ``loglikelihood`` or
    ``loglikelihood_rolling``; ``None``: multiple choice when a record has
    choices, generation otherwise."""
    continuation_delimiter: str | None = None
    """Text before each multiple-choice continuation; ``None``: ``target_delimiter``.
    Chat meta templates make it empty (lm-evaluation-harness's chat rule)."""
    fewshot_target_delimiter: str | None = None
    """Text between a few-shot example's question and its answer; ``None``:
    ``target_delimiter``."""
    mode: str | None = None
    """``gen`` or ``ppl`` when the user chose one (``--mode``, ``load_task(mode=)``);
    styles with modes (a ``modes`` attribute) honour it, others are never given one."""
    chat: bool = False
    """The meta template is a chat format (its ``chat`` attribute) that sends the dialogue's
    turns as they are, a last assistant turn being a prefill the model continues; not an
    OpenCompass meta template, which places the answer by its own ``generate`` role (its
    ``generate_role`` attribute)."""


FieldExtractor = Callable[[Mapping[str, Any]], Any]


@runtime_checkable
class Style(Protocol):
    """Formats a record and its few-shot examples."""

    def format(self, sample: Sample, shots: Sequence[Sample]) -> FormattedPrompt: ...


@runtime_checkable
class MetaTemplate(Protocol):
    """Turns a dialogue into model input.

    A meta template object may also have a ``chat`` attribute: ``True`` when it
    formats for a chat model (``messages``, ``chatml``, Hugging Face chat
    templates), so that task formats can apply their chat rules (for example
    lm-evaluation-harness's empty target delimiter under
    ``--apply_chat_template``). A missing attribute means ``False``.
    """

    def apply(self, dialogue: Dialogue) -> ModelInput: ...

    # Optional: ``apply_full(dialogue) -> ModelInput`` renders the whole dialogue
    # with no generation cut, for perplexity candidates (OpenCompass's ppl mode);
    # without it, ``apply`` serves.


@runtime_checkable
class Retriever(Protocol):
    """Chooses few-shot examples (pool indices) for a record."""

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]: ...


StyleFactory = Callable[..., Style]
MetaTemplateFactory = Callable[..., MetaTemplate]
RetrieverFactory = Callable[..., Retriever]
Formatter = Callable[..., Iterable[Mapping[str, Any]]]
"""``formatter(records, **args) -> instances``: see the ``format_instances`` hook."""


@runtime_checkable
class Tokenizer(Protocol):
    """A loaded tokenizer (what a ``load_tokenizer`` loader returns).

    It encodes text exactly as the model's own tokenizer does in transformers,
    matching added and special tokens written in the text as whole tokens.
    """

    name: str
    """Where it was loaded from, for messages."""
    bos_token: str | None
    bos_token_id: int | None
    eos_token: str | None
    eos_token_id: int | None
    added_tokens: Mapping[str, int]
    """Text matched as one token wherever it appears (added and special tokens): text -> id."""
    special_tokens: frozenset[str]
    """The added tokens that are special (BOS, EOS, control tokens...)."""

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        """Token ids of ``text``; with ``add_special_tokens`` the tokenizer's own
        additions (usually a BOS) are added, as ``tokenizer(text)`` does in transformers."""
        ...

    # Optional: ``token_offsets(text, *, add_special_tokens=False) -> list[tuple[int, int]]``,
    # the character span in ``text`` of each token ``encode`` gives (empty for a token the
    # tokenizer adds): ``prompt-style view`` draws token boundaries with it.


@runtime_checkable
class TokenizerLoader(Protocol):
    """Loads one kind of local tokenizer file (a ``load_tokenizer`` catalog entry)."""

    def detect(self, path: Path) -> bool:
        """Whether ``path`` (a file or a folder) is in this loader's format (cheap: look at names)."""
        ...

    def load(self, path: Path, options: Mapping[str, Any]) -> Tokenizer:
        """Load the tokenizer at ``path``; raise :class:`~prompt_style.TokenizerError` naming the file."""
        ...


@dataclass(frozen=True)
class ParsedAnswer:
    """The choice(s) a completion names, as an answer parser read it."""

    indices: tuple[int, ...]
    """Positions in the record's choices as shown (after any permutation), in
    ascending order; one for a single answer."""
    rule: str = ""
    """Which rule found it (``answer line``, ``wrapped label``, ``choice text``, ...),
    for reports."""


@runtime_checkable
class AnswerParser(Protocol):
    """Reads a generated completion as a choice (what a ``parse_answer`` factory returns)."""

    def parse(
        self, completion: str, *, labels: Sequence[str], choices: Sequence[str], multiple: bool = False
    ) -> ParsedAnswer | None:
        """The choice(s) ``completion`` names, or ``None`` when it names none unambiguously.

        :param labels: the labels the prompt showed, one per choice (``A``, ``B``; ``1``,
            ``2``; ``i``, ``ii``).
        :param choices: the choice texts, in the order shown.
        :param multiple: whether several answers may be correct (the record's gold is a list).
        """
        ...


AnswerParserFactory = Callable[..., AnswerParser]
"""``factory(style=...) -> AnswerParser``: see the ``parse_answer`` hook."""
AxesFactory = Callable[..., Any]
"""``factory(options=...) -> StyleAxes``: see the ``declare_axes`` hook."""


@dataclass(frozen=True)
class ExportRequest:
    """What an exporter (the ``export_task`` hook) is asked to write."""

    task: Any
    """The loaded :class:`~prompt_style.Task`, resolved with ``load_options``:
    render it to check the export, read its ``config`` for the harness's names."""
    source: Path | None
    """The task file, absolute; ``None`` for a task given as a mapping."""
    load_options: Mapping[str, Any]
    """The keyword arguments of :func:`~prompt_style.load_task` (besides the task
    itself) that built ``task``, as the user gave them, with paths absolute (``data``,
    a meta template file, ``read_options`` such as ``data_root``, and meta options or
    model args naming an existing file or folder):
    an exporter whose files load the task again at the harness's run time passes
    them on, so that the harness renders exactly what ``prompt-style render``
    renders with the same options."""
    out: Path
    """Where to write: a directory or a file, as the exporter documents."""
    name: str | None = None
    """The task's name in the harness (``--name``); ``None``: the exporter's default
    (usually the task's own name)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The exporter's own options (``--export-option KEY=VALUE``), to be checked
    by the exporter (``prompt_style.check_options``)."""


@dataclass(frozen=True)
class ExportResult:
    """What an exporter wrote."""

    files: tuple[Path, ...]
    """Every file written, in a stable order."""
    usage: str = ""
    """The command that runs the export in its harness, shown to the user."""


@runtime_checkable
class Exporter(Protocol):
    """Writes a task for another harness (an ``export_task`` catalog entry)."""

    description: str
    """One line for ``prompt-style export --help``."""

    def export(self, request: ExportRequest) -> ExportResult:
        """Write the files; raise a :class:`~prompt_style.PromptStyleError` for
        what cannot be expressed in the harness (naming the key and what to do)."""
        ...
