"""Task-template files: the schema and its checks, rendering semantics, data, splits,
formatters, the render/validate/instantiate/convert commands, and interplay with retrievers
and meta templates."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

import prompt_style
from prompt_style import PromptStyleError, TaskFileError, TaskFileWarning, hookimpl, load_task
from prompt_style.cli import main
from prompt_style.formats.task_template import instantiate as instantiate_module
from prompt_style.formats.task_template.promptsource import convert, load_promptsource
from prompt_style.formats.task_template.reader import read_spec
from prompt_style.formats.task_template.schema import check
from prompt_style.formats.task_template.splits import plan_splits
from prompt_style.formats.task_template.template import PIPE_PROTECTOR, TaskTemplate

ROOT = Path(__file__).resolve().parents[1]
SCIQ = ROOT / "examples" / "sciq" / "sciq_mcq.yaml"
SCIQ_DATA = ROOT / "examples" / "sciq" / "data" / "processed" / "sciq_mcq"

METADATA = {
    "task": "qa.abstractive",
    "domains": ["misc"],
    "source_type": "single_source",
    "input_context": "paragraph",
    "output_context": "sentence",
    "contributor": "tests",
}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").split("\n") if line.strip()]


@pytest.fixture
def task_file(tmp_path, jsonl):
    """``task_file(templates, name=..., splits={...}, **keys)`` writes a task-template file
    (and its data under data/processed/NAME/) and returns its path."""

    def make(templates, *, name="qa_task", splits=None, **keys):
        body = {"name": name, **keys}
        if splits is not None:
            body.setdefault("data_dir", name)
            for split, records in splits.items():
                jsonl(tmp_path / "data" / "processed" / name / f"{split}.jsonl", records)
        body.setdefault("metadata", METADATA)
        body["templates"] = dict(enumerate(templates)) if isinstance(templates, list) else templates
        path = tmp_path / "templates" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return path

    return make


QA = {"jinja": "Q: {{ question }} ||| {{ answer }}", "name": "plain", "evaluate": True}
RECORDS = [{"question": f"q{i}", "answer": f"a{i}"} for i in range(10)]


# -- rendering semantics ------------------------------------------------------------------


def template(jinja, answer_choices=None, semantics="sciriff"):
    return TaskTemplate(id=0, jinja=jinja, answer_choices=answer_choices, semantics=semantics)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a ||| b", "a ||| b"),
        ("|||", "|||"),
        ("  padded  ", "padded"),
        ("ünï 🙂", "ünï 🙂"),
        ("{{ not_rendered }}", "{{ not_rendered }}"),
        ("{% if x %}", "{% if x %}"),
    ],
)
def test_values_are_data_and_pipes_in_them_are_protected(value, expected):
    applied = template("In: {{ x }} ||| Out: {{ x }}").apply({"x": value})
    assert applied.input == f"In: {value}".strip() if expected != "padded" else "In:   padded"
    assert applied.output == f"Out: {value}".strip()


def test_parts_are_stripped_and_split_once():
    applied = template("\n  question {{ q }}  \n|||\n\n  answer  \n").apply({"q": "1"})
    assert (applied.input, applied.output) == ("question 1", "answer")


def test_pipes_in_nested_values_are_not_protected_as_in_the_reference():
    with pytest.raises(PromptStyleError, match="rendered 3 parts") as info:
        template("{{ items[0] }} ||| {{ a }}").apply({"items": ["x ||| y"], "a": "b"})
    assert "nested field" in str(info.value)


def test_no_output_part_is_an_error_naming_the_template():
    spec_template = TaskTemplate(id=3, name="broken", jinja="{% if x %}a ||| b{% endif %}")
    with pytest.raises(PromptStyleError, match=r"template 3 \('broken'\) rendered nothing for this record") as info:
        spec_template.apply({"x": False})
    assert info.value.key == "templates.3.jinja"
    assert "--template" in str(info.value)
    no_output = TaskTemplate(id=1, jinja="{{ q }} {% if x %}||| b{% endif %}")
    with pytest.raises(PromptStyleError, match=r"template 1 rendered 1 part with no '\|\|\|'") as info:
        no_output.apply({"q": "question?", "x": False})
    assert "{% if %}" in str(info.value)


def test_fixed_answer_choices_as_promptsource_s_get_fixed_answer_choices_list():
    fixed = TaskTemplate(id=0, jinja="a ||| b", answer_choices=" Yes ||| No|||{{ 'x' | upper }} ")
    assert fixed.fixed_answer_choices() == ["Yes", "No", "X"]
    assert TaskTemplate(id=0, jinja="a ||| b", answer_choices="{{ a }} ||| b").fixed_answer_choices() is None
    assert TaskTemplate(id=0, jinja="a ||| b").fixed_answer_choices() is None
    # a variable set inside the expression is not a record field
    looped = TaskTemplate(id=0, jinja="a ||| b", answer_choices="{% for i in range(2) %}{{ i }}|||{% endfor %}z")
    assert looped.fixed_answer_choices() == ["0", "1", "z"]


def test_answer_choices_are_rendered_split_stripped_and_given_to_the_template():
    t = template("{{ answer_choices | join('/') }} ||| {{ answer_choices[label] }}", "{{ a }} ||| {{ b }} ||| c")
    applied = t.apply({"a": " x ", "b": "z", "label": 0})
    assert (applied.answer_choices, applied.input, applied.output) == (["x", "z", "c"], "x/z/c", "x")
    # A ||| inside a field stays one choice, and comes back as |||, as in the reference ...
    assert t.answer_choices_list({"a": "x|||y", "b": "z"}) == ["x|||y", "z", "c"]
    # ... but the list the template receives is not protected: shown in the prompt, it splits it.
    with pytest.raises(PromptStyleError, match="rendered 4 parts"):
        t.apply({"a": "x|||y", "b": "z", "label": 0})


def test_answer_choices_is_a_reserved_record_field():
    with pytest.raises(PromptStyleError, match="reserve"):
        template("{{ a }} ||| b").apply({"a": 1, "answer_choices": "x"})


def test_strict_undefined_and_zip():
    with pytest.raises(PromptStyleError, match="'missing' is undefined") as info:
        template("{{ missing }} ||| b").apply({"a": 1})
    assert "the record has: a" in str(info.value)
    zipped = template("{% for a, b in zip(xs, ys) %}{{ a }}{{ b }}{% endfor %} ||| ok").apply(
        {"xs": [1, 2], "ys": ["a", "b"]}
    )
    assert zipped.input == "1a2b"


def test_the_protector_string_itself_becomes_pipes_as_in_the_reference():
    assert template("{{ x }} ||| y").apply({"x": PIPE_PROTECTOR}).input == "|||"


def test_mutating_methods_work_as_in_plain_jinja():
    applied = template("{% set xs = [] %}{% set _ = xs.append(x) %}{{ xs }} ||| y").apply({"x": 1})
    assert applied.input == "[1]"


def test_unsafe_attributes_stay_blocked():
    with pytest.raises(PromptStyleError, match="sandbox|unsafe"):
        template("{{ x.__class__.__mro__ }} ||| y").apply({"x": "a"})


def test_promptsource_semantics():
    t = template("{{ missing }}{{ x }} ||| {{ xs | most_frequent | choice }}", semantics="promptsource")
    record = {"x": "a" * 3000, "xs": ["b", "c", "b"]}
    applied = t.apply(record)
    assert applied.input.endswith("...") and len(applied.input) <= 2048
    assert applied.output == "b"
    again = template("{{ x }} ||| {{ [1, 2, 3, 4, 5, 6] | choice }}", semantics="promptsource")
    draws = {again.apply({"x": str(i)}).output for i in range(40)}
    assert len(draws) > 1  # drawn per record
    assert again.apply({"x": "7"}).output == again.apply({"x": "7"}).output  # and reproducibly


def test_templates_pickle():
    t = template("{{ a }} ||| {{ b }}", "x ||| y")
    t.apply({"a": 1, "b": 2})
    copy = pickle.loads(pickle.dumps(t))
    assert copy.apply({"a": 1, "b": 2}).answer_choices == ["x", "y"]


# -- the schema ------------------------------------------------------------------------------


def problems(data, name="my_task"):
    spec = check(data, path=Path(f"/x/{name}.yaml"))
    return [(p.level, p.key) for p in spec.problems], spec


def test_a_good_file_has_no_problems():
    found, spec = problems({"name": "my_task", "metadata": METADATA, "templates": {0: QA}})
    assert found == []
    assert spec.default_template().id == 0


def test_every_violation_is_reported_at_once_with_location_value_and_fix(tmp_path, capsys):
    text = """\
