"""The hardened Jinja sandbox behind :mod:`prompt_style.safe.jinja_env`: the names it calls, gathered here.

``ImmutableSandboxedEnvironment`` already stops escapes (private attributes,
changing data). This package adds what it lacks for untrusted templates:

- **Budgets** (:class:`~prompt_style.safe.limits.JinjaLimits`) kept in a
  per-render :class:`Budget` found through a context variable, checked where
  work happens: every ``{% for %}`` iterable is wrapped (a filter named
  ``ps-loop`` inserted at compile time, which no template can name), every
  ``~`` goes through ``ps-concat``, the operators that can amplify (``*``,
  ``**``, ``%``, ``+``) are intercepted, every call goes through
  :meth:`HardenedEnvironment.call`, every filter is wrapped, every printed
  value passes :func:`finalize`, and ``str.format`` uses a guarded formatter.
  Each check is an addition and a comparison with a threshold (see
  :class:`Budget`); the deadline is watched by a timer thread
  (``_deadline.py``), so that a check point tests a flag instead of reading
  the clock.
- **No constant folding**: the optimizer is off and ``finalize`` takes the
  eval context, so Jinja evaluates nothing at compile time
  (``{{ 'a' * 10**9 }}`` costs nothing until it is rendered, and then stops).
- **No leaks**: printing a function, method, class or Jinja internal object
  (``lipsum``, ``cycler``, ``joiner``, ``namespace``, ``self``, ``loop``, a
  macro, ``range``) is a :class:`~prompt_style.SandboxError`, wherever it is
  turned into text (output, ``~``, ``%``, ``format``, ``string``, ``join``...).
  ``lipsum`` is not offered at all (it is random, and large on demand).

Where the parts live (each imports only those above it):

- ``budget.py``: :class:`Budget`, the active budget, loop counters (no jinja2);
- ``values.py``: what may be turned into text (leaks, sizes), ``%``,
  ``str.format`` and the operators' checks, :func:`finalize`;
- ``filters.py``: the filters, str methods and globals the sandbox allows,
  ``ps-loop`` and ``ps-concat``;
- ``environment.py``: :class:`HardenedEnvironment` and its variants, the
  compile-time rewrite;
- ``render.py``: rendering within a budget, error translation, the clock.

:mod:`~prompt_style.safe.jinja_env` imports this package on first use (it is
where jinja2 gets imported) and calls the names below.
"""

from __future__ import annotations

from .budget import _ACTIVE as _ACTIVE
from .budget import Budget, active_budget
from .environment import COMPARE_FILTER, CONCAT_FILTER, LOOP_FILTER, HardenedEnvironment, environment_class, rewrite
from .filters import _check_str_method as _check_str_method
from .filters import (
    binop_value,
    call_method,
    check_method_call,
    compare_values,
    concat_values,
    loop_items,
    plus_values,
    regex_replace,
)
from .render import (
    BudgetedTemplate,
    CompiledExpression,
    bound_runner,
    current_time,
    evaluate_expression,
    render_template,
    run_budgeted,
    strftime_now,
)
from .values import check_value, print_value

__all__ = [
    "Budget",
    "HardenedEnvironment",
    "active_budget",
    "check_value",
    "LOOP_FILTER",
    "CONCAT_FILTER",
    "environment_class",
    "rewrite",
    "render_template",
    "evaluate_expression",
    "run_budgeted",
    "bound_runner",
    "BudgetedTemplate",
    "CompiledExpression",
    "current_time",
    "strftime_now",
    "loop_items",
    "binop_value",
    "plus_values",
    "concat_values",
    "print_value",
    "regex_replace",
    "call_method",
    "check_method_call",
    "compare_values",
    "COMPARE_FILTER",
]
