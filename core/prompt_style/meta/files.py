"""Meta templates given as a file or a mapping rather than a plugin name.

``--meta PATH`` (``load_task(meta=PATH)``) and ``load_task(meta={...})`` come
here. Each reader in :data:`META_SOURCES` is asked in turn; the first that
recognises the content says which meta template plugin renders it and with
which options. The built-in reader understands OpenCompass meta templates: a
mapping with ``round`` (and ``begin``, ``end``, ``reserved_roles``,
``eos_token_id``), a mapping with ``meta_template``, or a model config
(``models: [{..., meta_template: ...}]``, OpenCompass's ``.py`` model
configs with ``trust_code``); and OpenCompass's API meta template that is a
list of messages (``[{role: system, content: ...}]``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import TaskFileError
from ..safe.yaml_loader import load_yaml

__all__ = ["META_FILE_SUFFIXES", "META_SOURCES", "is_meta_path", "resolve_meta"]

META_FILE_SUFFIXES: tuple[str, ...] = (".yaml", ".yml", ".json", ".py")
"""A ``--meta`` value ending in one of these is a file, not a plugin name."""

MetaSource = Callable[[Any, str], "tuple[str, dict[str, Any]] | None"]
"""``reader(data, where) -> (plugin name, options)`` or ``None`` when not recognised."""


def is_meta_path(meta: Any) -> bool:
    """Whether a ``meta`` value names a file (by its suffix) rather than a plugin."""
    if isinstance(meta, Path):
        return True
    # a plugin name without a dot has no suffix: no Path built for it
    return isinstance(meta, str) and "." in meta and Path(meta).suffix.lower() in META_FILE_SUFFIXES


def _is_message_list(value: Any) -> bool:
    """A meta template that is a list of messages (``[{role: system, content: ...}]``),
    which OpenCompass's API models merge into RawPromptTemplate messages."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) and "role" in v for v in value)


def _template(value: Mapping[str, Any] | list[Any]) -> tuple[str, dict[str, Any]]:
    """The ``opencompass`` meta template with ``value``: a mapping, or a list of messages."""
    return "opencompass", {"template": list(value) if _is_message_list(value) else dict(value)}


def _opencompass(data: Any, where: str) -> tuple[str, dict[str, Any]] | None:
    if _is_message_list(data):
        return _template(data)
    if not isinstance(data, Mapping):
        return None
    if "round" in data:
        return _template(data)
    meta_template = data.get("meta_template")
    if isinstance(meta_template, Mapping) or _is_message_list(meta_template):
        return _template(meta_template)
    models = data.get("models")
    if isinstance(models, list) and models:
        found = [m for m in models if isinstance(m, Mapping) and "meta_template" in m]
        if not found:
            raise TaskFileError("the model config has no meta_template", file=where)
        templates = {repr(m["meta_template"]) for m in found}
        if len(templates) > 1:
            shown = ", ".join(str(m.get("abbr", i)) for i, m in enumerate(found))
            raise TaskFileError(
                f"the models of the config have different meta templates ({shown})",
                file=where,
                hint="write the one you want to a file of its own",
            )
        template = found[0]["meta_template"]
        if template is None:
            return "opencompass", {}
        return _template(template)
    # A Python model config without a models list: a *meta_template variable.
    named = [
        v
        for k, v in data.items()
        if str(k).endswith("meta_template") and (isinstance(v, Mapping) or _is_message_list(v))
    ]
    if len(named) == 1:
        return _template(named[0])
    if not where.endswith(".py") and not named:
        # A mapping of meta template keys with a mistake: let the template's checks say what is wrong.
        return _template(data)
    return None


META_SOURCES: list[MetaSource] = [_opencompass]
"""Readers of meta template files and mappings, asked in order."""


def _load(path: Path, trust_code: bool) -> Any:
    if path.suffix.lower() == ".py":
        from ..safe.oc_python import exec_config, refuse_untrusted

        if not path.is_file():
            raise TaskFileError("meta template file not found", file=str(path))
        if not trust_code:
            raise refuse_untrusted(path, "OpenCompass model config")
        return exec_config(path)
    return load_yaml(path, what="meta template file").data


def resolve_meta(meta: Any, *, trust_code: bool = False) -> tuple[str, dict[str, Any]]:
    """The plugin name and options for a meta template given as a file or a mapping.

    :raises TaskFileError: when the file cannot be read or holds no meta template.
    """
    if isinstance(meta, (Mapping, list)):
        data, where = meta, "<meta mapping>"
    else:
        path = Path(meta).expanduser()
        data, where = _load(path, trust_code), str(path)
    for source in META_SOURCES:
        found = source(data, where)
        if found is not None:
            return found
    raise TaskFileError(
        "no meta template found",
        file=where,
        hint="an OpenCompass meta template has a round (and optionally begin, end, reserved_roles)",
    )
