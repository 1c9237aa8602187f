"""The one YAML loader of prompt-style.

Every YAML file the project reads (task files of every format, meta templates,
promptsource templates) goes through :func:`load_yaml`: a safe loader (no
Python tags), parsed once, with the line of every key kept so that errors can
point at it, and duplicate keys rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TaskFileError

__all__ = ["YamlDocument", "load_yaml"]


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: its data and where each key stands."""

    data: Any
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Line (1-based) of each key, by dotted path: ``template``, ``template.suffix``,
    ``templates.0.jinja``; list items by their index (``doc_to_choice.2``)."""
    path: Path | None = None
    duplicates: tuple[tuple[str, int, int], ...] = ()
    """``(key path, line, line of the first occurrence)`` of each key written
    twice in one mapping, when they were allowed (``duplicate_keys="last"``)."""


def _loader_class(tags: Mapping[str, Callable[[Any, Any], Any]] | None):
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if not tags:
        return base

    class TaggedLoader(base):  # type: ignore[misc, valid-type]
        pass

    for tag, constructor in tags.items():
        TaggedLoader.add_constructor(tag, constructor)
    return TaggedLoader


def _line_map(
    node: Any,
    prefix: str,
    out: dict[str, int],
    file: str | None,
    duplicates: list[tuple[str, int, int]] | None = None,
) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            name = str(key_node.value)
            path = f"{prefix}{name}"
            if name in seen:
                if duplicates is None:
                    raise TaskFileError(
                        f"key {path!r} appears twice",
                        file=file,
                        line=key_node.start_mark.line + 1,
                        key=path,
                        hint="remove one of them; YAML keeps only the last",
                    )
                # The last occurrence wins (as in PyYAML): its lines replace the first's.
                duplicates.append((path, key_node.start_mark.line + 1, out.get(path, 0)))
                for stale in [k for k in out if k == path or k.startswith(path + ".")]:
                    del out[stale]
            seen.add(name)
            out.setdefault(path, key_node.start_mark.line + 1)
            _line_map(value_node, path + ".", out, file, duplicates)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            path = f"{prefix}{i}"
            out.setdefault(path, item.start_mark.line + 1)
            _line_map(item, path + ".", out, file, duplicates)


def load_yaml(
    source: str | Path,
    *,
    text: str | None = None,
    tags: Mapping[str, Callable[[Any, Any], Any]] | None = None,
    what: str = "task file",
    duplicate_keys: str = "error",
) -> YamlDocument:
    """Read and parse a YAML file (or ``text``, reported as ``source``).

    :param source: the file to read, or the name to report when ``text`` is given.
    :param text: the YAML text, when it is not read from ``source``.
    :param tags: extra constructors ``{tag: constructor(loader, node)}`` for
        formats that use their own tags (promptsource's ``!Template``); no
        Python tags are ever loaded.
    :param what: how to name the file in messages.
    :param duplicate_keys: ``"error"`` (default): a key written twice in one
        mapping is an error; ``"last"``: the last one wins, as in PyYAML, and
        the document lists them in ``duplicates`` (for formats whose reference
        implementation accepts them).
    :raises TaskFileError: naming the file and line.
    """
    import yaml

    path = Path(source)
    file = str(source)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise TaskFileError(f"{what} not found", file=file) from None
        except IsADirectoryError:
            raise TaskFileError(f"{what} is a directory", file=file) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TaskFileError(f"cannot read the {what}: {exc}", file=file) from None
    loader = _loader_class(tags)(text)
    try:
        node = loader.get_single_node()
        lines: dict[str, int] = {}
        duplicates: list[tuple[str, int, int]] | None = None if duplicate_keys == "error" else []
        if node is not None:
            _line_map(node, "", lines, file, duplicates)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise TaskFileError(f"not valid YAML: {problem}", file=file, line=mark.line + 1 if mark else None) from None
    finally:
        loader.dispose()
    return YamlDocument(data, lines, path, tuple(duplicates or ()))
