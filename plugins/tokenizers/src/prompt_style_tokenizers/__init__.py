"""Token-level prompts for prompt-style: local tokenizers, encoded as transformers 5 encodes them.

Two loaders for the ``load_tokenizer`` hook:

- ``tokenizers``: a ``tokenizer.json`` file, or a local Hugging Face tokenizer
  folder holding one (with its ``tokenizer_config.json``);
- ``sentencepiece``: a SentencePiece ``.model`` file, or a folder holding
  ``tokenizer.model`` and no ``tokenizer.json``, converted as transformers 5
  converts it for ``LlamaTokenizer``.

Use them through any meta template that gives text::

    prompt-style render task.yaml --meta chatml --meta-option tokenizer=path/to/model
"""

from __future__ import annotations

from typing import Any

from prompt_style import hookimpl

from .loaders import SentencePieceLoader, TokenizerJsonLoader

__all__ = ["Backend", "TokenizerJsonLoader", "SentencePieceLoader", "read_model", "load_tokenizer"]


@hookimpl
def load_tokenizer():
    # The loaders import the tokenizers library when they load a tokenizer, not
    # before: listing plugins and rendering text never import it.
    return {"tokenizers": TokenizerJsonLoader(), "sentencepiece": SentencePieceLoader()}


def __getattr__(name: str) -> Any:
    """``Backend`` and ``read_model``, imported on first use (they need ``tokenizers``)."""
    if name == "Backend":
        from .backend import Backend

        return Backend
    if name == "read_model":
        from .spm import read_model

        return read_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
