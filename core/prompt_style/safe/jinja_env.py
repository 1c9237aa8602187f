"""The one Jinja sandbox of prompt-style, and per-process compile caches.

Every Jinja template the project renders (field specs and descriptions,
lm-evaluation-harness ``doc_to_*``, chat templates from model repositories,
task-template files, promptsource templates) is compiled here, in a hardened
``ImmutableSandboxedEnvironment`` (``_sandbox/``). Callers differ only in
*syntax settings*, described by a :class:`JinjaProfile` (transformers' chat
templates use ``trim_blocks``/``lstrip_blocks`` and loop controls; field specs
keep trailing newlines and let record fields win over dict methods), and in
*budgets*, described by :class:`JinjaLimits`.

How to use it::

    PROFILE = JinjaProfile("chat", trim_blocks=True, lstrip_blocks=True,
                           loop_controls=True, strict_undefined=False,
                           strftime_now=True)
    compiled = compile_template(source, PROFILE)          # once per process
    text = render(compiled, context)                      # per record
    text = render(compiled, context, JinjaLimits(deadline=2), now="2025-07-10T12:00:00")

Always render with :func:`render` (or :func:`evaluate` for a compiled
expression), never ``compiled.render()``... although that works too, within the
default budgets. Every budget stop is a :class:`~prompt_style.LimitError`, every
sandbox violation (a private attribute, printing a function or class) a
:class:`~prompt_style.SandboxError`; both name the budget, the template and its
line, and outer layers add the key and record. Other template errors (an
undefined name, ``raise_exception``, a ``TypeError``) pass unchanged for the
caller to translate, with ``exc.ps_template_line`` set when known.

**The clock.** ``JinjaProfile(strftime_now=True)`` gives templates
transformers' ``strftime_now(format)``. It reads the render's clock: the
``now=`` given to :func:`render` (a ``datetime`` or an ISO 8601 string), else
the innermost ``with fixed_clock(now):`` block, else the ``PROMPT_STYLE_NOW``
environment variable (ISO 8601, for reproducible prompts from the command
line), else the real local time. :func:`current_time` returns the same clock for
other globals.

**Budgets** come from the ``limits`` argument, else the innermost
:func:`~prompt_style.safe.limits.limits_scope` (``load_task(limits=...)`` sets
one around each record), else the process defaults (``PROMPT_STYLE_LIMITS``,
``prompt-style render --budget``). See docs/security.md.

**Custom code generators** (a faster renderer for chat templates) keep the
budgets by generating from :func:`prepare_tree`'s tree and rendering inside
:func:`run`; they may check budgets inline with :func:`current_budget` as
:func:`prepare_tree` describes.

Compiled templates do not pickle, so extractors and meta templates keep the
source and ask here; the first use in a process compiles, later uses hit the
cache. jinja2 is imported on first use only: listing plugins must not pay for it.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import LimitError, SandboxError
from .clock import ENV_NOW, _as_time, fixed_clock, fixed_time
from .limits import JinjaLimits, jinja_limits, limits_scope

if TYPE_CHECKING:
    import datetime

__all__ = [
    "JinjaProfile",
    "JinjaLimits",
    "LimitError",
    "SandboxError",
    "FIELDS",
    "environment",
    "compile_template",
    "compile_expression",
    "render",
    "evaluate",
    "run",
    "runner",
    "bound_runner",
    "prepare_tree",
    "current_budget",
    "budget_getter",
    "loop_items",
    "binop_value",
    "plus_values",
    "concat_values",
    "print_value",
    "check_str_call",
    "call_method",
    "check_method_call",
    "CHEAP_TEXT",
    "AMPLIFYING_STR_METHODS",
    "LOOP_FILTER",
    "CONCAT_FILTER",
    "COMPARE_FILTER",
    "compare_values",
    "check_value",
    "limits_scope",
    "fixed_clock",
    "fixed_time",
    "ENV_NOW",
    "current_time",
    "template",
    "expression",
    "single_expression",
    "undefined",
    "errors",
    "regex_replace",
]


def regex_replace(value: str, pattern: str, repl: str, count: int = 0) -> str:
    """lm-evaluation-harness's ``regex_replace`` filter (``re.sub(pattern, repl, value,
    count=count)``) as the sandbox runs it: the result sized as it is built, and the
    match interrupted at the render's deadline (catastrophic backtracking stops typed)."""
    from ._sandbox import regex_replace as sandboxed

    return sandboxed(value, pattern, repl, count)


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
    context_filters: tuple[str, ...] = ()
    """Names of :attr:`filters` that take the render's context first (Jinja's
    ``pass_context``), marked so when the environment is built: the filters stay plain
    functions until then, and jinja2 is imported on first use only."""
    globals: tuple[tuple[str, Any], ...] = ()
    extensions: tuple[Any, ...] = ()
    """Jinja extension classes or import paths."""
    strftime_now: bool = False
    """Offer transformers' ``strftime_now(format)`` global, on the render's clock
    (``render(..., now=...)``, :func:`fixed_clock`, ``PROMPT_STYLE_NOW``)."""
    fold_constants: bool = False
    """Let Jinja evaluate constant filter calls while compiling (its optimizer),
    for formats whose reference relies on it: promptsource's random ``choice``
    filter draws while compiling. Off by default, so that compiling costs
    nothing; when on, each folded call still passes the per-operation budgets
    (``'x'|center(10**9)`` is left for the render, which stops it)."""


