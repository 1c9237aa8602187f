"""Tests of prompt-style-cloze: ``cloze``, ``cloze::pure``, ``cloze::qa`` and ``cloze::options``,
through the public API only.

Every test gets a fresh plugin manager and renders a few records held in memory
with ``prompt_style.render_records`` (only the tests of YAML task files write
files, in ``tmp_path``). ``cloze`` is the fill-in-the-blank template of
lm-evaluation-harness's template system (``{question} ______`` and the labelled
options on one line), ``cloze::pure`` the same without options, ``cloze::qa``
lm-evaluation-harness's ARC layout ``Question: {question}\\nAnswer:`` and
``cloze::options`` that layout with the labelled options listed. All are scored on
the choice texts themselves (`` {choice}``).
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest

import prompt_style

DIST = "prompt-style-cloze"
PLUGIN = "cloze"
STYLES = ["cloze", "cloze::options", "cloze::pure", "cloze::qa"]
HERE = Path(__file__).resolve().parent


# -- the manager and the records ------------------------------------------------


@pytest.fixture
def manager() -> prompt_style.PluginManager:
    """A fresh manager per test; environ={} so PROMPT_STYLE_* variables of the shell do not leak in."""
    return prompt_style.create_plugin_manager(environ={})


# The task keys of every test but the YAML ones; each test names its style (``template=``).
FIELDS = {"task": "tiny", "doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"}

RECORD = {"question": "Which gas do plants absorb?", "choices": ["oxygen", "carbon dioxide", "helium"], "answer": 1}
TRAIN = [
    {"question": "What do bees make?", "choices": ["honey", "silk"], "answer": 0},
    {"question": "Where do fish live?", "choices": ["trees", "deserts", "water", "clouds"], "answer": "water"},
]


# -- discovery ------------------------------------------------------------------


def test_discovered_through_its_entry_point(manager):
    pyproject = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.MULTILINE).group(1)
    [info] = [p for p in manager.plugins if p.name == PLUGIN]
    assert info.distribution == DIST
    assert info.version == metadata.version(DIST) == declared
    assert info.module == "prompt_style_cloze"
    assert info.status == "loaded" and not info.builtin and not info.errors
    entry_points = [ep for ep in metadata.distribution(DIST).entry_points if ep.group == "prompt_style"]
    assert [(ep.name, ep.value) for ep in entry_points] == [(PLUGIN, "prompt_style_cloze")]


@pytest.mark.parametrize("style", STYLES)
def test_resolve_attributes_the_styles_to_the_distribution(manager, style):
    provider = manager.resolve("format_prompt", style)
    assert provider.describe() == {
        "hook": "format_prompt",
        "name": style,
        "plugin": PLUGIN,
        "distribution": DIST,
        "version": metadata.version(DIST),
    }


def test_provides_exactly_four_styles(manager):
    [row] = [r for r in manager.describe() if r["name"] == PLUGIN]
    assert row["hooks"] == {
        "format_prompt": STYLES,
        "declare_axes": ["cloze", "cloze::options"],
        "task_examples": ["arc"],
    }


def test_disabled_plugin_names_the_distribution_to_install():
    manager = prompt_style.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": PLUGIN})
    for style in STYLES:
        with pytest.raises(prompt_style.PluginNotFoundError) as caught:
            manager.resolve("format_prompt", style)
        # installed but blocked: the error names the distribution and says it is blocked
        assert DIST in str(caught.value) and "blocked" in str(caught.value)


# -- cloze::qa (lm-evaluation-harness's ARC layout) ------------------------------


def test_zero_shot_exact_text(manager):
    [out] = prompt_style.render_records([RECORD], plugins=manager, template="cloze::qa", **FIELDS)
    assert out.text == "Question: Which gas do plants absorb?\nAnswer:"
    assert out.continuations == (" oxygen", " carbon dioxide", " helium")
    assert out.target == 1
    loaded = prompt_style.load_task({**FIELDS, "template": "cloze::qa", "data": {"test": [RECORD]}}, plugins=manager)
    assert loaded.plugins["format_prompt"]["distribution"] == DIST


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_number_of_choices(manager, n):
    choices = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][:n]
    record = {"question": "Which day?", "choices": choices, "answer": n - 1}
    [out] = prompt_style.render_records([record], plugins=manager, template="cloze::qa", **FIELDS)
    assert out.text == "Question: Which day?\nAnswer:"
    assert out.continuations == (" Mon", " Tue", " Wed", " Thu", " Fri", " Sat", " Sun")[:n]
    assert out.target == n - 1


@pytest.mark.parametrize(
    ("answer", "index"),
    [(2, 2), ("helium", 2), ("carbon dioxide", 1)],
    ids=["int", "choice-text", "choice-with-space"],
)
def test_target_resolves_to_an_index(manager, answer, index):
    [out] = prompt_style.render_records([{**RECORD, "answer": answer}], plugins=manager, template="cloze::qa", **FIELDS)
    assert out.target == index


def test_a_template_digit_string_is_an_index(manager):
    keys = {**FIELDS, "doc_to_target": "{{answer}}"}
    [out] = prompt_style.render_records([{**RECORD, "answer": "0"}], plugins=manager, template="cloze::qa", **keys)
    assert out.target == 0


def test_target_that_matches_nothing_is_a_style_error(manager):
    with pytest.raises(prompt_style.StyleError) as caught:
        prompt_style.render_records([{**RECORD, "answer": "nitrogen"}], plugins=manager, template="cloze::qa", **FIELDS)
    assert caught.value.key == "doc_to_target"
    assert "'oxygen', 'carbon dioxide', 'helium'" in str(caught.value)


def test_non_string_choices_are_shown_as_text(manager):
    record = {"question": "2 + 2 =", "choices": [3, 4, 4.5], "answer": 1}
    [out] = prompt_style.render_records([record], plugins=manager, template="cloze::qa", **FIELDS)
    assert out.continuations == (" 3", " 4", " 4.5")
    assert out.target == 1


def test_description_comes_first(manager):
    [out] = prompt_style.render_records(
        [RECORD], plugins=manager, template="cloze::qa", description="Science questions.\n\n", **FIELDS
    )
    assert out.text == "Science questions.\n\nQuestion: Which gas do plants absorb?\nAnswer:"


def test_few_shot_answers_are_the_choice_texts(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=TRAIN,
        num_fewshot=2,
        plugins=manager,
        template="cloze::qa",
        description="Science.\n\n",
        **FIELDS,
    )
    assert out.text == (
        "Science.\n\n"
        "Question: What do bees make?\nAnswer: honey"
        "\n\n"
        "Question: Where do fish live?\nAnswer: water"
        "\n\n"
        "Question: Which gas do plants absorb?\nAnswer:"
    )
    assert out.continuations == (" oxygen", " carbon dioxide", " helium")
    assert out.target == 1


def test_few_shot_as_messages(manager):
    [out] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN[:1], num_fewshot=1, plugins=manager, meta="messages", template="cloze::qa", **FIELDS
    )
    assert out.messages == [
        {"role": "user", "content": "Question: What do bees make?\nAnswer:"},
        {"role": "assistant", "content": "honey"},
        {"role": "user", "content": "Question: Which gas do plants absorb?\nAnswer:"},
    ]


# -- cloze (lm-evaluation-harness's template system) -----------------------------

SEED_RECORD = {"question": "The capital of France is", "choices": ["London", "Paris", "Berlin"], "answer": 1}


def test_cloze_is_the_blank_with_options(manager):
    [out] = prompt_style.render_records([SEED_RECORD], plugins=manager, template="cloze", **FIELDS)
    assert out.text == "The capital of France is ______\n\nOptions: A. London B. Paris C. Berlin"
    assert out.continuations == (" London", " Paris", " Berlin")
    assert out.target == 1


def test_pure_cloze_is_the_blank_alone(manager):
    [out] = prompt_style.render_records([SEED_RECORD], plugins=manager, template="cloze::pure", **FIELDS)
    assert out.text == "The capital of France is ______"
    assert out.continuations == (" London", " Paris", " Berlin")
    assert out.target == 1


def test_cloze_few_shot_answers_fill_the_blank_with_the_text(manager):
    [out] = prompt_style.render_records(
        [SEED_RECORD], fewshot=TRAIN[:1], num_fewshot=1, plugins=manager, template="cloze::pure", **FIELDS
    )
    assert out.text == "What do bees make? ______ honey\n\nThe capital of France is ______"


def test_blank_marker_and_the_seed_option_names(manager):
    template = {"template_type": "cloze", "blank_marker": "[MASK]", "choices_prefix": "\nChoose: "}
    [out] = prompt_style.render_records([SEED_RECORD], plugins=manager, template=template, **FIELDS)
    assert out.text == "The capital of France is [MASK]\n\nChoose: A. London B. Paris C. Berlin"


def test_inline_blank(manager):
    record = {**SEED_RECORD, "question": "______ is the capital of France."}
    template = {"template_type": "cloze::pure", "blank_position": "inline"}
    [out] = prompt_style.render_records([record], plugins=manager, template=template, **FIELDS)
    assert out.text == "______ is the capital of France."
    with pytest.raises(prompt_style.StyleError) as caught:
        prompt_style.render_records([SEED_RECORD], plugins=manager, template=template, **FIELDS)
    assert "has no blank marker '______'" in str(caught.value)
    assert "record 0" in str(caught.value)


def test_unknown_blank_position(manager):
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": {"template_type": "cloze", "blank_position": "mid"}}
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.load_task(config, plugins=manager)
    assert "blank_position must be one of end, inline" in str(caught.value)


def test_an_option_and_its_seed_name_together_is_an_error(manager):
    template = {"template_type": "cloze", "choices_prefix": "X", "choices_header": "Y"}
    with pytest.raises(prompt_style.OptionError, match="two names of one option"):
        prompt_style.load_task({**FIELDS, "data": {"test": [RECORD]}, "template": template}, plugins=manager)


def test_cloze_labels_stop_at_z_but_pure_cloze_takes_any_number(manager):
    record = {"question": "Pick", "choices": [f"c{i}" for i in range(27)], "answer": 26}
    [out] = prompt_style.render_records([record], plugins=manager, template="cloze::pure", **FIELDS)
    assert len(out.continuations) == 27 and out.target == 26
    with pytest.raises(prompt_style.StyleError, match="27 choices"):
        prompt_style.render_records([record], plugins=manager, template="cloze", **FIELDS)


# -- cloze::options -------------------------------------------------------------


def test_options_variant_exact_text(manager):
    [out] = prompt_style.render_records([RECORD], plugins=manager, template="cloze::options", **FIELDS)
    assert out.text == (
        "Question: Which gas do plants absorb?\nOptions:\nA. oxygen\nB. carbon dioxide\nC. helium\nAnswer:"
    )
    assert out.continuations == (" oxygen", " carbon dioxide", " helium")
    assert out.target == 1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_options_variant_number_of_choices(manager, n):
    choices = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][:n]
    record = {"question": "Which day?", "choices": choices, "answer": 0}
    [out] = prompt_style.render_records([record], plugins=manager, template="cloze::options", **FIELDS)
    listed = "\n".join(f"{label}. {day}" for label, day in zip("ABCDEFG", choices))
    assert out.text == "Question: Which day?\nOptions:\n" + listed + "\nAnswer:"
    assert out.continuations == tuple(" " + c for c in choices)


def test_options_variant_few_shot(manager):
    [out] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN, num_fewshot=1, plugins=manager, template="cloze::options", **FIELDS
    )
    assert out.text == (
        "Question: What do bees make?\nOptions:\nA. honey\nB. silk\nAnswer: honey"
        "\n\n"
        "Question: Which gas do plants absorb?\nOptions:\nA. oxygen\nB. carbon dioxide\nC. helium\nAnswer:"
    )


# -- switching between multiple choice and cloze (in a YAML task file) ----------


YAML_TASK = """\
task: switch
data:
  test: test.jsonl
  train: train.jsonl
