"""The hardened Jinja environment behind :mod:`prompt_style.safe.jinja_env`.

``ImmutableSandboxedEnvironment`` already stops escapes (private attributes,
changing data). This module adds what it lacks for untrusted templates:

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
"""

from __future__ import annotations

import functools
import re
import signal
import threading
import time
import types
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.runtime import Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Cycler, Joiner, Namespace, pass_eval_context

from ..errors import LimitError, SandboxError
from . import _deadline
from ._deadline import UNSET as _UNSET
from .clock import fixed_time
from .limits import _SCOPE, JinjaLimits, jinja_limits
from .limits import _cache as _DEFAULT_LIMITS

__all__ = ["Budget", "HardenedEnvironment", "active_budget", "check_value", "LOOP_FILTER", "CONCAT_FILTER"]

LOOP_FILTER = "ps-loop"
CONCAT_FILTER = "ps-concat"
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
    - ``iterations`` against ``iter_limit`` (``max_loop_iterations``);
    - the deadline: ``due`` is set by the watchdog (``_deadline.py``) once the
      render is past its deadline, and every check point (loop iteration, call,
      filter, macro call) tests it: ``if budget.due: budget.tick()``.

    Custom code generators use the same protocol inline (see
    ``jinja_env.prepare_tree``).
    """

    __slots__ = ("limits", "stop_at", "iterations", "iter_limit", "work", "work_check", "step", "now", "due")

    def __init__(self, limits: JinjaLimits, now: Any = None) -> None:
        self.limits = limits
        self.stop_at = _UNSET
        self.iterations = 0
        self.work = 0
        self.now = now
        self.due = False
        derived = _DERIVED.get(id(limits))
        if derived is None or derived[0] is not limits:
            derived = _derive(limits)
        _, self.step, self.work_check, self.iter_limit = derived

    def tick(self) -> None:
        """A check point that reads the clock: raise when the render is past its deadline."""
        if _monotonic() > self.stop_at:
            self.due = True  # every later check point stops too
            raise LimitError(
                f"the render took longer than {self.limits.deadline:g} s",
                limit="deadline",
                value=self.limits.deadline,
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


_DERIVED: dict[int, tuple[JinjaLimits, int, int, int]] = {}


def _derive(limits: JinjaLimits) -> tuple[JinjaLimits, int, int, int]:
    """``(limits, step, first work_check, iter_limit)``, computed once per limits object."""
    step = min(limits.max_string, limits.max_output, limits.max_items, _CLOCK_WORK)
    derived = (limits, step, min(limits.max_work, step), limits.max_loop_iterations)
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
        self.iter_limit = _UNLIMITED

    def tick(self) -> None:
        pass

    def over(self) -> None:
        self.work_check = self.work + self.step


_ACTIVE: ContextVar[Budget | None] = ContextVar("prompt_style_jinja_budget", default=None)
_ACTIVE_SET, _ACTIVE_RESET = _ACTIVE.set, _ACTIVE.reset
_SCOPE_GET = _SCOPE.get  # the innermost limits_scope, else None (then jinja_limits())
_DEFAULT_LIMITS_GET = _DEFAULT_LIMITS.get  # jinja_limits() without a scope, once read
_RUNNING_ADD = _deadline.RUNNING.add
_RUNNING_DISCARD = _deadline.RUNNING.discard


def active_budget() -> Budget:
    """The budget of the render in progress, else a fresh ambient one."""
    budget = _ACTIVE.get()
    if budget is not None:
        return budget
    return _Ambient(jinja_limits())


def _stop(limit: str, limits: JinjaLimits, message: str) -> LimitError:
    return LimitError(message, limit=limit, value=getattr(limits, limit))


def _too_long(what: str, size: int, limit: str, limits: JinjaLimits) -> LimitError:
    unit = "items" if limit == "max_items" else "characters"
    return _stop(limit, limits, f"{what} would build {size:,} {unit} (more than {getattr(limits, limit):,})")


# -- values turned into text ------------------------------------------------------

_DATA_SCALARS = (str, int, float, complex, bool, type(None), bytes)
_CONTAINERS = (list, tuple, dict, set, frozenset, range, type({}.keys()), type({}.values()), type({}.items()))
_INTERNAL_TYPES = (
    Namespace,
    Cycler,
    Joiner,
    jinja2.runtime.LoopContext,
    jinja2.runtime.TemplateReference,
    types.GeneratorType,  # a lazy filter's result that a code generator did not wrap: its repr is an address
)
_MAX_NESTING = 200


def _describe(value: Any) -> tuple[str, str]:
    """What ``value`` is, for messages, and what the template should print instead."""
    data = "print data (strings, numbers, lists, mappings), not functions, classes or template objects"
    if isinstance(value, type):
        return f"the class {value.__name__!r}", data
    bound = getattr(value, "__self__", None)
    if isinstance(value, (types.MethodType, types.MethodWrapperType)) or (
        isinstance(value, types.BuiltinMethodType) and bound is not None and not isinstance(bound, types.ModuleType)
    ):
        return f"the method {getattr(value, '__name__', '?')!r}", "call it: add parentheses"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        name = getattr(value, "__name__", "?")
        return f"the function {'range' if name == '_range' else name!r}", "call it, and print its result"
    if isinstance(value, jinja2.runtime.Macro):
        return f"the macro {value.name!r}", "call it: add parentheses"
    if isinstance(value, jinja2.runtime.LoopContext):
        return "the loop object", "print loop.index or another of its attributes"
    if isinstance(value, jinja2.runtime.TemplateReference):
        return "the template reference 'self'", data
    if isinstance(value, (_Counted, types.GeneratorType)):
        return "a lazy sequence", "add |list to print its items"
    return f"a {type(value).__name__} object", data


def _refuse(value: Any) -> SandboxError:
    what, advice = _describe(value)
    return SandboxError(f"the template prints {what}, which would show Python internals", hint=advice)


def _fail_undefined(value: Undefined) -> None:
    # StrictUndefined prints as 'Undefined' inside a list; make it the error it is.
    if isinstance(value, jinja2.StrictUndefined):
        value._fail_with_undefined_error()


_OUTPUT = -1


def check_value(value: Any, budget: Budget | None = None, *, limit: int | None = _OUTPUT) -> int:
    """Check that ``value`` may be turned into text: no function, class or Jinja
    internal object anywhere in it, no ``StrictUndefined`` inside a container,
    nesting and (unless ``limit`` is ``None``) size within budget: ``limit``
    characters, ``max_output`` by default. Returns an upper bound of its text length.

    :raises SandboxError: for a value that would leak Python internals.
    :raises jinja2.UndefinedError: for a missing name inside a container.
    :raises LimitError: for a value whose text would be too long or too deep.
    """
    budget = budget or active_budget()
    limits = budget.limits
    measure = limit is not None
    if limit == _OUTPUT:
        limit = limits.max_output
    elif limit is None:
        limit = 1 << 62
    size = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind is str:
            n = len(item)
            size += n + 2 if n < 64 or not measure or item.isprintable() else 10 * n + 2
        elif kind is int:
            size += item.bit_length() // 3 + 2
        elif isinstance(item, _DATA_SCALARS):
            size += 32 if not isinstance(item, (str, bytes)) else 4 * len(item) + 3
        elif isinstance(item, Undefined):
            _fail_undefined(item)
            size += 9
        elif isinstance(item, _CONTAINERS):
            if depth >= _MAX_NESTING:
                raise _stop(
                    "max_output", limits, f"a value nested more than {_MAX_NESTING} levels deep cannot be printed"
                )
            if kind is range:
                size += 24
                continue
            size += 2 + 2 * len(item)
            if size > limit:
                break
            if isinstance(item, Mapping):
                for key, val in item.items():
                    push((key, depth + 1))
                    push((val, depth + 1))
            else:
                for sub in item:
                    push((sub, depth + 1))
        elif callable(item) or isinstance(item, _INTERNAL_TYPES):
            raise _refuse(item)
        elif kind.__repr__ is object.__repr__ and (depth or kind.__str__ is object.__str__):
            # Python's default text names the object's address; inside a list or a
            # mapping an item prints as its repr, whatever its __str__ says.
            raise _refuse(item)
        else:
            size += 64  # another value type with its own text form (a date, a Decimal)
        if size > limit:
            break
    if size > limit:
        raise _stop(
            "max_output"
            if limit == limits.max_output
            else "max_filter_input"
            if limit == limits.max_filter_input
            else "max_string",
            limits,
            f"a value of about {size:,} characters as text would be printed (more than {limit:,})",
        )
    return size


def _text(value: Any, budget: Budget, limit: int | None = None) -> str:
    """``str(value)``, after :func:`check_value`."""
    if type(value) is str:
        return value
    if not isinstance(value, str):
        check_value(value, budget, limit=limit if limit is not None else budget.limits.max_string)
    return str(value)


@pass_eval_context
def finalize(eval_ctx: Any, value: Any) -> Any:
    """Every printed value passes here (taking the eval context keeps Jinja
    from evaluating outputs at compile time)."""
    if type(value) is str:
        budget = _ACTIVE.get() or active_budget()
        budget.work += len(value)
        if budget.work > budget.work_check:
            budget.over_print(len(value))
        return value
    if isinstance(value, Undefined):
        return value  # printed as Jinja's undefined type decides (an error, or empty)
    if not isinstance(value, str):
        budget = _ACTIVE.get() or active_budget()
        kind = type(value)
        if kind is int or kind is float or kind is bool or value is None:
            size = value.bit_length() // 3 + 2 if kind is int else 32  # check_value's size, without its walk
            if size <= budget.limits.max_output:
                budget.charge(size)
                return value
        budget.charge(check_value(value, budget))
    return value


def print_value(eval_ctx: Any, value: Any, pending: int = 0, counted: bool = True) -> str:
    """``str(finalize(value))``, with ``pending`` characters counted by a code
    generator's inline checks charged first: the slow path of an inline print
    (``counted``: ``pending`` includes the value's length when it is a string)."""
    budget = _ACTIVE.get() or active_budget()
    kind = type(value)
    if kind is str and counted:
        budget.work += pending
        if budget.work > budget.work_check:
            budget.over_print(len(value))
        return value
    if pending:
        budget.charge(pending)
    if kind is int or kind is float or kind is bool or value is None:
        # What finalize charges for a number (check_value's size), without its walk.
        size = value.bit_length() // 3 + 2 if kind is int else 32
        if size <= budget.limits.max_output:
            budget.work += size
            if budget.work > budget.work_check:
                budget.over()
            return str(value)
    return str(finalize(eval_ctx, value))


# -- format strings ---------------------------------------------------------------

_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([a-zA-Z%])")
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d+)?[_,]?(?:\.(\d+))?[a-zA-Z%]?")


