"""Byte-for-byte parity with the real lm-evaluation-harness.

tests/golden/lm_eval/<case>.json were written by lm-eval itself
(tools/golden/make_lm_eval_golden.py, run in a throwaway venv; see tools/golden/README.md).
Here prompt-style renders the same inputs with its own template system (``mcq::mmlu``,
``cloze::qa``, ``mcq::gpqa`` and the ``first_n`` retriever) through the public API, and every
record must match: ``text`` == lm-eval's context, ``continuations`` == the continuation of
each loglikelihood request, ``target`` == the choice lm-eval scores as gold.

This file never imports lm_eval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import prompt_style

GOLDEN = Path(__file__).resolve().parent / "golden" / "lm_eval"

MMLU_DESCRIPTION = "The following are multiple choice questions (with answers) about {{subject.replace('_', ' ')}}.\n\n"


def _mmlu(shots: int, description: str | None = None) -> dict[str, Any]:
    task = {
        "doc_to_text": "{{question.strip()}}",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "answer",
        "template": {"template_type": "mcq::mmlu"},
        "fewshot_split": "dev",
        "num_fewshot": shots,
        "retriever": "first_n",
    }
    if description is not None:
        task["description"] = description
    return task


def _arc(shots: int) -> dict[str, Any]:
    return {
        "doc_to_text": "{{question}}",
        "doc_to_choice": "{{choices.text}}",
        "doc_to_target": "{{choices.label.index(answerKey)}}",
        "template": "cloze::qa",
        "fewshot_split": "train",
        "num_fewshot": shots,
        "retriever": "first_n",
    }


def _gpqa(shots: int, **more: Any) -> dict[str, Any]:
    return {
        "doc_to_text": "{{Question}}",
        "doc_to_choice": "{{[choice1, choice2, choice3, choice4]}}",
        # lm-eval scores "(B)" against its doc_to_choice ["(A)", ..., "(D)"]; here the choices
        # are the texts (the style adds the labels), so the target is the index of "(B)".
        "doc_to_target": "{{ ['(A)', '(B)', '(C)', '(D)'].index(answer) }}",
        "template": {"template_type": "mcq::gpqa"},
        "fewshot_split": "train",
        "num_fewshot": shots,
        "retriever": "first_n",
        **more,
    }


# case name (= golden file stem) -> prompt-style task keys, without ``data``
# (taken from the golden file's lm-eval data_files, so both read the same inputs).
CASES: dict[str, dict[str, Any]] = {
    "mmlu_0shot": _mmlu(0),
    "mmlu_5shot": _mmlu(5),
    "mmlu_0shot_description": _mmlu(0, MMLU_DESCRIPTION),
    "mmlu_5shot_description": _mmlu(5, MMLU_DESCRIPTION),
    "arc_0shot": _arc(0),
    "arc_3shot": _arc(3),
    "gpqa_0shot": _gpqa(0),
    "gpqa_2shot": _gpqa(2),
    "gpqa_2shot_same_split": _gpqa(2, test_split="train"),
}


def _golden(case: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{case}.json").read_text(encoding="utf-8"))


def _mapping(case: str, golden: dict[str, Any]) -> dict[str, Any]:
    lm = golden["lm_eval_task"]
    files = lm["dataset_kwargs"]["data_files"]
    data = {split: str((GOLDEN / path).resolve()) for split, path in files.items()}
    return {"task": case, "data": data, **CASES[case]}


def test_every_golden_file_has_a_case():
    files = sorted(p.stem for p in GOLDEN.glob("*.json"))
    assert files == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_settings_as_lm_eval(case: str):
    """The prompt-style task asks for what the lm-eval task config says."""
    lm = _golden(case)["lm_eval_task"]
    ours = CASES[case]
    assert ours["num_fewshot"] == lm["num_fewshot"]
    assert ours["fewshot_split"] == lm["fewshot_split"]
    assert ours.get("test_split", "test") == lm["test_split"]
    assert ours.get("description") == lm.get("description")
    assert lm["fewshot_config"]["sampler"] == ours["retriever"] == "first_n"
    assert lm.get("target_delimiter", " ") == " "
    assert lm.get("fewshot_delimiter", "\n\n") == "\n\n"
    assert lm["output_type"] == "multiple_choice"


def _first_difference(a: str, b: str) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"first difference at character {i}: prompt-style {a[i : i + 40]!r} vs lm-eval {b[i : i + 40]!r}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_lm_eval(case: str):
    golden = _golden(case)
    records = golden["records"]
    version = golden["generator"]["lm_eval"]
    task = prompt_style.load_task(_mapping(case, golden))
    rendered = list(task.render())
    assert len(rendered) == len(records), f"{case}: record count vs lm-eval {version}"

    for ours, theirs in zip(rendered, records):
        where = f"{case} record {theirs['index']} (lm-eval {version})"
        assert ours.index == theirs["index"], where
        if ours.text != theirs["context"]:
            pytest.fail(
                f"{where}: text differs; {_first_difference(ours.text or '', theirs['context'])}\n"
                f"prompt-style: {ours.text!r}\nlm-eval:      {theirs['context']!r}"
            )
        assert list(ours.continuations) == theirs["continuations"], f"{where}: continuations"
        assert theirs["gold_index"] is not None, f"{where}: lm-eval found no gold choice"
        assert ours.target == theirs["gold_index"], f"{where}: target vs the choice lm-eval scores as gold"
        gold = theirs["gold"]
        if isinstance(gold, int):
            assert ours.target == gold, f"{where}: target vs lm-eval doc_to_target"
        else:  # lm-eval scores a string target by its position among the choices
            assert ours.continuations[ours.target] == " " + gold, f"{where}: target vs lm-eval doc_to_target"
