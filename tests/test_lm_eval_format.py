"""The ``lm-eval`` task-file format: lm-evaluation-harness task YAML read into a TaskConfig.

The byte-for-byte comparison with the real lm-eval is tests/test_golden_lm_eval_tasks.py;
this module checks the reader's rules and errors one by one on small task files.
"""

from __future__ import annotations

import json
import pickle
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest

import prompt_style
from prompt_style import OptionError, RenderError, TaskFileError, load_task
from prompt_style.cli import main
from prompt_style.formats.lm_eval.docs import Docs, as_records

HERE = Path(__file__).resolve().parent
TASKS = HERE / "lm_eval_tasks"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


MC = """\
task: tiny
dataset_path: some/dataset
output_type: multiple_choice
test_split: test
doc_to_text: "Q: {{q}}\\nA:"
doc_to_choice: "{{choices}}"
doc_to_target: answer
metric_list:
  - metric: acc
"""
RECORDS = [
    {"q": "one?", "choices": ["a", "b"], "answer": 0},
    {"q": "two?", "choices": ["c", "d", "e"], "answer": 2},
]


def render(path: Path, pm, records=RECORDS, **kw: Any) -> list[prompt_style.RenderedPrompt]:
    data = kw.pop("data", {"test": records})
    return list(load_task(path, plugins=pm, data=data, **kw).render())


def error(path: Path, pm, cls=TaskFileError, **kw: Any) -> prompt_style.PromptStyleError:
    with pytest.raises(cls) as caught:
        render(path, pm, **kw)
    return caught.value


# -- detection ----------------------------------------------------------------------


def test_an_lm_eval_task_file_is_read_by_the_lm_eval_reader(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC)
    task = load_task(path, plugins=pm, data={"test": RECORDS})
    assert task.config.format == "lm-eval"
    assert [r.text for r in task.render()] == ["Q: one?\nA:", "Q: two?\nA:"]
    assert [r.continuations for r in task.render()] == [(" a", " b"), (" c", " d", " e")]
    assert [r.target for r in task.render()] == [0, 2]


def test_a_prompt_style_task_file_stays_native(tmp_path, pm):
    path = write(tmp_path / "t.yaml", "data: test.jsonl\ndoc_to_text: q\noutput_type: generate_until\n")
    jsonl(tmp_path / "test.jsonl", RECORDS)
    assert load_task(path, plugins=pm).config.format == "native"


def test_task_format_forces_the_lm_eval_reader(tmp_path, pm):
    path = write(tmp_path / "t.yaml", "doc_to_text: q\ndoc_to_target: answer\ntest_split: test\n")
    assert load_task(path, plugins=pm, data={"test": RECORDS}).config.format == "native"
    task = load_task(path, plugins=pm, data={"test": RECORDS}, task_format="lm-eval")
    assert task.config.format == "lm-eval"
    # lm-eval's default output type is generate_until: the target is the reference.
    assert [r.target for r in task.render()] == [0, 2]
    assert task.config.output_type == "generate_until"


def test_data_files_of_a_json_dataset_are_read(tmp_path, pm, monkeypatch):
    jsonl(tmp_path / "data" / "t.jsonl", RECORDS)
    path = write(
        tmp_path / "task.yaml",
        MC.replace(
            "dataset_path: some/dataset", "dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: data/t.jsonl"
        ),
    )
    monkeypatch.chdir(tmp_path / "data")  # not found from here: relative to the task file then
    assert [r.target for r in load_task(path, plugins=pm).render()] == [0, 2]


def test_data_files_relative_to_the_current_directory_first(tmp_path, pm, monkeypatch):
    jsonl(tmp_path / "cwd" / "t.jsonl", RECORDS[:1])
    jsonl(tmp_path / "task" / "t.jsonl", RECORDS)
    files = "dataset_path: json\ndataset_kwargs:\n  data_files: t.jsonl"
    path = write(
        tmp_path / "task" / "task.yaml",
        MC.replace("dataset_path: some/dataset", files).replace("test_split: test", "test_split: train"),
    )
    monkeypatch.chdir(tmp_path / "cwd")
    # A single file (no split mapping) is the train split, as datasets does it.
    assert len(list(load_task(path, plugins=pm).render())) == 1


def test_several_data_files_and_globs_make_one_split(tmp_path, pm, monkeypatch):
    jsonl(tmp_path / "a.jsonl", RECORDS[:1])
    jsonl(tmp_path / "b.jsonl", RECORDS[1:])
    files = "dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: ['a.jsonl', 'b.jsonl']"
    path = write(tmp_path / "task.yaml", MC.replace("dataset_path: some/dataset", files))
    monkeypatch.chdir(tmp_path)
    assert [r.target for r in load_task(path, plugins=pm).render()] == [0, 2]
    path = write(
        tmp_path / "glob.yaml",
        MC.replace("dataset_path: some/dataset", files.replace("['a.jsonl', 'b.jsonl']", "'*.jsonl'")),
    )
    assert [r.target for r in load_task(path, plugins=pm).render()] == [0, 2]


def test_a_hub_dataset_needs_data(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC.replace("some/dataset", "allenai/ai2_arc\ndataset_name: ARC-Easy"))
    with pytest.raises(TaskFileError) as caught:
        load_task(path, plugins=pm)
    message = str(caught.value)
    assert "the Hugging Face dataset allenai/ai2_arc (ARC-Easy)" in message
    assert "does not download" in message and "--data test=PATH" in message


# -- include ------------------------------------------------------------------------


def test_include_chains_and_the_including_file_wins(tmp_path, pm):
    write(tmp_path / "base" / "_base_yaml", MC.replace('doc_to_text: "Q: {{q}}\\nA:"', 'doc_to_text: "Base {{q}}"'))
    write(tmp_path / "base" / "_middle_yaml", "include: _base_yaml\ntarget_delimiter: '|'\ndescription: 'M '\n")
    path = write(tmp_path / "base" / "task.yaml", "include: _middle_yaml\ntask: top\ndescription: 'Top '\n")
    [first, _] = render(path, pm)
    assert first.text == "Top Base one?"
    assert first.continuations == ("|a", "|b")
    task = load_task(path, plugins=pm, data={"test": RECORDS})
    assert task.name == "top"
    assert task.config.origins["doc_to_text"] == tmp_path / "base" / "_base_yaml"


