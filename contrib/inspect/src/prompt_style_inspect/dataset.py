"""inspect_ai samples from a prompt-style task: one sample per record, rendered once.

Each sample's input is the rendered prompt (:mod:`.messages`), its target the
gold answer as the style shows it (``"B"``, ``"2"``, the choice text, or the
reference of a generation task), its id the record's index in the evaluated
split (as in ``prompt-style render``), and its metadata under ``prompt_style``
what the solver and the scorer need: the record's index, the answers the style
offers, the target, how to load the task again, and (for samples made by
:func:`record_to_sample` from records of the user's dataset) the record itself.
"""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

from prompt_style import (
    OptionError,
    PromptStyleError,
    RecordErrors,
    RenderedPrompt,
    RenderError,
    Task,
    load_task,
    task_options,
)

from .messages import check_input, prompt_input

__all__ = ["META", "cli_values", "load", "record_to_sample", "task_samples", "answers_of", "task_of", "record_of"]

META = "prompt_style"
"""The sample metadata key under which the bridge keeps what it knows of a sample."""

_LOADED: dict[str, Task] = {}  # tasks known in this process: by file and options, or by identity
_KEYS: dict[int, str] = {}  # id(task) -> its key in _LOADED


def _key(task_file: str | Path, options: Mapping[str, Any]) -> str:
    return json.dumps([str(Path(task_file).resolve()), options], sort_keys=True, default=str)


def key_of(task: Task) -> str:
    """The key under which a task is known in this process (see :func:`task_of`)."""
    key = _KEYS.get(id(task))
    if key is None:
        key = f"object:{id(task)}"
        _LOADED[key] = task
        _KEYS[id(task)] = key
    return key


def task_of(meta: Mapping[str, Any]) -> Task | None:
    """The task a sample was rendered with (its metadata's ``key``, else its ``source``
    loaded again), or ``None`` when it is not known in this process."""
    task = _LOADED.get(meta.get("key") or "")
    source = meta.get("source")
    if task is None and source:
        try:
            task = load(source["file"], **source["options"])
        except PromptStyleError:
            return None
    return task


# Options whose values are text: inspect_ai's -T/-S split a value at its commas into a
# list, which these take back as the text written.
_TEXT_OPTIONS = ("style", "meta", "model_args", "system_instruction", "task_format", "template", "data_root")


