"""Answer parsing against inspect_ai 0.3.285's ``multiple_choice`` (golden file made by
tools/golden/make_inspect_answers_golden.py with the real inspect_ai)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_style import ChoiceAnswerParser

GOLDEN = Path(__file__).parent / "golden" / "inspect" / "answers.json"
DATA = json.loads(GOLDEN.read_text(encoding="utf-8"))
CASES = DATA["cases"]


def labels_of(case):
    return list("ABCDE"[: len(case["choices"])])


def read(parser, case):
    labels = labels_of(case)
    parsed = parser.parse(case["completion"], labels=labels, choices=case["choices"], multiple=case["multiple"])
    return [] if parsed is None else sorted(labels[i] for i in parsed.indices)


def test_the_golden_file_is_inspect_ai_0_3_285():
    assert DATA["generator"]["inspect_ai"] == "0.3.285"
    assert len(CASES) > 900 and sum(1 for c in CASES if c["inspect"]) > 400


def test_strict_parser_reads_every_completion_as_inspect_ai():
    strict = ChoiceAnswerParser(lenient=False)
    wrong = [
        (c["completion"], c["multiple"], c["inspect"], read(strict, c))
        for c in CASES
        if read(strict, c) != c["inspect"]
    ]
    assert not wrong, wrong[:10]


def test_lenient_parser_agrees_wherever_inspect_ai_reads_an_answer():
    lenient = ChoiceAnswerParser()
    wrong = [
        (c["completion"], c["multiple"], c["inspect"], read(lenient, c))
        for c in CASES
        if c["inspect"] and read(lenient, c) != c["inspect"]
    ]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize(
    "completion",
    ["The answer is (B).", "**B**", "B.", "\\boxed{B}", "B. the Moon", "the Moon", "ANSWER: B because it is right"],
)
def test_lenient_parser_reads_what_inspect_ai_does_not(completion):
    case = next(c for c in CASES if c["completion"] == completion and len(c["choices"]) == 4 and not c["multiple"])
    assert case["inspect"] == []  # inspect_ai reads nothing here
    assert read(ChoiceAnswerParser(), case) == ["B"]


def test_lenient_parser_never_reads_noise():
    lenient = ChoiceAnswerParser()
    for completion in ("", "I don't know.", "ANSWER: Z", "ANSWER: none"):
        for case in (c for c in CASES if c["completion"] == completion):
            assert read(lenient, case) == [], case
