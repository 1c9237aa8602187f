"""``render --output FILE``: written whole or not at all, with a progress bar only on a
terminal; ``--example NAME``: the example tasks plugins ship."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

import prompt_style.plugins
from prompt_style.cli import _output, main

ROOT = Path(__file__).resolve().parents[1]
MMLU = str(ROOT / "examples" / "mmlu" / "task.yaml")
RECORDS = [{"q": f"Q{i}", "c": ["a", "b"], "a": i % 2} for i in range(5)]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_output_writes_the_file_and_nothing_to_stdout(capsys, tmp_path):
    target = tmp_path / "out.jsonl"
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl", "--output", target)
    assert code == 0, err
    assert out == "" and err == ""  # not a terminal: no progress bar
    assert len(target.read_text(encoding="utf-8").splitlines()) == 24
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temporary file left


def test_output_equals_stdout(capsys, tmp_path):
    target = tmp_path / "out.txt"
    run(capsys, "render", MMLU, "--output", target, "--limit", "3")
    _, out, _ = run(capsys, "render", MMLU, "--limit", "3")
    assert target.read_text(encoding="utf-8") == out


def test_a_bad_record_midway_leaves_no_file_and_keeps_the_old_one(capsys, tmp_path, make_task):
    records = [*RECORDS[:3], {"q": None, "c": ["a"], "a": 0}, *RECORDS[3:]]
    task = make_task({"test": records}, doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq")
    target = tmp_path / "out.jsonl"
    code, out, err = run(capsys, "render", task, "--format", "jsonl", "-o", target)
    assert code == 2 and "record 3" in err
    assert not target.exists()
    assert not any(p.name.startswith(".out.jsonl") for p in tmp_path.iterdir())
    target.write_text("earlier run\n", encoding="utf-8")
    os.chmod(target, 0o640)
    code, out, err = run(capsys, "render", task, "--format", "jsonl", "-o", target)
    assert code == 2
    assert target.read_text(encoding="utf-8") == "earlier run\n"
    good = make_task({"test": RECORDS}, doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq")
    assert run(capsys, "render", good, "--format", "jsonl", "-o", target)[0] == 0
    assert len(target.read_text(encoding="utf-8").splitlines()) == 5
    assert os.stat(target).st_mode & 0o777 == 0o640  # the file keeps its mode


def test_an_unwritable_output_is_one_error_line(capsys, tmp_path):
    code, out, err = run(capsys, "render", MMLU, "-o", tmp_path / "no" / "such" / "dir" / "out.jsonl")
    assert code == 2 and len(err.splitlines()) == 1 and "cannot write the output" in err


def test_output_dash_is_stdout(capsys):
    code, out, err = run(capsys, "render", MMLU, "--limit", "1", "-o", "-")
    assert code == 0 and out.startswith("=== record 0")


def test_progress_bar_only_on_a_terminal(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(_output.sys, "stderr", Tty())
    monkeypatch.setattr(_output.sys, "stdout", io.StringIO())
    assert _output.show_progress(False, to_file=True)
    assert _output.show_progress(False, to_file=False)  # stdout piped, stderr a terminal
    assert not _output.show_progress(True, to_file=True)  # --no-progress
    monkeypatch.setattr(_output.sys, "stdout", Tty())
    assert not _output.show_progress(False, to_file=False)  # the prompts are what the terminal shows
    monkeypatch.setattr(_output.sys, "stderr", io.StringIO())
    assert not _output.show_progress(False, to_file=True)  # stderr piped: silent


def test_progress_bar_draws_the_record_count(monkeypatch, tmp_path, capsys):
    stderr = Tty()
    monkeypatch.setattr(_output.sys, "stderr", stderr)
    code = main(["render", MMLU, "--format", "jsonl", "--output", str(tmp_path / "out.jsonl")])
    assert code == 0
    drawn = stderr.getvalue()
    assert "mmlu_example" in drawn and "24/24" in drawn and drawn.endswith("\n")


# -- --example ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "repository_copy"), [("mmlu", "mmlu"), ("gpqa", "gpqa"), ("arc", "arc")])
def test_examples_render_as_the_repository_copies(capsys, name, repository_copy):
    code, out, err = run(capsys, "render", "--example", name, "--format", "jsonl")
    assert code == 0, err
    _, expected, _ = run(capsys, "render", ROOT / "examples" / repository_copy / "task.yaml", "--format", "jsonl")
    assert out == expected  # fingerprints included: no line holds the task file's path
    assert len(out.splitlines()) == len([json.loads(line) for line in out.splitlines()]) > 0


@pytest.mark.parametrize(
    ("plugin", "name", "copy"),
    [("mmlu", "mmlu", "mmlu"), ("gpqa", "gpqa", "gpqa"), ("cloze", "arc", "arc")],
)
def test_shipped_examples_are_the_repository_examples(plugin, name, copy):
    # the wheel's copy (package data) and examples/ must never drift apart
    shipped = ROOT / "plugins" / plugin / "src" / f"prompt_style_{plugin}" / "example"
    source = ROOT / "examples" / copy
    files = sorted(p.relative_to(shipped) for p in shipped.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    for relative in files:
        assert (shipped / relative).read_bytes() == (source / relative).read_bytes(), relative


def test_example_usage_errors(capsys):
    for argv in (["render"], ["render", MMLU, "--example", "mmlu"]):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 2
        assert "--example" in capsys.readouterr().err


def test_an_unknown_or_missing_example_says_what_to_install(capsys, monkeypatch):
    code, out, err = run(capsys, "render", "--example", "mmlx")
    assert code == 2 and "--example: unknown example 'mmlx' (did you mean 'mmlu'?)" in err
    monkeypatch.setenv("PROMPT_STYLE_PLUGINS", "numbered")
    monkeypatch.setattr(prompt_style.plugins, "_default_manager", None)  # read the environment again
    code, out, err = run(capsys, "render", "--example", "gpqa")
    assert code == 2 and "prompt-style-gpqa" in err


def test_a_plugin_can_ship_an_example(capsys, fake_dists, tmp_path, jsonl):
    folder = tmp_path / "shipped"
    jsonl(folder / "test.jsonl", [{"q": "shipped?", "c": ["yes", "no"], "a": 0}])
    (folder / "task.yaml").write_text(
        "task: mine\ndata: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: a\ntemplate: mcq\n",
        encoding="utf-8",
    )
    source = f"import prompt_style\n@prompt_style.hookimpl\ndef task_examples():\n    return {{'mine': {str(folder / 'task.yaml')!r}}}\n"
    fake_dists.add("fake-examples", "fakeexamples", source)
    code, out, err = run(capsys, "render", "--example", "mine")
    assert code == 0, err
    assert "shipped?" in out


def test_a_plugin_whose_example_is_not_a_path_is_broken(capsys, fake_dists):
    source = "import prompt_style\n@prompt_style.hookimpl\ndef task_examples():\n    return {'bad': 3}\n"
    fake_dists.add("fake-bad-example", "fakebadexample", source)
    code, out, err = run(capsys, "plugins")
    assert code == 1 and "task file paths" in out


class ShipsAnExample:
    """A plugin object (as a harness registers its own) that ships an example."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @prompt_style.hookimpl
    def task_examples(self):
        return {"mine": self.path}


