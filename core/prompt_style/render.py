"""Rendering records of a resolved task with plain Python.

A :class:`TaskRenderer` (built by :func:`~prompt_style.load_task`) holds only
picklable objects (extractors keep their Jinja source and compile lazily in each
process), so harnesses can ship it to worker processes. Few-shot examples are
extracted and formatted once per example.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import FieldError, PromptStyleError, RenderError, cut
from .fields.targets import gold_resolver
from .safe.limits import _SCOPE
from .types import Dialogue, Sample

__all__ = ["RenderedPrompt", "TaskRenderer"]


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
    extra: dict[str, Any] | None = None
    """More fields the style reports (``answer_choices`` for task-template files)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready view: ``index``, ``text``, ``messages``, ``continuations``,
        ``target``, ``token_ids`` when the meta template gives them, and the
        style's ``extra`` fields."""
        out = {
            "index": self.index,
            "text": self.text,
            "messages": self.messages,
            "continuations": list(self.continuations),
            "target": self.target,
        }
        if self.token_ids is not None:
            out["token_ids"] = self.token_ids
        if self.extra:
            out.update(self.extra)
        return out


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
        f"gave {type(value).__name__} {cut(value)}, not a list of choices",
        key="doc_to_choice",
        hint="use a single {{ expression }} such as '{{choices}}' to keep the list",
    )


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
        allow_null_target: bool = False,
        limits: Any = None,
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
        self.allow_null_target = allow_null_target
        """Whether a generation record may have a null target (the task's ``allow_null_target``)."""
        self.limits = limits
        """Jinja budgets for this task's templates (``load_task(limits=...)``); ``None``: the defaults."""
        self._setup()

    def _setup(self) -> None:
        get = self.extractors.get
        self._text = get("doc_to_text")
        self._choice = get("doc_to_choice")
        self._target = get("doc_to_target")
        self._description = get("description")
        # The gold answer is resolved here, from the task's fields, before any style runs.
        self._gold = gold_resolver(self._target)
        # A style that reports the target as text (task_template) says it needs no gold index.
        self._needs_gold = getattr(self.style, "needs_gold", True)
        self._shots: list[Sample | None] = [None] * len(self.pool)
        self._style_format = self.style.format
        self._meta_apply = self.meta.apply
        self._select = self.retriever.select

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if not key.startswith("_")}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    def _plugin_label(self, hook: str) -> str:
        info = self.plugins.get(hook) or {}
        name = info.get("name")
        if not name:
            return hook
        dist = info.get("distribution")
        return f"{hook} {name!r}" + (f" ({dist} {info.get('version')})" if dist else "")

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
                    if choices is None:
                        raise FieldError(
                            "gave null instead of the list of choices",
                            key=key,
                            hint="fix the record, or point doc_to_choice at the field that holds the choices",
                        )
                    choices = _choices(choices)
                if None in choices:
                    raise FieldError(
                        f"choice {choices.index(None)} is null, so it would read 'None'",
                        key=key,
                        hint="fix the record; every choice needs a text",
                    )
            gold = None
            if self._target is not None:
                key = "doc_to_target"
                target = self._target(record)
                if target is None or type(target) is list and None in target:
                    self._null_target(target, choices)
                if choices is not None and target is not None and self._needs_gold:
                    if type(target) is int and 0 <= target < len(choices):
                        gold = target  # the common case, without a call
                    else:
                        gold = self._gold(target, choices)
            if description and self._description is not None:
                key = "description"
                value = self._description(record)
                text = "" if value is None else str(value)
        except PromptStyleError:
            raise
        except Exception as exc:  # user callables and plugin extractors
            raise FieldError(f"raised {type(exc).__name__}: {cut(str(exc), 300)[1:-1]}", key=key) from exc
        return Sample(index, record, question, choices, target, text, gold=gold)

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
                hint="fix the record; if records without a reference are expected, "
                "set allow_null_target: true in the task (few-shot examples always need one)",
            )

    def _shot(self, i: int) -> Sample:
        shot = self._shots[i]
        if shot is None:
            try:
                shot = self.sample(self.pool[i], i, description=False)
                if shot.target is None and self._target is not None:
                    raise FieldError(
                        "gave null, so the example's answer would read 'None'",
                        key="doc_to_target",
                        hint="few-shot examples need their answers: fix the record or choose other examples",
                    )
                self._shots[i] = shot
            except PromptStyleError as exc:
                exc.message = f"few-shot example: {exc.message}"
                raise exc.locate(split=self.pool_split, index=i) from None
        return shot

    def render(self, record: Mapping[str, Any], index: int) -> RenderedPrompt:
        """Render one record; ``index`` is its position in the evaluated split.

        :raises PromptStyleError: naming the key and the record, for bad data.
        """
        token = _SCOPE.set(self.limits) if self.limits is not None else None
        stage = "extract_field"
        try:
            sample = self.sample(record, index)
            stage = "retrieve_examples"
            ids = self._select(index, record)
            stage = "format_prompt"
            shots = [self._shot(i) for i in ids] if ids else ()
            formatted = self._style_format(sample, shots)
            stage = "apply_meta_template"
            made = self._meta_apply(formatted.dialogue)
        except PromptStyleError as exc:
            exc.locate(key=_STAGE_KEYS[stage])
            line = self.lines.get(exc.key or "") or self.lines.get((exc.key or "").split(".")[0])
            raise exc.locate(split=self.split, index=index, file=self.source, line=line) from None
        except Exception as exc:  # a plugin's bug, reported with where it happened
            raise RenderError(
                f"{self._plugin_label(stage)} raised {type(exc).__name__}: {cut(str(exc), 300)[1:-1]}",
                key=_STAGE_KEYS[stage],
                split=self.split,
                index=index,
                file=self.source,
                line=self.lines.get(_STAGE_KEYS[stage]),
            ) from exc
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
            formatted.dialogue,
            made.token_ids,
            formatted.extra,
        )
