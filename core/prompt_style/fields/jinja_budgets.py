"""The budgets compiled Jinja reads (``jinja_compiler``): the size threshold under which no
budget can stop a render, and the bound of what printing a value costs in the sandbox."""

from __future__ import annotations

from typing import Any

from ..safe import limits as _limits
from ..safe.limits import JinjaLimits, jinja_limits

__all__ = ["budget_threshold", "printed_size_bound"]

_MAX_NESTING = 200
"""The sandbox refuses to print values nested this deep (as ``check_value``)."""


_LAST: list[Any] = [(None, (0, 0))]
"""``[(limits, (threshold, max_output))]`` of the last budgets read: one tuple, read and
replaced at once, so that threads never see a mix of two."""
# What jinja_limits() returns, read the way the sandbox reads it for every render
# (the innermost limits_scope, else the process defaults once read).
_SCOPE_GET = _limits._SCOPE.get
_DEFAULTS_GET = _limits._cache.get


def _budgets() -> tuple[int, int]:
    """``(threshold, max_output)`` of the budgets a render gets now (see the module doc)."""
    limits = _SCOPE_GET() or _DEFAULTS_GET(JinjaLimits) or jinja_limits()
    last = _LAST[0]
    if last[0] is limits:
        return last[1]
    cap = limits.size_threshold()
    made = (cap, limits.max_output)
    _LAST[0] = (limits, made)
    return made


def budget_threshold() -> int:
    """The characters a render may build under the budgets in effect without any budget
    being able to stop it in the sandbox (at most 1 Mi): for fast paths that call str
    methods themselves, and hand larger results to the sandbox."""
    limits = _SCOPE_GET() or _DEFAULTS_GET(JinjaLimits)
    last = _LAST[0]
    if limits is not None and limits is last[0]:
        return last[1][0]
    return _budgets()[0]


def printed_size_bound(value: Any, limit: int) -> int | None:
    """An upper bound of the size the sandbox charges for printing ``value`` (its
    ``check_value`` estimate), or ``None`` when it is above ``limit``, when ``value``
    is not plain data all the way down (``dict``, ``list``, ``tuple``, ``str``,
    ``int``, ``float``, ``bool``, ``None``), or nested too deep to print."""
    kind = type(value)
    if kind is str:
        size = 10 * len(value) + 2
        return size if size <= limit else None
    if kind is int:
        size = value.bit_length() // 3 + 2
        return size if size <= limit else None  # a number's text is charged as any other
    if kind is float or kind is bool or value is None:
        return 32 if 32 <= limit else None
    if kind is not list and kind is not dict and kind is not tuple:
        return None
    if kind is not dict and value:
        # a list of choices: what the walk below adds up, in one step (the types checked
        # in a loop that stops at the first other: quicker than a set of them for a few)
        for item in value:
            if type(item) is not str:
                break
        else:
            size = 2 + 4 * len(value) + 10 * len("".join(value))
            return size if size <= limit else None
    size = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind is str:
            size += 10 * len(item) + 2
        elif kind is int:
            size += item.bit_length() // 3 + 2
        elif kind is float or kind is bool or item is None:
            size += 32
        elif kind is list or kind is tuple or kind is dict:
            if depth >= _MAX_NESTING - 1:
                return None
            size += 2 + 2 * len(item)
            if size > limit:
                return None
            if kind is dict:
                for key, val in item.items():
                    push((key, depth + 1))
                    push((val, depth + 1))
            else:
                for sub in item:
                    push((sub, depth + 1))
        else:
            return None
        if size > limit:
            return None
    return size