def _check_percent(fmt: str, args: Any, budget: Budget, what: str) -> None:
    """``fmt % args`` within budget: widths, precisions and the values' text."""
    limits = budget.limits
    total = len(fmt)
    star = False
    for match in _PERCENT_SPEC.finditer(fmt):
        width, precision, _ = match.groups()
        for number in (width, precision):
            if number == "*":
                star = True
            elif number:
                if len(number) > 9 or int(number) > limits.max_string:
                    raise _too_long(f"{what} with a field width of {number}", int(number[:12]), "max_string", limits)
                total += int(number)
    values = args.values() if isinstance(args, Mapping) else args if isinstance(args, tuple) else (args,)
    for value in values:
        if star and type(value) is int and value > limits.max_string:
            raise _too_long(f"{what} with a field width of {value:,}", value, "max_string", limits)
        total += check_value(value, budget, limit=limits.max_string)
    if total > limits.max_string:
        raise _too_long(what, total, "max_string", limits)


def _check_spec(spec: str, budget: Budget) -> int:
    match = _FORMAT_SPEC.fullmatch(spec) if spec else None
    extra = 0
    if match:
        for number in match.groups():
            if number:
                if len(number) > 9 or int(number) > budget.limits.max_string:
                    raise _too_long(f"format spec {spec[:20]!r}", int(number[:12]), "max_string", budget.limits)
                extra += int(number)
    return extra