def test_include_relative_to_the_including_file(tmp_path, pm):
    write(tmp_path / "shared" / "common.yaml", MC)
    path = write(tmp_path / "tasks" / "sub" / "t.yaml", "include: ../../shared/common.yaml\ntask: x\n")
    assert [r.target for r in render(path, pm)] == [0, 2]


def test_an_error_in_an_included_file_names_that_file_and_line(tmp_path, pm):
    base = write(tmp_path / "_base_yaml", MC.replace('doc_to_text: "Q: {{q}}\\nA:"', 'doc_to_text: "{{ q "'))
    path = write(tmp_path / "t.yaml", "include: _base_yaml\ntask: x\n")
    err = error(path, pm)
    assert err.file == str(base) and err.line == 5 and err.key == "doc_to_text"


def test_missing_include_and_cycles(tmp_path, pm):
    path = write(tmp_path / "t.yaml", "include: nope.yaml\n" + MC)
    err = error(path, pm)
    assert err.key == "include" and err.line == 1 and "nope.yaml" in str(err)
    write(tmp_path / "a.yaml", "include: b.yaml\n" + MC)
    write(tmp_path / "b.yaml", "include: a.yaml\n")
    assert "include cycle" in str(error(tmp_path / "a.yaml", pm))


def test_a_group_file_is_not_a_task(pm):
    err = error(TASKS / "mmlu" / "default" / "_mmlu_stem.yaml", pm, task_format="lm-eval")
    assert "group file" in str(err)


def test_a_group_file_is_one_error_naming_its_tasks_and_their_files(pm):
    err = error(TASKS / "xnli" / "_xnli.yaml", pm)
    assert not getattr(err, "problems", None), "no doc_to_text/doc_to_target noise for a group"
    assert err.key == "task" and err.line == 2
    assert "group 'xnli' of xnli_ar, xnli_bg, xnli_de" in str(err) and "(15 in all)" in str(err)
    assert str(TASKS / "xnli" / "xnli_de.yaml") in str(err)  # the task file of a task it lists, next to it


def test_a_key_written_twice_keeps_the_last_as_lm_eval_does(tmp_path, pm):
    """lm-eval reads task files with PyYAML (kmmlu's cot files repeat regex_pattern, tinyGSM8k num_fewshot)."""
    write(tmp_path / "base.yaml", "num_fewshot: 0\nnum_fewshot: 1\n")
    path = write(tmp_path / "t.yaml", "include: base.yaml\n" + MC + "target_delimiter: '+'\ntarget_delimiter: '='\n")
    task = load_task(path, data={"test": str(jsonl(tmp_path / "test.jsonl", RECORDS))}, plugins=pm)
    first = next(iter(task.render()))
    assert first.text == "Q: two?\nA:=e\n\nQ: one?\nA:"  # one shot, the last delimiter
    assert list(first.continuations) == ["=a", "=b"]


# -- keys -----------------------------------------------------------------------------


def test_keys_that_do_not_change_prompts_are_kept(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml",
        MC
        + "filter_list:\n  - name: x\n    filter:\n      - function: !function utils.Missing\n"
        + "process_results: !function utils.nope\nrepeats: 3\ntag: [a]\ntask_alias: T\nmetadata: {version: 2}\n",
    )
    task = load_task(path, plugins=pm, data={"test": RECORDS})  # no --trust-code needed: nothing runs
    assert task.config.extras["repeats"] == 3 and task.config.extras["task_alias"] == "T"
    assert task.config.metadata == {"version": 2}
    assert "filter_list" in task.config.extras and "metric_list" in task.config.extras


def test_every_problem_of_a_file_at_once(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml",
        MC
        + "use_prompt: promptsource:GPT-3 style\ndoc_to_image: image\noutput_typ: multiple_choice\n"
        + "fewshot_config:\n  sampler: weird\n  smaples: []\nprocess_docs: !function utils.process_docs\n",
    )
    err = error(path, pm)
    message = str(err)
    assert message.startswith("6 problems: ")
    for key, text in [
        ("use_prompt", "promptsource"),
        ("doc_to_image", "images"),
        ("output_typ", "did you mean 'output_type'"),
        ("fewshot_config.sampler", "unknown sampler 'weird'"),
        ("fewshot_config.smaples", "did you mean 'samples'"),
        ("process_docs", "--trust-code"),
    ]:
        assert f": {key}: " in message and text in message, key
    assert [p.key for p in err.problems] == [
        "use_prompt",
        "doc_to_image",
        "output_typ",
        "fewshot_config.smaples",
        "fewshot_config.sampler",
        "process_docs",
    ]
    assert all(p.line for p in err.problems)


