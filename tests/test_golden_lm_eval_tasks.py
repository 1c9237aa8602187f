"""lm-evaluation-harness's own task files, rendered byte for byte as lm-eval 0.4.13 does.

tests/golden/lm_eval_tasks/<case>.json were written by the real lm-eval
(tools/golden/make_lm_eval_tasks_golden.py, run in a throwaway venv; see
tools/golden/README.md) from the task files in tests/lm_eval_tasks/ (copied unchanged
from lm-eval) and the records in tests/golden/lm_eval_tasks/inputs/. Here prompt-style
loads the same task files with ``--data``-style overrides, as a user would, and every
record must match: ``text`` (or ``messages``) == lm-eval's context (or the messages it
passed to the chat template), ``continuations``, the target and the stop sequences.

This file never imports lm_eval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import prompt_style
from prompt_style.cli import main

HERE = Path(__file__).resolve().parent
TASKS = HERE / "lm_eval_tasks"
GOLDEN = HERE / "golden" / "lm_eval_tasks"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


def _golden(case: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{case}.json").read_text(encoding="utf-8"))


def _load(golden: dict[str, Any], meta: str | None = None, **more: Any) -> prompt_style.Task:
    case = golden["case"]
    for module in case.get("requires", []):  # the task code's own dependencies (sympy for minerva_math)
        pytest.importorskip(module, reason=f"the task code imports {module}: uv run --group lm-eval-math pytest")
    data = {split: str(GOLDEN / "inputs" / path) for split, path in case["data"].items()}
    chat = case["chat"]
    return prompt_style.load_task(
        TASKS / case["task_file"],
        data=data,
        shots=case["shots"],
        trust_code=case["trust_code"],
        meta=meta or ("chatml" if chat else "plain"),
        system_instruction=case["system_instruction"],
        fewshot_as_multiturn=None if not chat else case["fewshot_as_multiturn"],
        **more,
    )


def _first_difference(a: str, b: str) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"first difference at character {i}: prompt-style {a[i : i + 60]!r} vs lm-eval {b[i : i + 60]!r}"


def test_there_are_cases():
    assert len(CASES) >= 140


@pytest.mark.parametrize("case", CASES)
def test_matches_lm_eval(case: str):
    golden = _golden(case)
    version = golden["generator"]["lm_eval"]
    if "error" in golden:  # lm-eval refuses the case (too few examples, ...): so do we, with a typed error
        with pytest.raises(prompt_style.PromptStyleError):
            list(_load(golden).render())
        return
    records = golden["records"]
    task = _load(golden)
    assert task.config.format == "lm-eval"
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
        if "messages" in theirs:
            assert ours.messages == theirs["messages"], f"{where}: messages"
        if "contexts" in theirs:  # multiple input: every request's context, one per choice
            assert ours.contexts is not None, f"{where}: a multiple-input record gives contexts"
            for i, (mine, lm_eval) in enumerate(zip(ours.contexts, theirs["contexts"], strict=True)):
                if mine != lm_eval:
                    pytest.fail(f"{where}: context {i} differs; {_first_difference(mine, lm_eval)}")
        else:
            assert ours.contexts is None, f"{where}: contexts only for multiple-input tasks"
        assert list(ours.continuations) == theirs["continuations"], f"{where}: continuations"
        if golden["output_type"] == "multiple_choice":
            assert theirs["gold_index"] is not None, f"{where}: lm-eval found no gold choice"
            assert ours.target == theirs["gold_index"], f"{where}: target vs the choice lm-eval scores as gold"
        else:
            assert ours.target == theirs["gold"], f"{where}: target vs lm-eval doc_to_target"
        assert (list(ours.until) if ours.until is not None else None) == theirs.get("until"), f"{where}: until"


@pytest.mark.parametrize("case", [c for c in CASES if _golden(c)["case"]["chat"] and "error" not in _golden(c)])
def test_messages_meta_gives_the_messages_lm_eval_passes(case: str):
    golden = _golden(case)
    for ours, theirs in zip(_load(golden, meta="messages").render(), golden["records"]):
        assert ours.text is None
        assert ours.messages == theirs["messages"], f"{case} record {theirs['index']}"
        if "contexts_messages" in theirs:  # multiple input: the messages of every request
            assert list(ours.contexts) == theirs["contexts_messages"], f"{case} record {theirs['index']}"


@pytest.mark.parametrize(
    "case",
    [
        "arc_easy_25shot",
        "gpqa_main_n_shot_5shot",
        "arc_challenge_chat_2shot_chat_multiturn",
        "gsm8k_5shot",
        "copa_1shot_chat",
        "mmlu_pro_math_3shot_chat_singleturn_system",
        "mmlu_llama_anatomy_5shot_chat_multiturn",
        "triviaqa_2shot",
        "belebele_eng_Latn_3shot_chat",
        "leaderboard_bbh_navigate_3shot_chat_singleturn_system",
        "winogrande_5shot",
        "winogrande_2shot_chat_singleturn_system",
        "wsc273_2shot",
    ],
)
def test_the_command_line_gives_the_same(case: str, capsys):
    """prompt-style render TASK.yaml --data SPLIT=PATH ... --format jsonl, as a user runs it."""
    golden = _golden(case)
    spec = golden["case"]
    argv = ["render", str(TASKS / spec["task_file"]), "--format", "jsonl"]
    for split, path in spec["data"].items():
        argv += ["--data", f"{split}={GOLDEN / 'inputs' / path}"]
    if spec["shots"] is not None:
        argv += ["--shots", str(spec["shots"])]
    if spec["trust_code"]:
        argv.append("--trust-code")
    if spec["chat"]:
        argv += ["--meta", "chatml"]
        if not spec["fewshot_as_multiturn"]:
            argv.append("--no-fewshot-as-multiturn")
    if spec["system_instruction"]:
        argv += ["--system-instruction", spec["system_instruction"]]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["text"] for line in lines] == [r["context"] for r in golden["records"]]
    assert [line["continuations"] for line in lines] == [r["continuations"] for r in golden["records"]]
    # contexts: written for a multiple-input task (one per choice), absent otherwise
    assert [line.get("contexts") for line in lines] == [r.get("contexts") for r in golden["records"]]
    if spec["chat"]:
        assert [line["messages"] for line in lines] == [r["messages"] for r in golden["records"]]
    targets = [r["gold_index"] if "gold_index" in r else r["gold"] for r in golden["records"]]
    assert [line["target"] for line in lines] == targets
