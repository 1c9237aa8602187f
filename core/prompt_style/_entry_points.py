"""Entry points of one group, read straight from ``*.dist-info`` directories.

This does what ``importlib.metadata.entry_points(group=...)`` does for the usual
layouts (directories on ``sys.path``; the first distribution of a name wins),
without importing ``importlib.metadata`` and the email, zipfile and csv machinery
behind it: that import alone costs more start-up than the rest of
``prompt-style plugins``. Anything unusual on ``sys.path`` (a zip archive) falls
back to ``importlib.metadata``.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["FoundEntryPoint", "entry_points", "distribution_version"]

_SUFFIXES = (".dist-info", ".egg-info")
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+))?\s*(?:\[.*\])?\s*$")


@dataclass(frozen=True)
class FoundEntryPoint:
    name: str
    value: str
    distribution: str | None
    version: str | None

    @property
    def module(self) -> str:
        return self.value.split(":")[0].strip()

    def load(self) -> object:
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"malformed entry point value {self.value!r}")
        obj: object = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            obj = getattr(obj, attr)
        return obj


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def _headers(meta_dir: str) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the METADATA (or PKG-INFO) headers."""
    text = _read(os.path.join(meta_dir, "METADATA")) or _read(os.path.join(meta_dir, "PKG-INFO")) or ""
    name = version = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
    return name, version


def _distributions() -> Iterator[str] | None:
    """Metadata directories in ``sys.path`` order, one per distribution name."""
    seen: set[str] = set()
    found = []
    for entry in sys.path:
        path = entry or "."
        if not os.path.isdir(path):
            if os.path.isfile(path):  # a zip archive: leave it to importlib.metadata
                return None
            continue
        try:
            children = os.listdir(path)
        except OSError:
            continue
        for child in children:
            if not child.endswith(_SUFFIXES):
                continue
            key = _normalize(child.rsplit(".", 1)[0].split("-")[0])
            if key in seen:
                continue
            seen.add(key)
            found.append(os.path.join(path, child))
    return iter(found)


def _sections(text: str) -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1].strip(), [])
        elif current is not None and "=" in line:
            name, _, value = line.partition("=")
            current.append((name.strip(), value.strip()))
    return sections


def entry_points(group: str) -> list[FoundEntryPoint]:
    """The entry points of ``group`` from every installed distribution."""
    dists = _distributions()
    if dists is None:
        return _via_importlib_metadata(group)
    found = []
    for meta_dir in dists:
        text = _read(os.path.join(meta_dir, "entry_points.txt"))
        if not text or f"[{group}]" not in text.replace(" ", ""):
            continue
        entries = _sections(text).get(group, [])
        if entries:
            name, version = _headers(meta_dir)
            found.extend(FoundEntryPoint(ep, value, name, version) for ep, value in entries)
    return found


def distribution_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None``."""
    dists = _distributions()
    if dists is None:
        from importlib import metadata

        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None
    key = _normalize(name)
    for meta_dir in dists:
        if _normalize(os.path.basename(meta_dir).rsplit(".", 1)[0].split("-")[0]) == key:
            return _headers(meta_dir)[1]
    return None


def _via_importlib_metadata(group: str) -> list[FoundEntryPoint]:
    from importlib import metadata

    found = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        found.append(
            FoundEntryPoint(
                ep.name,
                ep.value,
                dist.metadata["Name"] if dist is not None else None,
                dist.version if dist is not None else None,
            )
        )
    return found