def test_the_command_line_prints_all_problems_on_one_line(tmp_path, capsys):
    path = write(tmp_path / "t.yaml", MC + "use_prompt: x\ndoc_to_audio: a\n")
    assert main(["render", str(path), "--data", f"test={jsonl(tmp_path / 'x.jsonl', RECORDS)}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("prompt-style: error: 2 problems: ")


def test_bad_values(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC + "num_fewshot: -1\ngeneration_kwargs: {until: [1]}\ntarget_delimiter: 3\n")
    message = str(error(path, pm))
    assert "num_fewshot" in message and "generation_kwargs.until" in message and "target_delimiter" in message


def test_unknown_output_type(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC.replace("multiple_choice", "multiple_choise"))
    assert "did you mean 'multiple_choice'" in str(error(path, pm))


# -- !function ------------------------------------------------------------------------

UTILS = """\
import random

calls = []


def process_docs(dataset):
    calls.append(len(dataset))
    return dataset.map(lambda doc: {"q": doc["q"].upper(), "draw": random.random()})


def doc_to_text(doc):
    return "F: " + doc["q"]


def broken(doc):
    raise ValueError("no")
"""


def test_function_is_refused_without_trust_code(tmp_path, pm):
    write(tmp_path / "utils.py", UTILS)
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    err = error(path, pm)
    assert (err.file, err.line, err.key) == (str(path), 10, "process_docs")
    assert "!function utils.process_docs would run Python code (utils.py next to t.yaml)" in str(err)
    assert "--trust-code" in str(err)


def test_trusted_code_is_imported_from_next_to_the_yaml_that_names_it(tmp_path, pm):
    write(tmp_path / "shared" / "utils.py", UTILS)
    write(tmp_path / "shared" / "_base_yaml", MC.replace('"Q: {{q}}\\nA:"', "!function utils.doc_to_text"))
    path = write(tmp_path / "tasks" / "t.yaml", "include: ../shared/_base_yaml\ntask: x\n")
    assert [r.text for r in render(path, pm, trust_code=True)] == ["F: one?", "F: two?"]


def test_process_docs_sees_globals_seeded_like_simple_evaluate(tmp_path, pm):
    write(tmp_path / "utils.py", UTILS)
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    random.seed(99)
    first = load_task(path, plugins=pm, data={"test": RECORDS}, trust_code=True)
    records = list(first.records())
    expected = random.Random(0)
    assert [r["draw"] for r in records] == [expected.random(), expected.random()]
    assert [r["q"] for r in records] == ["ONE?", "TWO?"]
    again = load_task(path, plugins=pm, data={"test": RECORDS}, trust_code=True)
    assert list(again.records()) == records


def test_numpy_is_seeded_too(tmp_path, pm):
    np = pytest.importorskip("numpy")
    write(
        tmp_path / "utils.py",
        "import numpy\n\ndef process_docs(d):\n    return d.map(lambda x: {'n': float(numpy.random.random())})\n",
    )
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    records = list(load_task(path, plugins=pm, data={"test": RECORDS}, trust_code=True).records())
    np.random.seed(1234)
    assert [r["n"] for r in records] == [np.random.random(), np.random.random()]


def test_process_docs_runs_once_per_split(tmp_path, pm):
    utils = write(tmp_path / "utils.py", UTILS)
    same = write(
        tmp_path / "same.yaml", MC + "process_docs: !function utils.process_docs\nfewshot_split: test\nnum_fewshot: 1\n"
    )
    task = load_task(same, plugins=pm, data={"test": RECORDS}, trust_code=True)
    list(task.render())
    module = next(m for m in __import__("sys").modules.values() if getattr(m, "__file__", None) == str(utils))
    assert module.calls == [2]  # the evaluated split is the pool: processed once
    other = write(
        tmp_path / "other.yaml", MC + "process_docs: !function utils.process_docs\nfewshot_split: dev\nnum_fewshot: 0\n"
    )
    task = load_task(other, plugins=pm, data={"test": RECORDS, "dev": RECORDS[:1]}, trust_code=True)
    module = next(
        m for m in __import__("sys").modules.values() if getattr(m, "__file__", None) == str(utils) and m.calls != [2]
    )
    assert module.calls == [1, 2]  # the few-shot split first, as lm-eval loads them, even zero-shot


def test_import_errors_are_task_file_errors(tmp_path, pm):
    write(tmp_path / "utils.py", "raise RuntimeError('boom')\n")
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    assert "importing" in str(error(path, pm, trust_code=True)) and "boom" in str(error(path, pm, trust_code=True))
    write(tmp_path / "utils.py", UTILS)
    path = write(tmp_path / "t2.yaml", MC + "process_docs: !function utils.nothing\n")
    assert "utils.py has no 'nothing'" in str(error(path, pm, trust_code=True))
    path = write(tmp_path / "t3.yaml", MC + "process_docs: !function nomodule_xyz.f\n")
    assert "cannot import module 'nomodule_xyz'" in str(error(path, pm, trust_code=True))


def test_task_code_that_raises_names_the_record(tmp_path, pm):
    write(tmp_path / "utils.py", UTILS)
    path = write(tmp_path / "t.yaml", MC.replace('"Q: {{q}}\\nA:"', "!function utils.broken"))
    err = error(path, pm, cls=prompt_style.FieldError, trust_code=True)
    assert err.index == 0 and err.key == "doc_to_text" and "ValueError: no" in str(err)


def test_task_code_importing_datasets_works_without_it(tmp_path, pm):
    try:
        import datasets  # noqa: F401

        pytest.skip("datasets is installed: the real one is used")
    except ImportError:
        pass
    write(
        tmp_path / "utils.py",
        "import datasets\n\ndef process_docs(d: datasets.Dataset) -> datasets.Dataset:\n    return d\n",
    )
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    assert len(render(path, pm, trust_code=True)) == 2
    import sys

    assert "datasets" not in sys.modules


# -- fields -------------------------------------------------------------------------


def test_field_rules(tmp_path, pm):
    records = [{"q": "x", "label": "1", "choices": ["p", "q"], "desc": "About x. ", "answer": "q", "pre": "So"}]
    task = """\
    task: t
    dataset_path: d
    output_type: multiple_choice
    test_split: test
    description: desc
    doc_to_text: "{{q}}?"
    doc_to_choice: choices
    doc_to_target: "{{label}}"
    """
    path = write(tmp_path / "t.yaml", task)
    [r] = render(path, pm, records=records)
    assert r.text == "About x. x?" and r.target == 1  # a column name; a template's digits are an index
    path = write(tmp_path / "t2.yaml", task.replace('"{{label}}"', "answer"))
    assert render(path, pm, records=records)[0].target == 1  # a column's string is a choice text
    path = write(
        tmp_path / "t3.yaml",
        task.replace("doc_to_choice: choices", 'doc_to_choice: {a: "yes", b: "no"}').replace('"{{label}}"', "0"),
    )
    assert render(path, pm, records=records)[0].continuations == (" yes", " no")


def test_digits_from_a_column_are_matched_as_text(tmp_path, pm):
    # lm-eval: choices.index("3") -> choice 2, although "3" read as an index would be choice 3.
    path = write(tmp_path / "t.yaml", MC.replace("doc_to_target: answer", "doc_to_target: key"))
    records = [{"q": "n?", "choices": ["1", "2", "3", "4"], "key": "3"}]
    assert render(path, pm, records=records)[0].target == 2


def test_a_template_target_in_brackets_is_a_list(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC.replace("doc_to_target: answer", 'doc_to_target: "{{[answer, 1]}}"'))
    assert render(path, pm, records=RECORDS[:1])[0].target == [0, 1]


def test_a_choice_template_must_give_a_list(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC.replace('"{{choices}}"', '"{{q}}"'))
    assert "not a Python list" in str(error(path, pm, cls=prompt_style.FieldError))


def test_digits_stay_text_without_choices(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml", "task: t\ndataset_path: d\ntest_split: test\ndoc_to_text: q\ndoc_to_target: '{{answer}}'\n"
    )
    [r, _] = render(path, pm)
    assert r.target == "0" and r.until == ("\n\n",)


# -- output types ---------------------------------------------------------------------

GEN = """\
task: g
dataset_path: d
test_split: test
training_split: test
doc_to_text: "Q: {{q}}\\nA:"
doc_to_target: "{{ans}}"
"""
GEN_RECORDS = [{"q": "1+1", "ans": "2 apples"}, {"q": "2+2", "ans": "4 pears"}]


def test_generate_until_stop_sequences(tmp_path, pm):
    path = write(tmp_path / "t.yaml", GEN)
    [r, _] = render(path, pm, records=GEN_RECORDS)
    assert (r.continuations, r.target, r.until) == ((), "2 apples", ("\n\n",))
    assert r.to_json()["until"] == ["\n\n"]
    path = write(tmp_path / "t2.yaml", GEN + "fewshot_delimiter: '###'\ngeneration_kwargs: {do_sample: false}\n")
    assert render(path, pm, records=GEN_RECORDS)[0].until == ("###",)
    path = write(tmp_path / "t3.yaml", GEN + "generation_kwargs: {until: 'Q:'}\n")
    assert render(path, pm, records=GEN_RECORDS)[0].until == ("Q:",)


def test_loglikelihood_and_rolling(tmp_path, pm_all):
    pm = pm_all
    path = write(tmp_path / "t.yaml", GEN + "output_type: loglikelihood\n")
    r = render(path, pm, records=GEN_RECORDS)[0]
    assert (r.text, r.continuations, r.target, r.until) == ("Q: 1+1\nA:", ("2 apples",), "2 apples", None)
    path = write(tmp_path / "t2.yaml", GEN + "output_type: loglikelihood_rolling\n")
    r = render(path, pm, records=GEN_RECORDS, meta="chatml")[0]
    assert (r.text, r.messages, r.continuations, r.target) == ("2 apples", None, (), "2 apples")


def test_gen_prefix_in_plain_text(tmp_path, pm):
    path = write(tmp_path / "t.yaml", GEN + "gen_prefix: 'The answer is'\nnum_fewshot: 1\n")
    r = render(path, pm, records=GEN_RECORDS)[1]
    assert r.text == "Q: 1+1\nA: The answer is 2 apples\n\nQ: 2+2\nA: The answer is"
    path = write(tmp_path / "t2.yaml", GEN + "gen_prefix: ' So:'\nnum_fewshot: 1\n")
    assert render(path, pm, records=GEN_RECORDS)[1].text == "Q: 1+1\nA: So: 2 apples\n\nQ: 2+2\nA: So:"


def test_fewshot_config_overrides(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml",
        GEN
        + "num_fewshot: 1\nfewshot_config:\n  sampler: first_n\n  doc_to_text: 'E: {{q}}'\n  doc_to_target: '={{ans}}'\n"
        + "  target_delimiter: ''\n  fewshot_delimiter: ' | '\n",
    )
    r = render(path, pm, records=GEN_RECORDS)[1]
    assert r.text == "E: 1+1=2 apples | Q: 2+2\nA:"


def test_examples_without_an_answer_show_their_question_only(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml", GEN + "num_fewshot: 1\nfewshot_config:\n  sampler: first_n\n  doc_to_target: ''\n"
    )
    assert render(path, pm, records=GEN_RECORDS)[1].text == "Q: 1+1\nA:Q: 2+2\nA:"


def test_fixed_samples(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml",
        GEN
        + "num_fewshot: 2\nfewshot_config:\n  sampler: first_n\n  samples:\n    - {q: s1, ans: a1}\n    - {q: s2, ans: a2}\n",
    )
    assert render(path, pm, records=GEN_RECORDS)[0].text == "Q: s1\nA: a1\n\nQ: s2\nA: a2\n\nQ: 1+1\nA:"


def test_fewshot_split_rules(tmp_path, pm):
    base = "task: t\ndataset_path: d\ndoc_to_text: '{{q}}'\ndoc_to_target: '{{ans}}'\nnum_fewshot: 1\nfewshot_config: {sampler: first_n}\n"
    splits = {
        "train": [{"q": "T", "ans": "t"}],
        "validation": [{"q": "V", "ans": "v"}],
        "test": [{"q": "X", "ans": "x"}],
    }
    cases = [
        ("training_split: train\nvalidation_split: validation\ntest_split: test\n", "T t\n\nX"),
        ("validation_split: validation\ntest_split: test\n", "V v\n\nX"),
        ("training_split: train\nvalidation_split: validation\n", "T t\n\nV"),  # validation is evaluated
        ("training_split: train\ntest_split: test\nfewshot_split: validation\n", "V v\n\nX"),
    ]
    for n, (keys, text) in enumerate(cases):
        path = write(tmp_path / f"t{n}.yaml", base + keys)
        assert render(path, pm, data=splits)[0].text == text, keys


# -- the default sampler ----------------------------------------------------------------


def lm_eval_default_sampler(pool, docs, k, seed=1234, exclude=False):
    """lm-evaluation-harness 0.4.13's ContextSampler.sample, record by record."""
    rnd = random.Random(seed)
    out = []
    for doc in docs:
        if exclude and doc:
            res = [x for x in rnd.sample(pool, k + 1) if x != doc][:k]
        else:
            res = rnd.sample(pool, k)
        if len(res) < k:
            res = rnd.sample([x for x in pool if x != doc], k)
        out.append(res)
    return out


@pytest.mark.parametrize("exclude", [False, True])
def test_shared_random_is_lm_evals_default_sampler(tmp_path, pm, exclude):
    pool = [{"q": f"p{i}", "ans": str(i)} for i in range(30)]
    docs = pool[:10] if exclude else [{"q": f"d{i}", "ans": "x"} for i in range(10)]
    # lm-eval hands the sampler the evaluated record when the few-shot split is the test split.
    keys = "test_split: train\nfewshot_split: train\n" if exclude else "test_split: test\ntraining_split: train\n"
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndataset_path: d\ndoc_to_text: '{{q}}'\ndoc_to_target: '{{ans}}'\nnum_fewshot: 5\n" + keys,
    )
    data = {"train": pool} if exclude else {"train": pool, "test": docs}
    task = load_task(path, plugins=pm, data=data)
    expected = lm_eval_default_sampler(pool, docs, 5, exclude=exclude)
    texts = [r.text for r in task.render()]
    for text, shots, doc in zip(texts, expected, docs):
        assert text == "\n\n".join(f"{s['q']} {s['ans']}" for s in shots) + "\n\n" + doc["q"]
    # Out of order, or in another process: the same examples.
    renderer = pickle.loads(pickle.dumps(task.renderer))
    assert renderer.render(docs[7], 7).text == texts[7]
    assert task.renderer.render(docs[3], 3).text == texts[3]
    # A different seed draws differently.
    other = load_task(path, plugins=pm, data=data, seed=7)
    assert [r.text for r in other.render()] != texts


def test_shared_random_needs_one_more_when_it_drops_the_record(tmp_path, pm):
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndataset_path: d\ndoc_to_text: q\ndoc_to_target: a\ntest_split: train\nfewshot_split: train\nnum_fewshot: 2\n",
    )
    err = error(path, pm, data={"train": [{"q": "a", "a": "1"}, {"q": "b", "a": "2"}]})
    assert "draws 3 examples" in str(err) and err.key == "num_fewshot"


