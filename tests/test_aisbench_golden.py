"""Multi-turn and multimodal dialogues against AISBench's own code (golden files from
tools/golden/make_aisbench_golden.py: MultiTurnPromptTemplate + MultiTurnGenInferencer,
MMPromptTemplate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_style import load_task
from prompt_style.styles.opencompass import RAW

GOLDEN = Path(__file__).parent / "golden" / "aisbench"
MULTITURN = json.loads((GOLDEN / "multiturn.json").read_text("utf-8"))["cases"]
MULTIMODAL = json.loads((GOLDEN / "multimodal.json").read_text("utf-8"))["cases"]


def prompt_list(dialogue):
    """A dialogue as AISBench's PromptList items."""
    items = []
    for turn in dialogue:
        if turn.role == RAW:
            items.append(turn.content)
            continue
        key = "prompt" if isinstance(turn.content, str) else "prompt_mm"
        item = {"role": turn.role}
        if turn.fallback_role is not None:
            item["fallback_role"] = turn.fallback_role
        item[key] = turn.content if key == "prompt" else [dict(part) for part in turn.content]
        items.append(item)
    return items


def expected_requests(case):
    if isinstance(case["requests"], list):
        return case["requests"]
    # AISBench's infer_last crashes; its documented request is every_with_gt's last one.
    twin = next(c for c in MULTITURN if c["name"] == case["name"].replace("_last", "_every_with_gt"))
    return twin["requests"][-1:]


@pytest.mark.parametrize("case", MULTITURN, ids=[c["name"] for c in MULTITURN])
def test_multiturn_requests_equal_aisbench(case, pm):
    config = {
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
        "infer_cfg": {
            "prompt_template": {"type": "MultiTurnPromptTemplate", "template": case["template"]},
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "MultiTurnGenInferencer", "infer_mode": case["infer_mode"]},
        },
        "data": {"test": [case["record"]]},
    }
    requests = list(load_task(config, plugins=pm).render(replies=[case["replies"]]))
    assert [prompt_list(r.dialogue) for r in requests] == expected_requests(case)


@pytest.mark.parametrize("case", MULTIMODAL, ids=[c["name"] for c in MULTIMODAL])
def test_multimodal_prompt_equals_aisbench(case, pm):
    config = {
        "reader_cfg": {"input_columns": ["content"], "output_column": "answer"},
        "infer_cfg": {
            "prompt_template": {
                "type": "MMPromptTemplate",
                "template": {"round": [{"role": "HUMAN", "prompt_mm": case["prompt_mm"]}]},
            },
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer"},
        },
        "data": {"test": [case["record"]]},
    }
    [result] = load_task(config, plugins=pm, meta="opencompass::api").render()
    assert prompt_list(result.dialogue) == case["prompt"]
    assert result.messages == [{"role": "user", "content": case["prompt"][0]["prompt_mm"]}]
