"""Strict data and error quality: nulls, missing names, unencodable text,
JSON Lines that every consumer can split, errors that say where."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from prompt_style import (
    DataError,
    FieldError,
    PluginError,
    PromptStyleError,
    RenderError,
    compile_field,
    create_plugin_manager,
    hookimpl,
    load_task,
    render_records,
)
from prompt_style.cli import main
from prompt_style.errors import cut
from prompt_style.safe.json_lines import dumps_line

MC = {"doc_to_text": "q", "doc_to_choice": "c", "doc_to_target": "a", "template": "mcq"}


def fails(records, **task) -> PromptStyleError:
    with pytest.raises(PromptStyleError) as info:
        render_records(records, **task)
    return info.value


def test_null_question():
    err = fails([{"q": "ok"}, {"q": None}], doc_to_text="q")
    assert (type(err), err.key, err.index) == (FieldError, "doc_to_text", 1)


def test_null_choice_list():
    err = fails([{"q": "x", "c": None, "a": 0}], **MC)
    assert (type(err), err.key, err.index) == (FieldError, "doc_to_choice", 0)
    assert "null" in str(err)


def test_null_choice_item():
    err = fails([{"q": "x", "c": ["a", None], "a": 0}], **MC)
    assert (err.key, err.index) == ("doc_to_choice", 0)
    assert "choice 1 is null" in str(err)


def test_null_multiple_choice_answer():
    err = fails([{"q": "x", "c": ["a", "b"], "a": None}], **MC)
    assert (err.key, err.index) == ("doc_to_target", 0)
    err = fails([{"q": "x", "c": ["a", "b"], "a": None}], **MC, allow_null_target=True)
    assert err.key == "doc_to_target"  # multiple choice always needs its answer


def test_null_generation_target_only_when_the_task_says_so():
    err = fails([{"q": "x", "a": None}], doc_to_text="q", doc_to_target="a")
    assert (err.key, err.index) == ("doc_to_target", 0)
    assert "allow_null_target" in str(err)
    [result] = render_records([{"q": "x", "a": None}], doc_to_text="q", doc_to_target="a", allow_null_target=True)
    assert result.target is None
    err = fails([{"q": "x", "a": ["ref", None]}], doc_to_text="q", doc_to_target="a", allow_null_target=True)
    assert "reference answer is null" in str(err)


def test_few_shot_examples_with_a_null_answer():
    """Without allow_null_target a null example answer is an error naming the example;
    with it the example shows no answer (lm-evaluation-harness's build_qa_turn), never 'None'."""
    task = dict(doc_to_text="q", doc_to_target="a", num_fewshot=1)
    err = fails([{"q": "x", "a": "y"}], fewshot=[{"q": "shot", "a": None}], **task)
    assert (err.key, err.split, err.index) == ("doc_to_target", "dev", 0)
    assert "few-shot example" in str(err)
    [result] = render_records(
        [{"q": "x", "a": "y"}], fewshot=[{"q": "shot", "a": None}], allow_null_target=True, **task
    )
    assert "None" not in result.text and result.text.startswith("shot")
    err = fails(
        [{"q": "x", "c": ["a", "b"], "a": 0}], fewshot=[{"q": "s", "c": ["a", "b"], "a": None}], **MC, num_fewshot=1
    )
    assert (err.key, err.split) == ("doc_to_target", "dev")  # multiple choice: always an error


def test_allow_null_target_must_be_a_boolean():
    err = fails([{"q": "x"}], doc_to_text="q", allow_null_target="yes")
    assert err.key == "allow_null_target"


@pytest.mark.parametrize("spec", ["{{ [q, zz] }}", "{{ {'k': zz} }}", "Q: {{ [q, zz] }}", "{{ q ~ zz }}"])
def test_a_missing_name_anywhere_is_an_error_naming_it(spec):
    err = fails([{"q": "x"}], doc_to_text=spec)
    assert (type(err), err.key, err.index) == (FieldError, "doc_to_text", 0)
    assert "zz" in str(err)


def test_user_template_errors_are_not_blamed_on_the_plugin(pm):
    for spec in [
        "{{ " + "(" * 3000 + "q" + ")" * 3000 + " }}",
        "{% for a in b %}" * 25 + "{% endfor %}" * 25,
        "{{ q|nosuch }}",
    ]:
        with pytest.raises(FieldError) as info:
            pm.extractor(spec, "doc_to_text")
        assert not isinstance(info.value, PluginError)
        assert info.value.key == "doc_to_text"
        assert "builtin-fields" not in str(info.value)


def test_a_plugin_bug_is_reported_with_its_key():
    class Broken:
        def format(self, sample, shots):
            raise ZeroDivisionError("boom")

    class Plugin:
        @hookimpl
        def format_prompt(self):
            return {"broken": lambda options, settings: Broken()}

    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("broken-style", Plugin())])
    with pytest.raises(RenderError) as info:
        list(load_task({"data": {"test": [{"q": "x"}]}, "doc_to_text": "q", "template": "broken"}, plugins=pm).render())
    err = info.value
    assert (err.key, err.index) == ("template", 0)
    assert "format_prompt 'broken'" in str(err) and "ZeroDivisionError" in str(err)


