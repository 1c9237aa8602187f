"""Plugins from folders of ``*.py`` files, without packaging (as datasette's ``--plugins-dir``).

Each file is one plugin, named after the file (``shout.py`` is the plugin
``shout``), imported as ``prompt_style._dir_plugins.<name>``. That package's
``__path__`` holds the folders ``PROMPT_STYLE_PLUGINS_DIR`` names (and any
folder a manager was given with ``plugins_dir=``). So the objects a
plugin builds pickle by reference like any module's, and a worker process that
inherits the environment finds the plugin's module again when it unpickles a
renderer: the standard import machinery looks for ``<name>.py`` in those folders.

Files whose names start with ``_`` or ``.`` are not plugins (helpers, editor
files); nor is anything that is not a ``*.py`` file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType

from . import _dir_plugins
from .errors import PluginError

__all__ = ["ENV_DIRS", "folders", "plugin_files", "load", "plugin_name", "module_name", "check_folder"]

ENV_DIRS = "PROMPT_STYLE_PLUGINS_DIR"

_HINT = f"--plugins-dir and {ENV_DIRS} name folders of *.py plugin files ({os.pathsep}-separated in the variable)"


def _env_folders(environ: Mapping[str, str]) -> list[str]:
    value = environ.get(ENV_DIRS) or ""
    return [item for item in value.split(os.pathsep) if item.strip()]


def folders(
    given: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None, environ: Mapping[str, str]
) -> list[Path]:
    """The plugin folders: those ``given`` (one path or several), then those of
    ``PROMPT_STYLE_PLUGINS_DIR`` in ``environ``, each once, made absolute.

    :raises PluginError: for a folder that does not exist or is not a folder.
    """
    if given is None:
        listed: list[str | os.PathLike[str]] = []
    elif isinstance(given, (str, os.PathLike)):
        listed = [given]
    else:
        listed = list(given)
    out: list[Path] = []
    for item, origin in [(p, "plugins_dir") for p in listed] + [(p, ENV_DIRS) for p in _env_folders(environ)]:
        path = check_folder(item, origin)
        if path not in out:
            out.append(path)
    for path in out:
        if str(path) not in _dir_plugins.__path__:
            _dir_plugins.__path__.append(str(path))
    return out


def check_folder(item: str | os.PathLike[str], origin: str) -> Path:
    """``item`` made absolute.

    :raises PluginError: (with ``key=origin``) when it does not exist or is not a folder.
    """
    path = Path(os.path.abspath(os.fsdecode(item)))
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a folder"
        raise PluginError(f"plugins folder {str(path)!r} {what}", key=origin, hint=_HINT)
    return path


def plugin_files(folder: Path) -> list[Path]:
    """The plugin files of ``folder``, by name."""
    return sorted(
        child
        for child in folder.iterdir()
        if child.suffix == ".py" and not child.name.startswith(("_", ".")) and child.is_file()
    )


def plugin_name(path: Path) -> str:
    """The plugin (and module) name of a plugin file: its name without ``.py``."""
    return path.stem


def module_name(name: str) -> str:
    """The module a plugin file of that name is imported as."""
    return f"{_dir_plugins.__name__}.{name}"


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def load(path: Path) -> ModuleType:
    """Import the plugin file ``path`` as ``prompt_style._dir_plugins.<name>``
    (again only when it is another file, or the file changed since).

    :raises Exception: whatever importing the file raises (the caller reports the
        plugin as broken); ``ValueError`` for a file name that cannot be a module name.
    """
    stem = plugin_name(path)
    if "." in stem or not stem.strip():
        raise ValueError(f"{path.name!r} cannot be a module name; rename the file (e.g. {stem.replace('.', '_')}.py)")
    name = module_name(stem)
    import importlib.util  # only when a folder holds plugins

    stamp = _stamp(path)
    current = sys.modules.get(name)
    if (
        current is not None
        and getattr(current, "__file__", None) == str(path)
        and getattr(current, "__prompt_style_stamp__", None) == stamp
    ):
        return current
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    module.__prompt_style_stamp__ = stamp  # type: ignore[attr-defined]
    sys.modules[name] = module  # before running it: dataclasses and pickle look it up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if current is not None:
            sys.modules[name] = current
        else:
            sys.modules.pop(name, None)
        raise
    setattr(_dir_plugins, stem, module)
    return module
