"""Where a chat template comes from: a ``.jinja`` file, a ``tokenizer_config.json``,
or a local model folder, read as transformers reads them.

In a model folder transformers takes ``chat_template.jinja`` (and the named
templates in ``additional_chat_templates/*.jinja``) over any ``chat_template``
in ``tokenizer_config.json``; a ``chat_template`` written as a list of
``{"name", "template"}`` is a set of named templates. Special tokens come from
``tokenizer_config.json`` (``bos_token``, ``eos_token``, ..., strings or
serialized ``AddedToken`` objects, plus model-specific ``*_token`` keys and an
``extra_special_tokens`` mapping); ``special_tokens_map.json`` overrides them
when the config has no ``added_tokens_decoder`` (transformers' legacy rule).
Files are read once per process (keyed by path, size and modification time).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_style import OptionError, PromptStyleError, read_text_file

__all__ = [
    "SPECIAL_TOKENS",
    "TemplateSource",
    "load_source",
    "special_tokens_of",
]

CHAT_TEMPLATE_FILE = "chat_template.jinja"
CHAT_TEMPLATE_DIR = "additional_chat_templates"
TOKENIZER_CONFIG = "tokenizer_config.json"
SPECIAL_TOKENS_MAP = "special_tokens_map.json"
PROCESSOR_TEMPLATE = "chat_template.json"

SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
"""The named special tokens of a transformers tokenizer, passed to every template."""


@dataclass(frozen=True)
class TemplateSource:
    """The chat template(s) and special tokens found at a path."""

    templates: Mapping[str, str]
    """Template source by name; a model with one template has just ``default``."""
    special_tokens: Mapping[str, str] = field(default_factory=dict)
    """``bos_token`` and friends (and model-specific ``*_token`` names), as strings."""
    origin: str = ""
    """The file the default template comes from, for messages."""
    files: Mapping[str, str] = field(default_factory=dict)
    """The file each named template comes from."""

    @property
    def single(self) -> bool:
        return set(self.templates) == {"default"}


def _error(path: Path | str, message: str, hint: str | None = None) -> OptionError:
    return OptionError(f"{message}: {path}", key="meta.template", hint=hint)


def _read_text(path: Path) -> str:
    # A regular file only, of a bounded size: never a FIFO or a device (waited on forever).
    try:
        return read_text_file(path, what="chat template file")
    except PromptStyleError as exc:
        raise _error(path, f"cannot read the chat template file ({exc.message})") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(read_text_file(path, what="file"))
    except json.JSONDecodeError as exc:
        raise _error(path, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except PromptStyleError as exc:
        raise _error(path, f"cannot read ({exc.message})") from None
    except RecursionError:
        raise _error(path, "not valid JSON (nested too deeply)") from None


def _token_text(value: Any, name: str, path: Path) -> str | None:
    """A special token as text: a string, or a serialized ``AddedToken``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    raise _error(path, f"{name} is {type(value).__name__} {value!r}, not a token string")


def _is_token(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, Mapping) and isinstance(value.get("content"), str))


def special_tokens_of(config: Mapping[str, Any], path: Path, special_map: Mapping[str, Any] | None = None) -> dict:
    """The special tokens a tokenizer built from ``config`` passes to its template
    (transformers' ``special_tokens_map``): the named ones, then model-specific
    ``*_token`` keys and a named ``extra_special_tokens`` mapping."""
    merged = dict(config)
    if special_map is not None and "added_tokens_decoder" not in config:
        # transformers reads special_tokens_map.json only for configs without
        # added_tokens_decoder, and lets it override the config's values.
        for key, value in special_map.items():
            merged[key] = value
    tokens: dict[str, str] = {}
    for name in SPECIAL_TOKENS:
        text = _token_text(merged.get(name), name, path)
        if text is not None:
            tokens[name] = text
    for name, value in merged.items():
        if name.endswith("_token") and name not in SPECIAL_TOKENS and _is_token(value):
            tokens[name] = _token_text(value, name, path)  # type: ignore[assignment]
    extra = merged.get("extra_special_tokens")
    if isinstance(extra, Mapping):
        for name, value in extra.items():
            if _is_token(value):
                tokens[str(name)] = _token_text(value, str(name), path)  # type: ignore[assignment]
    return tokens


def _templates_of_config(value: Any, path: Path) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list):
        templates = {}
        for i, item in enumerate(value):
            named = isinstance(item, Mapping) and isinstance(item.get("name"), str)
            if not (named and isinstance(item.get("template"), str)):
                raise _error(path, f"chat_template item {i} is not an object with a 'name' and a 'template' string")
            templates[item["name"]] = item["template"]
        return templates
    raise _error(path, f"chat_template is {type(value).__name__}, not a string or a list of named templates")


