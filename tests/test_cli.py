"""The ``prompt-style`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_style.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MMLU = str(EXAMPLES / "mmlu" / "task.yaml")
ARC = str(EXAMPLES / "arc" / "task.yaml")
GPQA = str(EXAMPLES / "gpqa" / "task.yaml")
JSON_KEYS = ["index", "text", "messages", "continuations", "target"]

BROKEN_IMPORT = 'raise RuntimeError("boom at import time")\n'


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def jsonl(out: str) -> list[dict]:
    """The lines' prompt keys (their provenance keys, last on each line, are checked
    in tests/test_provenance.py)."""
    from prompt_style.provenance import PROVENANCE_KEYS

    lines = out.splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:
        assert list(row)[: len(JSON_KEYS)] == JSON_KEYS
        assert list(row)[-len(PROVENANCE_KEYS) :] == list(PROVENANCE_KEYS)
    return [{k: v for k, v in row.items() if k not in PROVENANCE_KEYS} for row in rows]


def assert_one_error_line(code, out, err):
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("prompt-style: error: ")
    assert "Traceback" not in err


def console_script() -> Path:
    for candidate in (Path(sys.executable).parent / "prompt-style", ROOT / ".venv" / "bin" / "prompt-style"):
        if candidate.exists():
            return candidate
    pytest.skip("the prompt-style console script is not installed")


def clean_env(**extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPT_STYLE_")}
    env.update(extra)
    return env


# -- plugins --------------------------------------------------------------------------


def test_plugins_lists_installed_plugins(capsys):
    code, out, err = run(capsys, "plugins")
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    names = {row[0]: row for row in rows}
    assert {"mmlu", "gpqa", "cloze", "chatml", "numbered"} <= set(names)
    assert "builtin-styles" not in names
    assert names["numbered"][1] == "prompt-style-numbered"
    assert "mcq::numbered" in names["numbered"][3]
    assert names["chatml"][1] == "prompt-style-chatml"
    assert names["chatml"][3] == "apply_meta_template: chatml"
    assert err == ""


def test_plugins_all_includes_builtins(capsys):
    code, out, err = run(capsys, "plugins", "--all")
    assert code == 0
    rows = {line.split("\t")[0]: line.split("\t") for line in out.splitlines()}
    for builtin in ("builtin-formats", "builtin-fields", "builtin-styles", "builtin-meta", "builtin-retrievers"):
        assert rows[builtin][1] == "prompt-style"
    assert "mcq" in rows["builtin-styles"][3] and "passthrough" in rows["builtin-styles"][3]
    assert "mmlu" in rows


def test_plugins_json(capsys):
    code, out, err = run(capsys, "plugins", "--json")
    assert code == 0
    rows = json.loads(out)
    assert isinstance(rows, list) and rows
    for row in rows:
        for key in ("distribution", "version", "hooks"):
            assert key in row
        assert isinstance(row["hooks"], dict)
    by_name = {row["name"]: row for row in rows}
    assert by_name["mmlu"]["distribution"] == "prompt-style-mmlu"
    assert by_name["mmlu"]["hooks"] == {
        "format_prompt": ["mcq::mmlu"],
        "declare_axes": ["mcq::mmlu"],
        "parse_answer": ["mcq::mmlu"],
        "task_examples": ["mmlu"],
    }
    assert by_name["chatml"]["hooks"] == {"apply_meta_template": ["chatml"]}
    assert "builtin-fields" not in by_name


def test_plugins_json_all(capsys):
    code, out, _ = run(capsys, "plugins", "--json", "--all")
    by_name = {row["name"]: row for row in json.loads(out)}
    assert by_name["builtin-retrievers"]["distribution"] == "prompt-style"
    assert by_name["builtin-retrievers"]["builtin"] is True
    assert by_name["builtin-retrievers"]["hooks"] == {
        "retrieve_examples": [
            "first_n",
            "fixed",
            "fixk",
            "opencompass_random",
            "random",
            "shared_random",
            "sliding_window",
            "zero",
        ]
    }


def test_plugins_respects_environment(capsys, monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_DISABLE", "gpqa")
    code, out, _ = run(capsys, "plugins", "--all", "--json")
    by_name = {row["name"]: row for row in json.loads(out)}
    assert by_name["gpqa"]["status"] == "blocked"
    monkeypatch.setenv("PROMPT_STYLE_PLUGINS", "")
    code, out, _ = run(capsys, "plugins")
    assert "mmlu" not in out


def test_plugins_lists_broken_plugin_with_its_error(capsys, fake_dists):
    fake_dists.add("fake-broken", "fakebroken", BROKEN_IMPORT, version="0.3")
    code, out, err = run(capsys, "plugins")
    assert code == 1  # the listing is complete; the installation is not
    line = next(line for line in out.splitlines() if line.startswith("fakebroken\t"))
    assert "fake-broken" in line and "0.3" in line
    assert "BROKEN" in line
    assert "boom at import time" in line
    assert "mmlu" in out  # the others are still listed
    assert "prompt-style: warning:" in err and "fakebroken" in err
    assert len([line for line in err.splitlines() if "fakebroken" in line]) == 1  # warned once

    code, out, err = run(capsys, "plugins", "--json")
    assert code == 1
    row = next(r for r in json.loads(out) if r["name"] == "fakebroken")
    assert row["status"] == "broken"
    assert row["distribution"] == "fake-broken" and row["version"] == "0.3"
    assert any("boom at import time" in e for e in row["errors"])
    assert row["hooks"] == {}


def test_render_with_a_plugin_whose_extract_field_raises(capsys, fake_dists):
    source = (
        "import prompt_style\n"
        "@prompt_style.hookimpl(tryfirst=True)\n"
        "def extract_field(spec, key):\n"
        "    raise KeyError('plugin bug')\n"
    )
    fake_dists.add("fake-fields", "fakefields", source)
    code, out, err = run(capsys, "render", MMLU, "--limit", "1")
    assert_one_error_line(code, out, err)
    assert "fakefields" in err


def test_plugins_warns_about_conflicts(capsys, fake_dists):
    source = (
        "import prompt_style\n"
        "@prompt_style.hookimpl\n"
        "def format_prompt():\n"
        "    return {'mcq::mmlu': prompt_style.choice_style('mcq::mmlu')}\n"
    )
    fake_dists.add("fake-mmlu", "fakemmlu", source)
    code, out, err = run(capsys, "plugins")
    assert code == 0
    assert "mcq::mmlu" in err and "PROMPT_STYLE_PREFER" in err


# -- render ---------------------------------------------------------------------------


def test_render_text(capsys):
    code, out, err = run(capsys, "render", MMLU, "--limit", "2")
    assert code == 0
    assert err == ""
    assert out.count("=== record ") == 2
    assert out.startswith('=== record 0 · target: 1 · continuations: [" A", " B", " C", " D"]\n')
    assert "The following are multiple choice questions (with answers) about elementary mathematics." in out
    assert "What is the value of 7 × 8?\nA. 54\nB. 56\nC. 48\nD. 64\nAnswer:\n" in out


def test_render_jsonl(capsys):
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl")
    assert code == 0
    rows = jsonl(out)
    assert [r["index"] for r in rows] == list(range(24))
    assert rows[0]["continuations"] == [" A", " B", " C", " D"]
    assert rows[0]["target"] == 1
    assert rows[0]["messages"] is None
    assert rows[0]["text"].endswith("What is the value of 7 × 8?\nA. 54\nB. 56\nC. 48\nD. 64\nAnswer:")


def test_render_jsonl_matches_python_api(capsys, pm_all):
    from prompt_style import load_task

    code, out, _ = run(capsys, "render", ARC, "--format", "jsonl")
    expected = [r.to_json() for r in load_task(ARC, plugins=pm_all).render()]
    assert jsonl(out) == expected


def test_render_style(capsys):
    _, cloze, _ = run(capsys, "render", ARC, "--format", "jsonl", "--limit", "1")
    _, mcq, _ = run(capsys, "render", ARC, "--format", "jsonl", "--limit", "1", "--style", "mcq")
    cloze, mcq = jsonl(cloze)[0], jsonl(mcq)[0]
    assert cloze["continuations"][0] == " sound energy"
    assert mcq["continuations"] == [" A", " B", " C", " D"]
    assert cloze["target"] == mcq["target"] == 1


@pytest.mark.parametrize("style", ["mcq::gpqa", "mcq::numbered", "cloze::options", "passthrough"])
def test_render_other_styles(capsys, style):
    code, out, _ = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "3", "--style", style)
    assert code == 0
    assert len(jsonl(out)) == 3


def test_render_meta_chatml(capsys):
    code, out, _ = run(capsys, "render", ARC, "--meta", "chatml", "--format", "jsonl", "--limit", "2", "--shots", "1")
    assert code == 0
    rows = jsonl(out)
    assert rows[0]["text"].startswith("<|im_start|>user\nQuestion: ")
    assert rows[0]["text"].endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert [m["role"] for m in rows[0]["messages"]] == ["user", "assistant", "user"]


def test_render_meta_messages(capsys):
    code, out, _ = run(
        capsys, "render", MMLU, "--meta", "messages", "--format", "jsonl", "--limit", "1", "--shots", "1"
    )
    row = jsonl(out)[0]
    assert row["text"] is None
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "user"]
    assert row["messages"][0]["content"].startswith("The following are multiple choice questions")
    # text output prints the messages as JSON
    code, out, _ = run(capsys, "render", MMLU, "--meta", "messages", "--limit", "1")
    body = out.split("\n", 1)[1]
    assert json.loads(body)[0]["role"] == "system"


def test_render_shots(capsys):
    _, out0, _ = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "1", "--shots", "0")
    _, out2, _ = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "1", "--shots", "2")
    assert jsonl(out0)[0]["text"].count("Answer:") == 1
    assert jsonl(out2)[0]["text"].count("Answer:") == 3


def test_render_seed(capsys, tmp_path):
    # a task whose random retriever takes the task seed
    task = tmp_path / "arc.yaml"
    task.write_text(ARC_TEMPLATE.format(data=EXAMPLES / "arc" / "data"), encoding="utf-8")
    _, a, _ = run(capsys, "render", str(task), "--format", "jsonl", "--seed", "1")
    _, b, _ = run(capsys, "render", str(task), "--format", "jsonl", "--seed", "1")
    _, c, _ = run(capsys, "render", str(task), "--format", "jsonl", "--seed", "2")
    assert a == b
    assert a != c


def test_render_seed_overrides_the_example_retriever_seed(capsys):
    # examples/arc/task.yaml sets `retriever: {name: random, seed: 1234}`;
    # --seed must still change the examples rather than be silently ignored.
    _, default, _ = run(capsys, "render", ARC, "--format", "jsonl")
    _, seeded, _ = run(capsys, "render", ARC, "--format", "jsonl", "--seed", "7")
    assert default != seeded


ARC_TEMPLATE = """\
task: arc_seeded
data:
  test: {data}/test.jsonl
  train: {data}/train.jsonl
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices.text}}}}"
doc_to_target: "{{{{choices.label.index(answerKey)}}}}"
template: cloze::qa
num_fewshot: 3
retriever: random
"""


def test_render_limit(capsys):
    _, out, _ = run(capsys, "render", GPQA, "--format", "jsonl", "--limit", "4")
    assert [r["index"] for r in jsonl(out)] == [0, 1, 2, 3]
    _, out, _ = run(capsys, "render", GPQA, "--format", "jsonl", "--limit", "0")
    assert out == ""


def test_render_limit_stops_reading(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"q": "a"}\n{"q": "b"}\nnot JSON\n')
    task = tmp_path / "t.yaml"
    task.write_text("data: d.jsonl\ndoc_to_text: q\n")
    code, out, err = run(capsys, "render", str(task), "--format", "jsonl", "--limit", "2")
    assert code == 0, err
    assert [r["text"] for r in jsonl(out)] == ["a", "b"]


def test_render_data_override(capsys, tmp_path):
    data = tmp_path / "mine.jsonl"
    data.write_text(
        json.dumps({"question": "Mine?", "subject": "astronomy", "choices": ["a", "b"], "answer": 1}) + "\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "render", MMLU, "--format", "jsonl", "--shots", "0", "--data", f"test={data}")
    assert code == 0
    [row] = jsonl(out)
    assert row["text"].endswith("about astronomy.\n\nMine?\nA. a\nB. b\nAnswer:")
    assert row["target"] == 1
    # --data is repeatable
    code, out, _ = run(
        capsys, "render", MMLU, "--format", "jsonl", "--shots", "1", "--data", f"test={data}", "--data", f"dev={data}"
    )
    assert jsonl(out)[0]["text"].count("Mine?") == 2


def test_render_data_for_a_split_the_task_does_not_read_is_reported(capsys, tmp_path):
    data = tmp_path / "mine.jsonl"
    data.write_text(json.dumps({"question": "Q", "subject": "s", "choices": ["a", "b"], "answer": 1}) + "\n")
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl", "--data", f"deev={data}", "--limit", "1")
    assert code == 0 and len(jsonl(out)) == 1  # a warning, not an error: the task still renders
    assert "data given for split 'deev' is not read: the task renders 'test' and few-shot examples from 'dev'" in err
    assert err.count("\n") == 1 and "did you mean 'dev'" in err


@pytest.mark.parametrize("example", [MMLU, ARC, GPQA])
def test_render_examples(capsys, example):
    code, out, err = run(capsys, "render", example)
    assert code == 0
    assert err == ""
    assert out.count("=== record ") > 20
    code, out, err = run(capsys, "render", example, "--format", "jsonl")
    assert code == 0
    assert len(jsonl(out)) > 20


# -- errors ---------------------------------------------------------------------------


def test_missing_task_file_is_one_error_line(capsys, tmp_path):
    code, out, err = run(capsys, "render", str(tmp_path / "nope.yaml"))
    assert_one_error_line(code, out, err)
    assert "nope.yaml" in err


def test_bad_task_key_is_one_error_line(capsys, tmp_path):
    task = tmp_path / "t.yaml"
    task.write_text("data: x.jsonl\ndoc_to_text: q\nnum_fewshots: 3\n")
    code, out, err = run(capsys, "render", str(task))
    assert_one_error_line(code, out, err)
    assert f"{task}:3" in err and "did you mean 'num_fewshot'" in err


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--style", "mqc"], "did you mean 'mcq'"),
        (["--meta", "chatmll"], "chatml"),
        (["--shots", "500"], "num_fewshot"),
        (["--data", "test=/nonexistent/x.jsonl"], "/nonexistent/x.jsonl"),
        (["--data", "dev=/nonexistent/d.jsonl"], "/nonexistent/d.jsonl"),
    ],
)
def test_bad_render_options_are_one_error_line(capsys, args, fragment):
    code, out, err = run(capsys, "render", MMLU, *args)
    assert_one_error_line(code, out, err)
    assert fragment in err


def test_bad_record_midway(capsys, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"q": "a"}\n{"q": "b"}\n{"x": 1}\n')
    task = tmp_path / "t.yaml"
    task.write_text("data: d.jsonl\ndoc_to_text: q\n")
    code, out, err = run(capsys, "render", str(task), "--format", "jsonl")
    assert_one_error_line(code, out, err)
    assert "record 2" in err
    assert len(jsonl(out)) == 2


@pytest.mark.parametrize(
    "args",
    [
        ["render", MMLU, "--data", "nosplit"],
        ["render", MMLU, "--shots", "-1"],
        ["render", MMLU, "--limit", "x"],
        ["render"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2_without_traceback(capsys, args):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    _, err = capsys.readouterr()
    assert "Traceback" not in err
    assert "error:" in err


@pytest.mark.parametrize("command", [["plugins"], ["render", MMLU]])
def test_malformed_prefer_env_is_one_error_line(capsys, monkeypatch, command):
    monkeypatch.setenv("PROMPT_STYLE_PREFER", "no-equals-sign")
    code, out, err = run(capsys, *command)
    assert_one_error_line(code, out, err)
    assert "PROMPT_STYLE_PREFER" in err


def test_debug_shows_the_traceback_and_keeps_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, "render", str(tmp_path / "nope.yaml"), "--debug")
    assert code == 2
    assert "Traceback" in err and "TaskFileError" in err
    assert err.splitlines()[-1].startswith("prompt-style: error: ")


# -- the real console script ---------------------------------------------------------


def test_console_script_renders(tmp_path):
    exe = console_script()
    proc = subprocess.run(
        [str(exe), "render", MMLU, "--format", "jsonl", "--limit", "3"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=clean_env(),
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    rows = jsonl(proc.stdout)
    assert [r["index"] for r in rows] == [0, 1, 2]
    assert "7 × 8" in rows[0]["text"]


def test_console_script_error_and_debug(tmp_path):
    exe = console_script()
    missing = str(tmp_path / "nope.yaml")
    proc = subprocess.run([str(exe), "render", missing], capture_output=True, text=True, env=clean_env(), timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"prompt-style: error: {missing}")
    assert "not found" in line

    proc = subprocess.run(
        [str(exe), "render", missing, "--debug"], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr
    assert "TaskFileError" in proc.stderr


def test_console_script_plugins_json_with_environment(tmp_path):
    exe = console_script()
    proc = subprocess.run(
        [str(exe), "plugins", "--json", "--all"],
        capture_output=True,
        text=True,
        env=clean_env(PROMPT_STYLE_PLUGINS="numbered"),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["numbered"]["status"] == "loaded"
    assert rows["numbered"]["distribution"] == "prompt-style-numbered"
    assert rows["mmlu"]["status"] == "skipped"


def test_debug_before_the_command_shows_a_traceback(capsys, tmp_path):
    code, out, err = run(capsys, "--debug", "render", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert "Traceback" in err


def test_meta_option(capsys):
    code, out, err = run(
        capsys, "render", GPQA, "--limit", "1", "--meta", "chatml", "--meta-option", "add_generation_prompt=false"
    )
    assert code == 0
    assert out.rstrip("\n").endswith("<|im_end|>")
    code, out, err = run(
        capsys, "render", GPQA, "--limit", "1", "--meta", "chatml", "--meta-option", "add_generation_promt=false"
    )
    assert_one_error_line(code, out, err)
    assert "meta.add_generation_promt" in err and "add_generation_prompt" in err


@pytest.mark.parametrize(
    "argv", [["render", "x", "--shots", "-1"], ["rendr"], ["render", "x", "--data", "foo"], ["render"]]
)
def test_usage_errors_are_one_line_with_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    out, err = capsys.readouterr()
    assert caught.value.code == 2
    assert len(err.splitlines()) == 1 and err.startswith("prompt-style: error: ")


def test_only_the_named_command_is_built():
    from prompt_style.cli import COMMANDS, build_parser

    def commands(parser):
        return set(next(a for a in parser._actions if a.dest == "command").choices)

    assert commands(build_parser()) == set(COMMANDS)
    assert commands(build_parser(["render", "task.yaml"])) == {"render"}
    assert commands(build_parser(["--debug", "--plugins-dir", "render", "view", "x"])) == {"view"}
    assert commands(build_parser(["--plugins-dir=d", "plugins"])) == {"plugins"}
    for argv in ([], ["--help"], ["rendr"], ["--plug", "d", "render"]):
        assert commands(build_parser(argv)) == set(COMMANDS)  # argparse says what is wrong, with every choice


def test_an_unknown_command_lists_every_command(capsys):
    from prompt_style.cli import main

    with pytest.raises(SystemExit):
        main(["rendr"])
    err = capsys.readouterr().err
    assert "render" in err and "plugins" in err


def test_render_freezes_what_it_loaded_only_in_its_own_process(tmp_path, capsys):
    """The command line's own process loads the task with the collector off, then
    freezes it (gc.freeze: the render's collections do not walk it again); a caller
    running main(argv) in its process keeps its collector as it was."""
    import gc

    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    assert main(["render", MMLU, "--limit", "1", "--format", "jsonl", "--output", str(tmp_path / "a.jsonl")]) == 0
    assert gc.get_freeze_count() == frozen and gc.isenabled() == enabled
    script = (
        "import gc, sys\n"
        "from prompt_style.cli import main\n"
        f"sys.argv = ['prompt-style', 'render', {MMLU!r}, '--limit', '1', '--format', 'jsonl',"
        f" '--output', {str(tmp_path / 'b.jsonl')!r}]\n"
        "code = main()\n"
        "print(code, gc.get_freeze_count() > 0, gc.isenabled())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["0", "True", "True"], done.stderr
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
