"""Simple Jinja templates and expressions compiled to plain Python, once per template.

Most Jinja in task files only substitutes fields: lm-evaluation-harness's MMLU writes
``"{{question.strip()}}\\nA. {{choices[0]}}\\nB. {{choices[1]}}..."``. Rendering that
in the hardened sandbox costs about 15 µs a record, mostly the sandbox's machinery
(a context, a budget, a generator, a guarded call). This module turns such a
template into one Python function of the record, built once per template and
profile, that gives **exactly** what the sandbox gives, or hands the record to the
sandbox.

**What compiles** (anything else renders in the sandbox, as before): literal text,
comments, ``{% raw %}`` blocks and whitespace control (all resolved by Jinja's own
lexer and parser, with the profile's settings), and ``{{ ... }}`` outputs of

- a field path: a name, then attribute steps (``.text``, ``.0``) and subscripts
  with a literal key (``[0]``, ``[-1]``, ``['k']``, ``["k"]``);
- followed by zero-argument ``str`` methods that return text (``.strip()``,
  ``.lower()``, :data:`STR_METHODS`);
- literal constants (``'text'``, ``3``, ``none``), and lists of these (``[a, b]``);
- a subscript with a key read from the record (``choices[label]``, ``['no', 'yes'][label]``);
- ``a + b`` (two texts joined, two ints added: the sandbox's ``call_binop``);
- the filters ``trim``, ``lower``, ``upper``, ``capitalize``, ``string`` and ``int``
  without arguments (:data:`TEXT_FILTERS`; Jinja's own functions, as the profile has them);
- ``str`` methods with one literal text argument (``answer.split('####')``,
  :data:`ARG_METHODS`), on a text short enough that the sandbox calls them as they are;
- ``a if test else b`` with the tests ``name is defined``, ``is undefined``, ``is none``
  and their ``not`` (lm-evaluation-harness's GSM8K target): only the branch taken runs;
- ``a - b`` of two ints (``{{ answer|int - 1 }}``), the ``length`` filter, ``join`` with a
  literal separator on a list of texts (the sandbox's own ``join``), one comparison
  (``==``, ``!=``, ``<``...) with a constant on one side, which the sandbox runs as Python
  does, and ``range(n)`` (the sandbox's, within ``max_range``);
- ``a ~ b`` (each value printed as text, joined: the sandbox's ``ps-concat``), ``replace``
  with two literal texts (the filter or the ``str`` method), the ``sort`` filter without
  arguments on a list of texts, ``first`` and ``last``, ``name|default(constant)`` of a
  record's field, and slices of a text, list or tuple with ``int`` bounds
  (``answer[18:]``, ``sentence[start:end]``; no step);

and, in a template, the statements

- ``{% if %}`` / ``{% elif %}`` / ``{% else %}`` (and ``a if test else b``) on those tests,
  a comparison, ``not``, ``and``/``or`` (the right side run only when the left does not
  decide), or a value's truth (plain data only: Python's truth is Jinja's);
- ``{% for x in sequence %}`` over a ``list``, ``tuple`` or ``range`` (no ``else``, filter or
  recursion; at most :data:`_MAX_LOOPS` deep), its item and ``loop.index``, ``index0``,
  ``first``, ``last``, ``length``, ``revindex`` and ``revindex0`` in the body: the
  hand-written choice list ``{% for c in choices %}{{ 'ABCD'[loop.index0] }}. {{ c }}``;
- ``{% set name = expression %}`` in the template's own body (not in a block), for a name
  set once, not read before it and never asked ``is defined``: read after it as that value.

**Same result, or the sandbox.** The function computes what the sandbox would,
step by step, only on plain data (``dict``, ``list``, ``tuple``, ``str``,
``int``, ``float``, ``bool``, ``None``), and returns :data:`SLOW` whenever it is
not sure the sandbox would take the same course: a record that is not a ``dict``,
a missing name or key, an index out of range, a step on a value of another type,
an attribute that could be a ``dict`` method, a method called on a value that is
not a ``str``, any exception. The caller then renders that record in the sandbox,
which gives the result or raises the error it always raised. Errors therefore
come from one place only, and are identical by construction.

- A name is looked up in the record (the record's fields hide Jinja's globals,
  as in the sandbox's context); a name missing from the record is the sandbox's
  to resolve (a global such as ``range``, or ``StrictUndefined``'s error).
- ``x.name`` on a ``dict``: with ``record_fields_first`` (the field-spec profile)
  the field when it exists; otherwise (lm-evaluation-harness's profile, Jinja's
  rule) the item, unless ``name`` is an attribute of ``dict`` (``items``,
  ``keys``...), which then does not compile. ``x[key]`` is ``x[key]`` on a
  ``dict``, ``list``, ``tuple`` or ``str`` (the sandbox's ``getitem`` tries
  exactly that first).
- A printed value is its ``str()``, as Jinja prints it (``None``, ``True``,
  ``1.5``, ``['a', 'b']``); a non-text value must be plain data all the way
  down (the sandbox refuses to print functions and objects).

**Budgets.** The sandbox charges every method result and every printed value to
the render's budget (``max_work``; ``max_string`` and ``max_output`` per
operation) and measures the output against ``max_output``. The function adds up
the same charges (for a non-text value, an upper bound of the sandbox's
estimate) and returns :data:`SLOW` when they exceed the smallest of
``max_work``, ``max_string``, ``max_output``, ``max_items`` and 1 Mi
characters, when the output is longer than ``max_output``, or when a method
would run on a text longer than that threshold: below it no budget can stop the
sandbox's render, and above it the sandbox renders and stops exactly as it
always did. Expressions check their value as the sandbox does (a non-text value
within ``max_output`` as printed). The **deadline** cannot fire in compiled
code, and needs no check point there: the code has no call into the template, its
loops run at most :data:`_LOOP_CAP` iterations in all (and never more than the least
``max_loop_iterations`` of the process's budgets, :data:`~prompt_style.safe.limits.ITER_FLOOR`:
past either, the sandbox renders), charging the literal text of each iteration as the
sandbox charges it, and all a render builds stays within the threshold's characters
(1 Mi at most, checked after each iteration), so a render takes microseconds, or at
most a few milliseconds for values near the threshold — far below any deadline that lets
the sandbox render the same template (its own fixed cost is larger). A larger
render goes to the sandbox, where the deadline is watched as always.

**Generated code holds no text from the template or the records.** It is made
from the parsed tree (names and keys validated by Jinja's lexer and parser): the
keys, method functions, constants and literal text are values passed to the
generated ``make()``, and the code itself holds only its own variable names
(``v1``, ``K0``, ``L2``...). It is compiled once per shape and cached, so
templates of the same shape share it. Records never reach the compiler.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..safe import jinja_env as _jinja
from ..safe import limits as _limits
from ..safe.jinja_env import FIELDS, JinjaProfile
from ..safe.limits import JinjaLimits
from .jinja_budgets import _DEFAULTS_GET, _LAST, _SCOPE_GET, _budgets, budget_threshold, printed_size_bound
from .jinja_codegen import _CODE_NAMES, _OWN, _generate, _maker  # noqa: F401 (the tests read _CODE_NAMES, _OWN)
from .jinja_parse import _LOOP_CAP, STR_METHODS, _parse  # noqa: F401 (the tests read _LOOP_CAP)

__all__ = [
    "SLOW",
    "STR_METHODS",
    "Compiled",
    "compile_simple",
    "template_renderer",
    "expression_evaluator",
    "printed_size_bound",
    "budget_threshold",
]

SLOW: Any = type("Slow", (), {"__repr__": lambda self: "SLOW", "__slots__": ()})()
"""What a compiled function returns for a record the sandbox must render."""

_CLOCK_CAP = _limits.CLOCK_CAP
"""The most characters compiled code handles in one render (see the module doc)."""


@dataclass(frozen=True)
class Compiled:
    """A simple template or expression, compiled: ``function(record)`` gives the
    text (or value), or :data:`SLOW`. ``code`` is the generated source."""

    source: str
    kind: str
    code: str
    function: Callable[[Any], Any]


# -- the public functions ----------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def compile_simple(
    source: str,
    profile: JinjaProfile = FIELDS,
    kind: str = "template",
    *,
    absent: str | None = None,
    digits: bool = False,
    result: str | None = None,
) -> Compiled | None:
    """``source`` compiled to plain Python when it is simple (see the module doc), else
    ``None``. ``kind`` is ``"template"`` (renders to text) or ``"expression"`` (the
    inside of a ``{{ }}``, evaluated to a value). Cached per process.

    :param absent: a key whose presence in the record makes the function give
        :data:`SLOW` (lm-evaluation-harness reads a column named like the template).
    :param digits: a template's text made only of digits gives :data:`SLOW`
        (lm-evaluation-harness then reads a number); with ``result="scalar"``, an
        ``int`` is taken (else it gives ``SLOW``) and a text of digits gives ``SLOW``.
    :param result: for an expression, the values it gives, every other giving
        :data:`SLOW`: those that print as text that lm-evaluation-harness reads back
        as the same value, within the size no budget can stop. ``"texts"``: a
        ``list`` of ``str`` (a copy of it, as reading it back makes a new list);
        ``"scalar"``: a ``str`` that is not ``[...]`` (nor digits, with ``digits``), or
        with ``digits`` an ``int`` from 0 to under 4,000 digits.
    """
    if kind not in ("template", "expression"):
        raise ValueError(f"kind must be 'template' or 'expression', not {kind!r}")
    if result is not None and (kind != "expression" or result not in ("texts", "scalar")):
        raise ValueError(f"result must be None, or 'texts' or 'scalar' for an expression, not {result!r}")
    try:
        # The sandbox compiles it first: a template it refuses (syntax, size) is its to report.
        if kind == "template":
            _jinja.compile_template(source, profile)
        else:
            _jinja.compile_expression(source, profile)
        parts = _parse(source, profile, kind)
        code, names, values = _generate(parts, kind, absent is not None, digits, result)
    except Exception:  # _NotSimple, or anything the sandbox reports on its own path
        return None
    if absent is not None:
        values = [*values, absent]
    function = _maker(code)(
        SLOW,
        printed_size_bound,
        _budgets,
        _CLOCK_CAP,
        _limits.SIZE_FLOOR,
        _SCOPE_GET,
        _DEFAULTS_GET,
        JinjaLimits,
        _LAST,
        _limits.INT_BITS_FLOOR,
        *values,
    )
    return Compiled(source, kind, code, function)


def template_renderer(source: str, profile: JinjaProfile = FIELDS) -> Callable[[Mapping[str, Any]], str]:
    """``render(record)``: exactly ``jinja_env.render(compile_template(source, profile),
    record, record=True)`` (the same text, the same exceptions, within the budgets in effect), in
    plain Python when the template is simple. Cheap to call per record (profiles are
    module constants: looked up by identity, not hashed)."""
    by_source = _RENDERERS.get(id(profile))
    if by_source is None or by_source[0] is not profile:
        if len(_RENDERERS) > 64:
            _RENDERERS.clear()
        by_source = _RENDERERS[id(profile)] = (profile, {})
    made = by_source[1].get(source)
    if made is None:
        if len(by_source[1]) >= 4096:
            by_source[1].clear()
        made = by_source[1][source] = _template_renderer(source, profile)
    return made


_RENDERERS: dict[int, tuple[JinjaProfile, dict[str, Callable[[Mapping[str, Any]], str]]]] = {}


@functools.lru_cache(maxsize=4096)
def _template_renderer(source: str, profile: JinjaProfile) -> Callable[[Mapping[str, Any]], str]:
    return _compiled_or_sandboxed(source, profile, "template", _render_record, _jinja.compile_template)


def _compiled_or_sandboxed(source: str, profile: JinjaProfile, kind: str, run: Any, compile_: Any) -> Any:
    """``f(record)``: the compiled function of ``source`` when it compiles, handing the
    records it gives :data:`SLOW` for to the sandbox (``run(compile_(source,
    profile), record)``); else the sandbox alone."""
    compiled = compile_simple(source, profile, kind)
    if compiled is None:

        def sandboxed(record: Mapping[str, Any]) -> Any:
            return run(compile_(source, profile), record)

        return sandboxed
    fast = compiled.function

    def checked(record: Mapping[str, Any]) -> Any:
        value = fast(record)
        if value is SLOW:
            return run(compile_(source, profile), record)
        return value

    checked.compiled = compiled  # type: ignore[attr-defined]
    return checked


def expression_evaluator(source: str, profile: JinjaProfile = FIELDS) -> Callable[[Mapping[str, Any]], Any]:
    """``evaluate(record)``: exactly ``jinja_env.evaluate(compile_expression(source,
    profile), record, record=True)``, in plain Python when the expression is simple."""
    return _expression_evaluator(source, profile)


@functools.lru_cache(maxsize=4096)
def _expression_evaluator(source: str, profile: JinjaProfile) -> Callable[[Mapping[str, Any]], Any]:
    return _compiled_or_sandboxed(source, profile, "expression", _evaluate_record, _jinja.compile_expression)


def _render_record(compiled: Any, record: Mapping[str, Any]) -> str:
    return _jinja.render(compiled, record, record=True)


def _evaluate_record(compiled: Any, record: Mapping[str, Any]) -> Any:
    return _jinja.evaluate(compiled, record, record=True)
