"""lm-evaluation-harness's multiple-input tasks (winogrande: ``doc_to_text`` gives the index
of the choice that is the context) on the compiled fast path: the same prompts, contexts,
lines and errors as the general path, task code called once a record on either path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_style import PromptStyleError, load_task
from prompt_style.lines import PromptEncoder

UTILS = """
CALLS = {}


def _count(name, doc):
    key = (name, id(doc))
    CALLS[key] = CALLS.get(key, 0) + 1


def doc_to_text(doc):
    _count("text", doc)
    if doc.get("plain"):
        return "Plain: " + doc["sentence"]
    return {"1": 0, "2": 1}.get(doc["answer"], doc["answer"])


def doc_to_target(doc):
    _count("target", doc)
    if doc.get("target") is not None:
        return doc["target"]
    idx = doc["sentence"].index("_") + 1
    return doc["sentence"][idx:].strip()


def doc_to_choice(doc):
    _count("choice", doc)
    if "choices" in doc:
        return doc["choices"]
    idx = doc["sentence"].index("_")
    return [doc["sentence"][:idx] + opt for opt in (doc["option1"], doc["option2"])]
"""

JINJA = {
    "doc_to_text": "{{ 0 if answer == '1' else 1 }}",
    "doc_to_target": "{{ sentence.split('_')[1].strip() }}",
    "doc_to_choice": "{{ [sentence.split('_')[0] ~ option1, sentence.split('_')[0] ~ option2] }}",
}


def record(i: int, **more: Any) -> dict[str, Any]:
    return {
        "sentence": f"The trophy {i} doesn't fit in the case because _ is too {'big' if i % 2 else 'small'}.",
        "option1": "trophy",
        "option2": "case \u2028 ü",
        "answer": str(1 + i % 2),
        **more,
    }


RECORDS: list[dict[str, Any]] = [
    *(record(i) for i in range(6)),
    record(6, answer=5),  # an index past the choices
    record(7, choices=["a", None]),  # a null choice
    record(8, target=["x"]),  # a target that is no text
    record(9, plain=True, choices=[" yes", " no"], target=0),  # a record of the ordinary shape
    record(10, answer=-1),
    record(11, choices=["only one"], answer="1"),
    record(12, target=3),
]


def task_file(folder: Path, shots: int, code: bool, description: str | None = None) -> Path:
    (folder / "utils.py").write_text(UTILS, encoding="utf-8")
    fields = (
        {key: f"!function utils.{key}" for key in ("doc_to_text", "doc_to_target", "doc_to_choice")}
        if code
        else {key: json.dumps(value) for key, value in JINJA.items()}
    )
    lines = [
        "task: wino",
        "dataset_path: json",
        "output_type: multiple_choice",
        "test_split: test",
        "training_split: train",
        f"num_fewshot: {shots}",
        "fewshot_config:\n  sampler: first_n",
        *(f"{key}: {value}" for key, value in fields.items()),
    ]
    if description is not None:
        lines.append(f"description: {json.dumps(description)}")
    path = folder / "wino.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def outcome(renderer: Any, rec: Any, index: int) -> tuple[Any, ...]:
    try:
        r = renderer.render(rec, index)
    except PromptStyleError as exc:
        return ("error", type(exc).__name__, str(exc), exc.key, exc.index)
    return ("ok", r.to_json(), r.dialogue, r.text, r.contexts, r.fewshot_indices, r)


def calls_of(renderer: Any) -> dict[Any, int]:
    module = next(f.spec.source.__globals__ for f in (renderer._text,) if callable(getattr(f.spec, "source", None)))
    return dict(module["CALLS"])


@pytest.mark.parametrize("code", [True, False], ids=["task_code", "jinja"])
@pytest.mark.parametrize("shots", [0, 2])
@pytest.mark.parametrize("description", [None, "Fill in the blank.\n\n"])
def test_multiple_input_records_equal_the_general_path(tmp_path, pm, code, shots, description):
    path = task_file(tmp_path, shots, code, description)
    data = {"test": [dict(r) for r in RECORDS], "train": [record(100 + i) for i in range(3)]}
    fast = load_task(path, plugins=pm, data=data, trust_code=True).renderer
    assert fast.fast_render() is not None
    general = load_task(path, plugins=pm, data=data, trust_code=True).renderer
    general._fast = None
    records = [dict(r) for r in RECORDS]
    made = [outcome(fast, r, i) for i, r in enumerate(records)]
    expected = [outcome(general, r, i) for i, r in enumerate(records)]
    assert [m[:-1] for m in made] == [e[:-1] for e in expected]
    kinds = [m[0] for m in made]
    assert kinds.count("ok") >= 7 and ("error" in kinds or not code)
    encoder = PromptEncoder()
    for m in made:
        if m[0] == "ok":
            assert m[-1].contexts is not None or m[-1].text.startswith((description or "") + "Plain") or shots
            assert encoder.line(m[-1]) == encoder.line(expected[made.index(m)][-1])
    assert fast.fast_render()(dict(RECORDS[0]), 0) is not None  # taken by the fast path
    if code:  # each field of task code called once a record, as by the general path alone
        mine = {k: v for k, v in calls_of(fast).items() if k[1] in {id(r) for r in records}}
        theirs = calls_of(general)
        assert sorted(mine.values()) == sorted(v for k, v in theirs.items() if k[1] in {id(r) for r in records})
        assert max(mine.values()) == 1


@pytest.mark.parametrize("shots", [0, 2])
def test_lines_of_a_multiple_input_file_equal_the_general_path(tmp_path, pm, shots):
    path = task_file(tmp_path, shots, code=True)
    good = [r for r in RECORDS if r.get("answer") in ("1", "2") and "choices" not in r and "target" not in r] * 50
    data = {"test": good, "train": [record(100 + i) for i in range(3)]}
    task = load_task(path, plugins=pm, data=data, trust_code=True)
    got = list(task.json_lines())
    general = load_task(path, plugins=pm, data=data, trust_code=True)
    general.renderer._fast = None
    encoder = PromptEncoder()
    assert got == [general.provenance.line_bytes(p, encoder) for p in general.render()]
    assert all('"contexts": [' in line.decode() for line in got)
