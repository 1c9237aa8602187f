"""Rendering records of a resolved task with plain Python.

A :class:`TaskRenderer` (built by :func:`~prompt_style.load_task`) holds only
picklable objects (extractors keep their Jinja source and compile lazily in each
process), so harnesses can ship it to worker processes. Few-shot examples are
extracted and formatted once per example.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import conversation
from .errors import FieldError, PromptStyleError, RenderError, TargetError, cut
from .fields.choices import choice_list
from .fields.multiple_input import ContextChoice, context_gold
from .fields.targets import explain_label, gold_resolver, plain_integers
from .lines import dialogue_to_json
from .safe.limits import _SCOPE
from .types import Dialogue, FormattedPrompt, Sample

__all__ = ["RenderedPrompt", "Candidate", "TaskRenderer", "dialogue_to_json"]


@dataclass(slots=True)
class Candidate:
    """One perplexity candidate of a record: a label and the whole prompt scored for it."""

    label: Any
    text: str | None
    messages: list[dict[str, Any]] | None
    dialogue: Dialogue = ()
    token_ids: list[int] | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "label": self.label,
            "text": self.text,
            "messages": self.messages,
            "dialogue": dialogue_to_json(self.dialogue),
        }
        if self.token_ids is not None:
            out["token_ids"] = self.token_ids
        return out


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
    """Candidate continuations (multiple choice), each scored after ``text``; for
    OpenCompass's ``LLInferencer``, the record's ``cont``, scored inside every
    candidate's text."""
    target: Any
    """Gold answer: index into ``continuations``, or the reference text."""
    plugins: Mapping[str, Any]
    """The plugins used, per hook, with distributions and versions (shared by all records)."""
    dialogue: Dialogue = ()
    """The intermediate dialogue, before the meta template."""
    token_ids: list[int] | None = None
    """The prompt as token ids, when the meta template gives them."""
    extra: dict[str, Any] | None = None
    """More fields the style reports (``answer_choices`` for task-template files)."""
    until: tuple[str, ...] | None = None
    """Stop sequences of a generation task (lm-evaluation-harness ``until``)."""
    context_token_ids: list[int] | None = None
    """Multiple choice with a tokenizer: the context's tokens as scored before each
    continuation (lm-evaluation-harness's split; trailing whitespace moves to the continuation)."""
    continuation_token_ids: list[list[int]] | None = None
    """Multiple choice with a tokenizer: each continuation's tokens, split from
    context + continuation encoded whole."""
    token_report: list[dict[str, Any]] | None = None
    """With a tokenizer: what tokenization noticed in this record (empty when nothing)."""
    assistant_spans: list[tuple[int, int]] | None = None
    """Character spans of ``text`` inside the chat template's ``{% generation %}``
    blocks, when it has any (see :class:`~prompt_style.ModelInput`)."""

    candidates: list[Candidate] | None = None
    """Perplexity mode: one :class:`Candidate` per label (``text`` and ``messages``
    are then ``None``)."""
    mode: str | None = None
    """``gen`` or ``ppl`` for styles with modes (OpenCompass tasks); ``None`` otherwise."""
    turn: int | None = None
    """For a multi-turn dialogue: which request of the record this is (0, 1, ...);
    ``None`` when the record is one request."""
    contexts: tuple[Any, ...] | None = None
    """Multiple-input multiple choice (lm-evaluation-harness's winogrande, xwinograd,
    wsc273): every request's context, one per choice in choice order, each scored
    with the continuation at the same position of ``continuations``; ``text`` (and
    ``messages``) are the first request's. Each is the meta template's text, or its
    messages when it gives no text. ``None`` for every other task."""
    permutation: tuple[int, ...] | None = None
    """With a choice order (``--shuffle-choices``, ``--circular``, ...): the record's
    original choice index shown at each position (``permutation[target]`` is the
    original gold index); ``None`` when the choices are in the record's order."""
    rotation: int | None = None
    """Circular evaluation: which rotation of the record's choices this is (0 is the
    record's own order); ``None`` otherwise."""
    circular_pattern: list[str] | None = None
    """Circular evaluation: OpenCompass's ``circular_pattern``, the option key each
    original option is shown under (``["B", "C", "D", "A"]`` for rotation 1)."""
    doc_id: Any = None
    """The record's own id (the task's ``doc_id`` field spec, ``--doc-id``); ``None``
    when the task names none (then the record is known by its ``index``)."""
    fewshot_indices: tuple[int, ...] | None = None
    """Positions, in the few-shot split, of the examples this prompt shows, in the
    order shown (``()`` for zero-shot)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready view: ``index``, ``text``, ``messages``, ``continuations``,
        ``target``, ``token_ids`` when the meta template gives them, ``until`` for
        a generation task with stop sequences, and the style's ``extra`` fields;
        for styles with modes also ``mode``, and ``dialogue`` (generation) or
        ``candidates`` (perplexity); ``turn`` for the requests of a multi-turn
        dialogue; ``context_token_ids``, ``continuation_token_ids`` and
        ``token_report`` when a tokenizer gives them; ``assistant_spans`` when the
        chat template marks them; ``contexts`` for a multiple-input task;
        ``permutation`` under a choice order, with ``rotation`` and
        ``circular_pattern`` in circular evaluation."""
        out = {
            "index": self.index,
            "text": self.text,
            "messages": self.messages,
            "continuations": list(self.continuations),
            "target": self.target,
        }
        if self.token_ids is not None:
            out["token_ids"] = self.token_ids
        if self.until is not None:
            out["until"] = list(self.until)
        if self.turn is not None:
            out["turn"] = self.turn
        if self.mode is not None:
            out["mode"] = self.mode
            if self.candidates is None:
                out["dialogue"] = dialogue_to_json(self.dialogue)
        if self.candidates is not None:
            out["candidates"] = [c.to_json() for c in self.candidates]
        if self.extra:
            out.update(self.extra)
        if self.context_token_ids is not None:
            out["context_token_ids"] = self.context_token_ids
        if self.continuation_token_ids is not None:
            out["continuation_token_ids"] = self.continuation_token_ids
        if self.token_report is not None:
            out["token_report"] = self.token_report
        if self.assistant_spans is not None:
            out["assistant_spans"] = [list(span) for span in self.assistant_spans]
        if self.contexts is not None:
            out["contexts"] = list(self.contexts)
        if self.permutation is not None:
            out["permutation"] = list(self.permutation)
        if self.rotation is not None:
            out["rotation"] = self.rotation
            out["circular_pattern"] = self.circular_pattern
        return out

    def _json_common(self) -> tuple[Any, Any, Any, Any, Any, Any] | None:
        """``(text, messages, continuations, target, until, None)`` when :meth:`to_json`
        gives those keys only (and ``index``; ``until`` when not ``None``), else
        ``None``: the shape :class:`~prompt_style.lines.PromptEncoder` writes directly
        (the last item is for the fast path's prompts, see :mod:`prompt_style.lines`)."""
        if self.mode is None and not self.extra and self._plain_json():
            return self.text, self.messages, self.continuations, self.target, self.until, None
        return None

    def _json_ordered(self) -> tuple[Any, ...] | None:
        """``(common, permutation, rotation, circular_pattern)`` for a prompt under a choice
        order whose :meth:`to_json` is the common shape (``common``: what
        :meth:`_json_common` would give) and then ``permutation`` (with ``rotation`` and
        ``circular_pattern`` in circular evaluation); else ``None``."""
        if self.permutation is None or self.mode is not None or self.extra or not self._plain_but_order():
            return None
        common = (self.text, self.messages, self.continuations, self.target, self.until, None)
        return common, self.permutation, self.rotation, self.circular_pattern

    def _plain_json(self) -> bool:
        """Whether :meth:`to_json` gives nothing beyond the common keys, ``mode`` with its
        ``dialogue``, and the style's ``extra`` fields."""
        return self.permutation is None and self.rotation is None and self._plain_but_order()

    def _plain_but_order(self) -> bool:
        """:meth:`_plain_json`, a choice order's keys aside."""
        return (
            self.token_ids is None
            and self.turn is None
            and self.candidates is None
            and self.context_token_ids is None
            and self.continuation_token_ids is None
            and self.token_report is None
            and self.assistant_spans is None
            and self.contexts is None
        )

    def _json_more(self) -> tuple[Any, ...] | None:
        """``(text, messages, continuations, target, until, mode, dialogue, extra)`` when
        :meth:`to_json` gives the common keys, then only ``mode`` with its ``dialogue``
        (the turns, which :func:`dialogue_to_json` makes JSON) and the style's ``extra``
        fields (task-template files' ``answer_choices``, OpenCompass's generation mode),
        else ``None``: the next shape :class:`~prompt_style.lines.PromptEncoder` writes itself."""
        if not self._plain_json():
            return None
        # the dialogue as it is (Turn objects): the encoder writes the JSON of
        # dialogue_to_json(dialogue), the turns every prompt shares made once
        dialogue = self.dialogue if self.mode is not None else None
        common = (self.text, self.messages, self.continuations, self.target, self.until)
        return (*common, self.mode, dialogue, self.extra)


