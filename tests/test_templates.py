"""lm-evaluation-harness's template system (seed 000) by its own names.

``TemplateConfig``, ``MCQTemplateConfig``, ``ClozeTemplateConfig``, ``TemplateFactory``
and ``process_field`` are a face over the style plugins: every prompt they make is the
installed style's, and ``to_dict()`` is a task file's ``template:`` mapping. The seed's
usage examples 1 to 4 are here with exactly the outputs the seed shows.
"""

from __future__ import annotations

import dataclasses
import pickle
import textwrap
from pathlib import Path

import pytest

import prompt_style
from prompt_style import (
    ClozeTemplateConfig,
    FieldError,
    MCQTemplateConfig,
    OptionError,
    PluginNotFoundError,
    StyleError,
    TaskConfig,
    TemplateConfig,
    TemplateFactory,
    load_task,
    process_field,
)

CAPITAL = {
    "question": "What is the capital of France?",
    "choices": {"text": ["London", "Paris", "Berlin", "Madrid"], "label": ["A", "B", "C", "D"]},
    "answerKey": "B",
}
CAPITAL_PROMPT = "What is the capital of France?\nA. London\nB. Paris\nC. Berlin\nD. Madrid\nAnswer:"


def _render(task, records, manager, **more):
    return list(load_task(task, plugins=manager, data={"test": records}, **more).render())


# -- Example 1: basic MMLU-style MCQ --------------------------------------------------

EXAMPLE_1 = """\
task: arc_easy
doc_to_text: "{{question}}"
doc_to_choice: "{{choices.text}}"
doc_to_target: "{{choices.label.index(answerKey)}}"
template:
  template_type: mcq::mmlu
"""


def test_example_1_task_file(tmp_path, pm_all):
    path = tmp_path / "arc_easy.yaml"
    path.write_text(EXAMPLE_1, encoding="utf-8")
    [result] = _render(path, [CAPITAL], pm_all)
    assert result.text == CAPITAL_PROMPT  # doc_to_text(doc)
    assert [c.strip() for c in result.continuations] == ["A", "B", "C", "D"]  # doc_to_choice(doc)
    assert result.target == 1  # doc_to_target(doc): index of "B" in labels


def test_example_1_wrapped_callables(pm_all):
    template = TemplateFactory.from_dict({"template_type": "mcq::mmlu"}, plugins=pm_all)
    doc_to_text = template.wrap_doc_to_text("{{question}}", "{{choices.text}}")
    doc_to_choice = template.wrap_doc_to_choice("{{choices.text}}")
    assert doc_to_text(CAPITAL) == CAPITAL_PROMPT
    assert doc_to_choice(CAPITAL) == ["A", "B", "C", "D"]
    assert process_field(CAPITAL, "{{choices.label.index(answerKey)}}") == 1


def test_example_1_as_written_with_output_type(tmp_path, pm_all):
    # The seed's YAML also says output_type: multiple_choice, an lm-evaluation-harness key
    # (read by the task files once they know output_type, or by a reader of lm-eval files).
    knows_output_type = "output_type" in {f.name for f in dataclasses.fields(TaskConfig)}
    if not knows_output_type and not set(pm_all.names("read_task")) - {"native", "task-template"}:
        pytest.skip("output_type is not a task key yet")
    path = tmp_path / "arc_easy.yaml"
    path.write_text(EXAMPLE_1 + "output_type: multiple_choice\n", encoding="utf-8")
    [result] = _render(path, [CAPITAL], pm_all)
    assert result.text == CAPITAL_PROMPT
    assert result.continuations == (" A", " B", " C", " D")
    assert result.target == 1


# -- Example 2: custom template -------------------------------------------------------

