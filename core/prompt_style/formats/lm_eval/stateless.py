"""Whether task code computes a row from the row alone, as far as its code shows.

A ``process_docs`` step (``dataset.map(fn)``, ``dataset.filter(fn)``) can run on each
record as the split is rendered rather than on the whole split when the task loads
only if that gives the same rows: if ``fn`` keeps no state from one call to the next
and draws from no generator. lm-evaluation-harness's own task code has both kinds:
HellaSwag's ``_process_doc`` computes from the row (with ``re`` and a helper), GPQA's
shuffles each row's choices with ``random.shuffle`` or with a module-level
``random.Random(42)``. Streaming the second kind would change its draws whenever the
split is read twice or anything draws in between.

:func:`stateless` reads the function's code: every global it loads, every value its
closure and defaults hold, transitively through the Python functions it calls, must
be inert (texts, numbers, tuples of them, compiled patterns, modules that compute
without state such as :mod:`re` and :mod:`math`, pure builtins), and it may not
assign to a global or to a variable of an enclosing scope. Lists, dicts and sets of
inert values (a module's ``LETTER_INDICES``, an answer mapping) count as inert when
the code does not change them by name (no mutating method called on them, no item
assigned or deleted near where they are loaded): a best-effort reading, enough for
the tables task code reads. Anything it cannot tell (an object, a class, a module
such as :mod:`random`, a method bound to an object) counts as state: such a step
runs whole, when the task loads, as before.
"""

from __future__ import annotations

import builtins
import dis
import functools
import re
import types
from typing import Any

__all__ = ["inert", "stateless"]

_PURE_MODULES = frozenset(
    {"re", "string", "math", "cmath", "unicodedata", "json", "textwrap", "html", "operator", "ast", "keyword"}
)
"""Modules whose functions compute from their arguments (no generator, no cache that
changes a result)."""

_IMPURE_BUILTINS = frozenset(
    {
        "open",
        "input",
        "exec",
        "eval",
        "compile",
        "globals",
        "locals",
        "vars",
        "setattr",
        "delattr",
        "__import__",
        "breakpoint",
        "help",
    }
)
"""Builtins that reach state beyond their arguments, or run code."""

_INERT = (str, bytes, int, float, complex, bool, type(None), range, re.Pattern)

_CONTAINERS = (list, dict, set)
_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "popitem",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "sort",
        "reverse",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "__setitem__",
        "__delitem__",
        "__iadd__",
        "__ior__",
    }
)
_ITEM_WRITES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE", "DELETE_SLICE"})
_NEAR = 12  # instructions after a table is loaded in which an item write may be its (`t[k] += 1`: 9)
_MAX_ITEMS = 100_000
_WRITES_GLOBAL = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})
_WRITES_CELL = frozenset({"STORE_DEREF", "DELETE_DEREF"})
_DEPTH = 8


def stateless(function: Any) -> bool:
    """Whether ``function`` (a Python function or lambda, or a ``functools.partial`` of
    one) depends on nothing but its arguments, as far as its code shows."""
    return _function(function, set(), 0)


def inert(value: Any) -> bool:
    """Whether ``value`` holds no state a call could change or draw from (see the module)."""
    return _inert(value, set(), 0)


def _function(function: Any, seen: set[int], depth: int) -> bool:
    if id(function) in seen:
        return True  # (recursion: judged by the first visit)
    if depth > _DEPTH:
        return False
    seen.add(id(function))
    if isinstance(function, types.BuiltinFunctionType):
        return getattr(function, "__self__", None) is builtins and function.__name__ not in _IMPURE_BUILTINS
    if isinstance(function, functools.partial):
        return (
            _function(function.func, seen, depth + 1)
            and all(_inert(a, seen, depth + 1) for a in function.args)
            and all(_inert(v, seen, depth + 1) for v in function.keywords.values())
        )
    if type(function) is not types.FunctionType:
        return False  # a bound method, a callable object, a class: may hold state
    if function.__module__ in _PURE_MODULES:
        return True  # (re.sub imported by name: its own caches change no result)
    code = function.__code__
    cells = dict(zip(code.co_freevars, function.__closure__ or ()))
    held = list(function.__defaults__ or ()) + list((function.__kwdefaults__ or {}).values())
    if not all(_inert(value, seen, depth + 1) for value in held):
        return False
    tables: set[str] = set()  # names of the lists, dicts and sets it reads
    for name, cell in cells.items():
        if not _filled(cell):
            return False  # set later by the enclosing function: anything
        value = cell.cell_contents
        if not _inert(value, seen, depth + 1):
            return False
        if isinstance(value, _CONTAINERS):
            tables.add(name)
    namespace = function.__globals__
    own_cells = set(code.co_freevars)  # the enclosing scope's variables: set once, shared by every call
    for block in _blocks(code):
        instructions = list(dis.get_instructions(block))
        for at, instruction in enumerate(instructions):
            name = instruction.opname
            if name in _WRITES_GLOBAL:
                return False
            if name == "IMPORT_NAME" and str(instruction.argval).partition(".")[0] not in _PURE_MODULES:
                return False  # (``import random`` inside the function)
            if name in _WRITES_CELL and instruction.argval in own_cells:
                return False
            if name == "LOAD_GLOBAL":
                found = _global(namespace, instruction.argval)
                if found is _MISSING or not _inert(found, seen, depth + 1):
                    return False
                if isinstance(found, _CONTAINERS):
                    tables.add(instruction.argval)
            if name in ("LOAD_GLOBAL", "LOAD_DEREF") and instruction.argval in tables and _changed(instructions, at):
                return False
    return True


def _changed(instructions: list[dis.Instruction], at: int) -> bool:
    """Whether the table loaded at ``at`` looks changed there: a mutating method taken
    from it, or an item written soon after (``table[key] = value``)."""
    following = instructions[at + 1 : at + 1 + _NEAR]
    if following and following[0].opname in ("LOAD_METHOD", "LOAD_ATTR") and following[0].argval in _MUTATORS:
        return True
    return any(i.opname in _ITEM_WRITES for i in following)


_MISSING: Any = object()


def _global(namespace: dict[str, Any], name: str) -> Any:
    if name in namespace:
        return namespace[name]
    return getattr(builtins, name, _MISSING)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:  # not yet assigned (a name the enclosing function sets later)
        return False
    return True


def _blocks(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and the code of every function, lambda and comprehension inside it."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_blocks(const))
    return found


def _inert(value: Any, seen: set[int], depth: int) -> bool:
    if isinstance(value, _INERT):
        return True
    kind = type(value)
    if kind is tuple or kind is frozenset or kind is list or kind is set:
        return len(value) <= _MAX_ITEMS and all(_inert(item, seen, depth) for item in value)
    if kind is dict:
        return len(value) <= _MAX_ITEMS and all(
            _inert(k, seen, depth) and _inert(v, seen, depth) for k, v in value.items()
        )
    if isinstance(value, types.ModuleType):
        return value.__name__ in _PURE_MODULES
    if isinstance(value, type):
        return value.__module__ == "builtins" and value.__name__ not in _IMPURE_BUILTINS
    if callable(value):
        return _function(value, seen, depth)
    return False
