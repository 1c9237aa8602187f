"""huggingface_hub 1.x and later dropped ``HfApi.list_models(model_name=...)``,
which lighteval 0.13.0 calls while importing its task modules. This module,
imported at start-up by the ``.pth`` file ``python -m
prompt_style_lighteval.workarounds`` installs, teaches ``list_models`` the old
keyword (as ``search=``) when ``huggingface_hub.hf_api`` is first imported. It
imports nothing else, so start-up costs one list lookup.
"""

from __future__ import annotations

import functools
import sys
from importlib.abc import MetaPathFinder
from typing import Any

TARGET = "huggingface_hub.hf_api"


def patch(module: Any) -> None:
    """Accept ``model_name=`` in ``HfApi.list_models`` (once)."""
    api = getattr(module, "HfApi", None)
    original = getattr(api, "list_models", None)
    if original is None or getattr(original, "_prompt_style_compat", False):
        return
    import inspect

    if "model_name" in inspect.signature(original).parameters:
        return

    @functools.wraps(original)
    def list_models(self: Any, *args: Any, model_name: str | None = None, **kwargs: Any) -> Any:
        if model_name is not None:
            kwargs.setdefault("search", model_name)
        return original(self, *args, **kwargs)

    list_models._prompt_style_compat = True  # type: ignore[attr-defined]
    api.list_models = list_models


class _Finder(MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                run = spec.loader.exec_module

                def exec_module(module: Any, run: Any = run) -> None:
                    run(module)
                    patch(module)

                spec.loader.exec_module = exec_module
                return spec
        return None


def install() -> None:
    if TARGET in sys.modules:
        patch(sys.modules[TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


install()
