"""Step 2 of the pipeline: field specs, compiled once per task into extractors
that pull one value out of a record (the ``extract_field`` hook)."""

from .extractors import FieldExtractorBase, compile_field
from .process import process_field
from .targets import GoldResolver, gold_resolver, resolve_gold

__all__ = ["compile_field", "process_field", "FieldExtractorBase", "resolve_gold", "gold_resolver", "GoldResolver"]
