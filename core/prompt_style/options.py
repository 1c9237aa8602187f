"""Checking the options a task passes to a plugin."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from ._suggest import suggest
from .errors import OptionError

__all__ = ["check_options", "describe_options"]

T = TypeVar("T")


def _accepts(annotation: Any, value: Any) -> bool:
    """Loose runtime check of ``value`` against a simple type annotation."""
    if annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(arg, value) for arg in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if origin is not None:
        annotation = origin
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation in (list, tuple, typing.Sequence):
        return isinstance(value, (list, tuple))
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


_FIELDS: dict[type, tuple[dict[str, Any], tuple[str, ...]]] = {}


def _fields_of(cls: type) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The type hints and init fields of ``cls``, worked out once per class
    (``typing.get_type_hints`` evaluates every annotation: most of a task's load time)."""
    known = _FIELDS.get(cls)
    if known is None:
        known = (typing.get_type_hints(cls), tuple(f.name for f in dataclasses.fields(cls) if f.init))
        if len(_FIELDS) < 1024:  # classes made on the fly are not kept forever
            _FIELDS[cls] = known
    return known


def check_options(cls: type[T], options: Mapping[str, Any], *, what: str, **fixed: Any) -> T:
    """Build the dataclass ``cls`` from task options, with clear errors.

    :param cls: a dataclass whose fields are the accepted options.
    :param options: the options as written in the task.
    :param what: how to name the plugin in messages, e.g. ``"style 'mcq::mmlu'"``.
    :param fixed: values the caller supplies that are not options (settings).
    :returns: the dataclass instance.
    :raises OptionError: for an unknown option (with did-you-mean) or a value of the wrong type.
    """
    hints, init = _fields_of(cls)
    accepted = {name for name in init if name not in fixed}
    for name, value in options.items():
        if name not in accepted:
            raise OptionError(
                f"{what} has no option {name!r}",
                key=str(name),
                hint=suggest(name, accepted, listing="its options are", shown=sorted(accepted)),
            )
        if not _accepts(hints.get(name, Any), value):
            expected = getattr(hints.get(name), "__name__", None) or str(hints.get(name))
            raise OptionError(
                f"{what}: option {name!r} must be {expected}, not {type(value).__name__} {value!r}",
                key=str(name),
            )
    return cls(**fixed, **options)


def describe_options(factory: Any) -> list[dict[str, Any]] | None:
    """The options a plugin's factory declares, for listings (``prompt-style plugins
    --all``): ``[{"name", "type", "default", "help"}]``, or ``None`` when it declares none.

    A factory declares its options with an ``options`` attribute: the dataclass that
    :func:`check_options` builds (its init fields; the help is each field's
    docstring), a mapping ``{name: help}``, or a function of no arguments returning
    either (so that listing imports what it needs only when asked). ``extra_options``
    (a string) says what happens to options it does not list (``hf``: template
    variables).
    """
    try:
        spec = getattr(factory, "options", None)
        if callable(spec) and not isinstance(spec, type):
            spec = spec()
    except Exception:  # a plugin's attribute that raises: nothing declared
        return None
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        return [{"name": str(k), "type": None, "default": None, "help": str(v)} for k, v in spec.items()]
    if not (isinstance(spec, type) and dataclasses.is_dataclass(spec)):
        return None
    docs = _field_docs(spec)
    out = []
    for f in dataclasses.fields(spec):
        if not f.init or f.name.startswith("_"):
            continue
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        else:
            default = None
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        out.append({"name": f.name, "type": kind, "default": default, "help": docs.get(f.name)})
    return out


def _field_docs(cls: type) -> dict[str, str]:
    """The first sentence of each field's docstring (the string under its annotation)."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:]):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            text = " ".join(after.value.value.split())
            docs[node.target.id] = text.split(". ")[0].rstrip(".")
    return docs
