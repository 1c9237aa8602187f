"""The ``prompt_style`` block of an lm-evaluation-harness task file (under ``metadata:``).

A user who runs lm-evaluation-harness adds one block to a task file they already
have to lay its prompts out with an installed style, retriever and meta template:

.. code-block:: yaml

    class: !function prompt_style_lm_eval.task.PromptStyleTask
    metadata:
      prompt_style:
        style: mcq::mmlu
        retriever: {name: random, seed: 7}
        shots: 3

lm-evaluation-harness keeps ``metadata`` as free-form data, so the file stays a
valid lm-evaluation-harness task. The task-side keys (``style``, ``retriever``,
``shots``, ``seed``) shape the task: prompt-style reads them here, so
``prompt-style render`` shows what lm-evaluation-harness will send. The
model-side keys (``meta``, ``meta_options``, ``system_instruction``,
``fewshot_as_multiturn``) are checked here and applied by the harness bridge
(``prompt-style-lm-eval``); on the command line, ``--meta`` and the chat
options choose them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["BLOCK", "BLOCK_KEYS", "TASK_SIDE", "read_block"]

BLOCK = "metadata.prompt_style"
"""Where the block lives in a task file."""

BLOCK_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "style": ((str, Mapping), "the style laying out the task's own fields (a name, or a mapping like template:)"),
    "retriever": ((str, Mapping), "which few-shot examples each record gets (a name, or {name: ..., options})"),
    "shots": ((int,), "the number of few-shot examples (replaces num_fewshot)"),
    "seed": ((int,), "the seed of random retrieval (replaces lm-evaluation-harness's 1234)"),
    "meta": ((str, Mapping), "the meta template for runs without --apply_chat_template (default: plain)"),
    "meta_options": ((Mapping,), "options of the meta template"),
    "system_instruction": ((str,), "text starting the system message (lm-eval's --system_instruction wins)"),
    "fewshot_as_multiturn": ((bool,), "with a chat meta template, examples as user/assistant turns"),
}
"""The block's keys: what each accepts and what it does."""

TASK_SIDE = ("style", "retriever", "shots", "seed")
"""Keys that shape the task (read into ``TaskConfig``); the others are model-side."""

_TYPE_NAMES = {str: "a string", Mapping: "a mapping", int: "a whole number", bool: "true or false"}


def read_block(
    metadata: Any, problem: Callable[[str, str, str | None], None], suggest: Callable[[str], str | None]
) -> dict[str, Any]:
    """The checked block of a task file's ``metadata`` (``{}`` when there is none);
    each problem is reported through ``problem(key, message, hint)``."""
    if not isinstance(metadata, Mapping) or "prompt_style" not in metadata:
        return {}
    block = metadata["prompt_style"]
    if not isinstance(block, Mapping):
        problem(BLOCK, f"must be a mapping of {', '.join(BLOCK_KEYS)}, not {type(block).__name__}", None)
        return {}
    good: dict[str, Any] = {}
    for key, value in block.items():
        where = f"{BLOCK}.{key}"
        if key not in BLOCK_KEYS:
            problem(where, f"unknown key {key!r} in the prompt_style block", suggest(str(key)))
            continue
        types, _ = BLOCK_KEYS[key]
        wrong_bool = isinstance(value, bool) and bool not in types
        if not isinstance(value, types) or wrong_bool:
            expected = " or ".join(_TYPE_NAMES[t] for t in types)
            problem(where, f"must be {expected}, not {type(value).__name__} {value!r}", None)
            continue
        if key == "shots" and value < 0:
            problem(where, f"must be 0 or more, not {value}", None)
            continue
        good[key] = value
    return good
