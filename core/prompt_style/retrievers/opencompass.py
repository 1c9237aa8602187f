"""OpenCompass's retrievers: ``fixk``, ``opencompass_random`` and ``sliding_window``.

Each gives a record the pool indices OpenCompass 0.5.4 gives it
(``FixKRetriever``, ``RandomRetriever``, ``SlidingWindowRetriever``). Like
OpenCompass, none of them skips the record itself when the few-shot pool is
the evaluated split; a negative index counts from the end of the pool, as a
Hugging Face dataset reads it. Where OpenCompass would crash on an index past
the pool, or quietly hand back fewer examples than asked, these raise an
error naming the task key instead (docs/opencompass.md).

``zero`` (``ZeroRetriever``) is the built-in one; ``bm25`` and ``topk`` live in
the ``prompt-style-bm25`` and ``prompt-style-topk`` distributions.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import DataError, OptionError, TaskFileError
from ..options import check_options
from .builtin import Fixed
from .checks import LARGER_POOL, NoOptions, SeedOption, check_pool_size, example_count
from .numpy_random import LegacyRandomState

__all__ = ["FixK", "OpenCompassRandom", "SlidingWindow", "input_columns_option", "input_text"]


def input_columns_option(value: Any, *, what: str) -> tuple[str, ...]:
    """The ``input_columns`` option of a retriever that reads text: a list of field
    names, or one string split on whitespace (as OpenCompass's ``DatasetReader`` does)."""
    if not value:
        raise OptionError(
            f"{what} needs input_columns: the record fields its query is made of",
            key="input_columns",
            hint="the OpenCompass reader passes reader_cfg.input_columns; e.g. input_columns: [question]",
        )
    columns = tuple(value.split() if isinstance(value, str) else value)
    if not all(isinstance(c, str) for c in columns):
        raise OptionError(f"{what}: input_columns must be field names, not {list(columns)!r}", key="input_columns")
    return columns


def input_text(record: Mapping[str, Any], columns: Sequence[str], *, what: str) -> str:
    """A record's text as OpenCompass's retrievers see it: ``str()`` of each input
    column, joined by single spaces (``DatasetReader.generate_input_field_prompt``)."""
    try:
        return " ".join([str(record[column]) for column in columns])
    except KeyError as exc:
        raise DataError(
            f"{what}: the record has no input column {exc.args[0]!r}",
            key="retriever.input_columns",
            hint=f"its fields are: {', '.join(map(str, record)) or 'none'}",
        ) from None
    except TypeError:
        raise DataError(f"{what}: the record is a {type(record).__name__}, not a mapping") from None


def _pool_index(i: Any, size: int, *, what: str, key: str) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not -size <= i < size:
        raise OptionError(
            f"{what}: {i!r} is not an index of the few-shot pool of {size} records "
            f"(0..{size - 1}, or -{size}..-1 from the end)",
            key=key,
        )
    return i % size


@dataclass(frozen=True)
class FixK(Fixed):
    """The same pool records, in the given order, for every record (``FixKRetriever``;
    unlike ``fixed``, an index may count from the end of the pool)."""


@dataclass
class OpenCompassRandom:
    """``RandomRetriever``: ``np.random.seed(seed)``, then ``np.random.choice(pool, k,
    replace=False)`` for record 0, 1, 2, ... in turn.

    The draws form one stream over the evaluated split, so record ``i`` gets the
    ``i``-th draw whatever order records are rendered in: the draws up to the
    highest index asked for are made once and kept.
    """

    k: int
    size: int
    seed: int
    _draws: list[list[int]] = field(default_factory=list, repr=False)
    _state: LegacyRandomState | None = field(default=None, repr=False)

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        draws = self._draws
        if index >= len(draws):
            if self._state is None:
                self._state = LegacyRandomState(self.seed)
            choose = self._state.choice_without_replacement
            while len(draws) <= index:
                draws.append(choose(self.size, self.k))
        return draws[index]

    def __getstate__(self) -> dict[str, Any]:
        # Another process redraws from the seed (numpy's state does not travel).
        return {"k": self.k, "size": self.size, "seed": self.seed}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(**state)


@dataclass(frozen=True)
class SlidingWindow:
    """``SlidingWindowRetriever``: the ``k`` pool records just before the record's own
    index; the first ``k`` records are padded with the last pool records."""

    k: int
    size: int

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        k, size = self.k, self.size
        if index < k:
            window = list(range(size - (k - index), size)) + list(range(index))
        else:
            window = list(range(index - k, index))
        out = []
        for i in window:
            if not -size <= i < size:
                raise TaskFileError(
                    f"retriever 'sliding_window' needs pool record {i} for this record, "
                    f"but the few-shot pool has {size} records",
                    key="num_fewshot",
                    hint="the window slides over the pool by the record's index: use the evaluated "
                    "split (or one at least as long) as the pool, or lower num_fewshot",
                )
            out.append(i % size)
        return out


@dataclass(frozen=True)
class _FixKOptions:
    fix_id_list: list[int] | None = None


def fixk(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> FixK:
    ids = check_options(_FixKOptions, options, what="retriever 'fixk'").fix_id_list
    if ids is None:
        raise OptionError("retriever 'fixk' needs fix_id_list: the pool indices of the examples", key="fix_id_list")
    ids = tuple(_pool_index(i, len(pool), what="retriever 'fixk': fix_id_list", key="fix_id_list") for i in ids)
    if k is not None and k != len(ids):
        # OpenCompass's FixKRetriever ignores ice_num: its examples are fix_id_list, whatever the count.
        warnings.warn(
            f"prompt-style: retriever 'fixk' gives the {len(ids)} examples of fix_id_list; num_fewshot "
            f"(--shots) {k} is ignored, as OpenCompass's FixKRetriever ignores ice_num (change fix_id_list "
            "for other examples)",
            UserWarning,
            stacklevel=2,
        )
    return FixK(ids)


def opencompass_random(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> OpenCompassRandom:
    chosen = check_options(SeedOption, options, what="retriever 'opencompass_random'").seed
    seed = seed if chosen is None else chosen
    if not 0 <= seed <= 0xFFFFFFFF:
        raise OptionError(
            f"retriever 'opencompass_random': seed must be between 0 and 2**32 - 1, not {seed}", key="seed"
        )
    k = example_count("opencompass_random", k, default=1)
    check_pool_size("opencompass_random", k, len(pool), verb="draws", examples="distinct examples", hint=LARGER_POOL)
    return OpenCompassRandom(k=k, size=len(pool), seed=seed)


def sliding_window(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> SlidingWindow:
    check_options(NoOptions, options, what="retriever 'sliding_window'")
    if k is None:
        raise TaskFileError(
            "retriever 'sliding_window' needs num_fewshot, the size of the window",
            key="num_fewshot",
            hint="OpenCompass's SlidingWindowRetriever calls it k",
        )
    return SlidingWindow(k=example_count("sliding_window", k, default=0), size=len(pool))


CATALOG = {"fixk": fixk, "opencompass_random": opencompass_random, "sliding_window": sliding_window}
"""Registered by the ``builtin-retrievers`` plugin (``retrievers/builtin.py``)."""
