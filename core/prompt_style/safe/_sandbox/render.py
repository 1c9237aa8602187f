"""Rendering within one render's budgets (templates, expressions, custom renderers), errors translated; the clock."""

from __future__ import annotations

import copy
import operator
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.runtime import Undefined

from ...errors import LimitError, SandboxError
from .. import _deadline
from ..clock import fixed_time
from ..limits import _SCOPE, JinjaLimits, jinja_limits
from ..limits import _cache as _DEFAULT_LIMITS
from ..plain import PLAIN_SCALARS, plain_fields
from .budget import (
    _ACTIVE,
    _ACTIVE_RESET,
    _ACTIVE_SET,
    _SPARE_APPEND,
    _SPARE_POP,
    _UNSET,
    Budget,
    _set_limits,
    _take_budget,
    _too_long,
    active_budget,
    output_too_long,
)
from .values import _fail_undefined, check_value

_SCOPE_GET = _SCOPE.get  # the innermost limits_scope, else None (then jinja_limits())
_DEFAULT_LIMITS_GET = _DEFAULT_LIMITS.get  # jinja_limits() without a scope, once read
_RUNNING_ADD = _deadline.RUNNING.add
_RUNNING_DISCARD = _deadline.RUNNING.discard


# -- rendering ----------------------------------------------------------------------


def _template_line(exc: BaseException, template: Any) -> int | None:
    """The template line where ``exc`` was raised (innermost template frame)."""
    line = None
    if template is None or not hasattr(template, "get_corresponding_lineno"):
        return None
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith("<") and not name.startswith("<frozen"):  # generated template code
            try:
                line = template.get_corresponding_lineno(tb.tb_lineno)
            except Exception:  # pragma: no cover - debug info is best effort
                pass
        tb = tb.tb_next
    return line


def _describe_template(template: Any, name: str | None, line: int | None) -> str:
    from ...errors import cut

    if name is None:
        source = getattr(template, "ps_source", None)
        name = f"template {cut(source, 60)}" if source is not None else "the template"
    return f"{name}, line {line}" if line else name


def _translate(exc: BaseException, template: Any, name: str | None) -> BaseException:
    """Typed errors for stops, with the template and its line; other template
    errors pass unchanged (callers translate them), with ``ps_template_line`` set."""
    import sys

    from ...errors import PromptStyleError

    line = _template_line(exc, template)
    if isinstance(exc, PromptStyleError):
        if not getattr(exc, "ps_described", False):
            exc.message = f"{_describe_template(template, name, line)}: {exc.message}"
            exc.ps_described = True  # type: ignore[attr-defined]
        return exc
    where = _describe_template(template, name, line)
    if isinstance(exc, RecursionError):
        err: PromptStyleError = LimitError(
            f"{where}: macros, recursive loops or values nest too deeply",
            limit="recursion",
            value=sys.getrecursionlimit(),
            hint="Python's recursion limit stopped it; templates cannot raise it",
        )
    elif isinstance(exc, MemoryError):
        err = LimitError(
            f"{where}: the render ran out of memory",
            limit="memory",
            hint="lower the budgets (docs/security.md) or give the process more memory",
        )
    elif isinstance(exc, jinja2.exceptions.SecurityError):
        err = SandboxError(f"{where}: {exc}", hint="templates may not read private attributes or change data")
    else:
        try:
            exc.ps_template_line = line  # type: ignore[attr-defined]
        except Exception:  # pragma: no cover
            pass
        return exc
    err.ps_described = True  # type: ignore[attr-defined]
    return err


_STOPPED: list[Any] = [None]
"""``[(template, limits, values, error)]``: the last render of a record that a budget
stopped (any thread; replaced as a whole). See :func:`_stopped_before`."""
_NOTHING = object()


def _values(template: Any, context: Mapping[str, Any]) -> tuple[Any, ...] | None:
    names = template.__dict__.get("ps_names")
    if names is None or not isinstance(context, Mapping):
        return None
    get = context.get
    return tuple(get(name, _NOTHING) for name in names)


