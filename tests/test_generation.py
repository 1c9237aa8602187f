"""Generative multiple choice: the ChoiceStyle generation variants and answer parsing
(the ``parse_answer`` hook)."""

from __future__ import annotations

import pytest

import prompt_style
from prompt_style import (
    ChoiceAnswerParser,
    OptionError,
    ParsedAnswer,
    create_plugin_manager,
    hookimpl,
    render_records,
)

RECORD = {"q": "2 + 2 = ?", "c": ["3", "4", "5", "6"], "a": 1}
FIELDS = {"doc_to_text": "q", "doc_to_choice": "c", "doc_to_target": "a"}


def render(generation, style="mcq::mmlu", record=RECORD, **more):
    return render_records([record], template={"template_type": style, "generation": generation}, **FIELDS, **more)[0]


def test_answer_variant_is_a_generation_prompt_with_inspect_ai_instruction():
    prompt = render("answer")
    assert prompt.text == (
        "Answer the following multiple choice question. The entire content of your response should be of the "
        "following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of A,B,C,D.\n\n"
        "2 + 2 = ?\nA. 3\nB. 4\nC. 5\nD. 6"
    )
    assert prompt.continuations == ()
    assert prompt.target == "B"


def test_cot_variant_asks_for_reasoning_and_a_last_answer_line():
    prompt = render("cot", style="mcq::gpqa")
    assert prompt.text.startswith("Answer the following multiple choice question. The last line of your response")
    assert (
        "Think step by step before answering.\n\nWhat is the correct answer to this question:2 + 2 = ?" in prompt.text
    )
    assert prompt.text.endswith("(D) 6")
    assert prompt.target == "B"


def test_several_gold_answers_use_the_multiple_answer_instruction():
    prompt = render("answer", record={**RECORD, "a": [1, 3]})
    assert "where multiple answers may be correct" in prompt.text
    assert "'ANSWER: $LETTERS'" in prompt.text
    assert prompt.target == ["B", "D"]


def test_labels_of_the_style_are_the_letters_of_the_instruction():
    prompt = render("answer", style="mcq::numbered")
    assert "one of 1,2,3,4." in prompt.text
    assert prompt.target == "2"


def test_examples_keep_the_style_layout_and_show_their_answer():
    prompt = render("cot", fewshot=[{"q": "1 + 1 = ?", "c": ["2", "3"], "a": 0}], num_fewshot=1)
    assert prompt.text.startswith("1 + 1 = ?\nA. 2\nB. 3\nAnswer: A\n\nAnswer the following")


def test_generation_instruction_can_be_changed():
    prompt = render_records(
        [RECORD],
        template={"template_type": "mcq", "generation": "answer", "generation_instruction": "Pick one of {letters}."},
        **FIELDS,
    )[0]
    assert prompt.text.startswith("Pick one of A,B,C,D.\n\n2 + 2 = ?")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"generation": "chain"}, "generation must be one of none, answer, cot"),
        ({"generation": "answer", "generation_instruction": "{label}"}, "unknown field"),
    ],
)
def test_bad_generation_options(options, message):
    with pytest.raises(OptionError, match=message):
        render_records([RECORD], template={"template_type": "mcq", **options}, **FIELDS)


def test_the_plain_variant_is_unchanged_and_both_are_fast():
    task = prompt_style.load_task({"data": {"test": [RECORD]}, **FIELDS, "template": "mcq::mmlu"})
    assert task.renderer.fast_render() is not None
    generative = prompt_style.load_task(
        {"data": {"test": [RECORD]}, **FIELDS, "template": {"template_type": "mcq::mmlu", "generation": "cot"}}
    )
    assert generative.renderer.fast_render() is not None  # (tests/test_fastpath.py: equal to the general path)
    assert next(generative.render()).target == "B"


LABELS = ["A", "B", "C", "D"]
CHOICES = ["Paris", "Lyon", "Nice", "Lille"]


