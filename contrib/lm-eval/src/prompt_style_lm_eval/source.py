"""Which task file and which prompt-style options an lm-evaluation-harness task config names.

Two kinds of task file name :class:`~prompt_style_lm_eval.task.PromptStyleTask`
as their ``class``:

* a task written by ``prompt-style export lm-eval``: ``metadata.prompt_style_export``
  holds the exported task file and the :func:`~prompt_style.load_task` options,
  and ``dataset_kwargs.data_files`` the records copied next to it;
* an lm-evaluation-harness task file of the user's own with a
  ``metadata.prompt_style`` block (style, retriever, shots, meta template):
  prompt-style reads the task file itself (its reader applies the block) and
  renders the task's own fields.

Nothing here imports lm_eval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_style import TaskFileError

__all__ = ["EXPORT_KEY", "BLOCK_KEY", "MODEL_SIDE", "Source", "source_of"]

EXPORT_KEY = "prompt_style_export"
"""``metadata`` key of a task written by ``prompt-style export lm-eval``."""
BLOCK_KEY = "prompt_style"
"""``metadata`` key of the block a user adds to a task file of their own."""
MODEL_SIDE = ("meta", "meta_options", "system_instruction", "fewshot_as_multiturn")
"""Block keys applied when the task loads (the task-side ones are read by prompt-style's reader)."""


@dataclass
class Source:
    """What :class:`~prompt_style_lm_eval.runtime.Prompts` loads."""

    task: Path
    """The task file prompt-style reads."""
    options: dict[str, Any] = field(default_factory=dict)
    """:func:`~prompt_style.load_task` keyword arguments."""
    harness_data: bool = False
    """The records come from lm-eval's own dataset (a Hugging Face dataset, ``custom_dataset``):
    lm-eval downloads them and hands them to prompt-style."""
    expected_sha256: str | None = None
    """The exported task file's digest when it was exported."""


def source_of(config: Mapping[str, Any]) -> Source:
    """The task file and options an lm-eval task config (as lm-eval hands it to a task class) names.

    :raises TaskFileError: when the config has neither block, or the block is malformed.
    """
    metadata = config.get("metadata") if isinstance(config.get("metadata"), Mapping) else {}
    origin = metadata.get("config_source")
    task_file = Path(origin).resolve() if isinstance(origin, str) and origin != "inline" else None
    name = config.get("task")
    where = {"file": str(task_file) if task_file else None}
    if EXPORT_KEY in metadata:
        block = metadata[EXPORT_KEY]
        if not isinstance(block, Mapping) or not isinstance(block.get("task"), str):
            raise TaskFileError(
                "must be a mapping with the exported task file (task:) and its options",
                key=f"metadata.{EXPORT_KEY}",
                hint="export the task again with prompt-style export lm-eval",
                **where,
            )
        base = task_file.parent if task_file else Path.cwd()
        options = dict(block.get("options") or {})
        files = (config.get("dataset_kwargs") or {}).get("data_files") or {}
        if not isinstance(files, Mapping):
            raise TaskFileError("must map split names to files", key="dataset_kwargs.data_files", **where)
        if files:
            options["data"] = {str(split): _data_path(base, path) for split, path in files.items()}
        source = Path(block["task"])
        if not source.is_absolute():
            source = base / source
        if not source.is_file():
            raise TaskFileError(
                f"task {name!r} was exported from {source}, which is not there any more",
                key=f"metadata.{EXPORT_KEY}.task",
                hint="export the task again, or put the task file back",
                **where,
            )
        digest = block.get("sha256")
        return Source(source, options, False, digest if isinstance(digest, str) else None)
    block = metadata.get(BLOCK_KEY)
    if isinstance(block, Mapping):
        if task_file is None:
            raise TaskFileError(
                f"task {name!r}: a metadata.prompt_style block works in a task file (prompt-style reads the file)",
                key=f"metadata.{BLOCK_KEY}",
                hint="write the task as a YAML file and pass its folder with --include_path",
            )
        options: dict[str, Any] = {key: block[key] for key in MODEL_SIDE if block.get(key) is not None}
        options.update(trust_code=True, task_format="lm-eval")  # lm-eval runs the file's code anyway
        kwargs = config.get("dataset_kwargs") or {}
        local = config.get("dataset_path") == "json" and isinstance(kwargs, Mapping) and kwargs.get("data_files")
        return Source(task_file, options, harness_data=not local)
    raise TaskFileError(
        f"task {name!r} names prompt-style's task class but has no metadata.prompt_style block",
        key="class",
        hint="add metadata: {prompt_style: {style: ...}} to the task file, or write the task with "
        "prompt-style export lm-eval",
        **where,
    )


def _data_path(base: Path, value: Any) -> str | tuple[Path, ...]:
    """A ``data_files`` entry relative to the task folder: one file, or several."""
    if isinstance(value, (list, tuple)):
        return tuple(base / str(v) for v in value)
    return str(base / str(value))
