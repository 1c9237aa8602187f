"""Catalog entries that import their implementation on first use.

A plugin manager calls every catalog hook to list names (``prompt-style plugins``,
conflict checks); a built-in catalog that imported every style, retriever, reader
and meta template it names would make every command pay for all of them. Its
entries are :class:`Lazy` instead: the name is known at once, the module is
imported when the entry is first used (called, or an attribute read).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Lazy", "resolved"]


class Lazy:
    """``Lazy("package.module:name")`` stands for ``name`` of that module;
    ``Lazy("package.module:Name", instance=True)`` for ``Name()``, and
    ``Lazy("package.module:Name", args=(a,))`` for ``Name(a)``.

    Calling it calls the target; reading an attribute reads the target's. Its
    ``repr`` names the target. Catalog checks take it as the shape its hook needs
    (only the core's own catalogs use it, and tests/test_plugins.py checks them).
    """

    __slots__ = ("target", "args", "_value")

    def __init__(self, target: str, *, instance: bool = False, args: tuple[Any, ...] | None = None) -> None:
        self.target = target
        self.args = () if instance and args is None else args
        self._value: Any = None

    def load(self) -> Any:
        """The target, imported (and instantiated) once."""
        value = self._value
        if value is None:
            module, _, name = self.target.partition(":")
            value = getattr(importlib.import_module(module), name)
            if self.args is not None:
                value = value(*self.args)
            self._value = value
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.load(), name)

    def __repr__(self) -> str:
        call = "" if self.args is None else "(" + ", ".join(map(repr, self.args)) + ")"
        return f"<lazy {self.target}{call}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_lazy, (self.target, self.args))


def _lazy(target: str, args: tuple[Any, ...] | None) -> Lazy:
    return Lazy(target, args=args)


def exports(package: str, names: dict[str, str], *, submodules: bool = False) -> tuple[Any, Any]:
    """``__getattr__`` and ``__dir__`` for a package that imports its public
    names on first use (PEP 562): ``names`` maps each name to the submodule that
    defines it (``".base"``). A package's ``__init__`` then costs nothing until a
    name is used, so that importing one of its modules does not import them all.
    With ``submodules``, any other name is tried as a submodule (``package.name``
    reads as it did when the package imported its modules eagerly).
    """
    import sys

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            if submodules:
                try:
                    return importlib.import_module(f".{name}", package)
                except ModuleNotFoundError as exc:
                    if exc.name != f"{package}.{name}":
                        raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups are plain reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__


def resolved(value: Any) -> Any:
    """``value``, or what it stands for when it is a :class:`Lazy` (imported now)."""
    return value.load() if type(value) is Lazy else value
