"""Reading a reply's answer the way the style shows answers (plain Python, no inspect_ai)."""

from __future__ import annotations

import re
from pathlib import Path

import prompt_style_inspect
import pytest
from prompt_style_inspect.answers import final_answer, matches_reference, parse_answer

LETTERS = ["A", "B", "C", "D"]
TEXTS = ["London", "Paris", "Rome", "Oslo"]
HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("B", 1),
        (" B", 1),
        ("b", 1),
        ("(B)", 1),
        ("**B**", 1),
        ("$B$", 1),
        ("\\boxed{C}", 2),
        ("[C]", 2),
        ("B.", 1),
        ("B)", 1),
        ("B. Paris", 1),
        ("(B) Paris", 1),
        ("B: Paris", 1),
        ("Option B", 1),
        ("The answer is B.", 1),
        ("The correct answer is (D).", 3),
        ("Let me think.\nParis is in France.\nANSWER: B", 1),
        ("answer: (D)", 3),
        ("Final answer: C", 2),
        ("Paris", 1),  # the choice text
        ("paris.", 1),
        ("A cat sat on the mat.", None),  # an article is not the label A
        ("E", None),
        ("", None),
        ("I don't know", None),
    ],
)
def test_letters(reply, expected):
    assert parse_answer(reply, LETTERS, TEXTS) == expected


def test_continuations_keep_their_delimiter_until_parsed():
    assert parse_answer("B", [" A", " B"]) == 1


@pytest.mark.parametrize(
    ("reply", "answers", "expected"),
    [
        ("2", ["1", "2", "3"], 1),
        ("2.", ["1", "2", "3"], 1),
        ("12", ["1", "2", "3"], None),
        ("The answer is 3", ["1", "2", "3"], 2),
        ("II", ["I", "II", "III", "IV"], 1),
        ("iv", ["I", "II", "III", "IV"], 3),
        ("The answer is IV.", ["I", "II", "III", "IV"], 3),
        ("I", ["I", "II", "III", "IV"], 0),
        ("Paris is the capital.", ["Paris", "London"], 0),  # cloze: the answers are the texts
        ("New York", ["York", "New York"], 1),  # the longest answer that fits
    ],
)
def test_numbers_roman_numerals_and_texts(reply, answers, expected):
    assert parse_answer(reply, answers) == expected


def test_generation_references():
    assert final_answer("work...\nANSWER: 144") == "144"
    assert final_answer("  The Sun ") == "The Sun"
    assert matches_reference("The Sun", ["The Sun"])
    assert matches_reference("the sun", ["The Sun"])
    assert matches_reference("Reasoning.\nANSWER: 144", ["144"])
    assert not matches_reference("145", ["144"])


def test_the_package_imports_without_inspect_ai():
    # The plain-Python parts are importable where inspect_ai is not (the dev environment).
    assert prompt_style_inspect.parse_answer is parse_answer
    assert set(prompt_style_inspect.__all__) <= set(dir(prompt_style_inspect))


def test_entry_point_name_is_the_module_name():
    # inspect_ai loads only the entry point whose name is the package prefix (prompt_style_inspect/task).
    project = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    group = project.split("[project.entry-points.inspect_ai]", 1)[1].split("[", 1)[0]
    assert group.strip() == 'prompt_style_inspect = "prompt_style_inspect._registry"'
    assert 'dependencies = ["prompt-style>=0.1.0"]' in project


def test_sources_use_the_public_api_only():
    for path in (HERE.parent / "src" / "prompt_style_inspect").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"from prompt_style\.|import prompt_style\.", text), path.name
