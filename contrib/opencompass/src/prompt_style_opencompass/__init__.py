"""prompt-style inside OpenCompass 0.5.4.

``prompt-style export opencompass TASK --out dataset_cfg.py`` writes an
OpenCompass dataset config whose prompts are, byte for byte, the prompts
``prompt-style render`` gives for the same task, records and options. Three
routes, chosen per task (``--export-option route=...`` forces one):

``plain``
    OpenCompass's own classes only (``PromptTemplate``, ``ZeroRetriever``,
    ``FixKRetriever``, ``RandomRetriever``, ``SlidingWindowRetriever``,
    ``GenInferencer``, ``PPLInferencer``, ``HFDataset`` reading the task's JSON
    Lines): no prompt-style at run time. For OpenCompass dataset configs whose
    prompts OpenCompass builds exactly as prompt-style does.
``retriever``
    The same, with :class:`~prompt_style_opencompass.runtime.PromptStyleRetriever`
    choosing the in-context examples with any ``retrieve_examples`` plugin.
``render``
    :class:`~prompt_style_opencompass.runtime.PromptStyleDataset` and
    :class:`~prompt_style_opencompass.runtime.PromptStyleTemplate`: prompt-style
    renders every record when OpenCompass loads the dataset, and OpenCompass
    receives each prompt whole (or as the dialogue its meta template formats).

The classes OpenCompass loads live in :mod:`prompt_style_opencompass.runtime`
(and the recording models of the tests in :mod:`prompt_style_opencompass.recording`);
they import OpenCompass, so nothing here imports them: OpenCompass's registries
import them by their dotted path from the config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .exporter import OpenCompassExporter

if TYPE_CHECKING:
    from .errors import OpenCompassExportError
    from .options import ExportOptions

__version__ = "0.1.0"

__all__ = ["OpenCompassExporter", "OpenCompassExportError", "ExportOptions", "__version__"]

_LAZY = {"OpenCompassExportError": ".errors", "ExportOptions": ".options"}


def __getattr__(name: str) -> Any:
    # The errors and options import prompt_style's public names: loaded on first use,
    # so that loading the plugin (prompt-style plugins) stays cheap.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
