"""The two ``load_tokenizer`` loaders, importable without the ``tokenizers`` library.

``prompt-style plugins`` (and every process that lists or resolves plugins)
imports this distribution's hook implementation; the ``tokenizers`` library is
imported only when a tokenizer is actually loaded (``load``), so listing plugins
and rendering plain text never pay for it. ``detect`` looks at file names only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["TokenizerJsonLoader", "SentencePieceLoader"]


class TokenizerJsonLoader:
    """Reads ``tokenizer.json`` (any ``*.json`` file given by name) and folders that hold one."""

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return (path / "tokenizer.json").is_file()
        return path.suffix == ".json"

    def load(self, path: Path, options: Mapping[str, Any]) -> Any:
        from .hf import load_tokenizer_json

        if path.is_dir():
            return load_tokenizer_json(path / "tokenizer.json", path, options)
        # A file inside a model folder reads its config too, as the folder would.
        folder = path.parent if (path.parent / "tokenizer_config.json").is_file() else None
        return load_tokenizer_json(path, folder, options)


class SentencePieceLoader:
    """Reads ``*.model`` files and folders that hold ``tokenizer.model`` but no ``tokenizer.json``
    (transformers prefers ``tokenizer.json`` when a folder has both)."""

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return (path / "tokenizer.model").is_file() and not (path / "tokenizer.json").is_file()
        return path.suffix == ".model"

    def load(self, path: Path, options: Mapping[str, Any]) -> Any:
        from .spm import load_sentencepiece

        return load_sentencepiece(path, options)
