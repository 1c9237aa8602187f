"""Budgets and counters of one render: :class:`Budget`, the active one, and the loop counters.

A render's budget is found through a context variable (:func:`active_budget`);
finished renders' budgets are reused (:func:`_take_budget`). Nothing here
imports jinja2.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

from ...errors import LimitError
from .. import _deadline
from .._deadline import UNSET as _UNSET
from ..limits import JinjaLimits, jinja_limits

_monotonic = time.monotonic
_CLOCK_WORK = 1 << 20  # characters built between two clock reads on the slow path (beside the watchdog)
_UNLIMITED = 1 << 62


class Budget:
    """What one render has used so far, against its limits.

    The counters are checked by comparison with a threshold, so that the common
    case is one addition and one comparison, and everything else happens on a
    slow path:

    - ``work`` (characters and items built) against ``work_check``, which is
      never more than ``step`` above the work of the last slow path: ``step`` is
      at most ``max_string``, ``max_output`` and ``max_items``, so an operation
      that builds more than any takes the slow path, where the per-operation limit is
      checked (:meth:`over_size`, :meth:`over_print`), then ``max_work``, then
      the clock (:meth:`over`);
    - ``iterations`` against ``iter_limit`` (``max_loop_iterations``), and
      ``calls`` against ``call_limit`` (``max_macro_calls``), counted at every macro
      call (:meth:`call`);
    - the deadline: ``due`` is set by the watchdog (``_deadline.py``) once the
      render is past its deadline, and every check point (loop iteration, call,
      filter, macro call) tests it: ``if budget.due: budget.tick()``.

    Custom code generators use the same protocol inline (see
    ``jinja_env.prepare_tree``).
    """

    __slots__ = (
        "limits",
        "stop_at",
        "iterations",
        "iter_limit",
        "calls",
        "call_limit",
        "work",
        "work_check",
        "step",
        "work_start",
        "now",
        "due",
        "out",
    )

    def __init__(self, limits: JinjaLimits, now: Any = None) -> None:
        self.limits = limits
        self.stop_at = _UNSET
        self.iterations = 0
        self.calls = 0
        self.work = 0
        self.now = now
        self.due = False
        self.out: list[str] | None = None  # a code generator's output list, compacted in over()
        derived = _DERIVED.get(id(limits))
        if derived is None or derived[0] is not limits:
            derived = _derive(limits)
        _, self.step, self.work_check, self.iter_limit, self.call_limit = derived
        self.work_start = self.work_check  # work_check when a render starts (the budget reused)

    def tick(self) -> None:
        """A check point that reads the clock: raise when the render is past its deadline."""
        if _monotonic() > self.stop_at:
            self.due = True  # every later check point stops too
            seconds = self.limits.seconds
            raise LimitError(
                f"the render took longer than {seconds:g} s",
                limit="deadline",
                value=seconds,
            )
        self.due = _deadline._failed  # without the watchdog, the clock is read at every check point

    def charge(self, amount: int) -> None:
        """Count ``amount`` characters or items built."""
        self.work += amount
        if self.work > self.work_check:
            self.over()

    def over(self) -> None:
        """The slow path of ``work``: ``max_work``, then the clock."""
        limits = self.limits
        if self.work > limits.max_work:
            raise LimitError(
                f"more than {limits.max_work:,} characters and items built in one render",
                limit="max_work",
                value=limits.max_work,
            )
        out = self.out
        if out is not None and len(out) > _COMPACT_PIECES:
            _compact(out, limits)
        self.tick()
        self.work_check = min(limits.max_work, self.work + self.step)

    def over_size(self, size: int, what: Any, limit: str = "max_string") -> None:
        """The slow path of an operation that built ``size`` characters (already
        added to ``work``): the per-operation ``limit`` first. ``what`` names the
        operation (or is a function that returns its name)."""
        if size > getattr(self.limits, limit):
            raise _too_long(what if isinstance(what, str) else what(), size, limit, self.limits)
        self.over()

    def over_print(self, size: int) -> None:
        """The slow path of printing a value of ``size`` characters (already added to ``work``)."""
        if size > self.limits.max_output:
            raise _too_long("printing a value", size, "max_output", self.limits)
        self.over()

    def call(self) -> None:
        """Count one macro call (a check point of the deadline too)."""
        self.calls += 1
        if self.calls > self.call_limit:
            _too_many_calls(self)
        if self.due:
            self.tick()

    def count(self, iterations: int, cost: int = 0) -> None:
        """Count ``iterations`` loop iterations at once (each printing ``cost``
        characters of literal text), for a loop over a sized sequence."""
        self.iterations += iterations
        if self.iterations > self.iter_limit:
            _too_many_iterations(self)
        if cost:
            self.charge(cost * iterations)
        if self.due:
            self.tick()


def _too_many_iterations(budget: Budget) -> None:
    raise _stop(
        "max_loop_iterations",
        budget.limits,
        f"more than {budget.limits.max_loop_iterations:,} loop iterations in one render",
    )


def _too_many_calls(budget: Budget) -> None:
    raise _stop(
        "max_macro_calls",
        budget.limits,
        f"more than {budget.limits.max_macro_calls:,} macro calls in one render",
    )


_DERIVED: dict[int, tuple[JinjaLimits, int, int, int, int]] = {}


def _derive(limits: JinjaLimits) -> tuple[JinjaLimits, int, int, int, int]:
    """``(limits, step, first work_check, iter_limit, call_limit)``, computed once per limits object."""
    step = min(limits.max_string, limits.max_output, limits.max_items, _CLOCK_WORK)
    derived = (limits, step, min(limits.max_work, step), limits.max_loop_iterations, limits.max_macro_calls)
    if len(_DERIVED) > 256:
        _DERIVED.clear()
    _DERIVED[id(limits)] = derived
    return derived


class _Ambient(Budget):
    """Used when nothing renders through :func:`jinja_env.render`: the per-operation
    limits apply, the per-render counters cannot (there is no render to count in).
    A fresh one is made each time one is asked for (they are never shared)."""

    __slots__ = ()

    def __init__(self, limits: JinjaLimits) -> None:
        super().__init__(limits)
        self.iter_limit = self.call_limit = _UNLIMITED

    def tick(self) -> None:
        pass

    def over(self) -> None:
        self.work_check = self.work + self.step


_COMPACT_PIECES = 4096
"""Pieces of output a code generator's render may hold before :meth:`Budget.over` joins
them (see :func:`_compact`)."""


def _compact(out: list[str], limits: JinjaLimits) -> None:
    """Join the pieces of a render's output in place, checking ``max_output``: ten million
    loop iterations that each print a number (within the counted budgets) would
    otherwise keep ten million small strings (600 MB) until the render ends. Called
    from the slow path of ``work``, at most every ``step`` characters and items built,
    so the output is joined at most ``max_work / step`` times."""
    joined = "".join(out)
    if len(joined) > limits.max_output:
        raise output_too_long(limits)
    out[:] = [joined]


def output_too_long(limits: JinjaLimits) -> LimitError:
    """The stop of a render whose output would be longer than ``max_output``."""
    return _stop("max_output", limits, f"the output would be longer than {limits.max_output:,} characters")


_ACTIVE: ContextVar[Budget | None] = ContextVar("prompt_style_jinja_budget", default=None)
_ACTIVE_SET, _ACTIVE_RESET = _ACTIVE.set, _ACTIVE.reset


def active_budget() -> Budget:
    """The budget of the render in progress, else a fresh ambient one."""
    budget = _ACTIVE.get()
    if budget is not None:
        return budget
    return _Ambient(jinja_limits())


def _stop(limit: str, limits: JinjaLimits, message: str) -> LimitError:
    return LimitError(message, limit=limit, value=getattr(limits, limit))


def _too_long(what: str, size: int, limit: str, limits: JinjaLimits, unit: str = "") -> LimitError:
    unit = unit or ("items" if limit == "max_items" else "characters")
    return _stop(limit, limits, f"{what} would build {size:,} {unit} (more than {getattr(limits, limit):,})")


class _Counted:
    """A loop's (or a lazy filter's) iterable, counting iterations against the render's budget."""

    __slots__ = ("_it", "_budget", "_cost")

    def __init__(self, iterable: Any, budget: Budget, cost: int) -> None:
        self._it = iter(iterable)
        self._budget = budget
        self._cost = cost

    def __iter__(self) -> "_Counted":
        return self

    def __next__(self) -> Any:
        item = next(self._it)
        budget = self._budget
        budget.iterations += 1
        if budget.iterations > budget.iter_limit:
            _too_many_iterations(budget)
        if self._cost:
            budget.work += self._cost
            if budget.work > budget.work_check:
                budget.over()
        if budget.due:
            budget.tick()
        return item


