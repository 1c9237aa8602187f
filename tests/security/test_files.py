"""Files a task names: regular files only (a FIFO or a device is refused, never waited
on), includes bounded in number and bytes, JSON Lines read in linear time with a
line-size limit, JSON task files with the YAML loader's budgets."""

from __future__ import annotations

import json
import os

import pytest

from prompt_style import DataError, PromptStyleError, TaskFileError, YamlLimitError, load_task, read_text_file
from prompt_style.cli import main
from prompt_style.safe import limits as L
from prompt_style.safe.yaml_loader import load_yaml

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")

TASK = "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: a\n"
LM = "task: t\ndataset_path: json\noutput_type: generate_until\ndoc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n"


@pytest.fixture(autouse=True)
def _fresh_limits(monkeypatch):
    monkeypatch.delenv(L.ENV_LIMITS, raising=False)
    L.configure()
    yield
    L.configure()


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "test.jsonl").write_text('{"q": "x", "a": "y"}\n')
    (tmp_path / "task.yaml").write_text(TASK)
    (tmp_path / "conversation.json").write_text('[{"role": "user", "content": "hi"}]')
    (tmp_path / "chat.jinja").write_text("{{ messages[0].content }}")
    os.mkfifo(tmp_path / "pipe")
    return tmp_path


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "pipe"],
        ["render", "/dev/zero"],
        ["render", "task.yaml", "--data", "test=pipe.jsonl"],
        ["render", "task.yaml", "--meta", "pipe.yaml"],
        ["render", "task.yaml", "--replies", "pipe"],
        ["chat", "pipe", "--meta", "hf", "--meta-option", "template=chat.jinja"],
        ["chat", "/dev/zero", "--meta", "hf", "--meta-option", "template=chat.jinja"],
        ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=pipe"],
        ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=/dev/zero"],
    ],
)
def test_a_fifo_or_a_device_is_refused_not_waited_on(here, capsys, argv):
    for name in ("pipe.jsonl", "pipe.yaml"):
        os.mkfifo(here / name)
    code, _, err = cli(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "regular file" in err or "not found" in err or "unsupported" in err, err


def test_read_text_file_refuses_what_is_not_a_regular_file(here):
    with pytest.raises(PromptStyleError, match="not a regular file"):
        read_text_file(here / "pipe")
    with pytest.raises(PromptStyleError, match="is a directory"):
        read_text_file(here)
    with pytest.raises(PromptStyleError, match="NUL"):
        read_text_file("a\0b")
    (here / "loop1").symlink_to("loop2")
    (here / "loop2").symlink_to("loop1")
    with pytest.raises(PromptStyleError, match="cannot read"):
        read_text_file(here / "loop1")
    with pytest.raises(YamlLimitError):
        read_text_file(here / "test.jsonl", max_bytes=5)


def test_includes_are_bounded_in_files_and_bytes(here):
    # six files, each including the next 40 times: 10**8 reads, stopped at max_task_files
    (here / "t.yaml").write_text(LM + "include: [" + ", ".join(["inc1.yaml"] * 40) + "]\n")
    for level in range(1, 6):
        (here / f"inc{level}.yaml").write_text("include: [" + ", ".join([f"inc{level + 1}.yaml"] * 40) + "]\nx: 1\n")
    (here / "inc6.yaml").write_text("x: 1\n")
    with pytest.raises(YamlLimitError) as info:
        load_task(here / "t.yaml", data={"test": "test.jsonl"})
    assert info.value.limit == "max_task_files"
    (here / "big.yaml").write_text("metadata: {note: '" + "x" * 1_000_000 + "'}\n")
    (here / "b.yaml").write_text(LM + "include: [" + ", ".join(["big.yaml"] * 100) + "]\n")
    with pytest.raises(YamlLimitError) as info:
        load_task(here / "b.yaml", data={"test": "test.jsonl"})
    assert info.value.limit == "max_task_bytes"
    (here / "c.yaml").write_text(LM + "include: [big.yaml, big.yaml]\n")
    assert load_task(here / "c.yaml", data={"test": "test.jsonl"})


@pytest.mark.parametrize(
    "include, message",
    [("loop1.yaml", "cannot be resolved"), ('"a\\0b.yaml"', "NUL"), ("pipe", "regular file"), ("/dev/zero", "regular")],
)
def test_bad_includes_are_typed_errors(here, capsys, include, message):
    (here / "loop1.yaml").symlink_to("loop2.yaml")
    (here / "loop2.yaml").symlink_to("loop1.yaml")
    (here / "t.yaml").write_text(LM + f"include: {include}\n")
    code, _, err = cli(capsys, "render", "t.yaml", "--data", "test=test.jsonl")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_json_lines_lines_are_bounded_and_read_in_linear_time(here):
    long_line = json.dumps({"q": "x" * 3_000_000, "a": "y"})
    (here / "long.jsonl").write_text('{"q": "first", "a": "y"}\n' + long_line + "\n")
    task = load_task({"data": {"test": "long.jsonl"}, "doc_to_text": "q", "doc_to_target": "a"})
    assert [len(r.text) for r in task.render()] == [5, 3_000_000]  # a block at a time, joined once
    L.configure(max_line_length=1_000_000)
    with pytest.raises(DataError, match="longer than 1,000,000 characters") as info:
        list(load_task({"data": {"test": "long.jsonl"}, "doc_to_text": "q", "doc_to_target": "a"}).render())
    assert info.value.line == 2
    with open(here / "sparse.jsonl", "wb") as handle:  # 2 GB of one line, stopped at the limit
        handle.write(b'{"q": "')
        handle.truncate(2_000_000_000)
    with pytest.raises(DataError, match="longer than"):
        list(load_task({"data": {"test": "sparse.jsonl"}, "doc_to_text": "q", "doc_to_target": "a"}).render())


def test_json_task_files_have_the_yaml_budgets(here):
    # Surrogate-pair escapes make libyaml refuse the file: json.loads reads it, within the same budgets.
    deep = '{"x": "\\ud83d\\ude00", "y": ' + "[" * 150 + "]" * 150 + "}"
    (here / "deep.json").write_text(deep)
    with pytest.raises(YamlLimitError) as info:
        load_yaml(here / "deep.json")
    assert info.value.limit == "max_depth"
    wide = '{"x": "\\ud83d\\ude00", "y": [' + ", ".join(["1"] * 200_000) + "]}"
    (here / "wide.json").write_text(wide)
    with pytest.raises(YamlLimitError) as info:
        load_yaml(here / "wide.json")
    assert info.value.limit == "max_nodes"
    (here / "ok.json").write_text('{"x": "\\ud83d\\ude00", "y": [1, 2]}')
    assert load_yaml(here / "ok.json").data == {"x": "\U0001f600", "y": [1, 2]}


def test_missing_files_keep_their_messages(here):
    with pytest.raises(TaskFileError, match="not found"):
        load_yaml(here / "nope.yaml")


def test_task_texts_repeated_for_every_example_are_bounded(here):
    """A delimiter or a template's prefix is repeated with every few-shot example: a task
    file cannot make one prompt a gigabyte (no Jinja budget sees these joins)."""
    (here / "dev.jsonl").write_text("".join(json.dumps({"q": f"q{i}", "a": "x"}) + "\n" for i in range(300)))
    base = "data: {test: test.jsonl, dev: dev.jsonl}\nfewshot_split: dev\nnum_fewshot: 250\ndoc_to_text: q\n"
    for extra, key in [
        ("doc_to_target: a\nfewshot_delimiter: '" + "x" * 4_000_000 + "'\n", "fewshot_delimiter"),
        ("doc_to_target: a\ntarget_delimiter: '" + "x" * 20_000 + "'\n", "target_delimiter"),
        (
            "doc_to_choice: ['a', 'b']\ndoc_to_target: 0\ntemplate: {template_type: mcq, prefix: '"
            + "x" * 40_000
            + "'}\n",
            "num_fewshot",
        ),
    ]:
        (here / "t.yaml").write_text(base + extra)
        with pytest.raises(PromptStyleError) as info:
            load_task(here / "t.yaml")
        assert info.value.limit == "max_output" and info.value.key == key, str(info.value)
    (here / "t.yaml").write_text(base + "doc_to_target: a\nfewshot_delimiter: '\\n\\n###\\n\\n'\n")
    assert len(list(load_task(here / "t.yaml").render())) == 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_max_line_length_holds_below_a_block(tmp_path, capsys, jobs):
    """A max_line_length smaller than the reader's block still refuses a longer line
    (and a line of exactly the limit, its newline aside, is read), serial and parallel."""

    line = '{"question": "' + "x" * 200 + '", "answer": "a"}'
    (tmp_path / "test.jsonl").write_text(line + "\n", encoding="utf-8")
    (tmp_path / "task.yaml").write_text("data: {test: test.jsonl}\ndoc_to_text: question\ndoc_to_target: answer\n")
    task = str(tmp_path / "task.yaml")
    assert main(["render", task, "--budget", "max_line_length=100", "--jobs", jobs]) == 2
    assert "line is longer than 100 characters" in capsys.readouterr().err
    assert main(["render", task, "--budget", f"max_line_length={len(line)}", "--jobs", jobs]) == 0
