"""The gold answer comes from the task's fields, never from the style.

The renderer resolves each record's target once, with lm-evaluation-harness's rules
(``fields/targets.py``), before any style runs. Here the same records are rendered under
every installed style and the targets (or the errors) must be the same everywhere.
"""

from __future__ import annotations

import pytest

from prompt_style import PromptStyleError, TargetError, load_task, resolve_gold

# (doc_to_target spec, record) pairs; choices in "c", the answer in "a".
RESOLVABLE = [
    ("a", {"q": "Pick three", "c": ["3", "4", "5"], "a": "3"}, 0),  # a digit string that is a choice text
    ("a", {"q": "Pick four", "c": ["3", "4", "5"], "a": "4"}, 1),
    ("a", {"q": "Index", "c": ["x", "y", "z"], "a": 2}, 2),
    ("a", {"q": "Text", "c": ["x", "y", "z"], "a": "y"}, 1),
    ("a", {"q": "Bool", "c": ["no", "yes"], "a": True}, 1),
    ("{{a}}", {"q": "Template digits", "c": ["x", "y", "z"], "a": "2"}, 2),
    ("{{a}}", {"q": "Template int", "c": ["x", "y", "z"], "a": 0}, 0),
    ("{{a}}", {"q": "Same either way", "c": ["0", "1", "2"], "a": "1"}, 1),
    ("{{ c.index(a) }}", {"q": "Index of text", "c": ["3", "4", "5", "6"], "a": "3"}, 0),
    ("{{ a | int }}", {"q": "Index from text", "c": ["3", "4", "5", "6"], "a": "3"}, 3),
    ("{{ 'ABCDE'.index(a) }}", {"q": "Letter", "c": ["v", "w", "x", "y", "z"], "a": "E"}, 4),
    ("a", {"q": "Several", "c": ["x", "y", "z"], "a": [0, "z"]}, [0, 2]),
    ("a", {"q": "Many choices", "c": [f"c{i}" for i in range(20)], "a": "c19"}, 19),
]

AMBIGUOUS_OR_UNRESOLVABLE = [
    ("a", {"q": "Text or index?", "c": ["3", "4", "5", "6"], "a": "3"}, "ambiguous"),
    ("{{a}}", {"q": "Index or text?", "c": ["3", "4", "5", "6"], "a": "3"}, "ambiguous"),
    ("{{a}}", {"q": "Out of range", "c": ["3", "4", "5"], "a": "3"}, "out of range"),
    ("a", {"q": "A label", "c": ["x", "y", "z"], "a": "B"}, "not one of the choices"),
    ("a", {"q": "A style answer", "c": ["x", "y", "z"], "a": "(B)"}, "not one of the choices"),
    ("a", {"q": "Field digits", "c": ["x", "y", "z"], "a": "1"}, "not one of the choices"),
    ("a", {"q": "Twice", "c": ["x", "y", "y"], "a": "y"}, "several choices"),
    ("a", {"q": "Negative", "c": ["x", "y"], "a": -1}, "out of range"),
    ("a", {"q": "Too big", "c": ["x", "y"], "a": 2}, "out of range"),
]


def _task(records, spec, style, manager, **more):
    return load_task(
        {"data": {"test": records}, "doc_to_text": "q", "doc_to_choice": "c", "doc_to_target": spec, **more},
        plugins=manager,
        style=style,
    )


def _styles(manager) -> list[str]:
    """Every installed style that renders plain multiple-choice records without options
    (a style made for other record shapes or needing options of its own cannot be asked)."""
    probe = {"q": "Probe?", "c": ["x", "y", "z"], "a": 2}
    usable = []
    for style in manager.names("format_prompt"):
        try:
            [result] = _task([probe], "a", style, manager).render()
        except PromptStyleError:
            continue
        if len(result.continuations) == 3:
            usable.append(style)
    return usable


def test_every_installed_style_is_covered(pm_all):
    # the built-in, first-party and contrib styles are installed in the workspace
    expected = {"passthrough", "mcq", "mcq::mmlu", "mcq::gpqa", "mcq::numbered"}
    expected |= {"cloze", "cloze::pure", "cloze::qa", "cloze::options"}
    assert expected <= set(_styles(pm_all))


