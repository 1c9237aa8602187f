"""The filters, str methods and globals the sandbox allows, each sized against the render's budget."""

from __future__ import annotations

import functools
import re
import signal
import threading
import types
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2.runtime import Undefined
from jinja2.utils import pass_eval_context

from ...errors import LimitError
from .._deadline import UNSET as _UNSET
from .budget import _ACTIVE, Budget, _Ambient, _Counted, _CountedSized, _monotonic, _stop, _too_long, active_budget
from .values import _check_percent, _text, check_value

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


REGEX_SECONDS = 2.0
"""The most wall-clock seconds one ``regex_replace`` may take under the scaled deadline
(``deadline=auto``); a deadline given in seconds applies to it as it is."""


class _Interrupted(BaseException):
    """Raised by the alarm inside a regular expression that ran past the deadline."""


def _under_alarm(budget: Budget, run: Any) -> Any:
    """``run()`` interrupted at the deadline when possible: Python's regular
    expression engine checks for signals, so a SIGALRM stops catastrophic
    backtracking. Only in the main thread, and only when nobody else uses SIGALRM."""
    now = _monotonic()
    if budget.stop_at == _UNSET and not isinstance(budget, _Ambient):
        budget.stop_at = now + budget.limits.seconds  # the watchdog has not seen this render yet
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
        # With the scaled deadline (far away), one expression gets REGEX_SECONDS (on at
        # most max_filter_input characters, a sound one takes milliseconds).
        capped = budget.limits.deadline is None and remaining > REGEX_SECONDS
        signal.setitimer(signal.ITIMER_REAL, max(REGEX_SECONDS if capped else remaining, 0.001))
        try:
            return run()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Interrupted:
        if capped:
            raise LimitError(
                f"a regular expression ran longer than {REGEX_SECONDS:g} s (catastrophic backtracking?)",
                limit="deadline",
                value=REGEX_SECONDS,
            ) from None
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


# -- loops, ``~``, ``+`` and ``range`` ----------------------------------------------


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
