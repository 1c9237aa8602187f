"""The plugin under test: how a test names it, and the managers built around it.

A plugin is named by a module (``prompt_style_numbered``), an object with hook
implementations, or an import path (``"prompt_style_numbered"``,
``"my_package.plugins:PLUGIN"``). Managers are always fresh: one per test.
"""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import prompt_style

__all__ = [
    "PluginUnderTest",
    "plugin_under_test",
    "isolated_manager",
    "installed_manager",
    "module_of",
    "provided_by",
]


@dataclass(frozen=True)
class PluginUnderTest:
    """A plugin as the kit registers it: its name, the object, and how another
    process gets the same object (an import path, or its pickle)."""

    name: str
    object: Any
    spec: str | bytes
    """``"module"`` or ``"module:attribute"`` to import in another process, or the
    object pickled (a plugin object that is not a module)."""


def _import(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for part in filter(None, attribute.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def plugin_under_test(spec: Any, name: str | None = None) -> PluginUnderTest:
    """A :class:`PluginUnderTest` from a module, an object or an import path.

    :param name: the plugin name to register it under; default: the module's last
        dotted part (``prompt_style_numbered``), or the object's class name.
    """
    if isinstance(spec, PluginUnderTest):
        return spec
    if isinstance(spec, str):
        obj = _import(spec)
        default = spec.partition(":")[0].rpartition(".")[2] if isinstance(obj, ModuleType) else spec.rpartition(":")[2]
        return PluginUnderTest(name or default, obj, spec)
    if isinstance(spec, ModuleType):
        return PluginUnderTest(name or spec.__name__.rpartition(".")[2], spec, spec.__name__)
    try:
        blob: str | bytes = pickle.dumps(spec)
    except Exception:  # checked where another process needs it
        blob = b""
    return PluginUnderTest(name or type(spec).__name__, spec, blob)


def module_of(obj: Any) -> str:
    """The module name the manager records for a plugin object (``PluginInfo.module``)."""
    return obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__


def provided_by(provider: prompt_style.Provider, plugin: PluginUnderTest) -> bool:
    """Whether ``provider`` comes from ``plugin`` (registered by hand or through its entry point)."""
    return provider.plugin.name == plugin.name or provider.plugin.module == module_of(plugin.object)


def _pairs(plugins: Iterable[PluginUnderTest]) -> list[tuple[str, Any]]:
    return [(p.name, p.object) for p in plugins]


def isolated_manager(plugin: PluginUnderTest, requires: Sequence[PluginUnderTest] = ()) -> prompt_style.PluginManager:
    """A fresh manager: the built-ins, ``requires`` and the plugin under test, nothing installed."""
    return prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=_pairs([*requires, plugin]))


def installed_manager(plugin: PluginUnderTest, requires: Sequence[PluginUnderTest] = ()) -> prompt_style.PluginManager:
    """A fresh manager with every installed plugin, and the plugin under test (and
    ``requires``) registered by hand when no entry point already brought them in."""
    found = prompt_style.create_plugin_manager(environ={})
    loaded = {info.module for info in found.plugins if info.status == "loaded"}
    missing = [p for p in [*requires, plugin] if module_of(p.object) not in loaded]
    if not missing:
        return found
    return prompt_style.create_plugin_manager(environ={}, plugins=_pairs(missing))