class GuardedFormatter(SandboxedFormatter):
    """``str.format`` in the sandbox, with widths, sizes and leaks checked."""

    def __init__(self, env: Any, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self._size = 0

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion is not None and not isinstance(value, str):
            check_value(value, active_budget(), limit=active_budget().limits.max_string)
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        budget = active_budget()
        extra = _check_spec(format_spec, budget)
        size = len(value) if type(value) is str else check_value(value, budget, limit=budget.limits.max_string)
        self._size += size + extra
        if self._size > budget.limits.max_string:
            raise _too_long("str.format", self._size, "max_string", budget.limits)
        return super().format_field(value, format_spec)


# -- operators --------------------------------------------------------------------

_SIZED = (str, list, tuple)


def _check_binop(operator: str, left: Any, right: Any, budget: Budget) -> None:
    limits = budget.limits
    if operator == "+":
        if isinstance(left, _SIZED) and isinstance(right, _SIZED):
            size = len(left) + len(right)
            limit = "max_string" if isinstance(left, str) else "max_items"
            if size > getattr(limits, limit):
                raise _too_long("'+'", size, limit, limits)
            budget.charge(size)
    elif operator == "*":
        seq, times = (left, right) if isinstance(left, _SIZED) else (right, left)
        if isinstance(seq, _SIZED) and isinstance(times, int):
            size = len(seq) * times
            limit = "max_string" if isinstance(seq, str) else "max_items"
            if size > getattr(limits, limit):
                raise _too_long("'*'", size, limit, limits)
            budget.charge(max(size, 0))
        elif type(left) is int and type(right) is int:
            bits = left.bit_length() + right.bit_length()
            if bits > limits.max_int_bits:
                raise _stop("max_int_bits", limits, f"'*' would build an integer of about {bits:,} bits")
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            bits = right * (abs(left).bit_length() - 1) if right < 1 << 64 else 1 << 64
            if bits > limits.max_int_bits:
                raise _stop("max_int_bits", limits, f"'**' would build an integer of at least {bits:,} bits")
    elif operator == "%":
        if isinstance(left, str):
            _check_percent(left, right, budget, "'%'")


# -- str methods called from templates --------------------------------------------

# str methods that only read their string (never str.format, which the sandbox wraps):
# their results are at most a few times as long as the string, and are charged.
_STR_READERS = frozenset(
    """capitalize casefold count endswith find index isalnum isalpha isascii isdecimal isdigit
    isidentifier islower isnumeric isprintable isspace istitle isupper lower lstrip partition
    removeprefix removesuffix rfind rindex rpartition rsplit rstrip split splitlines startswith
    strip swapcase title upper""".split()
)

_AMPLIFYING = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate"})
# (jinja_env.AMPLIFYING_STR_METHODS is the same set, for code generators with fast paths)


def _check_str_method(name: str, text: str, args: tuple, kwargs: dict, budget: Budget) -> tuple:
    """Check a str method that can amplify; returns ``args`` (``join`` gets a list)."""
    limits = budget.limits
    size = 0
    if name in ("center", "ljust", "rjust", "zfill"):
        width = args[0] if args else kwargs.get("width", 0)
        if isinstance(width, int):
            size = width
    elif name == "expandtabs":
        tabsize = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(tabsize, int):
            size = len(text) + text.count("\t") * tabsize
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        if (len(text) + 1) * (len(args[1]) + 1) > limits.max_string:  # else it cannot be too long
            size = _replace_size(text, args[0], args[1], args[2] if len(args) > 2 else kwargs.get("count", -1))
    elif name == "join" and args:
        items = args[0]
        if not isinstance(items, (list, tuple, str)):
            items = list(items)
            if len(items) > limits.max_items:
                raise _too_long(f"str.{name}", len(items), "max_items", limits)
            args = (items,) + args[1:]
        size = len(text) * max(len(items) - 1, 0)
        if size <= limits.max_string:
            size += sum(len(i) for i in items if isinstance(i, str))
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        size = len(text) * longest
    if size > limits.max_string:
        raise _too_long(f"str.{name}", size, "max_string", limits)
    return args


def _replace_size(text: str, old: str, new: str, count: Any) -> int:
    found = len(text) + 1 if not old else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


# -- filters ------------------------------------------------------------------------

# Filters that turn their input into text: a leak check on the input.
_TEXT_FILTERS = frozenset(
    {
        "capitalize",
        "center",
        "e",
        "escape",
        "forceescape",
        "indent",
        "lower",
        "pprint",
        "replace",
        "safe",
        "string",
        "striptags",
        "title",
        "trim",
        "truncate",
        "upper",
        "urlencode",
        "urlize",
        "wordcount",
        "wordwrap",
        "xmlattr",
        "regex_replace",
    }
)
# Filters that iterate over their input: a sized input is bounded by max_items
# (a string is iterated character by character), a lazy one is counted as loop iterations.
_ITERATING_FILTERS = frozenset(
    {
        "batch",
        "dictsort",
        "groupby",
        "join",
        "list",
        "map",
        "max",
        "min",
        "reject",
        "rejectattr",
        "reverse",
        "select",
        "selectattr",
        "slice",
        "sort",
        "sum",
        "unique",
        "items",
    }
)
# Filters that work character by character in Python: input bounded by max_filter_input.
_SLOW_FILTERS = frozenset({"wordwrap", "urlize", "pprint", "title", "striptags", "regex_replace"})


def _int_arg(args: tuple, kwargs: dict, position: int, name: str, default: Any) -> Any:
    if len(args) > position:
        return args[position]
    return kwargs.get(name, default)


def _pre_filter(name: str, args: tuple, kwargs: dict, budget: Budget) -> None:
    """Checks before filter ``name`` runs; ``args[0]`` is the filtered value."""
    limits = budget.limits
    value = args[0] if args else None
    if name in _TEXT_FILTERS and not isinstance(value, str):
        check_value(value, budget, limit=limits.max_string)
    if name in _SLOW_FILTERS:
        size = len(value) if isinstance(value, str) else check_value(value, budget, limit=limits.max_filter_input)
        if name == "regex_replace":
            size += sum(len(a) for a in args[1:3] if isinstance(a, str))
        if size > limits.max_filter_input:
            raise _stop(
                "max_filter_input",
                limits,
                f"filter {name!r} got {size:,} characters of input (more than {limits.max_filter_input:,})",
            )
    for key in ("indent", "width"):  # json.dumps(indent=...) in custom tojson filters, and the like
        extra = kwargs.get(key)
        if type(extra) is int and extra > limits.max_string:
            raise _too_long(f"filter {name!r} with {key}={extra:,}", extra, "max_string", limits)
    if name in _ITERATING_FILTERS and hasattr(value, "__len__") and not isinstance(value, Undefined):
        if len(value) > limits.max_items:
            raise _stop(
                "max_items", limits, f"filter {name!r} got {len(value):,} items (more than {limits.max_items:,})"
            )
    text = value if isinstance(value, str) else None
    if name == "center":
        width = _int_arg(args, kwargs, 1, "width", 80)
        if isinstance(width, int) and width > limits.max_string:
            raise _too_long("filter 'center'", width, "max_string", limits)
    elif name == "indent" and text is not None:
        width = _int_arg(args, kwargs, 1, "width", 4)
        prefix = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        size = len(text) + (text.count("\n") + 1) * max(prefix, 0)
        if size > limits.max_string:
            raise _too_long("filter 'indent'", size, "max_string", limits)
    elif name == "wordwrap" and text is not None:
        width = _int_arg(args, kwargs, 1, "width", 79)
        wrap = _int_arg(args, kwargs, 3, "wrapstring", None)
        lines = len(text) // max(width if isinstance(width, int) else 1, 1) + text.count("\n") + 1
        size = len(text) + lines * (len(wrap) if isinstance(wrap, str) else 1)
        if size > limits.max_string:
            raise _too_long("filter 'wordwrap'", size, "max_string", limits)
    elif name == "replace" and text is not None:
        old, new = _int_arg(args, kwargs, 1, "old", None), _int_arg(args, kwargs, 2, "new", None)
        if isinstance(old, str) and isinstance(new, str):
            size = _replace_size(text, old, new, _int_arg(args, kwargs, 3, "count", None))
            if size > limits.max_string:
                raise _too_long("filter 'replace'", size, "max_string", limits)
    elif name == "format":
        _check_percent(text if text is not None else "", kwargs or args[1:], budget, "filter 'format'")
    elif name in ("batch", "slice"):
        count = _int_arg(args, kwargs, 1, "linecount" if name == "batch" else "slices", 0)
        if isinstance(count, int) and count > limits.max_items:
            raise _too_long(f"filter {name!r}", count, "max_items", limits)
    elif name == "tojson":
        check_value(value, budget, limit=limits.max_string)


def _post_filter(name: str, result: Any, budget: Budget) -> None:
    kind = type(result)
    if kind is str or isinstance(result, str):
        n = len(result)
        budget.work += n
        if budget.work > budget.work_check:
            budget.over_size(n, lambda: f"filter {name!r}")
    elif kind is list or kind is tuple:
        n = len(result)
        if n > budget.limits.max_items:
            raise _too_long(f"filter {name!r}", n, "max_items", budget.limits)
        budget.charge(n)
    else:
        budget.charge(1)


def _lazy(result: Any) -> bool:
    """Whether a filter returned an iterator to be consumed later (map, select, batch...)."""
    return isinstance(result, types.GeneratorType) or (
        hasattr(result, "__next__") and not isinstance(result, (str, bytes, list, tuple, dict))
    )


# Filters with checks before they run (besides the keyword widths every filter gets).
_PRE_CHECKED = (
    _TEXT_FILTERS
    | _SLOW_FILTERS
    | _ITERATING_FILTERS
    | {"center", "indent", "wordwrap", "replace", "format", "batch", "slice", "tojson"}
)
# ...of which these only check that a value that is not a string may become text.
_TEXT_ONLY = _TEXT_FILTERS - _SLOW_FILTERS - _ITERATING_FILTERS - {"center", "indent", "wordwrap", "replace", "format"}


def _guard_filter(name: str, func: Any) -> Any:
    from jinja2.utils import _PassArg

    skip = 1 if _PassArg.from_obj(func) is not None else 0
    checked = name in _PRE_CHECKED
    text_only = name in _TEXT_ONLY

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _ACTIVE.get() or active_budget()
        if budget.due:
            budget.tick()
        if kwargs or (checked and not (text_only and len(args) > skip and type(args[skip]) is str)):
            _pre_filter(name, args[skip:], kwargs, budget)
        result = func(*args, **kwargs)
        if type(result) is str:
            budget.work += len(result)
            if budget.work > budget.work_check:
                budget.over_size(len(result), lambda: f"filter {name!r}")
            return result
        if _lazy(result):
            return _Counted(result, budget, 0)  # its items count as loop iterations
        _post_filter(name, result, budget)
        return result

    guarded.ps_guarded = True  # type: ignore[attr-defined]
    return guarded


@pass_eval_context
def _join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> str:
    """``join`` that sizes the result before building it (no autoescape here)."""
    from jinja2.filters import make_attrgetter

    budget = _ACTIVE.get() or active_budget()
    limits = budget.limits
    if attribute is not None:
        value = map(make_attrgetter(eval_ctx.environment, attribute), value)
    if isinstance(value, Undefined):
        value = list(value)
    sep = _text(d, budget)
    parts: list[str] = []
    size = 0
    for item in value:
        text = item if type(item) is str else _text(item, budget)
        size += len(text) + len(sep)
        if size > limits.max_string:
            raise _too_long("filter 'join'", size, "max_string", limits)
        parts.append(text)
        if not len(parts) & 4095:
            if len(parts) > limits.max_items:
                raise _too_long("filter 'join'", len(parts), "max_items", limits)
            budget.tick()
    budget.charge(size)
    return sep.join(parts)


def _sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """``sum`` that adds lists in linear time and within budget."""
    import itertools

    from jinja2.filters import make_attrgetter

    budget = _ACTIVE.get() or active_budget()
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    items = list(iterable)
    if isinstance(start, (list, tuple)) and all(isinstance(i, type(start)) for i in items):
        size = len(start) + sum(len(i) for i in items)
        if size > budget.limits.max_items:
            raise _too_long("filter 'sum'", size, "max_items", budget.limits)
        budget.charge(size)
        return type(start)(itertools.chain(start, *items))
    return sum(items, start)


_sum.jinja_pass_arg = jinja2.utils._PassArg.environment  # type: ignore[attr-defined]


class _Interrupted(BaseException):
    """Raised by the alarm inside a regular expression that ran past the deadline."""


def _under_alarm(budget: Budget, run: Any) -> Any:
    """``run()`` interrupted at the deadline when possible: Python's regular
    expression engine checks for signals, so a SIGALRM stops catastrophic
    backtracking. Only in the main thread, and only when nobody else uses SIGALRM."""
    now = _monotonic()
    if budget.stop_at == _UNSET and not isinstance(budget, _Ambient):
        budget.stop_at = now + budget.limits.deadline  # the watchdog has not seen this render yet
    remaining = budget.stop_at - now
    if (
        isinstance(budget, _Ambient)
        or threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "setitimer")
        or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)
        or signal.getitimer(signal.ITIMER_REAL)[0]
    ):
        return run()
    if remaining <= 0:
        budget.tick()

    def interrupt(signum: int, frame: Any) -> None:
        raise _Interrupted()

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001))
        try:
            return run()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Interrupted:
        budget.stop_at = 0.0
        budget.tick()
        raise  # pragma: no cover - tick raises
    finally:
        signal.signal(signal.SIGALRM, previous)


