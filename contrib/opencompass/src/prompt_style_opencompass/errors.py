"""The bridge's error."""

from __future__ import annotations

from prompt_style import PromptStyleError


class OpenCompassExportError(PromptStyleError):
    """A task, an option or a record that cannot be written for OpenCompass (or
    read back by the classes of an exported config), with where and what to do."""