name: wrong
dataset: 3
split_lookup: {test: eval, dev: validation}
formatter: {name: fmt, args: [1]}
metadata:
  task: qa
  domains: [biomedicine, biology]
  source_type: single_source
  input_context: sentence
  output_context: label
  colour: blue
templates:
  1:
    jinja: "{{ q } ||| a"
    evaluate: true
  2:
    jinja: no separator
    evaluate: true
    answr_choices: a ||| b
    metadata:
      description_loc: begin
"""
    path = tmp_path / "my_task.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "validate", path)
    assert code == 2
    lines = out.splitlines()
    expected = [
        (1, "error: name: must equal the file name 'my_task', got 'wrong'"),
        (2, "error: dataset: must be a string, got 3"),
        (3, "error: split_lookup.dev: keys are canonical split names, got 'dev' (allowed: train, validation, test)"),
        (4, "error: formatter.args: must be a mapping"),
        (5, "error: metadata.contributor: is required but missing"),
        (6, "error: metadata.task: is not an allowed value, got 'qa' (allowed: summarization,"),
        (7, "error: metadata.domains.1: is not an allowed value, got 'biology'"),
        (11, "error: metadata.colour: is not a known key"),
        (12, "error: templates: template ids must be the numbers 0..1, got '1, 2'"),
        (12, "error: templates: 2 templates have evaluate: true (1, 2)"),
        (14, "error: templates.1.jinja: is not valid Jinja (template line 1)"),
        (17, "error: templates.2.jinja: has no ||| between the input and the output"),
        (19, "error: templates.2.answr_choices: is not a key of a template (did you mean 'answer_choices'?)"),
        (21, "warning: templates.2.metadata.description_loc: is not an allowed value, got 'begin' (allowed: before"),
    ]
    for line, text in expected:
        assert any(row.startswith(f"{path}:{line}: {text}") for row in lines), (line, text, lines)
    assert lines[-1] == "1 file checked, 0 ok, 1 failed (13 errors, 1 warning): FAILED"


def test_quoted_template_ids_and_pipes_only_in_comments_are_explained(task_file, capsys):
    path = task_file({"0": {"jinja": "{{ q }} ||| {{ a }}"}, "1": {"jinja": "{{ q }} {# ||| #} {{ a }}"}})
    code, out, _ = run(capsys, "validate", path)
    assert code == 2
    assert "template ids must be the numbers 0..1, got \"'0', '1'\"" in out
    assert "a quoted id such as '0' is a string: write 0:, unquoted" in out
    assert "templates.1.jinja: has no ||| between the input and the output (only inside a {# comment #})" in out


def test_a_task_template_file_without_templates_is_still_checked_as_one(tmp_path, capsys):
    path = tmp_path / "lost.yaml"
    path.write_text("dataset: allenai/x\nsplit_lookup: {test: eval}\n", encoding="utf-8")
    code, out, _ = run(capsys, "validate", path)
    assert code == 2
    assert f"{path}:1: error: name: is required (add name: lost)" in out
    assert f"{path}:1: error: metadata: is required" in out
    assert f"{path}:1: error: templates: is required" in out
    code, _, err = run(capsys, "render", path)
    assert code == 2 and "templates: is required" in err


def test_a_promptsource_filter_in_a_sciriff_template_says_how_to_use_it(task_file, capsys):
    path = task_file([{"jinja": "{{ question | choice }} ||| {{ answer }}"}])
    code, out, _ = run(capsys, "validate", path)
    assert code == 2
    assert "No filter named 'choice'. (that filter is promptsource's: set the template's metadata.render_as" in out


def test_json_task_template_files_number_templates_with_string_keys(tmp_path, capsys):
    import json

    body = {"name": "as_json", "metadata": METADATA, "templates": {"0": {"jinja": "{{ q }} ||| {{ a }}"}, "1": QA}}
    path = tmp_path / "as_json.json"
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    code, out, _ = run(capsys, "validate", path)
    assert code == 0, out
    assert [t.id for t in read_spec(path).templates] == [0, 1]


def test_metadata_warnings_do_not_fail_validation_unless_strict(task_file, capsys):
    path = task_file([{**QA, "metadata": {"description_loc": "top", "original_task": "yes", "extra": 1}}])
    code, out, _ = run(capsys, "validate", path)
    assert code == 0
    assert out.count(": warning: ") == 3
    assert run(capsys, "validate", path, "--strict")[0] == 2


def test_validate_directories_json_and_a_custom_schema(task_file, tmp_path, capsys):
    task_file([QA], name="good_one")
    task_file([QA], name="bad_one", metadata={**METADATA, "domains": ["astronomy"]})
    code, out, _ = run(capsys, "validate", tmp_path / "templates", "--format", "json")
    report = json.loads(out)
    assert code == 2 and report["ok"] is False
    by_name = {Path(f["file"]).stem: f for f in report["files"]}
    assert by_name["good_one"]["errors"] == 0
    assert by_name["bad_one"]["problems"][0]["key"] == "metadata.domains.0"
    schema = tmp_path / "templates" / "schema.yaml"  # not a task file: skipped inside a directory
    schema.write_text("type: object\nproperties:\n  domains: {type: array, items: {enum: [astronomy, misc]}}\n")
    code, out, _ = run(capsys, "validate", tmp_path / "templates", "--schema", schema)
    assert code == 0
    assert out.splitlines()[-1].startswith("2 files checked, 2 ok, 0 failed")
    assert "1 skipped (not task files)" in out
    (tmp_path / "templates" / "broken.yaml").write_text("name: [unclosed\n")
    code, out, _ = run(capsys, "validate", tmp_path / "templates")
    assert code == 2 and "broken.yaml:2: error: not valid YAML" in out


def test_validate_reports_other_task_formats_and_missing_paths(tmp_path, capsys):
    native = tmp_path / "native.yaml"
    native.write_text("task: t\ndata: {test: x.jsonl}\ndoc_to_txt: q\n")
    code, out, _ = run(capsys, "validate", native)
    assert code == 2 and "doc_to_txt" in out
    code, _, err = run(capsys, "validate", tmp_path / "nope.yaml")
    assert code == 2 and err.startswith("prompt-style: error:")


def test_duplicate_keys_keep_the_last_with_a_warning(tmp_path):
    path = tmp_path / "dup_task.yaml"
    path.write_text(
        "name: dup_task\nmetadata: {task: entailment}\ntemplates:\n  0:\n    jinja: 'a ||| b'\n"
        "    metadata: {name: first}\n    metadata: {description_loc: before}\n"
    )
    spec = read_spec(path)
    assert spec.templates[0].metadata == {"description_loc": "before"}
    duplicate = [p for p in spec.problems if "appears twice" in p.message]
    assert duplicate and duplicate[0].level == "warning" and duplicate[0].line == 7


# -- render ------------------------------------------------------------------------------------


def test_render_jsonl_gives_text_target_and_answer_choices(task_file, tmp_path, jsonl, capsys):
    path = task_file([QA, {"jinja": "{{ question }}? ||| {{ answer }}", "answer_choices": "yes ||| no"}])
    data = jsonl(tmp_path / "in.jsonl", RECORDS[:2])
    code, out, err = run(capsys, "render", path, "--data", f"test={data}", "--format", "jsonl")
    assert code == 0, err
    rows = read_jsonl_text(out)
    assert [(r["text"], r["target"], r["answer_choices"]) for r in rows] == [
        ("Q: q0", "a0", None),
        ("Q: q1", "a1", None),
    ]
    _, out, _ = run(capsys, "render", path, "--data", f"test={data}", "--format", "jsonl", "--template", "1")
    assert read_jsonl_text(out)[0]["answer_choices"] == ["yes", "no"]


def read_jsonl_text(text: str) -> list[dict]:
    """The lines' prompt keys, without the provenance every line ends with."""
    from prompt_style.provenance import PROVENANCE_KEYS

    rows = [json.loads(line) for line in text.split("\n") if line]
    return [{k: v for k, v in row.items() if k not in PROVENANCE_KEYS} for row in rows]


