"""Task code of lm-evaluation-harness task files: ``!function module.name``.

A ``!function`` tag is read as a :class:`FunctionRef`, a marker that runs
nothing. Only a task loaded with ``trust_code`` imports the module — from a
``module.py`` next to the YAML file that names it, as lm-evaluation-harness
does, else an importable module — after seeding the global random generators
the way lm-evaluation-harness's ``simple_evaluate`` does.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import types

__all__ = ["FunctionRef", "function_tag", "TAGS", "import_function", "load_function", "seed_like_lm_eval", "CodeError"]

TASK_CODE_PREFIX = "_prompt_style_task_code_"
"""Module names task code is imported under (one fresh module per load)."""


class CodeError(Exception):
    """Task code could not be imported (translated into a TaskFileError by the reader)."""


class FunctionRef:
    """``!function utils.process_docs`` as written: the dotted name, and where."""

    __slots__ = ("name", "file", "line")

    def __init__(self, name: str, file: Path | None = None, line: int | None = None) -> None:
        self.name = name
        self.file = file
        self.line = line

    def __repr__(self) -> str:
        return f"!function {self.name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionRef) and (self.name, self.file) == (other.name, other.file)

    def __hash__(self) -> int:
        return hash((self.name, self.file))

    @property
    def module_file(self) -> Path | None:
        """The ``module.py`` next to the YAML file lm-evaluation-harness would import."""
        module = self.name.rpartition(".")[0]
        if not module or self.file is None:
            return None
        return (self.file.parent / f"{module.replace('.', '/')}.py").resolve()


def function_tag(loader: Any, node: Any) -> FunctionRef:
    """The YAML constructor of ``!function``: a marker, never an import."""
    return FunctionRef(str(loader.construct_scalar(node)), line=node.start_mark.line + 1)


TAGS = {"!function": function_tag}
"""The YAML tags of lm-evaluation-harness task files (markers only: nothing runs)."""


def seed_like_lm_eval() -> None:
    """Seed the global generators as ``lm_eval.simple_evaluate`` does before it loads
    tasks: ``random.seed(0)`` and, when numpy is installed, ``numpy.random.seed(1234)``.
    numpy not imported yet is seeded when it is first imported (:class:`_SeedNumpy`):
    nothing can draw from its generator before then, and importing it here would cost
    every process that loads task code a tenth of a second."""
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(1234)
        return
    if not any(type(finder) is _SeedNumpy for finder in sys.meta_path):
        sys.meta_path.insert(0, _SeedNumpy())


class _SeedNumpy:
    """An import hook, used once: numpy seeded as lm-evaluation-harness seeds it
    (``numpy.random.seed(1234)``) as soon as it is first imported.

    It stays until numpy is executed, not only looked up: libraries ask
    ``importlib.util.find_spec("numpy")`` to learn whether it is installed, and the
    spec they get is never imported."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "numpy":
            return None
        for finder in list(sys.meta_path):  # the other finders, as the import system asks them
            find = None if finder is self else getattr(finder, "find_spec", None)
            spec = None if find is None else find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = getattr(spec.loader, "exec_module", None)
        if run is None:
            return spec
        hook = self

        def exec_module(module: Any) -> None:
            if hook in sys.meta_path:
                sys.meta_path.remove(hook)
            run(module)
            module.random.seed(1234)

        spec.loader.exec_module = exec_module  # (this spec's own loader)
        return spec


def _datasets_module(doc: str, origin: str) -> types.ModuleType:
    """An empty ``datasets`` module of prompt-style's, with a spec, as every imported
    module has: libraries the task code imports look datasets up with
    ``importlib.util.find_spec`` (transformers does), which raises on a module whose
    ``__spec__`` is ``None``."""
    import importlib.machinery
    import types

    module = types.ModuleType("datasets")
    module.__doc__ = doc
    module.__spec__ = importlib.machinery.ModuleSpec("datasets", None, origin=origin)
    module.__prompt_style_stand_in__ = True  # type: ignore[attr-defined]
    return module


def _datasets_stand_in() -> types.ModuleType:
    """A ``datasets`` module for task code that imports it only to name types
    (``def process_docs(dataset: datasets.Dataset)``), when datasets is not installed."""
    from .docs import Docs

    module = _datasets_module(
        "prompt-style's stand-in for the datasets package (not installed)", "prompt-style stand-in"
    )
    module.Dataset = Docs  # type: ignore[attr-defined]
    module.DatasetDict = dict  # type: ignore[attr-defined]
    return module


