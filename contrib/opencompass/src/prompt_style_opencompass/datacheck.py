"""Will OpenCompass see the records prompt-style sees? (plain and retriever routes)

On those routes OpenCompass reads the data itself, with Hugging Face
``datasets``' JSON reader (``HFDataset``), and fills its templates with
``str()`` of each value, field after field, in the record's order
(``opencompass.utils.prompt.safe_format``). That gives prompt-style's bytes when
every split's records

* have the same fields (the reader gives a missing field as ``None``, which a
  template then shows as ``None`` where prompt-style leaves ``{field}``);
* keep one JSON type per field, nested ones included (the reader unifies a
  column: ``1`` beside ``1.5`` becomes ``1.0``, a mapping gains the other
  records' keys as ``None``, and ``1`` beside ``"a"`` stops it);
* hold no ``{field}`` naming one of their fields (or ``idx``/``subdivision``,
  which ``BaseDataset`` adds): OpenCompass would fill it again, where
  prompt-style inserts values once;
* hold integers that fit in 64 bits.

:func:`data_problem` checks one split and says what breaks, naming the record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

ADDED_COLUMNS = ("idx", "subdivision")
"""Columns OpenCompass's ``BaseDataset`` adds to every record."""
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_INT64 = (-(2**63), 2**63 - 1)


def _signature(value: Any) -> Any:
    """The JSON type of ``value`` as the Arrow reader unifies it; ``None`` for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise _Unstable("an integer beyond 64 bits")
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, Mapping):
        return ("dict", tuple(sorted((str(k), _signature(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        element: Any = None
        for item in value:
            element = _unify(element, _signature(item))
        return ("list", element)
    raise _Unstable(f"a {type(value).__name__} value")


class _Unstable(Exception):
    pass


def _unify(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None or a == b:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "list":
        return ("list", _unify(a[1], b[1]))
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "dict":
        left, right = dict(a[1]), dict(b[1])
        if set(left) != set(right):
            raise _Unstable("mappings with different keys")
        return ("dict", tuple(sorted((k, _unify(left[k], right[k])) for k in left)))
    raise _Unstable(f"{_describe(a)} and {_describe(b)} values")


def _describe(signature: Any) -> str:
    if isinstance(signature, tuple):
        return "list" if signature[0] == "list" else "mapping"
    return {"str": "text", "int": "integer", "float": "float", "bool": "boolean"}.get(signature, str(signature))


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def data_problem(records: Iterable[Mapping[str, Any]], split: str) -> str | None:
    """Why OpenCompass's JSON reader would not hand its templates these records as
    prompt-style reads them, or ``None`` when it would."""
    fields: list[str] | None = None
    names: set[str] = set()
    signatures: dict[str, Any] = {}
    for index, record in enumerate(records):
        where = f"split {split!r} record {index}"
        keys = list(record)
        if fields is None:
            fields = keys
            names = {*map(str, keys), *ADDED_COLUMNS}
        elif set(keys) != set(fields):
            missing = sorted(set(fields) - set(keys))
            extra = sorted(set(keys) - set(fields))
            what = f"lacks {', '.join(missing)}" if missing else f"adds {', '.join(extra)}"
            return (
                f"{where} {what} (record 0 has {', '.join(fields)}): "
                "OpenCompass's reader fills missing fields with None"
            )
        for key, value in record.items():
            try:
                signatures[key] = _unify(signatures.get(key), _signature(value))
            except _Unstable as exc:
                return f"{where}: field {key!r} holds {exc}: OpenCompass's JSON reader would change or refuse them"
            for text in _strings(value):
                if "{" in text:
                    for name in _PLACEHOLDER.findall(text):
                        if name in names:
                            return (
                                f"{where}: field {key!r} holds {{{name}}}, which OpenCompass would fill with the "
                                f"record's {name!r} (it fills templates field after field)"
                            )
    return None