def test_template_choice_by_number_name_and_promptsource_id(task_file, tmp_path, jsonl, capsys):
    templates = [
        {"jinja": "zero ||| {{ answer }}", "name": "first"},
        {"jinja": "one ||| {{ answer }}", "name": "second", "metadata": {"promptsource_id": "abc-123"}},
        # promptsource has names ending in a space ("Sentiment with choices ")
        {"jinja": "two ||| {{ answer }}", "name": "third "},
    ]
    path = task_file(templates)
    data = jsonl(tmp_path / "in.jsonl", RECORDS[:1])

    def text(*extra):
        code, out, err = run(capsys, "render", path, "--data", f"train={data}", "--format", "jsonl", *extra)
        assert code == 0, err
        return read_jsonl_text(out)[0]["text"]

    assert text() == "zero"  # no evaluate: true -> template 0
    assert text("--template", "1") == text("--template", "second") == text("--template", "abc-123") == "one"
    assert text("--template", "third ") == text("--template", "third") == "two"
    code, _, err = run(capsys, "render", path, "--data", f"test={data}", "--template", "secnd")
    assert code == 2 and "did you mean 'second'" in err and "templates: 0 'first'; 1 'second'; 2 'third '" in err


def test_default_template_is_the_evaluate_one(task_file, tmp_path, jsonl, pm):
    path = task_file([{"jinja": "zero ||| x"}, {"jinja": "one ||| y", "evaluate": True}])
    task = load_task(path, plugins=pm, data={"test": RECORDS[:1]})
    assert next(task.render()).text == "one"
    assert task.config.metadata["template"] == {"id": 1, "name": None, "evaluate": True}


def test_render_error_names_file_line_template_and_record(task_file, tmp_path, jsonl, capsys):
    path = task_file([QA])
    data = jsonl(tmp_path / "in.jsonl", [RECORDS[0], {"question": "no answer"}])
    code, out, err = run(capsys, "render", path, "--data", f"test={data}")
    assert code == 2
    assert err.startswith(f"prompt-style: error: {path}:")
    assert "templates.0.jinja: split 'test' record 1: template 0 ('plain'): 'answer' is undefined" in err


def test_blocking_problems_stop_render_and_name_every_one(task_file, capsys):
    path = task_file({0: {"jinja": "{{ x } ||| y"}, 1: "not a mapping"}, standardize_splits="no")
    code, _, err = run(capsys, "render", path)
    assert code == 2
    assert "standardize_splits: must be true or false" in err and "also: line" in err


def test_metadata_problems_only_warn_when_rendering(task_file, pm):
    path = task_file([QA], metadata={"task": "qa"})
    with pytest.warns(TaskFileWarning, match=r"metadata\..*\(and \d+ more\); the task still renders"):
        task = load_task(path, plugins=pm, data={"test": RECORDS[:1]})
    assert next(task.render()).target == "a0"


