"""``prompt_style.as_map_function``: a task as a picklable, batched, index-aware map
function, checked here without any engine (tests/test_scale_engines.py runs it on
datasets and Ray)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_style
from prompt_style import DataError, OptionError, as_map_function

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
RECORDS = [json.loads(line) for line in (ROOT / "examples" / "mmlu" / "data" / "test.jsonl").open(encoding="utf-8")]


def batch_of(records):
    return {key: [r[key] for r in records] for key in records[0]}


def expected(**options):
    task = prompt_style.load_task(MMLU, data={"test": RECORDS}, **options)
    return [r.to_json() for r in task.render()]


def test_batches_give_what_render_gives_whatever_the_batching():
    fn = as_map_function(MMLU, shots=3)
    want = expected(shots=3)
    got = []
    for start in range(0, len(RECORDS), 5):
        out = fn(batch_of(RECORDS[start : start + 5]), list(range(start, start + 5))[: len(RECORDS) - start])
        assert set(out) == {"prompt_text", "prompt_messages", "prompt_continuations", "prompt_target"}
        got.extend(zip(out["prompt_text"], out["prompt_target"], out["prompt_continuations"]))
    assert got == [(w["text"], w["target"], w["continuations"]) for w in want]


def test_one_record_at_a_time_and_chosen_columns():
    fn = as_map_function(MMLU, batched=False, columns=("text", "index"), prefix="p.", shots=1)
    want = expected(shots=1)
    assert fn(RECORDS[4], 4) == {"p.text": want[4]["text"], "p.index": 4}


class FakeArray(list):
    """What Ray gives: arrays with tolist(), arrays of arrays for list cells."""

    def tolist(self):
        return [v.tolist() if isinstance(v, FakeArray) else v for v in self]


def test_numpy_like_columns_and_an_index_column_keep_the_batch():
    fn = as_map_function(MMLU, index_column="idx", shots=2)
    records = RECORDS[:3]
    batch = {
        key: FakeArray(FakeArray(r[key]) if isinstance(r[key], list) else r[key] for r in records) for key in records[0]
    }
    batch["idx"] = FakeArray([0, 1, 2])
    out = fn(batch)
    assert out["prompt_text"] == [w["text"] for w in expected(shots=2)[:3]]
    assert out["question"] is batch["question"] and out["idx"] is batch["idx"]  # Ray replaces the batch


def test_pyarrow_tables_give_tables_with_the_prompt_columns():
    pyarrow = pytest.importorskip("pyarrow")
    fn = as_map_function(MMLU, index_column="idx", shots=2)
    records = [{**r, "idx": i} for i, r in enumerate(RECORDS[:4])]
    out = fn(pyarrow.Table.from_pylist(records))
    assert isinstance(out, pyarrow.Table)
    assert out.column_names[: len(records[0])] == list(records[0])  # the batch's own columns first (Ray)
    want = expected(shots=2)[:4]
    assert out.column("prompt_text").to_pylist() == [w["text"] for w in want]
    assert out.column("prompt_continuations").to_pylist() == [w["continuations"] for w in want]
    # with the indices given (datasets' with_indices), the prompt columns only
    only = fn(pyarrow.Table.from_pylist(records), [0, 1, 2, 3])
    assert only.column_names == ["prompt_text", "prompt_messages", "prompt_continuations", "prompt_target"]
    with pytest.raises(OptionError):
        as_map_function(MMLU, batched=False)(pyarrow.Table.from_pylist(records[:1]), 0)


def test_no_index_is_a_clear_error():
    fn = as_map_function(MMLU)
    with pytest.raises(DataError, match="with_indices=True"):
        fn(batch_of(RECORDS[:2]))


def test_a_single_record_given_to_a_batched_function_is_a_clear_error():
    with pytest.raises(OptionError, match="batched=True"):
        as_map_function(MMLU)(RECORDS[0], 0)


def test_pickles_to_the_same_bytes_and_renders_after_unpickling():
    fn = as_map_function(MMLU, shots=2)
    data = pickle.dumps(fn)
    again = pickle.loads(data)
    assert pickle.dumps(again) == data
    assert again(batch_of(RECORDS[:2]), [0, 1])["prompt_text"] == [w["text"] for w in expected(shots=2)[:2]]


def _pickled_in_fresh_process(hashseed: str) -> bytes:
    code = (
        "import pickle, sys, prompt_style; "
        f"sys.stdout.buffer.write(pickle.dumps(prompt_style.as_map_function({str(MMLU)!r}, shots=2)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env).stdout


def test_the_same_bytes_in_every_process():
    assert (
        _pickled_in_fresh_process("1") == _pickled_in_fresh_process("2") == pickle.dumps(as_map_function(MMLU, shots=2))
    )


def test_the_description_changes_with_options_and_files(tmp_path):
    base = pickle.dumps(as_map_function(MMLU, shots=2))
    assert pickle.dumps(as_map_function(MMLU, shots=3)) != base
    task = tmp_path / "task.yaml"
    task.write_text(
        MMLU.read_text(encoding="utf-8").replace("data/", str(MMLU.parent / "data") + "/"), encoding="utf-8"
    )
    first = pickle.dumps(as_map_function(task))
    task.write_text(task.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert pickle.dumps(as_map_function(task)) != first


def test_plugins_and_unpicklable_options_are_refused():
    with pytest.raises(OptionError, match="default plugin manager"):
        as_map_function(MMLU, plugins=prompt_style.create_plugin_manager())


def test_a_task_that_does_not_load_fails_now():
    with pytest.raises(prompt_style.PromptStyleError, match="missing.yaml"):
        as_map_function("missing.yaml")


def test_indices_in_any_order_give_each_record_its_own_prompt():
    fn = as_map_function(MMLU, shots=2)
    want = expected(shots=2)
    order = [7, 2, 3, 0]
    out = fn(batch_of([RECORDS[i] for i in order]), order)
    assert out["prompt_text"] == [want[i]["text"] for i in order]


def test_a_pyarrow_batch_comes_back_as_a_table_with_the_prompt_columns():
    pa = pytest.importorskip("pyarrow")
    fn = as_map_function(MMLU, index_column="idx", shots=2)
    table = pa.Table.from_pylist([dict(r, idx=i) for i, r in enumerate(RECORDS[:4])])
    out = fn(table)
    assert isinstance(out, pa.Table)
    assert out.column_names == [
        *table.column_names,
        "prompt_text",
        "prompt_messages",
        "prompt_continuations",
        "prompt_target",
    ]
    want = expected(shots=2)[:4]
    assert out.column("prompt_text").to_pylist() == [w["text"] for w in want]
    assert out.column("prompt_continuations").to_pylist() == [w["continuations"] for w in want]
    assert out.column("question").to_pylist() == [r["question"] for r in RECORDS[:4]]


def test_a_process_loads_the_task_once_however_often_the_function_is_unpickled(monkeypatch):
    fn = as_map_function(MMLU, shots=1)
    payload = pickle.dumps(fn)
    first = pickle.loads(payload)
    first(batch_of(RECORDS[:2]), [0, 1])
    loads = []
    monkeypatch.setattr("prompt_style.map_function.load_task", lambda *a, **k: loads.append(a))
    again = pickle.loads(payload)  # as a Ray task unpickles the function for each block
    assert again(batch_of(RECORDS[:2]), [0, 1]) == first(batch_of(RECORDS[:2]), [0, 1])
    assert loads == []


def test_a_task_whose_process_docs_changes_its_records_takes_the_processed_ones(tmp_path):
    """``process_docs`` works on the whole split, which a map over batches of rows cannot
    apply: the map function refuses raw rows of such a task (their prompts would not be
    render's) and takes the task's processed records with ``processed=True``."""
    (tmp_path / "utils.py").write_text(
        "def process_docs(dataset):\n    return dataset.map(lambda doc: {**doc, 'q': doc['q'].upper()})\n"
    )
    (tmp_path / "test.jsonl").write_text('{"q": "one", "a": "1"}\n{"q": "two", "a": "2"}\n')
    task = tmp_path / "shout.yaml"
    task.write_text(
        "task: shout\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: test.jsonl\n"
        "test_split: test\noutput_type: generate_until\nprocess_docs: !function utils.process_docs\n"
        'doc_to_text: "Q: {{q}}"\ndoc_to_target: a\n'
    )
    with pytest.raises(OptionError, match="process_docs") as exc:
        as_map_function(task, trust_code=True)
    assert "shout.yaml" in str(exc.value) and "processed=True" in str(exc.value)
    loaded = prompt_style.load_task(task, trust_code=True)
    records = list(loaded.records())
    fn = pickle.loads(pickle.dumps(as_map_function(task, trust_code=True, processed=True)))
    out = fn(batch_of(records), [0, 1])
    assert out["prompt_text"] == [p.text for p in loaded.render()] == ["Q: ONE", "Q: TWO"]
