"""A rendered prompt as the parts of a lighteval ``Doc``, without lighteval.

lighteval builds what a model receives from a ``Doc`` (``PromptManager``):

- plain text: ``"\\n\\n".join([system_prompt, instruction, *shots, query])``,
  each shot ``query + " " + gold.strip()``. With no system prompt, no
  instruction and no shots this is ``query`` alone, so a prompt the meta
  template gives as text (``plain``, ``chatml``, ``hf``...) is baked whole into
  ``query`` and lighteval sends it byte for byte.
- chat: the model's ``system_prompt`` as a system message, then per few-shot
  sample a user message (its ``query``) and an assistant message (its gold
  choice), then the ``query``. A prompt the meta template gives as messages
  only (``messages``) is mapped onto that: its user/assistant pairs become the
  doc's few-shot samples, its last user message the query, and its system
  message, which lighteval takes from the model and not from the task, is the
  task's :attr:`DocParts.system` (the same for every record, or an error).

Scoring: multiple choice scores the continuations (already starting with the
delimiter, ``" A"``) after the prompt, the gold being the target; a
generation task's references are the choices, all gold.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_style import OptionError, PromptStyleError, RecordErrors, RenderedPrompt, RenderError, Task

__all__ = ["DocParts", "RenderedTask", "doc_parts", "render_parts", "check_kind", "rows_dataset", "ROW_KEY"]

ROW_KEY = "ps_index"
"""The one column of the dataset lighteval reads: the record's index."""


@dataclass(slots=True)
class DocParts:
    """What a lighteval ``Doc`` holds for one rendered record (treat as read-only;
    not frozen: a frozen dataclass costs several times more to create, once per record)."""

    query: str
    choices: tuple[str, ...]
    gold: int | tuple[int, ...]
    multiple_choice: bool
    """Whether the choices are continuations to score (else references of a generation)."""
    shots: tuple[tuple[str, str], ...] = ()
    """Chat only: ``(user, assistant)`` pairs, lighteval's few-shot samples."""
    system: str | None = None
    """Chat only: the system message lighteval must get from the model's ``system_prompt``."""


def check_kind(task: Any) -> None:
    """Refuse, before any record, a task lighteval's requests cannot express."""
    if task.multiturn:
        raise OptionError(
            "the task's records are multi-turn dialogues (one request per model reply), "
            "which lighteval's requests cannot express",
            key="template",
        )
    if task.config.output_type == "loglikelihood_rolling":
        raise OptionError(
            "loglikelihood_rolling tasks (the perplexity of whole documents) are not exported to lighteval",
            key="output_type",
        )


def check_prompt(prompt: RenderedPrompt) -> None:
    """Refuse a prompt that has no lighteval request (a task's prompts are all of one kind)."""
    if prompt.contexts is not None:
        raise RenderError(
            "a multiple-input record (one context per choice, as winogrande) has no lighteval "
            "request: lighteval scores choices after one context",
            index=prompt.index,
        )
    if prompt.candidates is not None:
        raise RenderError(
            "perplexity prompts (one whole prompt per label) have no lighteval request",
            index=prompt.index,
            hint="use mode=gen",
        )


def _scoring(continuations: tuple[str, ...], target: Any, index: int) -> tuple[tuple[str, ...], Any]:
    """The doc's choices and gold: the continuations and the target, or a generation's references."""
    if continuations:
        if type(target) is int and 0 <= target < len(continuations):  # the usual case, checked at once
            return continuations, target
        golds = target if isinstance(target, (list, tuple)) else [target]
        for gold in golds:
            if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(continuations):
                raise RenderError(f"the target {gold!r} is not the index of a continuation", index=index)
        return tuple(continuations), tuple(golds) if isinstance(target, (list, tuple)) else target
    references = target if isinstance(target, (list, tuple)) else ["" if target is None else target]
    if not references:
        raise RenderError("the target is an empty list of references", index=index)
    choices = tuple(str(r) for r in references)
    return choices, 0 if len(choices) == 1 else tuple(range(len(choices)))


