"""OpenCompass's ``BM25Retriever`` as the prompt-style retriever ``bm25``.

Each record's query is the ``str()`` of its ``input_columns`` joined by single
spaces (OpenCompass's ``DatasetReader.generate_input_field_prompt``), split
into words by ``nltk.word_tokenize``; the few-shot pool is indexed the same
way with ``rank_bm25.BM25Okapi``; a record gets the ``k`` pool records with
the highest scores, in the order ``numpy.argsort(scores)[::-1]`` gives (so
ties fall as in OpenCompass with the same numpy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prompt_style import DataError, check_options, hookimpl

from .tokenize import word_tokenize

# input_text, input_columns_option and ranking_count are imported where they are used,
# so that listing plugins does not import OpenCompass's retrievers.

__all__ = ["BM25", "bm25", "query_text", "word_tokenize"]


def query_text(record: Mapping[str, Any], columns: Sequence[str]) -> str:
    """The text OpenCompass ranks a record by: its input columns, ``str()``-ed and joined by spaces."""
    from prompt_style import input_text

    return input_text(record, columns, what="retriever 'bm25'")


@dataclass
class BM25:
    """Ranks pool records by BM25 (Okapi) against the record's input columns."""

    k: int
    columns: tuple[str, ...]
    pool: Sequence[Mapping[str, Any]] = field(repr=False)
    _bm25: Any = field(default=None, repr=False)

    def _index(self):
        from rank_bm25 import BM25Okapi

        corpus = []
        for i, record in enumerate(self.pool):
            try:
                corpus.append(word_tokenize(query_text(record, self.columns)))
            except DataError as exc:
                exc.message = f"few-shot example: {exc.message}"
                raise exc.locate(index=i) from None
        return BM25Okapi(corpus)

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        import numpy

        if self._bm25 is None:
            self._bm25 = self._index()
        scores = self._bm25.get_scores(word_tokenize(query_text(record, self.columns)))
        return [int(i) for i in numpy.argsort(scores)[::-1][: self.k]]

    def __getstate__(self) -> dict[str, Any]:
        return {"k": self.k, "columns": self.columns, "pool": self.pool}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(**state)


@dataclass(frozen=True)
class _Options:
    input_columns: list[str] | str | None = None


def bm25(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> BM25:
    from prompt_style import input_columns_option, ranking_count

    columns = input_columns_option(
        check_options(_Options, options, what="retriever 'bm25'").input_columns, what="retriever 'bm25'"
    )
    k = ranking_count("bm25", k, pool, ranks="rank")
    retriever = BM25(k=k, columns=columns, pool=pool)
    retriever._bm25 = retriever._index()  # once per task, with errors at load time
    return retriever


@hookimpl
def retrieve_examples():
    return {"bm25": bm25}
