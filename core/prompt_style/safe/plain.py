"""Templates read records, they do not act on them: only plain data reaches a template.

A record given through the Python API may hold any object: a ``Path``, an open
file, a ``datetime``, a ``Decimal``, a string subclass with methods of its own.
A template from a stranger could call their methods (``{{ q.read_text() }}``
reads a file, ``{{ q.write_text('x') }}`` writes one) or make Python call them
(``{% for line in q %}`` reads an open file). So a value a template refers to
must be plain data, all the way down:

- ``str``, ``int``, ``float``, ``bool`` and ``None``;
- ``list`` and ``tuple`` of plain data; ``dict`` with plain keys and values.

Some values are converted, without losing anything a template can read
(documented in docs/security.md):

- a subclass of ``str``, ``int`` or ``float`` (``numpy.str_``, ``numpy.float64``,
  an ``IntEnum``, Markup) becomes the plain value it holds (its own methods are
  gone; prompt-style's own ``YamlFloat``, which prints as written, stays);
- another mapping (``OrderedDict``, ``defaultdict``, a read-only view) becomes a
  ``dict``; a subclass of ``list`` or ``tuple`` (a named tuple) a plain one;
- a NumPy scalar or array becomes its Python value (``.item()``, ``.tolist()``).

Anything else is refused with a :class:`~prompt_style.DataError` naming the
field and the type: convert it to plain data before rendering (``str(path)``,
``date.isoformat()``). Checking costs a type test per value referred to, and
walks only the containers a template refers to; records that are plain already
(every JSON file's) are used as they are, without a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import DataError

__all__ = ["plain_value", "plain_fields", "PLAIN_SCALARS"]

PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})
_MAX_DEPTH = 1000


def _yaml_float() -> type | None:
    # prompt-style's float that prints as written: plain (a float whose text is its own).
    import sys

    module = sys.modules.get("prompt_style.safe.yaml_loader")
    return getattr(module, "YamlFloat", None) if module is not None else None


def _refuse(path: str, value: Any) -> DataError:
    kind = type(value)
    name = kind.__name__ if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}.{kind.__qualname__}"
    return DataError(
        f"field {path!r} holds a {name}, which templates cannot see: only text, numbers, booleans, null, "
        "lists, tuples and mappings of these reach a template",
        hint="convert it to plain data first (str(value), value.isoformat(), ...)",
    )


def _is_plain(value: Any, path: str) -> bool:
    """Whether ``value`` is plain data all the way down (no copy needed): ``True``, or
    ``False`` when something in it must be converted; raises for what cannot be."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    seen: set[int] = set()
    plain = True
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind in PLAIN_SCALARS:
            continue
        if kind is list or kind is tuple or kind is dict:
            if depth >= _MAX_DEPTH:
                raise DataError(f"field {path!r} nests more than {_MAX_DEPTH} levels deep")
            if id(item) in seen:  # shared (or recursive) containers are walked once
                continue
            seen.add(id(item))
            if kind is dict:
                for key, sub in item.items():
                    if type(key) not in PLAIN_SCALARS:
                        plain = False
                        _convertible(key, path)
                    push((sub, depth + 1))
            else:
                for sub in item:
                    push((sub, depth + 1))
            continue
        plain = False
        if not _convertible(item, path):
            continue  # a container to convert: converted (and checked) by _convert
    return plain


def _convertible(value: Any, path: str) -> bool:
    """Raise unless ``value`` (not plain) converts to plain data; ``True`` for a scalar."""
    if isinstance(value, (str, int, float)):
        return True
    if isinstance(value, (Mapping, list, tuple)):
        return False
    if _numpy(value):
        return False
    raise _refuse(path, value)


def _numpy(value: Any) -> bool:
    return type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None))


def _convert(value: Any, path: str, depth: int = 0) -> Any:
    """``value`` as plain data (see the module doc), or :class:`DataError`."""
    kind = type(value)
    if kind in PLAIN_SCALARS:
        return value
    if depth >= _MAX_DEPTH:
        raise DataError(f"field {path!r} nests more than {_MAX_DEPTH} levels deep")
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__add__("", value)  # the text, as a plain str (not the subclass's __str__)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        yaml_float = _yaml_float()
        return value if yaml_float is not None and kind is yaml_float else float.__float__(value)
    if isinstance(value, Mapping):
        return {_convert(k, path, depth + 1): _convert(v, f"{path}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    if isinstance(value, tuple):
        return tuple(_convert(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
    if _numpy(value):
        return _convert(value.tolist(), path, depth + 1)
    raise _refuse(path, value)


def plain_value(value: Any, field: str) -> Any:
    """``value`` as plain data: itself when it is plain already (no copy), else a plain copy.

    :param field: how messages name it (the record's field).
    :raises DataError: for a value that is not plain data and does not convert to it.
    """
    kind = type(value)
    if kind in PLAIN_SCALARS:
        return value
    if kind is list or kind is tuple:
        if set(map(type, value)) <= PLAIN_SCALARS:  # a list of texts or numbers: one pass in C
            return value
    elif kind is dict:
        if set(map(type, value.values())) <= PLAIN_SCALARS and set(map(type, value)) <= PLAIN_SCALARS:
            return value
    if _is_plain(value, field):
        return value
    return _convert(value, field)


def plain_fields(record: Mapping[str, Any], names: Any) -> Mapping[str, Any]:
    """``record`` with the fields ``names`` (those a template refers to) as plain data:
    the record itself when they are plain already, else a copy with them converted.

    :raises DataError: naming the first field that does not convert.
    """
    changed: dict[str, Any] | None = None
    for name in names:
        try:
            value = record[name]
        except (KeyError, TypeError):
            continue
        if type(value) in PLAIN_SCALARS:
            continue
        plain = plain_value(value, name)
        if plain is not value:
            if changed is None:
                changed = {}
            changed[name] = plain
    if changed is None:
        return record
    return {**record, **changed}