@pytest.mark.parametrize(
    ("completion", "expected", "rule"),
    [
        ("ANSWER: B", (1,), "answer line"),
        ("Some reasoning.\nANSWER: c", (2,), "answer line"),
        ("ANSWER: $D$", (3,), "answer line"),
        ("ANSWER: **A**", (0,), "answer line"),
        ("ANSWER: (B)", (1,), "answer line"),
        ("The answer is (C).", (2,), "answer phrase"),
        ("so the correct option is D.", (3,), "answer phrase"),
        ("\\boxed{A}", (0,), "answer phrase"),
        ("**B**", (1,), "label"),
        ("$C$", (2,), "label"),
        ("B.", (1,), "label"),
        ("[D]", (3,), "label"),
        ("B. Lyon", (1,), "label and choice"),
        ("Lille", (3,), "choice text"),
        ("Thinking...\nnice.", (2,), "choice text"),
    ],
)
def test_parser_reads_the_usual_forms(completion, expected, rule):
    parsed = ChoiceAnswerParser().parse(completion, labels=LABELS, choices=CHOICES)
    assert parsed == ParsedAnswer(expected, rule)


@pytest.mark.parametrize(
    "completion",
    [
        "",
        "I do not know.",
        "The answer is B or C",  # two choices named
        "B. Nice",  # a label with another choice's text
        "A cat sat on the mat",  # the article is not label A
        "ANSWER: E",  # not a label
    ],
)
def test_parser_refuses_what_it_cannot_read(completion):
    assert ChoiceAnswerParser().parse(completion, labels=LABELS, choices=CHOICES) is None


def test_parser_reads_several_answers_and_other_labels():
    parser = ChoiceAnswerParser()
    assert parser.parse("ANSWER: B, D", labels=LABELS, choices=CHOICES, multiple=True).indices == (1, 3)
    assert parser.parse("ANSWER: BD", labels=LABELS, choices=CHOICES, multiple=True).indices == (1, 3)
    assert parser.parse("the answers are A and C", labels=LABELS, choices=CHOICES, multiple=True).indices == (0, 2)
    roman = ["i", "ii", "iii", "iv"]
    assert parser.parse("The answer is iv.", labels=roman, choices=CHOICES).indices == (3,)
    assert parser.parse("ANSWER: III", labels=roman, choices=CHOICES).indices == (2,)
    assert parser.parse("(ii)", labels=roman, choices=CHOICES).indices == (1,)
    assert parser.parse("ANSWER: 3", labels=["1", "2", "3"], choices=CHOICES[:3]).indices == (2,)


def test_strict_parser_is_inspect_ai_alone():
    strict = ChoiceAnswerParser(lenient=False)
    assert strict.parse("ANSWER: B", labels=LABELS, choices=CHOICES).indices == (1,)
    assert strict.parse("The answer is (C).", labels=LABELS, choices=CHOICES) is None


class Always:
    """A parse_answer plugin: reads every completion as the last choice."""

    def parse(self, completion, *, labels, choices, multiple=False):
        return ParsedAnswer((len(choices) - 1,), "always last")


class AlwaysLastPlugin:
    @hookimpl
    def parse_answer(self):
        return {"mcq::mmlu": lambda *, style: Always()}


def test_a_parse_answer_plugin_is_found_by_style_name():
    manager = create_plugin_manager(plugins=[("always", AlwaysLastPlugin())])
    providers = manager.catalog("parse_answer")["mcq::mmlu"]
    assert sorted(p.plugin.name for p in providers) == ["always", "mmlu"]  # a conflict until settled
    chosen = create_plugin_manager(plugins=[("always", AlwaysLastPlugin())], prefer={"mcq::mmlu": "always"})
    parser = chosen.resolve("parse_answer", "mcq::mmlu").factory(style=None)
    assert parser.parse("ANSWER: A", labels=LABELS, choices=CHOICES).indices == (3,)


def test_first_party_styles_declare_their_parsers():
    manager = create_plugin_manager()
    for name in ("mcq", "mcq::mmlu", "mcq::gpqa", "mcq::numbered"):
        parser = manager.resolve("parse_answer", name).factory(style=None)
        assert parser.parse("ANSWER: B", labels=LABELS, choices=CHOICES).indices == (1,)
