"""Running OpenCompass's own ``.py`` config files (dataset and model configs).

OpenCompass configs are Python: they import OpenCompass classes
(``from opencompass.openicl.icl_prompt_template import PromptTemplate``) and
other configs (``with read_base(): from .mmlu_gen import mmlu_datasets``).
:func:`exec_config` runs such a file — only when the user trusts it
(``--trust-code``) — with those imports answered here, without OpenCompass
installed:

* every ``opencompass.*`` name is a marker whose ``__opencompass_name__`` is
  the class or function name (``type=PromptTemplate`` reads ``PromptTemplate``);
* ``mmengine.config.read_base`` is a no-op context manager, and imports of other
  configs — relative ones, or ``opencompass.configs.*`` found in a copy of
  OpenCompass's ``configs`` folder above the file or else in the installed
  ``opencompass`` package — run those files the same way;
* other imports (``os``, ``copy``) are the real modules.

It sits in ``safe/``, beneath both of its users, as the one gate every ``.py``
config passes: OpenCompass dataset configs (``formats/opencompass.py``) and model
configs holding a meta template (``meta/files.py``).
"""

from __future__ import annotations

import builtins
import contextlib
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TaskFileError

__all__ = ["exec_config", "OpenCompassName", "refuse_untrusted"]

_STUBBED_ROOTS = ("opencompass", "mmengine")


def refuse_untrusted(path: Path, what: str = "OpenCompass config") -> TaskFileError:
    """The error for a ``.py`` config loaded without ``trust_code``."""
    return TaskFileError(
        f"{path.name} is an {what} written in Python; running it needs --trust-code "
        "(load_task(..., trust_code=True) in Python)",
        file=str(path),
    )


class OpenCompassName:
    """What an ``opencompass.*`` import gives: a named marker."""

    def __init__(self, module: str, name: str) -> None:
        self.__opencompass_name__ = name
        self.__module_name__ = module

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self.__opencompass_name__

    def __repr__(self) -> str:
        return f"<opencompass {self.__module_name__}.{self.__opencompass_name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TaskFileError(
            f"the config calls {self.__module_name__}.{self.__opencompass_name__}() while loading; "
            "prompt-style reads configs without OpenCompass and cannot run OpenCompass code",
            hint="write the value the call would give into the config",
        )

    def __getattr__(self, name: str) -> "OpenCompassName":
        if name.startswith("__"):
            raise AttributeError(name)
        return OpenCompassName(f"{self.__module_name__}.{self.__opencompass_name__}", name)


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self.__name__ in ("mmengine", "mmengine.config") and name == "read_base":
            return _read_base
        return OpenCompassName(self.__name__, name)


def _read_base() -> contextlib.AbstractContextManager:
    return contextlib.nullcontext()