def test_fewshot_indices_change_nothing_as_in_lm_eval(tmp_path, pm):
    """lm-eval 0.4.13 parses fewshot_config.fewshot_indices but never hands them to its sampler."""
    pool = [{"q": f"p{i}", "ans": str(i)} for i in range(6)]
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndataset_path: d\ndoc_to_text: '{{q}}'\ndoc_to_target: '{{ans}}'\nnum_fewshot: 2\ntest_split: test\n"
        "training_split: train\nfewshot_config: {fewshot_indices: [1, 3, 5]}\n",
    )
    texts = [r.text for r in render(path, pm, data={"train": pool, "test": [{"q": "x", "ans": "y"}]})]
    chosen = random.Random(1234).sample(pool, 2)
    assert texts == ["\n\n".join(f"{s['q']} {s['ans']}" for s in chosen) + "\n\nx"]


# -- the template system in an lm-eval file -------------------------------------------


def test_a_template_key_styles_an_lm_eval_task(tmp_path, pm_all):
    path = write(
        tmp_path / "t.yaml",
        "task: arc\ndataset_path: allenai/ai2_arc\noutput_type: multiple_choice\ntest_split: test\n"
        "doc_to_text: '{{question}}'\ndoc_to_choice: '{{choices.text}}'\n"
        "doc_to_target: '{{choices.label.index(answerKey)}}'\ntemplate:\n  template_type: mcq::mmlu\n",
    )
    record = {"question": "Capital?", "choices": {"text": ["London", "Paris"], "label": ["A", "B"]}, "answerKey": "B"}
    [r] = list(load_task(path, plugins=pm_all, data={"test": [record]}).render())
    assert (r.text, r.continuations, r.target) == ("Capital?\nA. London\nB. Paris\nAnswer:", (" A", " B"), 1)


