"""Task files and data files: every error names the file and key (and line)."""

from __future__ import annotations

import json

import pytest

from prompt_style import (
    DataError,
    FieldError,
    LimitError,
    PromptStyleError,
    TaskConfig,
    TaskFileError,
    iter_records,
    load_records,
    load_task,
    load_task_config,
)

OK = "task: t\ndata: test.jsonl\ndoc_to_text: q\ndoc_to_target: a\n"


def line_of(path, key: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.lstrip().startswith(key + ":"):
            return number
    raise AssertionError(f"{key} not in {path}")


def load_error(path, pm, error=PromptStyleError, **kwargs):
    with pytest.raises(error) as info:
        task = load_task(path, plugins=pm, **kwargs)
        list(task.render())
    return info.value


# -- the task file itself -------------------------------------------------------------


def test_minimal_task_file(write_yaml, pm):
    path = write_yaml(OK)
    task = load_task(path, plugins=pm)
    assert task.name == "t"
    assert [r.text for r in task.render()] == ["Q0"]
    assert [r.target for r in task.render()] == ["A0"]


def test_task_name_defaults_to_file_stem(write_yaml, pm):
    path = write_yaml("data: test.jsonl\ndoc_to_text: q\n", name="my_task.yaml")
    assert load_task(path, plugins=pm).name == "my_task"


def test_missing_task_file(tmp_path, pm):
    path = tmp_path / "nope.yaml"
    err = load_error(path, pm, TaskFileError)
    assert str(path) in str(err)
    assert "not found" in str(err)


def test_task_file_is_a_directory(tmp_path, pm):
    err = load_error(tmp_path, pm, TaskFileError)
    assert str(tmp_path) in str(err)


def test_unknown_key_did_you_mean(write_yaml, pm):
    path = write_yaml(OK + "num_fewshots: 2\n")
    err = load_error(path, pm, TaskFileError)
    message = str(err)
    assert err.key == "num_fewshots"
    assert err.line == 5
    assert f"{path}:5" in message
    assert "num_fewshots" in message
    assert "did you mean 'num_fewshot'" in message


def test_unknown_key_without_close_match_lists_keys(write_yaml, pm):
    err = load_error(write_yaml(OK + "zzzzzz: 1\n"), pm, TaskFileError)
    assert "zzzzzz" in str(err)
    assert "doc_to_text" in str(err)


@pytest.mark.parametrize(
    "extra, key",
    [
        ("num_fewshot: two\n", "num_fewshot"),
        ("num_fewshot: true\n", "num_fewshot"),
        ("num_fewshot: 1.5\n", "num_fewshot"),
        ("seed: abc\n", "seed"),
        ("description: [a, b]\n", "description"),
        ("template: [mcq]\n", "template"),
        ("fewshot_delimiter: 3\n", "fewshot_delimiter"),
        ("metadata: text\n", "metadata"),
        ("retriever: 5\n", "retriever"),
    ],
)
def test_wrong_type(write_yaml, pm, extra, key):
    path = write_yaml(OK + extra)
    err = load_error(path, pm, TaskFileError)
    assert err.key == key
    assert err.line == 5
    assert f"{path}:5: {key}:" in str(err)
    assert "must be" in str(err)


def test_wrong_type_of_test_split(write_yaml, pm):
    path = write_yaml("test_split: 3\n" + OK)
    err = load_error(path, pm, TaskFileError)
    assert (err.key, err.line) == ("test_split", 1)


def test_duplicate_key(write_yaml, pm):
    path = write_yaml(OK + "doc_to_text: other\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "doc_to_text"
    assert err.line == 5
    assert f"{path}:5" in str(err)
    assert "twice" in str(err)


def test_duplicate_nested_key(write_yaml, pm):
    path = write_yaml("task: t\ndata:\n  test: test.jsonl\n  test: test.jsonl\ndoc_to_text: q\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "data.test"
    assert err.line == 4
    assert str(path) in str(err)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_empty_file(write_yaml, pm, text):
    path = write_yaml(text)
    err = load_error(path, pm, TaskFileError)
    assert str(path) in str(err)
    assert "empty" in str(err)


@pytest.mark.parametrize(
    "text, line",
    [
        ("task: t\ndata: [test.jsonl\ndoc_to_text: q\n", 3),
        ("task: t\n  data: : x\n", 2),
        ("task: t\ndoc_to_text: 'unterminated\n", None),
        ("task: t\n\tdoc_to_text: q\n", 2),
    ],
)
def test_invalid_yaml(write_yaml, pm, text, line):
    path = write_yaml(text)
    err = load_error(path, pm, TaskFileError)
    assert str(path) in str(err)
    assert "YAML" in str(err)
    if line is not None:
        assert err.line == line
        assert f"{path}:{line}" in str(err)


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_not_a_mapping(write_yaml, pm, text):
    path = write_yaml(text)
    err = load_error(path, pm, TaskFileError)
    assert str(path) in str(err)
    assert "mapping" in str(err)


def test_no_data_key(write_yaml, pm):
    path = write_yaml("task: t\ndoc_to_text: q\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "data"
    assert str(path) in str(err)


def test_no_doc_to_text(write_yaml, pm):
    path = write_yaml("task: t\ndata: test.jsonl\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "doc_to_text"
    assert str(path) in str(err)


def test_bad_jinja_in_task_names_file_line_and_key(write_yaml, pm):
    path = write_yaml("task: t\ndata: test.jsonl\n\ndoc_to_text: '{{ q'\n")
    err = load_error(path, pm, FieldError)
    assert (err.key, err.line) == ("doc_to_text", 4)
    assert f"{path}:4: doc_to_text:" in str(err)


def test_template_type_must_be_string(write_yaml, pm):
    path = write_yaml(OK + "template:\n  template_type: 3\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "template.template_type"
    assert err.line == 6


def test_unknown_template_option_line(write_yaml, pm):
    path = write_yaml(OK + "doc_to_choice: '{{[q, a]}}'\ntemplate:\n  template_type: mcq\n  sufix: x\n")
    err = load_error(path, pm)
    assert err.key == "template.sufix"
    assert err.line == 8
    assert f"{path}:8" in str(err)
    assert "did you mean 'suffix'" in str(err)


def test_retriever_mapping_without_name(write_yaml, pm):
    path = write_yaml(OK + "retriever:\n  seed: 3\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "retriever.name"
    assert str(path) in str(err)


def test_negative_num_fewshot(write_yaml, pm):
    path = write_yaml(OK + "num_fewshot: -1\n")
    err = load_error(path, pm, TaskFileError)
    assert (err.key, err.line) == ("num_fewshot", 5)


# -- splits ---------------------------------------------------------------------------


def test_test_split_not_in_data(write_yaml, pm):
    path = write_yaml("task: t\ndata:\n  train: test.jsonl\ntest_split: validation\ndoc_to_text: q\n")
    err = load_error(path, pm, TaskFileError)
    assert (err.key, err.line) == ("test_split", 4)
    assert "validation" in str(err)
    assert "train" in str(err)


def test_default_test_split_not_in_data(write_yaml, pm):
    path = write_yaml("task: t\ndata:\n  train: test.jsonl\ndoc_to_text: q\n")
    err = load_error(path, pm, TaskFileError)
    assert err.key == "data"
    assert "'test'" in str(err)
    assert str(path) in str(err)


def test_test_split_other_than_test(write_yaml, pm):
    path = write_yaml("task: t\ndata:\n  validation: test.jsonl\ntest_split: validation\ndoc_to_text: q\n")
    assert [r.text for r in load_task(path, plugins=pm).render()] == ["Q0"]


def test_data_as_single_path(write_yaml, pm):
    path = write_yaml("task: t\ndata: test.jsonl\ntest_split: validation\ndoc_to_text: q\n")
    assert [r.text for r in load_task(path, plugins=pm).render()] == ["Q0"]


def test_unknown_fewshot_split(write_yaml, pm):
    path = write_yaml("task: t\ndata:\n  test: test.jsonl\n  train: test.jsonl\nfewshot_split: trian\ndoc_to_text: q\n")
    err = load_error(path, pm, TaskFileError)
    assert (err.key, err.line) == ("fewshot_split", 5)
    assert "trian" in str(err)
    assert "did you mean 'train'" in str(err)


# -- data files -----------------------------------------------------------------------


def test_missing_test_data_file(write_yaml, pm, tmp_path):
    path = write_yaml("task: t\ndata:\n  test: missing.jsonl\ndoc_to_text: q\n")
    err = load_error(path, pm, DataError)
    assert str(tmp_path / "missing.jsonl") in str(err)
    assert "not found" in str(err)


def test_missing_test_data_file_names_the_key(write_yaml, pm):
    path = write_yaml("task: t\ndata:\n  test: missing.jsonl\ndoc_to_text: q\n")
    err = load_error(path, pm, DataError)
    assert "data.test" in str(err)


def test_missing_fewshot_data_file(write_yaml, pm, tmp_path):
    path = write_yaml(
        "task: t\ndata:\n  test: test.jsonl\n  dev: nodev.jsonl\nfewshot_split: dev\ndoc_to_text: q\ndoc_to_target: a\nnum_fewshot: 1\n"
    )
    err = load_error(path, pm, DataError)
    assert str(tmp_path / "nodev.jsonl") in str(err)
    assert "data.dev" in str(err)


def test_fewshot_without_doc_to_target_names_the_key(write_yaml, pm, tmp_path, jsonl):
    jsonl(tmp_path / "test.jsonl", [{"q": "a"}, {"q": "b"}])
    path = write_yaml("data:\n  test: test.jsonl\ndoc_to_text: q\nnum_fewshot: 1\n")
    err = load_error(path, pm, TaskFileError)
    assert "num_fewshot" in str(err) and "doc_to_target" in str(err)
    assert str(err).startswith(f"{path}:4: num_fewshot:")


def test_data_paths_are_relative_to_the_task_file(tmp_path, jsonl, pm, monkeypatch):
    jsonl(tmp_path / "sub" / "d" / "test.jsonl", [{"q": "deep"}])
    (tmp_path / "sub" / "t.yaml").write_text("data: d/test.jsonl\ndoc_to_text: q\n")
    monkeypatch.chdir(tmp_path)
    assert [r.text for r in load_task("sub/t.yaml", plugins=pm).render()] == ["deep"]


def test_bad_jsonl_line_names_file_and_line(tmp_path, jsonl, pm):
    data = tmp_path / "test.jsonl"
    data.write_text('{"q": "a"}\n\n{"q": "b"}\n{"q": \n{"q": "c"}\n')
    (tmp_path / "t.yaml").write_text("data: test.jsonl\ndoc_to_text: q\n")
    task = load_task(tmp_path / "t.yaml", plugins=pm)
    results = task.render()
    assert next(results).text == "a"
    assert next(results).text == "b"
    with pytest.raises(DataError) as info:
        next(results)
    assert info.value.line == 4
    assert f"{data}:4" in str(info.value)


@pytest.mark.parametrize("bad", ["[1, 2]", '"text"', "3", "null"])
def test_non_object_record(tmp_path, pm, bad):
    data = tmp_path / "test.jsonl"
    data.write_text('{"q": "a"}\n' + bad + "\n")
    (tmp_path / "t.yaml").write_text("data: test.jsonl\ndoc_to_text: q\n")
    with pytest.raises(DataError) as info:
        list(load_task(tmp_path / "t.yaml", plugins=pm).render())
    assert info.value.line == 2
    assert f"{data}:2" in str(info.value)
    assert "object" in str(info.value)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_data_file(tmp_path, pm, content):
    data = tmp_path / "test.jsonl"
    data.write_text(content)
    (tmp_path / "t.yaml").write_text("data: test.jsonl\ndoc_to_text: q\n")
    with pytest.raises(DataError) as info:
        list(load_task(tmp_path / "t.yaml", plugins=pm).render())
    assert str(data) in str(info.value)
    assert "no records" in str(info.value)


def test_empty_fewshot_data_file(tmp_path, jsonl, pm):
    jsonl(tmp_path / "test.jsonl", [{"q": "a", "a": "b"}])
    (tmp_path / "dev.jsonl").write_text("")
    (tmp_path / "t.yaml").write_text(
        "data: {test: test.jsonl, dev: dev.jsonl}\ndoc_to_text: q\ndoc_to_target: a\nnum_fewshot: 1\n"
    )
    with pytest.raises(DataError) as info:
        load_task(tmp_path / "t.yaml", plugins=pm)
    assert str(tmp_path / "dev.jsonl") in str(info.value)


def test_unsupported_data_suffix(tmp_path, pm):
    (tmp_path / "test.csv").write_text("q\na\n")
    (tmp_path / "t.yaml").write_text("data: test.csv\ndoc_to_text: q\n")
    with pytest.raises(DataError) as info:
        list(load_task(tmp_path / "t.yaml", plugins=pm).render())
    assert str(tmp_path / "test.csv") in str(info.value)


def test_json_array_data(tmp_path, pm):
    (tmp_path / "test.json").write_text(json.dumps([{"q": "a", "a": "x"}, {"q": "b", "a": "y"}]))
    (tmp_path / "t.yaml").write_text("data: test.json\ndoc_to_text: q\ndoc_to_target: a\nnum_fewshot: 1\n")
    assert [r.text for r in load_task(tmp_path / "t.yaml", plugins=pm).render()] == ["b y\n\na", "a x\n\nb"]


def test_ndjson_data(tmp_path, jsonl, pm):
    jsonl(tmp_path / "test.ndjson", [{"q": "a"}])
    (tmp_path / "t.yaml").write_text("data: test.ndjson\ndoc_to_text: q\n")
    assert [r.text for r in load_task(tmp_path / "t.yaml", plugins=pm).render()] == ["a"]


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"q": "a"}', "array"),
        ("[]", "no records"),
        ('[{"q": 1}, 2]', "record 1"),
        ('{"q": "a"}\n{"q": \n', "JSON"),
    ],
)
def test_bad_json_data(tmp_path, pm, content, fragment):
    data = tmp_path / "test.json"
    data.write_text(content)
    with pytest.raises(DataError) as info:
        load_records(data)
    assert str(data) in str(info.value)
    assert fragment in str(info.value)


def test_json_lines_in_a_json_file(tmp_path):
    # As Hugging Face datasets' json loader (lm-evaluation-harness data_files) reads them.
    data = tmp_path / "test.json"
    data.write_text('{"q": "a"}\n\n{"q": "b"}\n', encoding="utf-8")
    assert load_records(data) == [{"q": "a"}, {"q": "b"}]


def test_iter_records_is_a_generator(tmp_path, jsonl):
    path = jsonl(tmp_path / "x.jsonl", [{"i": i} for i in range(3)])
    it = iter_records(path, "test")
    assert next(it) == {"i": 0}
    assert list(it) == [{"i": 1}, {"i": 2}]


def test_non_utf8_data(tmp_path):
    data = tmp_path / "test.jsonl"
    data.write_bytes(b'{"q": "\xff"}\n')
    with pytest.raises(DataError) as info:
        load_records(data)
    assert str(data) in str(info.value)


# -- data overrides, mappings, TaskConfig --------------------------------------------


def test_data_override(write_yaml, jsonl, tmp_path, pm):
    path = write_yaml(OK)
    other = jsonl(tmp_path / "other" / "x.jsonl", [{"q": "X0", "a": "x"}, {"q": "X1", "a": "y"}])
    task = load_task(path, plugins=pm, data={"test": other})
    assert [r.text for r in task.render()] == ["X0", "X1"]
    task = load_task(path, plugins=pm, data={"test": str(other)})
    assert [r.text for r in task.render()] == ["X0", "X1"]


def test_data_override_adds_fewshot_split(write_yaml, jsonl, tmp_path, pm):
    path = write_yaml(OK + "num_fewshot: 1\n")
    dev = jsonl(tmp_path / "dev.jsonl", [{"q": "D0", "a": "d"}])
    task = load_task(path, plugins=pm, data={"dev": dev})
    assert next(task.render()).text == "D0 d\n\nQ0"


def test_data_override_json(write_yaml, tmp_path, pm):
    path = write_yaml(OK)
    (tmp_path / "o.json").write_text(json.dumps([{"q": "J", "a": "j"}]))
    assert [r.text for r in load_task(path, plugins=pm, data={"test": tmp_path / "o.json"}).render()] == ["J"]


def test_task_from_mapping(tmp_path, jsonl, pm, monkeypatch):
    jsonl(tmp_path / "test.jsonl", [{"q": "M"}])
    monkeypatch.chdir(tmp_path)
    task = load_task({"task": "m", "data": {"test": "test.jsonl"}, "doc_to_text": "q"}, plugins=pm)
    assert task.name == "m"
    assert [r.text for r in task.render()] == ["M"]
    with pytest.raises(TaskFileError) as info:
        load_task({"data": {"test": "test.jsonl"}, "doc_to_txt": "q"}, plugins=pm)
    assert "did you mean 'doc_to_text'" in str(info.value)


def test_task_from_config(write_yaml, pm):
    config = load_task_config(write_yaml(OK))
    assert isinstance(config, TaskConfig)
    assert config.lines["doc_to_text"] == 3
    assert [r.text for r in load_task(config, plugins=pm).render()] == ["Q0"]


def test_python_callable_specs_from_mapping(tmp_path, jsonl, pm):
    data = jsonl(tmp_path / "test.jsonl", [{"q": "a", "n": 2}])
    task = load_task(
        {"data": {"test": str(data)}, "doc_to_text": lambda r: r["q"].upper(), "doc_to_target": lambda r: r["n"] * 3},
        plugins=pm,
    )
    result = next(task.render())
    assert (result.text, result.target) == ("A", 6)


def test_render_errors_name_task_file_line_key_and_record(tmp_path, jsonl, pm):
    jsonl(tmp_path / "test.jsonl", [{"q": "a"}, {"q": "b"}, {"x": "c"}])
    path = tmp_path / "t.yaml"
    path.write_text("task: t\ndata: test.jsonl\ndoc_to_text: q\n")
    with pytest.raises(FieldError) as info:
        list(load_task(path, plugins=pm).render())
    err = info.value
    assert (err.key, err.line, err.index, err.split) == ("doc_to_text", 3, 2, "test")
    assert str(err).startswith(f"{path}:3: doc_to_text: split 'test' record 2:")
    assert "'q'" in str(err)


def test_errors_in_fewshot_examples_name_the_pool_record(tmp_path, jsonl, pm):
    jsonl(tmp_path / "test.jsonl", [{"q": "a", "a": "x"}])
    jsonl(tmp_path / "dev.jsonl", [{"q": "d0", "a": "y"}, {"q": "d1"}])
    path = tmp_path / "t.yaml"
    path.write_text("data: {test: test.jsonl, dev: dev.jsonl}\ndoc_to_text: q\ndoc_to_target: a\nnum_fewshot: 2\n")
    with pytest.raises(FieldError) as info:
        list(load_task(path, plugins=pm).render())
    message = str(info.value)
    assert "few-shot" in message
    assert "split 'dev' record 1" in message
    assert "doc_to_target" in message


def test_errors_pickle_with_their_location(write_yaml, pm):
    import pickle

    err = load_error(write_yaml(OK + "num_fewshots: 2\n"), pm, TaskFileError)
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is TaskFileError
    assert str(clone) == str(err)
    assert (clone.key, clone.line, clone.file) == (err.key, err.line, err.file)


@pytest.mark.parametrize("spec", ["{{ n / 0 }}", "{{ q + 1 }}", "{{ range(10**9) | list | length }}"])
def test_runtime_jinja_errors_while_rendering_are_field_errors(tmp_path, jsonl, pm, spec):
    jsonl(tmp_path / "test.jsonl", [{"q": "a", "n": 1}])
    path = tmp_path / "t.yaml"
    path.write_text(f"data: test.jsonl\ndoc_to_text: q\ndoc_to_target: {json.dumps(spec)}\n")
    with pytest.raises((FieldError, LimitError)) as info:
        list(load_task(path, plugins=pm).render())
    assert (info.value.key, info.value.line, info.value.index) == ("doc_to_target", 3, 0)
    assert str(path) in str(info.value)


def test_missing_data_file_points_at_the_task_file_line(tmp_path, pm):
    path = tmp_path / "task.yaml"
    path.write_text("task: t\ndata:\n  test: tset.jsonl\ndoc_to_text: q\n")
    err = load_error(path, pm, DataError)
    assert str(err).startswith(f"{path}:3: data.test: split 'test': data file not found: {tmp_path / 'tset.jsonl'}")
    assert "relative to the task file" in str(err)


def test_missing_data_override_names_the_given_path(write_yaml, pm, tmp_path):
    path = write_yaml("data: test.jsonl\ndoc_to_text: q\n")
    err = load_error(path, pm, DataError, data={"test": tmp_path / "nope.jsonl"})
    assert str(err).startswith(f"{tmp_path / 'nope.jsonl'}: data.test:")
    assert "current directory" in str(err)


def test_a_task_file_without_data_renders_with_data_given(tmp_path, jsonl, capsys):
    from prompt_style.cli import main

    (tmp_path / "t.yaml").write_text("doc_to_text: q\ndoc_to_target: a\nfewshot_split: dev\n", encoding="utf-8")
    test = jsonl(tmp_path / "x.jsonl", [{"q": "Q0", "a": "A0"}])
    # Zero-shot needs only the evaluated split, even with a fewshot_split named.
    assert main(["render", str(tmp_path / "t.yaml"), "--data", f"test={test}", "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "Q0"
    dev = jsonl(tmp_path / "d.jsonl", [{"q": "D", "a": "E"}])
    argv = ["render", str(tmp_path / "t.yaml"), "--data", f"test={test}", "--data", f"dev={dev}", "--shots", "1"]
    assert main([*argv, "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "D E\n\nQ0"
    assert main(["render", str(tmp_path / "t.yaml"), "--data", f"test={test}", "--shots", "1"]) == 2
    assert "no data for the few-shot split 'dev'" in capsys.readouterr().err


def test_data_given_for_the_evaluated_split_is_checked_after_overrides(write_yaml, jsonl, tmp_path, pm):
    path = write_yaml("data:\n  train: test.jsonl\ntest_split: validation\ndoc_to_text: q\n")
    other = jsonl(tmp_path / "v.jsonl", [{"q": "V"}])
    assert [r.text for r in load_task(path, plugins=pm, data={"validation": other}).render()] == ["V"]