_PATTERNS: dict[str, re.Pattern] = {}


def regex_replace(value: str, pattern: str, repl: str, count: int = 0) -> str:
    """lm-evaluation-harness's ``regex_replace``, with the result sized as it is
    built and the match interrupted at the render deadline."""
    budget = _ACTIVE.get() or active_budget()
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        if len(_PATTERNS) > 256:
            _PATTERNS.clear()
        compiled = _PATTERNS[pattern] = re.compile(pattern)
    limit = budget.limits.max_string
    if (len(value) + 1) * (2 * len(repl) + 1) <= limit:
        return _under_alarm(budget, lambda: compiled.sub(repl, value, count=count))
    built = [len(value)]

    def expand(match: re.Match) -> str:
        text = match.expand(repl)
        built[0] += len(text) - (match.end() - match.start())
        if built[0] > limit:
            raise _too_long("filter 'regex_replace'", built[0], "max_string", budget.limits)
        return text

    return _under_alarm(budget, lambda: compiled.sub(expand, value, count=count))


# -- the compile-time rewrite -----------------------------------------------------


def _literal_cost(body: list[nodes.Node]) -> int:
    """Characters of literal text a loop body prints per iteration, not counting
    nested loops (they charge their own) or macros (charged when called)."""
    total = 0
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.TemplateData):
            total += len(node.data)
        elif isinstance(node, (nodes.For, nodes.Macro, nodes.CallBlock)):
            continue
        else:
            stack.extend(node.iter_child_nodes())
    return total


