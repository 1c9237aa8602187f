"""prompt-style's own task files: the keys of :class:`~prompt_style.TaskConfig`
(lm-evaluation-harness's ``doc_to_*`` names plus ``data``, ``template`` and
``retriever``), read one to one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import TaskFileError
from ..task import TaskConfig
from ..types import ReadOptions, TaskSource


@dataclass(frozen=True)
class NativeReader:
    """Reads any mapping no other reader claims (``fallback``)."""

    suffixes: tuple[str, ...] = (".yaml", ".yml", ".json")
    fallback: bool = True

    def detect(self, source: TaskSource) -> bool:
        return isinstance(source.data, Mapping)

    def read(self, source: TaskSource, options: ReadOptions) -> TaskConfig:
        if not isinstance(source.data, Mapping):
            raise TaskFileError(
                "prompt-style task files are YAML or JSON mappings",
                file=str(source.path) if source.path else None,
            )
        if options.template is not None:
            raise TaskFileError(
                f"--template {options.template!r} chooses among a task file's templates, "
                "but a prompt-style task file has one",
                file=str(source.path) if source.path else None,
                key="template",
                hint="leave --template out, or use --style to change the prompt style",
            )
        return TaskConfig.from_dict(source.data, base=source.base, path=source.path, lines=source.lines)
