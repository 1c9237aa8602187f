"""Tests of prompt-style-gpqa: the ``mcq::gpqa`` style, through the public API only.

Every test gets a fresh plugin manager and renders a few records held in
memory with ``prompt_style.render_records`` (only the YAML task file test
writes files, in ``tmp_path``). The layout is lm-evaluation-harness's GPQA prompt::

    What is the correct answer to this question:{question}
    Choices:
    (A) {c0}
    (B) {c1}
    ...
    Answer:

scored on the continuations `` (A)``, `` (B)``, ...
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest

import prompt_style

DIST = "prompt-style-gpqa"
PLUGIN = "gpqa"
STYLE = "mcq::gpqa"
HERE = Path(__file__).resolve().parent
PREFIX = "What is the correct answer to this question:"


# -- the manager and the records ------------------------------------------------


@pytest.fixture
def manager() -> prompt_style.PluginManager:
    """A fresh manager per test; environ={} so PROMPT_STYLE_* variables of the shell do not leak in."""
    return prompt_style.create_plugin_manager(environ={})


# Task keys for GPQA-shaped records (choice1..choice4 already shuffled, answer "(A)".."(D)").
# The gold answer is the index of the choice, whatever labels a style shows: "(B)" -> 1.
GPQA_TARGET = "{{ ['(A)', '(B)', '(C)', '(D)'].index(answer) }}"
GPQA = {
    "task": "tiny_gpqa",
    "doc_to_text": "{{Question}}",
    "doc_to_choice": "{{[choice1, choice2, choice3, choice4]}}",
    "doc_to_target": GPQA_TARGET,
}
# Task keys for records with a plain ``choices`` list (any number of choices).
LIST = {"task": "tiny", "doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"}

RECORD = {
    "Question": "What is the ground-state energy of a particle in a box of width L?",
    "choice1": "ħ²π²/(mL²)",
    "choice2": "ħ²π²/(2mL²)",
    "choice3": "0",
    "choice4": "ħω/2",
    "answer": "(B)",
}
RECORD_TEXT = (
    PREFIX + "What is the ground-state energy of a particle in a box of width L?\n"
    "Choices:\n(A) ħ²π²/(mL²)\n(B) ħ²π²/(2mL²)\n(C) 0\n(D) ħω/2\nAnswer:"
)
TRAIN = [
    {
        "Question": "Which gas is most abundant in air?",
        "choice1": "O2",
        "choice2": "CO2",
        "choice3": "N2",
        "choice4": "Ar",
        "answer": "(C)",
    },
    {
        "Question": "Line one.\nLine two?",
        "choice1": "yes",
        "choice2": "no",
        "choice3": "maybe",
        "choice4": "never",
        "answer": "(D)",
    },
]


# -- discovery ------------------------------------------------------------------


def test_discovered_through_its_entry_point(manager):
    pyproject = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.MULTILINE).group(1)
    [info] = [p for p in manager.plugins if p.name == PLUGIN]
    assert info.distribution == DIST
    assert info.version == metadata.version(DIST) == declared
    assert info.module == "prompt_style_gpqa"
    assert info.status == "loaded" and not info.builtin and not info.errors
    entry_points = [ep for ep in metadata.distribution(DIST).entry_points if ep.group == "prompt_style"]
    assert [(ep.name, ep.value) for ep in entry_points] == [(PLUGIN, "prompt_style_gpqa")]


def test_resolve_attributes_the_style_to_the_distribution(manager):
    provider = manager.resolve("format_prompt", STYLE)
    assert provider.describe() == {
        "hook": "format_prompt",
        "name": STYLE,
        "plugin": PLUGIN,
        "distribution": DIST,
        "version": metadata.version(DIST),
    }
    [row] = [r for r in manager.describe() if r["name"] == PLUGIN]
    assert row["hooks"] == {
        "format_prompt": [STYLE],
        "declare_axes": [STYLE],
        "parse_answer": [STYLE],
        "task_examples": ["gpqa"],
    }


def test_rendered_task_records_the_plugin_used(manager):
    loaded = prompt_style.load_task({**GPQA, "template": STYLE, "data": {"test": [RECORD]}}, plugins=manager)
    assert loaded.plugins["format_prompt"]["distribution"] == DIST
    assert loaded.plugins["format_prompt"]["version"] == metadata.version(DIST)


def test_disabled_plugin_names_the_distribution_to_install():
    manager = prompt_style.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": DIST})
    with pytest.raises(prompt_style.PluginNotFoundError) as caught:
        manager.resolve("format_prompt", STYLE)
    # installed but blocked: the error names the distribution and says it is blocked
    assert DIST in str(caught.value) and "blocked" in str(caught.value)


# -- zero-shot ------------------------------------------------------------------


def test_zero_shot_exact_text(manager):
    [out] = prompt_style.render_records([RECORD], plugins=manager, template=STYLE, **GPQA)
    assert out.text == RECORD_TEXT
    assert out.continuations == (" (A)", " (B)", " (C)", " (D)")
    assert out.target == 1


def test_no_space_after_the_prefix_colon(manager):
    # lm-evaluation-harness writes "question:{{Question}}" with no space; so do we.
    [out] = prompt_style.render_records([{**RECORD, "Question": "Why?"}], plugins=manager, template=STYLE, **GPQA)
    assert out.text.startswith("What is the correct answer to this question:Why?\nChoices:\n")


def test_multi_line_question(manager):
    [out] = prompt_style.render_records([TRAIN[1]], plugins=manager, template=STYLE, **GPQA)
    assert out.text == (PREFIX + "Line one.\nLine two?\nChoices:\n(A) yes\n(B) no\n(C) maybe\n(D) never\nAnswer:")
    assert out.target == 3


@pytest.mark.parametrize(
    ("choices", "text", "continuations"),
    [
        (["yes", "no"], "Choices:\n(A) yes\n(B) no\nAnswer:", (" (A)", " (B)")),
        (["x", "y", "z"], "Choices:\n(A) x\n(B) y\n(C) z\nAnswer:", (" (A)", " (B)", " (C)")),
        (
            ["1", "2", "3", "4"],
            "Choices:\n(A) 1\n(B) 2\n(C) 3\n(D) 4\nAnswer:",
            (" (A)", " (B)", " (C)", " (D)"),
        ),
        (
            ["a", "b", "c", "d", "e"],
            "Choices:\n(A) a\n(B) b\n(C) c\n(D) d\n(E) e\nAnswer:",
            (" (A)", " (B)", " (C)", " (D)", " (E)"),
        ),
        (
            ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
            "Choices:\n(A) Mon\n(B) Tue\n(C) Wed\n(D) Thu\n(E) Fri\n(F) Sat\n(G) Sun\nAnswer:",
            (" (A)", " (B)", " (C)", " (D)", " (E)", " (F)", " (G)"),
        ),
    ],
    ids=["2", "3", "4", "5", "7"],
)
def test_number_of_choices(manager, choices, text, continuations):
    record = {"question": "Q?", "choices": choices, "answer": 1}
    [out] = prompt_style.render_records([record], plugins=manager, template=STYLE, **LIST)
    assert out.text == PREFIX + "Q?\n" + text
    assert out.continuations == continuations
    assert out.target == 1


@pytest.mark.parametrize(
    ("answer", "index"),
    [("(A)", 0), ("(B)", 1), ("(D)", 3)],
)
def test_target_resolves_to_an_index(manager, answer, index):
    [out] = prompt_style.render_records([{**RECORD, "answer": answer}], plugins=manager, template=STYLE, **GPQA)
    assert out.target == index


@pytest.mark.parametrize(("answer", "index"), [(2, 2), ("ħω/2", 3)], ids=["int", "choice-text"])
def test_plain_field_target_is_an_index_or_a_choice_text(manager, answer, index):
    keys = {**GPQA, "doc_to_target": "answer"}
    [out] = prompt_style.render_records([{**RECORD, "answer": answer}], plugins=manager, template=STYLE, **keys)
    assert out.target == index


@pytest.mark.parametrize(
    ("answer", "says"),
    [("(B)", "not one of the choices"), ("C", "not one of the choices"), ("0", "ambiguous")],
    ids=["answer-text", "label", "digit-and-choice-text"],
)
def test_style_labels_are_never_targets(manager, answer, says):
    # "(B)" and "C" are what this style shows, not what the task's choices are; "0" is the
    # text of choice 2 and, read as an index, choice 0. None of them is guessed.
    keys = {**GPQA, "doc_to_target": "answer"}
    with pytest.raises(prompt_style.TargetError) as caught:
        prompt_style.render_records([{**RECORD, "answer": answer}], plugins=manager, template=STYLE, **keys)
    assert caught.value.key == "doc_to_target"
    assert says in str(caught.value)


def test_target_that_matches_nothing_is_a_style_error(manager):
    keys = {**GPQA, "doc_to_target": "answer"}
    with pytest.raises(prompt_style.StyleError) as caught:
        prompt_style.render_records([{**RECORD, "answer": "(E)"}], plugins=manager, template=STYLE, **keys)
    assert caught.value.key == "doc_to_target"
    assert "'ħ²π²/(mL²)', 'ħ²π²/(2mL²)', '0', 'ħω/2'" in str(caught.value)


def test_description_comes_first(manager):
    [out] = prompt_style.render_records(
        [RECORD], plugins=manager, template=STYLE, description="Physics, graduate level.\n\n", **GPQA
    )
    assert out.text == "Physics, graduate level.\n\n" + RECORD_TEXT


# -- few-shot (``fewshot=`` records are a ``dev`` split) -------------------------


def test_one_shot(manager):
    [out] = prompt_style.render_records([RECORD], fewshot=TRAIN, num_fewshot=1, plugins=manager, template=STYLE, **GPQA)
    assert out.text == (
        PREFIX + "Which gas is most abundant in air?\nChoices:\n(A) O2\n(B) CO2\n(C) N2\n(D) Ar\nAnswer: (C)"
        "\n\n" + RECORD_TEXT
    )
    assert out.continuations == (" (A)", " (B)", " (C)", " (D)")
    assert out.target == 1


def test_two_shot_with_description(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=TRAIN,
        num_fewshot=2,
        plugins=manager,
        template=STYLE,
        description="Answer carefully.\n\n",
        **GPQA,
    )
    assert out.text == (
        "Answer carefully.\n\n"
        + PREFIX
        + "Which gas is most abundant in air?\nChoices:\n(A) O2\n(B) CO2\n(C) N2\n(D) Ar\nAnswer: (C)"
        "\n\n" + PREFIX + "Line one.\nLine two?\nChoices:\n(A) yes\n(B) no\n(C) maybe\n(D) never\nAnswer: (D)"
        "\n\n" + RECORD_TEXT
    )


def test_few_shot_as_messages(manager):
    [out] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN[:1], num_fewshot=1, plugins=manager, meta="messages", template=STYLE, **GPQA
    )
    assert out.messages == [
        {
            "role": "user",
            "content": PREFIX + "Which gas is most abundant in air?\nChoices:\n"
            "(A) O2\n(B) CO2\n(C) N2\n(D) Ar\nAnswer:",
        },
        {"role": "assistant", "content": "(C)"},
        {"role": "user", "content": RECORD_TEXT},
    ]


def test_yaml_task_file(tmp_path, manager):
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD, ensure_ascii=False) + "\n", encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "task: tiny_gpqa\n"
        "data:\n  test: test.jsonl\n"
        'doc_to_text: "{{Question}}"\n'
        'doc_to_choice: "{{[choice1, choice2, choice3, choice4]}}"\n'
        f'doc_to_target: "{GPQA_TARGET}"\n'
        "template:\n  template_type: mcq::gpqa\n",
        encoding="utf-8",
    )
    [out] = list(prompt_style.load_task(path, plugins=manager).render())
    assert out.text == RECORD_TEXT
    assert out.target == 1


# -- options --------------------------------------------------------------------


def test_option_overrides(manager):
    template = {
        "template_type": STYLE,
        "prefix": "Q: ",
        "choices_header": "Options:\n",
        "suffix": "The answer is",
    }
    [out] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN[:1], num_fewshot=1, plugins=manager, template=template, **GPQA
    )
    assert out.text == (
        "Q: Which gas is most abundant in air?\nOptions:\n(A) O2\n(B) CO2\n(C) N2\n(D) Ar\nThe answer is (C)"
        "\n\n"
        "Q: What is the ground-state energy of a particle in a box of width L?\nOptions:\n"
        "(A) ħ²π²/(mL²)\n(B) ħ²π²/(2mL²)\n(C) 0\n(D) ħω/2\nThe answer is"
    )
    assert out.continuations == (" (A)", " (B)", " (C)", " (D)")


def test_answer_format_option_changes_the_continuations_not_the_target(manager):
    template = {"template_type": STYLE, "answer_format": "{label}"}
    [out] = prompt_style.render_records([RECORD], plugins=manager, template=template, **GPQA)
    assert out.continuations == (" A", " B", " C", " D")
    assert out.target == 1
    assert out.text == RECORD_TEXT  # the choices are still listed as (A) ...


def test_choice_labels_option(manager):
    template = {"template_type": STYLE, "choice_labels": ["a", "b", "c", "d"]}
    [out] = prompt_style.render_records([{**RECORD, "answer": "(C)"}], plugins=manager, template=template, **GPQA)
    assert out.text.endswith("Choices:\n(a) ħ²π²/(mL²)\n(b) ħ²π²/(2mL²)\n(c) 0\n(d) ħω/2\nAnswer:")
    assert out.continuations == (" (a)", " (b)", " (c)", " (d)")
    assert out.target == 2


def test_unknown_option_says_did_you_mean(manager):
    config = {**GPQA, "data": {"test": [RECORD]}, "template": {"template_type": STYLE, "choices_heder": "X:\n"}}
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.load_task(config, plugins=manager)
    assert caught.value.key == "template.choices_heder"
    assert "style 'mcq::gpqa' has no option 'choices_heder'" in str(caught.value)
    assert "(did you mean 'choices_header'" in str(caught.value)


def test_option_of_the_wrong_type(manager):
    config = {**GPQA, "data": {"test": [RECORD]}, "template": {"template_type": STYLE, "show_choices": "yes"}}
    with pytest.raises(prompt_style.OptionError, match="option 'show_choices' must be bool"):
        prompt_style.load_task(config, plugins=manager)
