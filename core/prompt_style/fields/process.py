"""``process_field``: one field spec applied to one record, as lm-evaluation-harness's
template system (seed 000) names it.

It is :func:`~prompt_style.compile_field` and a call: the same kinds of spec (a
field name, a single ``{{ expression }}`` that keeps its type, any other Jinja
template, a ``{field}`` template, a callable, a constant) with the same errors.
Specs are compiled once and kept, so calling it record after record is cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .extractors import FieldExtractorBase, compile_field

__all__ = ["process_field", "compiled_field"]


@lru_cache(maxsize=512)
def _compiled_text(spec: str, key: str) -> FieldExtractorBase:
    return compile_field(spec, key)


def compiled_field(spec: Any, key: str = "field") -> FieldExtractorBase:
    """``compile_field(spec, key)``, cached for string specs."""
    if isinstance(spec, str):
        return _compiled_text(spec, key)
    return compile_field(spec, key)


def process_field(doc: Mapping[str, Any], field_spec: Any, default: Any = None, *, key: str = "field") -> Any:
    """Extract one value from ``doc`` with ``field_spec``.

    ``"question"`` gives ``doc["question"]``; ``"{{choices.text}}"`` gives the
    list itself (one expression keeps its type); ``"{{a}}: {{b}}"`` renders to a
    string; a callable is called with ``doc``; any other non-string value is
    returned as it is.

    :param doc: the record.
    :param field_spec: the spec; ``None`` gives ``default``.
    :param default: the value for a ``None`` spec. A field the record lacks is
        an error, not ``default`` (a typo would otherwise give an empty
        question silently).
    :param key: the task key the spec belongs to, for messages (``doc_to_text``
        refuses constants; ``description`` is literal text unless it holds Jinja).
    :raises FieldError: naming the spec, for a missing field or a failing template.
    """
    if field_spec is None:
        return default
    return compiled_field(field_spec, key)(doc)
