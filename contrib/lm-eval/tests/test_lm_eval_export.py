"""``prompt-style export lm-eval`` and the bridge's lm-eval-free parts (no lm-eval needed).

The runs in a real lm-evaluation-harness are test_lm_eval_e2e.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from prompt_style_lm_eval.export import MARKER, task_name
from prompt_style_lm_eval.runtime import Docs, Prompts, RunSettings
from prompt_style_lm_eval.source import source_of

import prompt_style
from prompt_style import TaskFileError, load_task
from prompt_style.cli import main

ROOT = Path(__file__).resolve().parents[3]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
ARC = ROOT / "examples" / "arc" / "task.yaml"
SCIQ = ROOT / "examples" / "sciq" / "sciq_mcq.yaml"
OC = ROOT / "examples" / "opencompass"
INPUTS = ROOT / "tests" / "golden" / "lm_eval_tasks" / "inputs"
GSM8K = ROOT / "tests" / "lm_eval_tasks" / "gsm8k" / "gsm8k.yaml"


def read_yaml(path: Path) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)


def lm_eval_config(path: Path) -> dict:
    """The task config as lm-eval hands it to the task class (``config_source`` added, ``class`` kept)."""
    config = read_yaml(path)
    config["metadata"]["config_source"] = str(path)
    return config


# -- the exported folder ---------------------------------------------------------------


def test_export_writes_a_task_folder(tmp_path, capsys):
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out), "--shots", "2"]) == 0
    printed = capsys.readouterr().out
    folder = out / "mmlu_example"
    assert f"wrote {folder / 'mmlu_example.yaml'}" in printed
    assert f"--include_path {out} --tasks mmlu_example" in printed
    config = read_yaml(folder / "mmlu_example.yaml")
    assert config["class"] == "!function prompt_style_lm_eval.task.PromptStyleTask"
    assert config["task"] == "mmlu_example" and config["output_type"] == "multiple_choice"
    assert config["num_fewshot"] == 2 and config["test_split"] == "test"
    assert config["dataset_path"] == "json"
    assert config["dataset_kwargs"] == {"data_files": {"test": "data/test.jsonl", "dev": "data/dev.jsonl"}}
    block = config["metadata"]["prompt_style_export"]
    assert block["task"] == str(MMLU) and block["options"] == {"meta": "plain", "shots": 2}
    # the records are copied byte for byte
    data = MMLU.parent / "data"
    assert (folder / "data" / "test.jsonl").read_bytes() == (data / "test.jsonl").read_bytes()
    assert (folder / "data" / "dev.jsonl").read_bytes() == (data / "dev.jsonl").read_bytes()
    assert json.loads((folder / MARKER).read_text())["task"] == "mmlu_example"


def test_the_exported_folder_loads_the_same_prompts(tmp_path):
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(ARC), "--out", str(out), "--seed", "5"]) == 0
    source = source_of(lm_eval_config(out / "arc_example" / "arc_example.yaml"))
    prompts = Prompts(source.task, source.options)
    expected = list(load_task(ARC, seed=5).render())
    assert [prompts.render(doc).text for doc in prompts.docs()] == [p.text for p in expected]
    assert source.options["seed"] == 5 and source.expected_sha256


def test_a_generation_task_carries_its_stop_sequences_and_scoring(tmp_path):
    out = tmp_path / "tasks"
    data = [f"--data=test={INPUTS / 'gsm8k' / 'test.jsonl'}", f"--data=train={INPUTS / 'gsm8k' / 'train.jsonl'}"]
    assert main(["export", "lm-eval", str(GSM8K), "--out", str(out), *data]) == 0
    config = read_yaml(out / "gsm8k" / "gsm8k.yaml")
    assert config["output_type"] == "generate_until"
    assert config["generation_kwargs"]["until"] == ["Question:", "</s>", "<|im_end|>"]
    assert config["generation_kwargs"]["do_sample"] is False
    assert [f["name"] for f in config["filter_list"]] == ["strict-match", "flexible-extract"]
    assert config["metric_list"][0]["metric"] == "exact_match" and config["metadata"]["version"] == 3.0


def test_records_in_memory_are_written(tmp_path):
    """A task-template file's formatter makes its records: they are written as JSON Lines."""
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(SCIQ), "--out", str(out), "--shots", "1"]) == 0
    folder = out / "sciq_mcq"
    lines = (folder / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["answer"] == "skin"  # map_fields ran
    source = source_of(lm_eval_config(folder / "sciq_mcq.yaml"))
    prompts = Prompts(source.task, source.options)
    assert [prompts.render(d).text for d in prompts.docs()] == [p.text for p in load_task(SCIQ, shots=1).render()]


def test_data_reference_keeps_the_original_files(tmp_path):
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out), "--export-option", "data=reference"]) == 0
    config = read_yaml(out / "mmlu_example" / "mmlu_example.yaml")
    assert config["dataset_kwargs"]["data_files"]["test"] == str(MMLU.parent / "data" / "test.jsonl")
    assert not list((out / "mmlu_example" / "data").iterdir())