def _stopped_before(template: Any, context: Mapping[str, Any], limits: Any) -> None:
    """Raise again the error a budget stopped this template with, when it rendered the
    same values (the same objects, in the names it refers to) under the same budgets:
    a renderer's fast path hands a record it could not render to the general path,
    which renders it again to say what went wrong, and a template that refers to no
    record field renders the same for every record; a bomb would otherwise cost its
    budget again each time (a counted budget stops it the same way again; the clock
    would, later). A copy: callers add where it happened to the one they get."""
    last = _STOPPED[0]
    if last[0] is not template or (last[1] is not limits and last[1] != limits):
        return
    values = _values(template, context)
    if values is not None and len(values) == len(last[2]) and all(map(operator.is_, values, last[2])):
        raise copy.copy(last[3])


def _remember_stop(template: Any, context: Mapping[str, Any], limits: Any, error: BaseException) -> None:
    if isinstance(error, LimitError):
        values = _values(template, context)
        if values is not None:
            _STOPPED[0] = (template, limits, values, copy.copy(error))


def render_template(
    template: Any,
    context: Mapping[str, Any],
    limits: JinjaLimits | None = None,
    *,
    name: str | None = None,
    now: Any = None,
    record: bool = False,
) -> str:
    limits = limits or _SCOPE_GET() or _DEFAULT_LIMITS_GET(JinjaLimits) or jinja_limits()
    if record and _STOPPED[0] is not None:
        _stopped_before(template, context, limits)
    budget = _take_budget(limits, now)
    token = _ACTIVE_SET(budget)
    _RUNNING_ADD(budget)
    if _deadline._kick:
        _deadline.register(budget)
    try:
        out: list[str] = []
        size = 0
        max_output = budget.limits.max_output
        # The output's pieces are joined every _COMPACT characters: ten million loop
        # iterations printing a character each would otherwise keep ten million small
        # strings (half a gigabyte). One comparison per piece, as before.
        check = max_output if max_output < _COMPACT else _COMPACT
        for chunk in template.root_render_func(_new_context(template, context, record)):
            size += len(chunk)
            if size > check:
                if size > max_output:
                    raise output_too_long(budget.limits)
                out = ["".join(out)]
                check = min(max_output, size + _COMPACT)
            out.append(chunk)
        if budget.due:
            budget.tick()
        return "".join(out)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        translated = _translate(exc, template, name)
        if record:
            _remember_stop(template, context, limits, translated)
        if translated is exc:
            raise
        raise translated from None
    finally:
        _RUNNING_DISCARD(budget)
        _ACTIVE_RESET(token)
        _SPARE_APPEND(budget)


def _context_fields() -> set[str]:
    return set(vars(jinja2.runtime.Context(jinja2.Environment(), {}, None, {})))


# Jinja's Context(environment, parent, name, blocks, globals), with its attributes set directly
# (its __init__ makes a set of the globals' names each time); should a Jinja release change
# what a Context holds, contexts are made by Jinja again.
_CONTEXT_FIELDS_OK = _context_fields() == {
    "parent",
    "vars",
    "environment",
    "eval_ctx",
    "exported_vars",
    "name",
    "globals_keys",
    "blocks",
}
_new_object = object.__new__
_Context = jinja2.runtime.Context
_EvalContext = nodes.EvalContext


_CONTAINERS = frozenset({list, tuple, dict})
_COMPACT = 1 << 18


