"""The task: ``inspect eval prompt_style_inspect/task -T task_file=TASK [-T option=value ...]``.

Any task file prompt-style reads (its own YAML, an lm-evaluation-harness task
file, an OpenCompass dataset config, a task-template file) with the options of
``prompt-style render`` as ``-T`` arguments: the records of its evaluated split
become samples whose input is the rendered prompt — byte for byte what
``prompt-style render`` gives for the same options — scored by the answer the
style asks for. inspect_ai's own options apply as ever: ``--limit``,
``--sample-id``, ``--epochs``, ``--model``, ``--solver``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig

from prompt_style import PromptStyleError

from .dataset import cli_values, load, task_samples
from .errors import in_inspect
from .scorer import style_answer
from .solver import render

__all__ = ["prompt_style_task"]


@task(name="task")
def prompt_style_task(
    task_file: str,
    style: str | None = None,
    style_options: dict[str, Any] | None = None,
    meta: Any = None,
    meta_options: dict[str, Any] | None = None,
    model_args: Any = None,
    shots: int | None = None,
    seed: int | None = None,
    data: Any = None,
    trust_code: bool | None = None,
    template: Any = None,
    task_format: str | None = None,
    system_instruction: str | None = None,
    fewshot_as_multiturn: bool | None = None,
    mode: str | None = None,
    data_root: str | None = None,
    input: str = "auto",
    name: str | None = None,
    **unknown: Any,
) -> Task:
    """A prompt-style task as an inspect_ai task.

    :param task_file: the task file (any format prompt-style reads).
    :param style: a style replacing the task's template (``mcq::gpqa``, ``cloze``...).
    :param style_options: options of the style, over the task's template options.
    :param meta: the meta template (default ``plain``: the prompt as one user
        message; ``messages`` or a chat format: the conversation as messages).
    :param meta_options: options of the meta template.
    :param model_args: lm-evaluation-harness's model args (``chat_template=...``).
    :param shots: the number of few-shot examples.
    :param seed: the seed of random retrieval.
    :param data: a split's records, ``SPLIT=PATH`` (several joined by ``,``).
    :param trust_code: let the task file run code (lm-eval ``!function``, OpenCompass ``.py``).
    :param template: which of a task-template file's templates.
    :param task_format: the task file's format, when detection should not decide.
    :param system_instruction: text starting the system message.
    :param fewshot_as_multiturn: with a chat meta template, examples as turns (default) or not.
    :param mode: ``gen`` for tasks with modes (OpenCompass perplexity tasks cannot run here).
    :param data_root: where task-template files find their data.
    :param input: ``auto`` (messages when the meta template gives them), ``messages`` or ``text``.
    :param name: the task's name in inspect_ai's logs (default: the prompt-style task's name).
    :raises PromptStyleInspectError: (inspect_ai's one-line error) for a task,
        an option or a record prompt-style cannot use; its ``error`` is the
        typed :class:`prompt_style.PromptStyleError`.
    """
    options = {
        "style": style,
        "style_options": style_options,
        "meta": meta,
        "meta_options": meta_options,
        "model_args": model_args,
        "shots": shots,
        "seed": seed,
        "data": data,
        "trust_code": trust_code,
        "template": template,
        "task_format": task_format,
        "system_instruction": system_instruction,
        "fewshot_as_multiturn": fewshot_as_multiturn,
        "mode": mode,
        "data_root": data_root,
    }
    given = {key: value for key, value in cli_values(options).items() if value is not None}
    if isinstance(task_file, list):  # a path with a comma, split by inspect_ai
        task_file = ",".join(map(str, task_file))
    unknown.pop("model", None)  # inspect_ai offers every task the model; this one does not need it
    try:
        if unknown:
            given.update(unknown)  # task_options names the first unknown one, with a did-you-mean
        loaded = load(task_file, where="-T", **given)
        source = {"file": str(Path(task_file).resolve()), "options": given}
        samples = task_samples(loaded, input=input, source=source)
    except PromptStyleError as exc:
        raise in_inspect(exc) from None
    until = loaded.config.until
    return Task(
        dataset=MemoryDataset(samples, name=loaded.name, location=str(Path(task_file).resolve())),
        solver=render(),
        scorer=style_answer(),
        config=GenerateConfig(stop_seqs=list(until)) if until else GenerateConfig(),
        name=name or loaded.name,
        metadata={"prompt_style": {"task_file": str(task_file), "options": given, "plugins": _plugins(loaded)}},
    )


def _plugins(task: Any) -> dict[str, Any]:
    """Which plugin, distribution and version served each hook (JSON-ready)."""
    out = {}
    for hook, used in task.plugins.items():
        out[hook] = used if isinstance(used, (str, int, float, bool, type(None))) else str(used)
    return out
