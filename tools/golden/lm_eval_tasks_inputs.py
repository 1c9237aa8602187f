"""Write the records the lm-eval task-file golden cases render (tests/golden/lm_eval_tasks/inputs/).

Hand-written records in the shapes of the real datasets (ARC, MMLU, HellaSwag, GPQA,
GSM8K, LAMBADA, WikiText, BBH, KorMedMCQA), made up for testing, with the awkward
values on purpose: leading and trailing whitespace, ``{{ }}`` and ``{% raw %}`` in the
data, non-ASCII text, numeric ARC labels, 3 and 5 choices, a null GPQA answer,
HellaSwag's ``[title]`` artefacts. Deterministic: re-running writes the same bytes.

    python tools/golden/lm_eval_tasks_inputs.py
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "golden" / "lm_eval_tasks" / "inputs"


def _arc(i: int, question: str, texts: list[str], answer: int, numeric: bool = False) -> dict:
    labels = [str(n + 1) for n in range(len(texts))] if numeric else [chr(65 + n) for n in range(len(texts))]
    return {
        "id": f"Made_{i:03d}",
        "question": question,
        "choices": {"text": texts, "label": labels},
        "answerKey": labels[answer],
    }


def arc() -> dict[str, list[dict]]:
    test = [
        _arc(0, AWKWARD[0], ["49", "{{ 7*7 }}", "7*7", "an error"], 0),
        _arc(1, AWKWARD[1], ["{{x}}", "x", "{% raw %}"], 0),
        _arc(2, AWKWARD[2], ["90 °C", "100 °C", "110 °C", "120 °C", "373 °C"], 1),
        _arc(3, AWKWARD[3], ["alpha (α)", "beta (β)", "gamma (γ)"], 0, numeric=True),
        _arc(4, "Which planet is closest to the Sun? ", [" Mercury", "Venus ", "Earth", "Mars"], 0, numeric=True),
        _arc(5, AWKWARD[4], ["{x}", "{0}", "both", "neither"], 2),
        _arc(6, AWKWARD[5], ["they are data", "luck", "magic", "Jinja"], 0),
        _arc(
            7,
            "What do plants take in for photosynthesis?",
            ["oxygen", "carbon dioxide", "nitrogen", "helium", "neon"],
            1,
        ),
        _arc(
            8,
            "Which is a mixture: 'salt water' or \"pure water\"?",
            ["'salt water'", '"pure water"', "both", "neither"],
            0,
        ),
        _arc(9, "Which unit measures force?", ["newton", "joule", "watt", "pascal"], 0, numeric=True),
        _arc(10, "Ice melts at which temperature (°F)?", ["0", "32", "100"], 1),
        _arc(11, "Which is a renewable resource?", ["coal", "oil", "wind", "natural gas"], 2),
    ]
    topics = [
        ("Which gas do animals breathe out?", ["oxygen", "carbon dioxide", "hydrogen", "argon"], 1),
        ("What is the boiling point of water at sea level (°C)?", ["50", "100", "150", "200"], 1),
        ("Which organ pumps blood?", ["lung", "liver", "heart", "kidney"], 2),
        ("Which force pulls objects toward Earth?", ["magnetism", "gravity", "friction"], 1),
        ("What is H₂O?", ["water", "salt", "sugar", "air", "oil"], 0),
        ("Which layer of Earth is liquid?", ["crust", "mantle", "outer core", "inner core"], 2),
        ("Which is a mammal?", ["shark", "whale", "trout", "eel"], 1),
        ("Which tool measures temperature?", ["ruler", "thermometer", "scale", "clock"], 1),
        ("What makes a rainbow?", ["refraction of light", "sound", "wind", "heat"], 0),
        ("Which season follows winter?", ["autumn", "summer", "spring"], 2),
    ]
    train = []
    for n in range(30):
        question, texts, answer = topics[n % len(topics)]
        variant = f"{question} (set {n // len(topics) + 1})" if n >= len(topics) else question
        if n == 3:
            variant = "  " + variant + "  "
        if n == 7:
            variant = variant + " {{ not a template }}"
        train.append(_arc(100 + n, variant, texts, answer, numeric=n % 4 == 1))
    return {"test": test, "train": train}


def _mmlu(subject: str, question: str, choices: list[str], answer: int) -> dict:
    return {"question": question, "subject": subject, "choices": choices, "answer": answer}


def mmlu() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    anatomy = "anatomy"
    out["anatomy_test"] = [
        _mmlu(anatomy, "Which bone is the longest in the human body? ", ["femur", "tibia", "humerus", "radius"], 0),
        _mmlu(anatomy, AWKWARD[0], ["{{ 49 }}", "49", "{% raw %}", "none"], 1),
        _mmlu(anatomy, "Le cœur a combien de cavités?\n", ["deux", "trois", "quatre", "cinq"], 2),
        _mmlu(anatomy, "Which muscle is  under  the ribs?", ["diaphragm", "deltoid", "biceps", "soleus"], 0),
    ]
    out["anatomy_dev"] = [
        _mmlu(anatomy, "How many chambers does the heart have?", ["2", "3", "4", "5"], 2),
        _mmlu(anatomy, "Which organ filters blood? ", ["kidney", "stomach", "skin", "bone"], 0),
        _mmlu(anatomy, "Where is the femur?", ["arm", "leg", "skull", "spine"], 1),
        _mmlu(anatomy, "What does {x} stand for here?", ["nothing", "a field", "{x}", "x"], 3),
        _mmlu(anatomy, "Which cells carry oxygen (O₂)?", ["red cells", "white cells", "platelets", "neurons"], 0),
    ]
    algebra = "abstract_algebra"
    out["abstract_algebra_test"] = [
        _mmlu(algebra, "Find the order of the group Z_4 × Z_6.", ["10", "12", "24", "48"], 2),
        _mmlu(algebra, "Is every group of prime order cyclic?  ", ["True", "False", "Only for 2", "Unknown"], 0),
        _mmlu(algebra, "What is {{ 2 + 2 }} in Z_3?", ["0", "1", "2", "{{ 4 }}"], 1),
    ]
    out["abstract_algebra_dev"] = [
        _mmlu(algebra, "Z_2 has how many elements?", ["1", "2", "3", "4"], 1),
        _mmlu(algebra, "The identity of (Z, +) is", ["0", "1", "-1", "none"], 0),
        _mmlu(algebra, "Is Z_5 a field?", ["yes", "no", "sometimes", "unknown"], 0),
        _mmlu(algebra, "Order of S_3?", ["3", "6", "9", "27"], 1),
        _mmlu(algebra, "Groups of order 4, up to isomorphism:", ["1", "2", "3", "4"], 1),
    ]
    history = "high_school_world_history"
    out["high_school_world_history_test"] = [
        _mmlu(
            history,
            "This question refers to the following text.\n«Liberté, égalité, fraternité»\nWhich revolution?",
            ["French", "Russian", "American", "Chinese"],
            0,
        ),
        _mmlu(history, "In which year did the Berlin Wall fall?", ["1961", "1979", "1989", "1991"], 2),
    ]
    out["high_school_world_history_dev"] = [
        _mmlu(history, "Who wrote the Analects?", ["Confucius", "Laozi", "Mencius", "Mozi"], 0),
        _mmlu(history, "The Silk Road linked", ["China and Rome", "Peru and Spain", "Mali and Ghana", "none"], 0),
        _mmlu(history, "Year of the Hegira?", ["570", "622", "632", "661"], 1),
        _mmlu(history, "Which empire built Machu Picchu?", ["Aztec", "Maya", "Inca", "Olmec"], 2),
        _mmlu(history, "The Meiji Restoration began in", ["1853", "1868", "1894", "1905"], 1),
    ]
    return out


def _hellaswag(i: int, label: str, a: str, b: str, endings: list[str], gold: int, split: str) -> dict:
    return {
        "ind": i,
        "activity_label": label,
        "ctx_a": a,
        "ctx_b": b,
        "ctx": f"{a} {b}",
        "endings": endings,
        "source_id": f"made~{i}",
        "split": split,
        "split_type": "indomain",
        "label": str(gold),
    }


def hellaswag() -> dict[str, list[dict]]:
    validation = [
        _hellaswag(
            0,
            "Making a cake",
            "A woman cracks eggs into a bowl.",
            "she",
            ["whisks them.", "throws the bowl.", "sings [title] loudly.", "leaves."],
            0,
            "val",
        ),
        _hellaswag(
            1,
            "Home and Garden",
            "[header] How to plant tulips [title] Dig a hole.",
            "then",
            ["place the bulb [step] pointy end up.", "eat it.", "fly away.", "paint it."],
            0,
            "val",
        ),
        _hellaswag(
            2,
            "Surfing",
            "  A man paddles out.  ",
            "he",
            ["stands up on the board.", "reads {{ a book }}.", "cooks.", "sleeps."],
            0,
            "val",
        ),
        _hellaswag(
            3,
            "Café",
            "Un serveur apporte un café.",
            "il",
            ["le pose sur la table.", "le boit.", "part.", "chante."],
            0,
            "val",
        ),
        _hellaswag(
            4,
            "Running",
            "The runner ties her shoes.",
            "",
            ["she starts running.", "she naps.", "she swims.", "she cooks."],
            0,
            "val",
        ),
        _hellaswag(
            5,
            "Piano",
            "A boy sits at a piano.",
            "he",
            ["plays a scale.", "eats the keys.", "{% raw %} leaves.", "flies."],
            3,
            "val",
        ),
    ]
    train = [
        _hellaswag(
            10 + n,
            f"Activity {n}",
            f"Someone starts task {n}.",
            "they",
            [f"finish task {n}.", "stop.", "wait.", "leave."],
            n % 4,
            "train",
        )
        for n in range(8)
    ]
    return {"validation": validation, "train": train}


def _gpqa(question: str, wrong: list[str | None], right: str) -> dict:
    return {
        "Question": question,
        "Incorrect Answer 1": wrong[0],
        "Incorrect Answer 2": wrong[1],
        "Incorrect Answer 3": wrong[2],
        "Correct Answer": right,
        "Subdomain": "Made-up",
    }


def gpqa() -> dict[str, list[dict]]:
    train = [
        _gpqa(
            "What is the ground-state energy of a particle in a box of width L?",
            ["ħ²/(mL²)", "0", "π²ħ²/(mL²)"],
            "π²ħ²/(2mL²)",
        ),
        _gpqa(
            "  Which quantity is conserved in an elastic collision?  ",
            ["heat", "  temperature ", "pressure"],
            "kinetic energy",
        ),
        _gpqa(
            "What does {{ spin }} mean here?\nAnswer in words.",
            ["{{ spin }}", "charge", "mass"],
            "intrinsic angular momentum",
        ),
        _gpqa("Which reagent reduces a ketone to an alcohol?", ["KMnO4", None, "HCl"], "NaBH4"),
        _gpqa("Quelle enzyme coupe l'ADN?", ["ligase", "polymérase", "hélicase"], "nucléase"),
        _gpqa("What is the pH of pure water at 25 °C?", ["0", "14", "1"], "7"),
        _gpqa(
            "Which organelle makes ATP [title] mostly?", ["ribosome", "nucleus", "Golgi  apparatus"], "mitochondrion"
        ),
        _gpqa("How many chromosomes in a human gamete?", ["46", "92", "12"], "23"),
    ]
    return {"train": train}


def gsm8k() -> dict[str, list[dict]]:
    test = [
        {
            "question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
            "answer": "Tom has 3 + 4 = <<3+4=7>>7 apples.\n#### 7",
        },
        {
            "question": "  A train travels 60 km in 1 hour. How far in 3 hours?  ",
            "answer": "60 * 3 = <<60*3=180>>180 km.\n#### 180",
        },
        {"question": "Léa a 10 € et dépense 3 €. Combien lui reste-t-il?", "answer": "10 - 3 = <<10-3=7>>7 €.\n#### 7"},
        {"question": "What is {{ 6 * 7 }} computed?", "answer": "6 * 7 = <<6*7=42>>42\n#### 42"},
    ]
    train = [
        {
            "question": f"Sam has {n} pens and gets {n + 2} more. How many pens?",
            "answer": f"{n} + {n + 2} = <<{n}+{n + 2}={2 * n + 2}>>{2 * n + 2}\n#### {2 * n + 2}",
        }
        for n in range(1, 9)
    ]
    return {"test": test, "train": train}


def lambada() -> dict[str, list[dict]]:
    return {
        "test": [
            {"text": "She opened the door and saw her old friend"},
            {"text": "The café served croissants and the best café"},
            {"text": "  He wrote {{ name }} on the board, then erased the name"},
            {"text": "After a long day at work, they finally went home"},
        ]
    }


def wikitext() -> dict[str, list[dict]]:
    return {
        "test": [
            {
                "page": " = Valkyria = \n Senjō no Valkyria 3 : Unrecorded Chronicles is a game . It sold 1 @,@ 000 copies ( in Japan ) . \n"
            },
            {
                "page": ' = Tower Building = \n The building is 3 @.@ 5 m tall ; it was built in 1 @-@ 2 years . " Great " , they said . \n'
            },
        ],
        "train": [{"page": " = Robert Boulter = \n Robert Boulter is an English actor ; he won 2 awards . \n"}],
    }


def kormedmcqa() -> dict[str, list[dict]]:
    def rec(q: str, options: list[str], answer: int) -> dict:
        return {"subject": "doctor", "year": 2023, "question": q, **dict(zip("ABCDE", options)), "answer": answer}

    return {
        "test": [
            rec("다음 중 심장의 방 개수는? ", ["1", "2", "3", "4", "5"], 4),
            rec("Which vitamin deficiency causes scurvy?\n", ["A", "B12", "C", "D", "K"], 3),
            rec("{{ 혈압 }} 정상 범위는?", ["120/80", "200/100", "50/30", "90/10", "0/0"], 1),
        ],
        "fewshot": [
            rec("정상 체온은?", ["35도", "36.5도", "38도", "40도", "42도"], 2),
            rec("What organ makes insulin?", ["liver", "pancreas", "kidney", "heart", "lung"], 2),
        ],
    }


from lm_eval_tasks_inputs_more import (  # noqa: E402  (a sibling module: the rest of the datasets)
    AWKWARD,
    bbh,
    bbh_cot,
    belebele,
    boolq,
    commonsense_qa,
    copa,
    discrim,
    glue_and_more,
    gsm8k_cot,
    humaneval,
    leaderboard,
    logiqa,
    math,
    mathqa,
    medmcqa,
    mmlu_pro,
    open_qa,
    openbookqa,
    piqa,
    race,
    sciq,
    siqa,
    toxigen,
    truthfulqa,
    winogrande,
    written,
    wsc273,
    xcopa,
    xnli,
    xwinograd,
)

DATASETS = {
    "arc": arc,
    "mmlu": mmlu,
    "hellaswag": hellaswag,
    "gpqa": gpqa,
    "gsm8k": gsm8k,
    "lambada": lambada,
    "wikitext": wikitext,
    "bbh": bbh,
    "kormedmcqa": kormedmcqa,
    "piqa": piqa,
    "siqa": siqa,
    "boolq": boolq,
    "copa": copa,
    "winogrande": winogrande,
    "xwinograd": xwinograd,
    "wsc273": wsc273,
    "openbookqa": openbookqa,
    "sciq": sciq,
    "commonsense_qa": commonsense_qa,
    "truthfulqa": truthfulqa,
    "logiqa": logiqa,
    "mathqa": mathqa,
    "race": race,
    "xcopa": xcopa,
    "xnli": xnli,
    "belebele": belebele,
    "mmlu_pro": mmlu_pro,
    "math": math,
    "bbh_cot": bbh_cot,
    "gsm8k_cot": gsm8k_cot,
    "medmcqa": medmcqa,
    "leaderboard": leaderboard,
    "humaneval": humaneval,
    "discrim": discrim,
    "open_qa": open_qa,
    "written": written,
    "more": glue_and_more,
    "toxigen": toxigen,
}


def main() -> int:
    for name, make in DATASETS.items():
        folder = INPUTS / name
        folder.mkdir(parents=True, exist_ok=True)
        for split, records in make().items():
            path = folder / f"{split}.jsonl"
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)} ({len(records)} records)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