_UNTRIED: Any = object()  # the fast path is compiled on the first record


def _plain_order_fields(renderer: TaskRenderer) -> tuple[str, str] | None:
    """``(choices field, target field)`` when a new order of a record's choices can be
    rendered from a copy of the record with that field reordered and the gold index
    remapped: ``doc_to_choice`` and ``doc_to_target`` are plain field names, and
    nothing else of the task reads them (the question reads one other field, the
    description is fixed, no ``gen_prefix`` or few-shot field specs of its own).
    Worked out once per renderer (:meth:`TaskRenderer._reordered_copies`)."""
    from .fields.extractors import Expression, RecordField

    def field(extractor: Any) -> str | None:
        if type(extractor) is RecordField and type(extractor.spec) is str:
            return extractor.spec
        return None

    choice_key, target_key = field(renderer._choice), field(renderer._target)
    if choice_key is None or target_key is None or choice_key == target_key or renderer.shot_extractors:
        return None
    text = renderer._text
    if type(text) is RecordField:
        reads = text.spec
    elif type(text) is Expression and text.steps is not None and len(text.steps) == 1:
        reads = text.steps[0]
    else:
        return None
    if reads in (choice_key, target_key) or renderer._prefix is not None:
        return None
    describe = renderer._description
    if describe is not None and getattr(describe, "kind", None) not in ("literal", "constant"):
        return None
    return choice_key, target_key


