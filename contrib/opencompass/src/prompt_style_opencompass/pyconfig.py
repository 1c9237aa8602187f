"""Writing OpenCompass's Python configs: plain data as ``dict(...)`` literals.

OpenCompass reads its configs with mmengine's ``Config.fromfile``, which runs
the file; the values here are literals (strings, numbers, booleans, ``None``,
lists, dicts) and class names the file imports (:class:`Name`), written in
the layout of OpenCompass's own configs.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

WIDTH = 100
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Name:
    """A name the config imports (``type=PromptTemplate``), written bare."""

    name: str


class NotLiteral(TypeError):
    """A value a config cannot hold; ``path`` names where it is."""

    def __init__(self, path: str, value: Any) -> None:
        super().__init__(f"{path}: {type(value).__name__} {value!r}")
        self.path = path
        self.value = value


def identifier(text: str) -> str:
    """``text`` as a Python identifier (``mmlu-demo`` -> ``mmlu_demo``)."""
    name = re.sub(r"\W", "_", text) or "task"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"_{name}"
    return name


def check_literal(value: Any, path: str = "") -> None:
    """Raise :class:`NotLiteral` naming the first part of ``value`` a config cannot hold."""
    if isinstance(value, (str, bool, int, float, type(None), Name)):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)):
                raise NotLiteral(path or "(top)", key)
            check_literal(item, f"{path}.{key}" if path else str(key))
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_literal(item, f"{path}.{i}" if path else str(i))
        return
    raise NotLiteral(path or "(top)", value)


def literal(value: Any, indent: int = 0) -> str:
    """Python source for ``value``: one line when it fits, else one item per line."""
    flat = _flat(value)
    if len(flat) + indent <= WIDTH or not isinstance(value, (Mapping, list, tuple)):
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, Mapping):
        if _keywords(value):
            items = [f"{pad}{key}={literal(item, indent + 4)}," for key, item in value.items()]
            return "dict(\n" + "\n".join(items) + "\n" + " " * indent + ")"
        items = [f"{pad}{key!r}: {literal(item, indent + 4)}," for key, item in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, (list, tuple)):
        items = [f"{pad}{literal(item, indent + 4)}," for item in value]
        return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
    return _scalar(value)


def _keywords(value: Mapping[Any, Any]) -> bool:
    return all(isinstance(k, str) and _IDENTIFIER.match(k) and not keyword.iskeyword(k) for k in value)


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        if _keywords(value):
            return "dict(" + ", ".join(f"{key}={_flat(item)}" for key, item in value.items()) + ")"
        return "{" + ", ".join(f"{key!r}: {_flat(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(_flat(item)) for item in value) + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, Name):
        return value.name
    return repr(value)


def assignment(name: str, value: Any) -> str:
    """``name = <value>`` as Python source."""
    return f"{name} = {literal(value, 0)}\n"
