"""Golden files: a rendered prompt compared byte for byte with a file kept in the repository.

``golden.check("mmlu-1shot.txt", result.text)`` compares; run pytest with
``--prompt-style-update-goldens`` (or ``PROMPT_STYLE_UPDATE_GOLDENS=1``) to
write the files instead, then review the diff and commit them. Text is kept as
it is (UTF-8, no newline added); anything else — a
:class:`~prompt_style.RenderedPrompt`, a list of them, a mapping — is kept as
indented JSON with sorted keys, so a diff shows what changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import prompt_style

__all__ = ["Golden", "UPDATE_OPTION", "UPDATE_ENV", "as_text"]

UPDATE_OPTION = "--prompt-style-update-goldens"
UPDATE_ENV = "PROMPT_STYLE_UPDATE_GOLDENS"


def _jsonable(value: Any) -> Any:
    if isinstance(value, prompt_style.RenderedPrompt):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def as_text(value: Any) -> str:
    """How a value is kept in a golden file."""
    if isinstance(value, str):
        return value
    return json.dumps(_jsonable(value), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class Golden:
    """Golden files under ``folder`` (by default ``golden/`` beside the test file)."""

    def __init__(self, folder: Path, *, update: bool = False) -> None:
        self.folder = Path(folder)
        self.update = update
        self.written: list[Path] = []

    def path(self, name: str) -> Path:
        path = (self.folder / name).resolve()
        if self.folder.resolve() not in path.parents:
            raise ValueError(f"golden file {name!r} is outside {self.folder}")
        return path

    def check(self, name: str, value: Any) -> None:
        """Assert that ``value`` is what the golden file ``name`` holds (or write it when updating)."""
        text = as_text(value)
        path = self.path(name)
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_bytes() != text.encode("utf-8"):
                path.write_bytes(text.encode("utf-8"))  # byte for byte: no newline translation
                self.written.append(path)
            return
        if not path.exists():
            raise AssertionError(
                f"no golden file {path}: run pytest {UPDATE_OPTION} (or {UPDATE_ENV}=1) to write it, then review it"
            )
        expected = path.read_bytes().decode("utf-8")
        if expected != text:
            import difflib

            diff = difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "rendered"
            )
            shown = "".join(line if line.endswith("\n") else line + "\\ (no newline at end)\n" for line in diff)
            raise AssertionError(
                f"{path} differs from what was rendered (rerun with {UPDATE_OPTION} to accept the new output):\n"
                + shown
            )


def update_requested(option: bool) -> bool:
    return option or os.environ.get(UPDATE_ENV, "") not in ("", "0", "false", "no")