def rewrite(tree: nodes.Template) -> nodes.Template:
    """Wrap every ``{% for %}`` iterable in ``ps-loop`` and turn every ``~`` into ``ps-concat``."""
    from jinja2.visitor import NodeTransformer

    class Rewriter(NodeTransformer):
        def visit_For(self, node: nodes.For) -> nodes.Node:
            self.generic_visit(node)
            cost = _literal_cost(node.body)
            node.iter = nodes.Filter(
                node.iter, LOOP_FILTER, [nodes.Const(cost)], [], None, None, lineno=node.iter.lineno
            )
            return node

        def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
            self.generic_visit(node)
            return nodes.Filter(
                nodes.Tuple(list(node.nodes), "load", lineno=node.lineno),
                CONCAT_FILTER,
                [],
                [],
                None,
                None,
                lineno=node.lineno,
            )

    return Rewriter().visit(tree)


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


def _loop(iterable: Any, cost: int = 0) -> Any:
    if isinstance(iterable, Undefined):
        return iterable
    budget = _ACTIVE.get() or active_budget()
    if budget.due:
        budget.tick()
    if hasattr(iterable, "__len__"):
        if isinstance(iterable, str) and len(iterable) > budget.limits.max_items:
            raise _too_long("a loop over a string", len(iterable), "max_items", budget.limits)
        return _CountedSized(iterable, budget, cost)
    return _Counted(iterable, budget, cost)


