"""The hardened environment classes, and the compile-time rewrite that routes loops and ``~`` through the budget."""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.runtime import Macro as _Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

from .budget import _ACTIVE, _stop, _too_long, active_budget
from .costs import CHEAP, PYTHON, charge_cost, division
from .filters import _STR_READERS, _concat, _guard_filter, _join, _loop, _range, _sum, call_method, compare_values
from .values import GuardedFormatter, _check_binop, _describe, finalize

LOOP_FILTER = "ps-loop"
CONCAT_FILTER = "ps-concat"
COMPARE_FILTER = "ps-compare"


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


def _constant(node: nodes.Node) -> bool:
    """A constant, or a literal list or tuple of constants."""
    if isinstance(node, nodes.Const):
        return True
    return isinstance(node, (nodes.List, nodes.Tuple)) and all(isinstance(item, nodes.Const) for item in node.items)


def rewrite(tree: nodes.Template) -> nodes.Template:
    """Wrap every ``{% for %}`` iterable in ``ps-loop``, turn every ``~`` into ``ps-concat``,
    and every comparison with no constant side (``a == b``, ``x in items``) into
    ``ps-compare`` of the two operands (sized before it runs)."""
    from jinja2.visitor import NodeTransformer

    class Rewriter(NodeTransformer):
        def visit_For(self, node: nodes.For) -> nodes.Node:
            self.generic_visit(node)
            cost = _literal_cost(node.body)
            node.iter = nodes.Filter(
                node.iter, LOOP_FILTER, [nodes.Const(cost)], [], None, None, lineno=node.iter.lineno
            )
            return node

        def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
            self.generic_visit(node)
            if len(node.ops) != 1:
                return node  # a chain (a < b < c): rare, and evaluated lazily by Python
            operand = node.ops[0]
            if operand.op in ("in", "notin"):
                if _constant(operand.expr):
                    return node  # in a literal list: bounded by the source
            elif _constant(node.expr) or _constant(operand.expr):
                return node  # with a constant: at most its size
            return nodes.Filter(
                nodes.Tuple([node.expr, operand.expr], "load", lineno=node.lineno),
                COMPARE_FILTER,
                [nodes.Const(operand.op)],
                [],
                None,
                None,
                lineno=node.lineno,
            )

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


_SMALL = 1 << 64  # a divisor below this costs a division linear in the dividend


def _divisibleby(value: Any, num: Any) -> bool:
    """Jinja's ``divisibleby`` test, sized as ``%`` is."""
    if isinstance(value, int) and isinstance(num, int):
        division("test 'divisibleby'", value, num, _ACTIVE.get() or active_budget())
    return value % num == 0


class HardenedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox with budgets, leak checks and no compile-time evaluation."""

    intercepted_binops = frozenset({"*", "**", "%", "+", "//"})

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
        self.filters[COMPARE_FILTER] = compare_values
        self.tests["divisibleby"] = _divisibleby

    def guard_filters(self) -> None:
        """Wrap every filter (after the profile added its own)."""
        for name, func in list(self.filters.items()):
            if name in (LOOP_FILTER, CONCAT_FILTER, COMPARE_FILTER) or getattr(func, "ps_guarded", False):
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
            if kind is int and (operator == "+" or (operator == "%" and -_SMALL < right < _SMALL)):
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
            if len(f_self) > CHEAP:  # the formatter is Python: a few steps per field
                budget = _ACTIVE.get() or active_budget()
                charge_cost(f"str.{value.__name__}", len(f_self) + f_self.count("{") * PYTHON * 4, budget)
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
        if isinstance(__obj, _Macro):
            # The template's own macro (or caller): counted against max_macro_calls.
            budget.calls += 1
            if budget.calls > budget.call_limit:
                budget.call()  # raises
        if budget.due:
            budget.tick()
        if type(__obj) is types.BuiltinMethodType and __obj.__name__ in _STR_READERS and type(__obj.__self__) is str:
            text = __obj.__self__
            if len(text) <= CHEAP and (
                not args or (len(args) == 1 and (type(args[0]) is not str or len(args[0]) <= CHEAP))
            ):
                # question.strip() on a short text: what Context.call does for a method that
                # takes no context (no budget can stop it but the work it builds).
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
        result = call_method(__context, __obj, args, kwargs, budget)
        n = len(result) if isinstance(result, (str, bytes)) else 1
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