@pytest.mark.parametrize("spec, record, expected", RESOLVABLE, ids=[r[1]["q"] for r in RESOLVABLE])
def test_every_style_gives_the_same_gold_answer(pm_all, spec, record, expected):
    targets = {}
    for style in _styles(pm_all):
        [result] = _task([record], spec, style, pm_all).render()
        targets[style] = result.target
        gold = expected[0] if isinstance(expected, list) else expected
        assert 0 <= gold < len(result.continuations), style
    assert targets == dict.fromkeys(targets, expected)


@pytest.mark.parametrize(
    "spec, record, says", AMBIGUOUS_OR_UNRESOLVABLE, ids=[r[1]["q"] for r in AMBIGUOUS_OR_UNRESOLVABLE]
)
def test_every_style_refuses_the_same_targets(pm_all, spec, record, says):
    good = {"q": "fine", "c": ["x", "y"], "a": 0}
    messages = set()
    for style in _styles(pm_all):
        with pytest.raises(TargetError) as caught:
            list(_task([good, record], spec, style, pm_all).render())
        assert caught.value.key == "doc_to_target"
        assert caught.value.index == 1, style
        assert says in caught.value.message, style
        messages.add(str(caught.value))
    assert len(messages) == 1  # word for word the same under every style


def test_the_issue_example_under_every_style(pm_all):
    record = {"q": "Which is three?", "c": ["3", "4", "5"], "a": "3"}
    targets = {style: next(iter(_task([record], "a", style, pm_all).render())).target for style in _styles(pm_all)}
    assert set(targets.values()) == {0}, targets


def test_few_shot_examples_show_the_same_gold_choice_under_every_style(pm_all):
    shot = {"q": "Shot", "c": ["3", "4", "5"], "a": "4"}
    record = {"q": "Which?", "c": ["x", "y"], "a": 0}
    for style in _styles(pm_all):
        few = {"data": {"test": [record], "dev": [shot]}, "fewshot_split": "dev", "num_fewshot": 1}
        [result] = _task([record], "a", style, pm_all, **few).render()
        answer = result.dialogue[1]  # the example's answer turn
        assert answer.role == "assistant", style
        [alone] = _task([shot], "a", style, pm_all).render()
        assert alone.target == 1
        # the example shows what this style calls choice 1 ("4")
        assert answer.sep + answer.content == alone.continuations[1], style


def test_errors_name_the_file_line_and_record(make_task, pm):
    records = [{"q": "ok", "c": ["x", "y"], "a": 0}, {"q": "bad", "c": ["x", "y"], "a": "B"}]
    path = make_task({"test": records}, doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq")
    with pytest.raises(PromptStyleError) as caught:
        list(load_task(path, plugins=pm).render())
    text = str(caught.value)
    assert text.startswith(f"{path}:")
    assert "doc_to_target: split 'test' record 1: 'B' is not one of the choices ('x', 'y')" in text


# -- the rules, directly -------------------------------------------------------------


@pytest.mark.parametrize(
    "target, choices, rendered, expected",
    [
        (1, ["a", "b"], False, 1),
        (False, ["a", "b"], False, 0),
        ("b", ["a", "b"], False, 1),
        ("b", ["a", "b"], True, 1),
        ("1", ["a", "b"], True, 1),
        ("1", ["0", "1"], False, 1),
        ("1", ["0", "1"], True, 1),
        ("3", ["3", "4", "5"], False, 0),
        (" 1", [" 1", "2"], True, 0),  # not digits: a text, as lm-eval reads it
        (True, ["True", "False"], True, 0),  # a template renders True as the text "True"
        (2, [1, 2, 3], False, 2),
        ("5", [4, 5, 6], False, 1),  # non-string choices compare by their text
        ([1, "a"], ["a", "b"], False, [1, 0]),
    ],
)
def test_resolve_gold(target, choices, rendered, expected):
    assert resolve_gold(target, choices, rendered=rendered) == expected


@pytest.mark.parametrize(
    "target, choices, rendered",
    [
        ("1", ["a", "b"], False),
        ("2", ["a", "b"], True),
        ("B", ["a", "b"], False),
        ("3", ["3", "4", "5", "6"], False),
        ("3", ["3", "4", "5", "6"], True),
        ("a", ["a", "a"], False),
        (-1, ["a", "b"], False),
        (1.0, ["a", "b"], False),
        (None, ["a", "b"], False),
        ([], ["a", "b"], False),
        (0, [], False),
    ],
)
def test_resolve_gold_refuses(target, choices, rendered):
    with pytest.raises(TargetError):
        resolve_gold(target, choices, rendered=rendered)
