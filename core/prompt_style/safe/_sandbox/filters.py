"""The filters, str methods and globals the sandbox allows, each sized against the render's budget."""

from __future__ import annotations

import functools
import operator
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
from .costs import (
    CHAR,
    COPY,
    OBJECT,
    PYTHON,
    _replace_size,
    call_text_method,
    charge_cost,
    check_compare,
    check_container_method,
    check_number_method,
    check_text_method,
    int_from_text,
    round_digits,
    sort_cost,
    too_costly,
    weight,
)
from .values import PRINT, _check_percent, _text, check_value

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
    """Check a str method before it runs (costs.check_text_method); returns ``args``
    (``join`` gets a list)."""
    return check_text_method(name, text, args, kwargs, budget)


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_CONTAINER_TYPES = (list, tuple, dict) + _VIEWS


def call_method(context: Any, obj: Any, args: tuple, kwargs: dict, budget: Budget) -> Any:
    """``obj(*args, **kwargs)`` as Jinja's ``Context.call`` makes it, a method of a value
    sized before it runs (costs.py): a method of a text (``str``, ``bytes``, Markup), of a
    number, of a list, tuple or mapping, or of one of their classes reached from a value
    (``(0).from_bytes``, ``''.maketrans``, ``{}.fromkeys``). Methods those types do not
    know are refused; other callables (macros, the profile's globals, the sandbox's own
    objects) are called as before."""
    kind = type(obj)
    if kind is types.BuiltinMethodType or kind is types.MethodType:
        receiver = obj.__self__
        name = obj.__name__
        if isinstance(receiver, type):  # a class method, reached from a value
            for base, empty in _CLASS_RECEIVERS:
                if issubclass(receiver, base):
                    receiver = empty
                    break
            else:
                return context.call(obj, *args, **kwargs)
        if isinstance(receiver, (str, bytes)):
            kwargs.pop("_loop_vars", None)
            kwargs.pop("_block_vars", None)
            return call_text_method(obj, name, receiver, args, kwargs, budget)
        if isinstance(receiver, (int, float)):
            check_number_method(name, receiver, args, kwargs, budget)
        elif isinstance(receiver, _CONTAINER_TYPES):
            args = check_container_method(name, receiver, args, kwargs, budget)
    return context.call(obj, *args, **kwargs)


_CLASS_RECEIVERS = ((str, ""), (bytes, b""), (bool, False), (int, 0), (float, 0.0), (dict, {}), (list, []))


def check_method_call(receiver: Any, name: str, args: tuple, kwargs: dict, budget: Budget) -> tuple:
    """What :func:`call_method` checks before ``receiver.name(*args, **kwargs)``, for a
    receiver of a plain type (or such a type itself); returns the arguments."""
    if isinstance(receiver, type):
        receiver = next((empty for base, empty in _CLASS_RECEIVERS if issubclass(receiver, base)), None)
    if isinstance(receiver, (str, bytes)):
        return check_text_method(name, receiver, args, kwargs, budget)
    if isinstance(receiver, (int, float)):
        check_number_method(name, receiver, args, kwargs, budget)
    elif isinstance(receiver, _CONTAINER_TYPES):
        return check_container_method(name, receiver, args, kwargs, budget)
    return args


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
_SLOW_FILTERS = frozenset({"wordwrap", "urlize", "pprint", "title", "striptags", "regex_replace", "urlencode"})

# Steps (max_op_cost) per character of text a filter takes (Python code per character or
# word, a regular expression per character, a C loop with a table lookup).
_TEXT_COST = {
    "wordwrap": 400,
    "urlize": 800,
    "title": 60,
    "striptags": 400,
    "wordcount": 150,
    "urlencode": 80,
    "regex_replace": 8,
    "pprint": 4,
    "capitalize": CHAR,
    "upper": CHAR,
    "lower": CHAR,
    "xmlattr": 8,
}
# Steps per item of the list or mapping a filter takes (Python code per item; sorting).
_ITEM_COST = {
    "max": PYTHON,
    "min": PYTHON,
    "xmlattr": 2000,
    "pprint": 1500,
    "urlencode": 500,
    "most_frequent": PYTHON,
}
_SORTING = frozenset({"sort", "dictsort", "groupby"})
_JSON = frozenset({"tojson", "ps-hf-tojson"})
_ESCAPES = {"&": 4, "<": 3, ">": 3, "'": 4, '"': 4}  # markupsafe: '&amp;', '&lt;', '&#39;'...


def _int_arg(args: tuple, kwargs: dict, position: int, name: str, default: Any) -> Any:
    if len(args) > position:
        return args[position]
    return kwargs.get(name, default)


def _param(args: tuple, kwargs: dict, params: tuple[str, ...], name: str, default: Any = None) -> Any:
    """The argument ``name`` of a filter, given by keyword or by position (``params``: the
    filter's parameter names, the filtered value first)."""
    if name in kwargs:
        return kwargs[name]
    try:
        position = params.index(name)
    except ValueError:
        return default
    return args[position] if len(args) > position else default


