"""The prompt-style side of an lm-evaluation-harness task, without importing lm_eval.

:class:`Prompts` holds the task loaded with :func:`prompt_style.load_task` (the
same resolved ``TaskRenderer`` ``prompt-style render`` uses) and answers what
lm-evaluation-harness asks a task for, one record at a time: the context
(``fewshot_context``), the request arguments (``construct_requests``), the gold
answer and the choices (``doc_to_target``, ``doc_to_choice``). What lm-eval's
run options change (``--num_fewshot``, ``--apply_chat_template``,
``--fewshot_as_multiturn``, ``--system_instruction``, ``--fewshot_random_seed``)
is a :class:`RunSettings`; each distinct one loads the task once more with the
matching :func:`~prompt_style.load_task` options, so the prompts are those
``prompt-style render`` gives with the same options.

The task class in :mod:`prompt_style_lm_eval.task` is the thin glue to lm-eval.
"""

from __future__ import annotations

import copy
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_style import PromptStyleError, RenderedPrompt, RenderError, Task, load_records, load_task

__all__ = ["Docs", "LazyRows", "Prompts", "RunSettings", "LM_EVAL_SEED"]

_UNSET: Any = object()
LM_EVAL_SEED = 1234
"""lm-evaluation-harness's default ``--fewshot_random_seed``: it leaves the task's own seed."""
_VARIANT_CHANGES = frozenset({"meta", "meta_options", "model_args", "system_instruction", "fewshot_as_multiturn"})
"""The run settings' changes a variant of the default task takes (``Task.variant``): not the
seed, nor the number of examples (``load_task`` says which run option a pool too small for it
comes from)."""


class Docs(list):
    """The evaluated split's records, as lm-eval's task reads its documents
    (it asks for the column names through ``features``)."""

    @property
    def features(self) -> dict[str, None]:
        return dict.fromkeys(self[0]) if self else {}


class LazyRows(Sequence):
    """A split of lm-eval's own dataset (``datasets.Dataset``) as a list of records,
    made on first use: prompt-style reads only the evaluated and few-shot splits."""

    def __init__(self, split: Any) -> None:
        self._split = split
        self._rows: list[dict[str, Any]] | None = None

    @property
    def rows(self) -> list[dict[str, Any]]:
        if self._rows is None:
            self._rows = [dict(row) for row in self._split]
        return self._rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):  # type: ignore[override]
        return self.rows[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)


@dataclass(frozen=True)
class RunSettings:
    """What an lm-eval run asks of a task's prompts."""

    num_fewshot: int
    apply_chat_template: bool = False
    system_instruction: str | None = None
    fewshot_as_multiturn: bool | None = None
    seed: int | None = None


