"""Styles: ``mcq`` (the MMLU layout) and ``passthrough``, and target resolution."""

from __future__ import annotations

import json
import string

import pytest

from prompt_style import (
    DEFAULT_LABELS,
    OptionError,
    PluginNotFoundError,
    PromptStyleError,
    StyleError,
    load_task,
    resolve_target,
)

TEST = [
    {"q": "What is 2+2?", "choices": ["3", "4", "5"], "answer": 1},
    {"q": "Sky colour?", "choices": ["blue", "green"], "answer": 0},
]
DEV = [
    {"q": "1+1?", "choices": ["2", "3", "4"], "answer": 0},
    {"q": "Grass colour?", "choices": ["red", "green"], "answer": 1},
]

MCQ = dict(doc_to_text="q", doc_to_choice="{{choices}}", doc_to_target="answer", template="mcq")


def texts(task, **kwargs):
    return [r.text for r in task.render(**kwargs)]


# -- mcq ------------------------------------------------------------------------------


def test_mcq_zero_shot_exact(make_task, pm):
    task = load_task(make_task({"test": TEST}, **MCQ), plugins=pm)
    results = list(task.render())
    assert [r.text for r in results] == [
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:",
        "Sky colour?\nA. blue\nB. green\nAnswer:",
    ]
    assert results[0].continuations == (" A", " B", " C")
    assert results[1].continuations == (" A", " B")
    assert [r.target for r in results] == [1, 0]


def test_mcq_two_shot_exact(make_task, pm):
    path = make_task({"test": TEST, "dev": DEV}, fewshot_split="dev", num_fewshot=2, **MCQ)
    result = next(load_task(path, plugins=pm).render())
    assert result.text == (
        "1+1?\nA. 2\nB. 3\nC. 4\nAnswer: A"
        "\n\n"
        "Grass colour?\nA. red\nB. green\nAnswer: B"
        "\n\n"
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"
    )
    assert result.continuations == (" A", " B", " C")
    assert result.target == 1


def test_description_goes_first_once(make_task, pm):
    path = make_task(
        {"test": TEST, "dev": DEV},
        description="Questions about {{ 'maths' }}.\n\n",
        num_fewshot=1,
        **MCQ,
    )
    result = next(load_task(path, plugins=pm).render())
    assert result.text == (
        "Questions about maths.\n\n1+1?\nA. 2\nB. 3\nC. 4\nAnswer: A\n\nWhat is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"
    )
    assert result.text.count("Questions about") == 1


def test_description_zero_shot(make_task, pm):
    path = make_task({"test": TEST}, description="Desc.\n", **MCQ)
    assert texts(load_task(path, plugins=pm))[1] == "Desc.\nSky colour?\nA. blue\nB. green\nAnswer:"


def test_delimiter_overrides(make_task, pm):
    path = make_task(
        {"test": TEST, "dev": DEV},
        num_fewshot=2,
        fewshot_delimiter="\n###\n",
        target_delimiter=":: ",
        **MCQ,
    )
    result = next(load_task(path, plugins=pm).render())
    assert result.text == (
        "1+1?\nA. 2\nB. 3\nC. 4\nAnswer::: A"
        "\n###\n"
        "Grass colour?\nA. red\nB. green\nAnswer::: B"
        "\n###\n"
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"
    )
    assert result.continuations == (":: A", ":: B", ":: C")


def test_empty_target_delimiter(make_task, pm):
    path = make_task({"test": TEST}, target_delimiter="", **MCQ)
    assert next(load_task(path, plugins=pm).render()).continuations == ("A", "B", "C")


def test_template_options_override_layout(make_task, pm):
    path = make_task(
        {"test": TEST},
        doc_to_text="q",
        doc_to_choice="{{choices}}",
        doc_to_target="answer",
        template={
            "template_type": "mcq",
            "prefix": "Q: ",
            "choice_format": "({label}) {choice}",
            "answer_format": "({label})",
            "choices_header": "Options:\n",
            "suffix": "A:",
        },
    )
    result = next(load_task(path, plugins=pm).render())
    assert result.text == "Q: What is 2+2?\nOptions:\n(A) 3\n(B) 4\n(C) 5\nA:"
    assert result.continuations == (" (A)", " (B)", " (C)")