def test_exporting_again_replaces_the_folder_and_tasks_share_one(tmp_path):
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out), "--shots", "1"]) == 0
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out), "--shots", "3"]) == 0
    assert main(["export", "lm-eval", str(ARC), "--out", str(out)]) == 0
    assert read_yaml(out / "mmlu_example" / "mmlu_example.yaml")["num_fewshot"] == 3
    assert sorted(p.name for p in out.iterdir()) == ["arc_example", "mmlu_example"]


def test_an_opencompass_config_exports_its_generation_prompts(tmp_path):
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(OC / "task.yaml"), "--out", str(out)]) == 0
    config = read_yaml(out / "demo-mmlu-gen" / "demo-mmlu-gen.yaml")
    assert config["output_type"] == "generate_until" and config["generation_kwargs"] == {"until": []}


# -- what cannot be exported: one line, exit 2 ---------------------------------------------


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("prompt-style: error: ")
    return err


def test_a_name_lm_eval_cannot_run(tmp_path, capsys):
    assert main(["export", "lm-eval", str(MMLU), "--out", str(tmp_path / "o"), "--name", "my task,2"]) == 2
    err = one_error(capsys)
    assert "--name: 'my task,2' is not a name lm-evaluation-harness can run with --tasks" in err
    assert "my_task_2" in err


def test_a_default_name_is_made_safe():
    assert task_name(None, "demo mmlu/gen") == "demo_mmlu_gen"
    assert task_name(None, "-x-") == "x"
    assert task_name("ok-name.v2", "ignored") == "ok-name.v2"


def test_out_that_holds_other_files(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out)]) == 2
    err = one_error(capsys)
    assert "--out" in err and "'notes.txt' is not a prompt-style export" in err
    assert (out / "notes.txt").read_text() == "mine" and len(list(out.iterdir())) == 1


def test_out_that_is_a_file(tmp_path, capsys):
    out = tmp_path / "o"
    out.write_text("x")
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out)]) == 2
    assert "is a file" in one_error(capsys)


def test_perplexity_mode_is_refused(tmp_path, capsys):
    assert main(["export", "lm-eval", str(OC / "task_ppl.yaml"), "--out", str(tmp_path / "o")]) == 2
    err = one_error(capsys)
    assert "perplexity mode" in err and "--mode gen" in err and "task_ppl.yaml" in err
    assert not (tmp_path / "o").exists()


def test_records_that_cannot_be_rendered_are_all_named_before_anything_is_written(tmp_path, capsys):
    records = [{"q": "fine", "c": ["a", "b"], "a": 0}, {"q": "null", "c": ["a", None], "a": 0}]
    records += [{"q": f"past the end {i}", "c": ["a", "b"], "a": 7} for i in range(12)]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    task = tmp_path / "task.yaml"
    task.write_text("data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: a\n")
    assert main(["export", "lm-eval", str(task), "--out", str(tmp_path / "o")]) == 2
    err = one_error(capsys)
    assert "13 of 14 records cannot be rendered" in err and "record 1: choice 1 is null" in err
    assert "record 2: index 7 is out of range" in err and "; and 8 more" in err and "prompt-style lint" in err
    assert not (tmp_path / "o").exists()


