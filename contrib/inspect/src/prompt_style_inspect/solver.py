"""The solver: a sample's record rendered with a named style, meta template and retriever.

``render()`` inside ``prompt_style_inspect/task`` keeps the prompt the dataset
rendered (each record is rendered once) and generates. Given options —
``-S style=mcq::gpqa``, ``-S shots=3``, ``-S meta=messages`` — it renders the
sample's record again with the sample's task and those options, per record, so
every retriever sees the record it chooses examples for; given ``task_file``,
with that task. Samples not made by this bridge are rendered from their
metadata as the record (``FieldSpec(metadata=[...])``), numbered by their ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver

from prompt_style import PromptStyleError, RenderError, default_plugin_manager, task_options

from .dataset import META, answers_of, check_task, cli_values, key_of, load, record_of
from .errors import in_inspect
from .messages import check_input, state_messages

__all__ = ["render"]


def _record(state: TaskState) -> tuple[Mapping[str, Any], int]:
    meta = state.metadata.get(META)
    if meta is not None:
        record = record_of(meta)
        if record is None:
            raise RenderError(
                f"sample {state.sample_id!r}: its record cannot be read again in this process",
                hint="give the solver task_file=... or make the samples with record_to_sample",
            )
        return record, meta["index"]
    index = state.sample_id
    if isinstance(index, bool) or not isinstance(index, int):
        raise RenderError(
            f"sample {state.sample_id!r} was not made by prompt-style and has no whole-number id to index it by",
            hint="make the samples with prompt_style_inspect.record_to_sample, or give them ids 0, 1, ...",
        )
    return dict(state.metadata), index


def _options(state: TaskState, task_file: str | None, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if task_file is not None:
        return task_file, options
    meta = state.metadata.get(META) or {}
    source = meta.get("source")
    if source is None:
        raise RenderError(
            f"sample {state.sample_id!r}: no task file to render it with",
            hint="give the solver task_file=... (the sample was not made from a task file)",
        )
    return source["file"], {**source["options"], **options}


def _check(task_file: str | None, input: str, options: dict[str, Any]) -> None:
    """What can be checked before any sample: the options, the task file, the plugin names."""
    check_input(input)
    kwargs = task_options(options, where="-S")
    if task_file is not None:
        check_task(load(task_file, where="-S", **options))
        return
    manager = default_plugin_manager()
    if "style" in kwargs:
        _resolve(manager, "format_prompt", kwargs["style"], "style")
    meta = kwargs.get("meta")
    if isinstance(meta, str) and not Path(meta).suffix:  # a name, not a meta template file
        _resolve(manager, "apply_meta_template", meta, "meta")


def _resolve(manager: Any, hook: str, name: str, key: str) -> None:
    try:
        manager.resolve(hook, name)
    except PromptStyleError as exc:
        raise exc.locate(file="-S", key=key) from None


def _render_again(state: TaskState, task_file: str | None, input: str, options: dict[str, Any]) -> None:
    file, merged = _options(state, task_file, options)
    task = load(file, where="-S", **merged)
    check_task(task)
    record, index = _record(state)
    prompt = task.renderer.render(record, index)
    answers, _ = answers_of(prompt)
    state.messages = state_messages(prompt, input)
    meta = dict(state.metadata.get(META) or {})
    meta.update(index=index, answers=answers, target=prompt.target, key=key_of(task))
    meta["source"] = {"file": file, "options": merged}
    meta.setdefault("record", dict(record))
    state.metadata[META] = meta


@solver
def render(task_file: str | None = None, input: str = "auto", generate_reply: bool = True, **options: Any) -> Solver:
    """Render each sample's record with prompt-style, then generate.

    :param task_file: the task to render with; default: the sample's own task.
    :param input: ``auto``, ``messages`` or ``text``: how the prompt reaches the
        model (messages when the meta template gives them, else one user message).
    :param generate_reply: generate after rendering (``False`` to chain other solvers).
    :param options: ``prompt-style render``'s options (``style``, ``meta``,
        ``shots``, ``seed``, ...), over the sample's task's own.
    :raises PromptStyleInspectError: (inspect_ai's one-line error) for an option,
        a task file or a plugin name prompt-style cannot use, before any sample.
    """
    options = cli_values(options)
    if isinstance(task_file, list):  # a path with a comma, split by inspect_ai
        task_file = ",".join(map(str, task_file))
    try:
        _check(task_file, input, options)
    except PromptStyleError as exc:
        raise in_inspect(exc) from None
    again = task_file is not None or bool(options) or input != "auto"

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if again or META not in state.metadata:
            try:
                _render_again(state, task_file, input, options)
            except PromptStyleError as exc:
                raise in_inspect(exc) from None
        if generate_reply:
            return await generate(state)
        return state

    return solve
