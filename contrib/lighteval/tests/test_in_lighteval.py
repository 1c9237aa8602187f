"""The bridge inside lighteval: configs, prompt functions, docs as lighteval's
PromptManager sends them, and errors.

Needs lighteval (skipped without it: the repository's dev environment has
none). ``tools/bridges/e2e_lighteval.py`` runs these in a venv with lighteval
0.13.0, then the real ``lighteval custom`` cases.
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest

pytest.importorskip("lighteval", reason="lighteval is not installed (see tools/bridges/e2e_lighteval.py)")

from lighteval.tasks.prompt_manager import PromptManager  # noqa: E402
from prompt_style_lighteval import RenderedDoc, read_specs, task_config, task_configs  # noqa: E402

import prompt_style  # noqa: E402

RECORDS = [
    {"q": "Which planet is red?", "c": ["Venus", "Mars", "Jupiter"], "a": 1},
    {"q": "2 + 2 = ?", "c": ["3", "4"], "a": 1},
    {"q": "Largest ocean?", "c": ["Atlantic", "Pacific"], "a": 1},
    {"q": "Fastest land animal?", "c": ["Cheetah", "Horse"], "a": 0},
]


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "task: tiny\ndata: {test: test.jsonl}\nfewshot_split: test\ndoc_to_text: q\n"
        "doc_to_choice: '{{c}}'\ndoc_to_target: a\ntemplate: mcq\nretriever: {name: random}\nnum_fewshot: 2\n",
        encoding="utf-8",
    )
    return path


def _docs(config):
    return [config.prompt_function({"ps_index": i, "__index": i, "__few_shots": False}, config.name) for i in range(4)]


def test_plain_prompts_are_the_rendered_text(task_file, tmp_path):
    config = task_config(task_file, rows=tmp_path / "rows")
    assert config.name == "tiny" and config.evaluation_splits == ("test",) and config.num_fewshots == 0
    assert (Path(config.hf_repo) / "test.jsonl").read_text().count("\n") == 4
    assert [m.metric_name for m in config.metrics] == ["acc"]
    manager = PromptManager(use_chat_template=False)
    rendered = list(prompt_style.load_task(task_file).render())
    docs = _docs(config)
    assert [manager.prepare_prompt(d) for d in docs] == [p.text for p in rendered]
    assert [d.choices for d in docs] == [list(p.continuations) for p in rendered]
    assert [d.gold_index for d in docs] == [p.target for p in rendered]


def test_chat_turns_survive_lightevals_own_few_shot_assignment(task_file, tmp_path):
    config = task_config(task_file, load_options={"meta": "messages"}, rows=tmp_path / "rows")
    rendered = list(prompt_style.load_task(task_file, meta="messages").render())
    docs = _docs(config)
    assert all(isinstance(d, RenderedDoc) for d in docs)
    for doc in docs:
        doc.fewshot_samples = []  # what lighteval's get_docs does with NAME|0
    manager = PromptManager(use_chat_template=True, tokenizer=None)
    assert [manager.prepare_prompt_api(d) for d in docs] == [p.messages for p in rendered]
    with_system = PromptManager(use_chat_template=True, tokenizer=None, system_prompt="Be brief.")
    assert with_system.prepare_prompt_api(docs[0])[0] == {"role": "system", "content": "Be brief."}


def test_a_record_asked_twice_gets_a_doc_of_its_own(task_file, tmp_path):
    for options in ({}, {"meta": "messages"}):
        config = task_config(task_file, load_options=options, rows=tmp_path / "rows")
        line = {"ps_index": 1, "__few_shots": False}
        first, again = config.prompt_function(line, "tiny"), config.prompt_function(line, "tiny")
        assert first is not again and type(first) is type(again)
        assert (first.query, first.choices, first.gold_index) == (again.query, again.choices, again.gold_index)
        assert [s.query for s in first.fewshot_samples] == [s.query for s in again.fewshot_samples]


def test_lightevals_own_few_shot_examples_are_refused(task_file, tmp_path):
    config = task_config(task_file, rows=tmp_path / "rows")
    with pytest.raises(prompt_style.OptionError, match=r"run it as 'tiny\|0'"):
        config.prompt_function({"ps_index": 0, "__few_shots": True}, "tiny")


def test_configs_copy_and_pickle(task_file, tmp_path):
    config = task_config(task_file, load_options={"shots": 1}, rows=tmp_path / "rows")
    # lighteval deep-copies configs: the copy renders nothing again
    assert copy.deepcopy(config).prompt_function.__self__ is config.prompt_function.__self__
    again = pickle.loads(pickle.dumps(config.prompt_function))
    line = {"ps_index": 2, "__few_shots": False}
    assert again(line, "tiny").query == config.prompt_function(line, "tiny").query


def test_bad_names_and_metrics(task_file, tmp_path):
    specs = read_specs(f"{task_file} name=a; {task_file} name=a shots=1")
    with pytest.raises(prompt_style.OptionError, match="two tasks are named 'a'"):
        task_configs(specs, rows=tmp_path / "rows")
    with pytest.raises(prompt_style.OptionError, match="lighteval has no metric 'exact_mach'.*exact_match"):
        task_config(task_file, metrics=["exact_mach"], rows=tmp_path / "rows")


def test_generation_stops_and_references(tmp_path):
    (tmp_path / "test.jsonl").write_text(json.dumps({"q": "Capital of France?", "a": "Paris"}) + "\n")
    task = tmp_path / "gen.yaml"
    task.write_text(
        'task: g\ndata: {test: test.jsonl}\ndoc_to_text: "Q: {{q}}\\nA:"\ndoc_to_target: a\n'
        'output_type: generate_until\nuntil: ["\\n"]\n'
    )
    config = task_config(task, generation_size=16, rows=tmp_path / "rows")
    assert list(config.stop_sequence) == ["\n"]
    assert config.generation_size == 16 and [m.metric_name for m in config.metrics] == ["em"]
    [doc] = [config.prompt_function({"ps_index": 0}, "g")]
    assert doc.query == "Q: Capital of France?\nA:" and doc.get_golds() == ["Paris"]


def test_the_offline_model_records_any_text_one_line_each(tmp_path, monkeypatch):
    """U+2028 (a line end to str.splitlines) and a lone surrogate (no UTF-8 for it) in a prompt:
    still one JSON line per request, decoding to the same text."""
    from types import SimpleNamespace

    from lighteval.tasks.requests import Doc
    from prompt_style_lighteval import offline_model

    record = tmp_path / "received.jsonl"
    monkeypatch.setenv(offline_model.RECORD, str(record))
    text = "a\u2028b\u2029c\x85d\ud800e ✓"
    doc = Doc(query=text, choices=[" A", " B"], gold_index=0, task_name="t|0", id="0")
    offline_model.PromptRecorder(SimpleNamespace(system_prompt=None))._record(doc, "loglikelihood")
    lines = record.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["text"] == text