def _folder_tokens(folder: Path) -> dict[str, str]:
    config_path = folder / TOKENIZER_CONFIG
    map_path = folder / SPECIAL_TOKENS_MAP
    config = _read_json(config_path) if config_path.is_file() else {}
    if not isinstance(config, Mapping):
        raise _error(config_path, "not a JSON object")
    special_map = _read_json(map_path) if map_path.is_file() else None
    if special_map is not None and not isinstance(special_map, Mapping):
        raise _error(map_path, "not a JSON object")
    return special_tokens_of(config, config_path, special_map)


def _from_folder(folder: Path) -> TemplateSource:
    templates: dict[str, str] = {}
    files: dict[str, str] = {}
    main = folder / CHAT_TEMPLATE_FILE
    if main.is_file():
        templates["default"] = _read_text(main)
        files["default"] = str(main)
    extra = folder / CHAT_TEMPLATE_DIR
    if extra.is_dir():
        for path in sorted(extra.glob("*.jinja")):
            templates[path.name.removesuffix(".jinja")] = _read_text(path)
            files[path.name.removesuffix(".jinja")] = str(path)
    config_path = folder / TOKENIZER_CONFIG
    if not templates and config_path.is_file():
        config = _read_json(config_path)
        if isinstance(config, Mapping):
            templates = _templates_of_config(config.get("chat_template"), config_path)
            files = dict.fromkeys(templates, str(config_path))
    processor = folder / PROCESSOR_TEMPLATE
    if not templates and processor.is_file():
        data = _read_json(processor)
        if isinstance(data, Mapping):
            templates = _templates_of_config(data.get("chat_template"), processor)
            files = dict.fromkeys(templates, str(processor))
    if not templates:
        raise _error(
            folder,
            "no chat template in this folder",
            hint=f"looked for {CHAT_TEMPLATE_FILE}, {CHAT_TEMPLATE_DIR}/*.jinja, "
            f"'chat_template' in {TOKENIZER_CONFIG} and {PROCESSOR_TEMPLATE}",
        )
    origin = files.get("default") or next(iter(files.values()))
    return TemplateSource(templates, _folder_tokens(folder), origin, files)


def _from_json(path: Path) -> TemplateSource:
    data = _read_json(path)
    if not isinstance(data, Mapping):
        raise _error(path, "not a JSON object")
    templates = _templates_of_config(data.get("chat_template"), path)
    if not templates:
        raise _error(path, "has no 'chat_template'", hint="point template= at a .jinja file or a model folder")
    map_path = path.parent / SPECIAL_TOKENS_MAP
    special_map = _read_json(map_path) if path.name == TOKENIZER_CONFIG and map_path.is_file() else None
    if path.name == PROCESSOR_TEMPLATE:
        tokens = _folder_tokens(path.parent)
    else:
        tokens = special_tokens_of(data, path, special_map if isinstance(special_map, Mapping) else None)
    return TemplateSource(templates, tokens, str(path), dict.fromkeys(templates, str(path)))


def _from_jinja(path: Path) -> TemplateSource:
    # A template file inside a model folder takes the folder's special tokens.
    folder = path.parent.parent if path.parent.name == CHAT_TEMPLATE_DIR else path.parent
    tokens = _folder_tokens(folder) if (folder / TOKENIZER_CONFIG).is_file() else {}
    return TemplateSource({"default": _read_text(path)}, tokens, str(path), {"default": str(path)})


_CACHE: dict[tuple, TemplateSource] = {}


def _fingerprint(target: Path) -> tuple:
    """What the result depends on: each file that may be read, with its size and
    modification time (so an edited file is read again)."""
    folder = target if target.is_dir() else target.parent
    if target.parent.name == CHAT_TEMPLATE_DIR:
        folder = target.parent.parent
    names = [CHAT_TEMPLATE_FILE, TOKENIZER_CONFIG, SPECIAL_TOKENS_MAP, PROCESSOR_TEMPLATE]
    paths = [target, *(folder / name for name in names)]
    extra = folder / CHAT_TEMPLATE_DIR
    if extra.is_dir():
        paths.extend(sorted(extra.glob("*.jinja")))
    marks = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            marks.append((str(path), None))
        else:
            marks.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(marks)


def load_source(path: str | os.PathLike[str]) -> TemplateSource:
    """Read the chat template(s) and special tokens at ``path`` (cached per process).

    :raises OptionError: for a missing path, an unreadable file, or a folder or
        config without a chat template.
    """
    target = Path(path).expanduser()
    if not target.exists():
        raise _error(
            path,
            "chat template not found",
            hint="template= takes a local .jinja file, tokenizer_config.json or model folder; nothing is downloaded",
        )
    key = _fingerprint(target.resolve())
    found = _CACHE.get(key)
    if found is not None:
        return found
    if target.is_dir():
        source = _from_folder(target)
    elif target.suffix == ".json":
        source = _from_json(target)
    else:
        source = _from_jinja(target)
    _CACHE[key] = source
    return source
