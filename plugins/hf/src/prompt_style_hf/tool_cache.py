"""Tool schemas prepared once per tools list, and their ``tojson`` text computed once.

An evaluation renders thousands of conversations with the same tools, and a
tool-using template prints every schema with ``tojson`` (often indented) at every
render: with 100 tools that is most of the time of a render. So the plain copy
of a tools list the template sees (:func:`~prompt_style_hf.conversation.plain_data`)
is kept, keyed by the list, and :func:`cached_json` remembers the ``tojson`` text
of each container of that copy.

Correct whatever the caller does between renders:

- the copy is reused only while the caller's list still serializes to the same
  bytes (``marshal``: exact types, so ``1``, ``1.0`` and ``True`` differ, keys in
  their order, and every change made in place is seen); otherwise a new copy is made;
- only lists of exact JSON types (``dict`` with ``str`` keys, ``list``, ``str``,
  ``int``, ``float``, ``bool``, ``None``) are kept; anything else is prepared
  afresh at every render, as before;
- the copy belongs to prompt-style: no caller holds it, and templates cannot
  change it (the sandbox is immutable), so the text of its containers cannot go
  stale; they are found by identity, and kept alive while cached.

Budgets are unchanged: ``tojson`` still goes through the sandbox's guard, which
checks it before it runs and charges its result to the render at every call.
"""

from __future__ import annotations

import marshal
import threading
from typing import Any

__all__ = ["cached_tools", "cached_json", "remember_json", "clear", "JSON_TEXTS"]

_LISTS: dict[int, tuple[Any, bytes, list]] = {}
"""``id(caller's list) -> (the list, its serialized bytes, the plain copy)``."""
_OBJECTS: dict[int, tuple[Any, dict]] = {}
"""``id(container of a copy) -> (the container, {tojson arguments: text})``."""
JSON_TEXTS = _OBJECTS
"""The same mapping, for the ``tojson`` filter's fast path (read-only there; see
:func:`cached_json`)."""
_MAX_LISTS = 16
_lock = threading.Lock()


def _serialized(value: Any) -> bytes:
    # Version 4 (short ASCII strings, references to objects seen before) takes less than
    # half the time of version 2, which writes every string in full: this runs at every
    # render, over every tool (about 70 µs for a hundred). Whether an object is written
    # as a reference depends on its reference count being above one, so the same data
    # can give other bytes when that changes: then the copy is made again (correct, only
    # slower). It does not flap: the copy shares the list's strings, so their counts stay
    # above one while it is kept. Different data never gives the same bytes (marshal's
    # bytes load back to the data they were made of).
    return marshal.dumps(value, 4)


def _exact(value: Any) -> bool:
    """Whether ``value`` is made of exact JSON types only (lists, not tuples)."""
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            for key, inner in item.items():
                if type(key) is not str:
                    return False
                push(inner)
        elif kind is list:
            stack.extend(item)
        elif not (kind is str or kind is int or kind is float or kind is bool or item is None):
            return False
    return True


def _containers(value: Any) -> list[Any]:
    out = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            out.append(item)
            stack.extend(item.values())
        elif kind is list:
            out.append(item)
            stack.extend(item)
    return out


def cached_tools(tools: list, plain: Any) -> list | None:
    """The plain copy of ``tools`` (a list of dicts), reused while the list's serialized
    bytes are unchanged; ``None`` when the list holds anything but exact JSON types (then the
    caller prepares it). ``plain`` makes a copy (``plain_data``)."""
    try:
        text = _serialized(tools)
    except (ValueError, RecursionError):  # not marshal's types (or too deep): not kept
        return None
    found = _LISTS.get(id(tools))
    if found is not None and found[0] is tools and found[1] == text:
        return found[2]
    if not _exact(tools):
        return None
    copy = plain(tools)
    with _lock:
        if len(_LISTS) >= _MAX_LISTS:
            _LISTS.clear()
            _OBJECTS.clear()
        _LISTS[id(tools)] = (tools, text, copy)
        for container in _containers(copy):
            _OBJECTS[id(container)] = (container, {})
    return copy


def cached_json(x: Any, key: Any) -> str | None:
    """The ``tojson`` text of ``x`` for arguments ``key``, if ``x`` is a container of a
    cached copy and it was made before."""
    found = _OBJECTS.get(id(x))
    if found is None or found[0] is not x:
        return None
    return found[1].get(key)


def remember_json(x: Any, key: Any, text: str) -> None:
    """Keep the ``tojson`` text of ``x`` (only for a container of a cached copy)."""
    found = _OBJECTS.get(id(x))
    if found is not None and found[0] is x:
        found[1][key] = text


def clear() -> None:
    with _lock:
        _LISTS.clear()
        _OBJECTS.clear()
