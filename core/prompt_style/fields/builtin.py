"""Built-in field specs: names, ``{{ expressions }}``, Jinja, ``{field}`` templates, callables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._markers import hookimpl

if TYPE_CHECKING:
    from .extractors import FieldExtractorBase


@hookimpl(trylast=True)
def extract_field(spec: Any, key: str) -> FieldExtractorBase:
    compile_field = _COMPILE[0]
    if compile_field is None:
        from .extractors import compile_field  # imported with the first task, not with the plugin list

        _COMPILE[0] = compile_field
    return compile_field(spec, key)


_COMPILE: list[Any] = [None]  # compile_field once imported (an import statement per call costs)
