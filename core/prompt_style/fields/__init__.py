"""Step 2 of the pipeline: field specs, compiled once per task into extractors
that pull one value out of a record (the ``extract_field`` hook)."""

from .extractors import FieldExtractorBase, compile_field

__all__ = ["compile_field", "FieldExtractorBase"]
