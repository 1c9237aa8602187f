"""The one Jinja sandbox of prompt-style, and per-process compile caches.

Every Jinja template the project renders (field specs and descriptions,
lm-evaluation-harness ``doc_to_*``, chat templates from model repositories,
task-template files, promptsource templates) is compiled here, in an
``ImmutableSandboxedEnvironment``. Callers differ only in *syntax settings*,
described by a :class:`JinjaProfile` (transformers' chat templates use
``trim_blocks``/``lstrip_blocks`` and loop controls; field specs keep trailing
newlines and let record fields win over dict methods), and in *budgets*,
described by :class:`JinjaLimits`.

Compiled templates do not pickle, so extractors and meta templates keep the
source and ask here; the first use in a process compiles, later uses hit the
cache. jinja2 is imported on first use only: listing plugins must not pay for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "JinjaProfile",
    "JinjaLimits",
    "FIELDS",
    "environment",
    "compile_template",
    "compile_expression",
    "render",
    "template",
    "expression",
    "single_expression",
    "undefined",
    "errors",
]


def _regex_replace(value: str, pattern: str, repl: str, count: int = 0) -> str:
    return re.sub(pattern, repl, value, count=count)


@dataclass(frozen=True)
class JinjaLimits:
    """Budgets on one render. Every stop is a typed error naming the limit."""

    max_source: int = 1_000_000
    """Characters of template source."""
    max_output: int = 10_000_000
    """Characters a render may produce."""
    max_range: int = 100_000
    """Items one ``range()`` may produce."""
    max_loop_iterations: int = 1_000_000
    """Loop iterations in one render, all loops together."""
    max_string: int = 10_000_000
    """Characters (or items) one operation may build, e.g. ``'a' * n``."""
    deadline: float = 5.0
    """Seconds one render may take."""


@dataclass(frozen=True)
class JinjaProfile:
    """How a family of templates is written: syntax settings, undefined handling,
    filters and globals. Profiles are module-level constants (they key the
    per-process caches and pickle by reference through their owners)."""

    name: str
    trim_blocks: bool = False
    lstrip_blocks: bool = False
    keep_trailing_newline: bool = False
    strict_undefined: bool = True
    """``StrictUndefined``: a missing name is an error (transformers' chat
    templates use Jinja's default ``Undefined``, which renders as empty)."""
    loop_controls: bool = False
    """``{% break %}`` and ``{% continue %}``."""
    record_fields_first: bool = False
    """``x.items`` is the record's ``items`` field, not the dict method, when it exists."""
    mutable: bool = False
    """Allow templates to call mutating methods (``list.append``, ``dict.update``)
    as plain Jinja does (a ``SandboxedEnvironment`` instead of the immutable one;
    unsafe attributes stay blocked). promptsource's templates rely on it."""
    filters: tuple[tuple[str, Callable[..., Any]], ...] = ()
    globals: tuple[tuple[str, Any], ...] = ()
    extensions: tuple[Any, ...] = ()
    """Jinja extension classes or import paths."""


FIELDS = JinjaProfile(
    "fields",
    keep_trailing_newline=True,
    record_fields_first=True,
    filters=(("regex_replace", _regex_replace),),
)
"""Field specs, descriptions and lm-evaluation-harness ``doc_to_*`` templates
(lm-eval: ``StrictUndefined``, ``keep_trailing_newline``, ``regex_replace``)."""

DEFAULT_LIMITS = JinjaLimits()

_ENVS: dict[JinjaProfile, Any] = {}
_TEMPLATES: dict[tuple[JinjaProfile, str], Any] = {}
_EXPRESSIONS: dict[tuple[JinjaProfile, str], Any] = {}


def _check_jinja_version(jinja2: Any) -> None:
    if tuple(int(p) for p in re.findall(r"\d+", jinja2.__version__)[:3]) < (3, 1, 6):
        raise ImportError(
            f"prompt-style needs jinja2 >= 3.1.6 (older sandboxes can be escaped); "
            f"found {jinja2.__version__}: pip install -U 'jinja2>=3.1.6'"
        )


def environment(profile: JinjaProfile = FIELDS):
    """The process-wide sandboxed environment of ``profile`` (built once)."""
    env = _ENVS.get(profile)
    if env is not None:
        return env
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

    _check_jinja_version(jinja2)
    base = SandboxedEnvironment if profile.mutable else ImmutableSandboxedEnvironment
    if profile.record_fields_first:

        class RecordEnvironment(base):  # type: ignore[misc, valid-type]
            # Records are data: `choices.items` is the record's "items" field,
            # not the dict method, whenever the field exists.
            def getattr(self, obj: Any, attribute: str) -> Any:
                if isinstance(obj, Mapping) and attribute in obj:
                    return obj[attribute]
                return super().getattr(obj, attribute)

        base = RecordEnvironment
    extensions = list(profile.extensions)
    if profile.loop_controls:
        extensions.append("jinja2.ext.loopcontrols")
    env = base(
        undefined=jinja2.StrictUndefined if profile.strict_undefined else jinja2.Undefined,
        trim_blocks=profile.trim_blocks,
        lstrip_blocks=profile.lstrip_blocks,
        keep_trailing_newline=profile.keep_trailing_newline,
        autoescape=False,
        extensions=extensions,
    )
    env.filters.update(dict(profile.filters))
    env.globals.update(dict(profile.globals))
    _ENVS[profile] = env
    return env


def compile_template(source: str, profile: JinjaProfile = FIELDS, *, cache: bool = True):
    """The compiled template for ``source`` under ``profile`` (compiled once per process).

    :param cache: ``False`` compiles anew, for templates whose compilation has
        effects (Jinja folds constant filter calls at compile time, so a random
        ``choice`` filter draws while compiling, as promptsource relies on).
    :raises jinja2.TemplateSyntaxError: for a syntax error (callers translate it).
    """
    key = (profile, source)
    compiled = _TEMPLATES.get(key) if cache else None
    if compiled is None:
        compiled = environment(profile).from_string(source)
        if cache:
            _TEMPLATES[key] = compiled
    return compiled


def compile_expression(source: str, profile: JinjaProfile = FIELDS):
    """The compiled expression for ``source``; calling it returns a typed value."""
    key = (profile, source)
    compiled = _EXPRESSIONS.get(key)
    if compiled is None:
        compiled = _EXPRESSIONS[key] = environment(profile).compile_expression(source, undefined_to_none=False)
    return compiled


def render(compiled: Any, context: Mapping[str, Any], limits: JinjaLimits = DEFAULT_LIMITS) -> str:
    """Render a compiled template with ``context`` within ``limits``."""
    return compiled.render(context)


# -- the field-spec profile, by its historical short names ------------------------


def template(source: str):
    """The compiled field-spec template for ``source``."""
    return compile_template(source, FIELDS)


def expression(source: str):
    """The compiled field-spec expression for ``source``."""
    return compile_expression(source, FIELDS)


def single_expression(spec: str) -> str | None:
    """The expression inside ``spec`` when ``spec`` (stripped) is exactly one
    ``{{ ... }}`` block, else ``None``; multi-line expressions and ``}}`` inside
    literals are handled by Jinja's own lexer."""
    text = spec.strip()
    if not (text.startswith("{{") and text.endswith("}}")):
        return None
    env = environment(FIELDS)
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
    """The jinja2 exception classes callers translate:
    ``(TemplateSyntaxError, UndefinedError, SecurityError)``."""
    global _ERRORS
    if not _ERRORS:
        import jinja2
        from jinja2.exceptions import SecurityError

        _ERRORS = (jinja2.TemplateSyntaxError, jinja2.UndefinedError, SecurityError)
    return _ERRORS
