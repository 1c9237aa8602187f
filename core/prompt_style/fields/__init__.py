"""Step 2 of the pipeline: field specs, compiled once per task into extractors
that pull one value out of a record (the ``extract_field`` hook)."""

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .extractors import FieldExtractorBase, compile_field
    from .process import process_field
    from .targets import GoldResolver, gold_resolver, resolve_gold

__all__ = ["compile_field", "process_field", "FieldExtractorBase", "resolve_gold", "gold_resolver", "GoldResolver"]

# Imported on first use (the extractors bring the Jinja sandbox with them).
__getattr__, __dir__ = exports(
    __name__,
    {
        "FieldExtractorBase": ".extractors",
        "compile_field": ".extractors",
        "process_field": ".process",
        "GoldResolver": ".targets",
        "gold_resolver": ".targets",
        "resolve_gold": ".targets",
    },
)
