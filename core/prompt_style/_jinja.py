"""One sandboxed Jinja environment per process, and per-process compile caches.

Compiled templates do not pickle, so extractors keep the source and ask here;
the first use in a process compiles, later uses hit the cache. jinja2 is
imported on first use only: listing plugins must not pay for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_ENV = None
_TEMPLATES: dict[str, Any] = {}
_EXPRESSIONS: dict[str, Any] = {}


def _regex_replace(value: str, pattern: str, repl: str, count: int = 0) -> str:
    return re.sub(pattern, repl, value, count=count)


def environment():
    """The process-wide ``ImmutableSandboxedEnvironment`` with ``StrictUndefined``."""
    global _ENV
    if _ENV is None:
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        if tuple(int(p) for p in re.findall(r"\d+", jinja2.__version__)[:3]) < (3, 1, 6):
            raise ImportError(
                f"prompt-style needs jinja2 >= 3.1.6 (older sandboxes can be escaped); "
                f"found {jinja2.__version__}: pip install -U 'jinja2>=3.1.6'"
            )

        class RecordEnvironment(ImmutableSandboxedEnvironment):
            # Records are data: `choices.items` is the record's "items" field,
            # not the dict method, whenever the field exists.
            def getattr(self, obj: Any, attribute: str) -> Any:
                if isinstance(obj, Mapping) and attribute in obj:
                    return obj[attribute]
                return super().getattr(obj, attribute)

        env = RecordEnvironment(
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
        )
        env.filters["regex_replace"] = _regex_replace
        _ENV = env
    return _ENV


def template(source: str):
    """The compiled template for ``source`` (compiled once per process)."""
    compiled = _TEMPLATES.get(source)
    if compiled is None:
        compiled = _TEMPLATES[source] = environment().from_string(source)
    return compiled


def expression(source: str):
    """The compiled expression for ``source``; calling it returns a typed value."""
    compiled = _EXPRESSIONS.get(source)
    if compiled is None:
        compiled = _EXPRESSIONS[source] = environment().compile_expression(
            source, undefined_to_none=False
        )
    return compiled


def undefined(value: Any) -> tuple[str, str | None] | None:
    """``(name, hint)`` of a Jinja undefined value, or ``None`` when ``value`` is defined."""
    import jinja2

    if isinstance(value, jinja2.Undefined):
        return value._undefined_name or "value", value._undefined_hint
    return None


def errors():
    """The jinja2 exception classes the extractors translate."""
    import jinja2
    from jinja2.exceptions import SecurityError

    return jinja2.TemplateSyntaxError, jinja2.UndefinedError, SecurityError
