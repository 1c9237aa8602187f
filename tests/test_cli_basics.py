"""The command's own options and conventions: ``--version``, ``--help``, ``--debug``,
and the one rule for ``KEY=VALUE`` values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import prompt_style
from prompt_style.cli import COMMANDS, main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_attribute_is_the_installed_metadata():
    from prompt_style._entry_points import distribution_version

    assert prompt_style.__version__ == distribution_version("prompt-style")
    assert "__version__" in dir(prompt_style)


def test_version_option(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    out, err = capsys.readouterr()
    assert caught.value.code == 0
    assert out == f"prompt-style {prompt_style.__version__}\n"


def test_importing_the_package_does_not_read_the_version():
    probe = "import sys, prompt_style; print('prompt_style._entry_points' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_help_has_examples_and_environment_variables(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and "prompt-style render --example mmlu" in out
    assert "environment variables:" in out
    for name in ("PROMPT_STYLE_PLUGINS", "PROMPT_STYLE_DISABLE", "PROMPT_STYLE_PREFER", "PROMPT_STYLE_LIMITS"):
        assert name in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_lists_the_environment_variables(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "environment variables:" in out and "PROMPT_STYLE_DISABLE" in out
    assert f"examples:\n  prompt-style {command} " in out


def test_meta_option_json_rule_on_the_command_line(capsys, tmp_path):
    # a JSON string keeps its spaces and escapes; a bare value is a string as written
    conversation = tmp_path / "c.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    code, out, err = run(
        capsys, "chat", str(conversation), "--meta", "chatml", "--meta-option", "add_generation_prompt=true"
    )
    assert code == 0, err
    assert out.endswith("<|im_start|>assistant\n")


def test_backslash_escape_in_a_bare_value_warns(capsys, tmp_path):
    conversation = tmp_path / "c.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    code, out, err = run(capsys, "chat", str(conversation), "--meta", "chatml", "--meta-option", "x=a\\nb")
    assert code == 2  # chatml has no option x; the warning comes first
    assert "prompt-style: warning: x=a\\nb: the value is kept as written" in err


# -- errors that say what to do ---------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
MMLU = str(ROOT / "examples" / "mmlu" / "task.yaml")
ARC = str(ROOT / "examples" / "arc" / "task.yaml")


def one_error(code, err) -> str:
    assert code == 2, err
    [line] = err.splitlines()
    assert line.startswith("prompt-style: error: ")
    return line


@pytest.mark.parametrize("spec", ["questoin", "{{questoin}}", "Q: {{ questoin }}"])
def test_a_mistyped_record_field_gets_a_did_you_mean(capsys, make_task, spec):
    task = make_task(
        {"test": [{"question": "q", "choices": ["a", "b"], "answer": 0}]},
        doc_to_text=spec,
        doc_to_choice="choices",
        doc_to_target="answer",
        template="mcq",
    )
    line = one_error(*run(capsys, "render", str(task))[::2])
    assert "did you mean 'question'?" in line and "the record has: question, choices, answer" in line


def test_a_mistyped_field_in_an_lm_eval_task(capsys, tmp_path, jsonl):
    data = jsonl(tmp_path / "test.jsonl", [{"question": "q", "choices": ["a", "b"], "answer": 0}])
    task = tmp_path / "lm.yaml"
    task.write_text(
        "task: x\ndataset_path: x\ntest_split: test\noutput_type: multiple_choice\n"
        'doc_to_text: "Question: {{questoin}}"\ndoc_to_choice: "{{choices}}"\ndoc_to_target: answer\n',
        encoding="utf-8",
    )
    line = one_error(*run(capsys, "render", str(task), "--data", f"test={data}")[::2])
    assert "did you mean 'question'?" in line


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("task: t\ndata:\n test: test.jsonl\n  doc_to_text: q\n", "check the indentation"),
        ("task: t\ndata:\n  test: test.jsonl\n doc_to_text: q\n", "check the indentation"),
        ("task: t\n\tdoc_to_text: q\n", "indent with spaces, not tabs"),
        ("task: t\ndescription: Answer: yes\n", "put it in quotes"),
    ],
)
def test_bad_yaml_gets_a_hint(capsys, write_yaml, text, hint):
    line = one_error(*run(capsys, "render", str(write_yaml(text)))[::2])
    assert "not valid YAML" in line and hint in line


def test_a_blocked_plugin_is_named_as_blocked(capsys, monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_DISABLE", "prompt-style-chatml")
    line = one_error(*run(capsys, "render", MMLU, "--meta", "chatml")[::2])
    assert "'chatml'" in line and "which is blocked" in line and "PROMPT_STYLE_DISABLE" in line
    assert "pip install" not in line


def test_a_blocked_builtin_is_named_as_blocked(capsys, monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_DISABLE", "builtin-styles")
    line = one_error(*run(capsys, "render", ARC, "--style", "mcq")[::2])
    assert "builtin-styles" in line and "blocked" in line


def test_a_plugin_left_out_by_the_allow_list_says_so(capsys, monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_PLUGINS", "numbered")
    line = one_error(*run(capsys, "render", MMLU, "--meta", "chatml")[::2])
    assert "not loaded" in line and "PROMPT_STYLE_PLUGINS" in line


# -- prompt-style plugins --------------------------------------------------------------


def test_plugins_all_lists_each_meta_templates_options(capsys):
    code, out, err = run(capsys, "plugins", "--all")
    assert code == 0, err
    assert "    chatml: options: add_generation_prompt" in out
    assert "messages: options: system=true" in out
    assert "plain: no options" in out
    hf = next(line for line in out.splitlines() if line.startswith("    hf: "))
    assert "template" in hf and "system_policy" in hf and "template variable" in hf
    assert "tokenizer" in out.splitlines()[-1]


def test_plugins_all_json_has_the_options(capsys):
    import json

    code, out, err = run(capsys, "plugins", "--all", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    options = {o["name"]: o for o in rows["chatml"]["meta_options"]["chatml"]["options"]}
    option = options["add_generation_prompt"]  # the dataclass field: its type, default and docstring
    assert option["type"] == "bool | None" and option["default"] is None
    assert "Prompt the model to answer" in option["help"]


def test_plugins_with_a_broken_catalog_exits_1_and_warns_once(capsys, fake_dists):
    source = "import prompt_style\n@prompt_style.hookimpl\ndef format_prompt():\n    raise ValueError('catalog bug')\n"
    fake_dists.add("fake-cat", "fakecat", source)
    code, out, err = run(capsys, "plugins")
    assert code == 1
    assert "fakecat" in out and "BROKEN" in out and "mmlu" in out
    assert len([line for line in err.splitlines() if "fakecat" in line]) == 1
    code, out, err = run(capsys, "render", MMLU, "--limit", "1")
    assert code == 0  # rendering does not need the broken plugin
    assert len([line for line in err.splitlines() if "fakecat" in line]) == 1
