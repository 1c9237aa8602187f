"""OpenCompass retrievers: prompt-style against OpenCompass's own, same run, same data.

    uv run python bench/retriever_bench.py [--anchor /tmp/venvs/ocretr/bin/python] [--records N]

Times choosing the examples of every test record (no rendering):

* ``opencompass_random`` (``RandomRetriever``, ice_num 5, pool 1,000) through
  ``load_task`` + ``select``, with numpy (the fast path) and in pure Python;
* ``bm25`` (``BM25Retriever``, ice_num 3, pool 1,000; needs prompt-style-bm25),
  index built at load time, one query per record;
* ``fixk`` and ``sliding_window`` for scale.

The baseline is OpenCompass 0.5.4's own retrievers on the same records,
timed in the anchor venv (``--anchor``: a Python with opencompass, see
tools/golden/README.md) in a subprocess of this run; their indices are compared
with prompt-style's and the script exits 1 if any differs. Without an anchor,
numpy's own ``np.random.seed`` + ``np.random.choice`` loop is the baseline for
``opencompass_random``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "capital river planet energy cell animal history number music language city "
    "ocean mountain theory war king science art color metal star law"
).split()


def records(n: int, prefix: str) -> list[dict]:
    """Questions of 6-10 words from a 21-word vocabulary plus a number word, so that
    BM25 scores rarely tie exactly (OpenCompass orders ties by numpy's sort, which
    differs between numpy versions: see docs/opencompass.md)."""
    out = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * j * 3 + i // (j + 1)) % len(WORDS)] for j in range(6 + i % 5)]
        out.append({"question": f"{prefix}{i}: what is the {' '.join(words)} {i % 97}x?", "answer": str(i % 4)})
    return out


ANCHOR = r"""
import json, sys, time
from datasets import Dataset, DatasetDict
from opencompass.openicl.icl_dataset_reader import DatasetReader
import opencompass.openicl.icl_retriever as R
train, test, cases = json.load(open(sys.argv[1]))
class D: pass
out = {}
for name, cls, options in cases:
    ds = DatasetDict({"train": Dataset.from_list(train), "test": Dataset.from_list(test[name])})
    d = D(); d.reader = DatasetReader(ds, input_columns=["question"], output_column="answer")
    d.train, d.test = d.reader.dataset["train"], d.reader.dataset["test"]
    start = time.perf_counter()
    retriever = getattr(R, cls)(d, **options)
    ids = retriever.retrieve()
    out[name] = {"seconds": time.perf_counter() - start, "indices": [[int(i) for i in row] for row in ids]}
