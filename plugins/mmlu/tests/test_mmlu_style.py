"""Tests of prompt-style-mmlu: the ``mcq::mmlu`` style, through the public API only.

Every test gets a fresh plugin manager (so no state leaks between tests) and
renders a few records held in memory with ``prompt_style.render_records``
(only the tests of YAML task files write files, in ``tmp_path``); the expected
prompts are spelled out byte for byte, in the lm-evaluation-harness MMLU layout::

    description + q1 + " " + a1 + "\\n\\n" + ... + "\\n\\n" + q

where each question reads ``{question}\\nA. {c0}\\nB. {c1}\\n...\\nAnswer:``.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest

import prompt_style

DIST = "prompt-style-mmlu"
PLUGIN = "mmlu"
STYLE = "mcq::mmlu"
HERE = Path(__file__).resolve().parent


# -- the manager and the records ------------------------------------------------


@pytest.fixture
def manager() -> prompt_style.PluginManager:
    """A fresh manager per test; environ={} so PROMPT_STYLE_* variables of the shell do not leak in."""
    return prompt_style.create_plugin_manager(environ={})


# The task keys of every test but the YAML ones; each test names its style (``template=``).
FIELDS = {"task": "tiny", "doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"}

RECORD = {"question": "What is 2 + 2?", "choices": ["3", "4", "5", "22"], "answer": 1}
DEV = [
    {"question": "What is 15% of 200?", "choices": ["15", "20", "30", "35"], "answer": 2},
    {"question": "Which planet is largest?", "choices": ["Mars", "Jupiter", "Venus"], "answer": 1},
    {"question": "Pick the prime.", "choices": ["4", "6", "8", "9", "11"], "answer": 4},
]


# -- discovery ------------------------------------------------------------------


def test_discovered_through_its_entry_point(manager):
    pyproject = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.MULTILINE).group(1)
    [info] = [p for p in manager.plugins if p.name == PLUGIN]
    assert info.distribution == DIST
    assert info.version == metadata.version(DIST) == declared
    assert info.module == "prompt_style_mmlu"
    assert info.status == "loaded" and not info.builtin and not info.errors
    entry_points = [ep for ep in metadata.distribution(DIST).entry_points if ep.group == "prompt_style"]
    assert [(ep.name, ep.value) for ep in entry_points] == [(PLUGIN, "prompt_style_mmlu")]


def test_resolve_attributes_the_style_to_the_distribution(manager):
    provider = manager.resolve("format_prompt", STYLE)
    assert provider.name == STYLE
    assert provider.plugin.name == PLUGIN
    assert provider.plugin.distribution == DIST
    assert provider.plugin.version == metadata.version(DIST)
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
        "task_examples": ["mmlu"],
    }
    assert row["status"] == "loaded"


def test_rendered_task_records_the_plugin_used(manager):
    loaded = prompt_style.load_task({**FIELDS, "template": STYLE, "data": {"test": [RECORD]}}, plugins=manager)
    assert loaded.plugins["format_prompt"]["distribution"] == DIST
    assert loaded.plugins["format_prompt"]["name"] == STYLE
    assert loaded.plugins["format_prompt"]["version"] == metadata.version(DIST)


def test_disabled_plugin_names_the_distribution_to_install():
    manager = prompt_style.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": PLUGIN})
    assert STYLE not in manager.names("format_prompt")
    with pytest.raises(prompt_style.PluginNotFoundError) as caught:
        manager.resolve("format_prompt", STYLE)
    # installed but blocked: the error names the distribution and says it is blocked
    assert DIST in str(caught.value) and "blocked" in str(caught.value)


# -- zero-shot ------------------------------------------------------------------


def test_zero_shot_exact_text(manager):
    [out] = prompt_style.render_records([RECORD], plugins=manager, template=STYLE, **FIELDS)
    assert out.text == "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    assert out.continuations == (" A", " B", " C", " D")
    assert out.target == 1
    assert out.messages is None
    assert out.index == 0


@pytest.mark.parametrize(
    ("choices", "text", "continuations"),
    [
        (["yes", "no"], "Q?\nA. yes\nB. no\nAnswer:", (" A", " B")),
        (["x", "y", "z"], "Q?\nA. x\nB. y\nC. z\nAnswer:", (" A", " B", " C")),
        (["1", "2", "3", "4"], "Q?\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer:", (" A", " B", " C", " D")),
        (
            ["a", "b", "c", "d", "e"],
            "Q?\nA. a\nB. b\nC. c\nD. d\nE. e\nAnswer:",
            (" A", " B", " C", " D", " E"),
        ),
        (
            ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
            "Q?\nA. Mon\nB. Tue\nC. Wed\nD. Thu\nE. Fri\nF. Sat\nG. Sun\nAnswer:",
            (" A", " B", " C", " D", " E", " F", " G"),
        ),
    ],
    ids=["2", "3", "4", "5", "7"],
)
def test_number_of_choices(manager, choices, text, continuations):
    record = {"question": "Q?", "choices": choices, "answer": len(choices) - 1}
    [out] = prompt_style.render_records([record], plugins=manager, template=STYLE, **FIELDS)
    assert out.text == text
    assert out.continuations == continuations
    assert out.target == len(choices) - 1


@pytest.mark.parametrize(
    ("answer", "index"),
    [(0, 0), (2, 2), ("5", 2), ("22", 3)],
    ids=["int-0", "int-2", "choice-text", "choice-text-past-the-indices"],
)
def test_target_resolves_to_an_index(manager, answer, index):
    # "5" and "22" are choice texts ("22" is no index of 4 choices, so it cannot mean one).
    [out] = prompt_style.render_records([{**RECORD, "answer": answer}], plugins=manager, template=STYLE, **FIELDS)
    assert out.target == index


@pytest.mark.parametrize(
    ("answer", "says"),
    [("C", "not one of the choices"), ("1", "not one of the choices"), ("3", "ambiguous")],
    ids=["label", "digit", "choice-text-and-index"],
)
def test_labels_and_unclear_digits_are_target_errors(manager, answer, says):
    # "C" is a label of this style, not a choice; "1" from a plain field is matched against the
    # choice texts only (as lm-evaluation-harness does); "3" is choice 0's text and index 3.
    with pytest.raises(prompt_style.TargetError) as caught:
        prompt_style.render_records([{**RECORD, "answer": answer}], plugins=manager, template=STYLE, **FIELDS)
    assert says in str(caught.value)


def test_template_target_reads_a_digit_string_as_an_index(manager):
    keys = {**FIELDS, "doc_to_target": "{{answer}}"}
    [out] = prompt_style.render_records([{**RECORD, "answer": "1"}], plugins=manager, template=STYLE, **keys)
    assert out.target == 1


def test_target_that_matches_nothing_is_a_style_error(manager):
    with pytest.raises(prompt_style.StyleError) as caught:
        prompt_style.render_records([{**RECORD, "answer": "E"}], plugins=manager, template=STYLE, **FIELDS)
    assert caught.value.key == "doc_to_target"
    assert caught.value.index == 0
    assert "not one of the choices ('3', '4', '5', '22')" in str(caught.value)


def test_description_comes_first(manager):
    [out] = prompt_style.render_records(
        [{**RECORD, "subject": "elementary_mathematics"}],
        plugins=manager,
        template=STYLE,
        description="The following are multiple choice questions (with answers) about "
        "{{ subject.replace('_', ' ') }}.\n\n",
        **FIELDS,
    )
    assert out.text == (
        "The following are multiple choice questions (with answers) about elementary mathematics.\n\n"
        "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    )


def test_non_ascii_and_braces_are_kept_verbatim(manager):
    record = {"question": "Let {x} be {{7*7}} °C. α?", "choices": ["é", "m/s²"], "answer": 0}
    [out] = prompt_style.render_records([record], plugins=manager, template=STYLE, **FIELDS)
    assert out.text.encode("utf-8") == "Let {x} be {{7*7}} °C. α?\nA. é\nB. m/s²\nAnswer:".encode("utf-8")


# -- few-shot (``fewshot=`` records are a ``dev`` split) -------------------------


def test_one_shot(manager):
    [out] = prompt_style.render_records([RECORD], fewshot=DEV, num_fewshot=1, plugins=manager, template=STYLE, **FIELDS)
    assert out.text == (
        "What is 15% of 200?\nA. 15\nB. 20\nC. 30\nD. 35\nAnswer: C\n\nWhat is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    )
    assert out.continuations == (" A", " B", " C", " D")
    assert out.target == 1


def test_few_shot_with_description_lm_eval_layout(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=DEV,
        num_fewshot=3,
        plugins=manager,
        template=STYLE,
        description="The following are multiple choice questions (with answers) about math.\n\n",
        **FIELDS,
    )
    assert out.text == (
        "The following are multiple choice questions (with answers) about math.\n\n"
        "What is 15% of 200?\nA. 15\nB. 20\nC. 30\nD. 35\nAnswer: C"
        "\n\n"
        "Which planet is largest?\nA. Mars\nB. Jupiter\nC. Venus\nAnswer: B"
        "\n\n"
        "Pick the prime.\nA. 4\nB. 6\nC. 8\nD. 9\nE. 11\nAnswer: E"
        "\n\n"
        "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    )


def test_num_fewshot_in_the_task_and_shots_override(manager):
    config = {
        **FIELDS,
        "template": STYLE,
        "data": {"test": [RECORD], "dev": DEV},
        "fewshot_split": "dev",
        "num_fewshot": 2,
    }
    [two] = prompt_style.load_task(config, plugins=manager).render()
    assert two.text.count("Answer:") == 3
    [zero] = prompt_style.load_task(config, plugins=manager, shots=0).render()
    assert zero.text == "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"


def test_task_delimiters(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=DEV,
        num_fewshot=2,
        plugins=manager,
        template=STYLE,
        target_delimiter="",
        fewshot_delimiter="\n###\n",
        **FIELDS,
    )
    assert out.text == (
        "What is 15% of 200?\nA. 15\nB. 20\nC. 30\nD. 35\nAnswer:C"
        "\n###\n"
        "Which planet is largest?\nA. Mars\nB. Jupiter\nC. Venus\nAnswer:B"
        "\n###\n"
        "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    )
    assert out.continuations == ("A", "B", "C", "D")


def test_few_shot_from_the_evaluated_split_skips_the_record_itself(manager):
    records = [
        {"question": "Q0", "choices": ["x", "y"], "answer": 0},
        {"question": "Q1", "choices": ["x", "y"], "answer": 1},
        {"question": "Q2", "choices": ["x", "y"], "answer": 1},
    ]
    out = prompt_style.render_records(records, num_fewshot=1, plugins=manager, template=STYLE, **FIELDS)
    assert [o.text for o in out] == [
        "Q1\nA. x\nB. y\nAnswer: B\n\nQ0\nA. x\nB. y\nAnswer:",
        "Q0\nA. x\nB. y\nAnswer: A\n\nQ1\nA. x\nB. y\nAnswer:",
        "Q0\nA. x\nB. y\nAnswer: A\n\nQ2\nA. x\nB. y\nAnswer:",
    ]
    assert [o.target for o in out] == [0, 1, 1]


def test_few_shot_as_messages(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=DEV[:1],
        num_fewshot=1,
        plugins=manager,
        meta="messages",
        template=STYLE,
        description="About math.",
        **FIELDS,
    )
    assert out.text is None
    assert out.messages == [
        {"role": "system", "content": "About math."},
        {"role": "user", "content": "What is 15% of 200?\nA. 15\nB. 20\nC. 30\nD. 35\nAnswer:"},
        {"role": "assistant", "content": "C"},
        {"role": "user", "content": "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"},
    ]


# -- a YAML task file -----------------------------------------------------------


def test_yaml_task_file(tmp_path, manager):
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DEV), encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "task: tiny_mmlu\n"
        "data:\n  test: test.jsonl\n  dev: dev.jsonl\n"
        "fewshot_split: dev\n"
        "doc_to_text: question\n"
        'doc_to_choice: "{{choices}}"\n'
        "doc_to_target: answer\n"
        "template:\n  template_type: mcq::mmlu\n"
        "num_fewshot: 1\n",
        encoding="utf-8",
    )
    loaded = prompt_style.load_task(path, plugins=manager)
    assert loaded.name == "tiny_mmlu"
    [out] = list(loaded.render())
    assert out.text == (
        "What is 15% of 200?\nA. 15\nB. 20\nC. 30\nD. 35\nAnswer: C\n\nWhat is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    )


# -- options --------------------------------------------------------------------


def test_option_overrides(manager):
    template = {
        "template_type": STYLE,
        "prefix": "Question: ",
        "choice_format": "({label}) {choice}",
        "answer_format": "({label})",
        "suffix": "Réponse :",
    }
    [out] = prompt_style.render_records(
        [RECORD], fewshot=DEV[:1], num_fewshot=1, plugins=manager, template=template, **FIELDS
    )
    assert out.text == (
        "Question: What is 15% of 200?\n(A) 15\n(B) 20\n(C) 30\n(D) 35\nRéponse : (C)\n\n"
        "Question: What is 2 + 2?\n(A) 3\n(B) 4\n(C) 5\n(D) 22\nRéponse :"
    )
    assert out.continuations == (" (A)", " (B)", " (C)", " (D)")
    assert out.target == 1


def test_choice_labels_option(manager):
    template = {"template_type": STYLE, "choice_labels": ["W", "X", "Y", "Z"]}
    [out] = prompt_style.render_records([{**RECORD, "answer": 2}], plugins=manager, template=template, **FIELDS)
    assert out.text == "What is 2 + 2?\nW. 3\nX. 4\nY. 5\nZ. 22\nAnswer:"
    assert out.continuations == (" W", " X", " Y", " Z")
    assert out.target == 2


def test_layout_options(manager):
    template = {
        "template_type": STYLE,
        "choices_header": "Choices:\n",
        "choice_delimiter": " | ",
        "question_choice_delimiter": "\n\n",
        "suffix": "",
    }
    [out] = prompt_style.render_records([RECORD], plugins=manager, template=template, **FIELDS)
    assert out.text == "What is 2 + 2?\n\nChoices:\nA. 3 | B. 4 | C. 5 | D. 22"


def test_show_choices_false(manager):
    template = {"template_type": STYLE, "show_choices": False}
    [out] = prompt_style.render_records([RECORD], plugins=manager, template=template, **FIELDS)
    assert out.text == "What is 2 + 2?\nAnswer:"
    assert out.continuations == (" A", " B", " C", " D")


def test_unknown_option_says_did_you_mean(manager):
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": {"template_type": STYLE, "sufix": "A:"}}
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.load_task(config, plugins=manager)
    err = caught.value
    assert err.key == "template.sufix"
    assert "has no option 'sufix'" in str(err)
    assert "did you mean 'suffix'?" in str(err)


def test_unknown_option_in_a_yaml_file_names_file_and_line(tmp_path, manager):
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "data: test.jsonl\n"
        "doc_to_text: question\n"
        'doc_to_choice: "{{choices}}"\n'
        "doc_to_target: answer\n"
        "template:\n"
        "  template_type: mcq::mmlu\n"
        "  choice_fromat: '{label}) {choice}'\n",
        encoding="utf-8",
    )
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.load_task(path, plugins=manager)
    err = caught.value
    assert (err.file, err.key) == (str(path), "template.choice_fromat")
    assert err.line in (5, 7)  # the option's line (7) or, today, the line of `template:` (5)
    assert str(err).startswith(f"{path}:{err.line}: template.choice_fromat: ")
    assert "(did you mean 'choice_format'" in str(err)  # the closest name comes first


def test_unknown_option_in_a_yaml_file_names_the_options_own_line(tmp_path, manager):
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "data: test.jsonl\ndoc_to_text: question\ntemplate:\n  template_type: mcq::mmlu\n  sufix: 'A:'\n",
        encoding="utf-8",
    )
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.load_task(path, plugins=manager)
    assert caught.value.line == 5


def test_option_of_the_wrong_type(manager):
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": {"template_type": STYLE, "suffix": 3}}
    with pytest.raises(prompt_style.OptionError, match="option 'suffix' must be str"):
        prompt_style.load_task(config, plugins=manager)


def test_bad_format_field(manager):
    template = {"template_type": STYLE, "choice_format": "{lable}. {choice}"}
    with pytest.raises(prompt_style.OptionError, match="unknown field"):
        prompt_style.load_task({**FIELDS, "data": {"test": [RECORD]}, "template": template}, plugins=manager)


def test_more_choices_than_labels(manager):
    template = {"template_type": STYLE, "choice_labels": ["A", "B"]}
    with pytest.raises(prompt_style.StyleError) as caught:
        prompt_style.render_records([RECORD], plugins=manager, template=template, **FIELDS)
    assert "4 choices but only 2 choice labels" in str(caught.value)