def test_task_data_from_data_dir_split_lookup_and_skip_splits(task_file, tmp_path, pm, capsys):
    path = task_file(
        [QA],
        splits={"train": RECORDS[:3], "eval": RECORDS[3:5], "test": RECORDS[5:]},
        split_lookup={"test": "eval"},
    )
    task = load_task(path, plugins=pm)
    assert [p.target for p in task.render()] == ["a3", "a4"]  # test is eval.jsonl
    path = task_file([QA], name="skipping", splits={"train": RECORDS[:3], "test": RECORDS[3:]}, skip_splits=["test"])
    task = load_task(path, plugins=pm)
    assert task.config.test_split == "train" and len(list(task.render())) == 3


def test_data_root(task_file, tmp_path, jsonl, capsys, monkeypatch):
    path = task_file([QA], data_dir="elsewhere_data")
    code, _, err = run(capsys, "render", path)
    assert code == 2 and "'elsewhere_data' was not found" in err and "--data-root" in err
    jsonl(tmp_path / "root" / "elsewhere_data" / "test.jsonl", RECORDS[:2])
    code, out, _ = run(capsys, "render", path, "--data-root", tmp_path / "root", "--format", "jsonl")
    assert code == 0 and len(read_jsonl_text(out)) == 2
    monkeypatch.setenv("PROMPT_STYLE_DATA_ROOT", str(tmp_path / "root"))
    assert run(capsys, "render", path)[0] == 0


def test_a_hub_dataset_without_the_datasets_package_says_what_to_do(task_file, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "datasets", None)  # importing it fails
    path = task_file([QA], dataset="allenai/qasper")
    code, _, err = run(capsys, "render", path)
    assert code == 2
    assert "optional 'datasets' package is not installed" in err and "--data test=PATH" in err


def test_a_hub_dataset_is_read_with_the_datasets_package(task_file, pm, monkeypatch):
    import sys
    import types

    calls = []

    def load_dataset(name, subset, split):
        calls.append((name, subset, split))
        return [{"question": f"{split} q", "answer": "a"}]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    path = task_file([QA], dataset="org/set", subset="sub", split_lookup={"test": "eval"})
    assert next(load_task(path, plugins=pm).render()).text == "Q: eval q"
    assert calls == [("org/set", "sub", "eval")]


def _fake_hub(monkeypatch, splits):
    """A stand-in for the datasets package whose dataset has only ``splits`` (name -> records)."""
    import sys
    import types

    calls = []

    def load_dataset(name, subset, split):
        calls.append(split)
        if split not in splits:
            raise ValueError(f'Unknown split "{split}". Should be one of {list(splits)}.')
        return list(splits[split])

    def get_dataset_split_names(name, subset):
        return list(splits)

    fake = types.SimpleNamespace(load_dataset=load_dataset, get_dataset_split_names=get_dataset_split_names)
    monkeypatch.setitem(sys.modules, "datasets", fake)
    return calls


@pytest.mark.parametrize(
    "splits, rendered, sizes",
    [
        # train and test only: validation is carved from train (SciRIFF's re-balancing)
        ({"train": RECORDS[:10], "test": RECORDS[:3]}, "test", {"train": 8, "validation": 2, "test": 3}),
        # train and validation only: render falls back to validation, which instantiate makes the test split
        ({"train": RECORDS[:10], "validation": RECORDS[:3]}, "validation", {"train": 8, "validation": 2, "test": 3}),
        # train only: split three ways
        ({"train": RECORDS[:10]}, "train", {"train": 6, "validation": 2, "test": 2}),
    ],
)
def test_a_hub_dataset_missing_a_split(task_file, tmp_path, pm, monkeypatch, splits, rendered, sizes):
    from prompt_style import instantiate_task_template

    calls = _fake_hub(monkeypatch, splits)
    path = task_file([QA], dataset="org/set")
    task = load_task(path, plugins=pm)
    assert task.config.test_split == rendered and len(list(task.render())) == len(splits[rendered])
    calls.clear()
    result = instantiate_task_template(path, tmp_path / "out", plugins=pm)
    assert result.records == sizes
    assert set(calls) == set(splits)  # a split the dataset lacks is never asked for


def test_a_hub_dataset_with_none_of_the_splits(task_file, capsys, monkeypatch):
    _fake_hub(monkeypatch, {"eval": RECORDS[:2]})
    path = task_file([QA], dataset="org/set")
    code, _, err = run(capsys, "render", path)
    assert code == 2 and "has none of the splits train, validation, test (its splits: eval)" in err
    assert "split_lookup" in err


def test_render_renders_the_split_it_is_given(task_file, tmp_path, jsonl, capsys):
    path = task_file([QA], splits={"train": RECORDS[:3], "test": RECORDS[3:]})
    data = jsonl(tmp_path / "given.jsonl", [{"question": "mine", "answer": "given"}])
    code, out, _ = run(capsys, "render", path, "--data", f"validation={data}", "--format", "jsonl")
    assert code == 0 and read_jsonl_text(out)[0]["target"] == "given"


# -- interplay: retrievers, meta templates, styles ------------------------------------------


def test_chatml_with_few_shot_examples(task_file, pm_all):
    path = task_file([QA], splits={"train": RECORDS[:5], "test": RECORDS[5:7]})
    task = load_task(path, plugins=pm_all, meta="chatml", shots=2)
    prompt = next(task.render())
    assert prompt.messages == [
        {"role": "user", "content": "Q: q0"},
        {"role": "assistant", "content": "a0"},
        {"role": "user", "content": "Q: q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "Q: q5"},
    ]
    assert prompt.text.endswith("<|im_start|>user\nQ: q5<|im_end|>\n<|im_start|>assistant\n")
    assert prompt.target == "a5"


def test_plain_text_few_shot_and_the_random_retriever(task_file, pm):
    import dataclasses

    path = task_file([QA], splits={"train": RECORDS[:6], "test": RECORDS[6:8]})
    first_n = next(load_task(path, plugins=pm, shots=2).render())
    assert first_n.text == "Q: q0 a0\n\nQ: q1 a1\n\nQ: q6"
    config = dataclasses.replace(
        prompt_style.load_task_config(path, plugins=pm), retriever={"name": "random"}, num_fewshot=2
    )
    drawn = [p.text for p in load_task(config, plugins=pm, seed=7).render()]
    assert drawn == [p.text for p in load_task(config, plugins=pm, seed=7).render()]
    assert drawn != [p.text for p in load_task(config, plugins=pm, seed=8).render()]
    assert all(text.count("Q: ") == 3 for text in drawn)


def test_cloze_style_scores_the_answer_choices(task_file, pm_all):
    path = task_file([{"jinja": "{{ question }} ||| {{ answer_choices[label] }}", "answer_choices": "no ||| yes"}])
    task = load_task(path, plugins=pm_all, style="cloze", data={"test": [{"question": "Sky blue?", "label": 1}]})
    prompt = next(task.render())
    assert prompt.continuations == (" no", " yes") and prompt.target == 1


def test_the_renderer_pickles(task_file, pm):
    path = task_file([QA, {"jinja": "{{ question }} ||| {{ answer }}", "answer_choices": "a ||| b"}])
    task = load_task(path, plugins=pm, template=1, data={"test": RECORDS[:1]})
    renderer = pickle.loads(pickle.dumps(task.renderer))
    assert renderer.render(RECORDS[2], 0).to_json()["answer_choices"] == ["a", "b"]


# -- formatters --------------------------------------------------------------------------------


class Upper:
    @hookimpl
    def format_instances(self):
        def upper(records, *, field):
            for record in records:
                yield {**record, field: record[field].upper(), "seen_id": record["_id"]}

        return {"upper": upper}


def test_formatter_plugins_run_on_the_task_s_own_data(task_file):
    pm = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("upper", Upper())])
    path = task_file(
        [{"jinja": "{{ question }} {{ seen_id }} ||| {{ answer }}"}],
        splits={"test": RECORDS[:2]},
        formatter={"name": "upper", "args": {"field": "question"}},
    )
    assert [p.text for p in load_task(path, plugins=pm).render()] == ["Q0 0", "Q1 1"]
    # records given directly are the instances, as they are (said when a field is then missing)
    given = load_task(path, plugins=pm, data={"test": [{"question": "x", "seen_id": 9, "answer": "y"}]})
    assert next(given.render()).text == "x 9"
    raw = load_task(path, plugins=pm, data={"test": [{"question": "x", "answer": "y"}]})
    with pytest.raises(PromptStyleError, match="used as they are: the task's formatter 'upper' runs only"):
        next(raw.render())


