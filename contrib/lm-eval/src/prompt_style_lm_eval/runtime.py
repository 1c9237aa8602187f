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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_style import PromptStyleError, RenderedPrompt, RenderError, Task, load_task

__all__ = ["Doc", "Docs", "LazyRows", "Prompts", "RunSettings", "LM_EVAL_SEED"]

LM_EVAL_SEED = 1234
"""lm-evaluation-harness's default ``--fewshot_random_seed``: it leaves the task's own seed."""


class Doc(dict):
    """A record of the evaluated split and its position in it: lm-eval hands a task
    only the record, and per-record retrievers need the position."""

    __slots__ = ("index",)

    def __init__(self, record: Mapping[str, Any], index: int) -> None:
        super().__init__(record)
        self.index = index


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
        self._gold: dict[int, tuple[Any, list[Any] | None]] = {}
        self._last: tuple[int, RenderedPrompt] | None = None

    # -- documents ---------------------------------------------------------------

    def docs(self) -> Docs:
        """The evaluated split's records (after the task's ``process_docs``), each a :class:`Doc`."""
        if self._docs is None:
            self._docs = Docs(Doc(record, index) for index, record in enumerate(self.default.records()))
            if not self._docs:
                raise RenderError(f"task {self.default.name!r}: the evaluated split has no records")
        return self._docs

    def index_of(self, doc: Mapping[str, Any]) -> int:
        """The position of ``doc`` in the evaluated split."""
        index = getattr(doc, "index", None)
        if isinstance(index, int):
            return index
        docs = self.docs()
        for position, candidate in enumerate(docs):
            if candidate is doc:
                return position
        for position, candidate in enumerate(docs):
            if candidate == doc:
                return position
        raise RenderError(f"task {self.default.name!r}: a document that is not a record of its evaluated split")

    # -- settings ------------------------------------------------------------------

    def task_for(self, settings: RunSettings) -> Task:
        """The task loaded for ``settings`` (the default task when they change nothing)."""
        known = self._tasks.get(settings)
        if known is not None:
            return known
        changes = self.changes(settings)
        task = self.default if not changes else load_task(self.task_file, **{**self.options, **changes})
        self._tasks[settings] = task
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

    def render(self, doc: Mapping[str, Any], settings: RunSettings | None = None) -> RenderedPrompt:
        """``doc`` rendered for ``settings`` (the default run when ``None``)."""
        index = self.index_of(doc)
        task = self.default if settings is None else self.task_for(settings)
        prompt = task.renderer.render(doc, index)
        if prompt.candidates is not None or prompt.turn is not None:
            what = "a multi-turn dialogue" if prompt.turn is not None else "OpenCompass perplexity candidates"
            raise RenderError(
                f"task {self.default.name!r} renders {what}; lm-evaluation-harness sends one context per record",
                index=index,
                hint="render it in generation mode (--mode gen)" if prompt.candidates is not None else None,
            )
        self._last = (index, prompt)
        if index not in self._gold:
            self._gold[index] = (prompt.target, self._choices(doc, index, prompt))
        return prompt

    def last(self, doc: Mapping[str, Any]) -> RenderedPrompt:
        """The prompt of ``doc`` just rendered by :meth:`render` (rendered again otherwise)."""
        last = self._last
        if last is not None and last[0] == self.index_of(doc):
            return last[1]
        return self.render(doc)

    def gold(self, doc: Mapping[str, Any]) -> tuple[Any, list[Any] | None]:
        """``(target, choices)`` of ``doc``: the gold answer as ``prompt-style render``
        gives it, and the choices lm-eval measures for ``acc_norm`` (each continuation
        without the target delimiter; the options of a multiple-input task)."""
        index = self.index_of(doc)
        known = self._gold.get(index)
        if known is None:
            self.render(doc)
            known = self._gold[index]
        return known

    def _choices(self, doc: Mapping[str, Any], index: int, prompt: RenderedPrompt) -> list[Any] | None:
        if prompt.contexts is not None:
            return list(self.default.renderer.sample(doc, index).choices or [])
        if not prompt.continuations:
            return None
        delimiter = self.target_delimiter
        conts = prompt.continuations
        if delimiter and all(c.startswith(delimiter) for c in conts):
            return [c[len(delimiter) :] for c in conts]
        return list(conts)

    @staticmethod
    def context(prompt: RenderedPrompt, chat_template: Callable[..., str] | None = None) -> str | list[str]:
        """What lm-eval's model reads: the prompt's text, or its messages through the
        model's ``chat_template`` (``add_generation_prompt`` unless the messages end
        with an assistant prefill); one per choice for a multiple-input task."""
        if chat_template is None:
            if prompt.contexts is not None:
                return [_text(c) for c in prompt.contexts]
            return _text(prompt.text)
        dialogues = list(prompt.contexts) if prompt.contexts is not None else [prompt.messages]
        made = []
        for messages in dialogues:
            if not isinstance(messages, list):
                raise RenderError("the meta template gave no messages for the chat template", key="meta")
            prefill = bool(messages) and messages[-1].get("role") == "assistant"
            made.append(chat_template([dict(m) for m in messages], add_generation_prompt=not prefill))
        return made if prompt.contexts is not None else made[0]

    @staticmethod
    def arguments(
        prompt: RenderedPrompt,
        context: str | list[str],
        output_type: str,
        generation_kwargs: Mapping[str, Any] | None = None,
        mutual_info: bool = False,
    ) -> list[tuple[Any, ...]]:
        """The arguments of each request lm-eval sends for one record: one per
        choice for multiple choice (``(context, continuation)``, plus
        ``("", continuation)`` for ``acc_mutual_info``), else one."""
        if output_type == "multiple_choice":
            conts = prompt.continuations
            if isinstance(context, list):
                made = list(zip(context, conts, strict=True))
            else:
                made = [(context, cont) for cont in conts]
            if mutual_info:
                made += [("", cont) for cont in conts]
            return made
        if output_type == "generate_until":
            return [(context, copy.deepcopy(dict(generation_kwargs or {})))]
        if output_type == "loglikelihood":
            cont = prompt.continuations[0] if prompt.continuations else prompt.target
            return [(context, cont)]
        if output_type == "loglikelihood_rolling":
            return [(prompt.text,)]
        raise PromptStyleError(f"unknown output_type {output_type!r}", key="output_type")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise RenderError(
            "the meta template gives no text for lm-evaluation-harness to send",
            key="meta",
            hint="use a meta template that gives text (plain, chatml, hf); "
            "for messages run lm-eval with --apply_chat_template",
        )
    return value
