"""``standardize_splits``: re-balancing a task's splits into train, validation and test.

The sizes are SciRIFF's (``Instantiator.standardize_splits``, fraction 0.2):

* all three splits present: kept as they are;
* two present (train and one evaluation split): the evaluation split becomes
  ``test``, and ``validation`` is carved from train: ``min(len(eval), round(0.2 * len(train)))``
  records;
* one present: ``round(0.2 * n)`` records become ``test``, as many more
  ``validation``, the rest ``train``;
* two present without train: an error, as in SciRIFF.

Unlike SciRIFF, which seeds from Python's ``hash()`` of the task name (salted
per process, so its splits differ from run to run) and splits the rendered
instances (so one record's templates can land in different splits), the
choice here is made per *record*, reproducibly: which records are carved out
is drawn by selection sampling (every subset of the right size equally likely)
from ``random.Random(f"{seed}:{task}:{split}")``, where ``seed`` is 1234
unless given. Records keep their order within each split. The plan is made
from the record counts alone, so records stream through in constant memory.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...errors import DataError

__all__ = ["SPLIT_FRACTION", "Plan", "plan_splits"]

SPLIT_FRACTION = 0.2


@dataclass
class Carve:
    """How many records of one source split go to each target split."""

    source: str
    counts: dict[str, int]
    """Target split -> number of records; the counts add up to the source's size."""
    seed: str
    """The text seeding the selection."""

    def assigner(self) -> _Assigner:
        return _Assigner(dict(self.counts), random.Random(self.seed))


class _Assigner:
    """Selection sampling: each record goes to a target with probability
    (still needed there) / (records left), which gives exact counts and a
    uniformly random choice, one record at a time."""

    def __init__(self, counts: dict[str, int], rng: random.Random) -> None:
        self.left = dict(counts)
        self.remaining = sum(counts.values())
        self.rng = rng
        self.order = list(counts)

    def next(self) -> str:
        if self.remaining <= 0:
            raise DataError("the split has more records than were counted; was the data file changed while reading?")
        if len(self.order) == 1:
            target = self.order[0]
        else:
            draw = self.rng.randrange(self.remaining)
            for target in self.order:
                if draw < self.left[target]:
                    break
                draw -= self.left[target]
        self.left[target] -= 1
        self.remaining -= 1
        return target


@dataclass
class Plan:
    """Where each source split's records go."""

    carves: dict[str, Carve] = field(default_factory=dict)
    """Source split -> its carve."""
    notes: list[str] = field(default_factory=list)

    def sizes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for carve in self.carves.values():
            for target, count in carve.counts.items():
                out[target] = out.get(target, 0) + count
        return out


def plan_splits(
    counts: Mapping[str, int],
    *,
    task: str,
    seed: int | str = 1234,
    standardize: bool = True,
) -> Plan:
    """The plan for splits of the given sizes (source split -> number of records).

    :raises DataError: for two splits without train, or no data at all.
    """
    present = [s for s in ("train", "validation", "test") if s in counts] + [
        s for s in counts if s not in ("train", "validation", "test")
    ]
    if not present:
        raise DataError(f"task {task!r} has no data to instantiate")

    def keep(split: str, target: str | None = None) -> Carve:
        return Carve(split, {target or split: counts[split]}, f"{seed}:{task}:{split}")

    if not standardize or set(present) == {"train", "validation", "test"}:
        return Plan({split: keep(split) for split in present})
    if len(present) == 2:
        if "train" not in present:
            raise DataError(
                f"task {task!r} has {' and '.join(present)} but no train split to carve validation from",
                hint="set standardize_splits: false to keep the splits as they are",
            )
        evaluation = next(s for s in present if s != "train")
        n_validation = min(counts[evaluation], round(counts["train"] * SPLIT_FRACTION))
        train = Carve(
            "train",
            {"train": counts["train"] - n_validation, "validation": n_validation},
            f"{seed}:{task}:train",
        )
        plan = Plan({"train": train, evaluation: keep(evaluation, "test")})
        renamed = f"; {evaluation} becomes test" if evaluation != "test" else ""
        plan.notes.append(f"validation: {n_validation} records carved from train{renamed}")
        return plan
    if len(present) == 1:
        (only,) = present
        n = counts[only]
        n_split = round(n * SPLIT_FRACTION)
        carve = Carve(only, {"train": n - 2 * n_split, "validation": n_split, "test": n_split}, f"{seed}:{task}:{only}")
        plan = Plan({only: carve})
        plan.notes.append(f"{only} split three ways: {n - 2 * n_split} train, {n_split} validation, {n_split} test")
        return plan
    raise DataError(f"task {task!r} has unexpected splits: {', '.join(present)}")