def test_template_mapping_defaults_to_mcq(make_task, pm):
    path = make_task({"test": TEST}, **{**MCQ, "template": {"suffix": "Answer is"}})
    assert texts(load_task(path, plugins=pm))[0] == "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer is"


# -- passthrough ----------------------------------------------------------------------


def test_passthrough_without_template(make_task, pm):
    path = make_task(
        {"test": TEST, "dev": DEV},
        doc_to_text="Question: {q}\nAnswer:",
        doc_to_choice="{{choices}}",
        doc_to_target="answer",
        num_fewshot=1,
    )
    result = next(load_task(path, plugins=pm).render())
    assert result.text == "Question: 1+1?\nAnswer: 2\n\nQuestion: What is 2+2?\nAnswer:"
    assert result.continuations == (" 3", " 4", " 5")
    assert result.target == 1
    assert result.plugins["format_prompt"]["name"] == "passthrough"


def test_passthrough_generation(make_task, pm):
    records = [{"q": "Capital of France?", "a": "Paris"}, {"q": "Capital of Italy?", "a": "Rome"}]
    path = make_task({"test": records}, doc_to_text="{q}", doc_to_target="a", num_fewshot=1)
    results = list(load_task(path, plugins=pm).render())
    assert results[0].text == "Capital of Italy? Rome\n\nCapital of France?"
    assert results[0].continuations == ()
    assert results[0].target == "Paris"
    assert results[1].text == "Capital of France? Paris\n\nCapital of Italy?"


def test_passthrough_list_target_shows_first(make_task, pm):
    records = [{"q": "Q1", "a": ["x", "y"]}, {"q": "Q2", "a": ["z"]}]
    path = make_task({"test": records}, doc_to_text="q", doc_to_target="a", num_fewshot=1)
    assert texts(load_task(path, plugins=pm))[0] == "Q2 z\n\nQ1"


# -- continuations and targets --------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("answer", 2, 2),
        ("answer", 0, 0),
        ("answer", True, 1),  # lm-evaluation-harness: a bool is an int
        ("answer", "five", 2),
        ("answer", "three", 0),
        ("answer", [0, "five"], [0, 2]),  # several gold answers
    ],
)
def test_target_resolution(make_task, pm, field, value, expected):
    record = {"q": "Q", "choices": ["three", "four", "five"], field: value}
    path = make_task({"test": [record]}, **MCQ)
    assert next(load_task(path, plugins=pm).render()).target == expected


@pytest.mark.parametrize("value, expected", [("2", 2), ("0", 0), (2, 2), ("five", 2)])
def test_template_target_reads_digit_strings_as_indices(make_task, pm, value, expected):
    # lm-evaluation-harness renders a template and reads a digit string with ast.literal_eval
    record = {"q": "Q", "choices": ["three", "four", "five"], "answer": value}
    path = make_task({"test": [record]}, **{**MCQ, "doc_to_target": "{{answer}}"})
    assert next(load_task(path, plugins=pm).render()).target == expected


@pytest.mark.parametrize(
    "spec, value, choices, expected",
    [
        # a plain field's string is matched against the choice texts, never the style's labels
        ("answer", "3", ["3", "4", "5"], 0),
        ("answer", "1", ["0", "1", "2"], 1),
        ("{{answer}}", "1", ["0", "1", "2"], 1),  # the text and the index agree
        ("answer", "12", ["10", "11", "12", "13"], 2),
    ],
)
def test_digit_texts_resolve_when_unambiguous(make_task, pm, spec, value, choices, expected):
    record = {"q": "Q", "choices": choices, "answer": value}
    path = make_task({"test": [record]}, **{**MCQ, "doc_to_target": spec})
    assert next(load_task(path, plugins=pm).render()).target == expected


