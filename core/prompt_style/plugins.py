"""Plugin discovery and name resolution.

A :class:`PluginManager` comes from :func:`create_plugin_manager`, never from
import time. Built-in plugins and entry-point plugins are registered by the same
function; an entry point that fails to import or register is recorded as broken
(listed, and warned about) while the others still load.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from . import _entry_points, _first_party, _plugins_dir, hookspecs
from ._lazy import Lazy
from ._markers import ENTRY_POINT_GROUP, PROJECT_NAME
from ._suggest import did_you_mean
from .builtins import BUILTIN_PLUGINS
from .errors import (
    PluginConflictError,
    PluginError,
    PluginLoadWarning,
    PluginNotFoundError,
    PromptStyleError,
)

__all__ = [
    "PluginManager",
    "PluginInfo",
    "Provider",
    "create_plugin_manager",
    "default_plugin_manager",
    "CATALOG_HOOKS",
    "HOOK_NOUNS",
    "install_hint",
    "first_party",
]

CORE_DISTRIBUTION = "prompt-style"

HOOK_NOUNS: Mapping[str, str] = {
    "read_task": "task format",
    "extract_field": "field spec",
    "format_prompt": "style",
    "apply_meta_template": "meta template",
    "retrieve_examples": "retriever",
    "format_instances": "formatter",
    "load_tokenizer": "tokenizer format",
    "declare_axes": "axes declaration",
    "parse_answer": "answer parser",
    "export_task": "exporter",
    "task_examples": "example",
}
CATALOG_HOOKS = (
    "read_task",
    "format_prompt",
    "apply_meta_template",
    "retrieve_examples",
    "format_instances",
    "load_tokenizer",
    "declare_axes",
    "parse_answer",
    "export_task",
    "task_examples",
)


def _usable(hook: str, value: Any) -> bool:
    """Whether a catalog entry has the shape its hook promises: a reader object
    for ``read_task``, a factory for the others."""
    if isinstance(value, Lazy):  # the core's own entries, imported when used
        return True
    if hook == "read_task":
        return callable(getattr(value, "detect", None)) and callable(getattr(value, "read", None))
    if hook == "load_tokenizer":
        return callable(getattr(value, "detect", None)) and callable(getattr(value, "load", None))
    if hook == "export_task":
        return callable(getattr(value, "export", None))
    if hook == "task_examples":
        return isinstance(value, (str, os.PathLike))
    return callable(value)


PUBLISHED: frozenset[str] = frozenset()
"""First-party distributions on the package index (PyPI). None is yet: the others
install from a prompt-style checkout, and :func:`install_hint` says so."""


def _checkout() -> Path | None:
    """The prompt-style checkout this core runs from (``core/prompt_style`` in it), if any."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "core" / "prompt_style").is_dir() and (root / "pyproject.toml").is_file() else None


def install_hint(distribution: str) -> str:
    """How to install ``distribution``, as ``NAME: pip install NAME`` when it is on
    the package index; for a first-party distribution that is not (those of
    ``plugins/`` and ``contrib/``), ``NAME, which is not on the package index:
    pip install PATH``, with its folder in the checkout the core runs from, or
    ``./plugins/...`` to run in a prompt-style checkout."""
    folder = _first_party.FOLDERS.get(distribution) or _PENDING_FOLDERS.get(distribution)
    if folder is None or distribution in PUBLISHED:
        return f"{distribution}: pip install {distribution}"
    checkout = _checkout()
    if checkout is not None and (checkout / folder / "pyproject.toml").is_file():
        command = f"pip install {checkout / folder}"
    else:
        command = f"in a prompt-style checkout, pip install ./{folder}"
    return f"{distribution}, which is not on the package index: {command}"


def first_party(hook: str, name: str) -> str | None:
    """The first-party distribution that provides ``name`` for ``hook``, or ``None``."""
    return _first_party.NAMES.get(hook, {}).get(name) or _PENDING_NAMES.get(hook, {}).get(name)


