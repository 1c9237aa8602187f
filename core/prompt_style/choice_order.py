"""The order choices are shown in: seeded shuffles, rotations (OpenCompass's
CircularEval), the gold answer at a given position.

A *permutation* is a tuple ``p`` of original choice indices in the order shown:
the choice at position ``j`` is the record's choice ``p[j]``, and a gold index
``g`` becomes ``p.index(g)``. Every permutation is a pure function of the order,
the record's index, its number of choices and its gold answer, so that a record
gets the same order in any process, partition or rendering order (seeded by
the seed and the record's index only, with SHA-256; never ``hash()`` or a
generator shared across records).

Two ways to apply one, chosen by the renderer: to the extracted choices (a
style that shows ``doc_to_choice``'s list), or to the record itself, when its
choices are columns that a template reads (OpenCompass's ``{A}``, ``{B}``, ...),
exactly as OpenCompass's ``CircularDatasetMeta`` rewrites a record
(:func:`permute_record`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import string
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import OptionError, TargetError

__all__ = [
    "ChoiceOrder",
    "rotation",
    "circular_pattern",
    "permute_record",
    "record_gold",
    "OPENCOMPASS_CIRCULAR",
    "option_keys_for",
]

_ORDER = re.compile(r"(original|reversed|circular|all_possible)|(shuffle|rotate|correct):(-?\d+)")


def rotation(n: int, k: int) -> tuple[int, ...]:
    """OpenCompass's circular pattern ``k`` as a permutation: the option keys shifted by
    ``k`` (``BCDA`` for ``k`` 1), so that original choice ``i`` is shown at ``(i + k) % n``."""
    return tuple((j - k) % n for j in range(n))


def circular_pattern(permutation: Sequence[int], keys: Sequence[str]) -> list[str]:
    """OpenCompass's ``circular_pattern`` of a permutation: for each original option,
    the key it is shown under (``['B', 'C', 'D', 'A']`` for rotation 1)."""
    pattern = [""] * len(permutation)
    for shown, original in enumerate(permutation):
        pattern[original] = keys[shown]
    return pattern


def shuffled(n: int, seed: int, index: int) -> tuple[int, ...]:
    """A uniformly random order of ``n`` choices for record ``index``: a Fisher-Yates
    shuffle drawing 64-bit numbers from SHA-256 of ``"SEED:INDEX:BLOCK"`` — the same
    order in any process, platform or Python, and for a record whatever is rendered
    before it (a generator seeded per record costs 15 µs; this, 2 µs)."""
    order = list(range(n))
    if n < 2:
        return tuple(order)
    # The draws, read four to a digest (a digest is four 64-bit numbers, big-endian, the
    # next digest's block taken when they are used up), unpacked at once.
    draws = _FOUR(_sha256(f"{seed}:{index}:0".encode()).digest())
    k, block = 0, 1
    for i in range(n - 1, 0, -1):
        if k == 4:
            draws = _FOUR(_sha256(f"{seed}:{index}:{block}".encode()).digest())
            block += 1
            k = 0
        j = draws[k] % (i + 1)
        k += 1
        order[i], order[j] = order[j], order[i]
    return tuple(order)


_FOUR = struct.Struct(">4Q").unpack
_sha256 = hashlib.sha256


@dataclass(frozen=True)
class ChoiceOrder:
    """How to order a record's choices: ``original``, ``reversed``, ``shuffle:SEED``
    (seeded per record: :func:`shuffled`), ``rotate:K`` (OpenCompass's circular pattern ``K``),
    ``correct:K`` (the gold choice at position ``K``, 0-based, the others in their
    order), ``circular`` (every rotation: one prompt per choice) or ``all_possible``
    (every permutation, in ``itertools.permutations`` order: OpenCompass's
    ``circular_patterns='all_possible'``)."""

    kind: str
    value: int = 0

    @classmethod
    def parse(cls, text: str, *, key: str = "choice_order") -> ChoiceOrder:
        """``ChoiceOrder.parse("shuffle:3")``.

        :raises OptionError: for text that is not an order.
        """
        match = _ORDER.fullmatch(str(text).strip())
        if match is None:
            raise OptionError(
                f"{text!r} is not a choice order",
                key=key,
                hint="use original, reversed, shuffle:SEED, rotate:K, correct:K, circular or all_possible",
            )
        if match.group(1):
            return cls(match.group(1))
        value = int(match.group(3))
        if match.group(2) == "correct" and value < 0:
            raise OptionError(f"correct:{value}: the position must be 0 or more", key=key)
        return cls(match.group(2), value)

    def __str__(self) -> str:
        if self.kind in ("original", "reversed", "circular", "all_possible"):
            return self.kind
        return f"{self.kind}:{self.value}"

    @property
    def many(self) -> bool:
        """Whether a record gives several prompts (``circular``, ``all_possible``)."""
        return self.kind in ("circular", "all_possible")

    def permutations(self, index: int, n: int, gold: Any) -> list[tuple[int, ...]]:
        """The orders of record ``index`` (``n`` choices, gold index or list ``gold``).

        :raises TargetError: ``correct:K`` for a record with ``K + 1`` choices or fewer,
            or several gold answers.
        """
        kind = self.kind
        if kind == "original":
            return [tuple(range(n))]
        if kind == "reversed":
            return [tuple(range(n - 1, -1, -1))]
        if kind == "shuffle":
            return [shuffled(n, self.value, index)]
        if kind == "rotate":
            return [rotation(n, self.value % n if n else 0)]
        if kind == "circular":
            return [rotation(n, k) for k in range(n)]
        if kind == "all_possible":
            if n > 8:
                raise TargetError(
                    f"all_possible orders of {n} choices are {math.factorial(n):,} prompts per record",
                    key="choice_order",
                    hint="use circular (one rotation per choice), or shuffle:SEED",
                )
            out = []
            for shown_at in itertools.permutations(range(n)):  # OpenCompass's get_all_possible_patterns
                permutation = [0] * n
                for original, position in enumerate(shown_at):
                    permutation[position] = original
                out.append(tuple(permutation))
            return out
        # correct:K
        if isinstance(gold, list):
            if len(gold) != 1:
                raise TargetError(
                    f"correct:{self.value} places one gold choice, but the record has {len(gold)}",
                    key="choice_order",
                )
            gold = gold[0]
        if not isinstance(gold, int):
            raise TargetError(
                f"correct:{self.value} needs the gold choice, but the record has none", key="choice_order"
            )
        if self.value >= n:
            raise TargetError(
                f"correct:{self.value} places the gold choice at position {self.value}, but the record has {n} choices",
                key="choice_order",
                hint=f"use a position from 0 to {n - 1}",
            )
        others = [i for i in range(n) if i != gold]
        return [tuple(others[: self.value] + [gold] + others[self.value :])]


def remap_gold(gold: Any, permutation: Sequence[int]) -> Any:
    """The gold index (or list of indices) under ``permutation``."""
    if gold is None:
        return None
    if isinstance(gold, list):
        return sorted(permutation.index(g) for g in gold)
    return permutation.index(gold)


# OpenCompass 0.5.4's CircularEval datasets (opencompass/datasets/circular.py): the
# dataset class (plain or Circular*) -> its option keys and answer key ("position":
# the answer is the letter of a position, remapped as its answer_key_switch_method).
OPENCOMPASS_CIRCULAR: Mapping[str, tuple[tuple[str, ...], str | None]] = {
    "CEvalDataset": (tuple("ABCD"), "answer"),
    "MMLUDataset": (tuple("ABCD"), "target"),
    "CMMLUDataset": (tuple("ABCD"), "answer"),
    "commonsenseqaDataset": (tuple("ABCDE"), "answerKey"),
    "ARCDataset": (("textA", "textB", "textC", "textD"), "answerKey"),
    "HellaswagDataset_V2": (tuple("ABCD"), "label"),
    "OBQADataset": (tuple("ABCD"), "answerKey"),
    "RaceDataset": (tuple("ABCD"), "answer"),
    "XiezhiDataset": (tuple("ABCD"), "answer"),
    "SiqaDatasetV3": (tuple("ABC"), "answer"),
    "PIQADatasetV2": (("sol1", "sol2"), "answer"),
}
_CIRCULAR_NAMES = {
    "CircularCEvalDataset": "CEvalDataset",
    "CircularMMLUDataset": "MMLUDataset",
    "CircularCMMLUDataset": "CMMLUDataset",
    "CircularCSQADataset": "commonsenseqaDataset",
    "CircularARCDataset": "ARCDataset",
    "CircularHSWAGDataset": "HellaswagDataset_V2",
    "CircularOBQADataset": "OBQADataset",
    "CircularRaceDataset": "RaceDataset",
    "CircularXiezhiDataset": "XiezhiDataset",
    "CircularsiqaDataset": "SiqaDatasetV3",
    "CircularPIQADataset": "PIQADatasetV2",
}
_NUMBERED_COLUMN = re.compile(r"(.*?)([A-Z]|\d+)")


def option_keys_for(
    dataset_type: str | None, input_columns: Sequence[str] | None, output_column: str | None
) -> tuple[tuple[str, ...], str | None] | None:
    """The option keys and answer key of an OpenCompass dataset: its CircularEval
    class's when OpenCompass has one for the dataset type, else the input columns
    named by single capital letters (``A``, ``B``, ...), else columns that share a
    prefix and end in consecutive letters or numbers (``textA``..., ``sol1``...);
    ``None`` when no columns look like options."""
    if dataset_type:
        name = dataset_type.rsplit(".", 1)[-1]
        name = _CIRCULAR_NAMES.get(name, name)
        if name in OPENCOMPASS_CIRCULAR:
            return OPENCOMPASS_CIRCULAR[name]
    columns = [c for c in (input_columns or ()) if isinstance(c, str)]
    letters = [c for c in columns if len(c) == 1 and c in string.ascii_uppercase]
    if len(letters) >= 2 and letters == list(string.ascii_uppercase[: len(letters)]):
        return tuple(letters), output_column
    groups: dict[str, list[str]] = {}
    for column in columns:
        match = _NUMBERED_COLUMN.fullmatch(column)
        if match and match.group(1):
            groups.setdefault(match.group(1), []).append(column)
    for prefix, found in groups.items():
        tails = [c[len(prefix) :] for c in found]
        if len(found) >= 2 and (
            tails == list(string.ascii_uppercase[: len(found)])
            or tails in ([str(i) for i in range(1, len(found) + 1)], [str(i) for i in range(len(found))])
        ):
            return tuple(found), output_column
    return None


def _position_letter(value: Any, n: int) -> int | None:
    if isinstance(value, str) and len(value) == 1 and "A" <= value <= string.ascii_uppercase[min(n, 26) - 1]:
        return ord(value) - ord("A")
    return None


def record_gold(record: Mapping[str, Any], keys: Sequence[str], answer_key: str | None) -> tuple[int, Any]:
    """``(number of choices, gold index or None)`` of a record whose choices are
    ``keys`` (columns) or the one list field ``keys[0]``."""
    if len(keys) == 1:
        choices = record.get(keys[0])
        if not isinstance(choices, list):
            raise TargetError(
                f"option key {keys[0]!r} holds {type(choices).__name__}, not a list of choices",
                key="option_keys",
                hint="name the field that holds the list of choices, or the columns of the choices",
            )
        n = len(choices)
    else:
        missing = [k for k in keys if k not in record]
        if missing:
            raise TargetError(
                f"the record has no option column {missing[0]!r}",
                key="option_keys",
                hint=f"the record has: {', '.join(map(str, record))}",
            )
        n = len(keys)
    if answer_key is None or answer_key not in record:
        return n, None
    answer = record[answer_key]
    if len(keys) > 1 and answer in keys:
        return n, list(keys).index(answer)
    letter = _position_letter(answer, n)
    if letter is not None:
        return n, letter
    if isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < n:
        return n, answer
    if len(keys) == 1 and answer in record[keys[0]]:
        return n, record[keys[0]].index(answer)
    return n, None


def permute_record(
    record: Mapping[str, Any], permutation: Sequence[int], keys: Sequence[str], answer_key: str | None
) -> dict[str, Any]:
    """A copy of ``record`` with its choices in the order of ``permutation`` and its
    answer remapped, as OpenCompass's ``CircularDatasetMeta.make_circular_items``
    rewrites a record: option ``keys[j]`` takes the value of ``keys[p[j]]``; an
    answer that is an option key moves with its option; an answer that is a
    position (a letter ``A``... as ARC's and PIQA's ``answer_key_switch_method``
    read it, or an index) is remapped; an answer that is the choice's text stays.
    With one key naming a list field, the list is permuted."""
    out = dict(record)
    if len(keys) == 1:
        choices = record[keys[0]]
        out[keys[0]] = [choices[p] for p in permutation]
    else:
        for shown, original in enumerate(permutation):
            out[keys[shown]] = record[keys[original]]
    if answer_key is None or answer_key not in record:
        return out
    answer = record[answer_key]
    n = len(permutation)
    if len(keys) > 1 and answer in keys:
        out[answer_key] = keys[list(permutation).index(list(keys).index(answer))]
        return out
    letter = _position_letter(answer, n)
    if letter is not None:
        out[answer_key] = string.ascii_uppercase[list(permutation).index(letter)]
    elif isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < n:
        out[answer_key] = list(permutation).index(answer)
    elif isinstance(answer, list) and all(isinstance(a, int) and 0 <= a < n for a in answer):
        out[answer_key] = sorted(list(permutation).index(a) for a in answer)
    return out
