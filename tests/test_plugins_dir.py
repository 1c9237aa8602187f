"""Plugins from folders of ``*.py`` files: ``--plugins-dir``, ``PROMPT_STYLE_PLUGINS_DIR``, ``plugins_dir=``."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import prompt_style
from prompt_style import PluginError, PluginLoadWarning, create_plugin_manager, load_task
from prompt_style.cli import main

ROOT = Path(__file__).resolve().parents[1]
MMLU = str(ROOT / "examples" / "mmlu" / "task.yaml")

SHOUT = """
from dataclasses import dataclass

from prompt_style import QAStyle, check_options, hookimpl


@dataclass
class Shout(QAStyle):
    suffix: str = "ANSWER:"

    def question_text(self, sample):
        listed = [f"{chr(65 + i)}. {c}" for i, c in enumerate(sample.choices)]
        return "\\n".join([str(sample.question), *listed, self.suffix]).upper()

    def answers(self, sample):
        return tuple(chr(65 + i) for i in range(len(sample.choices)))


def shout(*, options, settings):
    return check_options(Shout, options, what="style 'mcq::shout'", settings=settings)


@hookimpl
def format_prompt():
    return {"mcq::shout": shout}
"""

BROKEN = 'raise RuntimeError("boom at import time")\n'

FIELDS = {"doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"}
RECORD = {"question": "Which is red?", "choices": ["sky", "blood"], "answer": 1}


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "plugins"
    path.mkdir()
    (path / "shout.py").write_text(SHOUT, encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def row(manager, name):
    [found] = [r for r in manager.describe() if r["name"] == name]
    return found


def test_a_plugin_file_is_loaded_and_named_after_its_file(folder):
    manager = create_plugin_manager(entry_points=False, environ={}, plugins_dir=folder)
    provider = manager.resolve("format_prompt", "mcq::shout")
    assert provider.plugin.name == "shout"
    assert provider.plugin.path == str(folder / "shout.py")
    assert provider.plugin.distribution is None
    assert provider.plugin.label() == f"'shout' ({folder / 'shout.py'})"
    described = row(manager, "shout")
    assert described["path"] == str(folder / "shout.py")
    assert described["module"] == "prompt_style._dir_plugins.shout"
    assert described["hooks"] == {"format_prompt": ["mcq::shout"]}
    [out] = prompt_style.render_records([RECORD], plugins=manager, template="mcq::shout", **FIELDS)
    assert out.text == "WHICH IS RED?\nA. SKY\nB. BLOOD\nANSWER:"


def test_folders_from_the_environment_pathsep_separated(tmp_path, folder):
    other = tmp_path / "more"
    other.mkdir()
    (other / "quiet.py").write_text(SHOUT.replace("shout", "quiet").replace("upper", "lower"), encoding="utf-8")
    environ = {"PROMPT_STYLE_PLUGINS_DIR": os.pathsep.join([str(folder), str(other)])}
    manager = create_plugin_manager(entry_points=False, environ=environ)
    assert {"mcq::shout", "mcq::quiet"} <= set(manager.names("format_prompt"))
    # plugins_dir= and the variable add up; a folder named twice loads once
    both = create_plugin_manager(entry_points=False, environ=environ, plugins_dir=[folder])
    assert [p.name for p in both.plugins if p.path] == ["shout", "quiet"]


def test_helpers_and_other_files_are_not_plugins(folder):
    (folder / "_helpers.py").write_text(BROKEN, encoding="utf-8")
    (folder / ".hidden.py").write_text(BROKEN, encoding="utf-8")
    (folder / "notes.txt").write_text("not python", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.py").write_text(BROKEN, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        manager = create_plugin_manager(entry_points=False, environ={}, plugins_dir=folder)
    assert [p.name for p in manager.plugins if p.path] == ["shout"]


def test_a_broken_file_is_reported_by_name_and_the_others_load(folder):
    (folder / "broken.py").write_text(BROKEN, encoding="utf-8")
    (folder / "syntax.py").write_text("def (:\n", encoding="utf-8")
    with pytest.warns(PluginLoadWarning) as caught:
        manager = create_plugin_manager(entry_points=False, environ={}, plugins_dir=folder)
    messages = [str(w.message) for w in caught]
    assert any("'broken'" in m and "boom at import time" in m for m in messages)
    assert any("'syntax'" in m and "SyntaxError" in m for m in messages)
    assert row(manager, "broken")["status"] == "broken"
    assert "mcq::shout" in manager.names("format_prompt")


def test_disable_and_allow_lists_apply(folder):
    blocked = create_plugin_manager(entry_points=False, environ={"PROMPT_STYLE_DISABLE": "shout"}, plugins_dir=folder)
    assert row(blocked, "shout")["status"] == "blocked"
    assert "mcq::shout" not in blocked.names("format_prompt")
    skipped = create_plugin_manager(entry_points=False, environ={"PROMPT_STYLE_PLUGINS": "other"}, plugins_dir=folder)
    assert row(skipped, "shout")["status"] == "skipped"
    allowed = create_plugin_manager(entry_points=False, environ={"PROMPT_STYLE_PLUGINS": "shout"}, plugins_dir=folder)
    assert "mcq::shout" in allowed.names("format_prompt")


def test_a_name_taken_by_an_installed_plugin_is_broken_not_a_replacement(folder):
    (folder / "mmlu.py").write_text(SHOUT.replace("mcq::shout", "mcq::other"), encoding="utf-8")
    with pytest.warns(PluginLoadWarning, match="already taken"):
        manager = create_plugin_manager(environ={}, plugins_dir=folder)
    assert manager.resolve("format_prompt", "mcq::mmlu").plugin.distribution == "prompt-style-mmlu"
    assert "mcq::other" not in manager.names("format_prompt")


@pytest.mark.parametrize("make", ["missing", "file"])
def test_a_folder_that_is_not_one_is_an_error(tmp_path, make):
    path = tmp_path / "nope"
    if make == "file":
        path.write_text("", encoding="utf-8")
    with pytest.raises(PluginError, match="plugins folder .* (does not exist|is not a folder)") as caught:
        create_plugin_manager(environ={}, plugins_dir=path)
    assert caught.value.key == "plugins_dir"
    with pytest.raises(PluginError) as caught:
        create_plugin_manager(environ={"PROMPT_STYLE_PLUGINS_DIR": str(path)})
    assert caught.value.key == "PROMPT_STYLE_PLUGINS_DIR"


def test_an_edited_file_is_loaded_again_by_the_next_manager(folder):
    first = create_plugin_manager(entry_points=False, environ={}, plugins_dir=folder)
    assert first.names("format_prompt").count("mcq::shout") == 1
    path = folder / "shout.py"
    time.sleep(0.01)
    path.write_text(SHOUT.replace("mcq::shout", "mcq::yell"), encoding="utf-8")
    os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    second = create_plugin_manager(entry_points=False, environ={}, plugins_dir=folder)
    assert "mcq::yell" in second.names("format_prompt")


def test_the_renderer_unpickles_in_a_fresh_process_with_the_same_environment(folder, monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_PLUGINS_DIR", str(folder))
    manager = create_plugin_manager(entry_points=False)
    task = load_task({**FIELDS, "data": {"test": [RECORD]}, "template": "mcq::shout"}, plugins=manager)
    blob = pickle.dumps(task.renderer)
    code = (
        "import pickle, sys, json\n"
        "renderer = pickle.loads(sys.stdin.buffer.read())\n"
        f"print(json.dumps(renderer.render({RECORD!r}, 0).text))\n"
    )
    env = {**os.environ, "PROMPT_STYLE_PLUGINS_DIR": str(folder)}
    done = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == "WHICH IS RED?\nA. SKY\nB. BLOOD\nANSWER:"


# -- the command line -----------------------------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_cli_plugins_lists_a_folder_plugin_marked_as_such(capsys, folder, where):
    argv = ["--plugins-dir", str(folder), "plugins"] if where == "before" else ["plugins", "--plugins-dir", str(folder)]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    [line] = [line for line in out.splitlines() if line.startswith("shout\t")]
    assert line == f"shout\t(plugins-dir) {folder / 'shout.py'}\t-\tformat_prompt: mcq::shout"
    assert "PROMPT_STYLE_PLUGINS_DIR" not in os.environ  # restored after an in-process run


def test_cli_render_with_a_folder_plugin(capsys, folder):
    code, out, err = run(
        capsys, "render", MMLU, "--style", "mcq::shout", "--limit", "1", "--shots", "0", "--plugins-dir", str(folder)
    )
    assert code == 0, err
    assert "WHAT IS THE VALUE OF 7 × 8?\nA. 54" in out and out.rstrip().endswith("ANSWER:")


def test_cli_several_folders_and_the_variable(capsys, folder, tmp_path, monkeypatch):
    other = tmp_path / "more"
    other.mkdir()
    (other / "quiet.py").write_text(SHOUT.replace("shout", "quiet"), encoding="utf-8")
    third = tmp_path / "third"
    third.mkdir()
    (third / "calm.py").write_text(SHOUT.replace("shout", "calm"), encoding="utf-8")
    monkeypatch.setenv("PROMPT_STYLE_PLUGINS_DIR", str(third))
    code, out, err = run(capsys, "--plugins-dir", str(folder), "plugins", "--plugins-dir", str(other))
    assert code == 0, err
    names = [line.split("\t")[0] for line in out.splitlines()]
    assert names[-3:] == ["shout", "quiet", "calm"]
    assert os.environ["PROMPT_STYLE_PLUGINS_DIR"] == str(third)


def test_cli_broken_folder_plugin_is_listed(capsys, folder):
    (folder / "broken.py").write_text(BROKEN, encoding="utf-8")
    code, out, err = run(capsys, "plugins", "--plugins-dir", str(folder))
    assert "broken\t(plugins-dir) " in out and "BROKEN: import failed: RuntimeError: boom at import time" in out
    assert "shout\t" in out
    assert "'broken'" in err


@pytest.mark.parametrize("command", [["plugins"], ["convert", "promptsource", "x.yaml", "--out", "o"]])
def test_cli_missing_folder_is_one_error_line(capsys, tmp_path, command):
    code, out, err = run(capsys, "--plugins-dir", str(tmp_path / "nope"), *command)
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("prompt-style: error: --plugins-dir: plugins folder ")
    assert "does not exist" in line