def _text(message: Any, index: int) -> str:
    content = message.get("content")
    if not isinstance(content, str):
        raise RenderError(
            f"a {message.get('role')} message's content is not text: lighteval's chat requests hold text only",
            index=index,
        )
    extra = sorted(set(message) - {"role", "content"})
    if extra:
        raise RenderError(
            f"a {message.get('role')} message has the key(s) {', '.join(extra)}, which lighteval's messages "
            "have no place for",
            index=index,
        )
    return content


def _not_a_conversation(messages: Sequence[Any], index: int) -> RenderError:
    roles = ", ".join(str(m.get("role")) for m in messages) or "empty"
    if len(messages) > 1 and messages[-1].get("role") == "assistant" and messages[-2].get("role") == "user":
        return RenderError(
            f"the conversation ({roles}) ends with an assistant prefill (the task's gen_prefix), which "
            "lighteval's requests cannot send: they end with the user's message",
            index=index,
            hint="use meta=plain to send the prompt, prefill included, as one text",
        )
    return RenderError(
        f"lighteval builds a conversation as an optional system message, user/assistant pairs "
        f"and a last user message; this one is {roles}",
        index=index,
        hint="use meta=plain to send the prompt as one text, or fewshot_as_multiturn=false",
    )


_PATTERNS: dict[tuple[int, bool], list[str]] = {}  # (messages, starts with system) -> the roles lighteval builds