class Counting:
    """A formatter that counts the instances it has made (``made``)."""

    def __init__(self) -> None:
        self.made = 0

    @hookimpl
    def format_instances(self):
        def counted(records, *, empty=False):
            for record in records:
                if empty:
                    continue
                self.made += 1
                yield record

        return {"counted": counted}


def test_a_formatted_split_renders_as_it_is_read(task_file):
    # the evaluated split made by a formatter is streamed: the first prompt comes before
    # the rest is formatted (constant memory), a bad record stops it where it stands
    counting = Counting()
    pm = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("counting", counting)])
    # (more records than a block of them: the fast path's loop takes blocks of 256)
    records = [*RECORDS * 60, {"question": "no answer"}]
    path = task_file([QA], splits={"test": records}, formatter={"name": "counted", "args": {}})
    task = load_task(path, plugins=pm)
    prompts = task.render()
    assert next(prompts).text == "Q: q0" and counting.made < len(records)
    with pytest.raises(PromptStyleError, match="answer") as caught:
        list(prompts)
    assert counting.made == len(records) and f"record {len(records) - 1}" in str(caught.value)
    assert [r["question"] for r in task.records()] == [r["question"] for r in records]
    # a formatter that makes no instances: said, not an empty render
    path = task_file(
        [QA], name="empty_task", splits={"test": RECORDS[:2]}, formatter={"name": "counted", "args": {"empty": True}}
    )
    with pytest.raises(PromptStyleError, match="empty"):
        list(load_task(path, plugins=pm).render())


def test_an_empty_data_file_under_a_formatter_names_the_file_without_a_line_of_another(task_file, tmp_path):
    path = task_file(
        [QA], name="empty_file", splits={"test": RECORDS[:1]}, formatter={"name": "map_fields", "args": {"fields": {}}}
    )
    data = tmp_path / "data" / "processed" / "empty_file" / "test.jsonl"
    data.write_text("", encoding="utf-8")
    with pytest.raises(PromptStyleError) as caught:
        list(load_task(path).render())
    assert caught.value.file == str(data) and caught.value.line is None  # not the task file's line
    assert str(caught.value).startswith(f"{data}: ") and "no records" in str(caught.value)
    # the same file's line is kept: a line always belongs to the file it is shown with
    error = PromptStyleError("x", file="a.yaml")
    assert error.locate(file="b.yaml", line=4).line is None and error.locate(file="a.yaml", line=4).line == 4


def test_unknown_formatter_lists_the_installed_ones(task_file, pm, capsys):
    path = task_file([QA], splits={"test": RECORDS[:1]}, formatter={"name": "qasper", "args": None})
    with pytest.raises(PromptStyleError) as info:
        list(load_task(path, plugins=pm).render())
    message = str(info.value)
    assert "unknown formatter 'qasper'" in message and "installed formatters: map_fields" in message


def test_validate_reports_a_formatter_that_is_not_installed(task_file, capsys):
    path = task_file([QA], splits={"test": RECORDS[:1]}, formatter={"name": "map_field", "args": None})
    code, out, _ = run(capsys, "validate", path)
    assert code == 0  # a warning: the task still renders records given with --data
    [line] = [line for line in out.splitlines() if "formatter" in line]
    assert ": warning: formatter.name: the formatter 'map_field' is not installed" in line
    assert "installed formatters: map_fields" in line and "did you mean 'map_fields'" in line
    assert run(capsys, "validate", path, "--strict")[0] == 2
    ok = task_file([QA], name="ok_task", splits={"test": RECORDS[:1]}, formatter={"name": "map_fields", "args": None})
    assert "formatter" not in run(capsys, "validate", ok)[1]


def test_formatter_from_an_installed_distribution(task_file, fake_dists):
    fake_dists.add(
        "ps-formatters",
        "reverse",
        "import prompt_style\n\n@prompt_style.hookimpl\ndef format_instances():\n"
        "    return {'reverse_q': lambda records: ({**r, 'question': r['question'][::-1]} for r in records)}\n",
    )
    pm = prompt_style.create_plugin_manager(environ={})
    path = task_file([QA], splits={"test": RECORDS[:1]}, formatter={"name": "reverse_q"})
    assert next(load_task(path, plugins=pm).render()).text == "Q: 0q"


def test_map_fields_formatter(task_file, pm):
    path = task_file(
        [{"jinja": "{{ q }} ||| {{ a }}"}],
        splits={"test": [{"data": {"q": "deep", "answers": ["x", "y"]}}]},
        formatter={"name": "map_fields", "args": {"fields": {"q": "data.q", "a": "data.answers.1"}, "keep": False}},
    )
    prompt = next(load_task(path, plugins=pm).render())
    assert (prompt.text, prompt.target) == ("deep", "y")
    bad = task_file(
        [{"jinja": "{{ q }} ||| x"}],
        name="bad_map",
        splits={"test": [{"data": {}}]},
        formatter={"name": "map_fields", "args": {"fields": {"q": "data.q"}}},
    )
    with pytest.raises(PromptStyleError, match=r"record 0 has no 'data.q' \(missing 'q'\)"):
        list(load_task(bad, plugins=pm).render())


