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
from dataclasses import dataclass

__all__ = ["FoundEntryPoint", "Installed", "entry_points", "distribution_version"]

_SUFFIXES = (".dist-info", ".egg-info")
_VALUE = r"(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+))?\s*(?:\[.*\])?\s*$"
"""An entry point's value in full (spaces, extras); compiled only for a value that is
more than a dotted module and attribute (``re`` caches it), not on every start-up."""


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
        module, colon, attrs = self.value.partition(":")
        if not (_dotted(module) and (not colon or _dotted(attrs))):  # spaces, extras, ...: the full syntax
            match = re.match(_VALUE, self.value)
            if match is None:
                raise ValueError(f"malformed entry point value {self.value!r}")
            module, attrs = match.group("module"), match.group("attr") or ""
        obj: object = importlib.import_module(module)
        for attr in filter(None, attrs.split(".")):
            obj = getattr(obj, attr)
        return obj


def _dotted(text: str) -> bool:
    """Whether ``text`` is ASCII ``[\\w.]+``: what :data:`_VALUE` takes as it is."""
    return text.isascii() and text.replace(".", "a").replace("_", "a").isalnum()


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


def _key(meta_dir_name: str) -> str:
    """The normalized distribution name of ``name-1.0.dist-info`` or ``name.egg-info``."""
    return _normalize(meta_dir_name.rsplit(".", 1)[0].split("-")[0])


def _distributions() -> dict[str, str] | None:
    """``{normalized name: metadata directory}`` in ``sys.path`` order, the first of
    a name winning; ``None`` when a zip archive on ``sys.path`` needs importlib.metadata."""
    found: dict[str, str] = {}
    for entry in sys.path:
        path = entry or "."
        if not os.path.isdir(path):
            if os.path.isfile(path):
                return None
            continue
        try:
            children = os.listdir(path)
        except OSError:
            continue
        for child in children:
            if child.endswith(_SUFFIXES):
                found.setdefault(_key(child), os.path.join(path, child))
    return found


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


class Installed:
    """One scan of ``sys.path``, for every question asked while plugins load."""

    def __init__(self) -> None:
        self._dists = _distributions()

    def entry_points(self, group: str) -> list[FoundEntryPoint]:
        """The entry points of ``group`` from every installed distribution."""
        if self._dists is None:
            return _via_importlib_metadata(group)
        found = []
        for meta_dir in self._dists.values():
            text = _read(os.path.join(meta_dir, "entry_points.txt"))
            if not text or f"[{group}]" not in text.replace(" ", ""):
                continue
            entries = _sections(text).get(group, [])
            if entries:
                name, version = _headers(meta_dir)
                found.extend(FoundEntryPoint(ep, value, name, version) for ep, value in entries)
        return found

    def version(self, name: str) -> str | None:
        """The installed version of distribution ``name``, or ``None``."""
        if self._dists is None:
            from importlib import metadata

            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                return None
        meta_dir = self._dists.get(_normalize(name))
        return _headers(meta_dir)[1] if meta_dir else None


def entry_points(group: str) -> list[FoundEntryPoint]:
    """The entry points of ``group`` from every installed distribution."""
    return Installed().entry_points(group)


def distribution_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None``."""
    return Installed().version(name)


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