FIELDS = JinjaProfile(
    "fields",
    keep_trailing_newline=True,
    record_fields_first=True,
    filters=(("regex_replace", regex_replace),),
)
"""Field specs, descriptions and lm-evaluation-harness ``doc_to_*`` templates
(lm-eval: ``StrictUndefined``, ``keep_trailing_newline``, ``regex_replace``)."""

DEFAULT_LIMITS = JinjaLimits()
"""The class defaults (the process defaults may differ: see :func:`~prompt_style.safe.limits.jinja_limits`)."""

_ENVS: dict[JinjaProfile, Any] = {}
_TEMPLATES: dict[tuple[JinjaProfile, str], Any] = {}
_EXPRESSIONS: dict[tuple[JinjaProfile, str], Any] = {}
_CACHE_SIZE = 4096
_sandbox: Any = None


def _load_sandbox() -> Any:
    global _sandbox
    if _sandbox is None:
        import jinja2

        _check_jinja_version(jinja2)
        from . import _sandbox as module

        _sandbox = module
    return _sandbox


def _check_jinja_version(jinja2: Any) -> None:
    if tuple(int(p) for p in re.findall(r"\d+", jinja2.__version__)[:3]) < (3, 1, 6):
        raise ImportError(
            f"prompt-style needs jinja2 >= 3.1.6 (older sandboxes can be escaped); "
            f"found {jinja2.__version__}: pip install -U 'jinja2>=3.1.6'"
        )


def environment(profile: JinjaProfile = FIELDS):
    """The process-wide hardened environment of ``profile`` (built once)."""
    env = _ENVS.get(profile)
    if env is not None:
        return env
    import jinja2

    sandbox = _load_sandbox()
    cls = sandbox.environment_class(record_fields_first=profile.record_fields_first, mutable=profile.mutable)
    extensions = list(profile.extensions)
    if profile.loop_controls:
        extensions.append("jinja2.ext.loopcontrols")
    env = cls(
        undefined=jinja2.StrictUndefined if profile.strict_undefined else jinja2.Undefined,
        trim_blocks=profile.trim_blocks,
        lstrip_blocks=profile.lstrip_blocks,
        keep_trailing_newline=profile.keep_trailing_newline,
        extensions=extensions,
        optimized=profile.fold_constants,
    )
    filters = dict(profile.filters)
    for name in profile.context_filters:
        filters[name] = jinja2.pass_context(filters[name])
    env.filters.update(filters)
    env.globals.update(dict(profile.globals))
    if profile.strftime_now:
        env.globals["strftime_now"] = sandbox.strftime_now
    env.guard_filters()
    env.template_class = sandbox.BudgetedTemplate
    _ENVS[profile] = env
    return env