# -- the chat rules -------------------------------------------------------------------


def test_system_instruction_in_plain_text(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC + "description: 'About things.'\n")
    [r, _] = render(path, pm, system_instruction="Be exact.")
    assert r.text == "Be exact.\n\nAbout things.Q: one?\nA:"
    path = write(tmp_path / "t2.yaml", MC)
    assert render(path, pm, system_instruction="Be exact. ")[0].text == "Be exact. Q: one?\nA:"


def test_chat_continuations_lose_the_target_delimiter(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC)
    assert render(path, pm, meta="messages")[0].continuations == ("a", "b")
    path = write(tmp_path / "t2.yaml", MC + "gen_prefix: 'Answer:'\n")
    r = render(path, pm, meta="messages")[0]
    assert r.continuations == (" a", " b")  # a gen_prefix without trailing space keeps it
    assert r.messages[-1] == {"role": "assistant", "content": "Answer:"}
    path = write(tmp_path / "t3.yaml", MC + "gen_prefix: 'Answer: '\n")
    assert render(path, pm, meta="messages")[0].continuations == ("a", "b")


def test_fewshot_as_multiturn_needs_a_chat_format(tmp_path, pm):
    path = write(tmp_path / "t.yaml", MC)
    err = error(path, pm, cls=OptionError, fewshot_as_multiturn=True)
    assert err.key == "fewshot_as_multiturn" and "--meta chatml" in str(err)
    assert render(path, pm, fewshot_as_multiturn=False)[0].text == "Q: one?\nA:"


def test_single_turn_keeps_the_prefill_apart(tmp_path, pm):
    path = write(tmp_path / "t.yaml", GEN + "gen_prefix: 'So'\nnum_fewshot: 1\nfewshot_config: {sampler: first_n}\n")
    r = render(path, pm, records=GEN_RECORDS, meta="messages", fewshot_as_multiturn=False, system_instruction="S")[1]
    assert r.messages == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Q: 1+1\nA: So 2 apples\n\nQ: 2+2\nA:"},
        {"role": "assistant", "content": "So"},
    ]


# -- the Docs stand-in ----------------------------------------------------------------


def test_docs_map_filter_select():
    docs = Docs([{"a": 1, "b": [1]}, {"a": 2, "b": [2]}, {"a": 3, "b": [3]}])
    assert docs.column_names == ["a", "b"] and len(docs) == 3 and docs["a"] == [1, 2, 3]
    mapped = docs.map(lambda d, i: {"c": d["a"] * 10 + i}, with_indices=True, remove_columns=["b"])
    assert mapped.to_list() == [{"a": 1, "c": 10}, {"a": 2, "c": 21}, {"a": 3, "c": 32}]

    def mutate(doc):
        doc["b"].append(0)

    assert docs.map(mutate)[0]["b"] == [1, 0] and docs[0]["b"] == [1]  # rows are copies
    assert docs.filter(lambda d: d["a"] != 2)["a"] == [1, 3]
    assert docs.select([2, 0])["a"] == [3, 1]
    batched = docs.map(lambda batch: {"a": [x + 1 for x in batch["a"]]}, batched=True, batch_size=2)
    assert batched["a"] == [2, 3, 4]
    grown = docs.map(lambda batch: {"x": batch["a"] * 2}, batched=True, remove_columns=["a", "b"])
    assert grown["x"] == [1, 2, 3, 1, 2, 3]
    assert docs.rename_column("a", "z").column_names == ["z", "b"]
    assert docs.add_column("n", ["x", "y", "z"])["n"] == ["x", "y", "z"]
    assert docs.remove_columns("b").column_names == ["a"]
    assert Docs.from_dict({"a": [1, 2]}).to_list() == [{"a": 1}, {"a": 2}]
    assert docs.map(lambda d, k: {"k": k}, fn_kwargs={"k": 5})["k"] == [5, 5, 5]
    with pytest.raises(TypeError):
        docs.map(lambda batch: {"x": batch["a"] * 2}, batched=True)