# First-party distributions not in this tree yet (the harness bridges, under contrib/):
# tools/first_party.py generates their names once their pyprojects are here, and
# tests/test_first_party.py then asks for these entries to go.
_PENDING_NAMES: Mapping[str, Mapping[str, str]] = {}
_PENDING_FOLDERS: Mapping[str, str] = {}


ENV_ALLOW = "PROMPT_STYLE_PLUGINS"
ENV_BLOCK = "PROMPT_STYLE_DISABLE"
ENV_PREFER = "PROMPT_STYLE_PREFER"


@dataclass
class PluginInfo:
    """What the manager knows of one plugin, loaded or not."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    status: str = "loaded"
    """``loaded``, ``broken``, ``blocked`` (PROMPT_STYLE_DISABLE) or ``skipped`` (not in PROMPT_STYLE_PLUGINS)."""
    errors: list[str] = field(default_factory=list)
    path: str | None = None
    """The file of a plugin loaded from a plugins folder (``--plugins-dir``,
    ``PROMPT_STYLE_PLUGINS_DIR``, ``plugins_dir=``); ``None`` for the others."""

    def label(self) -> str:
        if self.path is not None:
            return f"{self.name!r} ({self.path})"
        dist = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"{self.name!r}{dist}"


@dataclass(frozen=True)
class Provider:
    """One plugin's implementation of one name."""

    hook: str
    name: str
    factory: Callable[..., Any]
    plugin: PluginInfo

    def label(self) -> str:
        """``format_prompt 'mcq::mmlu' from plugin 'mmlu' (prompt-style-mmlu 0.1.0)``, for messages."""
        return f"{self.hook} {self.name!r} from plugin {self.plugin.label()}"

    def describe(self) -> dict[str, Any]:
        return {
            "hook": self.hook,
            "name": self.name,
            "plugin": self.plugin.name,
            "distribution": self.plugin.distribution,
            "version": self.plugin.version,
        }


def _env_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [item.strip() for item in value.split(",") if item.strip()]


def _parse_prefer(value: str | None) -> dict[str, str]:
    prefer: dict[str, str] = {}
    for item in _env_list(value) or ():
        name, sep, plugin = item.rpartition("=")
        if not sep or not name or not plugin:
            raise PluginError(
                f"{ENV_PREFER} entry {item!r} is not NAME=PLUGIN",
                hint=f"for example {ENV_PREFER}='mcq::mmlu=prompt-style-mmlu'",
            )
        prefer[name.strip()] = plugin.strip()
    return prefer