class _Runner:
    """Runs config files, caching each file's namespace (configs import each other)."""

    def __init__(self) -> None:
        self.done: dict[Path, types.ModuleType] = {}
        self.running: list[Path] = []

    def run(self, path: Path) -> types.ModuleType:
        path = path.resolve()
        if path in self.done:
            return self.done[path]
        if path in self.running:
            chain = " -> ".join(p.name for p in [*self.running, path])
            raise TaskFileError(f"configs import each other in a circle: {chain}", file=str(path))
        try:
            source = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise TaskFileError("config file not found", file=str(path)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TaskFileError(f"cannot read the config: {exc}", file=str(path)) from None
        module = types.ModuleType(f"_prompt_style_oc_config_{len(self.done)}")
        namespace = module.__dict__
        namespace["__file__"] = str(path)
        namespace["__builtins__"] = self._builtins(path)
        self.running.append(path)
        try:
            code = compile(source, str(path), "exec")
            exec(code, namespace)
        except TaskFileError as exc:
            raise exc.locate(file=str(path), line=_line_in(exc, str(path))) from None
        except SyntaxError as exc:
            raise TaskFileError(f"not valid Python: {exc.msg}", file=str(path), line=exc.lineno) from None
        except Exception as exc:
            line = _line_in(exc, str(path))
            raise TaskFileError(
                f"running the config raised {type(exc).__name__}: {exc}", file=str(path), line=line
            ) from exc
        finally:
            self.running.pop()
        self.done[path] = module
        return module

    def _builtins(self, path: Path) -> dict[str, Any]:
        real_import = builtins.__import__
        runner = self

        def _import(name: str, globals=None, locals=None, fromlist=(), level: int = 0):  # noqa: A002
            if level > 0:
                return runner._relative(path, name, fromlist, level)
            root = name.split(".")[0]
            if root in _STUBBED_ROOTS:
                if name.startswith("opencompass.configs"):
                    return runner._configs_package(path, name, fromlist)
                return _stub(name, fromlist)
            try:
                return real_import(name, globals, locals, fromlist, level)
            except ModuleNotFoundError:
                # A library the config names but prompt-style does not have (`from datasets
                # import parallel`): its names are markers too, an error only if called.
                return _stub(name, fromlist)

        table = dict(vars(builtins))
        table["__import__"] = _import
        return table

    def _relative(self, path: Path, name: str, fromlist: Any, level: int) -> types.ModuleType:
        base = path.parent
        for _ in range(level - 1):
            base = base.parent
        return self._config_module(base, name, fromlist, f"{'.' * level}{name}", path)

    def _configs_package(self, path: Path, name: str, fromlist: Any) -> types.ModuleType:
        """``opencompass.configs.X``: from a copy of OpenCompass's ``configs`` tree the config
        sits in (a ``configs`` folder above it that holds ``X``; any other folder of that
        name is the user's own), else from the installed ``opencompass`` package's."""
        rest = name[len("opencompass.configs") :].lstrip(".")
        for parent in path.parents:
            if parent.name == "configs" and _holds(parent, rest, fromlist):
                return self._config_module(parent, rest, fromlist, name, path)
        installed = installed_configs()
        if installed is not None and _holds(installed, rest, fromlist):
            return self._config_module(installed, rest, fromlist, name, path)
        where = (
            f"the installed opencompass's configs ({installed}) have no {rest or 'configs'}"
            if installed
            else ("opencompass is not installed")
        )
        raise TaskFileError(
            f"cannot import {name}: the config is not inside a copy of OpenCompass's configs folder that holds "
            f"it, and {where}",
            file=str(path),
            hint="install OpenCompass's configs with `pip install opencompass==0.5.4 --no-deps` (its config "
            "files are all prompt-style reads), keep the config inside a copy of OpenCompass's configs/ tree, "
            "or import it relatively",
        )

    def _config_module(self, base: Path, name: str, fromlist: Any, shown: str, importer: Path) -> types.ModuleType:
        target = base.joinpath(*name.split(".")) if name else base
        if target.with_suffix(".py").is_file():
            return self.run(target.with_suffix(".py"))
        if target.is_dir():
            # `from . import a_config` or `from .pkg import name`: a folder of configs.
            package = types.ModuleType(shown)
            for item in fromlist or ():
                candidate = target / f"{item}.py"
                if candidate.is_file():
                    setattr(package, item, self.run(candidate))
            return package
        raise TaskFileError(
            f"cannot import {shown}: there is no {target.with_suffix('.py')}",
            file=str(importer),
        )


def _holds(base: Path, name: str, fromlist: Any) -> bool:
    """Whether the configs folder ``base`` holds the module ``name`` (dotted, relative to it)."""
    target = base.joinpath(*name.split(".")) if name else base
    if target.with_suffix(".py").is_file():
        return True
    if not target.is_dir():
        return False
    # `from opencompass.configs.datasets.mmlu import mmlu_gen`: the folder must hold what is imported.
    return all((target / f"{item}.py").is_file() or (target / item).is_dir() for item in fromlist or ())


def installed_configs() -> Path | None:
    """The ``configs`` folder of the installed ``opencompass`` package (found, not imported), or ``None``."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("opencompass")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or ()) if spec is not None else ():
        folder = Path(location) / "configs"
        if folder.is_dir():
            return folder
    return None


def _stub(name: str, fromlist: Any) -> types.ModuleType:
    module = _StubModule(name)
    if not fromlist:
        # `import opencompass.x as y` binds the top package; attribute access then walks down.
        top = _StubModule(name.split(".")[0])
        return top
    return module


def _line_in(exc: BaseException, filename: str) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def exec_config(path: str | Path) -> Mapping[str, Any]:
    """Run an OpenCompass ``.py`` config and return its variables (names starting
    with ``_`` and modules left out, except ``_meta_template``-style values).

    Call this only when the user trusts the file (``trust_code``).

    :raises TaskFileError: naming the file and line of what failed.
    """
    module = _Runner().run(Path(path))
    return {
        key: value
        for key, value in vars(module).items()
        if not key.startswith("__") and not isinstance(value, types.ModuleType)
    }
