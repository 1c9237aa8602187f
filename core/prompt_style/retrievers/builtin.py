"""Built-in retrievers: ``zero``, ``fixed``, ``first_n`` and seeded ``random``, plus
OpenCompass's ``fixk``, ``opencompass_random`` and ``sliding_window`` (``opencompass.py``).

Randomness comes from ``random.Random`` seeded with the text ``"{seed}:{index}"``
(hashed with SHA-512 by the standard library), never from process state or
``hash()``: a record gets the same examples in any process, partition or order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._lazy import Lazy
from .._markers import hookimpl
from ..errors import OptionError, TaskFileError
from ..options import check_options
from .checks import NoOptions, SeedOption, check_ids_agree, check_pool_size, example_count

_LESS_ITSELF = " (less the record itself, as the pool is the evaluated split)"


@dataclass(frozen=True)
class Zero:
    """No examples."""

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        return ()

    def shared_selection(self) -> Sequence[int]:
        return ()


@dataclass(frozen=True)
class Fixed:
    """The same examples, by pool index, for every record."""

    ids: tuple[int, ...] = ()

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        return self.ids

    def shared_selection(self) -> Sequence[int]:
        return self.ids


@dataclass(frozen=True)
class FirstN:
    """The first ``k`` pool records.

    When the pool is the evaluated split (or ``exclude_record`` says so), pool
    records equal to the one being rendered (itself and any duplicate of it)
    are skipped, as lm-evaluation-harness does.
    """

    k: int = 0
    pool: Sequence[Mapping[str, Any]] = field(default=(), repr=False)
    same_split: bool = False
    """Skip pool records equal to the rendered one (the name is historical:
    it is true when the pool is the evaluated split, unless told otherwise)."""

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        if not self.same_split:
            return range(self.k)
        picked: list[int] = []
        for i, candidate in enumerate(self.pool):
            if len(picked) == self.k:
                break
            if candidate != record:
                picked.append(i)
        if len(picked) < self.k:
            raise TaskFileError(
                f"retriever 'first_n' found only {len(picked)} of {self.k} examples that differ "
                "from the record (the few-shot pool holds it or duplicates of it)",
                key="num_fewshot",
                hint="name a separate fewshot_split or lower num_fewshot",
            )
        return picked

    def shared_selection(self) -> Sequence[int] | None:
        """The first ``k`` pool records for every record, unless records equal to
        the rendered one are skipped (then the selection depends on the record)."""
        return None if self.same_split else range(self.k)


@dataclass(frozen=True)
class Random:
    """``k`` distinct pool records drawn per record from ``Random(f"{seed}:{index}")``."""

    k: int = 0
    size: int = 0
    same_split: bool = False
    seed: int = 1234

    def select(self, index: int, record: Mapping[str, Any]) -> Sequence[int]:
        if not self.k:
            return ()
        import random  # on use: listing plugins does not import it

        rng = random.Random(f"{self.seed}:{index}")
        if not self.same_split:
            return tuple(rng.sample(range(self.size), self.k))
        # Draw from the pool without the record, then map past its index.
        picked = rng.sample(range(self.size - 1), self.k)
        return tuple([i + 1 if i >= index else i for i in picked])


@dataclass(frozen=True)
class _FixedOptions:
    ids: list[int] | None = None


@dataclass(frozen=True)
class _FirstNOptions:
    exclude_record: bool | None = None
    """Skip pool records equal to the rendered one; ``None``: when the pool is
    the evaluated split (lm-evaluation-harness decides by its split names)."""


def zero(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> Zero:
    check_options(NoOptions, options, what="retriever 'zero'")
    if k:
        raise TaskFileError(
            f"retriever 'zero' gives no examples but num_fewshot is {k}",
            key="num_fewshot",
            hint="drop num_fewshot or choose another retriever",
        )
    return Zero()


def fixed(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> Fixed:
    ids = check_options(_FixedOptions, options, what="retriever 'fixed'").ids
    if not ids:
        raise OptionError("retriever 'fixed' needs ids: a list of few-shot pool indices", key="ids")
    for i in ids:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(pool):
            raise OptionError(
                f"retriever 'fixed': id {i!r} is not an index of the few-shot pool (0..{len(pool) - 1})",
                key="ids",
            )
    check_ids_agree("fixed", ids, k)
    if same_split:
        raise TaskFileError(
            "retriever 'fixed' draws from the evaluated split, so some records would be their own example",
            key="fewshot_split",
            hint="name a separate fewshot_split",
        )
    return Fixed(tuple(ids))


def first_n(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> FirstN:
    exclude = check_options(_FirstNOptions, options, what="retriever 'first_n'").exclude_record
    exclude = same_split if exclude is None else exclude
    k = example_count("first_n", k, default=0)
    note = _LESS_ITSELF if same_split else ""
    check_pool_size("first_n", k, len(pool) - (1 if same_split and exclude else 0), note=note)
    return FirstN(k=k, pool=pool if exclude else (), same_split=exclude)


def random_(
    *, options: dict[str, Any], pool: Sequence[Mapping[str, Any]], k: int | None, same_split: bool, seed: int
) -> Random:
    chosen = check_options(SeedOption, options, what="retriever 'random'").seed
    k = example_count("random", k, default=0)
    check_pool_size("random", k, len(pool) - (1 if same_split else 0), note=_LESS_ITSELF if same_split else "")
    return Random(k=k, size=len(pool), same_split=same_split, seed=seed if chosen is None else chosen)


@hookimpl
def retrieve_examples():
    # shared_random and OpenCompass's retrievers are imported when a task uses them.
    return {
        "zero": zero,
        "fixed": fixed,
        "first_n": first_n,
        "random": random_,
        "shared_random": Lazy("prompt_style.retrievers.shared_random:shared_random"),
        **{name: Lazy(f"prompt_style.retrievers.opencompass:{name}") for name in OPENCOMPASS_RETRIEVERS},
    }


OPENCOMPASS_RETRIEVERS = ("fixk", "opencompass_random", "sliding_window")
"""The names of ``retrievers/opencompass.py``'s ``CATALOG`` (tests/test_fastpath.py checks they agree)."""