_MAPPINGS = frozenset({dict, type({}.keys()), type({}.values()), type({}.items())})


def loop_items(iterable: Any, cost: int = 0) -> Any:
    """The items of a ``{% for %}`` iterable as a sequence, for code generators that
    iterate over a sequence with ``enumerate``: a list, tuple, range, dict or dict
    view is counted at once (its length as loop iterations, ``cost`` characters of
    literal text each),
    anything else item by item as :data:`LOOP_FILTER` counts it."""
    kind = type(iterable)
    if kind is list or kind is tuple or kind is range:
        (_ACTIVE.get() or active_budget()).count(len(iterable), cost)
        return iterable
    if kind in _MAPPINGS:
        # A dict or a view of one: its items counted at once (before they are copied).
        (_ACTIVE.get() or active_budget()).count(len(iterable), cost)
        return list(iterable)
    if kind is str:
        budget = _ACTIVE.get() or active_budget()
        if len(iterable) > budget.limits.max_items:
            raise _too_long("a loop over a string", len(iterable), "max_items", budget.limits)
        budget.count(len(iterable), cost)
        return iterable  # a sequence of its characters
    return list(_loop(iterable, cost))


def _concat(items: tuple) -> str:
    budget = _ACTIVE.get() or active_budget()
    parts = [item if type(item) is str else _text(item, budget) for item in items]
    size = sum(map(len, parts))
    budget.work += size
    if budget.work > budget.work_check:
        budget.over_size(size, "'~'")
    return "".join(parts)


def concat_values(items: tuple, pending: int = 0, counted: int = 1) -> str:
    """``~`` of ``items``, with ``pending`` characters counted by a code generator's
    inline checks charged first (the slow path of an inline ``~``; when every item is
    a string, ``pending`` includes ``counted`` times their length)."""
    budget = _ACTIVE.get() or active_budget()
    if pending:
        if all(type(item) is str for item in items):
            pending -= counted * sum(map(len, items))
        budget.charge(pending)
    return _concat(items)


