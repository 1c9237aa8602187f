"""Tests of prompt-style-numbered, written as a third party would write them.

They use only the public names of prompt-style (those in ``prompt_style.__all__``)
and the standard library: a fresh plugin manager per test, a few records held
in memory and rendered with ``ps.render_records`` (only the YAML task file test
writes files, in ``tmp_path``), and exact expected prompts.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from importlib import metadata
from pathlib import Path

import pytest

import prompt_style as ps

DIST = "prompt-style-numbered"
PLUGIN = "numbered"  # the entry-point name
MODULE = "prompt_style_numbered"
STYLE = "mcq::numbered"
HERE = Path(__file__).resolve().parent


# -- the manager and the records ------------------------------------------------


@pytest.fixture
def manager() -> ps.PluginManager:
    """A fresh manager per test; environ={} so PROMPT_STYLE_* variables of the shell do not leak in."""
    return ps.create_plugin_manager(environ={})


# The task keys of every test but the YAML one; each test names its style (``template=``).
FIELDS = {"task": "tiny", "doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"}

RECORD = {"question": "Which planet is known as the Red Planet?", "choices": ["Venus", "Mars", "Jupiter"], "answer": 1}
RECORD_TEXT = "Which planet is known as the Red Planet?\n1. Venus\n2. Mars\n3. Jupiter\nAnswer:"
TRAIN = [
    {"question": "What is 3 x 3?", "choices": ["6", "9"], "answer": 1},
    {"question": "Which is a mammal?", "choices": ["shark", "trout", "whale", "squid"], "answer": 2},
]


# -- the plugin is an ordinary, installed distribution --------------------------


def test_discovered_through_its_entry_point(manager):
    pyproject = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.MULTILINE).group(1)
    [info] = [p for p in manager.plugins if p.name == PLUGIN]
    assert isinstance(info, ps.PluginInfo)
    assert info.distribution == DIST
    assert info.version == metadata.version(DIST) == declared
    assert info.module == MODULE
    assert info.status == "loaded" and not info.builtin and not info.errors


def test_entry_point_declaration():
    entry_points = [ep for ep in metadata.distribution(DIST).entry_points if ep.group == "prompt_style"]
    assert [(ep.name, ep.value) for ep in entry_points] == [(PLUGIN, MODULE)]


def test_resolve_attributes_the_style_to_the_distribution(manager):
    provider = manager.resolve("format_prompt", STYLE)
    assert isinstance(provider, ps.Provider)
    assert provider.describe() == {
        "hook": "format_prompt",
        "name": STYLE,
        "plugin": PLUGIN,
        "distribution": DIST,
        "version": metadata.version(DIST),
    }
    [row] = [r for r in manager.describe() if r["name"] == PLUGIN]
    assert row["hooks"] == {"format_prompt": [STYLE], "declare_axes": [STYLE], "parse_answer": [STYLE]}
    style = provider.factory(options={}, settings=ps.StyleSettings())
    assert isinstance(style, ps.Style)


def test_rendered_task_records_the_plugin_used(manager):
    loaded = ps.load_task({**FIELDS, "template": STYLE, "data": {"test": [RECORD]}}, plugins=manager)
    assert loaded.plugins["format_prompt"] == manager.resolve("format_prompt", STYLE).describe()


def test_plugin_source_uses_only_public_names():
    """The plugin imports nothing private from prompt_style: every prompt_style.X it uses is in __all__."""
    module = importlib.import_module(MODULE)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "prompt_style":
            assert node.module == "prompt_style", f"imports the private module {node.module}"
            used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] != "prompt_style" or alias.name == "prompt_style"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "prompt_style":
            used.add(node.attr)
    assert used, "the plugin should use prompt_style"
    assert used <= set(ps.__all__), f"private names used: {sorted(used - set(ps.__all__))}"


def test_registered_by_hand_without_an_entry_point():
    """A harness (or a test) can register the module object itself."""
    module = importlib.import_module(MODULE)
    manager = ps.create_plugin_manager(entry_points=False, environ={}, plugins=[("by-hand", module)])
    provider = manager.resolve("format_prompt", STYLE)
    assert provider.plugin.name == "by-hand"
    assert provider.plugin.distribution is None


class Copycat:
    """Another plugin that claims the same style name (a class instance works as a plugin too)."""

    @ps.hookimpl
    def format_prompt(self):
        return {STYLE: ps.choice_style(STYLE, choice_format="{number}) {choice}")}


def test_same_name_twice_is_a_conflict_until_one_is_preferred():
    manager = ps.create_plugin_manager(environ={}, plugins=[("copycat", Copycat())])
    with pytest.raises(ps.PluginConflictError) as caught:
        manager.resolve("format_prompt", STYLE)
    assert DIST in str(caught.value) and "'copycat'" in str(caught.value)
    chosen = ps.create_plugin_manager(environ={}, plugins=[("copycat", Copycat())], prefer={STYLE: DIST})
    assert chosen.resolve("format_prompt", STYLE).plugin.distribution == DIST
    other = ps.create_plugin_manager(environ={}, plugins=[("copycat", Copycat())], prefer={STYLE: "copycat"})
    assert other.resolve("format_prompt", STYLE).plugin.name == "copycat"


def test_disabled_by_environment():
    manager = ps.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": DIST})
    [info] = [p for p in manager.plugins if p.name == PLUGIN]
    assert info.status == "blocked"
    with pytest.raises(ps.PluginNotFoundError, match="style 'mcq::numbered' is provided by .*, which is blocked"):
        manager.resolve("format_prompt", STYLE)


# -- rendering (``fewshot=`` records are a ``dev`` split) ------------------------


def test_zero_shot_exact_text(manager):
    [out] = ps.render_records([RECORD], plugins=manager, template=STYLE, **FIELDS)
    assert out.text == RECORD_TEXT
    assert out.continuations == (" 1", " 2", " 3")
    assert out.target == 1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_number_of_choices(manager, n):
    choices = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][:n]
    record = {"question": "Which day?", "choices": choices, "answer": 0}
    [out] = ps.render_records([record], plugins=manager, template=STYLE, **FIELDS)
    expected = {
        2: "Which day?\n1. Mon\n2. Tue\nAnswer:",
        3: "Which day?\n1. Mon\n2. Tue\n3. Wed\nAnswer:",
        4: "Which day?\n1. Mon\n2. Tue\n3. Wed\n4. Thu\nAnswer:",
        5: "Which day?\n1. Mon\n2. Tue\n3. Wed\n4. Thu\n5. Fri\nAnswer:",
        7: "Which day?\n1. Mon\n2. Tue\n3. Wed\n4. Thu\n5. Fri\n6. Sat\n7. Sun\nAnswer:",
    }
    assert out.text == expected[n]
    assert out.continuations == (" 1", " 2", " 3", " 4", " 5", " 6", " 7")[:n]
    assert out.target == 0


def test_more_than_26_choices(manager):
    # Numbers do not run out the way the letters A-Z do.
    choices = [f"c{i}" for i in range(30)]
    record = {"question": "Q", "choices": choices, "answer": 29}
    [out] = ps.render_records([record], plugins=manager, template=STYLE, **FIELDS)
    assert out.text.endswith("\n29. c28\n30. c29\nAnswer:")
    assert out.continuations[-1] == " 30"
    assert out.target == 29


@pytest.mark.parametrize(("answer", "index"), [(0, 0), (2, 2), ("Jupiter", 2), ("Mars", 1)])
def test_target_index_or_choice_text(manager, answer, index):
    [out] = ps.render_records([{**RECORD, "answer": answer}], plugins=manager, template=STYLE, **FIELDS)
    assert out.target == index


def test_target_out_of_range_is_a_style_error(manager):
    with pytest.raises(ps.StyleError, match="out of range") as caught:
        ps.render_records([{**RECORD, "answer": 3}], plugins=manager, template=STYLE, **FIELDS)
    assert caught.value.key == "doc_to_target"
    assert caught.value.index == 0


def test_description_and_few_shot(manager):
    [out] = ps.render_records(
        [RECORD],
        fewshot=TRAIN,
        num_fewshot=2,
        plugins=manager,
        template=STYLE,
        description="General knowledge.\n\n",
        **FIELDS,
    )
    assert out.text == (
        "General knowledge.\n\n"
        "What is 3 x 3?\n1. 6\n2. 9\nAnswer: 2"
        "\n\n"
        "Which is a mammal?\n1. shark\n2. trout\n3. whale\n4. squid\nAnswer: 3"
        "\n\n" + RECORD_TEXT
    )
    assert out.continuations == (" 1", " 2", " 3")
    assert out.target == 1


def test_few_shot_as_messages(manager):
    [out] = ps.render_records(
        [RECORD], fewshot=TRAIN, num_fewshot=1, plugins=manager, meta="messages", template=STYLE, **FIELDS
    )
    assert out.messages == [
        {"role": "user", "content": "What is 3 x 3?\n1. 6\n2. 9\nAnswer:"},
        {"role": "assistant", "content": "2"},
        {"role": "user", "content": RECORD_TEXT},
    ]


def test_yaml_task_file(tmp_path, manager):
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TRAIN), encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "task: tiny_numbered\n"
        "data:\n  test: test.jsonl\n  train: train.jsonl\n"
        "doc_to_text: question\n"
        'doc_to_choice: "{{choices}}"\n'
        "doc_to_target: answer\n"
        "template: mcq::numbered\n"
        "num_fewshot: 1\n",
        encoding="utf-8",
    )
    [out] = list(ps.load_task(path, plugins=manager).render())
    assert out.text == "What is 3 x 3?\n1. 6\n2. 9\nAnswer: 2\n\n" + RECORD_TEXT


# -- options --------------------------------------------------------------------


def test_option_overrides(manager):
    template = {"template_type": STYLE, "choice_format": "({number}) {choice}", "suffix": "Number:"}
    [out] = ps.render_records([RECORD], fewshot=TRAIN, num_fewshot=1, plugins=manager, template=template, **FIELDS)
    assert out.text == (
        "What is 3 x 3?\n(1) 6\n(2) 9\nNumber: 2\n\n"
        "Which planet is known as the Red Planet?\n(1) Venus\n(2) Mars\n(3) Jupiter\nNumber:"
    )
    assert out.continuations == (" 1", " 2", " 3")


def test_answer_format_option(manager):
    template = {"template_type": STYLE, "answer_format": "#{number}"}
    [out] = ps.render_records([RECORD], plugins=manager, template=template, **FIELDS)
    assert out.continuations == (" #1", " #2", " #3")
    assert out.target == 1


def test_unknown_option_says_did_you_mean(manager):
    template = {"template_type": STYLE, "answer_fromat": "{number}"}
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": template}
    with pytest.raises(ps.OptionError) as caught:
        ps.load_task(config, plugins=manager)
    assert caught.value.key == "template.answer_fromat"
    assert "style 'mcq::numbered' has no option 'answer_fromat'" in str(caught.value)
    assert "(did you mean 'answer_format'" in str(caught.value)


def test_option_of_the_wrong_type(manager):
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": {"template_type": STYLE, "choice_delimiter": 1}}
    with pytest.raises(ps.OptionError, match="option 'choice_delimiter' must be str"):
        ps.load_task(config, plugins=manager)
