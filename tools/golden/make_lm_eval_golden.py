"""Write golden files made by the REAL lm-evaluation-harness, for tests/test_golden_lm_eval.py.

Re-run it (it is idempotent: same inputs and versions give byte-identical files) with the
throwaway venv's python, from the repository root or anywhere::

    /tmp/lmeval-venv/bin/python tools/golden/make_lm_eval_golden.py

and ``--copy-examples`` first re-copies examples/{mmlu,arc,gpqa}/data into the inputs.
tools/golden/README.md says how to make the venv (torch CPU wheel first, then lm-eval)
and which lm-eval version made the committed files. Nothing here downloads a model or a
data set: every task reads local JSON Lines through ``dataset_path: json``.

For each case this script writes a task YAML into a temporary directory, loads it with
lm-eval's own ``TaskManager(include_path=...).load`` (so lm-eval parses the
YAML, loads the data with ``datasets``, builds the few-shot sampler), calls
``task.build_all_requests`` exactly as ``lm_eval.evaluator`` does, and dumps, per
evaluated document:

* ``context``: the first element of the loglikelihood Instance arguments (the few-shot
  context string lm-eval builds, description included),
* ``continuations``: the second element of each choice's Instance arguments,
* ``gold``: ``task.doc_to_target(doc)``, as lm-eval returns it (an int, or a string such
  as ``"(B)"`` for GPQA),
* ``gold_index``: the choice index lm-eval scores as correct, found by calling
  ``task.process_results`` with one-hot log-likelihoods (its own gold resolution).

Output: tests/golden/lm_eval/<case>.json with ``generator`` (versions), ``lm_eval_task``
(the task config used; data file paths relative to tests/golden/lm_eval/) and ``records``.
This script is never imported by the test suite; the test never imports lm_eval.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "lm_eval"
INPUTS = GOLDEN / "inputs"

# Where --copy-examples takes the inputs from.
EXAMPLES = {
    "mmlu": ROOT / "examples" / "mmlu" / "data",
    "arc": ROOT / "examples" / "arc" / "data",
    "gpqa": ROOT / "examples" / "gpqa" / "data",
}

ACC = [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]

# lm_eval/tasks/mmlu/default/_default_template_yaml (dataset swapped for local files).
MMLU = {
    "output_type": "multiple_choice",
    "test_split": "test",
    "fewshot_split": "dev",
    "fewshot_config": {"sampler": "first_n"},
    "doc_to_text": "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}\nAnswer:",
    "doc_to_choice": ["A", "B", "C", "D"],
    "doc_to_target": "answer",
    "target_delimiter": " ",
    "fewshot_delimiter": "\n\n",
    "metric_list": ACC,
}
# As lm_eval/tasks/mmlu/default/mmlu_<subject>.yaml, but Jinja so one file covers all subjects.
MMLU_DESCRIPTION = "The following are multiple choice questions (with answers) about {{subject.replace('_', ' ')}}.\n\n"

# lm_eval/tasks/arc/arc_easy.yaml, few-shot from train with first_n.
ARC = {
    "output_type": "multiple_choice",
    "training_split": "train",
    "test_split": "test",
    "fewshot_split": "train",
    "fewshot_config": {"sampler": "first_n"},
    "doc_to_text": "Question: {{question}}\nAnswer:",
    "doc_to_target": "{{choices.label.index(answerKey)}}",
    "doc_to_choice": "{{choices.text}}",
    "metric_list": ACC,
}

# lm_eval/tasks/gpqa/zeroshot/_gpqa_zeroshot_yaml without process_docs (the example data
# is already preprocessed: choices shuffled, answer given as "(X)").
GPQA = {
    "output_type": "multiple_choice",
    "training_split": "train",
    "test_split": "test",
    "fewshot_split": "train",
    "fewshot_config": {"sampler": "first_n"},
    "doc_to_text": "What is the correct answer to this question:{{Question}}\nChoices:\n(A) {{choice1}}\n(B) {{choice2}}\n(C) {{choice3}}\n(D) {{choice4}}\nAnswer:",
    "doc_to_target": "answer",
    "doc_to_choice": ["(A)", "(B)", "(C)", "(D)"],
    "metric_list": ACC,
}


def _case(name: str, inputs: str, splits: dict[str, str], base: dict, **changes) -> dict:
    config = {"task": f"golden_{name}", "dataset_path": "json"}
    config["dataset_kwargs"] = {"data_files": {split: f"inputs/{inputs}/{file}" for split, file in splits.items()}}
    config.update(copy.deepcopy(base))
    config.update(changes)
    return {"name": name, "inputs": inputs, "config": config}


MMLU_FILES = {"test": "test.jsonl", "dev": "dev.jsonl"}
ARC_FILES = {"test": "test.jsonl", "train": "train.jsonl"}
GPQA_FILES = {"test": "test.jsonl", "train": "train.jsonl"}

CASES = [
    _case("mmlu_0shot", "mmlu", MMLU_FILES, MMLU, num_fewshot=0),
    _case("mmlu_5shot", "mmlu", MMLU_FILES, MMLU, num_fewshot=5),
    _case("mmlu_0shot_description", "mmlu", MMLU_FILES, MMLU, num_fewshot=0, description=MMLU_DESCRIPTION),
    _case("mmlu_5shot_description", "mmlu", MMLU_FILES, MMLU, num_fewshot=5, description=MMLU_DESCRIPTION),
    _case("arc_0shot", "arc", ARC_FILES, ARC, num_fewshot=0),
    _case("arc_3shot", "arc", ARC_FILES, ARC, num_fewshot=3),
    _case("gpqa_0shot", "gpqa", GPQA_FILES, GPQA, num_fewshot=0),
    _case("gpqa_2shot", "gpqa", GPQA_FILES, GPQA, num_fewshot=2),
    # Few-shot pool == evaluated split (as lm-eval's own gpqa configs evaluate "train"):
    # lm-eval's first_n then drops the evaluated doc from its pool.
    _case(
        "gpqa_2shot_same_split",
        "gpqa",
        {"train": "train.jsonl"},
        GPQA,
        test_split="train",
        num_fewshot=2,
    ),
]


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {
        "lm_eval": version("lm_eval"),
        "python": platform.python_version(),
        "torch": version("torch"),
        "datasets": version("datasets"),
        "jinja2": version("jinja2"),
    }


def _gold_index(task, doc, n: int):
    """The choice index lm-eval's own process_results scores as correct (None if none)."""
    hits = []
    for i in range(n):
        results = [(0.0 if j == i else -100.0, j == i) for j in range(n)]
        if task.process_results(doc, results)["acc"] == 1.0:
            hits.append(i)
    return hits[0] if len(hits) == 1 else None


