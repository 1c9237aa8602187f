"""A made-up "model" scoring the lines of ``prompt-style grid``, for the worked example
of docs/format-sensitivity.md: it writes the results format ``prompt-style spread``
reads. Nothing here is a real model; its accuracy depends on the format on purpose.

    uv run prompt-style grid examples/mmlu/task.yaml --sample 40 --seed 0 > grid.jsonl
    uv run python examples/format_sensitivity/made_up_scorer.py < grid.jsonl > results.jsonl
    uv run prompt-style spread results.jsonl --plot spread.png

Its chance of answering a record right starts at 60% and moves with the cell's
settings (letters help, Roman numerals hurt, a gold answer shown first helps:
position bias), with a per-record difficulty; each draw is a hash of the cell and
the record, so the results are the same on every run.
"""

from __future__ import annotations

import hashlib
import json
import sys

EFFECTS = {
    ("labels", "A"): 0.10,
    ("labels", "a"): 0.02,
    ("labels", "1"): -0.04,
    ("labels", "i"): -0.14,
    ("labels", "I"): -0.10,
    ("casing", "upper"): -0.06,
    ("casing", "lower"): -0.02,
    ("answer_prefix", "Answer:"): 0.05,
    ("answer_prefix", "The answer is"): -0.05,
    ("spacing", " "): -0.07,
    ("choice_spacing", " | "): -0.04,
    ("instruction", "choose"): 0.03,
}


def draw(*parts: object) -> float:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def main() -> None:
    for text in sys.stdin:
        line = json.loads(text)
        settings = line["settings"]
        chance = 0.60 + sum(EFFECTS.get((axis, value), 0.0) for axis, value in settings.items())
        if line["target"] == 0:
            chance += 0.15  # the gold answer shown first: position bias
        chance += 0.3 * (draw("difficulty", line["index"]) - 0.5)
        correct = draw(line["cell"], line["index"]) < chance
        print(json.dumps({"cell": line["cell"], "record": line["index"], "correct": correct, "settings": settings}))


if __name__ == "__main__":
    main()
