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
        compiled = _EXPRESSIONS[source] = environment().compile_expression(source, undefined_to_none=False)
    return compiled


def single_expression(spec: str) -> str | None:
    """The expression inside ``spec`` when ``spec`` (stripped) is exactly one
    ``{{ ... }}`` block, else ``None``; multi-line expressions and ``}}`` inside
    literals are handled by Jinja's own lexer."""
    text = spec.strip()
    if not (text.startswith("{{") and text.endswith("}}")):
        return None
    env = environment()
    try:
        tokens = list(env.lex(text))
    except errors()[0]:
        return None  # compiled as a template, which reports the syntax error
    kinds = [kind for _, kind, _ in tokens]
    if kinds.count("variable_begin") != 1 or kinds[0] != "variable_begin" or kinds[-1] != "variable_end":
        return None
    if any(kind in ("data", "block_begin", "comment_begin", "raw_begin") for kind in kinds):
        return None
    return text[len(tokens[0][2]) : len(text) - len(tokens[-1][2])].strip()


def undefined(value: Any) -> tuple[str, str | None] | None:
    """``(name, hint)`` of a Jinja undefined value, or ``None`` when ``value`` is defined."""
    import jinja2

    if isinstance(value, jinja2.Undefined):
        return value._undefined_name or "value", value._undefined_hint
    return None


_ERRORS: tuple[type[Exception], ...] = ()


def errors() -> tuple[type[Exception], ...]:
    """The jinja2 exception classes the extractors translate:
    ``(TemplateSyntaxError, UndefinedError, SecurityError)``."""
    global _ERRORS
    if not _ERRORS:
        import jinja2
        from jinja2.exceptions import SecurityError

        _ERRORS = (jinja2.TemplateSyntaxError, jinja2.UndefinedError, SecurityError)
    return _ERRORS
