"""Labels, answers and targets: a style with its own labels (roman numerals,
``1.``) reads ``"A"``-style answers through ``doc_to_target``, or the error says
exactly why not and how, and the ``doc_to_target`` it suggests works."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

import prompt_style as ps

FIELDS = {"doc_to_text": "question", "doc_to_choice": "choices"}
CHOICES = ["Berlin", "Paris", "Rome"]
ROMAN = ["I", "II", "III", "IV", "V", "VI"]


@dataclass
class Roman(ps.QAStyle):
    """A style written from scratch with labels of its own: ``I. Berlin`` ... answered ``II``."""

    def question_text(self, sample):
        listed = [f"{ROMAN[i]}. {c}" for i, c in enumerate(sample.choices)]
        return "\n".join([str(sample.question), *listed, "Answer:"])

    def answers(self, sample):
        return tuple(ROMAN[: len(sample.choices)])


def roman(*, options, settings):
    return ps.check_options(Roman, options, what="style 'mcq::roman'", settings=settings)


class RomanPlugin:
    @ps.hookimpl
    def format_prompt(self):
        return {"mcq::roman": roman}


@pytest.fixture
def manager():
    return ps.create_plugin_manager(environ={}, plugins=[("roman", RomanPlugin())])


def record(answer, question="Capital of France?"):
    return {"question": question, "choices": CHOICES, "answer": answer}


def render(manager, answer, template, doc_to_target="answer", **task):
    return ps.render_records(
        [record(answer)], plugins=manager, template=template, doc_to_target=doc_to_target, **FIELDS, **task
    )


STYLES = ["mcq", "mcq::mmlu", "mcq::gpqa", "mcq::numbered", "mcq::roman", "cloze::qa"]
LETTER = "{{ ['A', 'B', 'C'].index(answer) }}"


@pytest.mark.parametrize("style", STYLES)
def test_letter_answers_read_through_doc_to_target_give_one_gold_under_every_style(manager, style):
    [out] = render(manager, "B", style, doc_to_target=LETTER)
    assert out.target == 1
    shown = {"mcq": " B", "mcq::mmlu": " B", "mcq::gpqa": " (B)", "mcq::numbered": " 2", "mcq::roman": " II"}
    assert out.continuations[1] == shown.get(style, " Paris")


def test_a_few_shot_example_shows_the_styles_own_label_for_a_letter_answer(manager):
    [out] = ps.render_records(
        [record("C")],
        fewshot=[record("B", "Capital of Italy? No: of France.")],
        num_fewshot=1,
        plugins=manager,
        template="mcq::roman",
        doc_to_target=LETTER,
        **FIELDS,
    )
    assert out.text.startswith("Capital of Italy? No: of France.\nI. Berlin\nII. Paris\nIII. Rome\nAnswer: II\n\n")
    assert out.target == 2


def suggested(error: ps.PromptStyleError) -> str:
    """The doc_to_target the error's hint suggests."""
    [found] = re.findall(r'"(\{\{ .*? \}\})"', error.hint)
    return found


@pytest.mark.parametrize(
    ("style", "answer", "says"),
    [
        ("mcq::roman", "II", "it is how style 'mcq::roman' labels choice 1 ('Paris')"),
        ({"template_type": "mcq", "choice_labels": ["I", "II", "III"]}, "II", "it is how style 'mcq' labels choice 1"),
        ("mcq::gpqa", "(B)", "it reads as the letter of choice 1 ('Paris')"),
        ("mcq::mmlu", "B", "it reads as the letter of choice 1 ('Paris')"),
        ("mcq::numbered", "2.", "it is how style 'mcq::numbered' labels choice 1 ('Paris')"),
        ("mcq::numbered", "B", "it reads as the letter of choice 1 ('Paris')"),
        ("mcq::roman", "B", "it reads as the letter of choice 1 ('Paris')"),
        ("mcq::roman", "(b)", "it reads as the letter of choice 1 ('Paris')"),
        ("cloze::qa", "b", "it reads as the letter of choice 1 ('Paris')"),
    ],
)
def test_a_label_as_target_says_exactly_why_not_and_the_suggested_fix_works(manager, style, answer, says):
    with pytest.raises(ps.TargetError) as caught:
        render(manager, answer, style)
    error = caught.value
    message = str(error)
    assert "\n" not in message
    assert error.key == "doc_to_target" and error.index == 0 and error.split == "test"
    assert f"{answer!r} is not one of the choices ('Berlin', 'Paris', 'Rome'); {says}" in message
    assert "never against labels, so that changing the style never changes the gold answer" in message
    # the hint's doc_to_target reads this answer as choice 1, under this style and every other
    fix = suggested(error)
    for other in (style, "mcq::mmlu", "mcq::roman"):
        [out] = render(manager, answer, other, doc_to_target=fix)
        assert out.target == 1


def test_a_string_that_is_no_label_keeps_the_general_message(manager):
    with pytest.raises(ps.TargetError) as caught:
        render(manager, "Madrid", "mcq::roman")
    assert str(caught.value).startswith(
        "doc_to_target: split 'test' record 0: 'Madrid' is not one of the choices ('Berlin', 'Paris', 'Rome') ("
    )
    with pytest.raises(ps.TargetError, match=r"'D' is not one of the choices \('Berlin', 'Paris', 'Rome'\) \("):
        render(manager, "D", "mcq::roman")  # a letter past the choices is no choice's letter


def test_the_record_is_named_when_it_is_not_the_first(manager):
    records = [record(1), record(0), record("III")]
    with pytest.raises(ps.TargetError, match="record 2: 'III' is not one of the choices") as caught:
        ps.render_records(records, plugins=manager, template="mcq::roman", doc_to_target="answer", **FIELDS)
    assert caught.value.index == 2


def test_a_style_whose_answers_fail_still_gives_the_target_error(manager):
    @dataclass
    class Failing(Roman):
        def answers(self, sample):
            raise RuntimeError("boom")

    class Plugin:
        @ps.hookimpl
        def format_prompt(self):
            return {"failing": lambda *, options, settings: Failing(settings=settings)}

    failing = ps.create_plugin_manager(entry_points=False, environ={}, plugins=[("failing", Plugin())])
    with pytest.raises(ps.TargetError, match=r"'II' is not one of the choices \('Berlin', 'Paris', 'Rome'\) \("):
        render(failing, "II", "failing")


def test_explain_label_directly():
    from prompt_style.fields.targets import explain_label

    base = ps.TargetError("'x' is not one of the choices", key="doc_to_target")
    assert explain_label(base, 3, CHOICES, ROMAN, "s") is base
    assert explain_label(base, "  ", CHOICES, ROMAN, "s") is base
    assert explain_label(base, "II", [], ROMAN, "s") is base
    assert explain_label(base, "2", CHOICES, ["1", "2", "3"], "s") is base  # digits: index or text rules
    assert explain_label(base, "II", ["I", "II"], ROMAN, "s") is base  # a choice's text: not about labels
    told = explain_label(base, "II", CHOICES, ROMAN, None)
    assert "it is how the style labels choice 1 ('Paris')" in str(told)
