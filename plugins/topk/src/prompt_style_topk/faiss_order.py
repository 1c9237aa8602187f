"""The order in which faiss's ``IndexFlatIP.search`` returns the top ``k`` of one query.

OpenCompass's TopkRetriever searches a faiss ``IndexFlatIP`` one query at a
time. faiss keeps the best ``k`` inner products in a binary min-heap (an item
enters only when strictly better than the heap's worst; equal scores compare by
id) and then pops the heap into the result. Among equal scores (identical
texts) that keeps and orders pool records in a way no plain sort reproduces, so
the heap is replayed here (faiss/utils/Heap.h: ``heap_replace_top``,
``heap_pop``, ``heap_reorder`` with ``CMin<float, int64_t>``). Checked against
faiss-cpu 1.15 on thousands of tie-heavy cases while writing it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["faiss_top_k"]


def _worse(a1: float, b1: float, a2: int, b2: int) -> bool:
    """``CMin::cmp2``: item 1 ranks below item 2."""
    return a1 < b1 or (a1 == b1 and a2 < b2)


def _sift_down(val: float, ident: int, vals: list, ids: list, k: int) -> None:
    """Place ``(val, ident)`` from the root of the 1-based heap ``vals``/``ids`` of size ``k``."""
    i = 1
    while True:
        i1 = i << 1
        i2 = i1 + 1
        if i1 > k:
            break
        if i2 == k + 1 or _worse(vals[i1], vals[i2], ids[i1], ids[i2]):
            child = i1
        else:
            child = i2
        if _worse(val, vals[child], ident, ids[child]):
            break
        vals[i] = vals[child]
        ids[i] = ids[child]
        i = child
    vals[i] = val
    ids[i] = ident


def faiss_top_k(scores: Sequence[float], k: int) -> list[int]:
    """Indices of the ``k`` highest ``scores``, as faiss returns them (best first)."""
    if k <= 0:
        return []
    vals: list = [None] + [-math.inf] * k
    ids: list = [None] + [-1] * k
    for j, score in enumerate(scores):
        if vals[1] < score:
            _sift_down(score, j, vals, ids, k)
    out: list[int] = [-1] * k
    kept = 0
    size = k
    for _ in range(k):
        top = ids[1]
        if size > 1:
            _sift_down(vals[size], ids[size], vals, ids, size - 1)
        size -= 1
        out[k - kept - 1] = top
        if top != -1:
            kept += 1
    return out[k - kept :]