def test_a_bad_first_record_is_named_with_the_others(tmp_path, capsys):
    records = [{"q": "null", "c": ["a", None], "a": 0}, {"q": "fine", "c": ["a", "b"], "a": 0}]
    records.append({"q": "past the end", "c": ["a", "b"], "a": 7})
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    task = tmp_path / "task.yaml"
    task.write_text("data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: a\n")
    assert main(["export", "lm-eval", str(task), "--out", str(tmp_path / "o")]) == 2
    err = one_error(capsys)
    assert "2 of 3 records cannot be rendered" in err and "record 0: choice 1 is null" in err and "record 2:" in err


def test_multi_turn_is_refused(tmp_path, capsys):
    task = ROOT / "examples" / "opencompass_multiturn" / "task.yaml"
    assert main(["export", "lm-eval", str(task), "--out", str(tmp_path / "o")]) == 2
    assert "multi-turn" in one_error(capsys)


def test_messages_without_text_are_refused(tmp_path, capsys):
    assert main(["export", "lm-eval", str(MMLU), "--out", str(tmp_path / "o"), "--meta", "messages"]) == 2
    err = one_error(capsys)
    assert "meta: the meta template gives messages but no text" in err and "--apply_chat_template" in err


def test_an_unknown_export_option(tmp_path, capsys):
    args = ["export", "lm-eval", str(MMLU), "--out", str(tmp_path / "o"), "--export-option", "dta=copy"]
    assert main(args) == 2
    assert "no option 'dta'" in one_error(capsys)
    assert main([*args[:-1], "data=link"]) == 2
    assert "data must be one of copy, reference" in one_error(capsys)


# -- the run-time side, without lm-eval ------------------------------------------------


@pytest.fixture
def mmlu_prompts(tmp_path):
    out = tmp_path / "tasks"
    assert main(["export", "lm-eval", str(MMLU), "--out", str(out)]) == 0
    source = source_of(lm_eval_config(out / "mmlu_example" / "mmlu_example.yaml"))
    return Prompts(source.task, source.options)


def fake_chat_template(messages, add_generation_prompt=True):
    return json.dumps([messages, add_generation_prompt])


def test_run_settings_load_what_render_loads(mmlu_prompts):
    prompts = mmlu_prompts
    doc = prompts.docs()[1]
    assert type(doc) is dict and prompts.index_of(doc) == 1 and doc == list(load_task(MMLU).records())[1]
    # as exported
    assert prompts.render(doc, RunSettings(num_fewshot=5)).text == list(load_task(MMLU).render())[1].text
    # --num_fewshot 2, --fewshot_random_seed 1234 (lm-eval's default: the task's own seed)
    assert prompts.changes(RunSettings(num_fewshot=2, seed=1234)) == {"shots": 2}
    # --apply_chat_template --system_instruction ..., single-turn
    settings = RunSettings(5, apply_chat_template=True, system_instruction="Hi.", fewshot_as_multiturn=False)
    prompt = prompts.render(doc, settings)
    expected = list(load_task(MMLU, meta="messages", system_instruction="Hi.", fewshot_as_multiturn=False).render())[1]
    assert prompt.messages == expected.messages and prompt.continuations == ("A", "B", "C", "D")
    context = prompts.context(prompt, fake_chat_template)
    assert json.loads(context) == [expected.messages, True]
    assert prompts.task_for(settings) is prompts.task_for(settings)  # loaded once