def _compile(source: str, profile: JinjaProfile, limits: JinjaLimits | None, build: Callable[[Any], Any]) -> Any:
    """``build(env)``, with every failure a ``TemplateSyntaxError`` or a ``LimitError``."""
    import jinja2

    if not isinstance(source, str):
        raise TypeError(f"a template source is a string, not {type(source).__name__}")
    limits = limits or jinja_limits()
    if len(source) > limits.max_source:
        from ..errors import cut

        raise LimitError(
            f"template {cut(source, 60)} is longer than {limits.max_source:,} characters",
            limit="max_source",
            value=limits.max_source,
        )
    env = environment(profile)
    try:
        # Python warns about code like `1[0]`; the template's render reports it properly.
        with limits_scope(limits), warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return build(env)
    except jinja2.TemplateSyntaxError:
        raise
    except LimitError as exc:
        from ..errors import cut

        exc.message = f"template {cut(source, 60)}: {exc.message}"
        raise
    except (RecursionError, MemoryError, SyntaxError) as exc:
        # Python's own compiler limits: deeply nested expressions or blocks.
        raise jinja2.TemplateSyntaxError(
            f"the template nests too deeply to compile ({type(exc).__name__})", 1
        ) from None
    except Exception as exc:
        raise jinja2.TemplateSyntaxError(f"cannot compile the template: {type(exc).__name__}: {exc}", 1) from None


def compile_template(
    source: str, profile: JinjaProfile = FIELDS, *, cache: bool = True, limits: JinjaLimits | None = None
):
    """The compiled template for ``source`` under ``profile`` (compiled once per process).

    :param cache: ``False`` compiles anew, for templates whose compilation has
        effects (with ``fold_constants``, a random ``choice`` filter draws while
        compiling, as promptsource relies on).
    :param limits: the budgets (``max_source``, ``max_tokens``) to compile within.
    :raises jinja2.TemplateSyntaxError: for a syntax error, or a template that
        nests too deeply for Python to compile (callers translate it).
    :raises LimitError: for a source longer than ``max_source``.
    """
    key = (profile, source)
    compiled = _TEMPLATES.get(key) if cache else None
    if compiled is None:
        compiled = _compile(source, profile, limits, lambda env: env.from_string(source))
        compiled.ps_source = source
        compiled.ps_names = _free_names(profile, source)
        # A plain dict instead of Jinja's ChainMap: each render copies the globals,
        # and a profile's globals never change once its environment is built.
        compiled.globals = dict(compiled.globals)
        if cache:
            if len(_TEMPLATES) >= _CACHE_SIZE:
                _TEMPLATES.clear()
            _TEMPLATES[key] = compiled
    return compiled


def _free_names(profile: JinjaProfile, source: str) -> tuple[str, ...] | None:
    """The names ``source`` reads: the record fields it may refer to, which must be plain
    data (safe/plain.py); ``None`` when unknown (then every field). Read from the parsed
    tree only: no code is generated (a profile that folds constants would draw its random
    ``choice`` while generating)."""
    from jinja2 import nodes

    try:
        tree = environment(profile).parse(source)
    except Exception:  # pragma: no cover - it compiled, so it parses
        return None
    return tuple(sorted({node.name for node in tree.find_all(nodes.Name) if node.ctx == "load"}))


def compile_expression(source: str, profile: JinjaProfile = FIELDS, *, limits: JinjaLimits | None = None):
    """The compiled expression for ``source``; calling it (or :func:`evaluate`)
    returns a typed value."""
    key = (profile, source)
    compiled = _EXPRESSIONS.get(key)
    if compiled is None:

        def build(env: Any) -> Any:
            template = env.compile_expression(source, undefined_to_none=False)._template
            template.globals = dict(template.globals)  # see compile_template
            template.ps_names = _free_names(profile, "{{ " + source + " }}")
            return _load_sandbox().CompiledExpression(template, source)

        compiled = _compile(source, profile, limits, build)
        if len(_EXPRESSIONS) >= _CACHE_SIZE:
            _EXPRESSIONS.clear()
        _EXPRESSIONS[key] = compiled
    return compiled