def test_docs_map_and_filter_with_input_columns_indices_and_batches():
    docs = Docs([{"a": 1, "b": [1]}, {"a": 2, "b": [2]}, {"a": 3, "b": [3]}])
    assert docs.map(lambda a, i: {"c": a + i}, input_columns="a", with_indices=True)["c"] == [1, 3, 5]
    assert docs.map(lambda a, b: {"s": a + b[0]}, input_columns=["a", "b"])["s"] == [2, 4, 6]
    assert docs.map(lambda a: {"a": [x * 2 for x in a]}, input_columns="a", batched=True, batch_size=2)["a"] == [
        2,
        4,
        6,
    ]
    kept = docs.filter(
        lambda batch, idx: [x > 1 and j != 2 for x, j in zip(batch["a"], idx)],
        batched=True,
        batch_size=2,
        with_indices=True,
    )
    assert kept.to_list() == [{"a": 2, "b": [2]}]
    assert docs.filter(lambda a: a % 2, input_columns="a")["a"] == [1, 3]


def test_docs_shuffle_is_datasets_shuffle():
    np = pytest.importorskip("numpy")
    docs = Docs([{"i": i} for i in range(10)])
    order = [int(i) for i in np.random.default_rng(42).permutation(10)]
    assert docs.shuffle(seed=42)["i"] == order


def test_as_records():
    class Like:
        def to_list(self):
            return [{"a": 1}]

    assert as_records(Like()) == [{"a": 1}]
    assert as_records([{"a": 1}]) == [{"a": 1}]
    with pytest.raises(TypeError):
        as_records({"a": [1]})


def test_process_docs_returning_no_records_is_an_error(tmp_path, pm):
    write(tmp_path / "utils.py", "def process_docs(d):\n    return 3\n")
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    err = error(path, pm, cls=RenderError, trust_code=True)
    assert "utils.process_docs gave a int, not records" in str(err) and err.key == "process_docs"


def test_numpy_is_seeded_when_importable(tmp_path, pm, monkeypatch):
    import sys
    import types

    seeds = []
    fake = types.ModuleType("numpy")
    fake.random = types.SimpleNamespace(seed=seeds.append)
    monkeypatch.setitem(sys.modules, "numpy", fake)
    write(tmp_path / "utils.py", UTILS)
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    load_task(path, plugins=pm, data={"test": RECORDS}, trust_code=True)
    assert seeds and set(seeds) == {1234}


def test_a_renderer_with_task_code_pickles_to_another_process(tmp_path, pm):
    import subprocess
    import sys

    write(tmp_path / "utils.py", UTILS)
    path = write(tmp_path / "t.yaml", MC.replace('"Q: {{q}}\\nA:"', "!function utils.doc_to_text"))
    task = load_task(path, plugins=pm, data={"test": RECORDS}, trust_code=True)
    blob = tmp_path / "renderer.pickle"
    blob.write_bytes(pickle.dumps(task.renderer))
    code = (
        "import pickle, sys; r = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "print(r.render({'q': 'zz', 'choices': ['a'], 'answer': 0}, 0).text)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(blob)], capture_output=True, text=True, check=True)
    assert out.stdout == "F: zz\n"


def test_literal_text_is_what_jinja_would_render(tmp_path, pm):
    # A spec without Jinja syntax skips Jinja; one with a carriage return does not (Jinja
    # normalises newlines), and digits still become an index.
    from prompt_style.formats.lm_eval.fields import LmEvalField

    record = {"q": "x"}
    assert LmEvalField("Plain {x} text\n", "description", "resolve")(record) == "Plain {x} text\n"
    assert LmEvalField("a\r\nb", "description", "resolve")(record) == "a\nb"
    assert LmEvalField("2", "doc_to_target", "target", digits=True)(record) == 2
    assert LmEvalField("q", "doc_to_text", "text")(record) == "x"


def test_data_files_with_a_byte_order_mark_and_crlf_read_as_datasets_reads_them(tmp_path, pm):
    """Windows editors write a BOM and CRLF; datasets' json loader reads such files."""
    path = write(tmp_path / "t.yaml", MC)
    lines = "".join(json.dumps(r) + "\r\n" for r in RECORDS)
    (tmp_path / "test.jsonl").write_text("\ufeff" + lines + "\r\n", encoding="utf-8", newline="")
    (tmp_path / "test.json").write_text("\ufeff" + json.dumps(RECORDS), encoding="utf-8")
    for name in ("test.jsonl", "test.json"):
        task = load_task(path, data={"test": str(tmp_path / name)}, plugins=pm)
        assert [r.text for r in task.render()] == ["Q: one?\nA:", "Q: two?\nA:"]


def test_task_code_that_will_not_import_is_one_problem_naming_every_key(tmp_path, pm):
    (tmp_path / "utils.py").write_text("import not_installed_anywhere_xyz\n\ndef f(doc):\n    return doc\n")
    path = write(
        tmp_path / "t.yaml",
        MC.replace('doc_to_text: "Q: {{q}}\\nA:"', "doc_to_text: !function utils.f")
        + "process_docs: !function utils.f\n",
    )
    err = error(path, pm, trust_code=True, data={"test": RECORDS})
    assert not getattr(err, "problems", None), str(err)
    assert "not_installed_anywhere_xyz" in str(err) and "also needed by process_docs" in str(err)


# -- task code seen in lm-evaluation-harness's own tasks -------------------------------


def test_a_python_task_class_is_one_problem(tmp_path, pm):
    """squadv2.yaml: `class: !function task.SQuAD2` and nothing else."""
    path = write(tmp_path / "squadv2.yaml", "task: squadv2\nclass: !function task.SQuAD2\n")
    err = error(path, pm)
    assert "class: not supported" in str(err) and "!function task.SQuAD2" in str(err)
    assert "doc_to_text" not in str(err) and "doc_to_target" not in str(err) and "problems" not in str(err)
    assert err.line == 2