def _plain(template: Any, variables: Mapping[str, Any]) -> Mapping[str, Any]:
    """``variables`` with the values the template refers to as plain data (safe/plain.py):
    for a plain record, the types of those values (and of the items of its lists) are
    looked at in one pass of C each, and the record is used as it is."""
    if not isinstance(variables, Mapping):
        return variables  # not a record: the render says what is wrong, as it always did
    names = template.__dict__.get("ps_names")
    if names is None:
        names = tuple(variables)
    get = variables.get
    kinds = set(map(type, map(get, names)))
    if kinds <= PLAIN_SCALARS:
        return variables
    if kinds - PLAIN_SCALARS <= _CONTAINERS:
        for value in map(get, names):
            kind = type(value)
            if kind is list or kind is tuple:
                if not set(map(type, value)) <= PLAIN_SCALARS:
                    break
            elif kind is dict:
                if not (set(map(type, value.values())) <= PLAIN_SCALARS and set(map(type, value)) <= PLAIN_SCALARS):
                    break
        else:
            return variables
    return plain_fields(variables, names)


def _new_context(template: Any, variables: Mapping[str, Any], record: bool = False) -> Any:
    """``template.new_context(variables)``, faster for templates without blocks (for a
    record, the values it refers to as plain data first)."""
    if record:
        variables = _plain(template, variables)
    parts = template.__dict__.get("_ps_context_parts")
    if parts is None:
        if not _CONTEXT_FIELDS_OK or template.blocks or type(template.globals) is not dict:
            return template.new_context(variables)
        # An eval context is changed by {% autoescape %} only: without one, one is shared.
        source = getattr(template, "ps_source", None)
        shared = (
            _EvalContext(template.environment, template.name)
            if source is not None and "autoescape" not in source and "eval_ctx" not in source
            else None
        )
        parts = template._ps_context_parts = (template.globals, set(template.globals), shared)
    globals_, keys, shared = parts
    parent = globals_.copy()
    parent.update(variables)
    context = _new_object(_Context)
    context.parent = parent
    context.vars = {}
    context.environment = environment = template.environment
    context.eval_ctx = shared or _EvalContext(environment, template.name)
    context.exported_vars = set()
    context.name = template.name
    context.globals_keys = keys
    context.blocks = {}
    return context


def evaluate_expression(
    template: Any,
    context: Mapping[str, Any],
    limits: JinjaLimits | None = None,
    *,
    name: str | None = None,
    now: Any = None,
    record: bool = False,
) -> Any:
    limits = limits or _SCOPE_GET() or _DEFAULT_LIMITS_GET(JinjaLimits) or jinja_limits()
    compiled = template.template if type(template) is CompiledExpression else template
    if record and _STOPPED[0] is not None:
        _stopped_before(compiled, context, limits)
    budget = _take_budget(limits, now)
    token = _ACTIVE_SET(budget)
    _RUNNING_ADD(budget)
    if _deadline._kick:
        _deadline.register(budget)
    try:
        ctx = _new_context(compiled, context, record)
        for _ in compiled.root_render_func(ctx):
            pass
        value = ctx.vars["result"]
        if type(value) is not str:
            if isinstance(value, Undefined):
                _fail_undefined(value)
            else:
                # A value the template built is bounded as if printed: '[x] * 1000' is cheap
                # to build and huge to print, and whoever uses it will print it.
                check_value(value, budget)
        return value
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        translated = _translate(exc, template, name)
        if record:
            _remember_stop(compiled, context, limits, translated)
        if translated is exc:
            raise
        raise translated from None
    finally:
        _RUNNING_DISCARD(budget)
        _ACTIVE_RESET(token)
        _SPARE_APPEND(budget)  # (a value with lazy parts in it is refused: nothing refers to the budget)


def run_budgeted(
    render: Any,
    limits: JinjaLimits | None = None,
    template: Any = None,
    name: str | None = None,
    now: Any = None,
    args: tuple = (),
) -> Any:
    """``render(*args)`` (any code that renders a template of this environment, such
    as a custom code generator's render function) within one render's budgets, its
    errors translated as :func:`render_template` translates them."""
    limits = limits or _SCOPE_GET() or _DEFAULT_LIMITS_GET(JinjaLimits) or jinja_limits()
    budget = _take_budget(limits, now)
    token = _ACTIVE_SET(budget)
    _RUNNING_ADD(budget)
    if _deadline._kick:
        _deadline.register(budget)
    try:
        result = render(*args)
        if type(result) is str and len(result) > limits.max_output:
            raise output_too_long(limits)
        if budget.due:
            budget.tick()
        return result
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        translated = _translate(exc, template, name)
        if translated is exc:
            raise
        raise translated from None
    finally:
        _RUNNING_DISCARD(budget)
        _ACTIVE_RESET(token)
        _SPARE_APPEND(budget)  # (as many as renders run at once, at most)