def render(
    compiled: Any,
    context: Mapping[str, Any],
    limits: JinjaLimits | None = None,
    *,
    name: str | None = None,
    now: datetime.datetime | str | None = None,
    record: bool = False,
) -> str:
    """Render a compiled template with ``context`` within ``limits``.

    :param compiled: from :func:`compile_template`.
    :param context: the template's variables (a record, or ``messages`` and friends).
    :param limits: the budgets; default: the scope's or the process's (see module doc).
    :param name: how messages name the template (default: its source, cut short),
        e.g. ``"chat template of org/model"``.
    :param now: the clock for ``strftime_now`` (a ``datetime`` or ISO 8601 string).
    :param record: ``context`` is a record (or made from one, from data the caller did
        not write): the values the template refers to must be plain data, converted or
        refused as :mod:`prompt_style.safe.plain` says (templates read records, they do
        not act on their objects).
    :raises LimitError: a budget stopped the render.
    :raises SandboxError: the template broke a sandbox rule.
    :raises DataError: with ``record``, for a value that is not plain data.
    """
    return (_sandbox or _load_sandbox()).render_template(
        compiled, context, limits, name=name, now=now if now is None else _as_time(now), record=record
    )


def evaluate(
    compiled: Any,
    context: Mapping[str, Any],
    limits: JinjaLimits | None = None,
    *,
    name: str | None = None,
    now: datetime.datetime | str | None = None,
    record: bool = False,
) -> Any:
    """The value of a compiled expression (from :func:`compile_expression`), like
    :func:`render`. A missing name anywhere in the value (``[q, zz]``) raises
    ``jinja2.UndefinedError`` under ``StrictUndefined``; a function, class or
    template object in it raises :class:`SandboxError`; ``record`` as for :func:`render`."""
    return (_sandbox or _load_sandbox()).evaluate_expression(
        compiled, context, limits, name=name, now=now if now is None else _as_time(now), record=record
    )


def run(
    render: Callable[..., Any],
    limits: JinjaLimits | None = None,
    *,
    template: Any = None,
    name: str | None = None,
    now: datetime.datetime | str | None = None,
    args: tuple = (),
) -> Any:
    """Call ``render(*args)`` within one render's budgets, for code that renders a
    template of a profile's environment without :func:`render`, such as a
    custom code generator (see :func:`prepare_tree`). Errors are translated as
    :func:`render` translates them; ``template`` (with
    ``get_corresponding_lineno``) lets messages name the template line."""
    return (_sandbox or _load_sandbox()).run_budgeted(
        render, limits, template=template, name=name, now=now if now is None else _as_time(now), args=args
    )


def runner() -> Callable[..., Any]:
    """The function behind :func:`run`, for code that renders many times:
    ``runner()(render, limits, template, name, now, args)``, every argument
    positional, ``now`` a ``datetime`` or ``None``."""
    return (_sandbox or _load_sandbox()).run_budgeted


def bound_runner(render: Callable[[Any], Any], template: Any = None) -> Callable[[Any], Any]:
    """``run(arg)``, the same as ``run(render, args=(arg,), template=template)`` (the
    limits of the scope or the process, the real clock), made once for a render
    function that a hot path calls many times."""
    return (_sandbox or _load_sandbox()).bound_runner(render, template)


def prepare_tree(tree: Any) -> Any:
    """The budget rewrite for a parsed template (``environment(profile).parse(source)``):
    every ``{% for %}`` iterable wrapped in the ``ps-loop`` filter (its argument: the
    characters of literal text one iteration prints), every ``~`` turned into the
    ``ps-concat`` filter of a tuple, every comparison with no constant side into the
    ``ps-compare`` filter (:data:`COMPARE_FILTER`, :func:`compare_values`).

    A custom code generator must generate from this tree, render through
    :func:`run`, and keep every budget. It may do so by keeping the environment's
    ``call_binop``, filters, ``finalize``, ``call`` and ``getattr``/``getitem`` (and
    route the str methods of :data:`AMPLIFYING_STR_METHODS` through
    ``environment.call``), or by checking inline with the render's budget
    (:func:`current_budget`, once per render), as follows:

    - **Characters built** by ``+`` and ``~`` of strings, printed strings and
      string filters may be counted in a local number ``w`` as long as ``w``
      stays below ``budget.step`` (which is at most ``max_string``,
      ``max_output`` and ``max_items``, so no single operation can exceed any
      unseen); when an
      operation would bring ``w`` to ``step`` or more, take the slow path, which
      charges ``w`` and checks that operation: :func:`binop_value`,
      :func:`plus_values`, :func:`concat_values`, :func:`print_value` (they take
      ``w`` as ``pending``),
      or ``budget.charge(w)`` before calling the environment's own function;
      charge what is left at the end of the render.
    - **Loops**: ``loop_items(iterable, cost)`` for a loop that iterates over a
      sequence (``ps-loop``'s arguments), and ``if budget.due: budget.tick()`` at
      every iteration.
    - **Calls**: ``if budget.due: budget.tick()`` at the start of every macro (and
      every function the generator defines, whose result it charges), and every
      call through ``environment.call``, except the template's own macros and
      bound methods of ``str`` and ``dict`` that only read their object, which may
      be called directly with their string or list results charged (and
      ``max_items`` checked for lists); a str method of
      :data:`AMPLIFYING_STR_METHODS` after :func:`check_str_call`; a str method of
      a text longer than :data:`CHEAP_TEXT`, or with an argument longer than it,
      only through :func:`call_method` (which sizes its cost, caps a ``split``
      and charges the result).
    - Only ``+`` of two ``int`` and ``%`` of two ``int`` by a divisor below
      ``2**64`` may skip ``call_binop`` altogether (they cannot build large
      values, and cost at most the dividend's size); ``//`` always goes through it."""
    return (_sandbox or _load_sandbox()).rewrite(tree)


