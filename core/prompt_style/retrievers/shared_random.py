"""``shared_random``: lm-evaluation-harness's ``default`` few-shot sampler.

One ``random.Random(seed)`` per task, advanced record by record in order: the
examples of record ``i`` depend on the draws of records ``0 .. i-1``. This is
the one deliberate exception to the rule that randomness is seeded from
``seed`` and the record index only (see docs/architecture.md, Randomness): it
exists so that lm-evaluation-harness task files get exactly the examples
lm-evaluation-harness gives them (``fewshot_config: {sampler: default}``, the
default, with its fewshot seed 1234).

Rendering a record twice, or out of order, gives the same examples; records not seen
yet are drawn for in order first (a renderer shipped to another process replays the
draws from the start). Memory stays flat however many records are rendered: the
last draws are kept, and the generator's state every 16,384 draws (and after any draw
that did not take the usual ``sample``), from which an older record's draw is
replayed.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError, TaskFileError
from ..options import check_options

__all__ = ["SharedRandom", "shared_random"]

_UNKNOWN: Any = object()


def _range_sampler(rng: random.Random, n: int, k: int) -> Callable[[], tuple[int, ...]]:
    """``tuple(rng.sample(range(n), k))`` as a function of no arguments, drawing as
    ``Random.sample`` draws (the same calls of the generator, the same indices) without
    its per-call checks (``isinstance`` of an abstract class, the table size): used
    where it gives what ``sample`` gives (:func:`_draws_as_sample`), so that a Python
    whose ``sample`` draws otherwise falls back to ``sample`` itself."""
    if 0 < k <= n and type(rng) is random.Random and _draws_as_sample(n, k):
        return _sampler(rng._randbelow, n, k)
    population = range(n)
    return lambda: tuple(rng.sample(population, k))  # (sample's errors, as they were)


def _sampler(randbelow: Callable[[int], int], n: int, k: int) -> Callable[[], tuple[int, ...]]:
    """``Random.sample(range(n), k)``'s algorithm over ``randbelow``: a list of the
    population, or a set of the picks, as ``sample`` chooses by the table size."""
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    if n <= setsize:

        def by_list() -> tuple[int, ...]:
            pool = list(range(n))
            picked = [0] * k
            for i in range(k):
                j = randbelow(n - i)
                picked[i] = pool[j]
                pool[j] = pool[n - i - 1]
            return tuple(picked)

        return by_list

    def by_set() -> tuple[int, ...]:
        picked: list[int] = []
        seen: set[int] = set()
        for _ in range(k):
            j = randbelow(n)
            while j in seen:
                j = randbelow(n)
            seen.add(j)
            picked.append(j)
        return tuple(picked)

    return by_set


@functools.lru_cache(maxsize=256)
def _draws_as_sample(n: int, k: int) -> bool:
    """Whether :func:`_sampler` draws what this Python's ``Random.sample`` draws for this
    ``n`` and ``k``, on a probe generator (checked once per pool size and ``k``)."""
    probe, reference = random.Random(n * 7919 + k), random.Random(n * 7919 + k)
    draw = _sampler(probe._randbelow, n, k)
    return all(draw() == tuple(reference.sample(range(n), k)) for _ in range(64))


@dataclass
class SharedRandom:
    """``k`` pool records per record from one generator shared by the whole task.

    With ``exclude_record`` (lm-evaluation-harness passes the evaluated document
    to its sampler when the few-shot split *is* the test split), ``k + 1``
    records are drawn, those equal to the rendered record dropped, and the first
    ``k`` kept; should duplicates leave fewer than ``k``, ``k`` are drawn again
    from the pool without any record equal to it (``ContextSampler.sample``).
    """

    k: int = 0
    pool: Sequence[Mapping[str, Any]] = field(default=(), repr=False)
    seed: int = 1234
    exclude_record: bool = False
    same_split: bool = False
    indices: tuple[int, ...] | None = None
    """Which pool records may be drawn (``fewshot_config.fewshot_indices``); ``None``: all."""

    def __post_init__(self) -> None:
        self._reset()

    _KEEP = 4096
    """The last draws kept (a record rendered again soon after: the general path after
    the fast path)."""
    _EVERY = 16384
    """Draws between two kept states of the generator."""

    def _reset(self) -> None:
        self._rng = random.Random(self.seed)
        self._count = 0  # the records drawn for, in order
        self._recent: list[tuple[int, tuple[int, ...]] | None] = [None] * self._KEEP
        # the generator's state before draw i, for i = 0, every _EVERY draws, and after any
        # draw that did not take sample(range(len(ids)), usual) (a fallback, a falsy record)
        self._states: dict[int, Any] = {0: self._rng.getstate()}
        self._ids = list(self.indices) if self.indices is not None else list(range(len(self.pool)))
        self._usual = self.k + 1 if self.exclude_record else self.k
        self._skipped: list[tuple[int, int]] = []  # runs of records drawn for before they were seen
        # the common case: k of the whole pool, no record excluded (a draw is one sample)
        self._plain = self.k > 0 and not self.exclude_record and self.indices is None
        self._draw_plain = _range_sampler(self._rng, len(self.pool), self.k) if self._plain else None

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if not key.startswith("_")}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        count = self._count
        if index == count and self._plain:  # the next record, k of all the pool (_next's work, inline)
            if count and count % self._EVERY == 0:
                self._states[count] = self._rng.getstate()
            picked = self._draw_plain()
            self._count = count + 1
            self._recent[count % self._KEEP] = (count, picked)
            return picked
        if index < count:
            kept = self._recent[index % self._KEEP]
            return kept[1] if kept is not None and kept[0] == index else self._replay(index, record)
        if count < index:
            self._skipped.append((count, index))
        while self._count < index:
            self._next(self._unseen(self._count))
        return self._next(record)

    def _unseen(self, j: int) -> Any:
        """What record ``j`` is drawn with when it is drawn for before it is seen: on the
        evaluated split the pool holds it."""
        return self.pool[j] if self.same_split and j < len(self.pool) else _UNKNOWN

    def _next(self, record: Any) -> tuple[int, ...]:
        """The draw of the next record in order, kept."""
        j = self._count
        if j and j % self._EVERY == 0:
            self._states[j] = self._rng.getstate()
        picked, usual = self._draw(self._rng, record)
        self._count = j + 1
        if not usual:
            self._states[j + 1] = self._rng.getstate()
        self._recent[j % self._KEEP] = (j, picked)  # a ring: draw j in place of draw j - _KEEP
        return picked

    def _replay(self, index: int, record: Any) -> tuple[int, ...]:
        """The draw of an earlier record: from the last state kept before it, the draws
        between taken as they were (each the usual sample: a draw that was not is
        followed by a kept state)."""
        start = max(i for i in self._states if i <= index)
        rng = random.Random()
        rng.setstate(self._states[start])
        if self.k:
            n = len(self._ids)
            for _ in range(start, index):
                rng.sample(range(n), self._usual)
        if any(a <= index < b for a, b in self._skipped):
            record = self._unseen(index)  # (drawn so then)
        return self._draw(rng, record)[0]

    def _draw(self, rng: random.Random, record: Any) -> tuple[tuple[int, ...], bool]:
        """A record's examples from ``rng``, and whether the draw took the usual sample."""
        k = self.k
        if k == 0:
            return (), True
        ids, pool, sample = self._ids, self.pool, rng.sample
        usual = True
        if self.exclude_record and record:
            drawn = sample(range(len(ids)), k + 1)
            if record is _UNKNOWN:
                positions = drawn[:k]
            else:
                positions = [p for p in drawn if pool[ids[p]] != record][:k]
        else:
            positions = sample(range(len(ids)), k)
            usual = not self.exclude_record  # (a falsy record drew k, not k + 1)
        if len(positions) < k:
            rest = [p for p in range(len(ids)) if pool[ids[p]] != record]
            if len(rest) < k:
                raise TaskFileError(
                    f"retriever 'shared_random' found only {len(rest)} of {k} examples that differ from the record",
                    key="num_fewshot",
                    hint="lower num_fewshot or name a larger fewshot_split",
                )
            positions = [rest[q] for q in sample(range(len(rest)), k)]
            usual = False
        if self.indices is None:  # (ids[p] is p)
            return tuple(positions), usual
        return tuple([ids[p] for p in positions]), usual


