"""The ``opencompass`` exporter object the plugin hands prompt-style.

Kept apart from :mod:`.export` (the work), so that listing plugins
(``prompt-style plugins``) imports nothing more than this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_style import ExportRequest, ExportResult


class OpenCompassExporter:
    """Writes a task as an OpenCompass 0.5.4 dataset config (the ``export_task`` hook's ``opencompass``).

    See :mod:`prompt_style_opencompass` for the routes and the README for the options.
    """

    description = "an OpenCompass 0.5.4 dataset config (.py) giving OpenCompass the prompts prompt-style renders"

    def export(self, request: ExportRequest) -> ExportResult:
        from .export import export

        return export(request)
