"""Built-in field specs: names, ``{{ expressions }}``, Jinja, ``{field}`` templates, callables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._markers import hookimpl

if TYPE_CHECKING:
    from .extractors import FieldExtractorBase


@hookimpl(trylast=True)
def extract_field(spec: Any, key: str) -> FieldExtractorBase:
    from .extractors import compile_field  # imported with the first task, not with the plugin list

    return compile_field(spec, key)
