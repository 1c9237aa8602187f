"""The code :mod:`~prompt_style.fields.jinja_compiler` generates: Python source made from
the intermediate form of :mod:`~prompt_style.fields.jinja_parse` (a tree of tuples),
each construct with the checks that keep it the sandbox's equal (see the compiler's
module documentation: what compiles, same result or the sandbox, budgets), and the
generated ``make()`` compiled once per shape."""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable
from typing import Any

from ..safe import limits as _limits
from .jinja_parse import (
    _CHEAP,
    _CHEAP_FILTER,
    _COMPARISONS,
    _LOOP_CAP,
    ARG_METHODS,
    STR_METHODS,
    TEXT_FILTERS,
    _NotSimple,
)

_CODE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[ \n():=,.\[\]{}<>+*'\"f-]")


# -- code generation -------------------------------------------------------------------


class _Writer:
    """Generated code, and the values (keys, methods, constants, text) passed to it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.values: list[Any] = []
        self.names: list[str] = []
        self.count = 0
        self.looked_up: dict[Any, str] = {}
        self.containers: set[str] = set()
        self.methods = 0
        self.list_items: dict[str, list[str]] = {}  # a list literal's variable: its items'
        self.loops: list[tuple[str, str, str]] = []  # the loops the code is in: (position, length, item)
        self.sets: dict[str, tuple[str, type | None]] = {}  # a {% set %} name: its variable and type

    def value(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self.values)}"
        self.values.append(value)
        self.names.append(name)
        return name

    def var(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def add(self, line: str) -> None:
        self.lines.append(line)

    def need(self, var: str, *types: str) -> None:
        """Code that hands the record to the sandbox unless ``var`` is of one of ``types``
        (names of built-in types); ``t`` holds its type after it."""
        self.add(f"t = type({var})")
        self.bail(" and ".join(f"t is not {name}" for name in types))

    def bail(self, condition: str) -> None:
        """Code that hands the record to the sandbox when ``condition`` holds."""
        self.lines.append(f"if {condition}:")
        self.lines.append("    return SLOW")


def _emit(w: _Writer, node: tuple[Any, ...]) -> tuple[str, type | None]:
    """Code computing ``node`` into a variable: ``(variable, its type if known)``."""
    op = node[0]
    if op == "const":
        return w.value("K", node[1]), type(node[1])
    if op == "name":
        known = w.looked_up.get(node)
        if known is not None:
            return known, None
        var = w.var()
        w.add(f"{var} = record[{w.value('K', node[1])}]")
        w.looked_up[node] = var
        return var, None
    if op == "list":
        items = [_emit(w, item)[0] for item in node[1]]
        var = w.var()
        w.add(f"{var} = [{', '.join(items)}]")
        w.list_items[var] = items
        return var, list
    if op == "cond":
        return _emit_cond(w, node)
    if op == "item_of":  # a loop's item
        return w.loops[node[1]][2], None
    if op == "loop":
        return _emit_loop_attr(w, node)
    if op == "compare":
        return _emit_compare(w, node)
    if op == "setvar":  # a top-level {% set %}'s value (set before: _bind_sets)
        return w.sets[node[1]]
    if op == "concat":
        return _emit_concat(w, node)
    if op == "default":
        return _emit_default(w, node)
    inner, inner_type = _emit(w, node[1])
    if op == "replace":
        return _emit_replace(w, node, inner, inner_type)
    if op == "length":
        return _emit_length(w, inner, inner_type)
    if op == "range":
        return _emit_range(w, inner, inner_type)
    if op == "join":
        return _emit_join(w, node, inner, inner_type)
    if op == "sort":
        return _emit_sort(w, inner, inner_type)
    if op in ("first", "last"):
        return _emit_end(w, op, inner, inner_type)
    if op == "slice":
        return _emit_slice(w, node, inner, inner_type)
    if op == "sub":
        return _emit_sub(w, node, inner, inner_type)
    if op == "index":
        return _emit_index(w, node, inner, inner_type)
    if op in ("add", "getitem"):
        return _emit_pair(w, node, inner, inner_type)
    if op == "int":
        return _emit_int(w, inner, inner_type)
    if op in ("filter", "call1", "truncate"):
        return _emit_text_call(w, node, inner, inner_type)
    var = w.var()
    if op == "attr":
        # a dict's field (record_fields_first: only when present, which the lookup
        # checks; otherwise Jinja's rule, which _convert kept to non-dict-attributes)
        if inner_type is not None:
            raise _NotSimple  # a constant's or a method result's attribute
        w.bail(f"type({inner}) is not dict")
        w.add(f"{var} = {inner}[{w.value('K', node[2])}]")
        return var, str if inner_type is str else None  # (a character of a text, or an error)
    if op == "item":
        _check_container(w, inner, inner_type)
        w.add(f"{var} = {inner}[{w.value('K', node[2])}]")
        return var, str if inner_type is str else None  # (a character of a text, or an error)
    if op == "call":
        if inner_type is not None and inner_type is not str:
            raise _NotSimple
        if inner_type is None:
            w.bail(f"type({inner}) is not str")
        w.bail(f"len({inner}) > CAP")  # bounds the time; the budgets are checked at the end
        method = node[2]
        if method not in STR_METHODS or not method.isidentifier():
            raise _NotSimple  # pragma: no cover - _convert admits only these
        w.add(f"{var} = {inner}.{method}()")  # a name from STR_METHODS, nothing else
        w.methods += 1
        w.add(f"work += len({var})")
        return var, str
    raise _NotSimple  # pragma: no cover - _convert makes only the above


def _emit_index(w: _Writer, node: tuple[Any, ...], inner: str, inner_type: type | None) -> tuple[str, type]:
    """``sequence.index(value)`` on a ``list`` or ``tuple``, for a ``str`` or ``int``
    value: the sandbox calls ``list.index`` as it is and charges its result one unit
    of work (a value missing from the list raises there, with its message)."""
    _check_sequence(w, inner, inner_type)
    arg, arg_type = _emit(w, node[2])
    if arg_type is None:
        w.need(arg, "str", "int")
    elif arg_type is not str and arg_type is not int:
        raise _NotSimple
    w.bail(f"len({inner}) > CAP")  # bounds the time (each comparison is of a str or an int)
    var = w.var()
    w.add(f"{var} = {inner}.index({arg})")
    w.methods += 1
    w.add("work += 1")
    return var, int


def _check_container(w: _Writer, var: str, known: type | None) -> None:
    """Code that hands the record to the sandbox unless ``var`` is a container the
    sandbox's ``getitem`` subscripts as it is (``dict``, ``list``, ``str``, ``tuple``)."""
    if known is not None and known not in (str, list):
        raise _NotSimple
    if known is None and var not in w.containers:
        w.need(var, "dict", "list", "str", "tuple")
        w.containers.add(var)  # later steps on it need not ask again


def _emit_pair(w: _Writer, node: tuple[Any, ...], left: str, left_type: type | None) -> tuple[str, type | None]:
    """``a + b`` and ``container[key]`` with a key computed per record."""
    right, right_type = _emit(w, node[2])
    var = w.var()
    if node[0] == "getitem":
        _check_container(w, left, left_type)
        if right_type is None:
            w.need(right, "int", "str")  # a record's key: nothing else is hashed or compared
        elif right_type is not int and right_type is not str:
            raise _NotSimple
        w.add(f"{var} = {left}[{right}]")  # Jinja's getitem tries exactly this first
        return var, str if left_type is str else None  # (a character of a text, or an error)
    # '+': two texts are joined and their length charged, two ints added (as the
    # sandbox's call_binop does); any other pair is the sandbox's (its error, or a list)
    # (work counts what the render built so far: all of it stays within CAP, however many
    # '+' a template holds, so a render's time stays bounded without a deadline check)
    if left_type is str and right_type is str:
        w.bail(f"work + len({left}) + len({right}) > CAP")
        w.add(f"{var} = {left} + {right}")
        w.add(f"work += len({var})")
        return var, str
    if left_type not in (None, str, int) or right_type not in (None, str, int):
        raise _NotSimple
    w.add(f"t = type({left})")
    w.add(f"if t is str and type({right}) is str:")
    w.add(f"    if work + len({left}) + len({right}) > CAP:")
    w.add("        return SLOW")
    w.add(f"    {var} = {left} + {right}")
    w.add(f"    work += len({var})")
    w.add(f"elif t is int and type({right}) is int:")
    w.add(f"    {var} = {left} + {right}")
    w.add("else:")
    w.add("    return SLOW")
    w.methods += 1
    return var, None


def _emit_sub(w: _Writer, node: tuple[Any, ...], left: str, left_type: type | None) -> tuple[str, type]:
    """``a - b`` of two ints: the sandbox's ``call_binop`` subtracts them, checking and
    charging nothing (any other pair is the sandbox's: its error, or a float)."""
    right, right_type = _emit(w, node[2])
    for var, known in ((left, left_type), (right, right_type)):
        if known is None:
            w.bail(f"type({var}) is not int")
        elif known is not int:
            raise _NotSimple
    var = w.var()
    w.add(f"{var} = {left} - {right}")
    return var, int


def _emit_length(w: _Writer, inner: str, inner_type: type | None) -> tuple[str, type]:
    """The ``length`` filter (Jinja's own: ``len``) of a text, list, tuple or dict: the
    sandbox charges its result one unit of work."""
    if inner_type is None:
        w.need(inner, "str", "list", "tuple", "dict")
    elif inner_type not in (str, list):
        raise _NotSimple
    var = w.var()
    w.add(f"{var} = len({inner})")
    w.methods += 1
    w.add("work += 1")
    return var, int


def _emit_range(w: _Writer, inner: str, inner_type: type | None) -> tuple[str, type]:
    """``range(n)`` of an int: the sandbox's ``range`` (a record's field named ``range``
    hides it: then the sandbox's), within the least ``max_range`` of the process's
    budgets and the loop cap, charged ``n // 16`` as the sandbox charges it."""
    if inner_type is not None and inner_type is not int:
        raise _NotSimple
    w.bail(f"{w.value('K', 'range')} in record or type({inner}) is not int")
    w.bail(f"{inner} > {_LOOP_CAP} or {inner} > {w.value('K', _limits.RANGE_FLOOR)}[0]")
    var = w.var()
    w.add(f"{var} = range({inner})")
    w.methods += 1
    w.add(f"work += len({var}) // 16")
    return var, range


def _all_text(items: Any) -> bool:
    for item in items:
        if type(item) is not str:
            return False
    return True


_JOIN_ITEM = 150  # the sandbox's cost of each item joined (_sandbox/filters.py)


def _check_sequence(w: _Writer, var: str, known: type | None) -> None:
    """Code that hands the record to the sandbox unless ``var`` is a ``list`` or ``tuple``."""
    if known is not None and known is not list:
        raise _NotSimple
    if known is None:
        w.need(var, "list", "tuple")


def _emit_join(w: _Writer, node: tuple[Any, ...], inner: str, inner_type: type | None) -> tuple[str, type]:
    """``join`` with a literal separator, of a ``list`` or ``tuple`` of texts: the
    sandbox's ``join`` checks its items' cost (150 steps each: within ``max_op_cost`` when
    they are fewer than ``FLOOR * 40 / 150``), charges the joined size with a separator
    per item, and the guard around every filter the result's length."""
    _check_sequence(w, inner, inner_type)
    w.bail(f"len({inner}) * {_JOIN_ITEM} > FLOOR[0] * 40 or not {w.value('M', _all_text)}({inner})")
    separator = w.value("K", node[2])
    var = w.var()
    w.bail("work > CAP")  # all the render built so far (see _emit_pair)
    w.add(f"{var} = {separator}.join({inner})")
    w.add(f"work += 2 * len({var}) + (len({separator}) if {inner} else 0)")
    w.methods += 1
    return var, str


def _emit_sort(w: _Writer, inner: str, inner_type: type | None) -> tuple[str, type]:
    """The ``sort`` filter without arguments (Jinja's own: case-insensitive, a stable
    sort by ``[item.lower()]``, which orders texts as ``key=str.lower`` does) of a
    ``list`` or ``tuple`` of texts, at most :data:`_LOOP_CAP` of them: the sandbox
    checks its cost (``sort_cost``: within ``max_op_cost`` when charged here a fortieth
    of it) and charges its items."""
    _check_sequence(w, inner, inner_type)
    w.bail(f"len({inner}) > {_LOOP_CAP} or not {w.value('M', _all_text)}({inner})")
    var = w.var()
    w.add(f"{var} = {w.value('M', sorted)}({inner}, key={w.value('M', str.lower)})")
    # (sort_cost(n, True) // 40, rounded up, and the n items)
    steps = f"len({var}) * (len({var}).bit_length() or 1) * {_SORT_COMPARE} + len({var}) * {_SORT_KEY}"
    w.add(f"work += ({steps}) // 40 + 1")
    w.add(f"work += len({var})")
    w.methods += 1
    return var, list


def _emit_end(w: _Writer, op: str, inner: str, inner_type: type | None) -> tuple[str, type | None]:
    """The ``first`` and ``last`` filters (Jinja's own) of a ``list``, ``tuple`` or text:
    its first or last item (an empty one gives Jinja's undefined: the sandbox's); the
    guard around the filter charges the item (its length, for a text or a list)."""
    if inner_type is not None and inner_type is not str and inner_type is not list:
        raise _NotSimple
    if inner_type is None:
        w.need(inner, "list", "tuple", "str")
    var = w.var()
    w.bail(f"not {inner}")
    w.add(f"{var} = {inner}[{0 if op == 'first' else -1}]")
    w.add(f"t = type({var})")
    w.add("work += 1")
    w.add("if t is str or t is list or t is tuple:")
    w.add(f"    work += len({var})")
    w.methods += 1
    return var, str if inner_type is str else None


def _emit_slice(w: _Writer, node: tuple[Any, ...], inner: str, inner_type: type | None) -> tuple[str, type | None]:
    """``value[start:stop]`` of a text, list or tuple with ``int`` bounds (or none): Jinja's
    ``getitem`` slices it as Python does and charges nothing; the copy is charged here
    (what the render builds stays within the threshold)."""
    if inner_type is not None and inner_type is not str and inner_type is not list:
        raise _NotSimple
    bounds = []
    for bound in node[2:4]:
        if bound is None:
            bounds.append("")
            continue
        var, known = _emit(w, bound)
        if known is None:
            w.bail(f"type({var}) is not int")
        elif known is not int:
            raise _NotSimple
        bounds.append(var)
    if inner_type is None:
        w.need(inner, "str", "list", "tuple")
    w.bail(f"len({inner}) > CAP")
    var = w.var()
    w.add(f"{var} = {inner}[{bounds[0]}:{bounds[1]}]")
    w.add(f"work += len({var})")
    w.methods += 1
    return var, inner_type


def _emit_default(w: _Writer, node: tuple[Any, ...]) -> tuple[str, type | None]:
    """``name|default(value)``: the record's field when it has one, else the constant
    (Jinja's undefined is what the filter replaces); the result charged as the guard
    around the filter charges it."""
    if node[1][0] != "name":
        raise _NotSimple  # (a {% set %} name: not a record's field)
    key = w.value("K", node[1][1])
    var = w.var()
    w.add(f"if {key} in record:")
    w.add(f"    {var} = record[{key}]")
    w.add("else:")
    w.add(f"    {var} = {w.value('K', node[2])}")
    w.add("work += 1")
    w.add(f"t = type({var})")
    w.add("if t is str or t is list or t is tuple:")
    w.add(f"    work += len({var})")
    w.methods += 1
    return var, None


_SORT_COMPARE, _SORT_KEY = 40, 300  # the sandbox's COMPARE and PYTHON steps (_sandbox/costs.py)


def _emit_compare(w: _Writer, node: tuple[Any, ...]) -> tuple[str, type]:
    """One comparison with a constant side, as Python runs it (the sandbox does too):
    plain data only (a value of another type might compare as it likes)."""
    left, left_type = _emit(w, node[2])
    right, right_type = _emit(w, node[3])
    for var, known in ((left, left_type), (right, right_type)):
        if known is None:
            _check_plain(w, var)
    if node[1] not in _COMPARISONS.values():
        raise _NotSimple  # pragma: no cover - _compare makes only these
    var = w.var()
    w.add(f"{var} = {left} {node[1]} {right}")
    return var, bool


_LOOP_CODE = {
    "index0": ("{i}", int),
    "index": ("{i} + 1", int),
    "first": ("{i} == 0", bool),
    "last": ("{i} == {n} - 1", bool),
    "length": ("{n}", int),
    "revindex": ("{n} - {i}", int),
    "revindex0": ("{n} - {i} - 1", int),
}


def _emit_loop_attr(w: _Writer, node: tuple[Any, ...]) -> tuple[str, type]:
    """``loop.index0``, ``loop.last``...: what Jinja's ``LoopContext`` gives, from the
    loop's position and its sequence's length."""
    position, length, _ = w.loops[node[1]]
    code, kind = _LOOP_CODE[node[2]]
    var = w.var()
    w.add(f"{var} = {code.format(i=position, n=length)}")
    return var, kind


def _emit_int(w: _Writer, inner: str, inner_type: type | None) -> tuple[str, type]:
    """The ``int`` filter: Jinja's own function, on an ``int`` (itself), a ``float``, or a
    text short enough that the sandbox checks nothing (``max_int_bits``); one unit of work."""
    if inner_type is not None and inner_type not in (str, int, float):
        raise _NotSimple
    var = w.var()
    w.add(f"t = type({inner})")
    w.add("if t is int:")
    w.add(f"    {var} = {inner}")
    w.add(f"elif t is float or (t is str and len({inner}) * 5 <= INT_BITS[0]):")
    w.add(f"    {var} = {w.value('M', _do_int())}({inner})")
    w.add("else:")
    w.add("    return SLOW")
    w.methods += 1
    w.add("work += 1")
    return var, int


def _do_int() -> Any:
    import jinja2.filters

    return jinja2.filters.FILTERS["int"]


def _emit_text_call(w: _Writer, node: tuple[Any, ...], inner: str, inner_type: type | None) -> tuple[str, type]:
    """A filter of :data:`TEXT_FILTERS`, or a method of :data:`ARG_METHODS` with its literal
    argument, on a text short enough that the sandbox calls it as it is; or ``truncate(n)``
    on a text Jinja's filter returns as it is (at most ``n`` plus the leeway long: a longer
    one is the sandbox's, which cuts it), charged as the sandbox charges a filter's text."""
    if inner_type is not None and inner_type is not str:
        raise _NotSimple
    if inner_type is None:
        w.bail(f"type({inner}) is not str")
    w.bail("work > CAP")  # all the render built so far (see _emit_pair)
    if node[0] == "truncate":
        w.bail(f"len({inner}) > {int(node[2])}")
        w.add(f"work += len({inner})")
        w.methods += 1
        return inner, str
    var = w.var()
    if node[0] == "filter":
        w.bail(f"len({inner}) > {_CHEAP_FILTER}")
        method = TEXT_FILTERS[node[2]]
        if method and method not in STR_METHODS:
            raise _NotSimple  # pragma: no cover - TEXT_FILTERS holds only these
        w.add(f"{var} = {inner}.{method}()" if method else f"{var} = {inner}")
        w.add(f"work += len({var})")
        w.methods += 1
        return var, str
    method = node[2]
    if method not in ARG_METHODS:
        raise _NotSimple  # pragma: no cover - _convert admits only these
    w.bail(f"len({inner}) > {_CHEAP}")
    w.add(f"{var} = {inner}.{method}({w.value('K', node[3])})")
    w.methods += 1
    if method in ("split", "rsplit"):
        w.add(f"work += len({var})")  # the items made (max_items is within the threshold)
        return var, list
    w.add(f"work += len({var})")
    return var, str


def _emit_concat(w: _Writer, node: tuple[Any, ...]) -> tuple[str, type]:
    """``a ~ b``: each value as text (a value that is not text printed as the sandbox's
    ``_text`` prints it: ``str()`` after its size estimate, charged), joined, and the
    result's length charged (the sandbox's ``ps-concat``)."""
    texts = [_as_text(w, *_emit(w, item)) for item in node[1]]
    w.bail(f"work + {' + '.join(f'len({t})' for t in texts)} > CAP")
    var = w.var()
    w.add(f"{var} = f'{''.join('{' + t + '}' for t in texts)}'")
    w.add(f"work += len({var})")
    w.methods += 1  # (an expression's value then has its work checked too)
    return var, str


def _as_text(w: _Writer, var: str, known: type | None, printed: bool = False) -> str:
    """``var`` as text: itself when it is a ``str``, else ``str()`` of it within the
    bound's estimate (charged; a value the bound refuses is the sandbox's). ``printed``:
    a text is charged its length too (the sandbox's ``finalize`` charges what it prints)."""
    if known is str:
        if printed:
            w.add(f"work += len({var})")
        return var
    text = w.var()
    indent = ""
    if known is None:
        w.add(f"if type({var}) is str:")
        w.add(f"    {text} = {var}")
        if printed:
            w.add(f"    work += len({var})")
        w.add("else:")
        indent = "    "
    w.add(f"{indent}size = bound({var}, CAP)")
    w.add(f"{indent}if size is None:")
    w.add(f"{indent}    return SLOW")
    w.add(f"{indent}{text} = str({var})")
    w.add(f"{indent}work += size")
    return text


def _emit_replace(w: _Writer, node: tuple[Any, ...], inner: str, inner_type: type | None) -> tuple[str, type]:
    """``text|replace(old, new)`` and ``text.replace(old, new)`` on a text short enough
    that the sandbox replaces in it as it is (``node[4]``): the result's size is known
    before it is made (the sandbox's ``_replace_size``), and it and the text are charged."""
    if inner_type is not None and inner_type is not str:
        raise _NotSimple
    if inner_type is None:
        w.bail(f"type({inner}) is not str")
    old, new = node[2], node[3]
    w.bail(f"work > CAP or len({inner}) > {int(node[4])}")
    if len(new) > len(old):  # it grows: by how much, before it is made
        found = f"(len({inner}) + 1)" if not old else f"{inner}.count({w.value('K', old)})"
        w.bail(f"work + 2 * len({inner}) + {found} * {len(new) - len(old)} > CAP")
    var = w.var()
    w.add(f"{var} = {inner}.replace({w.value('K', old)}, {w.value('K', new)})")
    w.add(f"work += len({inner}) + len({var})")
    w.methods += 1
    return var, str


def _emit_cond(w: _Writer, node: tuple[Any, ...]) -> tuple[str, type | None]:
    """``a if test else b``: the test, then only the branch it picks (each branch's own
    lookups: a name read in one is not known to be read in the other)."""
    condition = _emit_condition(w, node[1])
    result = w.var()
    kinds: list[type | None] = []

    def branch(expression: tuple[Any, ...]) -> Callable[[], None]:
        def emit() -> None:
            var, known = _emit(w, expression)
            w.add(f"{result} = {var}")
            kinds.append(known)

        return emit

    then, otherwise = _branch(w, branch(node[2])), _branch(w, branch(node[3]))
    w.add(f"if {condition}:")
    w.lines += then
    w.add("else:")
    w.lines += otherwise
    return result, kinds[0] if kinds[0] is kinds[1] else None


def _generate(
    parts: list[Any], kind: str, guard: bool = False, digits: bool = False, result: str | None = None
) -> tuple[str, list[str], list[Any]]:
    """The code of ``make()`` and its values' names and values. ``guard``: the record is
    the sandbox's when it holds the key ``G`` (a value given after the others);
    ``digits``: a template's text that is all digits is the sandbox's (the caller reads
    such text as a number); ``result``: what an expression's value must be (see
    :func:`compile_simple`)."""
    w = _Writer()
    if kind == "expression":
        var, known = _emit(w, parts[0])
        body = w.lines
        if result is not None:
            body += _result_check(var, known, result, digits)
        elif known is not str:
            # the sandbox checks a value that is not text as if printed (max_output);
            # within the least threshold of the process (FLOOR) no budget read is needed
            items = w.list_items.get(var)
            if known is int:  # bound()'s charge for an int, inline
                body += _capped(f"{var}.bit_length() // 3 + 2 > FLOOR[0]", f"bound({var}, cap) is None")
            elif items:  # a list of fields ([sol1, sol2]): bound()'s charge when each is a str
                strs = " and ".join(f"type({item}) is str" for item in items)
                size = f"{2 + 4 * len(items)} + 10 * ({' + '.join(f'len({item})' for item in items)})"
                body += _capped(f"not ({strs} and {size} <= FLOOR[0])", f"bound({var}, cap) is None")
            else:
                # a list of texts (choices) measured inline, as bound() measures it
                body += [
                    f"if type({var}) is not str:",
                    "    size = -1",
                    f"    if type({var}) is list:",
                    f"        for t in {var}:",
                    "            if type(t) is not str:",
                    "                break",
                    "        else:",
                    f"            size = {_texts_size(var)}",
                    *(
                        "    " + line
                        for line in _capped(
                            f"size < 0 and bound({var}, FLOOR[0]) is None or size > FLOOR[0]",
                            f"(bound({var}, cap) is None) if size < 0 else size > cap",
                        )
                    ),
                ]
        if w.methods:
            body += _capped("work > FLOOR[0]", "work > cap")
        body.append(f"return {var}[:]" if result == "texts" else f"return {var}")
        return _source(body, w.names, guard), w.names, w.values
    if any(type(part) is tuple and part[0] in ("if", "for") for part in parts):
        return _generate_blocks(parts, guard, digits)
    pieces: list[str] = []
    literal = 0
    for part in parts:
        if isinstance(part, str):
            if part:
                pieces.append(w.value("L", part))
                literal += len(part)
            continue
        if part[0] == "set":
            w.sets[part[1]] = _emit(w, part[2])
            continue
        var, known = _emit(w, part)
        if known is str:
            pieces.append(var)
            continue
        # printed: str(value); its charge (the sandbox's estimate, at most this bound)
        # replaces its length, which the output's length counts below. (The value's
        # own variable stays as it is: a later step may use it again.)
        text = w.var()
        pieces.append(text)
        indent = ""
        if known is None:
            w.add(f"{text} = {var}")
            w.add(f"if type({var}) is not str:")
            indent = "    "
        w.add(f"{indent}size = bound({var}, CAP)")
        w.add(f"{indent}if size is None:")
        w.add(f"{indent}    return SLOW")
        w.add(f"{indent}{text} = str({var})")
        w.add(f"{indent}work += size - len({text})")
    body = w.lines
    # Every printed text is charged its length (finalize), method results theirs (call).
    if not pieces:
        body.append("return ''")
    else:
        if len(pieces) == 1:
            body.append(f"out = {pieces[0]}")
        else:
            body.append(f"out = f'{''.join('{' + p + '}' for p in pieces)}'")
        body += [
            f"work += len(out) - {w.value('N', literal)}",
            # within the least threshold of the process no budget can stop the render
            # (max_output is at least the threshold): no budget read
            *_capped("work > FLOOR[0] or len(out) > FLOOR[0]", "work > cap or len(out) > max_output"),
            # (a text whose literal parts hold anything but digits is never all digits)
            *_DIGITS_CODE[digits and _digits_only("".join(part for part in parts if isinstance(part, str)))],
        ]
    return _source(body, w.names, guard), w.names, w.values


def _digits_only(text: str) -> bool:
    """Whether ``text`` (a template's literal text) could be part of an all-digits output."""
    return text == "" or text.isdigit()


def _generate_blocks(parts: list[Any], guard: bool, digits: bool) -> tuple[str, list[str], list[Any]]:
    """A template with ``{% if %}`` or ``{% for %}``: its text made piece by piece into a
    list, each printed piece charged as the sandbox charges it (its length; a value that
    is not text, its estimate), and each loop its iterations (within :data:`_LOOP_CAP` and
    every budget's ``max_loop_iterations``) and its literal text per iteration."""
    w = _Writer()
    w.add("p = []")
    w.add("app = p.append")
    w.add("iters = 0")
    _emit_parts(w, parts)
    w.lines += [
        f"out = {w.value('M', ''.join)}(p)",
        *_capped("work > FLOOR[0] or len(out) > FLOOR[0]", "work > cap or len(out) > max_output"),
        *_DIGITS_CODE[digits],
    ]
    return _source(w.lines, w.names, guard), w.names, w.values


_DIGITS_CODE = {False: ("return out",), True: ("if out.isdigit():", "    return SLOW", "return out")}


def _emit_parts(w: _Writer, parts: list[Any]) -> None:
    # The pieces printed one after another are appended at once, as one f-string (a loop's
    # body: one append an iteration, not four); a statement appends what came before it.
    pending: list[str] = []

    def flush() -> None:
        if len(pending) == 1:
            w.add(f"app({pending[0]})")
        elif pending:
            w.add(f"app(f'{''.join('{' + piece + '}' for piece in pending)}')")
        pending.clear()

    for part in parts:
        if isinstance(part, str):
            if part:
                pending.append(w.value("L", part))
            continue
        if part[0] in ("if", "for", "set"):
            flush()
            if part[0] == "if":
                _emit_if(w, part)
            elif part[0] == "for":
                _emit_for(w, part)
            else:  # (top level only: its variable is set before any later part runs)
                w.sets[part[1]] = _emit(w, part[2])
            continue
        pending.append(_as_text(w, *_emit(w, part), printed=True))
    flush()


def _branch(w: _Writer, emit: Callable[[], None]) -> list[str]:
    """The lines ``emit`` writes, as a block of their own: names looked up in it are not
    known to be looked up after it (it may not run)."""
    saved = (w.lines, w.looked_up, w.containers)
    w.lines, w.looked_up, w.containers = [], dict(saved[1]), set(saved[2])
    try:
        emit()
        return ["    " + line for line in w.lines] or ["    pass"]
    finally:
        w.lines, w.looked_up, w.containers = saved


def _emit_if(w: _Writer, part: tuple[Any, ...]) -> None:
    condition = _emit_condition(w, part[1])
    then = _branch(w, lambda: _emit_parts(w, part[2]))
    otherwise = _branch(w, lambda: _emit_parts(w, part[3])) if part[3] else None
    w.add(f"if {condition}:")
    w.lines += then
    if otherwise is not None:
        w.add("else:")
        w.lines += otherwise


def _emit_condition(w: _Writer, condition: tuple[Any, ...]) -> str:
    """Code computing what a condition needs; the Python condition itself."""
    if condition[0] == "not":
        return f"not ({_emit_condition(w, condition[1])})"
    if condition[0] in ("and", "or"):
        # the right side's code runs only when the left side does not decide (as Jinja's)
        truth = w.var()
        w.add(f"{truth} = bool({_emit_condition(w, condition[1])})")
        right = _branch(w, lambda: w.add(f"{truth} = bool({_emit_condition(w, condition[2])})"))
        w.add(f"if {truth}:" if condition[0] == "and" else f"if not {truth}:")
        w.lines += right
        return truth
    if condition[0] == "test":
        test = condition[1]
        if test[0] == "defined":
            code = f"{w.value('K', test[1])} in record"  # not a global's name (_test)
        else:
            value, _ = _emit(w, test[1])
            code = f"{value} is None"
        return code if test[2] else f"not ({code})"
    value, known = _emit(w, condition[1])
    if known is None:  # the truth of plain data only: Python's is Jinja's
        _check_plain(w, value)
    return value


def _check_plain(w: _Writer, var: str) -> None:
    """Code that hands the record to the sandbox unless ``var`` is plain data at its top
    (``str``, ``int``, ``float``, ``bool``, ``list``, ``tuple``, ``dict`` or ``None``),
    whose truth and comparisons are Python's (another type may define its own)."""
    w.add(f"t = type({var})")
    w.add(
        "if t is not str and t is not int and t is not float and t is not bool and t is not list"
        f" and t is not tuple and t is not dict and {var} is not None:"
    )
    w.add("    return SLOW")


def _emit_for(w: _Writer, part: tuple[Any, ...]) -> None:
    """``{% for x in sequence %}`` over a ``list`` or ``tuple``: its iterations counted
    (the sandbox's ``loop_items``), its literal text charged per iteration, and all the
    render built kept within :data:`_CLOCK_CAP` after each iteration (the time stays bounded
    without a deadline check)."""
    sequence, known = _emit(w, part[1])
    if known is not None and known is not list and known is not range:
        raise _NotSimple  # a constant text: its characters, the sandbox's
    if known is None:
        w.need(sequence, "list", "tuple")
    length, position, item = w.var(), w.var(), w.var()
    w.add(f"{length} = len({sequence})")
    w.add(f"iters += {length}")
    w.bail(f"iters > {_LOOP_CAP} or iters > {w.value('K', _limits.ITER_FLOOR)}[0]")
    if part[3]:
        w.add(f"work += {w.value('N', part[3])} * {length}")
    w.bail("work > CAP")
    w.loops.append((position, length, item))

    def body() -> None:
        _emit_parts(w, part[2])
        w.bail("work > CAP")

    lines = _branch(w, body)
    w.loops.pop()
    w.add(f"for {position}, {item} in enumerate({sequence}):")
    w.lines += lines


# The budgets in effect (as budgets() finds them), without a call when they are the last ones.
_BUDGETS_CODE = (
    "limits = SCOPE() or DEFAULTS(JinjaLimits)",
    "last = LAST[0]",
    "if limits is not None and limits is last[0]:",
    "    cap, max_output = last[1]",
    "else:",
    "    cap, max_output = budgets()",
)


def _capped(over_floor: str, over_cap: str) -> list[str]:
    """``SLOW`` when ``over_cap`` holds under the budgets in effect, read only when
    ``over_floor`` holds (past the least threshold of the process, ``FLOOR``)."""
    budgets = ["    " + line for line in _BUDGETS_CODE]
    return [f"if {over_floor}:", *budgets, f"    if {over_cap}:", "        return SLOW"]


def _texts_size(var: str) -> str:
    """What the sandbox charges for printing ``var``, a list of ``str``
    (:func:`~.jinja_budgets.printed_size_bound`'s one step)."""
    return f"2 + 4 * len({var}) + 10 * len(''.join({var}))"


def _result_check(var: str, known: Any, result: str, digits: bool) -> list[str]:
    """The checks of an expression's value ``var`` for ``result`` (see
    :func:`compile_simple`): anything else gives ``SLOW``. Each value taken is charged as
    the sandbox charges printing it (``bound()``'s estimate, inline)."""
    over = _capped("size > FLOOR[0]", "size > cap")
    if result == "texts":
        return [
            f"if type({var}) is not list:",
            "    return SLOW",
            f"for t in {var}:",
            "    if type(t) is not str:",
            "        return SLOW",
            f"size = {_texts_size(var)}",
            *over,
        ]
    if result != "scalar":
        raise ValueError(f"result must be 'texts' or 'scalar', not {result!r}")
    number = [
        f"if {var} < 0 or {var}.bit_length() >= 13000:",  # printed: 4,000 digits or more
        "    return SLOW",
        f"size = {var}.bit_length() // 3 + 2",
        *over,
    ]
    digit = f" or {var}.isdigit()" if digits else ""  # (read back as a number)
    text = [f"if len({var}) > FLOOR[0] or ({var}[:1] == '[' and {var}[-1:] == ']'){digit}:", "    return SLOW"]
    if known is int:
        return number if digits else ["return SLOW"]
    if known is str:
        return text
    if not digits:
        return [f"if type({var}) is not str:", "    return SLOW", *text]
    return [
        f"t = type({var})",
        "if t is int:",
        *("    " + line for line in number),
        "elif t is str:",
        *("    " + line for line in text),
        "else:",
        "    return SLOW",
    ]


def _source(body: list[str], names: list[str], guard: bool = False) -> str:
    lines = "".join(f"            {line}\n" for line in body)
    params = "".join(f", {name}" for name in names) + (", G" if guard else "")
    return (
        f"def make(SLOW, bound, budgets, CAP, FLOOR, SCOPE, DEFAULTS, JinjaLimits, LAST, INT_BITS{params}):\n"
        "    def function(record):\n"
        f"        if type(record) is not dict{' or G in record' if guard else ''}:\n"
        "            return SLOW\n"
        "        work = 0\n"
        "        try:\n"
        f"{lines}"
        "        except Exception:\n"
        "            return SLOW\n"
        "    return function\n"
    )


@functools.lru_cache(maxsize=256)
def _maker(code: str) -> Callable[..., Any]:
    """``make`` of generated ``code``, compiled once per process (templates of one
    shape share it, each with its own values)."""
    for token in _CODE_TOKEN.findall(code):
        if token[0].isalpha() and not (keyword.iskeyword(token) or token in _CODE_NAMES or _OWN.fullmatch(token)):
            raise AssertionError(f"unexpected name {token!r} in generated code")  # pragma: no cover
    namespace: dict[str, Any] = {}
    exec(compile(code, "<prompt_style.fields.jinja_compiler>", "exec"), namespace)  # names only
    return namespace["make"]


_OWN = re.compile(r"[vKLMN]\d+")
_CODE_NAMES = frozenset(
    {
        "make",
        "SLOW",
        "bound",
        "budgets",
        "CAP",
        "FLOOR",
        "bit_length",
        "function",
        "record",
        "cap",
        "max_output",
        "work",
        "t",
    }
    | {"SCOPE", "DEFAULTS", "JinjaLimits", "LAST", "limits", "last", "INT_BITS"}
    | {"type", "dict", "list", "str", "tuple", "int", "float", "len", "index", "Exception", "size", "out", "f"}
    | {"p", "app", "append", "iters", "enumerate", "bool", "range", "G", "isdigit", "join", "count", "replace"}
    | {"key"}
    | STR_METHODS
    | ARG_METHODS
)