TOXIGEN_UTILS = """\
import numpy as np


def doc_to_target(doc):
    return np.round(((doc["toxicity_ai"] + doc["toxicity_human"]) > 5.5), 0).astype(np.int32)
"""


def test_a_numpy_integer_target_is_a_gold_index(tmp_path, pm):
    """toxigen's doc_to_target returns numpy.int32, which lm-eval uses as the gold index."""
    pytest.importorskip("numpy")
    write(tmp_path / "utils.py", TOXIGEN_UTILS)
    path = write(
        tmp_path / "toxigen.yaml",
        """\
        task: toxigen
        dataset_path: skg/toxigen-data
        output_type: multiple_choice
        training_split: train
        test_split: test
        doc_to_text: "Statement: '{{text}}'"
        doc_to_target: !function utils.doc_to_target
        doc_to_choice: ['No', 'Yes']
        """,
    )
    records = [
        {"text": "a", "toxicity_ai": 4.0, "toxicity_human": 3.0},
        {"text": "b", "toxicity_ai": 1.0, "toxicity_human": 1.0},
    ]
    rendered = render(path, pm, data={"test": records, "train": records}, trust_code=True)
    assert [r.target for r in rendered] == [1, 0] and all(type(r.target) is int for r in rendered)
    assert json.loads(json.dumps(rendered[0].to_json()))["target"] == 1
    # A few-shot example shows its gold choice (lm-eval fails: "Answer is not a string").
    [shot] = render(path, pm, data={"test": records[:1], "train": records[1:]}, trust_code=True, shots=1)
    assert shot.text == "Statement: 'b' No\n\nStatement: 'a'"


FAKE_DATASETS = """\
import os
os.environ["FAKE_DATASETS_IMPORTED"] = "1"
__version__ = "9.9"
class Dataset:
    @classmethod
    def from_list(cls, rows):
        made = cls()
        made.rows = rows
        return made
def load_dataset(*args, **kwargs):
    return "loaded"
"""


