"""Checks of values turned into text (leaks of Python internals, sizes), and of ``%``, ``str.format`` and operators."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2.runtime import Undefined
from jinja2.sandbox import SandboxedFormatter
from jinja2.utils import Cycler, Joiner, Namespace, pass_eval_context

from ...errors import SandboxError
from .budget import _ACTIVE, Budget, _Counted, _stop, _too_long, active_budget
from .costs import division, too_costly

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
PRINT = 150
"""Steps (``max_op_cost``) per item of a list or mapping turned into text: its check here,
then ``str()`` (see costs.py; jinja_compiler's ``printed_size_bound`` counts the same)."""


def check_value(
    value: Any, budget: Budget | None = None, *, limit: int | None = _OUTPUT, per_item: int = PRINT, what: str = ""
) -> int:
    """Check that ``value`` may be turned into text: no function, class or Jinja
    internal object anywhere in it, no ``StrictUndefined`` inside a container,
    nesting and (unless ``limit`` is ``None``) size within budget: ``limit``
    characters, ``max_output`` by default, and ``per_item`` steps of ``max_op_cost``
    per item of every list or mapping in it. Returns an upper bound of its text length.

    :raises SandboxError: for a value that would leak Python internals.
    :raises jinja2.UndefinedError: for a missing name inside a container.
    :raises LimitError: for a value whose text would be too long, too deep, or too
        costly to make.
    """
    budget = budget or active_budget()
    limits = budget.limits
    measure = limit is not None
    if limit == _OUTPUT:
        limit = limits.max_output
    elif limit is None:
        limit = 1 << 62
        per_item = 0
    items = 0
    item_cap = limits.max_op_cost // per_item if per_item else 1 << 62
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
            items += len(item)
            if size > limit:
                break
            if items > item_cap:
                raise too_costly(what or "turning a value into text", items * per_item, budget)
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
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d+)?[_,]?(?:\.(\d+))?[a-zA-Z%]?", re.DOTALL)
_DIGITS = re.compile(r"\d+")


def _check_percent(fmt: str | bytes, args: Any, budget: Budget, what: str) -> None:
    """``fmt % args`` within budget: widths, precisions and the values' text."""
    limits = budget.limits
    if isinstance(fmt, bytes):
        fmt = fmt.decode("latin-1")  # the specs are ASCII
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
    """The characters a format spec may add (its width and precision): any fill character,
    a newline too; a spec the pattern does not know counts every number in it."""
    if not spec:
        return 0
    match = _FORMAT_SPEC.fullmatch(spec)
    numbers = [n for n in match.groups() if n] if match else _DIGITS.findall(spec)
    extra = 0
    for number in numbers:
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

_SIZED = (str, bytes, list, tuple)
_TEXT = (str, bytes)
_EMPTY_SIZE = sys.getsizeof("")


def _width(text: str) -> int:
    """Bytes a character of ``text`` takes in memory: 1, 2 or 4."""
    return max(1, min(4, (sys.getsizeof(text) - _EMPTY_SIZE) // max(len(text), 1)))


def _check_binop(operator: str, left: Any, right: Any, budget: Budget) -> None:
    limits = budget.limits
    if operator == "+":
        if isinstance(left, _SIZED) and isinstance(right, _SIZED):
            size = len(left) + len(right)
            limit = "max_string" if isinstance(left, _TEXT) else "max_items"
            if size > getattr(limits, limit):
                raise _too_long("'+'", size, limit, limits, "bytes" if isinstance(left, bytes) else "")
            budget.charge(size)
    elif operator == "*":
        seq, times = (left, right) if isinstance(left, _SIZED) else (right, left)
        if isinstance(seq, _SIZED) and isinstance(times, int):
            size = len(seq) * times
            limit = "max_string" if isinstance(seq, _TEXT) else "max_items"
            if size > getattr(limits, limit):
                raise _too_long("'*'", size, limit, limits, "bytes" if isinstance(seq, bytes) else "")
            # max_work counts a repeated text by its bytes in memory (up to 4 a character):
            # '*' is the cheapest way to build large wide text.
            budget.charge(max(size, 0) * (_width(seq) if size > 1 << 16 and type(seq) is str else 1))
        elif isinstance(left, int) and isinstance(right, int):
            bits = left.bit_length() + right.bit_length()
            if bits > limits.max_int_bits:
                raise _stop("max_int_bits", limits, f"'*' would build an integer of about {bits:,} bits")
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            bits = right * (abs(left).bit_length() - 1) if right < 1 << 64 else 1 << 64
            if bits > limits.max_int_bits:
                raise _stop("max_int_bits", limits, f"'**' would build an integer of at least {bits:,} bits")
    elif operator == "%":
        if isinstance(left, _TEXT):
            _check_percent(left, right, budget, "'%'")
        elif isinstance(left, int) and isinstance(right, int):
            division("'%'", left, right, budget)
    elif operator == "//":
        if isinstance(left, int) and isinstance(right, int):
            division("'//'", left, right, budget)