@pytest.mark.parametrize(
    "spec, value, choices, says",
    [
        ("answer", "3", ["3", "4", "5", "6"], "ambiguous"),  # text of choice 0, or index 3?
        ("{{answer}}", "3", ["3", "4", "5", "6"], "ambiguous"),
        ("{{answer}}", "3", ["3", "4", "5"], "out of range"),  # lm-eval reads index 3
        ("answer", "2", ["w", "x", "y", "z"], "not one of the choices"),  # lm-eval: no gold choice
        ("answer", "B", ["w", "x", "y", "z"], "not one of the choices"),  # a label, not a choice
        ("answer", "x", ["w", "x", "x"], "several choices"),
        ("answer", -1, ["w", "x"], "out of range"),
        ("answer", 1.0, ["w", "x"], "float"),
    ],
)
def test_unresolvable_or_ambiguous_target_is_a_target_error(make_task, pm, spec, value, choices, says):
    from prompt_style import FieldError, TargetError

    records = [{"q": "ok", "choices": ["a", "b"], "answer": 0}, {"q": "bad", "choices": choices, "answer": value}]
    path = make_task({"test": records}, **{**MCQ, "doc_to_target": spec})
    task = load_task(path, plugins=pm)
    with pytest.raises(TargetError) as info:
        list(task.render())
    assert isinstance(info.value, FieldError) and isinstance(info.value, StyleError)
    message = str(info.value)
    assert says in message
    assert "record 1" in message and "doc_to_target" in message and str(path) in message


def test_arc_numeric_labels_via_index_expression(make_task, pm):
    record = {
        "question": "Q?",
        "choices": {"text": ["w", "x", "y", "z"], "label": ["1", "2", "3", "4"]},
        "answerKey": "2",
    }
    path = make_task(
        {"test": [record]},
        doc_to_text="{{question}}",
        doc_to_choice="{{choices.text}}",
        doc_to_target="{{choices.label.index(answerKey)}}",
        template="mcq",
    )
    result = next(load_task(path, plugins=pm).render())
    assert result.target == 1
    assert result.text == "Q?\nA. w\nB. x\nC. y\nD. z\nAnswer:"


def test_null_multiple_choice_target_is_an_error_naming_the_record(make_task, pm):
    # A multiple-choice record without its answer cannot be scored: an error, not target null
    # (docs/security.md, strict data); generation tasks may allow null targets (allow_null_target).
    records = [{"q": "Q0", "choices": ["a", "b"], "answer": 1}, {"q": "Q1", "choices": ["a", "b"], "answer": None}]
    path = make_task({"test": records}, **MCQ)
    with pytest.raises(PromptStyleError) as info:
        list(load_task(path, plugins=pm).render())
    assert (info.value.key, info.value.index) == ("doc_to_target", 1)


def test_arc_numeric_answer_keys_are_never_matched_against_the_style_labels(make_task, pm):
    # With labels 1-4 on screen, answerKey "2" used to mean "the choice labelled 2". The gold
    # answer must not depend on the style: a plain field's "2" is not a choice text, so it is an
    # error (lm-evaluation-harness would find no gold choice either), and the fix is the index.
    record = {"question": "Q?", "choices": {"text": ["w", "x", "y", "z"]}, "answerKey": "2"}
    keys = dict(
        doc_to_text="question",
        doc_to_choice="{{choices.text}}",
        template={"template_type": "mcq", "choice_labels": ["1", "2", "3", "4"]},
    )
    path = make_task({"test": [record]}, doc_to_target="answerKey", **keys)
    with pytest.raises(StyleError, match="not one of the choices"):
        list(load_task(path, plugins=pm).render())
    path = make_task({"test": [record]}, doc_to_target="{{ answerKey | int - 1 }}", **keys)
    result = next(load_task(path, plugins=pm).render())
    assert result.text == "Q?\n1. w\n2. x\n3. y\n4. z\nAnswer:"
    assert result.continuations == (" 1", " 2", " 3", " 4")
    assert result.target == 1


@pytest.mark.parametrize("target", [3, -1, "Z", "nothing", "9"])
def test_unresolvable_target_names_record(make_task, pm, target):
    records = [{"q": "ok", "choices": ["a", "b"], "answer": 0}, {"q": "bad", "choices": ["a", "b"], "answer": target}]
    path = make_task({"test": records}, **MCQ)
    task = load_task(path, plugins=pm)
    with pytest.raises(StyleError) as info:
        list(task.render())
    assert info.value.index == 1
    assert "record 1" in str(info.value)
    assert "doc_to_target" in str(info.value)
    assert str(path) in str(info.value)