def current_budget() -> Any:
    """The budget of the render in progress (``_sandbox.Budget``: ``step``,
    ``due``, ``tick()``, ``charge(n)``, ``count(n, cost)``), for code generators
    (see :func:`prepare_tree`); outside a render, a fresh one with the
    per-operation limits only."""
    return (_sandbox or _load_sandbox()).active_budget()


def budget_getter() -> Callable[[], Any]:
    """:func:`current_budget` as the fastest function there is, for generated
    code that asks once per render: it returns ``None`` outside a render (then
    call :func:`current_budget`)."""
    return (_sandbox or _load_sandbox())._ACTIVE.get


def loop_items(iterable: Any, cost: int = 0) -> Any:
    """A ``{% for %}`` iterable as a sequence, its iterations counted (a list or
    tuple at once): for code generators that loop with ``enumerate``."""
    return (_sandbox or _load_sandbox()).loop_items(iterable, cost)


def binop_value(environment: Any, operator: str, left: Any, right: Any, pending: int = 0) -> Any:
    """``environment.call_binop``, after charging ``pending`` characters counted
    inline (including ``left`` and ``right`` when both are strings)."""
    return (_sandbox or _load_sandbox()).binop_value(environment, operator, left, right, pending)


def plus_values(environment: Any, values: tuple, pending: int = 0, counted: bool = False) -> Any:
    """``values[0] + values[1] + ...``, one ``+`` at a time through
    ``environment.call_binop``, after charging ``pending`` characters counted
    inline (``counted``: including the values' length, when all are strings)."""
    return (_sandbox or _load_sandbox()).plus_values(environment, values, pending, counted)


def concat_values(items: tuple, pending: int = 0, counted: int = 1) -> str:
    """``~`` of ``items``, after charging ``pending`` characters counted inline
    (including ``counted`` times the items' length when all are strings)."""
    return (_sandbox or _load_sandbox()).concat_values(items, pending, counted)


def check_str_call(method: Any, args: tuple, kwargs: dict) -> tuple:
    """Before calling ``method``, a bound method of a ``str``, directly: the checks the
    sandbox's ``call`` makes (the result's size and the method's cost, from the
    arguments); returns the arguments to call it with (``join`` of an iterator gets a
    list). The caller charges the result. ``split`` and ``rsplit`` of a text longer
    than :data:`CHEAP_TEXT` must go through :func:`call_method` (which caps the items
    they make)."""
    sandbox = _sandbox or _load_sandbox()
    return sandbox._check_str_method(method.__name__, method.__self__, args, kwargs, sandbox.active_budget())


