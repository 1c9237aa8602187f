"""Errors and output: one printable line of at most 2,000 characters, never a traceback,
never Python's internals; JSON Lines valid JSON whatever the numbers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from prompt_style import PromptStyleError, render_records
from prompt_style.cli import main
from prompt_style.errors import one_line

TASK = "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: a\n"
CHAT = ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"]
INTERNALS = re.compile(r"0x[0-9a-fA-F]{6,}|<(?:function|built-in|bound method|class|module) ")


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "test.jsonl").write_text('{"q": "x", "a": "y"}\n')
    (tmp_path / "task.yaml").write_text(TASK)
    (tmp_path / "conversation.json").write_text('[{"role": "user", "content": "hi"}]')
    return tmp_path


def cli(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # a usage error
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code: int, err: str) -> str:
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("prompt-style: error: "), err
    line = lines[0]
    assert len(line) <= 2000 and line.isprintable() and not INTERNALS.search(line), line
    return line


def test_one_line_escapes_every_control_character_and_names_internals():
    assert one_line("a\x1b[2J\rb\u2028c\u202ed\x00e\x7f\nf\tg") == "a\\x1b[2J\\rb\\u2028c\\u202ed\\x00e\\x7f\\nf\\tg"
    assert one_line("no element <function _range at 0x7f9308f77ce0>") == "no element the function 'range'"
    assert one_line("<built-in method upper of str object at 0x7fb4d3efdd20> is not in list") == (
        "the method 'upper' is not in list"
    )
    assert one_line("<class 'jinja2.utils.Cycler'>, <jinja2.utils.Cycler object at 0x7f00aa>") == (
        "the class 'Cycler', a Cycler object"
    )
    long = one_line("9" * 5093)
    assert len(long) == 2000 and "[…3,093 of 5,093 characters cut…]" in long
    assert long.startswith("999") and long.endswith("999")
    assert len(one_line("\x1b" * 100_000)) == 2000


def test_every_error_of_the_python_api_is_one_bounded_line():
    err = PromptStyleError("m" * 3000 + "\r\x1b", file="f" * 500, key="k\u2028", hint="h" * 500)
    text = str(err)
    assert len(text) <= 2000 and text.isprintable()


@pytest.mark.parametrize(
    "files, argv",
    [
        ({"task.yaml": TASK + '"bad\\e[31mkey\\r\\u2028": 1\n'}, ["render", "task.yaml"]),
        ({}, ["render", "no\x1b[31mpe\r\u2028.yaml"]),
        (
            {
                "task.yaml": TASK.replace("doc_to_text: q", "doc_to_text: zz"),
                "test.jsonl": '{"q\\u001b[2J\\r\\u2028": 1}\n',
            },
            ["render", "task.yaml"],
        ),
        ({"chat.jinja": "{{ raise_exception('a\\x1b[2J\\rb\\u2028c\\u202ed\\x00e') }}"}, CHAT),
        ({"chat.jinja": "{{ raise_exception(cycler) }}"}, CHAT),
        ({"chat.jinja": "{{ raise_exception(messages[0].content.upper) }}"}, CHAT),
        ({"task.yaml": TASK.replace("doc_to_text: q", "doc_to_text: '{{ {}[range] }}'")}, ["render", "task.yaml"]),
        (
            {"task.yaml": TASK.replace("doc_to_text: q", "doc_to_text: '{{ [1].index(q.upper) }}'")},
            ["render", "task.yaml"],
        ),
        (
            {"task.yaml": TASK.replace("doc_to_text: q", "doc_to_text: '{{ q.upper(cycler) }}'")},
            ["render", "task.yaml"],
        ),
        ({}, ["render", "task.yaml", "--seed", "9" * 5000]),
        ({}, ["render", "task.yaml", "--limit", "9" * 5000]),
        ({}, ["render", "x" * 3000 + ".yaml"]),
        ({"task.yaml": TASK + "k" * 5000 + ": 1\n"}, ["render", "task.yaml"]),
        (
            {"task.yaml": "task: t\ndataset_path: json\n" + "".join(f"bad{i}: '{'y' * 100}'\n" for i in range(100))},
            ["render", "task.yaml", "--data", "test=test.jsonl"],
        ),
        ({}, ["render", "task.yaml", "--jobs", "99999999"]),
    ],
)
def test_errors_are_one_printable_line_without_internals(here, capsys, files, argv):
    for name, text in files.items():
        (here / name).write_text(text)
    one_error(*cli(capsys, *argv)[::2])


def test_a_limit_larger_than_any_count_renders_everything(here, capsys):
    code, out, err = cli(capsys, "render", "task.yaml", "--limit", "99999999999999999999")
    assert code == 0 and out.startswith("=== record 0") and not err


@pytest.mark.parametrize("command", ["instantiate", "convert", "export"])
@pytest.mark.parametrize("where", ["/proc/x", "task.yaml", "/dev/null/x", "a\x00b"])
def test_an_output_that_cannot_be_made_is_one_line(here, capsys, command, where):
    (here / "tt.yaml").write_text(
        "name: tt\ndata_dir: tt\nmetadata: {task: qa.abstractive, domains: [misc], source_type: single_source,"
        " input_context: paragraph, output_context: sentence, contributor: tests}\n"
        "templates:\n  0: {name: t, jinja: '{{ q }} ||| {{ a }}', evaluate: true}\n"
    )
    (here / "data" / "processed" / "tt").mkdir(parents=True)
    (here / "data" / "processed" / "tt" / "test.jsonl").write_text('{"q": "x", "a": "y"}\n')
    (here / "templates.yaml").write_text(
        "dataset: d\ntemplates:\n  abc-1: !Template\n    answer_choices: null\n    id: abc-1\n"
        "    jinja: '{{ q }} ||| {{ a }}'\n    metadata: !TemplateMetadata\n      choices_in_prompt: false\n"
        "      metrics: [Accuracy]\n      original_task: true\n    name: t\n    reference: ''\n"
    )
    source = {"instantiate": ["tt.yaml"], "convert": ["promptsource", "templates.yaml"], "export": ["x", "task.yaml"]}
    one_error(*cli(capsys, command, *source[command], "--out", where)[::2])


def test_closed_or_full_output_is_one_line(here, capsys, monkeypatch):
    original = sys.stdout
    monkeypatch.setattr(sys, "stdout", None)
    code, _, err = cli(capsys, "render", "task.yaml")
    assert "standard output is closed" in one_error(code, err)
    monkeypatch.setattr(sys, "stdout", original)
    full = open("/dev/full", "w", encoding="utf-8") if os.path.exists("/dev/full") else None
    if full is not None:
        monkeypatch.setattr(sys, "stdout", full)
        code = main(["render", "task.yaml"])
        err = capsys.readouterr().err
        assert "No space left on device" in one_error(code, err)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full")
@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_the_console_script_with_closed_or_full_output(here, redirect):
    command = f"{sys.executable} -m prompt_style render task.yaml {redirect}"
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_nan_and_infinity_write_valid_json_lines(here, capsys):
    (here / "test.jsonl").write_text('{"q": "x", "a": NaN}\n{"q": "y", "a": Infinity}\n{"q": "z", "a": -Infinity}\n')
    code, out, _ = cli(capsys, "render", "task.yaml", "--format", "jsonl")
    rows = [
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} is not JSON")) for line in out.splitlines()
    ]
    assert code == 0 and [row["target"] for row in rows] == [None, None, None]
    (here / "task.yaml").write_text(
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: [.inf, .nan, -.inf, 1.50]\ndoc_to_target: 0\n"
    )
    code, out, _ = cli(capsys, "render", "task.yaml", "--format", "jsonl")
    assert json.loads(out.splitlines()[0])["continuations"] == [" .inf", " .nan", " -.inf", " 1.50"]  # as written


def test_nan_record_values_print_as_python_prints_them():
    assert render_records([{"q": float("nan"), "a": "x"}], doc_to_text="{{ q }}", doc_to_target="a")[0].text == "nan"


def test_a_bug_is_one_line_without_debug(here, capsys, monkeypatch):
    import prompt_style.cli.render as render_command

    def broken(args, out):
        raise KeyError("boom")

    monkeypatch.setattr(render_command, "run", broken)
    line = one_error(*cli(capsys, "render", "task.yaml")[::2])
    assert "internal error: KeyError" in line
    assert main(["--debug", "render", "task.yaml"]) == 2  # the traceback, then the line
    err = capsys.readouterr().err
    assert "Traceback" in err and err.rstrip().splitlines()[-1].startswith("prompt-style: error: internal error")