def test_resolve_target_directly():
    choices = ("A", "B", "C")
    assert resolve_target(1, choices) == 1
    assert resolve_target("C", choices) == 2
    assert resolve_target(True, choices) == 1
    with pytest.raises(StyleError):
        resolve_target("1", choices)  # not a choice text; only a template's digits are an index
    with pytest.raises(StyleError):
        resolve_target(3, choices)
    with pytest.warns(DeprecationWarning):
        # labels are no longer consulted
        assert resolve_target("y", ["x", "y", "z"], ["A", "B", "C"]) == 1


def test_resolve_gold_directly():
    from prompt_style import TargetError, resolve_gold

    assert resolve_gold("2", ["a", "b", "c"], rendered=True) == 2
    assert resolve_gold([2, "a"], ["a", "b", "c"]) == [2, 0]
    with pytest.raises(TargetError):
        resolve_gold("2", ["a", "b", "c"])
    with pytest.raises(TargetError) as info:
        resolve_gold(0, [])
    assert info.value.key == "doc_to_choice"


@pytest.mark.parametrize("n", [2, 7, 26])
def test_any_number_of_choices_with_default_labels(make_task, pm, n):
    choices = [f"c{i}" for i in range(n)]
    path = make_task({"test": [{"q": "Q", "choices": choices, "answer": n - 1}]}, **MCQ)
    result = next(load_task(path, plugins=pm).render())
    labels = string.ascii_uppercase[:n]
    assert result.text == "Q\n" + "".join(f"{label}. c{i}\n" for i, label in enumerate(labels)) + "Answer:"
    assert result.continuations == tuple(" " + label for label in labels)
    assert result.target == n - 1


def test_default_labels_are_a_to_z():
    assert DEFAULT_LABELS == tuple(string.ascii_uppercase)


def test_27_choices_with_default_labels_is_style_error(make_task, pm):
    records = [
        {"q": "Q", "choices": ["a", "b"], "answer": 0},
        {"q": "Q", "choices": [str(i) for i in range(27)], "answer": 0},
    ]
    task = load_task(make_task({"test": records}, **MCQ), plugins=pm)
    results = task.render()
    assert next(results).text == "Q\nA. a\nB. b\nAnswer:"
    with pytest.raises(StyleError) as info:
        next(results)
    assert info.value.index == 1
    assert "record 1" in str(info.value)
    assert "27" in str(info.value)


def test_27_choices_render_with_enough_labels(make_task, pm):
    labels = [f"L{i}" for i in range(27)]
    path = make_task(
        {"test": [{"q": "Q", "choices": [str(i) for i in range(27)], "answer": 26}]},
        **{**MCQ, "template": {"template_type": "mcq", "choice_labels": labels}},
    )
    result = next(load_task(path, plugins=pm).render())
    assert len(result.continuations) == 27
    assert result.continuations[-1] == " L26"
    assert result.target == 26


def test_fewer_choice_labels_than_choices_never_drops_a_choice(make_task, pm):
    records = [
        {"q": "Q0", "choices": ["a", "b"], "answer": 0},
        {"q": "Q1", "choices": ["a", "b"], "answer": 1},
        {"q": "Q2", "choices": ["a", "b", "c"], "answer": 2},
    ]
    path = make_task({"test": records}, **{**MCQ, "template": {"template_type": "mcq", "choice_labels": ["X", "Y"]}})
    task = load_task(path, plugins=pm)
    results = task.render()
    assert next(results).text == "Q0\nX. a\nY. b\nAnswer:"
    assert next(results).continuations == (" X", " Y")
    with pytest.raises(StyleError) as info:
        next(results)
    message = str(info.value)
    assert info.value.index == 2
    assert "record 2" in message
    assert "choice_labels" in message
    assert "3" in message


def test_numbered_format_needs_no_labels(make_task, pm):
    choices = [str(i) for i in range(30)]
    path = make_task(
        {"test": [{"q": "Q", "choices": choices, "answer": "7"}]},
        **{
            **MCQ,
            "template": {"template_type": "mcq", "choice_format": "{number}) {choice}", "answer_format": "{number}"},
        },
    )
    result = next(load_task(path, plugins=pm).render())
    assert len(result.continuations) == 30
    assert result.continuations[0] == " 1"
    assert result.text.startswith("Q\n1) 0\n2) 1\n")