def plus_values(environment: Any, values: tuple, pending: int = 0, counted: bool = False) -> Any:
    """``values[0] + values[1] + ...`` one ``+`` at a time through
    ``environment.call_binop``, with ``pending`` characters counted inline charged
    first (``counted``: ``pending`` includes the values' length): the slow path of
    an inline chain of ``+``."""
    if pending:
        if counted and all(type(value) is str for value in values):
            pending -= sum(map(len, values))
        (_ACTIVE.get() or active_budget()).charge(pending)
    result = values[0]
    for value in values[1:]:
        result = environment.call_binop(None, "+", result, value)
    return result


def binop_value(environment: Any, operator: str, left: Any, right: Any, pending: int = 0) -> Any:
    """``environment.call_binop``, with ``pending`` characters counted by a code
    generator's inline checks charged first (the slow path of an inline ``+``; when
    both operands are strings, ``pending`` includes their length)."""
    if pending:
        if operator == "+" and type(left) is str and type(right) is str:
            pending -= len(left) + len(right)
        (_ACTIVE.get() or active_budget()).charge(pending)
    return environment.call_binop(None, operator, left, right)


def _range(*args: Any) -> range:
    budget = _ACTIVE.get() or active_budget()
    rng = range(*args)
    if len(rng) > budget.limits.max_range:
        raise _stop(
            "max_range",
            budget.limits,
            f"range() would produce {len(rng):,} items (more than {budget.limits.max_range:,})",
        )
    budget.charge(len(rng) // 16)
    return rng


class HardenedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox with budgets, leak checks and no compile-time evaluation."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("finalize", finalize)
        kwargs.setdefault("optimized", False)  # no evaluation while compiling (see fold_constants)
        kwargs["autoescape"] = False
        super().__init__(*args, **kwargs)
        self.globals.pop("lipsum", None)
        self.globals["range"] = _range
        self.filters["join"] = _join
        self.filters["sum"] = _sum
        self.filters[LOOP_FILTER] = _loop
        self.filters[CONCAT_FILTER] = _concat

    def guard_filters(self) -> None:
        """Wrap every filter (after the profile added its own)."""
        for name, func in list(self.filters.items()):
            if name in (LOOP_FILTER, CONCAT_FILTER) or getattr(func, "ps_guarded", False):
                continue
            self.filters[name] = _guard_filter(name, func)

    def _tokenize(self, source: str, name: Any, filename: Any = None, state: Any = None) -> Any:
        """Count tokens as the parser reads them: parsing costs up to ~20 µs a token."""
        from jinja2.lexer import TokenStream

        stream = super()._tokenize(source, name, filename, state)
        limits = active_budget().limits

        def counted() -> Any:
            for count, token in enumerate(stream, 1):
                if count > limits.max_tokens:
                    raise _stop("max_tokens", limits, f"the template has more than {limits.max_tokens:,} tokens")
                yield token

        return TokenStream(counted(), name, filename)

    def _generate(self, source: nodes.Template, name: Any, filename: Any, defer_init: bool = False) -> str:
        return super()._generate(rewrite(source), name, filename, defer_init=defer_init)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        kind = type(left)
        if kind is type(right):
            if kind is str and operator == "+":
                budget = _ACTIVE.get() or active_budget()
                size = len(left) + len(right)
                budget.work += size
                if budget.work > budget.work_check:
                    budget.over_size(size, "'+'")
                return left + right
            if kind is int and (operator == "+" or operator == "%"):
                return left + right if operator == "+" else left % right
        budget = _ACTIVE.get() or active_budget()
        if budget.due:
            budget.tick()
        _check_binop(operator, left, right, budget)
        return self.binop_table[operator](left, right)

    def wrap_str_format(self, value: Any) -> Any:
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or value.__name__ not in (
            "format",
            "format_map",
        ):
            return None
        f_self = value.__self__
        if not isinstance(f_self, str):
            return None
        is_map = value.__name__ == "format_map"
        str_type = type(f_self)
        env = self

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                kwargs, args = args[0], ()
            return str_type(GuardedFormatter(env).vformat(f_self, args, kwargs))

        return functools.update_wrapper(wrapper, value)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is str and attribute in _STR_READERS:
            return getattr(obj, attribute)  # what the sandbox hands out for them (checked below)
        return ImmutableSandboxedEnvironment.getattr(self, obj, attribute)

    # Code generators with fast paths that reproduce the immutable sandbox's getattr may
    # treat this one as it (it only answers sooner for what that one answers the same).
    getattr.ps_same_as_sandbox = True  # type: ignore[attr-defined]

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        budget = _ACTIVE.get() or active_budget()
        if budget.due:
            budget.tick()
        if type(__obj) is types.BuiltinMethodType and __obj.__name__ in _STR_READERS and type(__obj.__self__) is str:
            # question.strip(): what Context.call does for a method that takes no context.
            kwargs.pop("_loop_vars", None)
            kwargs.pop("_block_vars", None)
            result = __obj(*args, **kwargs)
            if type(result) is str:
                budget.work += len(result)
                if budget.work > budget.work_check:
                    budget.over_size(len(result), lambda: f"calling {_describe(__obj)[0]}")
                return result
            n = 1
            if type(result) is list:  # items built (split)
                n = len(result)
                if n > budget.limits.max_items:
                    raise _too_long(f"calling {_describe(__obj)[0]}", n, "max_items", budget.limits)
            budget.charge(n)
            return result
        if not __self.is_safe_callable(__obj):
            raise jinja2.exceptions.SecurityError(f"{_describe(__obj)[0]} is not safely callable")
        if (
            type(__obj) is types.BuiltinMethodType
            and __obj.__name__ in _AMPLIFYING
            and type(getattr(__obj, "__self__", None)) is str
        ):
            args = _check_str_method(__obj.__name__, __obj.__self__, args, kwargs, budget)
        result = __context.call(__obj, *args, **kwargs)
        n = len(result) if isinstance(result, str) else 1
        if type(result) is list:  # items built (split)
            n = len(result)
            if n > budget.limits.max_items:
                raise _too_long(f"calling {_describe(__obj)[0]}", n, "max_items", budget.limits)
        budget.work += n
        if budget.work > budget.work_check:
            budget.over_size(n, lambda: f"calling {_describe(__obj)[0]}")
        return result


class MutableEnvironment(HardenedEnvironment):
    """Lists and dicts may be changed (``list.append``), as in plain Jinja; private
    attributes stay blocked (``SandboxedEnvironment``'s rule)."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)


class _RecordFields:
    """Records are data: ``choices.items`` is the record's ``items`` field, not
    the dict method, whenever the field exists."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Mapping) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)  # type: ignore[misc]


class RecordEnvironment(_RecordFields, HardenedEnvironment):
    pass


class MutableRecordEnvironment(_RecordFields, MutableEnvironment):
    pass


def environment_class(*, record_fields_first: bool, mutable: bool) -> type:
    if mutable:
        return MutableRecordEnvironment if record_fields_first else MutableEnvironment
    return RecordEnvironment if record_fields_first else HardenedEnvironment


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
    from ..errors import cut

    if name is None:
        source = getattr(template, "ps_source", None)
        name = f"template {cut(source, 60)}" if source is not None else "the template"
    return f"{name}, line {line}" if line else name


def _translate(exc: BaseException, template: Any, name: str | None) -> BaseException:
    """Typed errors for stops, with the template and its line; other template
    errors pass unchanged (callers translate them), with ``ps_template_line`` set."""
    import sys

    from ..errors import PromptStyleError

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


def render_template(
    template: Any,
    context: Mapping[str, Any],
    limits: JinjaLimits | None = None,
    *,
    name: str | None = None,
    now: Any = None,
) -> str:
    budget = _take_budget(limits or _SCOPE_GET() or _DEFAULT_LIMITS_GET(JinjaLimits) or jinja_limits(), now)
    token = _ACTIVE_SET(budget)
    _RUNNING_ADD(budget)
    if _deadline._kick:
        _deadline.register(budget)
    try:
        out = []
        size = 0
        max_output = budget.limits.max_output
        for chunk in template.root_render_func(_new_context(template, context)):
            size += len(chunk)
            if size > max_output:
                raise _stop("max_output", budget.limits, f"the output would be longer than {max_output:,} characters")
            out.append(chunk)
        if budget.due:
            budget.tick()
        return "".join(out)
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


def _take_budget(limits: JinjaLimits, now: Any) -> Budget:
    """A budget for a render: one of a finished render's, made like new (see _SPARE), else a new one."""
    try:
        budget = _SPARE_POP()
    except IndexError:
        return Budget(limits, now)
    budget.stop_at = _UNSET
    budget.iterations = budget.work = 0
    budget.now = now
    budget.due = False
    if budget.limits is not limits:
        derived = _DERIVED.get(id(limits))
        if derived is None or derived[0] is not limits:
            derived = _derive(limits)
        budget.limits, budget.step, budget.work_check, budget.iter_limit = derived
    else:
        budget.work_check = budget.step if budget.step <= limits.max_work else limits.max_work
    return budget


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


def _new_context(template: Any, variables: Mapping[str, Any]) -> Any:
    """``template.new_context(variables)``, faster for templates without blocks."""
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
) -> Any:
    budget = _take_budget(limits or _SCOPE_GET() or _DEFAULT_LIMITS_GET(JinjaLimits) or jinja_limits(), now)
    token = _ACTIVE_SET(budget)
    _RUNNING_ADD(budget)
    if _deadline._kick:
        _deadline.register(budget)
    try:
        compiled = template.template if type(template) is CompiledExpression else template
        ctx = _new_context(compiled, context)
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
            limit = limits.max_output
            raise _stop("max_output", limits, f"the output would be longer than {limit:,} characters")
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
    scope's limits, the real clock."""

    def run(arg: Any) -> Any:
        return run_budgeted(render, None, template, name, None, (arg,))

    return run


# Budgets of finished renders of run_budgeted, to reuse: a render's objects (lazy filters,
# loops) do not outlive it, since a render returns a string.
_SPARE: list[Budget] = []
_SPARE_POP, _SPARE_APPEND = _SPARE.pop, _SPARE.append


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
