"""numpy's legacy global random stream (``np.random.seed`` + ``np.random.choice``), in pure Python.

OpenCompass's ``RandomRetriever`` draws its examples with
``np.random.seed(seed)`` once, then ``np.random.choice(n, k, replace=False)``
per test record. numpy keeps that legacy stream frozen (NEP 19), so it can be
reproduced exactly without numpy:

* ``np.random.seed(s)`` is MT19937's ``init_genrand(s)`` (not CPython's
  ``init_by_array``), so the state is computed here and handed to
  ``random.Random.setstate``, whose ``getrandbits(32)`` is MT19937's
  ``genrand_int32``;
* ``choice(n, k, replace=False)`` is ``permutation(n)[:k]``: a Fisher-Yates
  shuffle of ``arange(n)`` from the last position down, each swap partner
  drawn by ``random_interval`` (mask to the next power of two, reject above).

When numpy is importable it is used instead, only because it is faster; both
paths give the same numbers (tests check it).
"""

from __future__ import annotations

import random
from array import array

__all__ = ["LegacyRandomState"]

_BATCH = 4096


def _init_genrand(seed: int) -> list[int]:
    mt = [0] * 624
    mt[0] = seed & 0xFFFFFFFF
    for i in range(1, 624):
        prev = mt[i - 1]
        mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    return mt


class LegacyRandomState:
    """The part of ``numpy.random.RandomState`` that ``RandomRetriever`` uses."""

    def __init__(self, seed: int, *, use_numpy: bool | None = None) -> None:
        if not 0 <= seed <= 0xFFFFFFFF:
            raise ValueError(f"seed must be between 0 and 2**32 - 1, not {seed}")
        self._np = None
        if use_numpy is not False:
            try:
                import numpy
            except ImportError:
                if use_numpy:
                    raise
            else:
                self._np = numpy.random.RandomState(seed)
                return
        self._rng = random.Random()
        self._rng.setstate((3, tuple(_init_genrand(seed)) + (624,), None))
        self._words: array = array("I")
        self._next = 0

    def _refill(self) -> None:
        # getrandbits(32 * n) is n consecutive genrand_int32 outputs, least significant first.
        raw = self._rng.getrandbits(32 * _BATCH).to_bytes(4 * _BATCH, "little")
        words = array("I")
        if words.itemsize != 4:  # pragma: no cover - every CPython platform has a 4-byte 'I'
            words = array("L")
        words.frombytes(raw)
        if array("I", [1]).tobytes() != (1).to_bytes(4, "little"):  # pragma: no cover - big-endian
            words.byteswap()
        self._words = words
        self._next = 0

    def choice_without_replacement(self, n: int, k: int) -> list[int]:
        """``np.random.choice(n, k, replace=False).tolist()``."""
        if self._np is not None:
            return self._np.choice(n, k, replace=False).tolist()
        if k > n:
            raise ValueError("Cannot take a larger sample than population when 'replace=False'")
        arr = list(range(n))
        words = self._words
        pos = self._next
        end = len(words)
        for i in range(n - 1, 0, -1):
            mask = i
            mask |= mask >> 1
            mask |= mask >> 2
            mask |= mask >> 4
            mask |= mask >> 8
            mask |= mask >> 16
            while True:
                if pos == end:
                    self._refill()
                    words = self._words
                    pos = 0
                    end = len(words)
                value = words[pos] & mask
                pos += 1
                if value <= i:
                    break
            arr[i], arr[value] = arr[value], arr[i]
        self._next = pos
        return arr[:k]