def _pattern(count: int, system: bool) -> list[str]:
    pattern = _PATTERNS.get((count, system))
    if pattern is None:
        start = 1 if system else 0
        pairs = ["user", "assistant"] * ((count - start) // 2)
        pattern = _PATTERNS[(count, system)] = (["system"] if system else []) + pairs + ["user"]
    return pattern


def _turns(messages: Sequence[Any], index: int) -> tuple[str | None, tuple[tuple[str, str], ...], str]:
    try:
        roles = [m["role"] for m in messages]
        texts = [m["content"] for m in messages]
    except (KeyError, TypeError):
        raise _not_a_conversation(messages, index) from None
    system = bool(roles) and roles[0] == "system"
    if len(roles) % 2 != (0 if system else 1) or roles != _pattern(len(roles), system):
        raise _not_a_conversation(messages, index)
    for message, content in zip(messages, texts):
        if type(content) is not str or len(message) != 2:  # the usual case, checked at once
            _text(message, index)
    start = 1 if system else 0
    shots = tuple(zip(texts[start:-1:2], texts[start + 1 : -1 : 2]))
    return (texts[0] if system else None), shots, texts[-1]


def doc_parts(prompt: RenderedPrompt) -> DocParts:
    """The parts of the ``Doc`` for one rendered record: its text baked whole into
    the query when the meta template gives text, else its messages mapped onto
    lighteval's few-shot samples.

    :raises RenderError: naming the record, for a prompt lighteval cannot send as rendered.
    """
    check_prompt(prompt)
    continuations = prompt.continuations
    choices, gold = _scoring(continuations, prompt.target, prompt.index)
    scored = bool(continuations)
    if prompt.text is not None:
        return DocParts(prompt.text, choices, gold, scored)
    if prompt.messages is None:
        raise RenderError("the meta template gives neither text nor messages", index=prompt.index)
    system, shots, query = _turns(prompt.messages, prompt.index)
    return DocParts(query, choices, gold, scored, shots, system)


@dataclass
class RenderedTask:
    """A task's records as lighteval gets them: text prompts, each the whole
    query (``text``), or conversations mapped onto lighteval's few-shot samples
    (``chat``), and the system message the model must be given (chat only)."""

    text: list[RenderedPrompt] | None
    chat: list[DocParts] | None
    system: str | None
    multiple_choice: bool
    built: list[Any] | None = None
    """What ``render_parts``'s ``build`` made of each record, in the same pass."""

    def __len__(self) -> int:
        return len(self.text if self.text is not None else self.chat or ())

    def parts(self, index: int) -> DocParts:
        """Record ``index``'s doc parts."""
        if self.chat is not None:
            return self.chat[index]
        return doc_parts(self.text[index])  # type: ignore[index]


def render_parts(task: Task, build: Callable[[RenderedPrompt, DocParts | None], Any] | None = None) -> RenderedTask:
    """Every record of the task's evaluated split, rendered once, as lighteval gets it.

    :param build: called for every record in the rendering pass, with the prompt and
        (for a conversation) its doc parts; what it returns is kept in
        :attr:`RenderedTask.built` (the bridge makes each record's ``Doc`` there,
        while the record is at hand, rather than in a second pass over them all).

    :raises PromptStyleError: naming the record, for a record that lighteval cannot
        send as rendered, or whose system message differs from the first record's
        (lighteval has one system prompt per model); :class:`RecordErrors` naming every
        record that does not render, after the pass over them all.
    """
    check_kind(task)
    where = str(task.config.path) if task.config.path else None
    errors: list[PromptStyleError] = []
    collecting = gc.isenabled()
    gc.disable()  # many small objects and no cycles: the collector would only rescan them
    try:
        prompts = iter(task.render(errors=errors))
        first = next(prompts, None)
        if first is None:
            _no_bad_records(task, errors, 0)
            raise OptionError("the evaluated split has no records", key=f"data.{task.config.test_split}")
        # What holds for one prompt of a task holds for all (its style, mode and meta
        # template are the task's): checked once, not per record. The renderer has
        # checked every target already.
        part = doc_parts(first)
        built: list[Any] | None = None
        if first.text is not None:  # text prompts: each is the whole query, as rendered
            if build is None:
                texts = [first, *prompts]
                _no_bad_records(task, errors, len(texts))
                return RenderedTask(texts, None, None, part.multiple_choice)
            texts = [first]
            built = [build(first, None)]
            for prompt in prompts:
                texts.append(prompt)
                built.append(build(prompt, None))
            _no_bad_records(task, errors, len(texts))
            return RenderedTask(texts, None, None, part.multiple_choice, built)
        parts = [part]
        if build is not None:
            built = [build(first, part)]
        for prompt in prompts:
            part = doc_parts(prompt)
            if part.system != parts[0].system:
                raise OptionError(
                    "this record's system message differs from record 0's: lighteval sends one system "
                    "prompt per model (system_prompt), not one per record",
                    key="description",
                    index=prompt.index,
                    hint="use meta=plain, or a description that is the same for every record",
                )
            parts.append(part)
            if built is not None:
                built.append(build(prompt, part))  # type: ignore[misc]
        _no_bad_records(task, errors, len(parts))
        return RenderedTask(None, parts, parts[0].system, parts[0].multiple_choice, built)
    except PromptStyleError as exc:
        raise exc.locate(file=where) from None
    finally:
        if collecting:
            gc.enable()


def _no_bad_records(task: Task, errors: list[PromptStyleError], rendered: int) -> None:
    """Raise :class:`RecordErrors` for the records that did not render, all of them
    (lighteval's rows are the records by position: none may be missing)."""
    if errors:
        raise RecordErrors(errors, total=rendered + len(errors), key=f"data.{task.config.test_split}")


def _cache_root() -> Path:
    root = os.environ.get("PROMPT_STYLE_LIGHTEVAL_CACHE")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "prompt-style" / "lighteval"


def rows_dataset(count: int, root: Path | None = None) -> Path:
    """A local dataset lighteval loads as ``hf_repo``: one ``test`` split of
    ``count`` rows ``{"ps_index": i}``. lighteval hands each row to the prompt
    function, which renders record ``i`` from prompt-style's own reading of the
    data (so records reach the templates as prompt-style reads them, not as
    Arrow columns); the folder depends on ``count`` only and is shared."""
    folder = (root or _cache_root()) / f"rows-{count}"
    data = folder / "test.jsonl"
    if data.is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".test.jsonl.{os.getpid()}"
    partial.write_text("".join(json.dumps({ROW_KEY: i}) + "\n" for i in range(count)), encoding="utf-8")
    partial.replace(data)  # atomic: a concurrent run sees the whole file or none
    return folder