def test_a_chat_run_renders_a_variant_and_checks_only_what_it_renders():
    """A run with lm-eval's chat settings renders a variant of the default task (the task
    file and few-shot pool shared), through the fast path; the default task, never used,
    is not checked (its fast path not compiled)."""
    prompts = Prompts(MMLU, {})
    settings = RunSettings(5, apply_chat_template=True, system_instruction="Hi.")
    contexts = [prompts.request(doc, settings, fake_chat_template) for doc in prompts.docs()]
    expected = list(load_task(MMLU, meta="messages", system_instruction="Hi.").render())
    assert [json.loads(c) for c in contexts] == [[p.messages, True] for p in expected]
    assert [prompts.gold(doc) for doc in prompts.docs()] == [(p.target, ["A", "B", "C", "D"]) for p in expected]
    assert id(prompts.default) not in prompts._checked_ids and prompts.default.renderer._fast_path is None
    assert prompts.render(prompts.docs()[0]).text == load_task(MMLU).render().__next__().text
    assert id(prompts.default) in prompts._checked_ids


def test_perplexity_candidates_are_refused_when_first_rendered():
    task = ROOT / "examples" / "opencompass" / "task_ppl.yaml"
    prompts = Prompts(task, {})
    with pytest.raises(prompt_style.RenderError, match="perplexity candidates"):
        prompts.request(prompts.docs()[0], RunSettings(prompts.default_shots))


def test_request_arguments(mmlu_prompts):
    prompts = mmlu_prompts
    doc = prompts.docs()[0]
    prompt = prompts.render(doc)
    args = prompts.arguments(doc, prompt.text, "multiple_choice", mutual_info=True)
    assert args[:4] == tuple((prompt.text, c) for c in (" A", " B", " C", " D"))
    assert args[4:] == tuple(("", c) for c in (" A", " B", " C", " D"))
    assert prompts.gold(doc) == (prompt.target, ["A", "B", "C", "D"])
    assert prompts.last(doc) is prompt
    (generate,) = prompts.arguments(doc, "ctx", "generate_until", {"until": ["\n"], "max_gen_toks": 5})
    assert generate == ("ctx", {"until": ["\n"], "max_gen_toks": 5})


def test_docs_name_their_columns(mmlu_prompts):
    docs = mmlu_prompts.docs()
    assert isinstance(docs, Docs) and list(docs.features) == list(docs[0])


def test_a_record_from_elsewhere_is_found_by_value(mmlu_prompts):
    record = dict(mmlu_prompts.docs()[2])
    assert mmlu_prompts.index_of(record) == 2
    with pytest.raises(prompt_style.RenderError, match="not a record of its evaluated split"):
        mmlu_prompts.index_of({"question": "?"})


def test_documents_are_found_in_any_order(mmlu_prompts):
    # lm-eval asks in order (a cursor per pass finds each document); any other order, a
    # repeat or a copy is found too, and each gives its own record's prompt and answer
    prompts = mmlu_prompts
    docs = prompts.docs()
    settings = RunSettings(num_fewshot=prompts.default_shots)
    expected = list(load_task(MMLU).render())
    for order in (range(len(docs)), reversed(range(len(docs))), [2, 2, 0, 3, 1, 0]):
        for index in order:
            assert prompts.request(docs[index], settings) == expected[index].text
            assert prompts.gold(docs[index])[0] == expected[index].target
            assert prompts.gold(dict(docs[index]))[0] == expected[index].target


def test_one_object_twice_in_records_given_in_memory(tmp_path):
    record = {"question": "Q?", "choices": ["a", "b", "c", "d"], "answer": 1}
    other = {"question": "R?", "choices": ["e", "f", "g", "h"], "answer": 2}
    prompts = Prompts(MMLU, {"data": {"test": [record, other, record], "dev": [record] * 5}})
    docs = prompts.docs()
    assert docs[0] is not docs[2] and docs[0] == docs[2]  # each position its own object
    assert [prompts.index_of(doc) for doc in docs] == [0, 1, 2]


# -- task configs the task class reads ---------------------------------------------------