class Prompts:
    """A task loaded by prompt-style, rendering what lm-eval asks for.

    :param task: the task file (any format prompt-style reads).
    :param options: :func:`~prompt_style.load_task` keyword arguments (``data``
        included) that give the prompts of a run with lm-eval's defaults.
    """

    def __init__(self, task: str | Path, options: Mapping[str, Any]) -> None:
        self.task_file = task
        self.options = dict(options)
        self.default = load_task(task, **self.options)
        self.default_shots = self.default.config.num_fewshot or 0
        config = self.default.config
        self.target_delimiter = config.target_delimiter
        self._tasks: dict[RunSettings, Task] = {}
        self._docs: Docs | None = None
        # id(document) -> position, made when a document is not where the cursors expect it
        self._positions: dict[int, int] | None = None
        # lm-eval asks for the documents in order, each pass on its own: where each of the
        # two passes (contexts, gold answers) should find its next document
        self._next_request = 0
        self._next_gold = 0
        # index -> (target, choices) of its first prompt, what gold() gives (not the prompt:
        # its text and messages may go once lm-eval has them)
        # by index, made with the documents: each record's target and choices, _UNSET before
        # its first prompt (two lists, not a tuple a record: no container per record for the
        # garbage collector to walk while lm-eval holds its documents)
        self._targets: list[Any] = []
        self._choice_lists: list[Any] = []
        self._multiple: set[int] = set()  # records of a multiple-input task (one context per choice)
        self._choices: dict[int, tuple[tuple[str, ...], list[str]]] = {}  # id(continuations) -> choices
        self._conts: Any = None  # the continuations seen last, and their choices
        self._conts_choices: list[str] | None = None
        self._last_index = -1  # the record rendered last, and its prompt (construct_requests reads it)
        self._last: RenderedPrompt | None = None
        self._settings: RunSettings | None = None  # the last settings asked for, and their task
        self._fast: dict[int, Any] = {}  # id(task) -> its compiled fast path (None: there is none)
        self._settings_task = self.default
        self._settings_fast: Any = None
        self._checked_ids: set[int] = set()  # id() of the tasks checked (each kept alive here)
        if self.default.multiturn:  # refused now; the rest of the check when the default is used
            self._checked(self.default)

    # -- documents ---------------------------------------------------------------

    def docs(self) -> Docs:
        """The evaluated split's records (after the task's ``process_docs``), as lm-eval's documents.

        They are the records themselves (plain ``dict`` objects, which the renderer's
        compiled field readers take directly); a document's position is known from
        the object lm-eval hands back (it passes the documents it was given)."""
        if self._docs is None:
            source = self.default.source()
            enabled = gc.isenabled()
            gc.disable()  # records hold no cycles: collecting while the split is read only costs time
            try:
                # (the split as a list, read by one loop: no generator between the reader and it)
                docs = Docs(load_records(source, self.default.config.test_split))
            finally:
                if enabled:
                    gc.enable()
            if not isinstance(source, (str, Path, tuple)):
                # records given in memory may hold one object twice: each position its own
                seen: set[int] = set()
                for index, record in enumerate(docs):
                    if id(record) in seen:
                        docs[index] = record = dict(record)
                    seen.add(id(record))
            # (records read from files are fresh objects, each once)
            if not docs:
                raise RenderError(f"task {self.default.name!r}: the evaluated split has no records")
            self._docs = docs
            self._targets = [_UNSET] * len(docs)
            self._choice_lists = [None] * len(docs)
        return self._docs

    def index_of(self, doc: Mapping[str, Any]) -> int:
        """The position of ``doc`` in the evaluated split."""
        docs = self._docs if self._docs is not None else self.docs()
        if self._positions is None:
            self._positions = {id(record): index for index, record in enumerate(docs)}
        index = self._positions.get(id(doc))
        if index is not None and docs[index] is doc:
            return index
        for position, candidate in enumerate(docs):  # a copy of a document: found by value
            if candidate == doc:
                return position
        raise RenderError(f"task {self.default.name!r}: a document that is not a record of its evaluated split")

    # -- settings ------------------------------------------------------------------

    def task_for(self, settings: RunSettings) -> Task:
        """The task loaded for ``settings`` (the default task when they change nothing)."""
        if settings is self._settings:
            return self._settings_task
        known = self._tasks.get(settings)
        if known is None:
            changes = self.changes(settings)
            options = {**self.options, **changes}
            try:
                known = self._checked(self.default if not changes else self._variant(changes, options))
            except PromptStyleError as exc:
                raise _run_option(exc, settings, changes, self.task_file) from None
            self._tasks[settings] = known
        fast = self._fast.get(id(known), _UNSET)
        if fast is _UNSET:
            fast = self._fast[id(known)] = known.renderer.fast_render()
        self._settings, self._settings_task, self._settings_fast = settings, known, fast
        return known

    def _variant(self, changes: Mapping[str, Any], options: Mapping[str, Any]) -> Task:
        """The default task with a run's ``changes``: a variant of it (the task file, field
        specs and few-shot pool shared: ``Task.variant``) when they are the meta template
        and the chat rules; else loaded again with ``options``."""
        if set(changes) <= _VARIANT_CHANGES and changes.get("model_args") is None:
            try:
                return self.default.variant(
                    meta=changes.get("meta"),
                    meta_options=changes.get("meta_options"),
                    system_instruction=changes.get("system_instruction"),
                    fewshot_as_multiturn=changes.get("fewshot_as_multiturn"),
                )
            except RenderError:  # a task with no variants (not made by load_task here)
                pass
        return load_task(self.task_file, **options)

    def _checked(self, task: Task) -> Task:
        """``task``, after checking that lm-eval can send its prompts: one context per
        record (not a multi-turn dialogue, not OpenCompass's perplexity candidates).
        Checked once, when first used (a run with other settings never renders the
        default task)."""
        if id(task) in self._checked_ids:
            return task
        docs = self.docs()
        # (one record tells: a task renders candidates for every record or for none)
        if task.multiturn or task.renderer.render(docs[0], 0).candidates is not None:
            what = "a multi-turn dialogue" if task.multiturn else "OpenCompass perplexity candidates"
            raise RenderError(
                f"task {task.name!r} renders {what}; lm-evaluation-harness sends one context per record",
                hint=None if task.multiturn else "render it in generation mode (--mode gen)",
            )
        self._checked_ids.add(id(task))
        return task

    def changes(self, settings: RunSettings) -> dict[str, Any]:
        """The :func:`~prompt_style.load_task` options a run's settings change."""
        changes: dict[str, Any] = {}
        if settings.num_fewshot != self.default_shots:
            changes["shots"] = settings.num_fewshot
        if settings.seed is not None and settings.seed != LM_EVAL_SEED:
            changes["seed"] = settings.seed
        if settings.system_instruction is not None:
            changes["system_instruction"] = settings.system_instruction
        if settings.apply_chat_template:
            # The model applies its own chat template to the messages.
            multiturn = settings.fewshot_as_multiturn
            changes.update(meta="messages", meta_options=None, model_args=None)
            changes["fewshot_as_multiturn"] = True if multiturn is None else bool(multiturn)
        return changes

    # -- per record ------------------------------------------------------------------
    # lm-eval calls these once per record (the compiled fast path renders a record in about
    # a microsecond, so they do as little as they can: no lookups by value, no copies).

    def _index(self, doc: Mapping[str, Any]) -> int:
        docs = self._docs if self._docs is not None else self.docs()
        positions = self._positions
        index = None if positions is None else positions.get(id(doc))
        if index is None or docs[index] is not doc:
            index = self.index_of(doc)
        return index

    def _keep(self, index: int, prompt: RenderedPrompt, multiple_input: bool) -> None:
        self._last_index, self._last = index, prompt
        if self._targets[index] is _UNSET:
            self._targets[index] = prompt.target
            self._choice_lists[index] = self._choices_of(prompt.continuations)
            if multiple_input:
                self._multiple.add(index)

    def _choices_of(self, continuations: tuple[str, ...] | None) -> list[str] | None:
        """The choices lm-eval measures for ``acc_norm``: each continuation without the
        target delimiter (one list per continuations tuple: tasks share one per shape)."""
        if continuations is self._conts:
            return self._conts_choices
        if not continuations:
            return None
        known = self._choices.get(id(continuations))
        if known is not None and known[0] is continuations:
            choices = known[1]
        else:
            delimiter = self.target_delimiter
            if delimiter and all(c.startswith(delimiter) for c in continuations):
                choices = [c[len(delimiter) :] for c in continuations]
            else:
                choices = list(continuations)
            self._choices[id(continuations)] = (continuations, choices)
        self._conts, self._conts_choices = continuations, choices
        return choices

    def render(self, doc: Mapping[str, Any], settings: RunSettings | None = None) -> RenderedPrompt:
        """``doc`` rendered for ``settings`` (the default run when ``None``)."""
        index = self._index(doc)
        task = self._checked(self.default) if settings is None else self.task_for(settings)
        prompt = task.renderer.render(doc, index)
        self._keep(index, prompt, prompt.contexts is not None)
        return prompt

    def request(
        self, doc: Mapping[str, Any], settings: RunSettings, chat_template: Callable[..., str] | None = None
    ) -> str | list[str]:
        """:meth:`render` then :meth:`context` in one step: what ``fewshot_context``
        returns (the prompt is kept for :meth:`arguments` and :meth:`last`)."""
        at = self._next_request
        try:
            found = self._docs[at] is doc  # type: ignore[index]
        except (IndexError, TypeError):  # past the end; the documents not read yet
            found = False
        index = at if found else self._index(doc)
        self._next_request = index + 1
        if settings is not self._settings:
            self.task_for(settings)
        fast = self._settings_fast
        prompt = fast(doc, index) if fast is not None else None
        # (a fast-path prompt of one context is not a plain RenderedPrompt, whose every
        # field is set: a multiple-input record's is, with its contexts; below)
        if prompt is not None and (type(prompt) is not RenderedPrompt or prompt.contexts is None):
            # The compiled fast path's prompt of one context.
            self._last_index = index
            self._last = prompt
            targets = self._targets
            if targets[index] is _UNSET:
                continuations = prompt.continuations
                choices = self._conts_choices if continuations is self._conts else self._choices_of(continuations)
                targets[index] = prompt.target
                self._choice_lists[index] = choices
            if chat_template is None:
                return prompt.text
            messages = prompt.messages
            if type(messages) is list and messages:  # context()'s work, for one dialogue
                return chat_template(messages, add_generation_prompt=messages[-1].get("role") != "assistant")
            return self.context(prompt, chat_template)
        if prompt is None:
            prompt = self._settings_task.renderer.render(doc, index)
        self._keep(index, prompt, prompt.contexts is not None)
        return self.context(prompt, chat_template)

    def last(self, doc: Mapping[str, Any]) -> RenderedPrompt:
        """The prompt of ``doc`` just rendered by :meth:`render` or :meth:`request`
        (rendered again with the default settings otherwise)."""
        if self._last is not None and self._index(doc) == self._last_index:
            return self._last
        return self.render(doc)

    def gold(self, doc: Mapping[str, Any]) -> tuple[Any, list[Any] | None]:
        """``(target, choices)`` of ``doc``: the gold answer as ``prompt-style render``
        gives it, and the choices lm-eval measures for ``acc_norm`` (each continuation
        without the target delimiter; the options of a multiple-input task)."""
        at = self._next_gold
        try:
            found = self._docs[at] is doc  # type: ignore[index]
        except (IndexError, TypeError):
            found = False
        index = at if found else self._index(doc)
        self._next_gold = index + 1
        target = self._targets[index]
        if target is _UNSET:
            self.render(doc)
            target = self._targets[index]
        if self._multiple and index in self._multiple:  # a multiple-input task: the options
            return target, list(self.default.renderer.sample(doc, index).choices or [])
        return target, self._choice_lists[index]

    @staticmethod
    def context(prompt: RenderedPrompt, chat_template: Callable[..., str] | None = None) -> str | list[str]:
        """What lm-eval's model reads: the prompt's text, or its messages through the
        model's ``chat_template`` (``add_generation_prompt`` unless the messages end
        with an assistant prefill); one per choice for a multiple-input task."""
        contexts = prompt.contexts
        if chat_template is None:
            if contexts is not None:
                return [_text(c) for c in contexts]
            return _text(prompt.text)
        dialogues = list(contexts) if contexts is not None else [prompt.messages]
        made = []
        for messages in dialogues:
            if not isinstance(messages, list):
                raise RenderError("the meta template gave no messages for the chat template", key="meta")
            prefill = bool(messages) and messages[-1].get("role") == "assistant"
            made.append(chat_template(messages, add_generation_prompt=not prefill))
        return made if contexts is not None else made[0]

    def arguments(
        self,
        doc: Mapping[str, Any],
        context: str | list[str],
        output_type: str,
        generation_kwargs: Mapping[str, Any] | None = None,
        mutual_info: bool = False,
    ) -> tuple[tuple[Any, ...], ...]:
        """The arguments of each request lm-eval sends for ``doc`` (``construct_requests``,
        after :meth:`request` gave ``context``): one per choice for multiple choice
        (``(context, continuation)``, plus ``("", continuation)`` for ``acc_mutual_info``),
        else one. A tuple of tuples of text: the garbage collector stops tracking them."""
        prompt = self.last(doc)
        if output_type == "multiple_choice":
            conts = prompt.continuations
            if self._last_index in self._multiple:  # one context per choice
                made = list(zip(context, conts, strict=True))
            else:
                made = [(context, cont) for cont in conts]
            if mutual_info:
                made += [("", cont) for cont in conts]
            return tuple(made)
        if output_type == "generate_until":
            return ((context, copy.deepcopy(dict(generation_kwargs or {}))),)
        if output_type == "loglikelihood":
            cont = prompt.continuations[0] if prompt.continuations else prompt.target
            return ((context, cont),)
        if output_type == "loglikelihood_rolling":
            return ((prompt.text,),)
        raise PromptStyleError(f"unknown output_type {output_type!r}", key="output_type")


def _run_option(
    exc: PromptStyleError, settings: RunSettings, changes: Mapping[str, Any], task_file: str | Path
) -> PromptStyleError:
    """``exc``, raised loading the task for a run's options, saying which lm-eval option asked
    for what the task cannot give (``--num_fewshot K`` beyond the few-shot pool, say)."""
    options = {"shots": f"--num_fewshot {settings.num_fewshot}", "seed": f"--fewshot_random_seed {settings.seed}"}
    if exc.key in options and exc.key in changes:
        exc.key = f"lm-eval's {options[exc.key]}"
    return exc.locate(file=str(task_file))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise RenderError(
            "the meta template gives no text for lm-evaluation-harness to send",
            key="meta",
            hint="use a meta template that gives text (plain, chatml, hf); "
            "for messages run lm-eval with --apply_chat_template",
        )
    return value