def test_task_examples_from_a_registered_plugin_object(tmp_path, jsonl):
    jsonl(tmp_path / "test.jsonl", [{"q": "from an object?", "c": ["yes", "no"], "a": 0}])
    task = tmp_path / "task.yaml"
    task.write_text("data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: a\n", encoding="utf-8")
    pm = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("ships", ShipsAnExample(task))])
    provider = pm.resolve("task_examples", "mine")
    assert provider.factory == task and provider.plugin.name == "ships"
    [prompt] = prompt_style.load_task(os.fspath(provider.factory), plugins=pm).render()
    assert prompt.text == "from an object?"


def test_output_to_a_device_writes_it_and_never_replaces_it(capsys, tmp_path):
    """``-o /dev/null`` (or ``/dev/stdout``): written as the shell's ``>`` writes it. A
    file renamed over it would replace the device itself."""
    before = os.stat("/dev/null")
    if not stat.S_ISCHR(before.st_mode):
        pytest.skip("/dev/null is not a device on this machine")
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl", "-o", "/dev/null")
    assert code == 0, err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert not [p for p in os.listdir("/dev") if p.startswith(".null.")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_output_to_a_named_pipe_reaches_its_reader(capsys, tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "3", "-o", fifo)
    reader.join(10)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the pipe
    assert len(got) == 1 and len(got[0].splitlines()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_output_through_a_symbolic_link_replaces_the_file_it_names(capsys, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "out.jsonl").write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real / "out.jsonl")
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "2", "-o", link)
    assert code == 0, err
    assert link.is_symlink() and len((real / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    assert sorted(p.name for p in real.iterdir()) == ["out.jsonl"]


def test_output_to_a_directory_is_one_error_line_before_any_work(capsys, tmp_path):
    code, out, err = run(capsys, "render", MMLU, "-o", tmp_path)
    assert code == 2 and len(err.splitlines()) == 1 and "it is a directory" in err


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout here")
def test_output_to_dev_stdout_through_a_pipe(tmp_path):
    import subprocess
    import sys

    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "prompt_style",
            "render",
            MMLU,
            "--format",
            "jsonl",
            "--limit",
            "3",
            "-o",
            "/dev/stdout",
        ],
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert len(made.stdout.splitlines()) == 3 and os.path.islink("/dev/stdout")
