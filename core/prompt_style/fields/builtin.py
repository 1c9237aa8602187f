"""Built-in field specs: names, ``{{ expressions }}``, Jinja, ``{field}`` templates, callables."""

from __future__ import annotations

from typing import Any

from .._markers import hookimpl
from .extractors import FieldExtractorBase, compile_field


@hookimpl(trylast=True)
def extract_field(spec: Any, key: str) -> FieldExtractorBase:
    return compile_field(spec, key)