def test_choices_that_are_not_a_list(make_task, pm):
    from prompt_style import FieldError

    record = {"q": "Q", "choices": {"text": ["a", "b"], "label": ["A", "B"]}, "answer": 0}
    path = make_task({"test": [record]}, **MCQ)
    with pytest.raises(FieldError) as info:
        list(load_task(path, plugins=pm).render())
    assert info.value.key == "doc_to_choice"
    assert "record 0" in str(info.value)


def test_choices_from_a_rendered_list_literal(make_task, pm):
    # lm-evaluation-harness reads a rendered template as a Python literal
    record = {"q": "Q", "a": "it's", "b": 'say "hi"', "answer": 1}
    path = make_task({"test": [record]}, **{**MCQ, "doc_to_choice": "{{ [a, b] | string }}"})
    result = next(load_task(path, plugins=pm).render())
    assert result.text == 'Q\nA. it\'s\nB. say "hi"\nAnswer:'


def test_mcq_without_choices_is_style_error(make_task, pm):
    path = make_task({"test": [{"q": "Q", "choices": [], "answer": 0}]}, **MCQ)
    with pytest.raises(StyleError) as info:
        list(load_task(path, plugins=pm).render())
    assert "doc_to_choice" in str(info.value)


# -- options --------------------------------------------------------------------------


def test_unknown_template_option_did_you_mean(make_task, pm):
    path = make_task({"test": TEST}, **{**MCQ, "template": {"template_type": "mcq", "sufix": "A:"}})
    with pytest.raises(OptionError) as info:
        load_task(path, plugins=pm)
    message = str(info.value)
    assert "sufix" in message
    assert "did you mean 'suffix'" in message
    assert str(path) in message
    assert info.value.line is not None


def test_wrongly_typed_template_option(make_task, pm):
    path = make_task({"test": TEST}, **{**MCQ, "template": {"template_type": "mcq", "suffix": 3}})
    with pytest.raises(OptionError) as info:
        load_task(path, plugins=pm)
    assert "suffix" in str(info.value)


@pytest.mark.parametrize("fmt", ["{labl}. {choice}", "{label. {choice}"])
def test_bad_choice_format(make_task, pm, fmt):
    path = make_task({"test": TEST}, **{**MCQ, "template": {"template_type": "mcq", "choice_format": fmt}})
    with pytest.raises(OptionError) as info:
        load_task(path, plugins=pm)
    assert "choice_format" in str(info.value)


def test_passthrough_rejects_options(make_task, pm):
    path = make_task({"test": TEST}, doc_to_text="q", template={"template_type": "passthrough", "suffix": "x"})
    with pytest.raises(OptionError):
        load_task(path, plugins=pm)


def test_unknown_style_did_you_mean(make_task, pm):
    path = make_task({"test": TEST}, **{**MCQ, "template": "mqc"})
    with pytest.raises(PluginNotFoundError) as info:
        load_task(path, plugins=pm)
    assert "did you mean 'mcq'" in str(info.value)
    assert str(path) in str(info.value)


def test_first_party_style_missing_says_what_to_install(make_task, pm):
    path = make_task({"test": TEST}, **{**MCQ, "template": "mcq::mmlu"})
    with pytest.raises(PluginNotFoundError) as info:
        load_task(path, plugins=pm)
    assert "prompt-style-mmlu" in str(info.value)


# -- first-party styles (installed in the workspace) ---------------------------------


def test_mcq_and_mmlu_preset_agree(make_task, pm_all):
    path = make_task({"test": TEST, "dev": DEV}, num_fewshot=2, **MCQ)
    mcq = [r.to_json() for r in load_task(path, plugins=pm_all).render()]
    mmlu = [r.to_json() for r in load_task(path, plugins=pm_all, style="mcq::mmlu").render()]
    assert mcq == mmlu


