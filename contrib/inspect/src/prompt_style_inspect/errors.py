"""prompt-style's errors as inspect_ai shows a user's mistake: one line, no traceback.

inspect_ai's command line prints a ``PrerequisiteError``'s message alone and a
traceback for anything else. The bridge's entry points (the task, the model
API) raise :class:`PromptStyleInspectError` for bad input: the one line
``prompt-style: error: FILE:LINE: KEY: record N: message (hint)``, with the
typed :class:`prompt_style.PromptStyleError` as its ``error`` (and cause).
"""

from __future__ import annotations

from prompt_style import PromptStyleError

try:  # where inspect_ai 0.3.285 keeps it; not a public name of inspect_ai
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # pragma: no cover - another inspect_ai: a traceback, but the same message

    class PrerequisiteError(Exception):  # type: ignore[no-redef]
        def __init__(self, message: str) -> None:
            super().__init__(message)
            self.message = message


__all__ = ["PromptStyleInspectError", "in_inspect"]


class PromptStyleInspectError(PrerequisiteError):
    """A prompt-style error, shown by inspect_ai as one line."""

    def __init__(self, error: PromptStyleError) -> None:
        super().__init__(f"prompt-style: error: {error}")
        self.error = error
        self.__cause__ = error

    def __str__(self) -> str:
        return str(self.message)


def in_inspect(exc: PromptStyleError) -> PromptStyleInspectError:
    """``exc`` as inspect_ai's command line shows a user's mistake."""
    return PromptStyleInspectError(exc)