EXAMPLE_2 = """\
task: custom_mcq
doc_to_text: "{{question}}"
doc_to_choice: "{{options}}"
template:
  template_type: mcq
  choice_labels: ["(a)", "(b)", "(c)", "(d)"]
  choice_format: "{label} {choice}"
  suffix: "Select one:"
  choice_delimiter: " | "
"""
OPTIONS = {"question": "Question text", "options": ["choice1", "choice2", "choice3", "choice4"]}
EXAMPLE_2_PROMPT = "Question text\n(a) choice1 | (b) choice2 | (c) choice3 | (d) choice4\nSelect one:"


def test_example_2_task_file(tmp_path, pm):
    path = tmp_path / "custom_mcq.yaml"
    path.write_text(EXAMPLE_2, encoding="utf-8")
    [result] = _render(path, [OPTIONS], pm)
    assert result.text == EXAMPLE_2_PROMPT
    assert result.continuations == (" (a)", " (b)", " (c)", " (d)")
    assert result.target is None  # the example has no doc_to_target


def test_example_2_from_python(pm):
    template = TemplateFactory.from_dict(
        {
            "template_type": "mcq",
            "choice_labels": ["(a)", "(b)", "(c)", "(d)"],
            "choice_format": "{label} {choice}",
            "suffix": "Select one:",
            "choice_delimiter": " | ",
        },
        plugins=pm,
    )
    assert isinstance(template, MCQTemplateConfig)
    assert template.wrap_doc_to_text("{{question}}", "{{options}}")(OPTIONS) == EXAMPLE_2_PROMPT
    assert template.wrap_doc_to_choice("{{options}}")(OPTIONS) == ["(a)", "(b)", "(c)", "(d)"]


def test_example_2_a_fifth_choice_is_an_error_naming_the_record(tmp_path, pm):
    # The seed zips labels with choices and silently drops "choice5".
    path = tmp_path / "custom_mcq.yaml"
    path.write_text(EXAMPLE_2, encoding="utf-8")
    five = {"question": "Five?", "options": ["choice1", "choice2", "choice3", "choice4", "choice5"]}
    task = load_task(path, plugins=pm, data={"test": [OPTIONS, five]})
    results = task.render()
    assert next(results).text == EXAMPLE_2_PROMPT
    with pytest.raises(StyleError) as caught:
        next(results)
    message = str(caught.value)
    assert "record 1" in message and "5 choices but only 4 choice labels" in message
    assert str(path) in message
    template = TemplateFactory.from_dict({"template_type": "mcq", "choice_labels": ["(a)", "(b)"]}, plugins=pm)
    with pytest.raises(StyleError, match="3 choices but only 2 choice labels"):
        template.wrap_doc_to_choice("options")({"options": ["x", "y", "z"]})


# -- Example 3: MCQ to cloze ----------------------------------------------------------

FRANCE = {"question": "The capital of France is", "choices": ["London", "Paris", "Berlin"], "answer": 1}
CLOZE_PROMPT = "The capital of France is ______\n\nOptions: A. London B. Paris C. Berlin"