def bound_runner(render: Any, template: Any = None, name: str | None = None) -> Any:
    """``run(arg)``: :func:`run_budgeted` of ``render(arg)`` for one render function,
    made once (a hot path renders through it many times): the process's or the
    scope's limits, the real clock.

    The same steps as :func:`run_budgeted`, in one function: a short chat template
    renders in about 2 µs, of which the call through ``run_budgeted`` and
    ``_take_budget`` (two frames, the arguments packed and unpacked) was a tenth."""
    spare_pop = _SPARE_POP
    unset = _UNSET
    new_budget = Budget

    def run(arg: Any) -> Any:
        limits = _SCOPE_GET() or _DEFAULT_LIMITS_GET(JinjaLimits) or jinja_limits()
        # _take_budget(limits, None), inline.
        try:
            budget = spare_pop()
        except IndexError:
            budget = new_budget(limits, None)
        else:
            budget.stop_at = unset
            budget.iterations = budget.calls = budget.work = 0
            budget.now = budget.out = None
            budget.due = False
            if budget.limits is not limits:
                _set_limits(budget, limits)
            else:
                budget.work_check = budget.work_start
        token = _ACTIVE_SET(budget)
        _RUNNING_ADD(budget)
        if _deadline._kick:
            _deadline.register(budget)
        try:
            result = render(arg)
            if type(result) is str and len(result) > limits.max_output:
                raise output_too_long(limits)
            if budget.due:
                budget.tick()
            return result
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                raise
            translated = _translate(exc, template, name)
            if translated is exc:
                raise
            raise translated from None
        finally:
            _RUNNING_DISCARD(budget)
            _ACTIVE_RESET(token)
            _SPARE_APPEND(budget)

    return run


class BudgetedTemplate(jinja2.Template):
    """``compiled.render(...)`` within the default budgets, like :func:`render_template`."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        return render_template(self, dict(*args, **kwargs))


class CompiledExpression:
    """A compiled ``{{ expression }}``: calling it returns the value (typed),
    within the default budgets; :func:`evaluate_expression` takes budgets."""

    __slots__ = ("template", "source")

    def __init__(self, template: Any, source: str) -> None:
        self.template = template
        self.source = source

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return evaluate_expression(self, dict(*args, **kwargs))

    def new_context(self, context: Mapping[str, Any]) -> Any:
        return self.template.new_context(context)

    def root_render_func(self, ctx: Any) -> Any:
        return self.template.root_render_func(ctx)

    def get_corresponding_lineno(self, lineno: int) -> int:
        return self.template.get_corresponding_lineno(lineno)

    @property
    def ps_source(self) -> str:
        return "{{ " + self.source + " }}"


# -- the clock ----------------------------------------------------------------------


def current_time() -> Any:
    """The render's clock: its ``now``, else the innermost ``fixed_clock``, else
    ``PROMPT_STYLE_NOW``, else the real time."""
    import datetime

    budget = _ACTIVE.get()
    now = budget.now if budget is not None else None
    if now is None:
        now = fixed_time()
    if now is None:
        return datetime.datetime.now()
    return now


def strftime_now(format: str) -> str:
    """transformers' ``strftime_now`` global, on the render's clock."""
    budget = _ACTIVE.get() or active_budget()
    if not isinstance(format, str):
        raise TypeError(f"strftime_now() needs a format string, not {type(format).__name__}")
    if len(format) * 32 > budget.limits.max_string:
        raise _too_long("strftime_now()", len(format) * 32, "max_string", budget.limits)
    return current_time().strftime(format)
