"""The part of JSON Schema that task schemas use, checked without the ``jsonschema`` package.

SciRIFF validates a task's ``metadata`` with ``jsonschema.validate`` against
``task_schema.yaml``. That file uses ``type``, ``enum``, ``required``,
``properties``, ``additionalProperties`` and ``items``; this module checks
exactly those keywords (plus ``minItems``/``maxItems``/``uniqueItems`` and
``anyOf`` for user schemas) and reports *every* violation, not just the first.
A keyword it does not know is reported once as unsupported rather than ignored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..._suggest import did_you_mean, suggest

__all__ = ["Violation", "validate", "SUPPORTED", "NO_VALUE"]

NO_VALUE: Any = object()
"""A violation about a key that is absent has no value."""

SUPPORTED = frozenset(
    {
        "type",
        "enum",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "anyOf",
        "description",
        "title",
        "$schema",
        "$id",
        "default",
        "examples",
    }
)

_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "object": (Mapping,),
    "array": (list, tuple),
    "boolean": (bool,),
    "null": (type(None),),
}


@dataclass(frozen=True)
class Violation:
    """One place where a value breaks the schema."""

    path: tuple[str | int, ...]
    """Where, below the validated value (``("domains", 1)``)."""
    message: str
    value: Any = NO_VALUE
    allowed: tuple[Any, ...] | None = None
    hint: str | None = None


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(name, ()))


def _type_name(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, name):
            return name
    return type(value).__name__


def _equal(a: Any, b: Any) -> bool:
    # JSON Schema: true is not 1.
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def validate(value: Any, schema: Mapping[str, Any], path: tuple[str | int, ...] = ()) -> Iterator[Violation]:
    """Every violation of ``schema`` by ``value``."""
    for keyword in schema:
        if keyword not in SUPPORTED:
            yield Violation(path, f"the schema uses {keyword!r}, which prompt-style does not check")
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, name) for name in names):
            yield Violation(path, f"must be {' or '.join(_article(n) for n in names)}, not {_type_name(value)}", value)
            return
    if "enum" in schema:
        allowed = tuple(schema["enum"])
        if not any(_equal(value, option) for option in allowed):
            hint = did_you_mean(value, [str(a) for a in allowed]) if isinstance(value, str) else None
            yield Violation(path, "is not an allowed value", value, allowed, hint)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if not any(not list(validate(value, option, path)) for option in options):
            yield Violation(path, "matches none of the allowed forms", value)
    if isinstance(value, Mapping):
        yield from _object(value, schema, path)
    if isinstance(value, (list, tuple)):
        yield from _array(value, schema, path)


def _article(name: str) -> str:
    return {"array": "a list", "object": "a mapping", "integer": "an integer", "null": "null"}.get(name, f"a {name}")


def _object(value: Mapping[str, Any], schema: Mapping[str, Any], path: tuple[str | int, ...]) -> Iterator[Violation]:
    properties = schema.get("properties", {}) or {}
    for name in schema.get("required", ()) or ():
        if name not in value:
            yield Violation(path + (name,), "is required but missing")
    additional = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            yield from validate(item, properties[name], path + (name,))
        elif additional is False:
            hint = suggest(name, properties, listing="known keys")
            yield Violation(path + (str(name),), "is not a known key", hint=hint)
        elif isinstance(additional, Mapping):
            yield from validate(item, additional, path + (str(name),))


def _array(value: list[Any] | tuple[Any, ...], schema: Mapping[str, Any], path: tuple[str | int, ...]):
    if "minItems" in schema and len(value) < schema["minItems"]:
        yield Violation(path, f"needs at least {schema['minItems']} item(s), has {len(value)}", value)
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield Violation(path, f"takes at most {schema['maxItems']} item(s), has {len(value)}", value)
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for item in value:
            if any(_equal(item, other) for other in seen):
                yield Violation(path, f"lists {item!r} twice", value)
                break
            seen.append(item)
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            yield from validate(item, items, path + (index,))
