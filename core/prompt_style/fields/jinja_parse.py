"""Jinja's parsed tree of a field template or expression, turned into the small
intermediate form ``jinja_compiler`` generates code from (tuples, see below), or
:class:`_NotSimple` for anything it does not compile. Names and keys come validated
by Jinja's own lexer and parser; nothing here runs a template or sees a record."""

from __future__ import annotations

from typing import Any

from ..safe import jinja_env as _jinja
from ..safe.jinja_env import JinjaProfile

STR_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "casefold", "swapcase"})
"""Zero-argument ``str`` methods that compile: each returns a ``str`` of at most a
few times its input, and the sandbox calls them directly and charges the result."""

ARG_METHODS = frozenset({"split", "rsplit", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix"})
"""``str`` methods that compile with one literal text argument (``answer.split('####')``):
the sandbox calls them directly on a text of at most :data:`_CHEAP` characters and
charges the result (a text's length, a list's items)."""

TEXT_FILTERS = {"trim": "strip", "lower": "lower", "upper": "upper", "capitalize": "capitalize", "string": ""}
"""Filters without arguments that compile, with the ``str`` method each is on a text
(``string`` gives the text itself): Jinja's own filters, which the sandbox calls directly
on a text of at most :data:`_CHEAP_FILTER` characters and charges the result's length."""

LOOP_ATTRS = frozenset({"index", "index0", "first", "last", "length", "revindex", "revindex0"})
"""The attributes of a ``{% for %}`` loop's ``loop`` that compile (numbers and flags
Jinja's ``LoopContext`` works out from the position and the length)."""

_LOOP_CAP = 1024  # the most loop iterations compiled code runs in one render (more: the sandbox)
_MAX_LOOPS = 4  # loops nested deeper are the sandbox's
_CHEAP = 4096  # the sandbox's CHEAP (_sandbox/costs.py): a method on a text this short is called as it is
_CHEAP_FILTER = 1 << 16  # the sandbox's _CHEAP_TEXT (_sandbox/filters.py): the same for the filters above
# Names Jinja's code generator gives a meaning of its own in some places.
_SPECIAL_NAMES = frozenset({"self", "super", "loop", "caller", "varargs", "kwargs"})


# -- the intermediate form: a tiny tree of tuples ------------------------------------
# ("name", key) | ("attr", node, key) | ("item", node, key) | ("call", node, method name)
# | ("const", value) | ("list", (node, ...)) | ("getitem", node, key node)
# | ("call1", node, method name, text) | ("add", node, node) | ("filter", node, name)
# | ("int", node) | ("cond", test, node, node) | ("sub", node, node)
# | ("item_of", loop depth) | ("loop", loop depth, attribute)
# | ("concat", (node, ...)) | ("replace", node, old, new, limit) | ("setvar", name) | ("sort", node)
# | ("first", node) | ("last", node) | ("default", ("name", key), value) | ("slice", node, start, stop)
# | ("truncate", node, longest text kept whole)
# tests: ("defined", name, True/False) | ("none", node, True/False)
# template parts: text | node | ("if", condition, parts, parts) | ("for", node, parts, cost)
# | ("set", name, node) (at the top level only)
# conditions: ("test", test) | ("not", condition) | ("and"/"or", condition, condition) | ("truthy", node)


_OWN_FILTERS = frozenset({"int", "length", "sort", "first", "last"})  # each its own node: (name, node)


class _NotSimple(Exception):
    pass


def _extra_args(node: Any) -> bool:
    """Whether a call or filter node has keyword, ``*args`` or ``**kwargs`` arguments
    (none of which compiled code takes)."""
    return bool(node.kwargs) or node.dyn_args is not None or node.dyn_kwargs is not None


def _convert(node: Any, profile: JinjaProfile, scope: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """The intermediate form of a Jinja expression node, or :class:`_NotSimple`. ``scope``:
    the names of the ``{% for %}`` loops the node is in, outermost first."""
    from jinja2 import nodes

    kind = type(node)
    if kind is nodes.Name:
        if node.ctx == "load" and node.name in scope:  # the innermost loop's item of that name
            return ("item_of", len(scope) - 1 - scope[::-1].index(node.name))
        if node.ctx != "load" or node.name in _SPECIAL_NAMES or not node.name.isidentifier():
            raise _NotSimple
        return ("name", node.name)
    if kind is nodes.Getattr:
        if node.ctx != "load" or not isinstance(node.attr, str):
            raise _NotSimple
        if type(node.node) is nodes.Name and node.node.name == "loop" and "loop" not in scope:
            if not scope or node.attr not in LOOP_ATTRS:
                raise _NotSimple  # the loop object itself, or outside a loop: the sandbox's
            return ("loop", len(scope) - 1, node.attr)
        if not profile.record_fields_first and hasattr(dict, node.attr):
            raise _NotSimple  # Jinja's getattr gives the dict method (or refuses it)
        return ("attr", _convert(node.node, profile, scope), node.attr)
    if kind is nodes.Getitem:
        if node.ctx != "load":
            raise _NotSimple
        if type(node.arg) is nodes.Slice:  # text[18:], choices[:-1], sentence[start:end]
            part = node.arg
            if part.step is not None:
                raise _NotSimple
            bounds = tuple(None if b is None else _convert(b, profile, scope) for b in (part.start, part.stop))
            return ("slice", _convert(node.node, profile, scope), *bounds)
        try:
            return ("item", _convert(node.node, profile, scope), _key(node.arg))
        except _NotSimple:
            if type(node.arg) is nodes.Slice:
                raise
            # choices[label], ['no', 'yes'][label]: a key known only per record
            return ("getitem", _convert(node.node, profile, scope), _convert(node.arg, profile, scope))
    if kind is nodes.Add:
        return ("add", _convert(node.left, profile, scope), _convert(node.right, profile, scope))
    if kind is nodes.Sub:
        return ("sub", _convert(node.left, profile, scope), _convert(node.right, profile, scope))
    if kind is nodes.Filter and node.name == "join":
        return _join(node, profile, scope)
    if kind is nodes.Filter and node.name in ("default", "d"):
        return _default(node, profile, scope)
    if kind is nodes.Filter and node.name == "truncate":
        return _truncate(node, profile, scope)
    if kind is nodes.Filter and node.name == "replace":
        if node.node is None or not _jinjas_own(profile, "filters", "replace"):
            raise _NotSimple
        return _replace(node, node.node, _CHEAP_FILTER, profile, scope)
    if kind is nodes.Concat:  # a ~ b: each printed as text, joined (the sandbox's ps-concat)
        return ("concat", tuple(_convert(item, profile, scope) for item in node.nodes))
    if kind is nodes.Filter:
        if (
            node.node is None
            or node.args
            or _extra_args(node)
            or (node.name not in TEXT_FILTERS and node.name not in _OWN_FILTERS)
            or not _jinjas_own(profile, "filters", node.name)
        ):
            raise _NotSimple
        inner = _convert(node.node, profile, scope)
        if node.name in _OWN_FILTERS:
            return (node.name, inner)
        return ("filter", inner, node.name)
    if kind is nodes.Compare:
        return _compare(node, profile, scope)
    if kind is nodes.CondExpr:
        if node.expr2 is None:
            raise _NotSimple  # Jinja's undefined-if-false value
        test = _condition(node.test, profile, scope)
        return ("cond", test, _convert(node.expr1, profile, scope), _convert(node.expr2, profile, scope))
    if kind is nodes.Call:
        target = node.node
        if (
            type(target) is nodes.Getattr
            and target.attr in ARG_METHODS
            and len(node.args) == 1
            and type(node.args[0]) is nodes.Const
            and type(node.args[0].value) is str
            and len(node.args[0].value) <= _CHEAP
            and not _extra_args(node)
        ):
            return ("call1", _convert(target.node, profile, scope), target.attr, node.args[0].value)
        if type(target) is nodes.Getattr and target.attr == "replace":
            return _replace(node, target.node, _CHEAP, profile, scope)
        if type(target) is nodes.Getattr and target.attr == "index" and len(node.args) == 1 and not _extra_args(node):
            # choices.label.index(answerKey): lm-evaluation-harness's ARC, OpenBookQA, MathQA
            return ("index", _convert(target.node, profile, scope), _convert(node.args[0], profile, scope))
        if (
            type(target) is nodes.Name
            and target.name == "range"
            and "range" not in scope
            and len(node.args) == 1
            and not _extra_args(node)
            and _jinja.environment(profile).globals.get("range") is _sandbox_range()
        ):
            # range(choices|length): the sandbox's own range(), unless the record has a field so named
            return ("range", _convert(node.args[0], profile, scope))
        if type(target) is not nodes.Getattr or target.attr not in STR_METHODS or node.args or _extra_args(node):
            raise _NotSimple
        return ("call", _convert(target.node, profile, scope), target.attr)
    if kind is nodes.Neg and type(node.node) is nodes.Const and type(node.node.value) is int:
        return ("const", -node.node.value)  # -1: a negative literal
    if kind is nodes.Const:
        if type(node.value) not in (str, int, float, bool, type(None)):
            raise _NotSimple
        return ("const", node.value)
    if kind is nodes.List:
        return ("list", tuple(_convert(item, profile, scope) for item in node.items))
    raise _NotSimple


def _jinjas_own(profile: JinjaProfile, kind: str, name: str) -> bool:
    """Whether the profile's filter (or test) ``name`` is Jinja's own, as the sandbox
    wraps it: a profile may give a name a function of its own."""
    import jinja2.filters
    import jinja2.tests

    given = getattr(_jinja.environment(profile), kind).get(name)
    own = (jinja2.filters.FILTERS if kind == "filters" else jinja2.tests.TESTS).get(name)
    return own is not None and (given is own or getattr(given, "__wrapped__", None) is own)


def _join(node: Any, profile: JinjaProfile, scope: tuple[str, ...]) -> tuple[Any, ...]:
    """``items|join(', ')``: the sandbox's own ``join``, with one literal text separator."""
    from jinja2 import nodes

    from ..safe._sandbox import filters

    if (
        node.node is None
        or len(node.args) != 1
        or type(node.args[0]) is not nodes.Const
        or type(node.args[0].value) is not str
        or len(node.args[0].value) > _CHEAP
        or _extra_args(node)
        or getattr(_jinja.environment(profile).filters.get("join"), "__wrapped__", None) is not filters._join
    ):
        raise _NotSimple
    return ("join", _convert(node.node, profile, scope), node.args[0].value)


def _default(node: Any, profile: JinjaProfile, scope: tuple[str, ...]) -> tuple[Any, ...]:
    """``name|default(value)`` (Jinja's own, ``d`` too): a record's field, or a constant
    when the record has none (not a path, nor a global's name, which the sandbox finds)."""
    from jinja2 import nodes

    args = node.args
    if (
        node.node is None
        or len(args) > 1
        or (args and (type(args[0]) is not nodes.Const or type(args[0].value) not in _CONSTANTS))
        or _extra_args(node)
        or not _jinjas_own(profile, "filters", node.name)
    ):
        raise _NotSimple
    inner = _convert(node.node, profile, scope)
    if inner[0] != "name" or inner[1] in _jinja.environment(profile).globals:
        raise _NotSimple
    return ("default", inner, args[0].value if args else "")


def _replace(node: Any, inner: Any, limit: int, profile: JinjaProfile, scope: tuple[str, ...]) -> tuple[Any, ...]:
    """``text|replace('a', 'b')`` (Jinja's own filter) and ``text.replace('a', 'b')``: two
    literal texts, no count; ``limit``: the longest text the sandbox replaces in as it is."""
    from jinja2 import nodes

    if (
        len(node.args) != 2
        or any(type(a) is not nodes.Const or type(a.value) is not str or len(a.value) > _CHEAP for a in node.args)
        or _extra_args(node)
    ):
        raise _NotSimple
    return ("replace", _convert(inner, profile, scope), node.args[0].value, node.args[1].value, limit)


def _truncate(node: Any, profile: JinjaProfile, scope: tuple[str, ...]) -> tuple[Any, ...]:
    """``truncate(n)`` (promptsource's rewrite of every ``}}``): a text at most ``n`` plus
    the environment's leeway long is returned as it is by Jinja's filter; a longer one
    is the sandbox's, which cuts it. ``("truncate", node, longest kept whole)``."""
    from jinja2 import nodes

    if node.node is None or len(node.args) != 1 or _extra_args(node) or not _jinjas_own(profile, "filters", "truncate"):
        raise _NotSimple
    length = node.args[0]
    if type(length) is not nodes.Const or type(length.value) is not int or length.value < len("..."):
        raise _NotSimple  # (Jinja asserts the length holds its "...")
    leeway = _jinja.environment(profile).policies.get("truncate.leeway")
    if type(leeway) is not int or leeway < 0:
        raise _NotSimple
    return ("truncate", _convert(node.node, profile, scope), length.value + leeway)


_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "lteq": "<=", "gteq": ">="}


def _compare(node: Any, profile: JinjaProfile, scope: tuple[str, ...]) -> tuple[Any, ...]:
    """``a == 'x'``, ``n > 4``: one comparison with a constant text, number, flag or
    ``none`` on one side, which the sandbox runs as Python compares (with no constant
    side it sizes both first: not compiled)."""

    if len(node.ops) != 1 or node.ops[0].op not in _COMPARISONS:
        raise _NotSimple
    left, right = node.expr, node.ops[0].expr
    if not any(_constant_side(side) for side in (left, right)):
        raise _NotSimple
    return ("compare", _COMPARISONS[node.ops[0].op], _convert(left, profile, scope), _convert(right, profile, scope))


_CONSTANTS = (str, int, float, bool, type(None))


def _constant_side(side: Any) -> bool:
    """A literal text, number, flag or ``none``, or a negative integer (``label != -1``)."""
    from jinja2 import nodes

    if type(side) is nodes.Neg:
        return type(side.node) is nodes.Const and type(side.node.value) is int
    return type(side) is nodes.Const and type(side.value) in _CONSTANTS


def _sandbox_range() -> Any:
    from ..safe._sandbox import filters

    return filters._range


def _test(node: Any, profile: JinjaProfile, scope: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """A condition: ``name is defined`` / ``is undefined``, ``value is none``, or
    ``not`` one of them; else :class:`_NotSimple`."""
    from jinja2 import nodes

    if type(node) is nodes.Not:
        test = _test(node.node, profile, scope)
        return (test[0], test[1], not test[2])
    if type(node) is not nodes.Test or node.args or _extra_args(node) or not _jinjas_own(profile, "tests", node.name):
        raise _NotSimple
    if node.name in ("defined", "undefined"):
        name = _convert(node.node, profile, scope)
        if name[0] != "name" or name[1] in _jinja.environment(profile).globals:
            raise _NotSimple  # a global's name, or a path: the sandbox's to resolve
        return ("defined", name[1], node.name == "defined")
    if node.name == "none":
        return ("none", _convert(node.node, profile, scope), True)
    raise _NotSimple


def _key(arg: Any) -> int | str:
    """A subscript's literal key: an int (``0``, ``-1``) or a str."""
    from jinja2 import nodes

    if type(arg) is nodes.Const and type(arg.value) in (int, str):
        return arg.value
    if type(arg) is nodes.Neg and type(arg.node) is nodes.Const and type(arg.node.value) is int:
        return -arg.node.value
    raise _NotSimple


def _parse(source: str, profile: JinjaProfile, kind: str) -> list[Any]:
    """The parts of a simple template (literal ``str`` or an expression's tuple), or
    the one expression of an expression source (a list of one); :class:`_NotSimple`."""
    if profile.extensions:
        raise _NotSimple  # an extension may change what tags and names mean
    env = _jinja.environment(profile)
    if kind == "expression":
        # what Environment.compile_expression parses: one expression, nothing after it
        from jinja2.parser import Parser

        parser = Parser(env, source, state="variable")
        expr = parser.parse_expression()
        if not parser.stream.eos:
            raise _NotSimple
        return [_convert(expr, profile)]
    return _bind_sets(_items(env.parse(source).body, profile, (), top=True), env.globals)


def _items(body: list[Any], profile: JinjaProfile, scope: tuple[str, ...], top: bool = False) -> list[Any]:
    """The parts of a template's body: literal ``str``, an expression's tuple,
    ``("if", condition, parts, else parts)``, ``("for", sequence, parts, literal
    characters per iteration)`` and, in the template's own body (``top``), ``("set",
    name, value)``; :class:`_NotSimple` for any other statement."""
    from jinja2 import nodes

    parts: list[Any] = []
    for stmt in body:
        kind = type(stmt)
        if kind is nodes.Assign and top:
            target = stmt.target
            if type(target) is not nodes.Name or target.name in _SPECIAL_NAMES or not target.name.isidentifier():
                raise _NotSimple  # a, b = ... or a namespace's attribute
            parts.append(("set", target.name, _convert(stmt.node, profile, scope)))
        elif kind is nodes.Output:
            for child in stmt.nodes:
                if type(child) is nodes.TemplateData:
                    parts.append(child.data)
                else:
                    parts.append(_convert(child, profile, scope))
        elif kind is nodes.If:
            rest = _items(stmt.else_, profile, scope)
            for clause in reversed(stmt.elif_):  # elif: an if in the else part
                rest = [("if", _condition(clause.test, profile, scope), _items(clause.body, profile, scope), rest)]
            parts.append(("if", _condition(stmt.test, profile, scope), _items(stmt.body, profile, scope), rest))
        elif kind is nodes.For:
            target = stmt.target
            if (
                stmt.else_
                or stmt.test is not None
                or stmt.recursive
                or type(target) is not nodes.Name
                or target.name in _SPECIAL_NAMES
                or not target.name.isidentifier()
                or len(scope) >= _MAX_LOOPS
            ):
                raise _NotSimple
            sequence = _convert(stmt.iter, profile, scope)
            inner = _items(stmt.body, profile, (*scope, target.name))
            parts.append(("for", sequence, inner, _literal_cost(stmt.body)))
        else:
            raise _NotSimple
    return parts


def _bind_sets(parts: list[Any], globals_: Any) -> list[Any]:
    """``parts`` with each name a top-level ``{% set %}`` assigned read, after it, as that
    value (``("setvar", name)``). Not simple (the sandbox's): a name set twice, read
    before its ``set`` (the record's field until then), asked ``is defined`` after it, or
    one of the template's globals (``range``)."""
    bound: set[str] = set()
    made: list[Any] = []
    for part in parts:
        if type(part) is tuple and part[0] == "set":
            name = part[1]
            if name in bound or name in globals_ or _reads(made, name):
                raise _NotSimple
            made.append(("set", name, _substitute(part[2], bound)))
            bound.add(name)
        else:
            made.append(_substitute(part, bound) if bound else part)
    return made


def _reads(tree: Any, name: str) -> bool:
    """Whether ``tree`` (parts or a node) reads the name ``name``."""
    if type(tree) is tuple:
        if len(tree) >= 2 and tree[0] in ("name", "defined") and tree[1] == name:
            return True
        return any(_reads(item, name) for item in tree)
    if type(tree) is list:
        return any(_reads(item, name) for item in tree)
    return False


def _substitute(tree: Any, bound: set[str]) -> Any:
    """``tree`` with each read of a name in ``bound`` made ``("setvar", name)``."""
    if type(tree) is tuple:
        if len(tree) == 2 and tree[0] == "name" and tree[1] in bound:
            return ("setvar", tree[1])
        if tree and tree[0] == "defined" and tree[1] in bound:
            raise _NotSimple  # defined by the set, whatever the record holds
        return tuple(_substitute(item, bound) for item in tree)
    if type(tree) is list:
        return [_substitute(item, bound) for item in tree]
    return tree


def _condition(node: Any, profile: JinjaProfile, scope: tuple[str, ...]) -> tuple[Any, ...]:
    """An ``{% if %}``'s test: ``("test", test)`` for :func:`_test`'s, ``("not", condition)``,
    ``("and"|"or", condition, condition)``, or ``("truthy", value)``: the value's truth, as
    Python (and Jinja) take it."""
    from jinja2 import nodes

    try:
        return ("test", _test(node, profile, scope))
    except _NotSimple:
        pass
    if type(node) is nodes.Not:
        return ("not", _condition(node.node, profile, scope))
    if type(node) in (nodes.And, nodes.Or):  # only the truth matters here, and the right side runs only as needed
        kind = "and" if type(node) is nodes.And else "or"
        return (kind, _condition(node.left, profile, scope), _condition(node.right, profile, scope))
    return ("truthy", _convert(node, profile, scope))


def _literal_cost(body: list[Any]) -> int:
    """The literal characters a loop body prints per iteration, nested loops aside: what
    the sandbox charges per iteration (its own function, so that the two never differ)."""
    from ..safe._sandbox.environment import _literal_cost as sandbox_literal_cost

    return sandbox_literal_cost(body)