def test_long_values_are_cut_in_messages():
    spec = "{{ q.nope }}" + "x" * 10_000
    with pytest.raises(FieldError) as info:
        compile_field(spec, "doc_to_text")({"q": "a"})
    message = str(info.value)
    assert len(message) < 1000 and "10,012 characters" in message
    assert cut("y" * 500) == repr("y" * 80) + "… (500 characters)"
    assert "items" in cut(list(range(1000)))


def test_every_message_is_bounded():
    err = PromptStyleError("x" * 100_000, key="k")
    assert len(str(err)) < 2500 and "characters cut" in str(err)


def test_data_files_too_deep_or_with_too_long_integers(tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"q": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    big = tmp_path / "big.json"
    big.write_text('[{"q": ' + "9" * 5000 + "}]")
    for path in (deep, big):
        with pytest.raises(DataError) as info:
            list(load_task({"data": {"test": str(path)}, "doc_to_text": "q"}).render())
        assert "cannot be read" in str(info.value)


def test_json_lines_escape_line_separators_and_lone_surrogates():
    value = {"t": "a\u2028b\u2029c\x85d\ud800e\udfff", "n": [1, "\U0001f600"]}
    line = dumps_line(value)
    assert json.loads(line) == value
    assert line.encode("utf-8")  # valid UTF-8
    assert len(line.splitlines()) == 1
    assert "\\u2028" in line and "\\ud800" in line


def _write(tmp_path, records, task="data: {test: t.jsonl}\ndoc_to_text: q\ndoc_to_target: a\n"):
    with (tmp_path / "t.jsonl").open("w") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")  # ASCII: surrogates as \\u escapes
    (tmp_path / "t.yaml").write_text(task)
    return tmp_path / "t.yaml"


def test_cli_jsonl_carries_any_text(tmp_path, capsys):
    values = ["\ud800 lone", "x\u2028y", "\U0001f600", "nul\x00", "{{ 7*7 }}"]
    path = _write(tmp_path, [{"q": v, "a": v} for v in values])
    assert main(["render", str(path), "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["text"] for line in lines] == values
    assert [json.loads(line)["target"] for line in lines] == values


def test_cli_text_output_escapes_what_utf8_cannot_hold(tmp_path):
    path = _write(tmp_path, [{"q": "a\ud800b", "a": "x"}])
    proc = subprocess.run([sys.executable, "-m", "prompt_style", "render", str(path)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"a\\ud800b" in proc.stdout
    proc.stdout.decode("utf-8")


def test_cli_jsonl_targets_that_json_cannot_hold(tmp_path, capsys):
    path = _write(
        tmp_path,
        [{"q": "x", "d": {"k": 1}}],
        "data: {test: t.jsonl}\ndoc_to_text: q\ndoc_to_target: '{{ d.items() }}'\n",
    )
    assert main(["render", str(path), "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == [["k", 1]]


def test_cli_errors_are_one_line(tmp_path, capsys):
    path = _write(tmp_path, [{"q": "x", "a": "y"}], 'data: {test: t.jsonl}\ndoc_to_text: "{{ q\n  | nosuch }}"\n')
    assert main(["render", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("prompt-style: error: ")


def test_template_option_on_a_prompt_style_task_is_an_error(tmp_path, capsys):
    path = _write(tmp_path, [{"q": "x", "a": "y"}])
    assert main(["render", str(path), "--template", "2"]) == 2
    assert "--template" in capsys.readouterr().err