def call_method(method: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
    """``method(*args, **kwargs)`` for a bound method of a value a template holds (a
    ``str``, ``bytes``, number, list, tuple or mapping), as the sandbox's ``call`` makes it:
    sized before it runs (result, cost, integer digits: docs/security.md), refused when no
    template may call it, its result charged to the render's budget. For code generators
    that call methods of values directly: below :data:`CHEAP_TEXT` characters (the text
    and each argument) a str method cannot exceed any budget but ``max_work``."""
    sandbox = _sandbox or _load_sandbox()
    budget = sandbox.active_budget()
    result = sandbox.call_method(_PLAIN_CONTEXT, method, tuple(args), dict(kwargs or {}), budget)
    n = len(result) if isinstance(result, (str, bytes, list)) else 1
    if type(result) is list and n > budget.limits.max_items:
        raise LimitError(
            f"calling the method {method.__name__!r} would build {n:,} items (more than {budget.limits.max_items:,})",
            limit="max_items",
            value=budget.limits.max_items,
        )
    budget.charge(n)
    return result


def check_method_call(receiver: Any, name: str, args: tuple = (), kwargs: dict | None = None) -> tuple:
    """The checks :func:`call_method` makes before calling ``receiver.name(*args,
    **kwargs)``, for a plugin's own object that calls a method of a plain type on a
    template's behalf (transformers' ``dict.fromkeys``): returns the arguments to call it
    with (an iterator becomes a list)."""
    sandbox = _sandbox or _load_sandbox()
    return sandbox.check_method_call(receiver, name, tuple(args), dict(kwargs or {}), sandbox.active_budget())


class _PlainContext:
    """What :func:`call_method` gives the sandbox as a context: ``call`` only (methods of
    values take no context)."""

    @staticmethod
    def call(__obj: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
        return __obj(*args, **kwargs)


_PLAIN_CONTEXT = _PlainContext()

CHEAP_TEXT = 4096
"""A str method of a text of at most this many characters, with arguments of at most this
size, cannot exceed any budget but ``max_work`` (``_sandbox/costs.CHEAP``)."""


def print_value(eval_ctx: Any, value: Any, pending: int = 0, counted: bool = True) -> str:
    """A printed value as text (``str(environment.finalize(eval_ctx, value))``),
    after charging ``pending`` characters counted inline (``counted``: including
    ``value`` when it is a string)."""
    return (_sandbox or _load_sandbox()).print_value(eval_ctx, value, pending, counted)


LOOP_FILTER = "ps-loop"
"""The filter :func:`prepare_tree` wraps every ``{% for %}`` iterable in."""
CONCAT_FILTER = "ps-concat"
"""The filter :func:`prepare_tree` turns every ``~`` into (of a tuple of the operands)."""
COMPARE_FILTER = "ps-compare"
"""The filter :func:`prepare_tree` turns a comparison with no constant side into (of a
tuple of the two operands, the operator's name as its argument: ``eq``, ``in``...)."""


def compare_values(operands: tuple, op: str) -> bool:
    """``operands[0] op operands[1]`` after its cost is sized (two lists compare their
    items, two texts their characters): what :data:`COMPARE_FILTER` does. A code
    generator may compare inline when neither operand is a list, tuple or mapping (for
    ``in``/``notin``: when the container is not a list or tuple)."""
    return (_sandbox or _load_sandbox()).compare_values(operands, op)


AMPLIFYING_STR_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate"})
"""str methods whose result can be far larger than their input: the sandbox's
``call`` sizes them before they run, so fast paths must not call them directly."""


def check_value(value: Any, limits: JinjaLimits | None = None) -> None:
    """Raise :class:`SandboxError` when ``value`` holds a function, class or
    template object, and ``jinja2.UndefinedError`` for a ``StrictUndefined``
    anywhere in it (for values that callers get from templates some other way)."""
    sandbox = _load_sandbox()
    sandbox.check_value(value, sandbox.Budget(limits or jinja_limits()), limit=None)


# -- the clock (held by clock.py, below the sandbox) -----------------------------


def current_time() -> datetime.datetime:
    """The clock templates see now (inside a render: its ``now=`` first)."""
    return _load_sandbox().current_time()


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
    if not (text.startswith("{{") and text.endswith("}}")) or len(text) > jinja_limits().max_source:
        return None  # a long spec is compiled as a template, which reports its size
    return _single_expression(text)


@functools.lru_cache(maxsize=512)
def _single_expression(text: str) -> str | None:
    """:func:`single_expression` of a stripped spec that may be one block (lexed once per text)."""
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
