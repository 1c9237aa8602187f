"""What one operation may cost, checked before it runs: methods of the values templates hold.

The deadline is checked between operations (at every loop iteration, call and
filter), so a single operation must end quickly whatever its operands: a
``str.title()`` of ten million characters, a ``strip`` whose characters are
five million long, ``int('f' * 4000000, 16) % ...``, ``(5).to_bytes(10**9)``
would each run for seconds or build gigabytes between two check points. Every
method a template can call on the values it holds (``str``, ``bytes``,
``int``, ``float``, ``list``, ``tuple``, ``dict`` and the text objects filters
return, such as ``Markup``) is therefore sized from its operands before it runs:

- the **result's size** against ``max_string`` (characters or bytes) or
  ``max_items`` (items), as for operators;
- the **cost** against ``max_op_cost``, in steps: about one step per character
  a C loop copies or compares (:data:`COPY`), more per character that needs a
  Unicode table (:data:`CHAR`), per object created (:data:`OBJECT`), per
  comparison of a sort (:data:`COMPARE`);
- **integers** against ``max_int_bits``: every integer a method builds, and the
  cost of dividing two large ones.

A method this module does not know on one of these types is refused: a
template can only call what is sized here. Objects of other types never reach a
template (records hold plain data, see :mod:`prompt_style.safe.plain`); the
sandbox's own objects (cycler, joiner, loop, macros) and the profiles' globals
keep their own checks.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from ...errors import SandboxError
from .budget import Budget, _stop, _too_long

# -- what a step is ------------------------------------------------------------------

COPY = 1
"""Steps per character (or item) a C loop copies, compares or searches."""
CHAR = 16
"""Steps per character of a C loop that looks each one up (case mapping, ``title``,
``translate``, ``expandtabs``, splitting, encoding)."""
OBJECT = 100
"""Steps per Python object an operation creates (the items of ``split``, the keys of
``dict.fromkeys``, the characters of ``list('é…')``)."""
COMPARE = 40
"""Steps per comparison of a sort (``n log2 n`` of them)."""
PRINT = 150
"""Steps per item of a list or mapping turned into text (checked, then ``str()``)."""
PYTHON = 300
"""Steps per call of Python code (a key function, an attribute getter) per item."""
CHEAP = 4096
"""No method of a text of at most this many characters, with arguments of at most this
size, can exceed any budget: callers skip the checks below it."""

_LIMB = 30  # bits of one digit of a Python integer (the unit of its arithmetic)


def too_costly(what: str, cost: int, budget: Budget) -> Exception:
    """The :class:`~prompt_style.LimitError` of an operation that would cost ``cost`` steps."""
    limit = budget.limits.max_op_cost
    return _stop(
        "max_op_cost",
        budget.limits,
        f"{what} would take about {cost:,} steps (more than {limit:,}, about {limit / 1e9:.2g} s of work)",
    )


def charge_cost(what: str, cost: int, budget: Budget) -> None:
    """Raise when ``cost`` steps are more than one operation may take."""
    if cost > budget.limits.max_op_cost:
        raise too_costly(what, cost, budget)


def log2(n: int) -> int:
    return max(n.bit_length(), 1)


def sort_cost(n: int, key: bool) -> int:
    """Steps of sorting ``n`` items (with a key function called from Python, or not)."""
    return n * log2(n) * COMPARE + (n * PYTHON if key else 0)


# -- integers ------------------------------------------------------------------------


def int_bits(what: str, bits: int, budget: Budget) -> None:
    """Raise when an integer of ``bits`` bits would be built."""
    if bits > budget.limits.max_int_bits:
        raise _stop(
            "max_int_bits",
            budget.limits,
            f"{what} would build an integer of about {bits:,} bits (more than {budget.limits.max_int_bits:,})",
        )


def division(what: str, left: int, right: int, budget: Budget) -> None:
    """``left // right``, ``left % right`` within budget: long division costs the product
    of the operands' digits (a small divisor, or a dividend smaller than the divisor, is
    linear)."""
    a, b = left.bit_length(), right.bit_length()
    if b <= 64 or a <= b:
        return
    cost = (b // _LIMB + 1) * ((a - b) // _LIMB + 1)
    if cost > budget.limits.max_op_cost or (a > budget.limits.max_int_bits and b > budget.limits.max_int_bits):
        raise _stop(
            "max_int_bits",
            budget.limits,
            f"{what} of integers of {a:,} and {b:,} bits would take about {cost:,} steps",
        )


_POWER_OF_TWO_BITS = {2: 1, 4: 2, 8: 3, 16: 4, 32: 5}


def int_from_text(text: Any, base: Any, budget: Budget) -> None:
    """``int(text, base)`` (the ``int`` filter) within ``max_int_bits``: Python converts
    decimal text of at most 4,300 digits, but text in base 2, 4, 8, 16 or 32 (or with a
    ``0x`` prefix and base 0) of any length."""
    if not isinstance(text, (str, bytes)) or not isinstance(base, int):
        return
    if len(text) * 5 <= budget.limits.max_int_bits:
        return
    per_digit = _POWER_OF_TWO_BITS.get(base, 4 if base == 0 else base.bit_length())
    int_bits("filter 'int'", len(text) * per_digit, budget)


def round_digits(value: Any, precision: Any, method: Any, budget: Budget) -> None:
    """``round(value, precision)`` (the ``round`` filter): Python computes ``10 **
    -precision`` to round an integer, and the ``ceil``/``floor`` methods ``10 **
    precision`` for any number."""
    if not isinstance(precision, int):
        return
    digits = -precision if method in (None, "common") and isinstance(value, int) else abs(precision)
    if method not in (None, "common") and precision < 0:
        return  # 10 ** -n is a float
    if digits > 0:
        int_bits(f"filter 'round' with precision {precision:,}", digits * 10 // 3, budget)


# -- methods of the values templates hold ---------------------------------------------------

_CASE = frozenset({"upper", "lower", "casefold", "swapcase", "title", "capitalize"})
_ASCII_FAST = frozenset({"upper", "lower", "casefold"})
_SCANS = frozenset(
    """isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable
    isspace istitle isupper""".split()
)
_SEARCHES = frozenset(
    """count find index rfind rindex startswith endswith partition rpartition removeprefix
    removesuffix""".split()
)
_STRIPS = frozenset({"strip", "lstrip", "rstrip"})
_SPLITS = frozenset({"split", "rsplit"})
_WIDTHS = frozenset({"center", "ljust", "rjust", "zfill"})
_PYTHON_TEXT = frozenset({"striptags", "unescape"})  # Markup's, in Python, a regular expression per entity
TEXT_METHODS = (
    _CASE
    | _SCANS
    | _SEARCHES
    | _STRIPS
    | _SPLITS
    | _WIDTHS
    | _PYTHON_TEXT
    | {"splitlines", "expandtabs", "replace", "join", "translate", "encode", "decode", "hex", "fromhex"}
    | {"maketrans", "format", "format_map", "escape"}
)
"""The methods of ``str``, ``bytes`` and Markup a template may call (each sized below)."""

INT_METHODS = frozenset({"bit_length", "bit_count", "conjugate", "as_integer_ratio", "is_integer"})
"""Methods of numbers that cost nothing (``to_bytes``, ``from_bytes``, ``fromhex``, ``hex``
are sized below)."""

SEQUENCE_METHODS = frozenset({"index", "count", "copy", "get", "keys", "values", "items", "fromkeys"})
"""Methods of lists, tuples and mappings that only read (and copy) them."""
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "update", "setdefault", "popitem"}
)
"""Methods that change a list or a mapping (profiles with ``mutable=True`` only)."""

_SLOW_CODECS = frozenset({"punycode", "idna"})  # written in Python, per character


def _arg(args: tuple, kwargs: Mapping[str, Any], position: int, name: str, default: Any = None) -> Any:
    if len(args) > position:
        return args[position]
    return kwargs.get(name, default)


def _codec(name: Any) -> None:
    if isinstance(name, str):
        try:
            found = codecs.lookup(name).name
        except LookupError:
            return  # the call raises its own error
        if found in _SLOW_CODECS:
            raise SandboxError(f"the {found!r} codec is not available in templates", hint="use utf-8")


def _replace_size(text: Any, old: Any, new: Any, count: Any) -> int:
    found = len(text) + 1 if not old else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def split_cap(budget: Budget, text_length: int) -> int:
    """The most items a ``split`` of a text of ``text_length`` characters may make."""
    limits = budget.limits
    room = max(limits.max_op_cost - text_length * 2, 0) // OBJECT
    return max(min(limits.max_items, room), 1)


def check_text_method(name: str, text: Any, args: tuple, kwargs: dict, budget: Budget) -> tuple:
    """Check ``text.name(*args, **kwargs)`` (``text`` a ``str``, ``bytes`` or a subclass such
    as Markup) before it runs; returns the arguments to call it with (``join`` of an
    iterator gets a list, ``split`` its ``maxsplit`` capped: see :func:`call_text_method`).

    :raises LimitError: for a result or a cost over budget.
    :raises SandboxError: for a method no template may call.
    """
    limits = budget.limits
    n = len(text)
    what = f"{type(text).__name__}.{name}"
    cost = n * COPY
    size = 0
    if name in _CASE:
        ascii_fast = name in _ASCII_FAST and (type(text) is bytes or text.isascii())
        cost = n * (COPY if ascii_fast else CHAR)
    elif name in _SCANS:
        cost = n * CHAR
    elif name in _SEARCHES:
        needle = _arg(args, kwargs, 0, "sub", "")
        cost = n + (len(needle) if isinstance(needle, (str, bytes)) else 0)
    elif name in _STRIPS:
        chars = _arg(args, kwargs, 0, "chars")
        if isinstance(chars, (str, bytes)):
            cost = n + n * len(chars) // 32
    elif name in _SPLITS:
        cost = n * 2  # and OBJECT per item: see call_text_method, which caps their number
    elif name == "splitlines":
        cost = n * 2
        if n > split_cap(budget, n):
            lines = _line_breaks(text)
            if lines > limits.max_items:
                raise _too_long(what, lines, "max_items", limits)
            cost += lines * OBJECT
    elif name in _WIDTHS:
        width = _arg(args, kwargs, 0, "width", 0)
        if isinstance(width, int):
            size = width
            cost = n + max(width, 0)
    elif name == "expandtabs":
        tabsize = _arg(args, kwargs, 0, "tabsize", 8)
        if isinstance(tabsize, int):
            size = n + text.count("\t" if isinstance(text, str) else b"\t") * max(tabsize, 0)
            cost = n * CHAR + size
    elif name == "replace":
        old, new = _arg(args, kwargs, 0, "old"), _arg(args, kwargs, 1, "new")
        if isinstance(old, (str, bytes)) and isinstance(new, (str, bytes)) and type(old) is type(new):
            if (n + 1) * (len(new) + 1) > limits.max_string:  # else it cannot be too long
                size = _replace_size(text, old, new, _arg(args, kwargs, 2, "count", -1))
            cost = n + max(size, 0)
    elif name == "join":
        items = _arg(args, kwargs, 0, "iterable", ())
        if not isinstance(items, (list, tuple, str, bytes)):
            if hasattr(items, "__len__") and len(items) > limits.max_items:
                raise _too_long(what, len(items), "max_items", limits)
            items = list(items)  # a lazy filter's items, counted as loop iterations
            if len(items) > limits.max_items:
                raise _too_long(what, len(items), "max_items", limits)
            args = (items,) + tuple(args[1:])
        elif len(items) > limits.max_items:
            raise _too_long(what, len(items), "max_items", limits)
        size = n * max(len(items) - 1, 0)
        if size <= limits.max_string:
            size += sum(len(i) for i in items if isinstance(i, (str, bytes)))
        cost = size + len(items)
    elif name == "translate":
        table = _arg(args, kwargs, 0, "table")
        if isinstance(table, Mapping):
            longest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
            size = n * longest
            cost = n * CHAR * 4 + size  # a mapping looked up per character
        else:
            cost = n * CHAR
    elif name == "encode":
        _codec(_arg(args, kwargs, 0, "encoding", "utf-8"))
        errors = _arg(args, kwargs, 1, "errors", "strict")
        per_char = 90 if errors == "namereplace" else 10 if errors in ("xmlcharrefreplace", "backslashreplace") else 4
        ascii_text = isinstance(text, str) and text.isascii()
        size = n * (1 if per_char == 4 and ascii_text else per_char)
        cost = n * (COPY if ascii_text else CHAR)
    elif name == "decode":
        _codec(_arg(args, kwargs, 0, "encoding", "utf-8"))
        size = n * 4  # backslashreplace: \\xNN
        cost = n * (COPY if text.isascii() else CHAR)
    elif name == "hex":
        size = n * 3
        cost = n * CHAR
    elif name == "fromhex":
        source = _arg(args, kwargs, 0, "string", "")
        cost = len(source) * CHAR if isinstance(source, (str, bytes)) else 0
    elif name in _PYTHON_TEXT:
        cost = n * 400
        if n > limits.max_filter_input:
            raise _stop(
                "max_filter_input",
                limits,
                f"{what} got {n:,} characters of input (more than {limits.max_filter_input:,})",
            )
    elif name in ("format", "format_map"):
        cost = n + text.count("{" if isinstance(text, str) else b"{") * PYTHON * 4
    elif name == "escape":
        value = _arg(args, kwargs, 0, "s", "")
        size = len(value) * 6 if isinstance(value, (str, bytes)) else 0
        cost = size
    elif name == "maketrans":
        cost = sum(len(a) for a in args if isinstance(a, (str, bytes, Mapping))) * OBJECT
    else:
        raise SandboxError(f"calling {what} is not allowed in templates")
    if size > limits.max_string:
        raise _too_long(what, size, "max_string", limits, _unit(text, name))
    if cost > limits.max_op_cost:
        raise too_costly(what, cost, budget)
    return args


def _unit(text: Any, name: str) -> str:
    """What a text method builds: characters, or bytes."""
    if name == "encode" or (isinstance(text, bytes) and name not in ("decode", "hex")):
        return "bytes"
    return "characters"


def _line_breaks(text: Any) -> int:
    """An upper bound of the lines ``text.splitlines()`` makes (each line break counted, a
    ``\\r\\n`` once), without making them."""
    if isinstance(text, bytes):
        return text.count(b"\n") + text.count(b"\r") - text.count(b"\r\n") + 1
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    if not text.isascii():
        breaks += sum(text.count(c) for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
    else:
        breaks += sum(text.count(c) for c in "\x0b\x0c\x1c\x1d\x1e")
    return breaks + 1


def call_text_method(method: Any, name: str, text: Any, args: tuple, kwargs: dict, budget: Budget) -> Any:
    """``method(*args, **kwargs)`` after :func:`check_text_method`; a ``split`` is made
    with its ``maxsplit`` capped at what the budgets allow, and refused when it would
    make more (never cut short)."""
    args = check_text_method(name, text, args, kwargs, budget)
    if name in _SPLITS and len(text) > CHEAP:
        cap = split_cap(budget, len(text))
        given = _arg(args, kwargs, 1, "maxsplit", -1)
        if isinstance(given, int) and (given < 0 or given > cap):
            sep = _arg(args, kwargs, 0, "sep")
            result = method(sep, cap)
            if len(result) > cap:
                limit = "max_items" if cap >= budget.limits.max_items else "max_op_cost"
                if limit == "max_items":
                    raise _too_long(f"{type(text).__name__}.{name}", len(result), "max_items", budget.limits)
                raise too_costly(f"{type(text).__name__}.{name}", len(text) * 2 + len(result) * OBJECT, budget)
            return result
    return method(*args, **kwargs)


def check_number_method(name: str, number: Any, args: tuple, kwargs: dict, budget: Budget) -> None:
    """``to_bytes``, ``from_bytes`` and friends of an ``int`` or ``float``, sized."""
    limits = budget.limits
    if name in INT_METHODS or name == "hex":
        return
    if name == "to_bytes":
        length = _arg(args, kwargs, 0, "length", 1)
        if isinstance(length, int) and length > limits.max_string:
            raise _too_long("int.to_bytes", length, "max_string", limits, "bytes")
        return
    if name == "from_bytes":
        data = _arg(args, kwargs, 0, "bytes", b"")
        if hasattr(data, "__len__"):
            int_bits("int.from_bytes", len(data) * 8, budget)
            charge_cost("int.from_bytes", len(data) * COPY, budget)
        return
    if name == "fromhex":
        text = _arg(args, kwargs, 0, "string", "")
        if isinstance(text, str):
            charge_cost("float.fromhex", len(text) * CHAR, budget)
        return
    raise SandboxError(f"calling {type(number).__name__}.{name} is not allowed in templates")


def check_container_method(name: str, container: Any, args: tuple, kwargs: dict, budget: Budget) -> tuple:
    """A method of a ``list``, ``tuple`` or ``dict`` (or a mapping view), sized: what it
    adds to the container against ``max_items``, sorting and ``fromkeys`` against
    ``max_op_cost``. Returns the arguments (an iterator to ``extend`` becomes a list)."""
    limits = budget.limits
    what = f"{type(container).__name__}.{name}"
    if name in ("extend", "update", "fromkeys"):
        other = _arg(args, kwargs, 0, "iterable", ())
        if name == "update" and not args:
            return args
        if not hasattr(other, "__len__"):
            other = list(other)  # a lazy filter's items, counted as loop iterations
            args = (other,) + tuple(args[1:])
        total = len(other) + (0 if name == "fromkeys" else len(container))
        if total > limits.max_items:
            raise _too_long(what, total, "max_items", limits)
        charge_cost(what, len(other) * OBJECT, budget)
        budget.charge(len(other))
    elif name == "sort":
        cost = sort_cost(len(container), _arg(args, kwargs, 9, "key") is not None)
        charge_cost(what, cost, budget)
        charge_cost(what, cost + weight(container, limits.max_op_cost) * len(container).bit_length(), budget)
    elif name in ("index", "count", "remove"):
        check_compare("in", _arg(args, kwargs, 0, "value"), container, budget)
    elif name in ("copy", "insert", "reverse", "values", "items", "keys"):
        charge_cost(what, len(container) * COPY, budget)
    elif name not in SEQUENCE_METHODS and name not in MUTATING_METHODS:
        raise SandboxError(f"calling {what} is not allowed in templates")
    return args


# -- comparisons ------------------------------------------------------------------------

_COMPARED = frozenset({str, bytes, int, float, bool, type(None)})


def weight(value: Any, cap: int) -> int:
    """What comparing ``value`` may cost: the characters of its texts and its items, all
    the way down, counted up to a little past ``cap``."""
    total = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack and total <= cap:
        item = pop()
        kind = type(item)
        if kind is str or kind is bytes:
            total += len(item)
        elif kind is list or kind is tuple:
            total += len(item)
            if kind is list and total <= cap and set(map(type, item)) <= {str}:
                total += sum(map(len, item))  # a list of texts: in one pass of C
                continue
            stack.extend(item)
        elif isinstance(item, Mapping):
            total += len(item)
            for key, sub in item.items():
                push(key)
                push(sub)
        else:
            total += 1
    return total


def check_compare(op: str, left: Any, right: Any, budget: Budget) -> None:
    """``left op right`` (``==``, ``<``, ``in``...) within ``max_op_cost``: comparing two
    lists compares their items, and each of two texts character by character (a million
    references to one long text compared with a million to another would run for
    minutes); ``in`` a list compares with each item."""
    cap = budget.limits.max_op_cost
    if op == "in" or op == "notin":
        if not isinstance(right, (list, tuple)):
            return  # a mapping (hashed), a text (searched in C), a lazy sequence (counted item by item)
        per = len(left) if isinstance(left, (str, bytes)) else weight(left, cap) if type(left) not in _COMPARED else 1
        cost = len(right) * max(per, 1)
        if cost > cap:
            cost = min(cost, weight(right, cap) + len(right))
    else:
        if type(left) in _COMPARED or type(right) in _COMPARED:
            return  # two texts: at most the shorter's length, in C
        cost = min(weight(left, cap), weight(right, cap))
    if cost > cap:
        raise too_costly(f"comparing with {op!r}", cost, budget)