def run_case(case: dict, workdir: Path, versions: dict[str, str]) -> dict:
    import yaml
    from lm_eval.tasks import TaskManager

    config = case["config"]
    live = copy.deepcopy(config)
    live["dataset_kwargs"]["data_files"] = {
        split: str(GOLDEN / path) for split, path in config["dataset_kwargs"]["data_files"].items()
    }
    include = workdir / case["name"]
    include.mkdir()
    (include / f"{config['task']}.yaml").write_text(
        yaml.safe_dump(live, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    manager = TaskManager(include_path=str(include), include_defaults=False)
    # What lm_eval.evaluator.simple_evaluate does: TaskManager.load, then a fewshot seed
    # (1234 is its default fewshot_random_seed; first_n ignores it).
    task = manager.load([config["task"]])["tasks"][config["task"]]
    task.set_fewshot_seed(seed=1234)
    task.build_all_requests(rank=0, world_size=1)

    by_doc: dict[int, list] = {}
    for inst in task.instances:
        by_doc.setdefault(inst.doc_id, []).append(inst)
    docs = list(task.eval_docs)
    assert sorted(by_doc) == list(range(len(docs))), "every document gets requests"

    records = []
    for doc_id in range(len(docs)):
        insts = sorted(by_doc[doc_id], key=lambda inst: inst.idx)
        doc = insts[0].doc
        contexts = {inst.arguments[0] for inst in insts}
        assert len(contexts) == 1, f"doc {doc_id}: one context for all choices"
        context = insts[0].arguments[0]
        # The same string through the public entry point (no sampler state for first_n).
        again = task.fewshot_context(doc, num_fewshot=config["num_fewshot"])
        assert again == context, f"doc {doc_id}: fewshot_context agrees with the Instance"
        continuations = [inst.arguments[1] for inst in insts]
        gold = task.doc_to_target(doc)
        records.append(
            {
                "index": doc_id,
                "context": context,
                "continuations": continuations,
                "gold": gold,
                "gold_index": _gold_index(task, doc, len(continuations)),
            }
        )
    return {"generator": versions, "lm_eval_task": config, "records": records}


def copy_examples() -> None:
    for name, source in EXAMPLES.items():
        target = INPUTS / name
        target.mkdir(parents=True, exist_ok=True)
        for file in sorted(source.glob("*.jsonl")):
            shutil.copyfile(file, target / file.name)
            print(f"copied {file.relative_to(ROOT)} -> {(target / file.name).relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copy-examples", action="store_true", help="re-copy examples/*/data into the inputs first")
    parser.add_argument("--case", action="append", help="only this case (repeatable)")
    args = parser.parse_args(argv)

    if args.copy_examples:
        copy_examples()

    with tempfile.TemporaryDirectory(prefix="lmeval-golden-") as tmp:
        tmp_path = Path(tmp)
        # Local files only: no hub look-ups, and a fresh datasets cache every run.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
        os.environ["HF_DATASETS_CACHE"] = str(tmp_path / "hf-datasets")
        os.environ["HF_HOME"] = str(tmp_path / "hf-home")
        versions = _versions()
        for case in CASES:
            if args.case and case["name"] not in args.case:
                continue
            result = run_case(case, tmp_path, versions)
            out = GOLDEN / f"{case['name']}.json"
            out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"wrote {out.relative_to(ROOT)} ({len(result['records'])} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