def _yaml(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_example_3_same_extraction_different_format(tmp_path, pm_all):
    mcq = _yaml(
        tmp_path,
        "task_mcq",
        """\
        task: task_mcq
        doc_to_text: "{{question}}"
        doc_to_choice: "{{choices}}"
        template:
          template_type: mcq::mmlu
        """,
    )
    cloze = _yaml(
        tmp_path,
        "task_cloze",
        """\
        task: task_cloze
        doc_to_text: "{{question}}"
        doc_to_choice: "{{choices}}"
        template:
          template_type: cloze
        """,
    )
    [as_mcq] = _render(mcq, [FRANCE], pm_all)
    [as_cloze] = _render(cloze, [FRANCE], pm_all)
    assert as_mcq.text == "The capital of France is\nA. London\nB. Paris\nC. Berlin\nAnswer:"
    assert as_mcq.continuations == (" A", " B", " C")
    assert as_cloze.text == CLOZE_PROMPT
    assert as_cloze.continuations == (" London", " Paris", " Berlin")


def test_example_3_programmatic_conversion(pm_all):
    # Load MCQ template
    mcq_template = TemplateFactory.from_dict({"template_type": "mcq::mmlu"}, plugins=pm_all)
    # Convert to cloze
    cloze_template = mcq_template.to_cloze()
    assert isinstance(cloze_template, ClozeTemplateConfig)
    # Use in config
    config = TaskConfig(
        doc_to_text="{{question}}",
        doc_to_choice="{{choices}}",
        template=cloze_template.to_dict(),
    )
    assert cloze_template.to_dict() == {"template_type": "cloze"}
    [result] = _render(config, [FRANCE], pm_all)
    assert result.text == CLOZE_PROMPT == cloze_template.format_prompt(FRANCE["question"], FRANCE["choices"])
    assert result.continuations == (" London", " Paris", " Berlin")


# -- Example 4: callables -------------------------------------------------------------


def extract_question(doc):
    """Custom question extractor."""
    return f"Q: {doc['question'].upper()}"


def extract_choices(doc):
    """Custom choice extractor."""
    return [c.strip() for c in doc["choices"]]


def test_example_4_callables(pm_all):
    config = TaskConfig(
        task="custom_task",
        doc_to_text=extract_question,  # Callable
        doc_to_choice=extract_choices,  # Callable
        template={"template_type": "mcq::mmlu"},
    )
    doc = {"question": "What is 2+2?", "choices": [" 3", "4 ", "5"], "answer": 1}
    [result] = _render(config, [doc], pm_all)
    assert result.text == "Q: WHAT IS 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"
    assert result.continuations == (" A", " B", " C")
    template = config.template_config
    assert template == TemplateFactory.create_mmlu_style()
    assert template.wrap_doc_to_text(extract_question, extract_choices)(doc) == result.text
    assert template.wrap_doc_to_choice(extract_choices)(doc) == ["A", "B", "C"]


# -- template: mcq / template: cloze as plain strings ---------------------------------


@pytest.mark.parametrize(
    "word, preset", [("mcq", "create_mmlu_style"), ("cloze", "create_cloze_with_options")], ids=["mcq", "cloze"]
)
def test_one_word_templates_are_the_seeds_presets(pm_all, word, preset):
    config = TaskConfig(doc_to_text="question", doc_to_choice="choices", template=word)
    template = getattr(TemplateFactory, preset)(plugins=pm_all)
    [result] = _render(config, [FRANCE], pm_all)
    assert result.text == template.format_prompt(FRANCE["question"], FRANCE["choices"])
    assert [c[1:] for c in result.continuations] == template.answers(FRANCE["choices"])
    assert config.template_config.to_dict() == {"template_type": word}


def test_the_presets(pm_all):
    q, choices = "Q?", ["x", "y"]
    expected = {
        "create_mmlu_style": ("mcq::mmlu", "Q?\nA. x\nB. y\nAnswer:", ["A", "B"]),
        "create_gpqa_style": (
            "mcq::gpqa",
            "What is the correct answer to this question:Q?\nChoices:\n(A) x\n(B) y\nAnswer:",
            ["(A)", "(B)"],
        ),
        "create_numbered_style": ("mcq", "Q?\n1. x\n2. y\nAnswer:", ["1", "2"]),
        "create_cloze_with_options": ("cloze", "Q? ______\n\nOptions: A. x B. y", ["x", "y"]),
        "create_pure_cloze": ("cloze::pure", "Q? ______", ["x", "y"]),
    }
    for name, (style, text, answers) in expected.items():
        template = getattr(TemplateFactory, name)(plugins=pm_all)
        assert template.template_type == style, name
        assert template.format_prompt(q, choices) == text, name
        assert template.answers(choices) == answers, name


def test_numbered_style_with_a_number_of_choices(pm):
    template = TemplateFactory.create_numbered_style(4, plugins=pm)
    assert template.choice_labels == ["1", "2", "3", "4"]
    assert template.format_prompt("Q", ["a", "b"]) == "Q\n1. a\n2. b\nAnswer:"
    with pytest.raises(StyleError, match="5 choices but only 4"):
        template.format_prompt("Q", list("abcde"))
    with pytest.raises(OptionError):
        TemplateFactory.create_numbered_style(0, plugins=pm)


# -- a face over the plugins -----------------------------------------------------------


def _family_styles(manager):
    return [n for n in manager.names("format_prompt") if n.split("::")[0] in ("mcq", "cloze")]


def test_every_installed_mcq_and_cloze_style_round_trips(pm_all):
    styles = _family_styles(pm_all)
    assert {"mcq", "mcq::mmlu", "mcq::gpqa", "mcq::numbered", "cloze", "cloze::pure", "cloze::qa"} <= set(styles)
    for name in styles:
        template = TemplateFactory.from_dict({"template_type": name}, plugins=pm_all)
        assert template.to_dict() == {"template_type": name}
        assert TemplateFactory.from_dict(template.to_dict(), plugins=pm_all) == template
        changed = dataclasses.replace(template, suffix="Pick:", choice_labels=["p", "q", "r"])
        assert changed.to_dict() == {"template_type": name, "suffix": "Pick:", "choice_labels": ["p", "q", "r"]}
        assert TemplateFactory.from_dict(changed.to_dict(), plugins=pm_all) == changed


def test_format_prompt_is_what_a_task_renders(pm_all):
    record = {"q": "Which one?", "c": ["x", "y", "z"], "a": 2}
    for name in _family_styles(pm_all):
        template = TemplateFactory.from_dict({"template_type": name, "prefix": ">> "}, plugins=pm_all)
        task = {"doc_to_text": "q", "doc_to_choice": "c", "doc_to_target": "a", "template": template.to_dict()}
        [result] = _render(task, [record], pm_all)
        assert result.text == template.format_prompt(record["q"], record["c"]), name
        assert [c[1:] for c in result.continuations] == template.answers(record["c"]), name
        assert result.target == 2


def test_a_template_config_is_a_task_template(pm_all):
    template = TemplateFactory.create_gpqa_style(plugins=pm_all)
    task = {"doc_to_text": "q", "doc_to_choice": "c", "template": template}
    [result] = _render(task, [{"q": "Q?", "c": ["x", "y"]}], pm_all)
    assert result.text == template.format_prompt("Q?", ["x", "y"])
    assert TaskConfig(doc_to_text="q", template=template).style_spec() == ("mcq::gpqa", {})


def test_a_third_party_style_is_found(jsonl, tmp_path):
    from prompt_style import ChoiceStyle, FormattedPrompt, Turn, choice_style, create_plugin_manager, hookimpl

    class Opaque:
        """A style that is not a ChoiceStyle."""

        def format(self, sample, shots):
            listed = "/".join(str(c) for c in sample.choices or ())
            return FormattedPrompt((Turn("user", f"{sample.question} [{listed}]"),), (" yes", " no"), sample.gold)

    class Plugin:
        @hookimpl
        def format_prompt(self):
            return {
                "mcq::mystyle": choice_style("mcq::mystyle", choice_format="{label}) {choice}", suffix="=>"),
                "cloze::opaque": lambda *, options, settings: Opaque(),
            }

    manager = create_plugin_manager(entry_points=False, environ={}, plugins=[("mine", Plugin())])
    mine = TemplateFactory.from_dict({"template_type": "mcq::mystyle"}, plugins=manager)
    assert isinstance(mine, MCQTemplateConfig)
    assert mine.choice_format == "{label}) {choice}" and mine.suffix == "=>"
    assert mine.format_prompt("Q", ["a", "b"]) == "Q\nA) a\nB) b\n=>"
    assert isinstance(mine._style(), ChoiceStyle)
    opaque = TemplateFactory.from_dict({"template_type": "cloze::opaque"}, plugins=manager)
    assert opaque.prefix is None and opaque.to_dict() == {"template_type": "cloze::opaque"}
    assert opaque.format_prompt("Q", ["a", "b"]) == "Q [a/b]"
    assert opaque.answers(["a", "b"]) == [" yes", " no"]


def test_an_unknown_style_lists_the_installed_ones(pm_all):
    with pytest.raises(PluginNotFoundError) as caught:
        TemplateFactory.from_dict({"template_type": "mcq::nonesuch"}, plugins=pm_all)
    message = str(caught.value)
    assert "unknown style 'mcq::nonesuch'" in message
    assert "installed styles: " in message
    for name in ("mcq", "mcq::gpqa", "cloze::qa", "passthrough"):
        assert name in message


def test_a_style_of_another_family(pm_all):
    with pytest.raises(OptionError, match="mcq and cloze styles only"):
        TemplateFactory.from_dict({"template_type": "passthrough"}, plugins=pm_all)
    with pytest.raises(OptionError, match="is for 'mcq' styles"):
        MCQTemplateConfig(template_type="cloze", plugins=pm_all)
    with pytest.raises(TypeError):
        TemplateConfig()


def test_option_errors(pm_all):
    with pytest.raises(OptionError) as caught:
        TemplateFactory.from_dict({"template_type": "mcq::mmlu", "sufix": "A:"}, plugins=pm_all)
    assert "did you mean 'suffix'" in str(caught.value)
    with pytest.raises(OptionError, match="suffix"):
        MCQTemplateConfig(suffix=3, plugins=pm_all)
    with pytest.raises(OptionError, match="two names of one option"):
        TemplateFactory.from_dict({"template_type": "cloze", "choices_prefix": "a", "choices_header": "b"})


def test_template_type_defaults_to_mcq(pm):
    assert TemplateFactory.from_dict({}, plugins=pm) == MCQTemplateConfig(plugins=pm)
    assert MCQTemplateConfig(plugins=pm).template_type == "mcq"


def test_seed_option_names_in_task_files(pm_all):
    task = {
        "doc_to_text": "q",
        "doc_to_choice": "c",
        "template": {"template_type": "mcq", "show_choices_in_prompt": False},
    }
    [result] = _render(task, [{"q": "Q?", "c": ["x", "y"]}], pm_all)
    assert result.text == "Q?\nAnswer:"
    hidden = TemplateFactory.from_dict(task["template"], plugins=pm_all)
    assert hidden.show_choices_in_prompt is False
    assert hidden.wrap_doc_to_text("q", "c")({"q": "Q?", "c": ["x", "y"]}) == "Q?\nAnswer:"
    cloze = TemplateFactory.from_dict({"template_type": "cloze", "choices_header": "\nPick: "}, plugins=pm_all)
    assert cloze.choices_prefix == "\nPick: "
    assert cloze.to_dict() == {"template_type": "cloze", "choices_prefix": "\nPick: "}


def test_conversions(pm_all):
    gpqa = TemplateFactory.create_gpqa_style(plugins=pm_all)
    cloze = gpqa.to_cloze()
    assert cloze.template_type == "cloze"
    assert cloze.prefix == gpqa.prefix and cloze.choice_format == gpqa.choice_format
    assert cloze.format_prompt("Q?", ["x", "y"]) == (
        "What is the correct answer to this question:Q? ______\n\nOptions: (A) x (B) y"
    )
    back = cloze.to_mcq(template_type="mcq::gpqa")
    assert back == gpqa
    # carried over: the MMLU prefix (none), so cloze::qa loses its "Question: "
    qa = TemplateFactory.create_mmlu_style(plugins=pm_all).to_cloze(template_type="cloze::qa", show_choices=False)
    assert qa.format_prompt("Q?", ["x"]) == "Q?\nAnswer:"
    assert TemplateFactory.convert_template(gpqa, "mcq") is gpqa
    assert TemplateFactory.convert_template(gpqa, "cloze") == cloze
    assert TemplateFactory.convert_template(cloze, "mcq") == cloze.to_mcq()
    with pytest.raises(OptionError):
        TemplateFactory.convert_template(gpqa, "essay")


def test_format_prompt_without_choices(pm_all):
    # the seed: choices are listed only when there are some
    assert TemplateFactory.create_mmlu_style(plugins=pm_all).format_prompt("Q?") == "Q?\nAnswer:"
    assert TemplateFactory.create_cloze_with_options(plugins=pm_all).format_prompt("Q?", []) == "Q? ______"


def test_mutating_a_field_changes_the_prompt(pm_all):
    template = TemplateFactory.create_mmlu_style(plugins=pm_all)
    assert template.format_prompt("Q?", ["x"]) == "Q?\nA. x\nAnswer:"
    template.suffix = "Pick:"
    assert template.format_prompt("Q?", ["x"]) == "Q?\nA. x\nPick:"
    assert template.to_dict() == {"template_type": "mcq::mmlu", "suffix": "Pick:"}


def test_a_template_config_pickles(pm_all):
    template = dataclasses.replace(TemplateFactory.create_gpqa_style(plugins=pm_all), suffix="=>")
    again = pickle.loads(pickle.dumps(template))
    assert again == template
    assert again.format_prompt("Q", ["a"]) == template.format_prompt("Q", ["a"])


def test_a_template_type_of_the_users_own(pm):
    # "Can I create my own template types? Extend TemplateConfig and implement the required methods."
    @dataclasses.dataclass(kw_only=True)
    class Shout(TemplateConfig):
        choice_labels: list = dataclasses.field(default_factory=lambda: ["1", "2"])

        def format_prompt(self, question, choices=None):
            return f"{str(question).upper()}! {' '.join(choices or ())}"

        def to_dict(self):
            return {"template_type": "shout"}

    shout = Shout()
    assert shout.wrap_doc_to_text("q", "c")({"q": "why", "c": ["a", "b"]}) == "WHY! a b"
    assert shout.wrap_doc_to_choice("c")({"c": ["a", "b"]}) == ["1", "2"]
    with pytest.raises(StyleError):
        shout.wrap_doc_to_choice("c")({"c": ["a", "b", "c"]})


def test_template_config_of_a_task(pm_all):
    assert TaskConfig(doc_to_text="q").template_config is None
    assert TaskConfig(doc_to_text="q", template="passthrough").template_config is None
    assert TaskConfig(doc_to_text="q", template={"suffix": "A:"}).template_config.to_dict() == {
        "template_type": "mcq",
        "suffix": "A:",
    }


def test_a_task_without_data_says_so(pm):
    with pytest.raises(prompt_style.TaskFileError, match="no data for the evaluated split 'test'"):
        load_task(TaskConfig(doc_to_text="q"), plugins=pm)


# -- process_field ---------------------------------------------------------------------

DOC = {"question": "Why?", "choices": {"text": ["a", "b"]}, "n": 3, "subject": "Geography"}


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("question", "Why?"),  # a field name
        ("{{question}}", "Why?"),  # one expression
        ("{{choices.text}}", ["a", "b"]),  # keeps its type (a list)
        ("{{n}}", 3),  # an int stays an int
        ("{{subject}}: {{question}}", "Geography: Why?"),  # a template renders to a string
        (lambda doc: doc["n"] * 2, 6),  # a callable
        (["x", "y"], ["x", "y"]),  # anything else is itself
        (7, 7),
    ],
)
def test_process_field(spec, expected):
    assert process_field(DOC, spec) == expected


def test_process_field_default_and_missing_fields():
    assert process_field(DOC, None, "dflt") == "dflt"
    with pytest.raises(FieldError) as caught:
        process_field(DOC, "questoin", "dflt")  # never a silent default
    assert "questoin" in str(caught.value) and "the record has: question" in str(caught.value)
    with pytest.raises(FieldError):
        process_field(DOC, "{{ missing }}")