class _Proxy(dict):
    """A ``dict`` subclass: the general walk's (any Mapping), not the compiled one's."""


@pytest.mark.parametrize("keep", [True, False])
def test_map_fields_compiled_walk_equals_the_general_one(keep):
    """``map_fields`` walks a plain dict record by code written for its paths; any other
    record (or step) is walked as before: the same instances, the same errors."""
    from types import MappingProxyType

    from prompt_style.formats.task_template import formatters

    fields = {"a": "x.y", "b": "l.0", "c": "l.-1", "d": "m.0.k", "e": "top", "top": "x.y"}
    records = [
        {"_id": 0, "x": {"y": 1}, "l": ["p", "q"], "m": [{"k": "v"}], "top": "t"},
        {"_id": 1, "x": {"y": None}, "l": ("tuple", "items"), "m": [{"k": 2}], "top": 3},
        {"_id": 2, "x": MappingProxyType({"y": "proxy"}), "l": ["only"], "m": {"0": {"k": "key 0"}}, "top": []},
        _Proxy({"_id": 3, "x": {"y": "sub"}, "l": [1, 2], "m": [{"k": 0}], "top": "t"}),
        {"x": {"y": "no id"}, "l": ["a"], "m": [{"k": "z"}], "top": "t"},
        {"_id": 5, "x": {"y": "s"}, "l": [], "m": [{"k": "z"}], "top": "t"},  # an index past the end
        {"_id": 6, "x": {}, "l": ["a"], "m": [{"k": "z"}], "top": "t"},  # a missing key
        {"_id": 7, "x": "text", "l": ["a"], "m": [{"k": "z"}], "top": "t"},  # a step into text
    ]

    def run(records: list[Any], compiled: bool) -> list[Any]:
        out = []
        for record in records:
            try:
                made = list(formatters.map_fields([record], fields=fields, keep=keep))
                out.append(("ok", made, [list(m) for m in made]))
            except PromptStyleError as exc:
                out.append(("error", str(exc), exc.key))
        return out

    compiled = run(records, True)
    original = formatters._mapper
    formatters._mapper = lambda paths, keep: lambda record: (_ for _ in ()).throw(LookupError)
    try:
        general = run(records, False)
    finally:
        formatters._mapper = original
    assert compiled == general
    assert [o[0] for o in compiled] == ["ok"] * 5 + ["error"] * 3


# -- splits ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "sizes"),
    [
        ({"train": 100, "validation": 10, "test": 10}, {"train": 100, "validation": 10, "test": 10}),
        ({"train": 100, "test": 7}, {"train": 93, "validation": 7, "test": 7}),
        ({"train": 100, "validation": 40}, {"train": 80, "validation": 20, "test": 40}),
        ({"train": 101}, {"train": 61, "validation": 20, "test": 20}),
        ({"test": 3}, {"train": 1, "validation": 1, "test": 1}),
    ],
)
def test_split_sizes_are_sciriff_s(counts, sizes):
    assert plan_splits(counts, task="t").sizes() == sizes


def test_split_plans_need_train_when_two_splits_exist():
    with pytest.raises(PromptStyleError, match="no train split"):
        plan_splits({"validation": 3, "test": 3}, task="t")
    assert plan_splits({"validation": 3, "test": 3}, task="t", standardize=False).sizes() == {
        "validation": 3,
        "test": 3,
    }


def test_carving_is_exact_uniform_and_seeded():
    carve = plan_splits({"train": 50}, task="t").carves["train"]
    first = [carve.assigner().next() for _ in range(1)]
    assigner = carve.assigner()
    drawn = [assigner.next() for _ in range(50)]
    assert {s: drawn.count(s) for s in set(drawn)} == {"train": 30, "validation": 10, "test": 10}
    again = carve.assigner()
    assert [again.next() for _ in range(50)] == drawn and first[0] == drawn[0]
    other = plan_splits({"train": 50}, task="t", seed=5).carves["train"].assigner()
    assert [other.next() for _ in range(50)] != drawn


# -- instantiate ----------------------------------------------------------------------------


def test_instantiate_the_bundled_example(tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "instantiate", SCIQ, "--out", out)
    assert code == 0, err
    rows = {split: read_jsonl(out / f"{split}.jsonl") for split in ("train", "validation", "test")}
    # train.jsonl has 30 records and test.jsonl 6: validation is carved from train (6 records)
    assert {s: len({r["_instance_id"] for r in v}) for s, v in rows.items()} == {
        "train": 24,
        "validation": 6,
        "test": 6,
    }
    assert {s: len(v) for s, v in rows.items()} == {"train": 72, "validation": 18, "test": 6}
    assert set(rows["test"][0]) == {"input", "output", "metadata", "_instance_id", "_template_id"}
    assert {r["_template_id"] for r in rows["test"]} == {0}
    assert rows["test"][0]["_instance_id"] == "sciq_mcq:test:0"
    assert rows["test"][0]["metadata"] == {
        **yaml.safe_load(SCIQ.read_text())["metadata"],
        "split": "test",
        "template_metadata": {"use_for_eval": True},
    }
    assert {r["metadata"]["template_metadata"]["use_for_eval"] for r in rows["train"]} == {True, False}
    ids = {split: {r["_instance_id"] for r in v} for split, v in rows.items()}
    assert not ids["train"] & ids["validation"] and not ids["train"] & ids["test"]
    assert not ids["validation"] & ids["test"]
    assert "validation: 6 records carved from train" in stdout
    first = (out / "train.jsonl").read_bytes()
    assert run(capsys, "instantiate", SCIQ, "--out", out)[0] == 0
    assert (out / "train.jsonl").read_bytes() == first  # deterministic
    assert run(capsys, "instantiate", SCIQ, "--out", out, "--seed", "99")[0] == 0
    assert (out / "train.jsonl").read_bytes() != first
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_instantiate_template_choices(tmp_path, capsys):
    out = tmp_path / "out"
    assert run(capsys, "instantiate", SCIQ, "--out", out, "--templates", "open_answer,1")[0] == 0
    train = read_jsonl(out / "train.jsonl")
    assert {r["_template_id"] for r in train} == {1, 2} and len(train) == 48
    assert run(capsys, "instantiate", SCIQ, "--out", out, "--random-template")[0] == 0
    train = read_jsonl(out / "train.jsonl")
    assert len(train) == 24 and len({r["_template_id"] for r in train}) > 1
    assert run(capsys, "instantiate", SCIQ, "--out", out, "--eval-template", "2", "--n-instances", "4")[0] == 0
    test = read_jsonl(out / "test.jsonl")
    assert {r["_template_id"] for r in test} == {2}
    sizes = {s: len(read_jsonl(out / f"{s}.jsonl")) for s in ("train", "validation", "test")}
    assert sizes == {"train": 3 * 3, "validation": 3 * 1, "test": 4}