@pytest.fixture
def installed_datasets(tmp_path, monkeypatch):
    """A ``datasets`` package on the path, not imported (it notes its import in the environment)."""
    import sys

    lib = tmp_path / "site" / "datasets"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(FAKE_DATASETS, encoding="utf-8")
    (lib / "features.py").write_text("Value = str\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in ("datasets", "datasets.features"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delenv("FAKE_DATASETS_IMPORTED", raising=False)
    yield
    for name in ("datasets", "datasets.features"):
        sys.modules.pop(name, None)


def test_task_code_naming_datasets_types_does_not_import_it(tmp_path, pm, installed_datasets):
    """Task code importing datasets to name its types (HellaSwag's utils.py) gets names the
    package is imported for only when they are used: rendering never pays its import."""
    import os
    import sys

    write(
        tmp_path / "utils.py",
        "import datasets\nfrom datasets import Dataset, load_dataset\n\n"
        "def process_docs(d: datasets.Dataset | None) -> Dataset:\n    return d\n\n"
        "def version(doc):\n    return datasets.__version__\n\n"
        "def loaded(doc):\n    return load_dataset('x') + str(isinstance(Dataset.from_list([]), Dataset))\n",
    )
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    assert len(render(path, pm, trust_code=True)) == 2
    assert "FAKE_DATASETS_IMPORTED" not in os.environ and "datasets" not in sys.modules
    # used: imported then, as lm-evaluation-harness would have imported it
    for field, text in (("version", "9.9"), ("loaded", "loadedTrue")):
        task = write(tmp_path / "u.yaml", MC.replace('"Q: {{q}}\\nA:"', f"!function utils.{field}"))
        assert render(task, pm, trust_code=True)[0].text == text
        assert os.environ.pop("FAKE_DATASETS_IMPORTED") == "1"
        sys.modules.pop("datasets")


def test_task_code_deriving_from_or_importing_from_datasets(tmp_path, pm, installed_datasets):
    import os

    write(
        tmp_path / "utils.py",
        "import datasets\nimport datasets.features\n\n"
        "class Mine(datasets.Dataset):\n    pass\n\n"
        "def text(doc):\n    return datasets.features.Value.__name__ + type(Mine.from_list([])).__name__\n",
    )
    path = write(tmp_path / "t.yaml", MC.replace('"Q: {{q}}\\nA:"', "!function utils.text"))
    assert render(path, pm, trust_code=True)[0].text == "strMine"
    assert os.environ["FAKE_DATASETS_IMPORTED"] == "1"


def test_task_code_importing_a_library_that_looks_datasets_up(tmp_path, pm, monkeypatch):
    """coqa and norquad import transformers, which asks importlib.util.find_spec('datasets'):
    the stand-in for a missing datasets has a spec, as every imported module has."""
    import importlib.util

    if importlib.util.find_spec("datasets") is not None:
        pytest.skip("datasets is installed: the real one is used")
    lib = tmp_path / "lib" / "looks_datasets_up"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(
        "import importlib.util\nDATASETS = importlib.util.find_spec('datasets') is not None\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    write(
        tmp_path / "utils.py",
        "import datasets\nimport looks_datasets_up\n\n"
        "def process_docs(d: datasets.Dataset) -> datasets.Dataset:\n    return d\n",
    )
    path = write(tmp_path / "t.yaml", MC + "process_docs: !function utils.process_docs\n")
    assert len(render(path, pm, trust_code=True)) == 2
    import sys

    assert "datasets" not in sys.modules
    sys.modules.pop("looks_datasets_up", None)


def test_style_on_a_task_that_already_asks_for_the_answer_warns(tmp_path, pm_all):
    """arc_easy's doc_to_text ends with 'Answer:'; mcq::mmlu adds its own: two 'Answer:' lines."""
    arc = Path(__file__).resolve().parents[1] / "examples" / "lm_eval" / "arc" / "arc_easy.yaml"
    records = [{"question": "Q?", "choices": {"text": ["x", "y"], "label": ["A", "B"]}, "answerKey": "A"}]
    with pytest.warns(UserWarning, match=r"already ends with an answer prompt \('Answer:'\).*--style passthrough"):
        [result] = load_task(arc, plugins=pm_all, data={"test": records}, style="mcq::mmlu").render()
    assert result.text.count("Answer:") == 2
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_task(arc, plugins=pm_all, data={"test": records}, style="passthrough")
        load_task(arc, plugins=pm_all, data={"test": records})
        path = write(tmp_path / "t.yaml", MC.replace('"Q: {{q}}\\nA:"', '"{{q}}"'))
        load_task(path, plugins=pm_all, data={"test": RECORDS}, style="mcq::mmlu")


def test_literal_reads_as_ast_literal_eval_without_warnings():
    import ast
    import warnings

    from prompt_style.formats.lm_eval.fields import _literal

    for text in ("[1, 2]", "['a', \"b's\"]", "12", "'\\d'", "1if 1 else 2", "[0x1for x in y]", "1é", "'x\\ y'"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # none escapes _literal
            try:
                got = ("ok", _literal(text))
            except Exception as exc:
                got = ("error", type(exc))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = ("ok", ast.literal_eval(text))
            except Exception as exc:
                want = ("error", type(exc))
        assert got == want, text


class _FullMemo:
    """shared_random as it was: every draw kept (the reference for the bounded one)."""

    def __init__(self, k: int, pool: list[Any], exclude: bool, same_split: bool) -> None:
        self.k, self.pool, self.exclude, self.same_split = k, pool, exclude, same_split
        self.rng = random.Random(1234)
        self.memo: list[tuple[int, ...]] = []

    def select(self, index: int, record: Any) -> tuple[int, ...]:
        while len(self.memo) < index:
            j = len(self.memo)
            self.memo.append(self.draw(self.pool[j] if self.same_split and j < len(self.pool) else "unknown"))
        if index < len(self.memo):
            return self.memo[index]
        self.memo.append(self.draw(record))
        return self.memo[-1]

    def draw(self, record: Any) -> tuple[int, ...]:
        n, k, pool = len(self.pool), self.k, self.pool
        if self.exclude and record:
            drawn = self.rng.sample(range(n), k + 1)
            positions = drawn[:k] if record == "unknown" else [p for p in drawn if pool[p] != record][:k]
        else:
            positions = self.rng.sample(range(n), k)
        if len(positions) < k:
            rest = [p for p in range(n) if pool[p] != record]
            positions = [rest[q] for q in self.rng.sample(range(len(rest)), k)]
        return tuple(positions)


@pytest.mark.parametrize("exclude", [False, True])
def test_shared_random_keeps_flat_memory_and_the_same_draws(monkeypatch, exclude):
    """The last draws and the generator's state now and then are kept, not every draw:
    a record rendered again long after (or out of order, or after records skipped) gets
    the examples it got, including after draws that took another sample (records equal
    to pool records, falsy records)."""
    from prompt_style.retrievers.shared_random import SharedRandom

    monkeypatch.setattr(SharedRandom, "_KEEP", 5)
    monkeypatch.setattr(SharedRandom, "_EVERY", 7)
    # duplicates in the pool make the fallback draw happen for records equal to them
    pool = [{"q": f"p{i % 4}"} for i in range(6)]
    records = [pool[i % 6] if i % 5 == 0 else ({} if i % 11 == 0 else {"q": f"r{i}"}) for i in range(120)]
    bounded = SharedRandom(k=3, pool=pool, exclude_record=exclude, same_split=False)
    reference = _FullMemo(3, pool, exclude, same_split=False)
    order = [*range(0, 40), 3, 39, 0, 17, *range(60, 80), 45, 41, 59, 2, *range(80, 120), 100, 7, 64, 119]
    for index in order:
        assert bounded.select(index, records[index]) == reference.select(index, records[index]), index
    assert len(bounded._recent) == 5 and len(bounded._states) < 60


def test_numpy_imported_by_task_code_later_is_seeded_when_imported(tmp_path):
    """Loading task code does not import numpy (a tenth of a second a process): numpy is
    seeded as lm-eval seeds it when first imported, here inside the task's function, even
    after something asked whether numpy is installed (``importlib.util.find_spec``)."""
    pytest.importorskip("numpy")
    import subprocess
    import sys

    write(
        tmp_path / "utils.py",
        "def doc_to_text(doc):\n    import numpy\n    return doc['q'] + str(numpy.random.randint(0, 10**9))\n",
    )
    path = write(
        tmp_path / "t.yaml",
        "task: t\ndataset_path: d\ndoc_to_text: !function utils.doc_to_text\ndoc_to_target: a\ntest_split: test\n",
    )
    script = (
        "import sys, prompt_style\n"
        f"task = prompt_style.load_task({str(path)!r}, data={{'test': [{{'q': 'x', 'a': 'y'}}]}}, trust_code=True)\n"
        "assert 'numpy' not in sys.modules, 'loading task code imported numpy'\n"
        "import importlib.util\n"
        "assert importlib.util.find_spec('numpy') is not None  # asked, as libraries ask, not imported\n"
        "[prompt] = task.render()\n"
        "import numpy\n"
        "numpy.random.seed(1234)\n"
        "assert prompt.text == 'x' + str(numpy.random.randint(0, 10**9)), prompt.text\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("n", [1, 3, 21, 22, 100, 1000])
def test_shared_random_draws_as_random_sample_does(n):
    """The common draw (k of the whole pool) is Random.sample's, without its per-call
    checks: the same indices from the same generator, for every k."""
    from prompt_style.retrievers.shared_random import _range_sampler

    for k in range(1, min(n, 12) + 1):
        ours, reference = random.Random(k), random.Random(k)
        draw = _range_sampler(ours, n, k)
        assert draw.__name__ in ("by_list", "by_set"), (n, k)
        assert [draw() for _ in range(100)] == [tuple(reference.sample(range(n), k)) for _ in range(100)]


def test_shared_random_falls_back_to_sample_where_it_draws_otherwise(monkeypatch):
    """A Python whose Random.sample draws otherwise: sample itself is called."""
    from prompt_style.retrievers.shared_random import _draws_as_sample, _range_sampler, _sampler

    def other(self, population, k, *, counts=None):  # another algorithm: a draw, then the last k
        self.random()
        return list(population)[-k:]

    monkeypatch.setattr(random.Random, "sample", other)
    _draws_as_sample.cache_clear()  # (what the check found for this Python's sample)
    try:
        draw = _range_sampler(random.Random(1), 100, 5)
        assert draw.__code__ is not _sampler(random.Random(1)._randbelow, 100, 5).__code__
        assert draw() == (95, 96, 97, 98, 99)
    finally:
        _draws_as_sample.cache_clear()