def test_cloze_by_changing_one_word(make_task, pm_all):
    path = make_task({"test": TEST, "dev": DEV}, num_fewshot=1, **MCQ)
    text = path.read_text()
    cloze_path = path.with_name("cloze.yaml")
    cloze_path.write_text(text.replace("template: mcq", "template: cloze"))
    assert cloze_path.read_text() != text
    result = next(load_task(cloze_path, plugins=pm_all).render())
    assert result.text == ("1+1? ______\n\nOptions: A. 2 B. 3 C. 4 2\n\nWhat is 2+2? ______\n\nOptions: A. 3 B. 4 C. 5")
    assert result.continuations == (" 3", " 4", " 5")
    assert result.target == 1
    back = next(load_task(cloze_path, plugins=pm_all, style="mcq").render())
    assert back.text == next(load_task(path, plugins=pm_all).render()).text


def test_style_errors_are_prompt_style_errors():
    assert issubclass(StyleError, PromptStyleError)
    assert issubclass(OptionError, PromptStyleError)


def test_cloze_scores_texts_for_any_number_of_choices(tmp_path, pm_all):
    choices = [f"c{i}" for i in range(30)]
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"q": "pick", "c": choices, "t": 29}) + "\n")
    task = load_task(
        {
            "data": {"test": str(data)},
            "doc_to_text": "q",
            "doc_to_choice": "c",
            "doc_to_target": "t",
            "template": "cloze::qa",
        },
        plugins=pm_all,
    )
    (result,) = task.render()
    assert result.text == "Question: pick\nAnswer:"
    assert len(result.continuations) == 30 and result.target == 29


def test_a_factory_whose_object_lacks_the_protocol_method_is_a_plugin_error(tmp_path, jsonl):
    from prompt_style import PluginError, create_plugin_manager, hookimpl

    class NotAStyle:
        pass

    class Plugin:
        @hookimpl
        def format_prompt(self):
            return {"bad": lambda **kwargs: NotAStyle()}

    manager = create_plugin_manager(entry_points=False, environ={}, plugins=[("bad-plugin", Plugin())])
    jsonl(tmp_path / "t.jsonl", [{"q": "x"}])
    with pytest.raises(PluginError) as caught:
        load_task({"data": {"test": str(tmp_path / "t.jsonl")}, "doc_to_text": "q", "template": "bad"}, plugins=manager)
    assert "bad-plugin" in str(caught.value) and "format()" in str(caught.value)


@pytest.mark.parametrize("n", [4, 30])
def test_digit_string_target_means_the_same_for_any_number_of_choices_in_cloze(pm_all, n):
    from prompt_style import render_records

    record = {"q": "pick", "c": [f"c{i}" for i in range(n)], "t": "2"}
    (result,) = render_records(
        [record], doc_to_text="q", doc_to_choice="c", doc_to_target="{{t}}", template="cloze::pure", plugins=pm_all
    )
    assert result.target == 2


def test_example_turns_are_the_named_tuples_keyword_call_would_make():
    """``_ice_turn`` builds a few-shot example's turns without the keyword call: the
    same value, field for field, as ``Turn(role, content, sep, section="ice")``."""
    from prompt_style import Turn
    from prompt_style.styles.base import _ice_turn

    made = _ice_turn("assistant", "B", " ")
    assert made == Turn("assistant", "B", " ", section="ice") and type(made) is Turn
    assert made._asdict() == Turn("assistant", "B", " ", section="ice")._asdict()


def test_compiled_layouts_are_cached_per_style_and_dropped_when_pickled(pm):
    import pickle

    from prompt_style import Sample
    from prompt_style.styles.compiled import layout, question_function, style_labels

    style = load_task({"task": "t", **MCQ}, plugins=pm, data={"test": TEST}).renderer.style
    first = layout(style, 4)
    assert layout(style, 4) is first and style_labels(style, 4) is style_labels(style, 4)
    assert question_function(style, 4)("Q?", ["a", "b", "c", "d"]) == style.question_text(
        Sample(0, {}, "Q?", ["a", "b", "c", "d"])
    )
    copy = pickle.loads(pickle.dumps(style))
    assert "_layouts" not in copy.__dict__ and "_labels_n" not in copy.__dict__
    assert layout(copy, 4) == first
    assert "maker" not in pickle.loads(pickle.dumps(first)).__dict__