class PluginManager:
    """The registered plugins, their catalogs, and name resolution.

    ``hook`` is the underlying pluggy hook relay, for calling hooks directly
    (with keyword arguments only).
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        plugins: list[PluginInfo],
        prefer: Mapping[str, str] | None = None,
    ) -> None:
        self.pm = pm
        self.hook = pm.hook
        self.plugins = plugins
        self.prefer = dict(prefer or {})
        self._catalogs: dict[str, dict[str, list[Provider]]] = {}
        self._infos: dict[int, tuple[object, PluginInfo]] = {}

    # -- lookup -----------------------------------------------------------------

    def info(self, plugin: object) -> PluginInfo:
        # pluggy's get_name looks through every registered plugin: asked for each field
        # of each task loaded, so kept (the plugin itself held, so that its id is never
        # another object's)
        known = self._infos.get(id(plugin))
        if known is not None and known[0] is plugin:
            return known[1]
        name = self.pm.get_name(plugin)
        for info in self.plugins:
            if info.name == name and info.status == "loaded":
                self._infos[id(plugin)] = (plugin, info)
                return info
        raise KeyError(name)  # pragma: no cover - every registered plugin has an info

    def _broken(self, info: PluginInfo, message: str) -> None:
        info.errors.append(message)
        warnings.warn(
            f"prompt-style: plugin {info.label()} is broken: {message}",
            PluginLoadWarning,
            stacklevel=3,
        )

    def catalog(self, hook: str) -> dict[str, list[Provider]]:
        """Every name the plugins give for a catalog hook, with all its providers."""
        if hook in self._catalogs:
            return self._catalogs[hook]
        if hook not in CATALOG_HOOKS:
            raise ValueError(f"{hook!r} is not a catalog hook; catalog hooks: {', '.join(CATALOG_HOOKS)}")
        found: dict[str, list[Provider]] = {}
        for impl in reversed(getattr(self.pm.hook, hook).get_hookimpls()):
            info = self.info(impl.plugin)
            try:
                result = impl.function()
            except Exception as exc:  # a plugin's bug must not stop the others
                self._broken(info, f"{hook}() raised {type(exc).__name__}: {exc}")
                continue
            if result is None:
                continue
            if not isinstance(result, Mapping) or not all(
                isinstance(name, str) and _usable(hook, factory) for name, factory in result.items()
            ):
                what = {
                    "read_task": "readers (with detect and read)",
                    "load_tokenizer": "loaders (with detect and load)",
                    "export_task": "exporters (with export)",
                    "task_examples": "task file paths",
                }.get(hook, "factories")
                self._broken(info, f"{hook}() must return a mapping of names to {what}, not {result!r}")
                continue
            for name, factory in result.items():
                found.setdefault(name, []).append(Provider(hook, name, factory, info))
        self._catalogs[hook] = found
        return found

    def names(self, hook: str) -> list[str]:
        return sorted(self.catalog(hook))

    def conflicts(self) -> list[tuple[str, str, list[Provider]]]:
        """Names claimed by more than one plugin and not settled by ``prefer``."""
        out = []
        for hook in CATALOG_HOOKS:
            for name, providers in sorted(self.catalog(hook).items()):
                if len(providers) > 1 and name not in self.prefer:
                    out.append((hook, name, providers))
        return out

    def resolve(self, hook: str, name: str) -> Provider:
        """The one provider of ``name`` for ``hook``.

        :raises PluginNotFoundError: nobody provides it (with did-you-mean and install hint).
        :raises PluginConflictError: two plugins provide it and ``prefer`` does not choose.
        """
        noun = HOOK_NOUNS[hook]
        catalog = self.catalog(hook)
        providers = catalog.get(name)
        if not providers:
            unavailable = self._unavailable(hook, name)
            if unavailable is not None:
                raise PluginNotFoundError(f"{noun} {name!r} {unavailable[0]}", hint=unavailable[1])
            hint = did_you_mean(name, catalog)
            distribution = first_party(hook, name)
            if distribution is not None:
                hint = f"it comes with {install_hint(distribution)}"
            if hint is None:
                hint = f"known {noun}s: {', '.join(sorted(catalog)) or 'none'}"
            raise PluginNotFoundError(f"unknown {noun} {name!r}", hint=hint)
        if len(providers) == 1:
            return providers[0]
        chosen = self.prefer.get(name)
        if chosen is not None:
            for provider in providers:
                if chosen in (provider.plugin.name, provider.plugin.distribution):
                    return provider
            raise PluginConflictError(
                f"{ENV_PREFER} chooses {chosen!r} for {noun} {name!r}, but it is provided by "
                + " and ".join(p.plugin.label() for p in providers)
            )
        first, second = providers[0].plugin, providers[1].plugin
        raise PluginConflictError(
            f"{noun} {name!r} is provided by two plugins: {first.label()} and {second.label()}",
            hint=f"choose one with {ENV_PREFER}='{name}={second.name}' (or prefer= in Python), "
            f"or block one with {ENV_BLOCK}={second.name}",
        )

    def _unavailable(self, hook: str, name: str) -> tuple[str, str] | None:
        """``(message, hint)`` when ``name`` is unknown because the plugin that provides
        it is blocked (``PROMPT_STYLE_DISABLE``) or skipped (not in ``PROMPT_STYLE_PLUGINS``):
        the core's own plugins are asked for their names (they are trusted code), a
        blocked third-party plugin is never imported (first-party names are known)."""
        for info in self.plugins:
            if info.status not in ("blocked", "skipped"):
                continue
            if info.builtin:
                try:
                    catalog = getattr(importlib.import_module(info.module), hook, None)
                    provides = callable(catalog) and name in (catalog() or {})
                except Exception:  # the core's own module: never expected, never fatal here
                    provides = False
            else:
                provides = first_party(hook, name) in (info.distribution, info.name)
            if not provides:
                continue
            if info.status == "blocked":
                return (
                    f"is provided by plugin {info.label()}, which is blocked",
                    f"{ENV_BLOCK} lists it; remove it from {ENV_BLOCK} to use {name!r}",
                )
            return (
                f"is provided by plugin {info.label()}, which is not loaded",
                f"{ENV_ALLOW} does not list it; add {info.name} to {ENV_ALLOW}",
            )
        return None

    def extractor(self, spec: Any, key: str) -> tuple[Callable[[Any], Any], PluginInfo]:
        """Compile a field spec through :func:`~prompt_style.hookspecs.extract_field`.

        Implementations are asked in pluggy's order (``tryfirst`` first, the
        built-in last) and the first non-``None`` answer wins, as with any
        firstresult hook; the answering plugin is returned with it.
        """
        for impl in reversed(self.pm.hook.extract_field.get_hookimpls()):
            kwargs = {"spec": spec, "key": key}
            try:
                result = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
            except PromptStyleError:
                raise
            except Exception as exc:  # a plugin's bug, reported as such
                raise PluginError(
                    f"extract_field of plugin {self.info(impl.plugin).label()} raised "
                    f"{type(exc).__name__}: {exc} for the spec {spec!r}",
                    key=key,
                ) from exc
            if result is not None:
                if not callable(result):
                    raise PluginError(
                        f"plugin {self.info(impl.plugin).label()} compiled {spec!r} into "
                        f"{type(result).__name__}, which is not callable",
                        key=key,
                    )
                return result, self.info(impl.plugin)
        raise PluginNotFoundError(
            f"no plugin understands the field spec {spec!r}",
            key=key,
            hint=f"is builtin-fields blocked by {ENV_BLOCK}?",
        )

    def provided(self, info: PluginInfo) -> dict[str, list[str]]:
        """The names ``info`` provides, per hook."""
        out: dict[str, list[str]] = {}
        plugin = self.pm.get_plugin(info.name) if info.status == "loaded" else None
        if plugin is None:
            return out
        for hook in HOOK_NOUNS:
            impls = [i for i in getattr(self.pm.hook, hook).get_hookimpls() if i.plugin is plugin]
            if not impls:
                continue
            if hook in CATALOG_HOOKS:
                out[hook] = sorted(
                    name for name, providers in self.catalog(hook).items() if any(p.plugin is info for p in providers)
                )
            else:
                out[hook] = []
        return out

    def describe(self) -> list[dict[str, Any]]:
        """One JSON-ready entry per plugin: identity, status, errors, names per hook."""
        rows = []
        for info in self.plugins:
            provides = self.provided(info)  # builds catalogs, which may record errors
            rows.append(
                {
                    "name": info.name,
                    "distribution": info.distribution,
                    "version": info.version,
                    "module": info.module,
                    "builtin": info.builtin,
                    "path": info.path,
                    "status": "broken" if info.errors and info.status == "loaded" else info.status,
                    "errors": list(info.errors),
                    "hooks": provides,
                }
            )
        return rows


def _register(
    pm: pluggy.PluginManager,
    infos: list[PluginInfo],
    info: PluginInfo,
    load: Callable[[], object],
) -> None:
    infos.append(info)
    for other in infos[:-1]:
        if other.name == info.name and other.status == "loaded":
            info.status = "broken"
            info.errors.append(
                f"the plugin name {info.name!r} is already taken by {other.label()}; rename one entry point"
            )
            break
    else:
        try:
            plugin = load()
        except Exception as exc:
            info.status = "broken"
            info.errors.append(f"import failed: {type(exc).__name__}: {exc}")
        else:
            try:
                pm.register(plugin, name=info.name)
                pm.check_pending()
            except (ValueError, pluggy.PluginValidationError) as exc:
                if pm.is_registered(plugin):
                    pm.unregister(plugin)
                info.status = "broken"
                info.errors.append(f"registration failed: {exc}")
    if info.status == "broken":
        warnings.warn(
            f"prompt-style: plugin {info.label()} was skipped: {info.errors[-1]}",
            PluginLoadWarning,
            stacklevel=3,
        )


def create_plugin_manager(
    *,
    entry_points: bool = True,
    environ: Mapping[str, str] | None = None,
    plugins: Iterable[tuple[str, object]] = (),
    prefer: Mapping[str, str] | None = None,
    plugins_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
) -> PluginManager:
    """A new plugin manager with the built-in plugins and the installed ones.

    :param entry_points: load plugins from the ``prompt_style`` entry-point group.
    :param environ: where to read ``PROMPT_STYLE_PLUGINS`` (comma list: load only
        these entry points, by entry-point or distribution name; empty: none),
        ``PROMPT_STYLE_DISABLE`` (comma list to block, built-ins included) and
        ``PROMPT_STYLE_PREFER`` (``name=plugin`` pairs settling conflicts);
        defaults to ``os.environ``.
    :param plugins: extra ``(name, plugin object)`` pairs to register, as a
        harness would for plugins it ships itself.
    :param prefer: ``{name: plugin or distribution}`` choices for names that
        several plugins provide; merged over ``PROMPT_STYLE_PREFER``.
    :param plugins_dir: one folder or several whose ``*.py`` files are plugins,
        each named after its file (``shout.py`` is the plugin ``shout``), loaded
        after the entry points; then the folders of ``PROMPT_STYLE_PLUGINS_DIR``
        (``os.pathsep``-separated). ``PROMPT_STYLE_DISABLE`` and
        ``PROMPT_STYLE_PLUGINS`` apply to them as to entry points.
    :returns: the manager.
    :raises PluginError: for a plugins folder that does not exist, or a malformed
        ``PROMPT_STYLE_PREFER``.
    """
    env = os.environ if environ is None else environ
    allow = _env_list(env.get(ENV_ALLOW))
    block = set(_env_list(env.get(ENV_BLOCK)) or ())
    chosen = {**_parse_prefer(env.get(ENV_PREFER)), **dict(prefer or {})}
    folders = _plugins_dir.folders(plugins_dir, env)

    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    infos: list[PluginInfo] = []
    installed = _entry_points.Installed()
    # "0+unknown" when running from a source tree that was never installed.
    core_version = installed.version(CORE_DISTRIBUTION) or "0+unknown"

    for name, module in BUILTIN_PLUGINS:
        info = PluginInfo(name, module, CORE_DISTRIBUTION, core_version, builtin=True)
        if name in block:
            info.status = "blocked"
            infos.append(info)
            continue
        _register(pm, infos, info, lambda module=module: importlib.import_module(module))

    if entry_points:
        # Installed already keeps one copy of a distribution visible twice on sys.path.
        for ep in installed.entry_points(ENTRY_POINT_GROUP):
            dist_name, dist_version = ep.distribution, ep.version
            info = PluginInfo(ep.name, ep.module, dist_name, dist_version)
            if ep.name in block or (dist_name and dist_name in block):
                info.status = "blocked"
                infos.append(info)
                continue
            if allow is not None and ep.name not in allow and dist_name not in allow:
                info.status = "skipped"
                infos.append(info)
                continue
            _register(pm, infos, info, ep.load)

    for folder in folders:
        for path in _plugins_dir.plugin_files(folder):
            name = _plugins_dir.plugin_name(path)
            info = PluginInfo(name, _plugins_dir.module_name(name), path=str(path))
            if info.name in block:
                info.status = "blocked"
            elif allow is not None and info.name not in allow:
                info.status = "skipped"
            if info.status != "loaded":
                infos.append(info)
                continue
            _register(pm, infos, info, lambda path=path: _plugins_dir.load(path))

    for name, plugin in plugins:
        module = getattr(plugin, "__name__", type(plugin).__module__)
        _register(pm, infos, PluginInfo(name, module), lambda plugin=plugin: plugin)

    return PluginManager(pm, infos, chosen)


_default_manager: PluginManager | None = None


def default_plugin_manager() -> PluginManager:
    """The process-wide manager, created on first use (never at import time)."""
    global _default_manager
    if _default_manager is None:
        _default_manager = create_plugin_manager()
    return _default_manager