def _pre_filter(name: str, args: tuple, kwargs: dict, budget: Budget, params: tuple[str, ...] = ()) -> None:
    """Checks before filter ``name`` runs; ``args[0]`` is the filtered value."""
    limits = budget.limits
    value = args[0] if args else None
    size = None  # the value's text size, when measured
    if name in _TEXT_FILTERS and not isinstance(value, str):
        size = check_value(value, budget, limit=limits.max_string, what=f"filter {name!r}")
    if name in _SLOW_FILTERS:
        if isinstance(value, str):
            size = len(value)
        else:
            per_item = _ITEM_COST.get(name, PRINT)
            size = check_value(value, budget, limit=limits.max_filter_input, per_item=per_item, what=f"filter {name!r}")
        total = size + (sum(len(a) for a in args[1:3] if isinstance(a, str)) if name == "regex_replace" else 0)
        if total > limits.max_filter_input:
            raise _stop(
                "max_filter_input",
                limits,
                f"filter {name!r} got {total:,} characters of input (more than {limits.max_filter_input:,})",
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
    per_char = _TEXT_COST.get(name)
    if per_char:
        n = len(text) if text is not None else size or 0
        if name in ("upper", "lower") and text is not None and text.isascii():
            per_char = COPY
        charge_cost(f"filter {name!r}", n * per_char, budget)
    if name == "center":
        width = _int_arg(args, kwargs, 1, "width", 80)
        if isinstance(width, int) and width > limits.max_string:
            raise _too_long("filter 'center'", width, "max_string", limits)
    elif name == "indent" and text is not None:
        width = _int_arg(args, kwargs, 1, "width", 4)
        prefix = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        lines = text.count("\n") + 1
        size = len(text) + lines * max(prefix, 0)
        if size > limits.max_string:
            raise _too_long("filter 'indent'", size, "max_string", limits)
        charge_cost("filter 'indent'", size + lines * OBJECT, budget)
    elif name == "wordwrap" and text is not None:
        _wordwrap(text, args, kwargs, budget)
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
    elif name in _JSON:
        _json(name, value, args, kwargs, params, budget)
    elif name in ("e", "escape", "forceescape") and text is not None:
        if len(text) * 6 > limits.max_string:
            size = len(text) + sum(text.count(c) * extra for c, extra in _ESCAPES.items())
            if size > limits.max_string:
                raise _too_long(f"filter {name!r}", size, "max_string", limits)
    elif name == "trim" and text is not None:
        chars = _int_arg(args, kwargs, 1, "chars", None)
        if isinstance(chars, str):
            charge_cost("filter 'trim'", len(text) + len(text) * len(chars) // 32, budget)
    elif name == "int":
        int_from_text(value, _int_arg(args, kwargs, 2, "base", 10), budget)
    elif name == "round":
        precision, method = _int_arg(args, kwargs, 1, "precision", 0), _int_arg(args, kwargs, 2, "method", None)
        round_digits(value, precision, method, budget)
    elif name == "list" and text is not None and not text.isascii():
        charge_cost("filter 'list'", len(text) * OBJECT, budget)  # a new string for every character
    elif hasattr(value, "__len__") and not isinstance(value, (str, Undefined)):
        n = len(value)
        if name in _SORTING:
            cost = sort_cost(n, True) + (n * PYTHON if name == "groupby" else 0)
            charge_cost(f"filter {name!r}", cost, budget)
            # each item is compared about log2(n) times, a text character by character
            charge_cost(f"filter {name!r}", cost + weight(value, limits.max_op_cost) * n.bit_length(), budget)
        elif name in _ITEM_COST and name not in _SLOW_FILTERS:
            cost = n * _ITEM_COST[name]
            charge_cost(f"filter {name!r}", cost, budget)
            if name in ("max", "min"):
                charge_cost(f"filter {name!r}", cost + weight(value, limits.max_op_cost), budget)
        elif name == "sum" and _int_arg(args, kwargs, 1, "attribute", None) is not None:
            charge_cost("filter 'sum'", n * PYTHON, budget)


def _wordwrap(text: str, args: tuple, kwargs: dict, budget: Budget) -> None:
    """``wordwrap``: the text it builds, and its cost: Python's textwrap handles each word
    in Python, and cuts a word longer than the width one line at a time, copying what is
    left of it each time (a word of ``L`` characters costs ``L * L / (2 * width)``)."""
    limits = budget.limits
    width = _int_arg(args, kwargs, 1, "width", 79)
    width = width if isinstance(width, int) and width > 0 else 1
    wrap = _int_arg(args, kwargs, 3, "wrapstring", None)
    n = len(text)
    lines = n // width + text.count("\n") + 1
    size = n + lines * (len(wrap) if isinstance(wrap, str) else 1)
    if size > limits.max_string:
        raise _too_long("filter 'wordwrap'", size, "max_string", limits)
    cost = n * _TEXT_COST["wordwrap"] + lines * OBJECT
    if cost > limits.max_op_cost:
        raise too_costly("filter 'wordwrap'", cost, budget)
    if _int_arg(args, kwargs, 2, "break_long_words", True) and n * n // (2 * width) > limits.max_op_cost - cost:
        for match in re.finditer(r"\S{%d,}" % (width + 1), text):
            length = match.end() - match.start()
            cost += length * length // (2 * width)
            if cost > limits.max_op_cost:
                raise too_costly("filter 'wordwrap'", cost, budget)


def _json_shape(value: Any, cap: int) -> tuple[int, int]:
    """``(items, depth)`` of a value: the items of its lists and mappings, and the sum of
    their depths (what indentation writes), counted up to ``cap`` items."""
    items = depths = 0
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack and items <= cap:
        item, depth = pop()
        if isinstance(item, Mapping):
            items += len(item)
            depths += len(item) * depth + depth
            if items > cap:
                break
            for sub in item.values():
                if isinstance(sub, (Mapping, list, tuple)):
                    push((sub, depth + 1))
        elif isinstance(item, (list, tuple)):
            items += len(item)
            depths += len(item) * depth + depth
            if items > cap:
                break
            for sub in item:
                if isinstance(sub, (Mapping, list, tuple)):
                    push((sub, depth + 1))
    return items, depths


def _json(name: str, value: Any, args: tuple, kwargs: dict, params: tuple[str, ...], budget: Budget) -> None:
    """``tojson``: the value's text, the indentation of every line, the separators between
    items, whatever form the arguments take (``tojson(4)``, ``tojson(indent='  ')``)."""
    limits = budget.limits
    indent = _param(args, kwargs, params, "indent")
    separators = _param(args, kwargs, params, "separators")
    indent_size = len(indent) if isinstance(indent, str) else indent if type(indent) is int and indent > 0 else 0
    per_item = 2000 if indent is not None else 200  # json's Python encoder when indenting, else its C one
    items, depths = _json_shape(value, limits.max_op_cost // per_item + 1)  # first: it stops early
    charge_cost(f"filter {name!r}", items * per_item, budget)
    size = check_value(value, budget, limit=limits.max_string, per_item=0, what=f"filter {name!r}")
    size += 2 * depths * indent_size + items
    if isinstance(separators, (list, tuple)):
        size += items * sum(len(part) for part in separators if isinstance(part, str))
    if size > limits.max_string:
        raise _too_long(f"filter {name!r}", size, "max_string", limits)


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
    | set(_TEXT_COST)
    | set(_ITEM_COST)
    | _JSON
    | {"center", "indent", "wordwrap", "replace", "format", "batch", "slice", "int", "round", "sum"}
)
# ...of which these check nothing else for a string of at most _CHEAP_TEXT characters given
# alone (their cost per character is at most CHAR, their text at most six times as long).
_TEXT_ONLY = frozenset(
    {"capitalize", "e", "escape", "forceescape", "lower", "safe", "string", "trim", "truncate", "upper"}
)
_CHEAP_TEXT = 1 << 16


def _parameters(func: Any, skip: int) -> tuple[str, ...]:
    """A filter's parameter names, its value first."""
    import inspect

    try:
        return tuple(inspect.signature(func).parameters)[skip:]
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return ()


def _guard_filter(name: str, func: Any) -> Any:
    from jinja2.utils import _PassArg

    skip = 1 if _PassArg.from_obj(func) is not None else 0
    checked = name in _PRE_CHECKED
    text_only = name in _TEXT_ONLY
    # its parameter names, looked up when first needed (inspect.signature of every filter
    # costs each process a few milliseconds at start-up)
    params: list[tuple[str, ...]] = []
    alone = skip + 1

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _ACTIVE.get() or active_budget()
        if budget.due:
            budget.tick()
        if kwargs or (
            checked
            and not (text_only and len(args) == alone and type(args[skip]) is str and len(args[skip]) <= _CHEAP_TEXT)
        ):
            if not params:
                params.append(_parameters(func, skip))
            _pre_filter(name, args[skip:], kwargs, budget, params[0])
            if len(args) > skip and _lazy(args[skip]) and not isinstance(args[skip], _Counted):
                # An iterator no loop counts (zip(...)): its items count as loop iterations.
                args = (*args[:skip], _Counted(args[skip], budget, 0), *args[skip + 1 :])
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


_JOIN_ITEM = 150  # steps per item joined (its text checked, then appended, in Python)


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
    # Python code per item: sized from the length up front, counted as it goes otherwise.
    if hasattr(value, "__len__") and not isinstance(value, str):
        charge_cost("filter 'join'", len(value) * _JOIN_ITEM, budget)
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
            charge_cost("filter 'join'", len(parts) * _JOIN_ITEM, budget)
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


_COMPARISONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "lteq": operator.le,
    "gt": operator.gt,
    "gteq": operator.ge,
    "in": lambda a, b: a in b,
    "notin": lambda a, b: a not in b,
}


def compare_values(operands: tuple, op: str) -> bool:
    """``operands[0] op operands[1]`` (``ps-compare``: a comparison with no constant side),
    sized first (costs.check_compare)."""
    left, right = operands
    check_compare(op, left, right, _ACTIVE.get() or active_budget())
    return _COMPARISONS[op](left, right)


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