def test_a_block_config_names_the_task_file_itself(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("task: t\n", encoding="utf-8")
    config = {
        "task": "t",
        "dataset_path": "allenai/ai2_arc",
        "metadata": {"config_source": str(path), "prompt_style": {"style": "mcq", "meta": "chatml"}},
    }
    source = source_of(config)
    assert source.task == path and source.harness_data
    assert source.options == {"meta": "chatml", "trust_code": True, "task_format": "lm-eval"}
    config["dataset_path"] = "json"
    config["dataset_kwargs"] = {"data_files": {"test": "t.jsonl"}}
    assert not source_of(config).harness_data  # prompt-style reads the files itself


def test_a_config_without_a_block(tmp_path):
    with pytest.raises(TaskFileError, match="has no metadata.prompt_style block"):
        source_of({"task": "t", "metadata": {"config_source": str(tmp_path / "t.yaml")}})


def test_an_export_whose_task_file_is_gone(tmp_path):
    out = tmp_path / "tasks"
    copy = tmp_path / "task.yaml"
    copy.write_text(MMLU.read_text(encoding="utf-8").replace("data/", str(MMLU.parent / "data") + "/"))
    assert main(["export", "lm-eval", str(copy), "--out", str(out)]) == 0
    copy.unlink()
    with pytest.raises(TaskFileError, match="which is not there any more"):
        source_of(lm_eval_config(out / "mmlu_example" / "mmlu_example.yaml"))


def test_options_holding_line_breaks_keep_the_task_file_valid(tmp_path, capsys):
    """A system instruction or a chat template of several lines (and U+2028, which YAML reads as
    a line break): the header's render command stays one comment line, so the file is YAML
    lm-eval loads, the options read back as given, and the command gives them back in bash."""
    out = tmp_path / "tasks"
    instruction = "Be brief.\nUse one word.\u2028Really 'one'."
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
    argv = ["export", "lm-eval", str(MMLU), "--out", str(out), "--name", "lines", "--meta", "hf"]
    argv += ["--meta-option", f"chat_template={template}", "--system-instruction", instruction]
    assert main(argv) == 0, capsys.readouterr().err
    path = out / "lines" / "lines.yaml"
    config = read_yaml(path)
    options = config["metadata"]["prompt_style_export"]["options"]
    assert options["system_instruction"] == instruction and options["meta_options"]["chat_template"] == template
    header = path.read_text(encoding="utf-8").split("\ntask: lines\n")[0]
    assert all(line.startswith("#") for line in header.split("\n"))
    assert not any(c in header for c in "\r\x85\u2028\u2029")
    command = next(line for line in header.split("\n") if "prompt-style render" in line)
    shell = command.split("prompt-style render ", 1)[1]
    echoed = (
        subprocess.run(
            ["bash", "-c", f'for w in {shell}; do printf "%s\\0" "$w"; done'], capture_output=True, cwd=path.parent
        )
        .stdout.decode("utf-8")
        .split("\0")
    )
    assert f"system_instruction={instruction}" not in echoed  # given as --system-instruction VALUE
    assert instruction in echoed and f"chat_template={template}" in echoed


@pytest.mark.parametrize("shots", [0, 1])
@pytest.mark.parametrize("chat", [False, True])
def test_multiple_input_records_give_one_context_per_choice(shots, chat):
    """lm-evaluation-harness's winogrande (task code, ``doc_to_text`` an index): every
    choice's context, through the fast path as through the general one."""
    task = ROOT / "tests" / "lm_eval_tasks" / "winogrande" / "default.yaml"
    data = {
        "validation": str(INPUTS / "winogrande" / "validation.jsonl"),
        "train": str(INPUTS / "winogrande" / "train.jsonl"),
    }
    prompts = Prompts(task, {"data": data, "trust_code": True, "shots": shots})
    settings = RunSettings(shots, apply_chat_template=chat)
    template = fake_chat_template if chat else None
    contexts = [prompts.request(doc, settings, template) for doc in prompts.docs()]
    options = {"meta": "messages"} if chat else {}
    expected = list(load_task(task, data=data, trust_code=True, shots=shots, **options).render())
    assert all(isinstance(c, list) and len(c) == 2 for c in contexts)
    if chat:
        assert [[json.loads(x)[0] for x in c] for c in contexts] == [list(p.contexts) for p in expected]
    else:
        assert contexts == [list(p.contexts) for p in expected]
    assert [prompts.gold(doc)[0] for doc in prompts.docs()] == [p.target for p in expected]
