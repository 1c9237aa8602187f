"""The parts of prompt-style-lighteval that need no lighteval: the task list, the
mapping onto lighteval's docs, the exporter (the dev environment has no lighteval)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from prompt_style_lighteval.exporter import read_entries
from prompt_style_lighteval.mapping import ROW_KEY, DocParts, doc_parts, render_parts, rows_dataset
from prompt_style_lighteval.spec import ENV, read_specs, specs_from_environment

import prompt_style
from prompt_style import OptionError, RenderError
from prompt_style.cli import main

HERE = Path(__file__).resolve().parent
RECORDS = [
    {"q": "Which planet is red?", "c": ["Venus", "Mars", "Jupiter"], "a": 1, "s": "astronomy"},
    {"q": "2 + 2 = ?", "c": ["3", "4"], "a": 1, "s": "maths"},
    {"q": "Largest ocean?", "c": ["Atlantic", "Pacific"], "a": 1, "s": "geography"},
]
TASK = {"task": "tiny", "doc_to_text": "q", "doc_to_choice": "{{c}}", "doc_to_target": "a", "template": "mcq"}


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "task: tiny\ndata: {test: test.jsonl}\nfewshot_split: test\ndoc_to_text: q\n"
        "doc_to_choice: '{{c}}'\ndoc_to_target: a\ntemplate: mcq\n",
        encoding="utf-8",
    )
    return path


# -- PROMPT_STYLE_LIGHTEVAL_TASKS ------------------------------------------------


def test_entries_are_task_files_with_options(tmp_path):
    specs = read_specs(
        "a.yaml shots=5 name=a5 metrics=exact_match,loglikelihood_acc; "
        "b.yaml meta=messages 'system_instruction=Be brief, please.'\n"
        "# a comment\n"
        'c.yaml data=test=r.jsonl meta_options="{add_generation_prompt: false}"'
    )
    assert [(s.path.name, dict(s.load_options), dict(s.bridge)) for s in specs] == [
        ("a.yaml", {"shots": 5}, {"name": "a5", "metrics": ["exact_match", "loglikelihood_acc"]}),
        ("b.yaml", {"meta": "messages", "system_instruction": "Be brief, please."}, {}),
        ("c.yaml", {"data": {"test": "r.jsonl"}, "meta_options": {"add_generation_prompt": False}}, {}),
    ]


def test_task_list_files_resolve_their_paths_and_report_their_lines(tmp_path):
    listing = tmp_path / "lists" / "tasks.txt"
    listing.parent.mkdir()
    listing.write_text("# my tasks\nmmlu.yaml shots=1 data=test=t.jsonl\n\narc.yaml shot=2\n", encoding="utf-8")
    with pytest.raises(OptionError) as exc:
        read_specs(f"@{listing}")
    assert str(exc.value) == f"{listing}:4: shot: unknown option 'shot' (did you mean 'shots'?)"
    listing.write_text("mmlu.yaml shots=1 data=test=t.jsonl\n", encoding="utf-8")
    [spec] = specs_from_environment({ENV: f"@{listing}"})
    assert spec.path == listing.parent / "mmlu.yaml"
    assert spec.load_options["data"] == {"test": str(listing.parent / "t.jsonl")}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a.yaml nme=x", f"{ENV} entry 1: nme: unknown option 'nme' (did you mean 'name'?)"),
        ("a.yaml; b.yaml shots=-2", f"{ENV} entry 2: shots: must be 0 or more, not -2"),
        ("a.yaml shots", f"{ENV} entry 1: expected KEY=VALUE after the task file, got 'shots'"),
        ("a.yaml name=a|b", f"{ENV} entry 1: name: must be a name without '|' or ','"),
        ("a.yaml generation_size=-1", f"{ENV} entry 1: generation_size: must be a whole number, 0 or more"),
        ("@missing.txt", f"{ENV} entry 1: cannot read the task list missing.txt"),
        ("a.yaml 'style=mcq", f"{ENV}: cannot read the entries: No closing quotation"),
    ],
)
def test_bad_entries_name_the_entry(value, message):
    with pytest.raises(OptionError) as exc:
        specs_from_environment({ENV: value})
    assert str(exc.value).startswith(message)


def test_no_variable_no_tasks():
    assert specs_from_environment({}) == [] and specs_from_environment({ENV: "  "}) == []


# -- the mapping onto lighteval's docs --------------------------------------------


def _render(**options):
    return prompt_style.render_records(RECORDS, **{**TASK, **options})


def test_a_text_prompt_is_the_whole_query():
    prompts = _render(num_fewshot=1, fewshot=RECORDS[:1])
    parts = doc_parts(prompts[1])
    assert parts == DocParts(prompts[1].text, (" A", " B"), 1, True)


def test_chat_turns_become_few_shot_samples():
    [_, prompt, _] = prompt_style.render_records(
        RECORDS, meta="messages", fewshot=RECORDS[:2], num_fewshot=2, description="Answer the question.", **TASK
    )
    parts = doc_parts(prompt)
    assert parts.system == "Answer the question."
    assert len(parts.shots) == 2 and parts.shots[0] == (prompt.messages[1]["content"], prompt.messages[2]["content"])
    assert parts.query == prompt.messages[-1]["content"] and parts.choices == tuple(prompt.continuations)


def test_generation_references_are_the_choices():
    [prompt, *_] = prompt_style.render_records(
        RECORDS, doc_to_text="q", doc_to_target="{{c[a]}}", output_type="generate_until", until=["\n"]
    )
    assert doc_parts(prompt) == DocParts(prompt.text, ("Mars",), 0, False)


def test_what_lighteval_cannot_send_names_the_record():
    [prompt, *_] = _render(meta="messages")
    with pytest.raises(RenderError, match="record 0: lighteval builds a conversation"):
        doc_parts(replace(prompt, messages=[{"role": "assistant", "content": "x"}]))
    # an answer prefill (gen_prefix): single-turn few-shot would not help, plain text would
    prefill = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "The answer is"}]
    with pytest.raises(RenderError, match="ends with an assistant prefill") as exc:
        doc_parts(replace(prompt, messages=prefill))
    assert "meta=plain" in str(exc.value) and "fewshot_as_multiturn" not in str(exc.value)
    parts = [{"role": "user", "content": [{"type": "text", "text": "x"}]}]
    with pytest.raises(RenderError, match="content is not text"):
        doc_parts(replace(prompt, messages=[{"role": "user", "content": parts}]))


def test_a_system_message_must_be_the_same_for_every_record(task_file):
    task = prompt_style.load_task(task_file, meta="messages")
    assert render_parts(task).system is None
    varying = task_file.read_text() + "description: 'About {{s}}.'\n"
    task_file.write_text(varying)
    with pytest.raises(OptionError) as exc:
        render_parts(prompt_style.load_task(task_file, meta="messages"))
    assert str(exc.value).startswith(f"{task_file}: description: record 1: this record's system message differs")
    assert render_parts(prompt_style.load_task(task_file)).system is None  # plain: the description is in the text


def test_every_record_that_does_not_render_is_named_at_once(task_file, tmp_path):
    bad = tmp_path / "bad.jsonl"
    records = [RECORDS[0], {**RECORDS[1], "a": 7}, RECORDS[2], {**RECORDS[0], "c": ["x", None]}]
    bad.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for meta in ("plain", "messages"):
        with pytest.raises(prompt_style.RecordErrors) as exc:
            render_parts(prompt_style.load_task(task_file, meta=meta, data={"test": str(bad)}))
        assert [e.index for e in exc.value.errors] == [1, 3]
        assert str(exc.value).startswith(f"{task_file}: data.test: 2 of 4 records cannot be rendered: ")


def test_rows_dataset_is_written_once(tmp_path):
    folder = rows_dataset(3, tmp_path)
    lines = (folder / "test.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{ROW_KEY: 0}, {ROW_KEY: 1}, {ROW_KEY: 2}]
    assert rows_dataset(3, tmp_path) == folder and sorted(p.name for p in folder.iterdir()) == ["test.jsonl"]


# -- prompt-style export lighteval -------------------------------------------------


def test_export_writes_a_module_and_adds_tasks(task_file, tmp_path, capsys):
    out = tmp_path / "mods" / "tasks.py"
    assert main(["export", "lighteval", str(task_file), "--out", str(out), "--shots", "1"]) == 0
    printed = capsys.readouterr().out
    assert f'run it with: lighteval accelerate "model_name=MODEL" "tiny|0" --custom-tasks {out}' in printed
    args = ["export", "lighteval", str(task_file), "--out", str(out), "--name", "tiny_chat", "--meta", "messages"]
    assert main([*args, "--export-option", "metrics=exact_match", "--export-option", "generation_size=32"]) == 0
    entries = read_entries(out)
    assert [e["name"] for e in entries] == ["tiny", "tiny_chat"]
    assert entries[0] == {
        "task": str(task_file),
        "name": "tiny",
        "load_options": {"meta": "plain", "shots": 1},
        "metrics": None,
        "generation_size": None,
        "version": 0,
    }
    assert entries[1]["metrics"] == ["exact_match"] and entries[1]["generation_size"] == 32
    text = out.read_text()
    ast.parse(text)
    assert "TASKS_TABLE = task_configs_from(ENTRIES, __file__)" in text
    # exporting a task again replaces it
    assert main(["export", "lighteval", str(task_file), "--out", str(out), "--shots", "2"]) == 0
    again = [(e["name"], e["load_options"].get("shots")) for e in read_entries(out)]
    assert again == [("tiny_chat", None), ("tiny", 2)]


def test_export_names_the_system_prompt_to_give_the_model(task_file, tmp_path, capsys):
    task_file.write_text(task_file.read_text() + "description: 'Answer briefly.'\n")
    out = tmp_path / "t.py"
    assert main(["export", "lighteval", str(task_file), "--out", str(out), "--meta", "messages"]) == 0
    assert "system_prompt='Answer briefly.'" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--export-option", "metric=x"], "exporter 'lighteval' has no option 'metric' (did you mean 'metrics'?)"),
        (["--name", "a|b"], "name: must be a name without '|' or ','"),
    ],
)
def test_export_option_errors(task_file, tmp_path, capsys, extra, message):
    code = main(["export", "lighteval", str(task_file), "--out", str(tmp_path / "t.py"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_perplexity_prompts_have_no_lighteval_request(tmp_path, capsys):
    task = HERE.parents[2] / "examples" / "opencompass" / "task_ppl.yaml"
    assert main(["export", "lighteval", str(task), "--out", str(tmp_path / "t.py")]) == 2
    err = capsys.readouterr().err
    assert "record 0: perplexity prompts (one whole prompt per label) have no lighteval request" in err


def test_a_multi_turn_task_is_refused_naming_its_file(tmp_path, capsys):
    task = HERE.parents[2] / "examples" / "opencompass_multiturn" / "task.yaml"
    assert main(["export", "lighteval", str(task), "--out", str(tmp_path / "t.py")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prompt-style: error: {task}") and "multi-turn" in err and len(err.splitlines()) == 1


def test_export_never_overwrites_a_foreign_file(task_file, tmp_path, capsys):
    out = tmp_path / "mine.py"
    out.write_text("print('my code')\n")
    assert main(["export", "lighteval", str(task_file), "--out", str(out)]) == 2
    assert "was not written by prompt-style export lighteval" in capsys.readouterr().err
    assert out.read_text() == "print('my code')\n"
    assert main(["export", "lighteval", str(task_file), "--out", str(tmp_path)]) == 2
    assert "is not a Python file" in capsys.readouterr().err


def test_export_reports_records_lighteval_cannot_take(task_file, tmp_path, capsys):
    (tmp_path / "test.jsonl").write_text(json.dumps({"q": "x", "c": ["a", "b"], "a": 7}) + "\n")
    assert main(["export", "lighteval", str(task_file), "--out", str(tmp_path / "t.py")]) == 2
    assert "record 0" in capsys.readouterr().err and not (tmp_path / "t.py").exists()


def test_the_exporter_is_a_plugin():
    manager = prompt_style.create_plugin_manager(environ={})
    provider = manager.resolve("export_task", "lighteval")
    assert isinstance(provider.factory, prompt_style.Exporter)
    assert "prompt-style-lighteval" in provider.describe()["distribution"]


def test_sources_use_the_public_api_only():
    for path in (HERE.parent / "src" / "prompt_style_lighteval").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"from prompt_style\.|import prompt_style\.", text), path.name


def test_an_exported_module_is_python_whatever_the_system_prompt_holds(tmp_path, capsys):
    """A system message holding triple quotes, backslashes and line breaks: the module (whose
    docstring shows the command to run) still compiles, and shows the command as printed."""
    task = HERE.parents[2] / "tools" / "bridges" / "cases" / "awkward" / "gen.yaml"
    out = tmp_path / "tasks.py"
    system = 'He said """hi""" and \'ok\' \\d\nnext \u2028 line'
    argv = ["export", "lighteval", str(task), "--out", str(out), "--meta", "messages", "--system-instruction", system]
    assert main(argv) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    module = ast.parse(out.read_text(encoding="utf-8"))
    usage = next(line for line in printed.splitlines() if line.startswith("run it with: ")).split(": ", 1)[1]
    assert usage in ast.get_docstring(module)
    assert read_entries(out)[0]["load_options"]["system_instruction"] == system