DEFAULT_KEYS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # option keys named for circular patterns of extracted choices

_STAGE_KEYS = {
    "extract_field": None,  # extractor errors carry their own key
    "retrieve_examples": "retriever",
    "format_prompt": "template",
    "apply_meta_template": "meta",
}


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
        shot_extractors: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
        chat: Any = None,
        output_type: str | None = None,
        until: Sequence[str] | None = None,
        origins: Mapping[str, str] | None = None,
        allow_null_target: bool = False,
        limits: Any = None,
        choice_order: Any = None,
        option_keys: Sequence[str] | None = None,
        answer_key: str | None = None,
        fast_path: Callable[[TaskRenderer], Any] | None = None,
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
        self.shot_extractors = dict(shot_extractors or {})
        """Extractors few-shot examples use instead (lm-evaluation-harness ``fewshot_config``)."""
        self.chat = chat
        """The chat rules (``prompt_style.meta.chat_rules.ChatRules``), or ``None``."""
        self.output_type = output_type
        self.until = tuple(until) if until is not None else None
        self.origins = dict(origins or {})
        """The file a key was written in, when not ``source``."""
        self.allow_null_target = allow_null_target
        """Whether a generation record may have a null target (the task's ``allow_null_target``)."""
        self.limits = limits
        """Jinja budgets for this task's templates (``load_task(limits=...)``); ``None``: the defaults."""
        self.choice_order = choice_order
        """The order of each record's choices (a :class:`~prompt_style.choice_order.ChoiceOrder`),
        or ``None``: as the record has them. See :meth:`render_ordered`."""
        self.option_keys = tuple(option_keys) if option_keys is not None else None
        """Where a choice order permutes the choices: ``None`` for the extracted choices
        (``doc_to_choice``), else the record's option columns (or one list field),
        rewritten as OpenCompass's CircularEval rewrites a record."""
        self.answer_key = answer_key
        """With ``option_keys``: the record field holding the answer, remapped with its choice."""
        self.fast_path = fast_path
        """Compiles the task's fast path on the first record (``prompt_style.fastpath.compile_fast_path``,
        which ``load_task`` passes in: the renderer is beneath it); ``None``: the general path only."""
        self._setup()

    def _setup(self) -> None:
        get = self.extractors.get
        self._text = get("doc_to_text")
        self._choice = get("doc_to_choice")
        self._target = get("doc_to_target")
        self._description = get("description")
        self._prefix = get("gen_prefix")
        self._doc_id = get("doc_id")
        # The gold answer is resolved here, from the task's fields, before any style runs.
        self._gold = gold_resolver(self._target)
        # A style that reports the target as text (task_template) says it needs no gold index.
        self._needs_gold = getattr(self.style, "needs_gold", True)
        self._shots: list[Sample | None] = [None] * len(self.pool)
        self._style_format = self.style.format
        self._meta_apply = self.meta.apply
        # Token-level meta templates split multiple-choice continuations at token level.
        self._meta_scored = getattr(self.meta, "apply_with_continuations", None)
        self._meta_full = getattr(self.meta, "apply_full", None) or self.meta.apply
        self._select = self.retriever.select
        # A retriever that gives every record the same examples says which
        # (``shared_selection()``): their Samples are built once, in one tuple, so
        # that the style builds their turns once (and the fast path their text).
        shared = getattr(self.retriever, "shared_selection", None)
        try:
            ids = None if shared is None else shared()
        except Exception:  # a plugin's bug here only costs speed: select() is asked per record
            ids = None
        self._shared_ids = None if ids is None else tuple(ids)
        self._shared: tuple[Sample, ...] | None = None
        self._fast: Any = _UNTRIED
        self._fast_path: Any = None
        self._chat_apply = self.chat.apply if self.chat is not None else None
        self._rolling = self.output_type == "loglikelihood_rolling"
        self._fields = (self._text, self._choice, self._target, self._prefix, self._gold)
        if self.shot_extractors:
            extractors = {**self.extractors, **self.shot_extractors}
            target = extractors.get("doc_to_target")
            self._shot_fields = (
                extractors.get("doc_to_text"),
                extractors.get("doc_to_choice"),
                target,
                extractors.get("gen_prefix"),
                gold_resolver(target) if target is not self._target else self._gold,
            )
        else:
            self._shot_fields = self._fields

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if not key.startswith("_")}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    def sample(self, record: Mapping[str, Any], index: int, *, description: bool = True) -> Sample:
        """Extract the fields of one record.

        :raises PromptStyleError: for bad data, naming the task file, the key and the
            record, as :meth:`render` does.
        """
        try:
            return self._extract(record, index, self._fields, description)
        except PromptStyleError as exc:
            raise self._locate(exc, index) from None

    def _extract(
        self,
        record: Mapping[str, Any],
        index: int,
        fields: tuple[Any, Any, Any, Any, Any],
        description: bool,
    ) -> Sample:
        text_of, choice_of, target_of, prefix_of, resolve = fields
        key = "doc_to_text"
        try:
            question = text_of(record) if text_of is not None else None
            if question is None and not self._rolling:
                raise FieldError(
                    "gave null, so the prompt would read 'None'",
                    key=key,
                    hint="fix the record, or point doc_to_text at a field that holds the question",
                )
            choices = target = prefix = None
            text = ""
            if choice_of is not None:
                key = "doc_to_choice"
                choices = choice_of(record)
                if type(choices) is not list:
                    if choices is None:
                        raise FieldError(
                            "gave null instead of the list of choices",
                            key=key,
                            hint="fix the record, or point doc_to_choice at the field that holds the choices",
                        )
                    choices = choice_list(choices)
                if None in choices:
                    raise FieldError(
                        f"choice {choices.index(None)} is null, so it would read 'None'",
                        key=key,
                        hint="fix the record; every choice needs a text",
                    )
            gold = None
            if target_of is not None:
                key = "doc_to_target"
                target = target_of(record)
                if type(target) is not int and type(target) is not str and target is not None:
                    target = plain_integers(target)  # numpy integers from task code are indices, as ints
                if (target is None or type(target) is list and None in target) and not self._rolling:
                    self._null_target(target, choices)
                if type(question) is ContextChoice:
                    pass  # multiple input: the gold is doc_to_text's index (below)
                elif choices is not None and target is not None and resolve is not None and self._needs_gold:
                    if type(target) is int and 0 <= target < len(choices):
                        gold = target  # the common case, without a call
                    else:
                        try:
                            gold = resolve(target, choices)
                        except TargetError as exc:
                            raise self._label_error(exc, record, index, question, choices, target) from None
            if type(question) is ContextChoice:  # lm-evaluation-harness's multiple-input mode
                gold = context_gold(question, choices, target)
            if description and self._description is not None:
                key = "description"
                value = self._description(record)
                text = "" if value is None else str(value)
            if prefix_of is not None:
                key = "gen_prefix"
                value = prefix_of(record)
                prefix = None if value is None else str(value)
        except PromptStyleError:
            raise
        except Exception as exc:  # user callables and plugin extractors
            raise FieldError(f"raised {type(exc).__name__}: {cut(str(exc), 300)[1:-1]}", key=key) from exc
        return Sample(index, record, question, choices, target, text, gold=gold, gen_prefix=prefix)

    def _label_error(
        self, exc: TargetError, record: Mapping[str, Any], index: int, question: Any, choices: list[Any], target: Any
    ) -> TargetError:
        """A target that names no choice, told exactly when it is a label (of this
        style, or a letter): :func:`~prompt_style.fields.targets.explain_label`."""
        # How the style labels the choices is what it scores: its answers (A, (A), 1, II).
        answers_of = getattr(self.style, "answers", None) or getattr(self.style, "labels", None)
        labels: Any = ()
        if callable(answers_of):
            try:
                labels = answers_of(Sample(index, record, question, choices, target)) or ()
            except Exception:  # the style's own error comes when it formats; this is only a message
                labels = ()
        style = (self.plugins.get("format_prompt") or {}).get("name")
        return explain_label(exc, target, choices, labels, style)

    def _null_target(self, target: Any, choices: list[Any] | None) -> None:
        if choices is not None:
            raise FieldError(
                "gave null instead of the answer of a multiple-choice record",
                key="doc_to_target",
                hint="fix the record, or point doc_to_target at the field that holds the answer",
            )
        if target is not None or not self.allow_null_target:
            raise FieldError(
                "gave null instead of the reference answer" if target is None else "a reference answer is null",
                key="doc_to_target",
                hint="fix the record; if records without a reference are expected, set allow_null_target: true "
                "in the task (a few-shot example without one then shows no answer)",
            )

    def _plugin_label(self, hook: str) -> str:
        info = self.plugins.get(hook) or {}
        name = info.get("name")
        if not name:
            return hook
        dist = info.get("distribution")
        return f"{hook} {name!r}" + (f" ({dist} {info.get('version')})" if dist else "")

    def _plugin_bug(self, exc: Exception, stage: str, index: int) -> RenderError:
        """A plugin's own bug (not a PromptStyleError), reported with where it happened."""
        key = _STAGE_KEYS[stage]
        return RenderError(
            f"{self._plugin_label(stage)} raised {type(exc).__name__}: {cut(str(exc), 300)[1:-1]}",
            key=key,
            split=self.split,
            index=index,
            file=self.source,
            line=self.lines.get(key or ""),
        )

    def examples(self, record: Mapping[str, Any], index: int) -> tuple[Sample, ...]:
        """The few-shot examples record ``index`` gets, as extracted ``Sample`` objects (their
        ``index`` is their position in the few-shot pool, :attr:`pool_split`).

        :raises PromptStyleError: for an example with bad data, naming it; for a
            retriever's error, naming the record, as :meth:`render` does.
        """
        try:
            shared = self._shared_ids
            ids = shared if shared is not None else self._select(index, record)
            return tuple([self._shot(i) for i in ids]) if ids else ()
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key=exc.key or "retriever"), index) from None

    def shared_shots(self) -> tuple[Sample, ...] | None:
        """The few-shot examples every record gets, when the retriever's selection does
        not depend on the record (``shared_selection()``), else ``None``; built once.

        :raises PromptStyleError: for an example with bad data, naming it.
        """
        shots = self._shared
        if shots is None and self._shared_ids is not None:
            # within the task's budgets, as when the general path builds them for a record
            token = _SCOPE.set(self.limits) if self.limits is not None else None
            try:
                shots = self._shared = tuple([self._shot(i) for i in self._shared_ids])
            finally:
                if token is not None:
                    _SCOPE.reset(token)
        return shots

    def _shot(self, i: int) -> Sample:
        shot = self._shots[i]
        if shot is None:
            try:
                shot = self._shots[i] = self._extract(self.pool[i], i, self._shot_fields, False)
            except PromptStyleError as exc:
                exc.message = f"few-shot example: {exc.message}"
                raise exc.locate(split=self.pool_split, index=i) from None
        return shot

    def _locate(self, exc: PromptStyleError, index: int) -> PromptStyleError:
        key = exc.key or ""
        top = key.split(".")[0]
        line = self.lines.get(key) or self.lines.get(top)
        source = self.origins.get(key) or self.origins.get(top) or self.source
        return exc.locate(split=self.split, index=index, file=source, line=line)

    def _format(self, record: Mapping[str, Any], index: int) -> tuple[FormattedPrompt, tuple[int, ...]]:
        """The style's prompt for a record, and the few-shot indices it shows."""
        token = _SCOPE.set(self.limits) if self.limits is not None else None
        stage = "extract_field"
        try:
            sample = self.sample(record, index)
            stage = "retrieve_examples"
            shots = self._shared
            if shots is None:
                shared = self._shared_ids
                ids = self._select(index, record) if shared is None else shared
                stage = "format_prompt"
                shots = [self._shot(i) for i in ids] if ids else ()
                if shared is not None:  # the same examples for every record: one tuple, reused
                    shots = self._shared = tuple(shots)
                ids = shared if shared is not None else tuple(ids) if ids else ()
            else:
                ids = self._shared_ids
            stage = "format_prompt"
            return self._style_format(sample, shots), ids
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key=_STAGE_KEYS[stage]), index) from None
        except Exception as exc:  # a plugin's bug, reported with where it happened
            raise self._plugin_bug(exc, stage, index) from exc
        finally:
            if token is not None:
                _SCOPE.reset(token)

    def converse(
        self,
        record: Mapping[str, Any],
        index: int,
        reply: Callable[[RenderedPrompt], str] | None = None,
    ) -> Generator[RenderedPrompt, str | None, None]:
        """The requests of one record, in order: one for most tasks, one per model
        reply for a multi-turn dialogue (see :mod:`prompt_style.conversation`).

        A generator: in ``every`` mode each request after the first holds the
        model's earlier replies, handed back with ``send(reply)`` or by the
        ``reply`` callback (called with the request, returns the reply text)::

            turns = renderer.converse(record, 0)
            request = next(turns)
            while True:
                try:
                    request = turns.send(model(request.text))
                except StopIteration:
                    break

        Modes ``every_with_gt`` and ``last`` need no replies (plain iteration works).

        :raises PromptStyleError: naming the key and the record, for bad data, and
            when ``every`` mode gets no reply.
        """
        if getattr(self.style, "infer_mode", None) is None:  # one request: the usual path
            if self.choice_order is not None:  # the record's choice orders (one prompt, or one per rotation)
                yield from self.render_ordered(record, index)
                return
            yield self.render(record, index)
            return
        formatted, ids = self._format(record, index)
        doc_id = self.doc_id(record, index) if self._doc_id is not None else None
        if formatted.infer_mode is None:
            yield self._rendered(formatted, formatted.dialogue, index, fewshot_indices=ids, doc_id=doc_id)
            return
        yield from conversation.requests(self, formatted, index, reply, fewshot_indices=ids, doc_id=doc_id)

    def _rendered(
        self,
        formatted: FormattedPrompt,
        dialogue: Dialogue,
        index: int,
        *,
        target: Any = None,
        turn: int | None = None,
        fewshot_indices: tuple[int, ...] | None = None,
        doc_id: Any = None,
    ) -> RenderedPrompt:
        token = _SCOPE.set(self.limits) if self.limits is not None else None
        try:
            if self._chat_apply is not None:
                dialogue = self._chat_apply(dialogue)
            made = self._meta_apply(dialogue)
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key="meta"), index) from None
        except Exception as exc:  # a plugin's bug, reported with where it happened
            raise self._plugin_bug(exc, "apply_meta_template", index) from exc
        finally:
            if token is not None:
                _SCOPE.reset(token)
        return RenderedPrompt(
            index,
            made.text,
            made.messages,
            formatted.continuations,
            formatted.target if turn is None else target,
            self.plugins,
            dialogue,
            made.token_ids,
            formatted.extra,
            self.until,
            mode=formatted.mode,
            turn=turn,
            doc_id=doc_id,
            fewshot_indices=fewshot_indices,
        )

    def render(self, record: Mapping[str, Any], index: int) -> RenderedPrompt:
        """Render one record; ``index`` is its position in the evaluated split.

        A multi-turn record (a style that sets ``infer_mode``) has several
        requests: use :meth:`converse`.

        :raises PromptStyleError: naming the key and the record, for bad data.
        """
        fast = self._fast
        if fast is not None:
            if fast is _UNTRIED:
                fast = self._compile_fast()
            if fast is not None:
                made = fast(record, index)
                if made is not None:
                    if self._doc_id is not None:
                        made.doc_id = self.doc_id(record, index)
                    return made
        made = self._render(record, index)
        if self._doc_id is not None:
            made.doc_id = self.doc_id(record, index)
        return made

    def doc_id(self, record: Mapping[str, Any], index: int) -> Any:
        """The record's own id, by the task's ``doc_id`` field spec; ``index`` when the
        task names none.

        :raises FieldError: naming the record, when the record has no such field (with
            the closest of its keys) or its id is null.
        """
        of = self._doc_id
        if of is None:
            return index
        try:
            value = of(record)
            if value is None:
                raise FieldError(
                    "gave null instead of the record's id",
                    key="doc_id",
                    hint="fix the record, or point doc_id at a field every record has",
                )
            return value
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key="doc_id"), index) from None
        except Exception as exc:  # user callables
            raise self._locate(
                FieldError(f"raised {type(exc).__name__}: {cut(str(exc), 300)[1:-1]}", key="doc_id"), index
            ) from exc

    def fast_render(self) -> Callable[[Mapping[str, Any], int], RenderedPrompt | None] | None:
        """The task's compiled fast path (:mod:`prompt_style.fastpath`): ``fn(record,
        index)`` gives what :meth:`render` gives, or ``None`` for a record only the
        general path renders (:meth:`render` does both); ``None`` when the task is not
        in the fast path's common case."""
        fast = self._fast
        return self._compile_fast() if fast is _UNTRIED else fast

    def render_ordered(self, record: Mapping[str, Any], index: int) -> list[RenderedPrompt]:
        """The prompts of one record with its choices in the task's :attr:`choice_order`:
        one prompt (``--shuffle-choices``, ``correct:K``, ...) or one per rotation
        (``circular``), each with its ``permutation`` (and ``rotation``,
        ``circular_pattern`` when circular) and the gold target remapped. Without a
        choice order, ``[render(record, index)]``.

        :raises PromptStyleError: naming the record, for bad data and for orders the
            record cannot take (``correct:K`` past its last choice).
        """
        order = self.choice_order
        if order is None:
            return [self.render(record, index)]
        keys = self.option_keys
        if keys is None and type(record) is dict:
            fields = self.__dict__.get("_order_fields", _UNTRIED)
            if fields is _UNTRIED:
                fields = self._order_fields = _plain_order_fields(self)
            if fields is not None:
                choices, gold = record.get(fields[0]), record.get(fields[1])
                if (
                    type(choices) is list
                    and type(gold) is int
                    and 0 <= gold < len(choices) <= len(DEFAULT_KEYS)
                    and None not in choices
                    and choices[:2] != ["A", "B"]  # choices that are labels: the general path says why not
                ):
                    return self._reordered_copies(record, index, fields, choices, gold)
        from .choice_order import circular_pattern, permute_record, record_gold, remap_gold

        try:
            if keys is not None:  # the record's own option columns (OpenCompass): rewrite the record
                n, gold = record_gold(record, keys, self.answer_key)
            else:
                sample = self.sample(record, index)
                self._check_orderable(sample)
                n, gold = len(sample.choices), sample.gold
            permutations = order.permutations(index, n, gold)
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key=exc.key or "choice_order"), index) from None
        shown = keys if keys is not None and len(keys) > 1 else None
        names = shown or (DEFAULT_KEYS[:n] if n <= len(DEFAULT_KEYS) else [str(i) for i in range(n)])
        # A gold index to check the rewritten records against: their gold must be the
        # same choice (an answer field that did not follow its choices would not be).
        check = self.render(record, index).target if keys is not None else None
        out = []
        for rotation, permutation in enumerate(permutations):
            if keys is not None:
                made = self.render(permute_record(record, permutation, keys, self.answer_key), index)
                if type(check) is int and type(made.target) is int and permutation[made.target] != check:
                    raise RenderError(
                        f"the gold answer did not follow the choices: it is choice {check} of the record, "
                        f"but the reordered record's gold is its choice {permutation[made.target]}",
                        key="answer_key",
                        split=self.split,
                        index=index,
                        file=self.source,
                        hint="name the field that holds the answer with --answer-key (answer_key= in Python)",
                    )
            else:
                made = self._render(record, index, (permutation, remap_gold))
                if self._doc_id is not None:
                    made.doc_id = self.doc_id(record, index)
            made.permutation = permutation
            if order.many:
                made.rotation = rotation
                made.circular_pattern = circular_pattern(permutation, names)
            out.append(made)
        return out

    def _reordered_copies(
        self, record: dict[str, Any], index: int, fields: tuple[str, str], choices: list[Any], gold: int
    ) -> list[RenderedPrompt]:
        """A task whose choices and gold index are plain fields of the record, and which
        reads them nowhere else (:func:`_plain_order_fields`): each new order is a copy
        of the record with the choice list reordered and the gold index remapped, which
        renders — through the fast path — the prompt the reordered extracted choices give."""
        from .choice_order import circular_pattern

        order = self.choice_order
        try:
            permutations = order.permutations(index, len(choices), gold)
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key=exc.key or "choice_order"), index) from None
        choice_key, target_key = fields
        many = order.many
        out = []
        for rotation, permutation in enumerate(permutations):
            copy = dict(record)
            copy[choice_key] = [choices[p] for p in permutation]
            copy[target_key] = permutation.index(gold)
            made = self.render(copy, index)
            made.permutation = permutation
            if many:
                made.rotation = rotation
                made.circular_pattern = circular_pattern(permutation, DEFAULT_KEYS)
            out.append(made)
        return out

    def _check_orderable(self, sample: Sample) -> None:
        choices = sample.choices
        if choices is None or type(sample.question) is ContextChoice:
            raise RenderError(
                "a choice order needs the record's choices (doc_to_choice), one prompt for all of them",
                key="choice_order",
                hint="for a template that reads option columns (OpenCompass's {A}, {B}), give --option-keys",
            )
        n = len(choices)
        if n >= 2 and [str(c) for c in choices] == list(DEFAULT_KEYS[:n]):
            raise RenderError(
                f"the choices are the labels {', '.join(DEFAULT_KEYS[:n])}: the choice texts are in the "
                "question's text, where a new order cannot reach them",
                key="choice_order",
                hint="name the record's choice field (or columns) and its answer with --option-keys and "
                "--answer-key (option_keys=, answer_key= in Python), e.g. --option-keys choices --answer-key answer",
            )

    def _render(self, record: Mapping[str, Any], index: int, permute: Any = None) -> RenderedPrompt:
        """The general path of :meth:`render` (``permute``: ``(permutation, remap_gold)``
        to show the extracted choices in another order)."""
        token = _SCOPE.set(self.limits) if self.limits is not None else None
        stage = "extract_field"
        try:
            sample = self.sample(record, index)
            if permute is not None:
                permutation, remap = permute
                choices = sample.choices
                sample = Sample(
                    index,
                    record,
                    sample.question,
                    [choices[p] for p in permutation],
                    sample.target,
                    sample.description,
                    gold=remap(sample.gold, permutation),
                    gen_prefix=sample.gen_prefix,
                )
            if self._rolling:
                return self._rolling_prompt(sample, index)
            stage = "retrieve_examples"
            shots = self._shared
            if shots is None:
                shared = self._shared_ids
                ids = self._select(index, record) if shared is None else shared
                stage = "format_prompt"
                shots = [self._shot(i) for i in ids] if ids else ()
                if shared is not None:  # the same examples for every record: one tuple, reused
                    shots = self._shared = tuple(shots)
                ids = shared if shared is not None else tuple(ids) if ids else ()
            else:
                ids = self._shared_ids
            stage = "format_prompt"
            formatted = self._style_format(sample, shots)
            if formatted.infer_mode is not None:
                raise RenderError(
                    f"the record is a multi-turn dialogue ({formatted.infer_mode}): it has one request per turn",
                    hint="use Task.render() or TaskRenderer.converse()",
                )
            stage = "apply_meta_template"
            if formatted.candidates is not None:
                return self._candidates(index, formatted, ids)
            if formatted.contexts is not None:
                return self._multiple_input(index, formatted, ids)
            dialogue = formatted.dialogue
            if self._chat_apply is not None:
                dialogue = self._chat_apply(dialogue)
            if self._meta_scored is not None and formatted.continuations:
                made = self._meta_scored(dialogue, formatted.continuations)
            elif formatted.mode == "ppl":
                # One prompt scored whole (OpenCompass's PPLOnlyInferencer): the meta template's
                # perplexity rendering, its end included.
                made = self._meta_full(dialogue)
            else:
                made = self._meta_apply(dialogue)
        except PromptStyleError as exc:
            raise self._locate(exc.locate(key=_STAGE_KEYS[stage]), index) from None
        except Exception as exc:  # a plugin's bug, reported with where it happened
            raise self._plugin_bug(exc, stage, index) from exc
        finally:
            if token is not None:  # the task's budgets (load_task(limits=...)) end with the record
                _SCOPE.reset(token)
        return RenderedPrompt(
            index,
            made.text,
            made.messages,
            formatted.continuations,
            formatted.target,
            self.plugins,
            dialogue,
            made.token_ids,
            formatted.extra,
            self.until,
            context_token_ids=made.context_token_ids,
            continuation_token_ids=made.continuation_token_ids,
            token_report=made.token_report,
            assistant_spans=made.assistant_spans,
            mode=formatted.mode,
            fewshot_indices=ids,
        )

    def _compile_fast(self) -> Any:
        """The compiled fast path for this task (:mod:`prompt_style.fastpath`), or
        ``None`` when the task is not in its common case; built on the first record."""
        compile_fast_path = self.fast_path
        try:
            path = None if compile_fast_path is None else compile_fast_path(self)
        except Exception:  # e.g. an example the style cannot format: the general path says so, per record
            path = None
        self._fast_path = path
        self._fast = None if path is None else path.render
        return self._fast

    def _candidates(self, index: int, formatted: Any, ids: tuple[int, ...] = ()) -> RenderedPrompt:
        full = self._meta_full
        chat = self._chat_apply
        candidates = []
        for label, dialogue in formatted.candidates:
            if chat is not None:
                dialogue = chat(dialogue)
            made = full(dialogue)
            candidates.append(Candidate(label, made.text, made.messages, dialogue, made.token_ids))
        return RenderedPrompt(
            index,
            None,
            None,
            formatted.continuations,
            formatted.target,
            self.plugins,
            (),
            None,
            formatted.extra,
            self.until,
            candidates=candidates,
            mode=formatted.mode,
            fewshot_indices=ids,
        )

    def _multiple_input(self, index: int, formatted: FormattedPrompt, ids: tuple[int, ...] = ()) -> RenderedPrompt:
        """A multiple-input record: the chat rules and the meta template applied to
        each context (lm-evaluation-harness applies the chat template to each)."""
        if self._meta_scored is not None:
            raise RenderError(
                "a multiple-input task (doc_to_text gives a number: one context per choice) "
                "is not split at token level",
                hint="render it with a text or chat meta template (plain, chatml, messages, hf) without a tokenizer",
            )
        chat = self._chat_apply
        apply = self._meta_apply
        dialogues = []
        made_all = []
        for dialogue in formatted.contexts or ():
            if chat is not None:
                dialogue = chat(dialogue)
            dialogues.append(dialogue)
            made_all.append(apply(dialogue))
        made = made_all[0]
        return RenderedPrompt(
            index,
            made.text,
            made.messages,
            formatted.continuations,
            formatted.target,
            self.plugins,
            dialogues[0],
            made.token_ids,
            formatted.extra,
            self.until,
            assistant_spans=made.assistant_spans,
            mode=formatted.mode,
            contexts=tuple([m.text if m.text is not None else m.messages for m in made_all]),
            fewshot_indices=ids,
        )

    def _rolling_prompt(self, sample: Sample, index: int) -> RenderedPrompt:
        """``loglikelihood_rolling``: the document itself (``doc_to_target``) is
        scored as a whole, with no context, few-shot examples or chat format."""
        target = sample.target
        if not isinstance(target, str):
            raise FieldError(
                f"output_type loglikelihood_rolling scores doc_to_target as the text, "
                f"but it gave {type(target).__name__} {target!r}",
                key="doc_to_target",
            )
        return RenderedPrompt(index, target, None, (), target, self.plugins, (), fewshot_indices=())
