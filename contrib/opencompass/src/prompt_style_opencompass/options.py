"""The exporter's options (``--export-option KEY=VALUE``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prompt_style import OptionError, check_options

ROUTES = ("auto", "plain", "retriever", "render")


@dataclass(frozen=True)
class ExportOptions:
    """What ``prompt-style export opencompass`` takes besides the render options."""

    route: str = "auto"
    """``auto`` (the first of ``plain``, ``retriever``, ``render`` that gives the
    task's prompts exactly), or one of them, forced: an error says why it cannot."""
    bake_meta: bool = False
    """Render route: apply an OpenCompass meta template with prompt-style and hand
    OpenCompass finished strings (a model without ``meta_template`` then receives
    them), instead of exporting it as the model's ``meta_template``."""
    verify: bool = True
    """Plain and retriever routes: load the written dataset config back with
    prompt-style and check that every record renders as the task does."""

    def __post_init__(self) -> None:
        if self.route not in ROUTES:
            raise OptionError(
                f"exporter 'opencompass': route must be one of {', '.join(ROUTES)}, not {self.route!r}",
                key="route",
            )


def export_options(options: Mapping[str, Any]) -> ExportOptions:
    """The ``--export-option`` values, checked."""
    return check_options(ExportOptions, dict(options), what="exporter 'opencompass'")