doc_to_text: question
doc_to_choice: "{{choices}}"
doc_to_target: answer
template: mcq
num_fewshot: 1
"""


def _yaml_task(tmp_path: Path, template: str) -> Path:
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TRAIN), encoding="utf-8")
    path = tmp_path / f"task-{template.replace(':', '_')}.yaml"
    path.write_text(YAML_TASK.replace("template: mcq\n", f"template: {template}\n"), encoding="utf-8")
    return path


def test_one_word_switches_builtin_mcq_to_cloze(tmp_path, manager):
    [mcq] = list(prompt_style.load_task(_yaml_task(tmp_path, "mcq"), plugins=manager).render())
    [cloze] = list(prompt_style.load_task(_yaml_task(tmp_path, "cloze"), plugins=manager).render())
    [qa] = list(prompt_style.load_task(_yaml_task(tmp_path, "cloze::qa"), plugins=manager).render())
    assert mcq.text == (
        "What do bees make?\nA. honey\nB. silk\nAnswer: A\n\n"
        "Which gas do plants absorb?\nA. oxygen\nB. carbon dioxide\nC. helium\nAnswer:"
    )
    assert mcq.continuations == (" A", " B", " C")
    assert cloze.text == (
        "What do bees make? ______\n\nOptions: A. honey B. silk honey\n\n"
        "Which gas do plants absorb? ______\n\nOptions: A. oxygen B. carbon dioxide C. helium"
    )
    assert qa.text == "Question: What do bees make?\nAnswer: honey\n\nQuestion: Which gas do plants absorb?\nAnswer:"
    assert cloze.continuations == qa.continuations == (" oxygen", " carbon dioxide", " helium")
    assert mcq.target == cloze.target == qa.target == 1


def test_one_word_switches_mcq_mmlu_to_cloze(tmp_path, manager):
    if "mcq::mmlu" not in manager.names("format_prompt"):
        pytest.skip("prompt-style-mmlu is not installed")
    [mmlu] = list(prompt_style.load_task(_yaml_task(tmp_path, "mcq::mmlu"), plugins=manager).render())
    [cloze] = list(prompt_style.load_task(_yaml_task(tmp_path, "cloze::qa"), plugins=manager).render())
    assert mmlu.text == (
        "What do bees make?\nA. honey\nB. silk\nAnswer: A\n\n"
        "Which gas do plants absorb?\nA. oxygen\nB. carbon dioxide\nC. helium\nAnswer:"
    )
    assert mmlu.continuations == (" A", " B", " C")
    assert cloze.text == (
        "Question: What do bees make?\nAnswer: honey\n\nQuestion: Which gas do plants absorb?\nAnswer:"
    )
    assert cloze.continuations == (" oxygen", " carbon dioxide", " helium")
    assert mmlu.target == cloze.target == 1


def test_style_argument_switches_too(tmp_path, manager):
    path = _yaml_task(tmp_path, "mcq")
    [out] = list(prompt_style.load_task(path, plugins=manager, style="cloze::qa", shots=0).render())
    assert out.text == "Question: Which gas do plants absorb?\nAnswer:"
    [out] = list(prompt_style.load_task(path, plugins=manager, style="cloze::pure", shots=0).render())
    assert out.text == "Which gas do plants absorb? ______"


# -- options --------------------------------------------------------------------


def test_option_overrides(manager):
    template = {"template_type": "cloze::qa", "prefix": "Q: ", "suffix": "A:"}
    [out] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN[:1], num_fewshot=1, plugins=manager, template=template, **FIELDS
    )
    assert out.text == "Q: What do bees make?\nA: honey\n\nQ: Which gas do plants absorb?\nA:"
    assert out.continuations == (" oxygen", " carbon dioxide", " helium")


def test_options_variant_overrides(manager):
    template = {
        "template_type": "cloze::options",
        "choices_header": "Choose one of:\n",
        "choice_format": "- {choice}",
    }
    [out] = prompt_style.render_records([RECORD], plugins=manager, template=template, **FIELDS)
    assert out.text == (
        "Question: Which gas do plants absorb?\nChoose one of:\n- oxygen\n- carbon dioxide\n- helium\nAnswer:"
    )
    assert out.continuations == (" oxygen", " carbon dioxide", " helium")


def test_show_choices_turns_cloze_qa_into_the_options_layout(manager):
    template = {"template_type": "cloze::qa", "show_choices": True, "choices_header": "Options:\n"}
    [plain] = prompt_style.render_records([RECORD], plugins=manager, template=template, **FIELDS)
    [options] = prompt_style.render_records([RECORD], plugins=manager, template="cloze::options", **FIELDS)
    assert plain.text == options.text
    assert plain.continuations == options.continuations


@pytest.mark.parametrize("style", STYLES)
def test_unknown_option_says_did_you_mean(manager, style):
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": {"template_type": style, "prefx": "Q: "}}
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.load_task(config, plugins=manager)
    assert caught.value.key == "template.prefx"
    assert f"style '{style}' has no option 'prefx'" in str(caught.value)
    assert "(did you mean 'prefix'" in str(caught.value)


def test_option_of_the_wrong_type(manager):
    config = {**FIELDS, "data": {"test": [RECORD]}, "template": {"template_type": "cloze", "prefix": ["Q: "]}}
    with pytest.raises(prompt_style.OptionError, match="option 'prefix' must be str"):
        prompt_style.load_task(config, plugins=manager)
