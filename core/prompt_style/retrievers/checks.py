"""What retriever factories check before a task renders: their options, the
number of examples and the size of the few-shot pool.

Every ``retrieve_examples`` factory gets ``k`` (the task's ``num_fewshot``, or
``None``) and the pool; the built-in retrievers, OpenCompass's and the ``bm25``
and ``topk`` plugins check them here, so that a wrong count is the same error
whichever retriever meets it: a :class:`~prompt_style.TaskFileError` at the key
``num_fewshot`` (``retriever`` for an empty pool) naming the retriever.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TaskFileError

__all__ = [
    "LARGER_POOL",
    "NoOptions",
    "SeedOption",
    "check_ids_agree",
    "check_pool_size",
    "example_count",
    "ranking_count",
]

LARGER_POOL = "lower num_fewshot (ice_num) or use a larger pool"
"""The hint for OpenCompass's retrievers (whose configs say ``ice_num``)."""


@dataclass(frozen=True)
class NoOptions:
    """The options of a retriever that takes none (for :func:`~prompt_style.check_options`)."""


@dataclass(frozen=True)
class SeedOption:
    """The options of a seeded retriever: its own ``seed`` (``None``: the task's)."""

    seed: int | None = None


def example_count(name: str, k: int | None, *, default: int) -> int:
    """``k``, or ``default`` when the task gives no ``num_fewshot``.

    :raises TaskFileError: for a negative count.
    """
    k = default if k is None else k
    if k < 0:
        raise TaskFileError(f"retriever {name!r}: num_fewshot must be 0 or more, not {k}", key="num_fewshot")
    return k


def check_pool_size(
    name: str,
    k: int,
    available: int,
    *,
    verb: str = "needs",
    examples: str = "examples",
    note: str = "",
    hint: str = "lower num_fewshot or name a larger fewshot_split",
) -> None:
    """``k`` examples must fit in the ``available`` pool records (``note`` says why
    fewer are available than the pool holds).

    :raises TaskFileError: ``retriever NAME needs K examples but the few-shot pool has N``.
    """
    if k > available:
        raise TaskFileError(
            f"retriever {name!r} {verb} {k} {examples} but the few-shot pool has {available}{note}",
            key="num_fewshot",
            hint=hint,
        )


def check_ids_agree(name: str, ids: Sequence[Any], k: int | None, *, option: str = "") -> None:
    """A retriever given its examples by index: ``num_fewshot``, when given, must count them.

    :param option: where the ids are written, for the message (`` in fix_id_list``).
    """
    if k is not None and k != len(ids):
        raise TaskFileError(
            f"retriever {name!r} has {len(ids)} ids{option} but num_fewshot is {k}",
            key="num_fewshot",
            hint="make them agree, or drop num_fewshot",
        )


def ranking_count(name: str, k: int | None, pool: Sequence[Any], *, ranks: str = "rank") -> int:
    """The number of examples a retriever that ranks the whole pool returns: ``k``,
    one by default (OpenCompass's ``ice_num``), at most the pool's size.

    :param ranks: what the retriever does with the pool, for the message.
    :raises TaskFileError: for a negative count, an empty pool or one too small.
    """
    k = example_count(name, k, default=1)
    if not pool:
        raise TaskFileError(f"retriever {name!r} has an empty few-shot pool to {ranks}", key="retriever")
    check_pool_size(name, k, len(pool), hint=LARGER_POOL)
    return k
