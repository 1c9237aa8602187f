"""Circular evaluation against OpenCompass 0.5.4's CircularEval datasets (golden files
made by tools/golden/make_opencompass_circular_golden.py with the real OpenCompass:
its CircularDatasetMeta rewrote the records, its PromptTemplate and retrievers built
the prompts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_style import load_task

GOLDEN = Path(__file__).parent / "golden" / "opencompass" / "circular"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


def load(name):
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


def render(case, tmp_path, order="file", **config_extra):
    data = {}
    for split, records in case["records"].items():
        path = tmp_path / f"{split}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        data[split] = str(path)
    order = case["circular_patterns"] if order == "file" else order
    return list(load_task({**case["config"], **config_extra}, data=data, choice_order=order).render())


def test_the_goldens_cover_the_circular_datasets():
    assert len(CASES) == 11
    assert {load(name)["generator"]["opencompass"] for name in CASES} == {"0.5.4"}


@pytest.mark.parametrize("name", CASES)
def test_circular_prompts_are_opencompass_byte_for_byte(name, tmp_path):
    case = load(name)
    prompts = render(case, tmp_path)
    items = case["items"]
    assert len(prompts) == len(items)
    for prompt, item in zip(prompts, items):
        assert prompt.index == item["qid"]
        keys = case["option_keys"]
        assert [keys[i] for i in _inverse(prompt.permutation)] == item["circular_pattern"]
        if case["mode"] == "ppl":
            assert [(str(c.label), c.text) for c in prompt.candidates] == [
                (str(c["label"]), c["text"]) for c in item["candidates"]
            ]
        else:
            assert prompt.text == item["text"]
        assert prompt.target == item["answer"]


def _inverse(permutation):
    """For each original option, the position it is shown at."""
    out = [0] * len(permutation)
    for shown, original in enumerate(permutation):
        out[original] = shown
    return out


def test_the_circular_pattern_is_opencompass_s(tmp_path):
    case = load("mmlu_gen_4d595a")
    prompts = render(case, tmp_path)
    assert [p.circular_pattern for p in prompts[:4]] == [item["circular_pattern"] for item in case["items"][:4]]


def test_the_dataset_type_names_the_option_keys(tmp_path):
    # columns that no rule would find, named by the dataset's CircularEval class
    case = load("ARC_c_ppl_d52a21")
    prompts = render(case, tmp_path, type="CircularARCDataset")
    assert [p.target for p in prompts] == [item["answer"] for item in case["items"]]


@pytest.mark.parametrize("name", ["mmlu_gen_4d595a", "mmlu_gen_4d595a_all_possible"])
def test_a_circular_dataset_type_renders_circularly_by_itself(name, tmp_path):
    # OpenCompass makes a Circular* dataset's records circular when it loads them;
    # so does prompt-style, with no --circular, honouring its circular_patterns
    case = load(name)
    extra = {"type": "CircularMMLUDataset", "path": "opencompass/mmlu", "name": "college_biology"}
    if case["circular_patterns"] != "circular":
        extra["circular_patterns"] = case["circular_patterns"]
    prompts = render(case, tmp_path, order=None, **extra)
    assert [p.text for p in prompts] == [item["text"] for item in case["items"]]
    assert [p.circular_pattern for p in prompts] == [item["circular_pattern"] for item in case["items"]]
