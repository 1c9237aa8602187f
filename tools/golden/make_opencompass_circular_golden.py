"""Regenerate tests/golden/opencompass/circular/: OpenCompass's CircularEval prompts.

Run with the Python of the OpenCompass venv of make_opencompass_golden.py
(versions this script was run with: opencompass 0.5.4, mmengine 0.10.7,
datasets 3.6.0, Python 3.11), from the repository root:

    PYTHONHASHSEED=0 /tmp/venvs/opencompass/bin/python tools/golden/make_opencompass_circular_golden.py

For each dataset config below (one of OpenCompass's own, whose dataset class
has a CircularEval counterpart in ``opencompass/datasets/circular.py``), it
writes records with real answers, makes the evaluated split circular with
OpenCompass's own ``CircularDatasetMeta.make_circular_dataset`` and the option
keys, answer key and ``answer_key_switch_method`` of that dataset's ``Circular*``
class (``circular.py`` itself is executed; the dataset loaders it subclasses are
not needed), and renders every circular item as OpenCompass does (the
``PromptTemplate``, retriever and inferencer calls of make_opencompass_golden.py),
the few-shot pool left as it is (the datasets here load a ``DatasetDict`` whose
circular splits are the evaluated one). Output per dataset:
``circular/<name>.json`` with the records, the config, and per circular item its
``qid``, ``circular_pattern``, answer and prompt (text, or the candidates of a
perplexity config).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_opencompass_golden as base  # noqa: E402  (stubs opencompass.datasets, imports OpenCompass)
from datasets import Dataset  # noqa: E402

OUT = base.OUT / "circular"


def real_circular():
    """OpenCompass's own circular.py, executed with the dataset loaders it subclasses stubbed."""
    path = Path(base.opencompass.__file__).parent / "datasets" / "circular.py"
    spec = importlib.util.spec_from_file_location("opencompass.datasets.circular", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# name -> (config: a task file of tests/golden/opencompass/datasets, or an OpenCompass config), Circular class
CASES = {
    "mmlu_gen_4d595a": ("datasets/mmlu_gen_4d595a.yaml", "CircularMMLUDataset"),
    "ceval_gen_5f30c7": ("datasets/ceval_gen_5f30c7.yaml", "CircularCEvalDataset"),
    "cmmlu_gen_c13365": ("datasets/cmmlu_gen_c13365.yaml", "CircularCMMLUDataset"),
    "commonsenseqa_gen_1da2d0": ("datasets/commonsenseqa_gen_1da2d0.yaml", "CircularCSQADataset"),
    "race_few_shot_gen_a498ed": ("datasets/race_few_shot_gen_a498ed.yaml", "CircularRaceDataset"),
    "ARC_c_ppl_d52a21": ("datasets/ARC_c_ppl_d52a21.yaml", "CircularARCDataset"),
    "obqa_ppl_c7c154": ("datasets/obqa_ppl_c7c154.yaml", "CircularOBQADataset"),
    "hellaswag_ppl_47bff9": ("datasets/hellaswag_ppl_47bff9.yaml", "CircularHSWAGDataset"),
    "piqa_gen_1194eb": ("opencompass:piqa/piqa_gen_1194eb.py", "CircularPIQADataset"),
    "siqa_gen_18632c": ("opencompass:siqa/siqa_gen_18632c.py", "CircularsiqaDataset"),
    # circular_patterns='all_possible': every permutation of the options
    "mmlu_gen_4d595a_all_possible": ("datasets/mmlu_gen_4d595a.yaml", "CircularMMLUDataset", "all_possible"),
}

TEXTS = [
    "Paris",
    "the {Moon}",
    "  spaced  ",
    "</E> marker",
    "Ünïcödé ✓",
    "two\nlines",
    "42",
    "",
]


def config_of(source: str) -> tuple[dict, str]:
    if source.startswith("opencompass:"):
        rel = source.split(":", 1)[1]
        dataset = base.plain(base.to_dict(base.find_dataset(base.load_config(base.CONFIGS / "datasets" / rel), None)))
        return {"abbr": dataset.get("abbr"), "reader_cfg": dataset["reader_cfg"], "infer_cfg": dataset["infer_cfg"]}, (
            f"configs/datasets/{rel}"
        )
    import yaml

    path = base.OUT / source
    return yaml.safe_load(path.read_text(encoding="utf-8")), f"tests/golden/opencompass/{source}"


def answer_values(cls, keys):
    """The answers records of this dataset hold: its option keys, or position letters (ARC, PIQA)."""
    if getattr(cls, "default_answer_key", None) is not None:
        return list(keys)
    return list("ABCDE"[: len(keys)])


def make(dataset, keys, answer_key, answers, n):
    reader = dataset["reader_cfg"]
    columns = list(reader.get("input_columns") or [])
    for name in sorted(base.fields_of(dataset["infer_cfg"])):
        if name not in columns and name != reader.get("output_column"):
            columns.append(name)
    records = []
    for i in range(n):
        record = {}
        for j, column in enumerate(columns):
            record[column] = (
                f"{column} {i}: " + TEXTS[(i + j) % len(TEXTS)]
                if column not in keys
                else TEXTS[(i + j) % len(TEXTS)] + f" ({column}{i})"
            )
        record[answer_key] = answers[i % len(answers)]
        output = reader.get("output_column")
        if output and output not in record:
            record[output] = record[answer_key]
        records.append(record)
    return records


def main() -> None:
    circular = real_circular()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (source, class_name, *rest) in CASES.items():
        patterns = rest[0] if rest else "circular"
        dataset, origin = config_of(source)
        cls = getattr(circular, class_name)
        keys = list(cls.default_option_keys)
        answer_key = getattr(cls, "default_answer_key", None) or dataset["reader_cfg"].get("output_column")
        answers = answer_values(cls, keys)
        reader = dataset["reader_cfg"]
        train_split = reader.get("train_split", "train")
        test_split = reader.get("test_split", "test")
        infer = dataset["infer_cfg"]
        ids = (infer.get("retriever") or {}).get("fix_id_list") or [0]
        train = make(dataset, keys, answer_key, answers, max(ids) + 2)
        test = make(dataset, keys, answer_key, answers, 3)
        for i, record in enumerate(test):  # different answers from the pool's
            record[answer_key] = answers[(i + 1) % len(answers)]
            if reader.get("output_column") and reader["output_column"] != answer_key:
                record[reader["output_column"]] = record[answer_key]
        made = circular.CircularDatasetMeta.make_circular_dataset(
            Dataset.from_list(test),
            circular.get_circular_patterns(keys)
            if patterns == "circular"
            else circular.get_all_possible_patterns(keys),
            keys,
            getattr(cls, "default_answer_key", None),
            getattr(cls, "default_answer_key_switch_method", None),
        )
        items = made.to_list()
        mode = "ppl" if infer.get("inferencer", {}).get("type") == "PPLInferencer" else "gen"
        build = {"reader_cfg": reader, "infer_cfg": base.to_dict(infer)}
        rendered = base.render(build, train, items, None, mode)
        out_items = []
        for item, prompt in zip(items, rendered):
            prompt = dict(prompt)
            prompt.pop("index", None)
            out_items.append(
                {
                    "qid": item["qid"],
                    "circular_pattern": list(item["circular_pattern"]),
                    "answer": item[answer_key],
                    **prompt,
                }
            )
        data = {
            "generator": {
                "script": "tools/golden/make_opencompass_circular_golden.py",
                "opencompass": base.VERSION,
                "class": class_name,
            },
            "config": dataset,
            "source": origin,
            "circular_patterns": patterns,
            "option_keys": keys,
            "answer_key": answer_key,
            "mode": mode,
            "records": {train_split: train, test_split: test},
            "items": out_items,
        }
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{path}: {len(out_items)} circular items", file=sys.stderr)


if __name__ == "__main__":
    main()
