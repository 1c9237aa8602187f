"""The command's own options and conventions: ``--version``, ``--help``, ``--debug``,
and the one rule for ``KEY=VALUE`` values."""

from __future__ import annotations

import subprocess
import sys

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