def cli_values(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as inspect_ai's ``-T``/``-S`` hand them over, with text values whose
    commas inspect_ai read as a list put back together (``system_instruction=Be brief, please``)."""
    out = dict(options)
    for key in _TEXT_OPTIONS:
        value = out.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out[key] = ",".join(value)
    return out


def load(task_file: str | Path, *, where: str = "task options", **options: Any) -> Task:
    """Load a task with ``prompt-style render``'s options (``style``, ``meta``,
    ``shots``, ``data``, ...; see :func:`prompt_style.task_options`), once per
    process for the same file and options.

    :raises PromptStyleError: naming the file, the key or the option.
    """
    kwargs = task_options(options, where=where)
    key = _key(task_file, kwargs)
    task = _LOADED.get(key)
    if task is None:
        task = _LOADED[key] = load_task(task_file, **kwargs)
        _KEYS[id(task)] = key
    return task


def check_task(task: Task) -> None:
    """Refuse, before any record, a task inspect_ai cannot run as generation."""
    if task.multiturn:
        raise OptionError(
            "the task's records are multi-turn dialogues (one request per model reply), "
            "which the inspect_ai bridge does not run",
            key="template",
            hint="render it with prompt-style render --replies, or use a single-request style",
        )
    if task.config.output_type == "loglikelihood_rolling":
        raise OptionError(
            "the task is scored by the log-likelihood of whole documents (loglikelihood_rolling), "
            "which inspect_ai, a generating harness, does not do",
            key="output_type",
        )


_ANSWERS: dict[tuple[str, ...], list[str]] = {}  # continuations -> answers, shared by the samples


def check_prompt(prompt: RenderedPrompt) -> None:
    """Refuse a prompt inspect_ai, a generating harness, cannot send as rendered: one
    scored by log-likelihood only (a task's prompts are all of one kind)."""
    if prompt.contexts is not None:
        raise RenderError(
            "a multiple-input record (one context per choice, as winogrande) is scored by "
            "log-likelihood, which inspect_ai, a generating harness, does not do",
            index=prompt.index,
        )
    if prompt.candidates is not None:
        raise RenderError(
            "perplexity prompts (one prompt per label) are scored by log-likelihood, "
            "which inspect_ai, a generating harness, does not do",
            index=prompt.index,
            hint="use mode=gen",
        )


def _answers(continuations: tuple[str, ...]) -> list[str]:
    answers = _ANSWERS.get(continuations)
    if answers is None:
        answers = [c.strip() for c in continuations]
        if len(_ANSWERS) < 4096:
            _ANSWERS[continuations] = answers
    return answers


def _gold(answers: list[str] | None, target: Any, index: int) -> Any:
    """The target as text: the gold answer (a list when several are gold), or the reference."""
    if answers is None:
        if isinstance(target, (list, tuple)):
            return [str(t) for t in target]
        return "" if target is None else str(target)
    if type(target) is int and 0 <= target < len(answers):  # the usual case, checked at once
        return answers[target]
    golds = target if isinstance(target, (list, tuple)) else [target]
    for gold in golds:
        if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(answers):
            raise RenderError(f"the target {gold!r} is not the index of a continuation", index=index)
    texts = [answers[g] for g in golds]
    return texts if isinstance(target, (list, tuple)) else texts[0]


def answers_of(prompt: RenderedPrompt) -> tuple[list[str] | None, Any]:
    """The answers a style offers (its continuations without the delimiter; ``None``
    for generation) and the gold answer as text (a list when several are gold).

    :raises RenderError: naming the record, for a prompt scored by log-likelihood
        only, or a target that is not the index of a continuation.
    """
    check_prompt(prompt)
    answers = _answers(prompt.continuations) if prompt.continuations else None
    return answers, _gold(answers, prompt.target, prompt.index)


def _sample(prompt: RenderedPrompt, meta: dict[str, Any], input: str) -> Sample:
    answers, target = answers_of(prompt)
    meta["index"] = prompt.index
    meta["answers"] = answers
    meta["target"] = prompt.target
    return Sample(input=prompt_input(prompt, input), target=target, id=prompt.index, metadata={META: meta})


_RECORDS: dict[str, list[Mapping[str, Any]]] = {}  # a task's evaluated split, read when a solver renders again


def record_of(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A sample's record: kept in its metadata (``record_to_sample``), or read again
    from its task's evaluated split by index (a whole task's samples keep no copy)."""
    record = meta.get("record")
    if record is not None:
        return record
    task = task_of(meta)
    if task is None:
        return None
    key = key_of(task)
    records = _RECORDS.get(key)
    if records is None:
        records = _RECORDS[key] = list(task.records())
    index = meta.get("index")
    return records[index] if isinstance(index, int) and 0 <= index < len(records) else None


def task_samples(
    task: Task, *, input: str = "auto", source: Mapping[str, Any] | None = None, limit: int | None = None
) -> list[Sample]:
    """One sample per record of the task's evaluated split, in order, each rendered
    once (the renderer's own loop, as ``prompt-style render`` runs it).

    :param task: a loaded task.
    :param input: ``auto``, ``messages`` or ``text`` (:data:`~.messages.INPUTS`).
    :param source: ``{"file": ..., "options": ...}`` that load the task again
        (kept in the metadata, for a solver that renders with other options).
    :param limit: only the first ``limit`` records.
    :raises RecordErrors: naming every record that does not render, after the pass
        over them all.
    """
    check_input(input)
    check_task(task)
    name, key, source = task.name, key_of(task), dict(source) if source is not None else None
    out: list[Sample] = []
    errors: list[PromptStyleError] = []
    prompts = iter(task.render(limit=limit, errors=errors))
    first = next(prompts, None)
    if first is None:
        _no_bad_records(task, errors, 0)
        return out
    # What holds for one prompt of a task holds for all (its style, mode and meta
    # template are the task's): checked once, not per record.
    check_prompt(first)
    prompt_input(first, input)  # input=messages with a meta template that gives text only is an error
    as_text = input == "text" or first.messages is None
    collecting = gc.isenabled()
    gc.disable()  # many small objects and no cycles: the collector would only rescan them
    try:
        known = _ANSWERS
        for prompt in itertools.chain((first,), prompts):
            index, target, continuations = prompt.index, prompt.target, prompt.continuations
            if continuations:
                answers = known.get(continuations) or _answers(continuations)
                # the renderer checked the target: an index of a continuation, or a list of them
                gold = answers[target] if type(target) is int else _gold(answers, target, index)
            else:
                answers, gold = None, _gold(None, target, index)
            sample_input = prompt.text if as_text else prompt_input(prompt, input)
            if sample_input is None:
                raise RenderError("the meta template gives no text", index=index, hint="use input=auto")
            meta = {"task": name, "key": key, "source": source, "index": index, "answers": answers, "target": target}
            out.append(Sample(input=sample_input, target=gold, id=index, metadata={META: meta}))
    finally:
        if collecting:
            gc.enable()
    _no_bad_records(task, errors, len(out))
    return out


def _no_bad_records(task: Task, errors: list[PromptStyleError], rendered: int) -> None:
    """Raise :class:`RecordErrors` for the records that did not render, all of them."""
    if errors:
        config = task.config
        raise RecordErrors(
            errors,
            total=rendered + len(errors),
            key=f"data.{config.test_split}",
            file=str(config.path) if config.path else None,
        )


def record_to_sample(
    task: Task | str | Path,
    *,
    input: str = "auto",
    index_field: str | None = None,
    **options: Any,
) -> Callable[[dict[str, Any]], Sample]:
    """A ``record_to_sample`` function for inspect_ai's ``json_dataset``,
    ``csv_dataset``, ``hf_dataset``...: each record rendered with the task.

    :param task: a loaded task, or a task file loaded with ``options``.
    :param input: ``auto``, ``messages`` or ``text`` (:data:`~.messages.INPUTS`).
    :param index_field: the record field holding the record's index; default: the
        records are numbered 0, 1, ... in the order the function sees them (one
        function per dataset). Retrievers see the index: ``random`` seeds each
        record's draw with it, and a pool that is the evaluated split leaves the
        record itself out by it.
    :param options: ``prompt-style render``'s options when ``task`` is a file.
    :returns: ``fn(record) -> Sample``.
    """
    check_input(input)
    source = None
    if not isinstance(task, Task):
        source = {"file": str(Path(task).resolve()), "options": dict(options)}
        task = load(task, **options)
    elif options:
        raise OptionError(f"options {sorted(options)} given with a task already loaded", key=next(iter(options)))
    check_task(task)
    render = task.renderer.render
    counter = iter(range(1 << 62))
    loaded = task
    key = key_of(task)

    def to_sample(record: dict[str, Any]) -> Sample:
        if index_field is None:
            index = next(counter)
        else:
            index = record.get(index_field)
            if isinstance(index, bool) or not isinstance(index, int):
                raise RenderError(f"field {index_field!r} is {index!r}, not a record index", key=index_field)
        meta = {"task": loaded.name, "key": key, "source": source, "record": dict(record)}
        return _sample(render(record, index), meta, input)

    return to_sample