class _Deferred:
    """A name of the installed datasets package, for task code that imports it: looked up
    there (the package imported then, as lm-evaluation-harness would have imported it)
    only when used beyond naming it: called, an attribute read, an ``isinstance`` or
    ``issubclass`` check, a base class. Task code imports ``datasets`` mostly to name
    ``datasets.Dataset`` in annotations, and importing the package costs about 0.8 s of
    CPU: each ``render`` of such a task would pay it."""

    __slots__ = ("_load", "_name")

    def __init__(self, load: Any, name: str) -> None:
        self._load = load
        self._name = name

    def _target(self) -> Any:
        return getattr(self._load(), self._name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            # what typing and the import system probe (__typing_subst__, __origin__, ...):
            # a plain name's answer, never an import for it
            if name in ("__name__", "__qualname__"):
                return self._name
            raise AttributeError(name)
        return getattr(self._target(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __instancecheck__(self, value: Any) -> bool:
        return isinstance(value, self._target())

    def __subclasscheck__(self, cls: Any) -> bool:
        return issubclass(cls, self._target())

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[Any, ...]:
        return (self._target(),)  # (a class of the task's code deriving from it)

    def __or__(self, other: Any) -> Any:  # (an annotation such as datasets.Dataset | None)
        import typing

        return typing.Union[self, other]  # noqa: UP007

    def __ror__(self, other: Any) -> Any:
        import typing

        return typing.Union[other, self]  # noqa: UP007

    def __repr__(self) -> str:
        return f"<datasets.{self._name}: imported when first used>"


def _deferred_datasets(spec: Any) -> tuple[types.ModuleType, Any]:
    """``(module, finder)``: a ``datasets`` module for task code, when the package is
    installed (``spec``, its spec) but not imported, and the import hook that goes with
    it while the task code runs. Every name the module gives is :class:`_Deferred`; a
    module attribute such as ``__version__`` imports the package, which then takes its own
    place in ``sys.modules``. Its ``__path__`` is the package's (``from datasets import
    Dataset`` asks for it), and the hook imports the package before any of its submodules
    (``import datasets.features``), then the submodule, as the import system would."""
    import importlib
    import importlib.util

    module = _datasets_module(
        "prompt-style's deferred datasets package: imported when first used", "prompt-style deferred import"
    )
    module.__path__ = list(spec.submodule_search_locations or ())
    real: list[types.ModuleType] = []

    def load() -> types.ModuleType:
        if not real:
            if sys.modules.get("datasets") is module:
                del sys.modules["datasets"]
            real.append(importlib.import_module("datasets"))
        return real[0]

    def attribute(name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            return getattr(load(), name)
        return _Deferred(load, name)

    module.__getattr__ = attribute  # type: ignore[method-assign]

    class Submodules:
        """The import hook: a submodule of datasets imported after the package itself."""

        def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
            if not name.startswith("datasets.") or self not in sys.meta_path:
                return None
            sys.meta_path.remove(self)  # (the package's own imports go the usual way)
            load()
            return importlib.util.spec_from_loader(name, _Imported(importlib.import_module(name)))

    return module, Submodules()


class _Imported:
    """A loader of a module already imported (the deferred package's submodule)."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _load_module(path: Path) -> types.ModuleType:
    import importlib.util
    import uuid

    # A fresh module per load: module-level state (GPQA's ``rng = random.Random(42)``)
    # starts over, so loading a task twice gives the same prompts.
    name = f"{TASK_CODE_PREFIX}{uuid.uuid4().hex}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CodeError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    stand_in = finder = None
    if "datasets" not in sys.modules:
        installed = importlib.util.find_spec("datasets")
        if installed is None:
            stand_in = _datasets_stand_in()
        else:  # (imported when the task code uses it: most name its types only)
            stand_in, finder = _deferred_datasets(installed)
            sys.meta_path.insert(0, finder)
        sys.modules["datasets"] = stand_in
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    directory = str(path.parent)
    sys.path.insert(0, directory)  # sibling imports (``from utils_x import ...``)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise CodeError(f"importing {path} raised {type(exc).__name__}: {exc}") from exc
    finally:
        if sys.path and sys.path[0] == directory:
            del sys.path[0]
        if stand_in is not None and sys.modules.get("datasets") is stand_in:
            del sys.modules["datasets"]
        if finder is not None and finder in sys.meta_path:
            sys.meta_path.remove(finder)
    return module


def import_function(ref: FunctionRef, cache: dict[Path, types.ModuleType]) -> Any:
    """The callable ``ref`` names, imported as lm-evaluation-harness does.

    :param cache: modules already imported for this task (one import per file per load).
    :raises CodeError: saying what failed.
    """
    import importlib

    module_name, _, function_name = ref.name.rpartition(".")
    if not module_name:
        raise CodeError(f"{ref.name!r} names no module: write !function module.function")
    path = ref.module_file
    if path is not None and path.is_file():
        module = cache.get(path)
        if module is None:
            module = cache[path] = _load_module(path)
        where = path.name
    else:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            beside = f" and there is no {path.name} next to {ref.file.name}" if path and ref.file else ""
            raise CodeError(f"cannot import module {module_name!r}{beside} ({type(exc).__name__}: {exc})") from exc
        where = module_name
    try:
        function = getattr(module, function_name)
    except AttributeError:
        raise CodeError(f"{where} has no {function_name!r}") from None
    if not callable(function):
        raise CodeError(f"{where}: {function_name!r} is a {type(function).__name__}, not a function")
    return function


_RELOADED: dict[str, types.ModuleType] = {}


def load_function(path: str, qualname: str) -> Any:
    """The function ``qualname`` of the task code in ``path``, imported once per
    process (for renderers unpickled in worker processes)."""
    module = _RELOADED.get(path)
    if module is None:
        module = _RELOADED[path] = _load_module(Path(path))
    value: Any = module
    for part in qualname.split("."):
        value = getattr(value, part)
    return value
