"""``json.dumps(x, indent=...)`` of plain JSON data, byte for byte, several times faster.

Tool-using chat templates print every tool schema with ``tojson(indent=4)``
(Llama 3.1, Hermes, Qwen, Command R...): with 100 tools that is most of a render,
in transformers and in ``hf`` alike. The standard library encodes indented JSON
in pure Python (its C encoder takes no ``indent``), one generator step per
token. Here a container whose values are all scalars (most of a JSON schema:
``{"type": "string", "description": "..."}``) is encoded by the C encoder in one
call, with the item separator carrying the line break and indentation of its
level, and other containers are joined level by level.

Only plain data takes this path: ``dict`` with ``str`` keys, ``list``, ``tuple``,
``str`` (and its subclasses, which ``json`` encodes as strings), ``int``,
``float``, ``bool`` and ``None``. Anything else — another key type, an object
``json`` cannot encode, an integer too long to print, nesting too deep — is
handed to ``json.dumps`` itself, which gives its own output or error.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]

_SCALARS = frozenset({str, int, float, bool, type(None)})
_INFINITY = float("inf")


def _c_encoder(string: Any, key_separator: str, item_separator: str, sort_keys: bool) -> Any:
    """The standard library's C encoder of a container of scalars, made once (what
    ``JSONEncoder.iterencode`` makes at every call; no circularity check: scalars hold
    nothing); without it, the Python one."""
    make = json.encoder.c_make_encoder
    if make is None:  # pragma: no cover - CPython has it
        encoder = json.JSONEncoder(
            ensure_ascii=string is json.encoder.encode_basestring_ascii,
            sort_keys=sort_keys,
            separators=(item_separator, key_separator),
        )
        return encoder.encode
    run = make(None, None, string, None, key_separator, item_separator, sort_keys, False, True)
    join = "".join
    return lambda o: join(run(o, 0))


class _NotPlain(Exception):
    """Something only ``json.dumps`` itself encodes exactly as it does."""


def dumps(
    x: Any, *, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    """``json.dumps(x, ensure_ascii=..., indent=..., separators=..., sort_keys=...)``."""
    if indent is None or not (type(indent) is int or type(indent) is str):
        # No indent: json.dumps uses its C encoder already. An odd indent: json's own rules.
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    try:
        encoder = _Encoder(ensure_ascii, indent, separators, sort_keys)
        return encoder.encode(x, 0)
    except Exception:  # noqa: BLE001 - json.dumps gives the exact output or error
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


_C_ENCODERS: dict[tuple, Any] = {}


class _Encoder:
    __slots__ = ("indent", "item_separator", "key_separator", "sort_keys", "ensure_ascii", "string", "flat")

    def __init__(self, ensure_ascii: bool, indent: int | str, separators: Any, sort_keys: bool) -> None:
        self.indent = " " * indent if type(indent) is int else indent
        if separators is None:
            item_separator, key_separator = ",", ": "
        else:
            item_separator, key_separator = separators
        if type(item_separator) is not str or type(key_separator) is not str:
            raise _NotPlain
        self.item_separator = item_separator
        self.key_separator = key_separator
        self.sort_keys = bool(sort_keys)
        self.ensure_ascii = bool(ensure_ascii)
        self.string = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
        self.flat: dict[int, Any] = {}

    def _flat_encoder(self, level: int) -> Any:
        """The C encoder of a container of scalars at ``level``: its items separated by
        the item separator, a line break and the indentation of level + 1."""
        encode = self.flat.get(level)
        if encode is None:
            key = (self.ensure_ascii, self.indent, self.item_separator, self.key_separator, self.sort_keys, level)
            encode = _C_ENCODERS.get(key)
            if encode is None:
                if len(_C_ENCODERS) > 256:
                    _C_ENCODERS.clear()
                encode = _C_ENCODERS[key] = _c_encoder(
                    self.string,
                    self.key_separator,
                    self.item_separator + "\n" + self.indent * (level + 1),
                    self.sort_keys,
                )
            self.flat[level] = encode
        return encode

    def scalar(self, o: Any) -> str:
        if isinstance(o, str):
            return self.string(o)
        kind = type(o)
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if kind is int:
            return int.__repr__(o)
        if kind is float:
            if o != o:
                return "NaN"
            if o == _INFINITY:
                return "Infinity"
            if o == -_INFINITY:
                return "-Infinity"
            return float.__repr__(o)
        raise _NotPlain

    def encode(self, o: Any, level: int) -> str:
        kind = type(o)
        if kind is dict:
            if not o:
                return "{}"
            flat = True
            for key, value in o.items():
                if type(key) is not str:
                    raise _NotPlain  # json's key conversions (and its errors)
                if type(value) not in _SCALARS:
                    flat = False
                    if not isinstance(value, (dict, list, tuple, str)):
                        raise _NotPlain
            inner = "\n" + self.indent * (level + 1)
            if flat:
                text = self._flat_encoder(level)(o)
                return "{" + inner + text[1:-1] + "\n" + self.indent * level + "}"
            items = sorted(o.items()) if self.sort_keys else o.items()
            string, key_separator, encode = self.string, self.key_separator, self.encode
            parts = [
                string(key)
                + key_separator
                + (encode(value, level + 1) if type(value) not in _SCALARS else self.scalar(value))
                for key, value in items
            ]
            return "{" + inner + (self.item_separator + inner).join(parts) + "\n" + self.indent * level + "}"
        if kind is list or kind is tuple:
            if not o:
                return "[]"
            inner = "\n" + self.indent * (level + 1)
            for value in o:
                if type(value) not in _SCALARS:
                    break
            else:
                text = self._flat_encoder(level)(o)
                return "[" + inner + text[1:-1] + "\n" + self.indent * level + "]"
            encode, scalar = self.encode, self.scalar
            parts = [encode(value, level + 1) if type(value) not in _SCALARS else scalar(value) for value in o]
            return "[" + inner + (self.item_separator + inner).join(parts) + "\n" + self.indent * level + "]"
        return self.scalar(o)