print(json.dumps(out))
"""


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def ours(config: dict) -> tuple[float, list[list[int]], object]:
    from prompt_style import create_plugin_manager, load_task

    pm = create_plugin_manager(environ={})
    loaded = []

    def run():
        task = load_task(config, plugins=pm)
        loaded.append(task)
        select = task.renderer.retriever.select
        return [list(select(i, r)) for i, r in enumerate(task.records())]

    seconds, indices = timed(run)
    return seconds, indices, loaded[0]


def tie_only(task, theirs: list[list[int]], mine: list[list[int]]) -> bool:
    """Whether every differing bm25 row picks pool records with the same scores
    (equal scores ordered differently by another numpy's sort)."""
    from prompt_style_bm25 import query_text, word_tokenize

    retriever = task.renderer.retriever
    for record, a, b in zip(task.records(), theirs, mine):
        if a == b:
            continue
        scores = retriever._bm25.get_scores(word_tokenize(query_text(record, retriever.columns)))
        if [scores[j] for j in a] != [scores[j] for j in b]:
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--anchor", help="python of a venv with opencompass 0.5.4 (the baseline)")
    parser.add_argument("--records", type=int, default=14000, help="test records (default 14,000)")
    args = parser.parse_args()

    from prompt_style.retrievers.numpy_random import LegacyRandomState

    pool = records(1000, "P")
    test = records(args.records, "T")
    bm25_test = test[: max(1, args.records // 7)]
    base = {"data": {"train": pool, "test": test}, "fewshot_split": "train", "doc_to_text": "question"}
    base["doc_to_target"] = "answer"
    cases = {
        "opencompass_random": (
            {**base, "retriever": {"name": "opencompass_random", "seed": 43}, "num_fewshot": 5},
            ("RandomRetriever", {"ice_num": 5, "seed": 43}),
            test,
        ),
        "fixk": (
            {**base, "retriever": {"name": "fixk", "fix_id_list": [0, 1, 2, 3, 4]}},
            ("FixKRetriever", {"fix_id_list": [0, 1, 2, 3, 4]}),
            test,
        ),
        "sliding_window": (
            {**base, "data": {"test": test}, "fewshot_split": "test", "retriever": "sliding_window", "num_fewshot": 5},
            None,
            test,
        ),
    }
    try:
        import prompt_style_bm25  # noqa: F401

        cases["bm25"] = (
            {
                **base,
                "data": {"train": pool, "test": bm25_test},
                "retriever": {"name": "bm25", "input_columns": ["question"]},
                "num_fewshot": 3,
            },
            ("BM25Retriever", {"ice_num": 3}),
            bm25_test,
        )
    except ImportError:
        print("bm25: skipped (prompt-style-bm25 is not installed)")

    results = {}
    for name, (config, _, rows) in cases.items():
        seconds, indices, task = ours(config)
        results[name] = {"seconds": seconds, "indices": indices, "records": len(rows), "task": task}

    state = LegacyRandomState(43, use_numpy=False)
    pure_seconds, pure = timed(lambda: [state.choice_without_replacement(1000, 5) for _ in test])
    if pure != results["opencompass_random"]["indices"]:
        print("FAIL: the pure-Python stream differs from the numpy path")
        return 1

    baseline = {}
    if args.anchor:
        anchor_cases = [(name, *spec) for name, (_, spec, _) in cases.items() if spec is not None]
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data.json"
            tests = {name: rows for name, (_, spec, rows) in cases.items() if spec is not None}
            data.write_text(json.dumps([pool, tests, anchor_cases]), encoding="utf-8")
            script = Path(tmp) / "anchor.py"
            script.write_text(ANCHOR, encoding="utf-8")
            done = subprocess.run([args.anchor, str(script), str(data)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr[-2000:])
            return 1
        baseline = json.loads(done.stdout.strip().splitlines()[-1])
        baseline_label = "OpenCompass 0.5.4"
    else:
        import numpy

        def numpy_loop():
            numpy.random.seed(43)
            return [numpy.random.choice(1000, 5, replace=False).tolist() for _ in test]

        seconds, indices = timed(numpy_loop)
        baseline = {"opencompass_random": {"seconds": seconds, "indices": indices}}
        baseline_label = "numpy loop"

    print(f"{'retriever':<22}{'records':>9}{'prompt-style s':>16}{baseline_label + ' s':>22}{'ratio':>8}  same")
    failed = False
    for name, mine in results.items():
        theirs = baseline.get(name)
        line = f"{name:<22}{mine['records']:>9}{mine['seconds']:>16.3f}"
        if theirs is None:
            print(line)
            continue
        rows = sum(a == b for a, b in zip(theirs["indices"], mine["indices"]))
        same = "yes" if rows == len(mine["indices"]) else f"{rows}/{len(mine['indices'])} rows"
        if rows != len(mine["indices"]):
            if name == "bm25" and tie_only(mine["task"], theirs["indices"], mine["indices"]):
                same += ", the others tie (numpy sort order)"
            else:
                failed = True
                same += ": DIFFERENT"
        ratio = theirs["seconds"] / mine["seconds"] if mine["seconds"] else float("inf")
        print(f"{line}{theirs['seconds']:>22.3f}{ratio:>7.1f}x  {same}")
    print(f"{'opencompass_random, pure Python':<31}{pure_seconds:>16.3f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
