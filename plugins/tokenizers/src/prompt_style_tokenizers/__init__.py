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

from prompt_style import hookimpl

from .backend import Backend
from .hf import TokenizerJsonLoader
from .spm import SentencePieceLoader, read_model

__all__ = ["Backend", "TokenizerJsonLoader", "SentencePieceLoader", "read_model", "load_tokenizer"]


@hookimpl
def load_tokenizer():
    return {"tokenizers": TokenizerJsonLoader(), "sentencepiece": SentencePieceLoader()}