class _CountedSized(_Counted):
    """:class:`_Counted` for a sized iterable: ``loop.length`` needs no copy."""

    __slots__ = ("_len",)

    def __init__(self, iterable: Any, budget: Budget, cost: int) -> None:
        self._len = len(iterable)
        super().__init__(iterable, budget, cost)

    def __len__(self) -> int:
        return self._len


def _take_budget(limits: JinjaLimits, now: Any) -> Budget:
    """A budget for a render: one of a finished render's, made like new (see _SPARE), else a new one."""
    try:
        budget = _SPARE_POP()
    except IndexError:
        return Budget(limits, now)
    budget.stop_at = _UNSET
    budget.iterations = budget.calls = budget.work = 0
    budget.now = now
    budget.due = False
    budget.out = None
    if budget.limits is not limits:
        _set_limits(budget, limits)
    else:
        budget.work_check = budget.work_start
    return budget


def _set_limits(budget: Budget, limits: JinjaLimits) -> None:
    """A reused budget's limits (and what is derived from them), for a render under other limits."""
    derived = _DERIVED.get(id(limits))
    if derived is None or derived[0] is not limits:
        derived = _derive(limits)
    budget.limits, budget.step, budget.work_check, budget.iter_limit, budget.call_limit = derived
    budget.work_start = budget.work_check


# Budgets of finished renders of run_budgeted, to reuse: a render's objects (lazy filters,
# loops) do not outlive it, since a render returns a string.
_SPARE: list[Budget] = []
_SPARE_POP, _SPARE_APPEND = _SPARE.pop, _SPARE.append
