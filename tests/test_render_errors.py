"""``Task.render(errors=[])``: every record that cannot be rendered collected, the others
rendered as without it; ``RecordErrors`` reporting them together."""

from __future__ import annotations

import json
import pickle

import pytest

from prompt_style import DataError, FieldError, PromptStyleError, RecordErrors, load_task

GOOD = [{"q": f"Question {i}?", "c": ["yes", "no", "maybe"], "a": i % 3, "id": f"r{i}"} for i in range(8)]
BAD = {
    2: {"q": "Null choice?", "c": ["yes", None], "a": 0, "id": "r2"},
    4: {"c": ["yes", "no"], "a": 0, "id": "r4"},  # no question
    5: {"q": "Past the end?", "c": ["yes", "no"], "a": 9, "id": "r5"},
}
MIXED = [BAD.get(i, record) for i, record in enumerate(GOOD)]


MCQ = {
    "fewshot_split": "dev",
    "doc_to_text": "q",
    "doc_to_choice": "c",
    "doc_to_target": "a",
    "template": "mcq::mmlu",
    "num_fewshot": 1,
}


@pytest.fixture
def write(make_task):
    """``write(records, **task keys)``: the task file, records as its test split."""
    return lambda records, **task: make_task({"test": records, "dev": GOOD[:3]}, **MCQ, **task)


def expected(write, task, load):
    """The prompts of the good records, rendered from a file holding them alone, by index."""
    prompts = list(load_task(write(GOOD, **task), **load).render())
    return {p.index: p for p in prompts if p.index not in BAD}


TASKS = {  # name -> (task keys, load_task options)
    "fast path": ({}, {}),
    "doc_id": ({"doc_id": "id"}, {}),
    "general path": ({"retriever": {"name": "random", "seed": 3}}, {}),
    "choice order": ({}, {"choice_order": "shuffle:3"}),
}


@pytest.mark.parametrize("name", list(TASKS))
def test_every_bad_record_collected_and_the_others_rendered_as_ever(write, name):
    options, load = TASKS[name]
    errors: list[PromptStyleError] = []
    task = load_task(write(MIXED, **options), **load)
    prompts = list(task.render(errors=errors))
    good = expected(write, options, load)
    assert [p.index for p in prompts] == sorted(good)
    for prompt in prompts:
        assert prompt == good[prompt.index]
        assert prompt.text == good[prompt.index].text
    assert [e.index for e in errors] == sorted(BAD)
    assert all(isinstance(e, FieldError) and "task.yaml:" in str(e) for e in errors)
    # without errors: the first bad record stops the render, named
    with pytest.raises(FieldError) as caught:
        list(load_task(write(MIXED, **options), **load).render())
    assert caught.value.index == 2


def test_limit_counts_the_records_read_bad_ones_included(write):
    errors: list[PromptStyleError] = []
    prompts = list(load_task(write(MIXED)).render(limit=5, errors=errors))
    assert [p.index for p in prompts] == [0, 1, 3] and [e.index for e in errors] == [2, 4]


def test_records_in_memory(write):
    errors: list[PromptStyleError] = []
    task = load_task(write(GOOD), data={"test": MIXED, "dev": GOOD[:3]})  # records given in memory
    assert [p.index for p in task.render(errors=errors)] == [0, 1, 3, 6, 7]
    assert [e.index for e in errors] == [2, 4, 5]


def test_a_line_that_is_not_json_still_stops_the_render(write):
    path = write(GOOD)
    with (path.parent / "data" / "test.jsonl").open("a") as handle:
        handle.write("{not json}\n")
    with pytest.raises(DataError) as caught:
        list(load_task(path).render(errors=[]))
    assert caught.value.line == 9 and "not valid JSON" in str(caught.value)


def test_record_errors_quote_the_first_few_and_count_the_rest(tmp_path):
    errors: list[PromptStyleError] = [FieldError(f"problem {i}", key="doc_to_text", index=i) for i in range(8)]
    report = RecordErrors(errors, total=20, consequence=", so the run would stop", key="data.test", file="t.yaml")
    text = str(report)
    assert text.startswith("t.yaml: data.test: 8 of 20 records cannot be rendered, so the run would stop: ")
    assert "doc_to_text: record 4: problem 4" in text and "problem 5" not in text and text.endswith("; and 3 more")
    assert report.errors == errors and isinstance(report, PromptStyleError)
    again = pickle.loads(pickle.dumps(report))
    assert str(again) == text and [str(e) for e in again.errors] == [str(e) for e in errors]
    assert str(RecordErrors(errors[:1])) == "1 record cannot be rendered: doc_to_text: record 0: problem 0"


def test_a_multi_turn_record_that_stops_gives_none_of_its_requests(tmp_path):
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "opencompass_multiturn"
    records = [json.loads(line) for line in (example / "test.jsonl").read_text().splitlines() if line]
    broken = [records[0], {"question": ["a", "b", "c"], "answer": ["1"]}, *records[2:]]  # record 1: lists differ
    data = tmp_path / "test.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in broken))
    whole = list(load_task(example / "task.yaml").render())
    errors: list[PromptStyleError] = []
    made = list(load_task(example / "task.yaml", data={"test": str(data)}).render(errors=errors))
    assert [e.index for e in errors] == [1]
    assert made == [p for p in whole if p.index != 1]