def test_instantiate_needs_an_evaluation_template_for_test(task_file, tmp_path, capsys):
    path = task_file([{"jinja": "{{ question }} ||| {{ answer }}"}], splits={"train": RECORDS})
    code, _, err = run(capsys, "instantiate", path, "--out", tmp_path / "out")
    assert code == 2 and "no template has evaluate: true" in err
    assert run(capsys, "instantiate", path, "--out", tmp_path / "out", "--eval-template", "0")[0] == 0
    assert {s: len(read_jsonl(tmp_path / "out" / f"{s}.jsonl")) for s in ("train", "validation", "test")} == {
        "train": 6,
        "validation": 2,
        "test": 2,
    }


def test_instantiate_blank_outputs_fail_or_are_dropped_and_counted(task_file, tmp_path, capsys):
    records = [*RECORDS[:4], {"question": "q", "answer": "  "}]
    path = task_file([QA], splits={"train": records, "validation": records, "test": records})
    code, _, err = run(capsys, "instantiate", path, "--out", tmp_path / "out")
    assert code == 2 and "rendered a blank output" in err and "record 4" in err
    assert not (tmp_path / "out" / "train.jsonl").exists()
    code, out, _ = run(capsys, "instantiate", path, "--out", tmp_path / "out", "--drop-blank")
    assert code == 0 and "3 renders with a blank input or output were left out" in out


def test_a_crash_leaves_no_half_written_file(task_file, tmp_path, capsys, monkeypatch):
    path = task_file([QA], splits={"train": RECORDS, "validation": RECORDS[:2], "test": RECORDS[:2]})
    out = tmp_path / "out"
    assert run(capsys, "instantiate", path, "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = {"n": 0}
    original = TaskTemplate.apply

    def flaky(self, record):
        calls["n"] += 1
        if calls["n"] == 7:
            raise RuntimeError("disk on fire")
        return original(self, record)

    monkeypatch.setattr(TaskTemplate, "apply", flaky)
    assert main(["--debug", "instantiate", str(path), "--out", str(out), "--seed", "3"]) == 2
    assert "RuntimeError: disk on fire" in capsys.readouterr().err  # the traceback, then the line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # Without --debug: one line, never a traceback
    calls["n"] = 0
    code, _, err = run(capsys, "instantiate", path, "--out", out, "--seed", "3")
    assert code == 2 and err.strip() == (
        "prompt-style: error: internal error: RuntimeError: disk on fire (--debug shows the traceback; please report it)"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_instantiate_in_python_with_records_and_a_formatter(task_file, tmp_path):
    pm = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("upper", Upper())])
    path = task_file(
        [QA],
        splits={"train": RECORDS},
        formatter={"name": "upper", "args": {"field": "question"}},
    )
    spec = read_spec(path)
    result = instantiate_module.instantiate(spec, tmp_path / "out", plugins=pm, data={"test": RECORDS[:2]})
    assert result.records == {"train": 8, "validation": 2, "test": 2}
    train = read_jsonl(tmp_path / "out" / "train.jsonl")
    assert all(r["input"].startswith("Q: Q") for r in train)  # formatted
    test = read_jsonl(tmp_path / "out" / "test.jsonl")
    assert [r["input"] for r in test] == ["Q: q0", "Q: q1"]  # given as they are


def test_instantiate_rejects_duplicate_ids_from_a_formatter(task_file, tmp_path):
    class Same:
        @hookimpl
        def format_instances(self):
            return {"same": lambda records: ({**r, "_id": 0} for r in records)}

    pm = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("same", Same())])
    path = task_file([QA], splits={"train": RECORDS}, formatter={"name": "same"})
    with pytest.raises(PromptStyleError, match="the _id 0 is given to more than one record"):
        instantiate_module.instantiate(read_spec(path), tmp_path / "out", plugins=pm, eval_template=0)


def test_progress_is_reported(task_file, tmp_path):
    path = task_file([QA], splits={"train": RECORDS, "test": RECORDS[:3]})
    seen = []
    instantiate_module.instantiate(
        read_spec(path), tmp_path / "out", progress=lambda split, done, total: seen.append((split, done, total))
    )
    assert ("train", 8, 10) in seen and seen[-1] == ("test", 3, 3)


# -- promptsource conversion -------------------------------------------------------------------

PROMPTSOURCE = """\
dataset: super_glue
subset: rte
templates:
  2b52a83c-0021-41fe-b44c-5aaa076d71a2: !Template
    answer_choices: Yes ||| No
    id: 2b52a83c-0021-41fe-b44c-5aaa076d71a2
    jinja: '{{premise}} Is "{{hypothesis}}" correct? ||| {% if label != -1 %}{{ answer_choices[label] }}{% endif %}'
    metadata: !TemplateMetadata
      choices_in_prompt: true
      metrics:
      - Accuracy
      original_task: true
    name: MNLI crowdsource
    reference: Adapted.
  9e078fb4-505b-413c-bb5e-3cd16ddcf5d7: !Template
    answer_choices: null
    id: 9e078fb4-505b-413c-bb5e-3cd16ddcf5d7
    jinja: "{{premise}}\\n\\nMulti-line  \\n ||| {{ hypothesis }}"
    metadata: !TemplateMetadata
      choices_in_prompt: false
      metrics: []
      original_task: false
    name: second
    reference: ''
"""