@dataclass(frozen=True)
class _Options:
    seed: int | None = None
    exclude_record: bool | None = None
    indices: list[int] | None = None


def shared_random(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> SharedRandom:
    chosen = check_options(_Options, options, what="retriever 'shared_random'")
    exclude = same_split if chosen.exclude_record is None else chosen.exclude_record
    indices = None
    if chosen.indices is not None:
        for i in chosen.indices:
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(pool):
                raise OptionError(
                    f"retriever 'shared_random': index {i!r} is not in the few-shot pool (0..{len(pool) - 1})",
                    key="indices",
                )
        indices = tuple(chosen.indices)
    k = k or 0
    available = len(indices) if indices is not None else len(pool)
    needed = k + 1 if exclude and k else k
    if needed > available:
        extra = " (one more than num_fewshot: the record itself is drawn and dropped)" if needed > k else ""
        raise TaskFileError(
            f"retriever 'shared_random' draws {needed} examples{extra} but the few-shot pool has {available}",
            key="num_fewshot",
            hint="lower num_fewshot or name a larger fewshot_split",
        )
    return SharedRandom(
        k=k,
        pool=pool,
        seed=seed if chosen.seed is None else chosen.seed,
        exclude_record=exclude,
        same_split=same_split,
        indices=indices,
    )
