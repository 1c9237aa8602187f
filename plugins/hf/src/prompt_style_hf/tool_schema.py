"""Python functions as tool schemas, as transformers' ``get_json_schema`` makes them.

A tool passed from Python as a function (type hints plus a Google-style
docstring) becomes ``{"type": "function", "function": {"name", "description",
"parameters", ["return"]}}``, exactly as transformers 5.x builds it, so that a
template renders the same tool text.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from prompt_style import ChatTemplateError

__all__ = ["get_json_schema"]

_DESCRIPTION = re.compile(r"^(.*?)[\n\s]*(Args:|Returns:|Raises:|\Z)", re.DOTALL)
_ARGS = re.compile(r"\n\s*Args:\n(.*?)[\n\s]*(Returns:|Raises:|\Z)", re.DOTALL)
_ARG_SPLIT = re.compile(
    r"""
(?:^|\n)  # the start of the block, or a new line
([ \t]*)(\w+):\s*  # indentation and argument name
(.*?)\s*  # the description, over several lines, without trailing space
(?=\n(?!\1[ \t])[ \t]*\w+:|\Z)  # up to the next "name:" not indented deeper, or the end
""",
    re.DOTALL | re.VERBOSE,
)
_RETURNS = re.compile(r"\n\s*Returns:\n\s*(.*?)[\n\s]*(Raises:|\Z)", re.DOTALL)

_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
_BASIC = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    list: {"type": "array"},
    tuple: {"type": "array"},
    dict: {"type": "object"},
    Any: {},
}


class _HintError(Exception):
    pass


def _enum_schema(values: list) -> dict:
    kinds = list(dict.fromkeys(_SCALARS[type(v)] for v in values))
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}


def _hint_schema(hint: Any) -> dict:
    origin, args = get_origin(hint), get_args(hint)
    if origin is None and isinstance(hint, type) and issubclass(hint, Enum):
        values = [member.value for member in hint]
        if not values:
            raise _HintError(f"The Enum {hint.__name__} has no members, so no value could ever match it.")
        if any(type(v) not in _SCALARS for v in values):
            raise _HintError(f"The Enum {hint.__name__} has member values that cannot be written as JSON scalars.")
        return _enum_schema(values)
    if origin is None:
        basic = _BASIC.get(hint)
        if basic is None:
            raise _HintError(f"Couldn't convert the type hint {hint!r} to a JSON schema")
        return dict(basic)
    if origin is Union or origin is types.UnionType:
        subtypes = [_hint_schema(t) for t in args if t is not type(None)]
        if len(subtypes) == 1:
            out = subtypes[0]
        elif all(s.keys() == {"type"} and isinstance(s["type"], str) for s in subtypes):
            names = sorted({s["type"] for s in subtypes})
            out = {"type": names[0] if len(names) == 1 else names}
        else:
            out = {"anyOf": subtypes}
        if type(None) in args:
            out["nullable"] = True
        return out
    if origin is Literal and args:
        if any(type(a) not in _SCALARS for a in args):
            raise _HintError("Only the valid python literals can be listed in typing.Literal.")
        return _enum_schema(list(args))
    if origin is list:
        return {"type": "array", "items": _hint_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 1 or ... in args:
            raise _HintError(f"The type hint {str(hint).replace('typing.', '')} cannot be converted")
        return {"type": "array", "prefixItems": [_hint_schema(t) for t in args]}
    if origin is dict:
        out = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = _hint_schema(args[1])
        return out
    raise _HintError(f"Couldn't parse the type hint {hint!r}")


def _parameters(func: Any) -> dict:
    hints = get_type_hints(func)
    signature = inspect.signature(func)
    name = getattr(func, "__name__", "operation")
    first = next(iter(signature.parameters), None)
    implicit = (
        first
        if first in {"self", "cls"} and signature.parameters[first].annotation == inspect.Parameter.empty
        else None
    )
    required = []
    for param_name, param in signature.parameters.items():
        if param_name == implicit:
            continue
        if param.annotation == inspect.Parameter.empty:
            raise _HintError(f"Argument {param.name} is missing a type hint in function {name}")
        if param.default == inspect.Parameter.empty:
            required.append(param_name)
    properties = {}
    for param_name, hint in hints.items():
        if param_name == implicit:
            continue
        if param_name == "return":
            try:
                properties[param_name] = _hint_schema(hint)
            except _HintError:
                pass  # the model never writes the return value
        else:
            properties[param_name] = _hint_schema(hint)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def get_json_schema(func: Any) -> dict:
    """The tool schema of a Python function.

    :raises ChatTemplateError: when a type hint or an argument description is missing.
    """
    name = getattr(func, "__name__", "operation")
    doc = inspect.getdoc(func)
    if not doc:
        raise ChatTemplateError(f"Cannot generate JSON schema for {name} because it has no docstring!", key="tools")
    doc = doc.strip()
    match = _DESCRIPTION.search(doc)
    description = match.group(1).strip() if match else None
    match = _ARGS.search(doc)
    block = match.group(1) if match else None
    match = _RETURNS.search(doc)
    returns = match.group(1).strip() if match else None
    if block is not None:
        block = "\n".join(line for line in block.split("\n") if line.strip())
        arg_docs = {m[1]: re.sub(r"\s*\n+\s*", " ", m[2].strip()) for m in _ARG_SPLIT.findall(block)}
    else:
        arg_docs = {}
    try:
        schema = _parameters(func)
    except _HintError as exc:
        raise ChatTemplateError(f"tool {name}: {exc}", key="tools") from None
    returned = schema["properties"].pop("return", None)
    if returned is not None and returns is not None:
        returned["description"] = returns
    for arg, prop in schema["properties"].items():
        if arg not in arg_docs:
            raise ChatTemplateError(
                f"Cannot generate JSON schema for {name} because the docstring has no description "
                f"for the argument '{arg}'",
                key="tools",
            )
        text = arg_docs[arg]
        choices = re.search(r"\(choices:\s*(.*?)\)\s*$", text, flags=re.IGNORECASE)
        if choices:
            prop["enum"] = [c.strip() if isinstance(c, str) else c for c in json.loads(choices.group(1))]
            text = choices.string[: choices.start()].strip()
        prop["description"] = text
    out: dict[str, Any] = {"name": name, "description": description, "parameters": schema}
    if returned is not None:
        out["return"] = returned
    return {"type": "function", "function": out}