def test_convert_promptsource(tmp_path, capsys):
    source = tmp_path / "templates.yaml"
    source.write_text(PROMPTSOURCE)
    out = tmp_path / "converted"
    argv = ["convert", "promptsource", source, "--out", out, "--evaluate", "second"]
    code, stdout, _ = run(capsys, *argv, "--metadata", "task=entailment", "--metadata", 'domains=["misc"]')
    assert code == 0
    assert f"wrote {out / 'super_glue_rte.yaml'} (2 templates)" in stdout
    assert "metadata.source_type: is required but missing" in stdout
    converted = yaml.safe_load((out / "super_glue_rte.yaml").read_text())
    assert converted["name"] == "super_glue_rte" and converted["subset"] == "rte"
    assert converted["metadata"] == {"contributor": "promptsource", "task": "entailment", "domains": ["misc"]}
    first, second = converted["templates"][0], converted["templates"][1]
    assert first["metadata"]["promptsource_id"] == "2b52a83c-0021-41fe-b44c-5aaa076d71a2"
    assert first["metadata"]["render_as"] == "promptsource" and first["name"] == "MNLI crowdsource"
    assert second["jinja"] == "{{premise}}\n\nMulti-line  \n ||| {{ hypothesis }}" and second["evaluate"] is True
    code, _, err = run(capsys, *argv)
    assert code == 2 and "--force" in err
    assert run(capsys, *argv, "--force", "--name", "rte_prompts")[0] == 0
    assert yaml.safe_load((out / "rte_prompts.yaml").read_text())["name"] == "rte_prompts"
    data = tmp_path / "rte.jsonl"
    data.write_text(json.dumps({"premise": "P.", "hypothesis": "H.", "label": 1}) + "\n")
    code, rendered, _ = run(
        capsys, "render", out / "super_glue_rte.yaml", "--data", f"test={data}", "--format", "jsonl", "--template", "0"
    )
    assert read_jsonl_text(rendered)[0] | {"index": 0} == {
        "index": 0,
        "text": 'P. Is "H." correct?',
        "messages": None,
        "continuations": [],
        "target": "No",
        "answer_choices": ["Yes", "No"],
    }


def test_promptsource_loader_is_safe(tmp_path):
    evil = tmp_path / "templates.yaml"
    evil.write_text("dataset: x\ntemplates:\n  a: !!python/object/apply:os.system ['echo hacked']\n")
    with pytest.raises(TaskFileError, match="is not allowed"):
        load_promptsource(evil)
    document = load_promptsource(tmp_path / "t.yaml", text=PROMPTSOURCE)
    assert convert(document)["templates"][1]["name"] == "second"


def test_convert_reports_every_template_without_jinja_and_empty_files(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text("dataset: x\ntemplates:\n  a: !Template\n    name: n\n  b: !Template\n    jinja: 5\n")
    code, _, err = run(capsys, "convert", "promptsource", broken, "--out", tmp_path / "out")
    assert code == 2
    assert "2 promptsource templates without Jinja: templates.a: has no jinja (line 3); templates.b: its jinja" in err
    empty = tmp_path / "empty.yaml"
    empty.write_text("dataset: x\ntemplates: {}\n")
    code, _, err = run(capsys, "convert", "promptsource", empty, "--out", tmp_path / "out")
    assert code == 2 and "has no templates to convert" in err
    assert not (tmp_path / "out").exists()


def test_convert_keeps_the_last_of_a_key_written_twice_as_promptsource_does(tmp_path, capsys):
    source = tmp_path / "dup.yaml"
    source.write_text(
        "dataset: d\ntemplates:\n  a: !Template\n    id: a\n    jinja: 'x ||| 1'\n    name: first\n    name: second\n"
    )
    code, out, _ = run(capsys, "convert", "promptsource", source, "--out", tmp_path / "out")
    assert code == 0
    assert f"warning: {source}:7: templates.a.name: appears twice (also on line 6); the last one counts" in out
    assert "name: second" in (tmp_path / "out" / "d.yaml").read_text()


def test_convert_names_a_file_without_dataset_by_its_folder(tmp_path, capsys):
    folder = tmp_path / "my_data" / "templates.yaml"
    folder.parent.mkdir()
    folder.write_text("templates:\n  a: !Template\n    jinja: 'x ||| y'\n")
    assert run(capsys, "convert", "promptsource", folder, "--out", tmp_path / "out")[0] == 0
    assert (tmp_path / "out" / "my_data.yaml").exists()


def test_convert_a_directory(tmp_path, capsys):
    for subset in ("rte", "cb"):
        folder = tmp_path / "templates" / "super_glue" / subset
        folder.mkdir(parents=True)
        (folder / "templates.yaml").write_text(PROMPTSOURCE.replace("subset: rte", f"subset: {subset}"))
    code, out, _ = run(capsys, "convert", "promptsource", tmp_path / "templates", "--out", tmp_path / "out")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["super_glue_cb.yaml", "super_glue_rte.yaml"]


def test_progress_bar_on_a_terminal_only(tmp_path, capsys, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["instantiate", str(SCIQ), "--out", str(tmp_path / "a")]) == 0
    drawn = terminal.getvalue()
    assert "\rsciq_mcq train" in drawn and "30/30" in drawn and drawn.endswith("\n")
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main(["instantiate", str(SCIQ), "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert quiet.getvalue() == ""


def test_render_text_shows_answer_choices(capsys):
    code, out, _ = run(capsys, "render", SCIQ, "--limit", "1")
    assert code == 0
    assert out.splitlines()[0] == '=== record 0 · target: "skin" · answer_choices: ["brain", "heart", "liver", "skin"]'


def test_a_promptsource_file_renders_and_validates_directly(tmp_path, jsonl, capsys):
    """Read directly, a promptsource templates.yaml is converted in memory: it renders as
    the converted file does, and validate checks its templates (not the task-level name
    and metadata, which promptsource files do not have; convert adds them)."""
    source = tmp_path / "templates.yaml"
    source.write_text(PROMPTSOURCE)
    data = jsonl(tmp_path / "in.jsonl", [{"premise": "P ||| q", "hypothesis": "H", "label": 1}])
    code, out, err = run(capsys, "render", source, "--data", f"test={data}", "--format", "jsonl")
    assert code == 0 and err == ""
    assert read_jsonl_text(out)[0]["text"] == 'P ||| q Is "H" correct?'
    assert read_jsonl_text(out)[0]["target"] == "No"
    assert read_jsonl_text(out)[0]["answer_choices"] == ["Yes", "No"]
    for selector in ("second", "9e078fb4-505b-413c-bb5e-3cd16ddcf5d7", "1"):
        code, out, _ = run(
            capsys, "render", source, "--data", f"test={data}", "--format", "jsonl", "--template", selector
        )
        assert code == 0 and read_jsonl_text(out)[0]["target"] == "H"
    code, out, _ = run(capsys, "validate", source)
    assert code == 0 and out.splitlines()[-1].startswith("1 file checked, 1 ok")
    broken = tmp_path / "broken" / "templates.yaml"
    broken.parent.mkdir()
    broken.write_text(PROMPTSOURCE.replace("{{ hypothesis }}", "{{ hypothesis }").replace("||| {% if", "{% if"))
    code, out, _ = run(capsys, "validate", broken)
    assert code == 2
    assert f"{broken}:7: error: templates.0.jinja: has no |||" in out
    assert f"{broken}:18: error: templates.1.jinja: is not valid Jinja" in out
