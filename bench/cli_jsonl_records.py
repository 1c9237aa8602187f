"""The records of ``cli_jsonl_bench.py``'s workloads: one maker a kind of record
(``make(i, rng) -> dict``, seeded and varied: braces that are not placeholders,
non-ASCII text, padding, newlines) and :func:`write`, which writes ``n`` of them as
JSON Lines."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------

QUESTIONS = (
    "What is the value of {a} × {b}?",
    "Let {{x}} denote the number of apples in basket {a}. If {{x}} + {b} = {c}, what is {{x}}?",
    "Which of the following best describes item #{a} in a list of {c} concepts? ",
    "A car accelerates uniformly from rest to {a} m/s in {b} s. What is the magnitude of its acceleration?",
    "In case {a}, which statement is most accurate, given the evidence presented in study {c}?",
    "  Which of the following is closest to {a}/{b} (question {i})?",
    "Statement 1 | Every group of order {a} is cyclic. Statement 2 | Every subgroup of index {b} is normal.",
    "Which enzyme is inhibited in experiment {i} when substrate concentration rises to {a} mM?\n",
)
CHOICES = (
    ("{a}", "{b}", "{c}", "{d}"),
    ("True, True", "False, False", "True, False", "False, True"),
    ("{a} m/s²", "{b} m/s²", "{c} m/s²", "{d} m/s²"),
    ("Option {i}-α", "Option {i}-β", "Option {i}-γ", "Option {i}-δ"),
    ("It increases by {a}%", "It decreases by {b}%", "It stays the same", "It cannot be determined"),
)


def _values(i: int, rng: random.Random) -> dict[str, Any]:
    return {
        "i": i,
        "a": rng.randint(2, 999),
        "b": rng.randint(2, 99),
        "c": rng.randint(100, 9999),
        "d": rng.randint(1, 50),
    }


def mmlu_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    shape = CHOICES[(i + i // len(QUESTIONS)) % len(CHOICES)]
    return {
        "question": QUESTIONS[i % len(QUESTIONS)].format(**v),
        "subject": "anatomy",
        "choices": [c.format(**v) for c in shape],
        "answer": rng.randrange(4),
    }


SUBJECTS = ("abstract_algebra", "anatomy", "astronomy", "college_biology", "high_school_physics", "world_religions")


def subject_record(i: int, rng: random.Random) -> dict[str, Any]:
    return {**mmlu_record(i, rng), "subject": SUBJECTS[i % len(SUBJECTS)]}


def arc_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    n = 3 + i % 3
    labels = ["A", "B", "C", "D", "E"][:n] if i % 7 else ["1", "2", "3", "4", "5"][:n]
    texts = [f"{w} {v['a'] + k}" for k, w in enumerate(("sunlight", "the moon's pull", "wind", "erosion", "heat")[:n])]
    return {
        "id": f"Mercury_{7000000 + i}",
        "question": QUESTIONS[(i + 3) % len(QUESTIONS)].format(**v).strip(),
        "choices": {"text": texts, "label": labels},
        "answerKey": labels[rng.randrange(n)],
    }


def gen_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    total = v["a"] * v["b"]
    return {
        "question": f"Natalia sold clips to {v['a']} of her friends, {v['b']} each. How many clips did she sell?"
        + (" Answer in € if it is money." if i % 5 == 0 else ""),
        "answer": f"She sold {v['a']} * {v['b']} = <<{v['a']}*{v['b']}={total}>>{total} clips.\n#### {total}",
    }


def piqa_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    return {
        "goal": f"How do I keep {v['a']} cut flowers fresh for {v['b']} days?"
        + (" (à la française)" if i % 9 == 0 else ""),
        "sol1": f"Change the water every {v['d']} days and trim the stems by {v['b']} mm.",
        "sol2": f'Put them in the freezer at -{v["d"]} °C and "forget" them.',
        "label": rng.randrange(2),
    }


def boolq_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    return {
        "passage": f"The river {v['a']} flows for {v['c']} km through “valleys” and {{braces}} towns.\n"
        f"It has {v['b']} bridges." + (" Ünïcode ✓." if i % 4 == 0 else ""),
        "question": f"does the river {v['a']} have more than {v['d']} bridges",
        "label": rng.randrange(2),
        "idx": i,
    }


def squad_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    return {
        "context": f"The bridge {v['a']} spans {v['c']} m over the “river” {{Ost}}." if i % 3 else "",
        "question": f"How long is bridge {v['a']}?",
        "answers": {"text": [f"{v['c']} m", f"{v['c']} metres"]},
    }


def wino_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    return {
        "sentence": f"Sarah gave Maria {v['a']} apples because _ was generous.",
        "option1": "Sarah",
        "option2": "Maria" if i % 4 else "Zoë",
        "answer": str(1 + rng.randrange(2)),
    }


def hellaswag_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    return {
        "activity_label": ("Baking cookies", "Ice fishing", "Cutting hair")[i % 3],
        "ctx_a": f"A man pours {v['a']} g of flour into a bowl.",
        "ctx_b": "then he" if i % 2 else "the woman",
        "endings": [
            f"mixes it for {v['b']} minutes.",
            f"throws it {v['d']} m away.",
            "puts it in the oven.",
            f"eats {v['c']} cookies — ✓",
        ],
        "label": str(rng.randrange(4)),
    }


WORDS = "the of and to in is was for on that with as by at from this which or be an are it".split()


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def race_record(i: int, rng: random.Random) -> dict[str, Any]:
    article = " ".join(f"{_words(rng, 12).capitalize()} — “{i}”." for _ in range(25))
    options = [_words(rng, 4) for _ in range(4)]
    return {
        "article": article,
        "question": _words(rng, 9) + "?",
        "options": options,
        "answer": "ABCD"[rng.randrange(4)],
    }


def filters_record(i: int, rng: random.Random) -> dict[str, Any]:
    question = f"  {_words(rng, 6)}\n{_words(rng, 7)} {i}{' – ünï' if i % 5 == 0 else ''}?  "
    return {"question": question, "choices": [_words(rng, 3) for _ in range(4)], "answer": rng.randrange(4)}


def pro_record(i: int, rng: random.Random) -> dict[str, Any]:
    options = [_words(rng, 3) + f" {k}" for k in range(10)]
    return {"question": _words(rng, 20) + f" ({i})", "options": options, "answer_index": rng.randrange(10)}


def set_record(i: int, rng: random.Random) -> dict[str, Any]:
    return {"question": f"  {_words(rng, 15)} {i}?\n", "answer": f"{_words(rng, 5)} #### {rng.randrange(1000)}"}


def page_record(i: int, rng: random.Random) -> dict[str, Any]:
    title = f" = {_words(rng, 3).title()} {i} = \n"
    paragraphs = [" ".join(f"{_words(rng, 10)} @-@ {rng.randrange(1900, 2020)} ." for _ in range(5)) for _ in range(3)]
    return {"page": title + "".join(f" \n {p} \n" for p in paragraphs)}


def oc_record(i: int, rng: random.Random) -> dict[str, Any]:
    m = mmlu_record(i, rng)
    return {"input": m["question"], **dict(zip("ABCD", m["choices"])), "target": "ABCD"[m["answer"]]}


def sciq_record(i: int, rng: random.Random) -> dict[str, Any]:
    v = _values(i, rng)
    return {
        "question": f"Which of these is made of {v['a']} cells{' (µm)' if i % 6 == 0 else ''}? ({i})",
        "choices": {
            "correct": f"tissue {v['b']}",
            "distractors": [f"organ {v['c']}", f"Atom {v['d']}", f"molecule {v['a']}"],
        },
        "support": f"Tissues are groups of {v['a']} similar cells.",
    }


def write(path: Path, make: Any, n: int, seed: int, start: int = 0) -> Path:
    rng = random.Random(seed)
    dumps = json.dumps
    with path.open("w", encoding="utf-8") as handle:
        for i in range(start, start + n):
            handle.write(dumps(make(i, rng), ensure_ascii=False) + "\n")
    return path
