"""Regenerate tests/golden/inspect/answers.json: inspect_ai's own reading of
model-style completions to multiple-choice prompts.

Run with the Python of a throwaway venv OUTSIDE the repo that has inspect_ai
(versions this script was run with: inspect_ai 0.3.285, Python 3.11):

    python3.11 -m venv /tmp/venvs/inspect
    /tmp/venvs/inspect/bin/pip install inspect_ai==0.3.285
    /tmp/venvs/inspect/bin/python tools/golden/make_inspect_answers_golden.py

It builds a corpus of completions — the answer forms models write (``ANSWER: X``
lines, wrapped letters ``(B)`` ``**B**`` ``$B$``, answer phrases, bare letters,
choice texts, several answers, self-corrections, noise) for 3, 4 and 5 choices
— and records what inspect_ai 0.3.285's ``multiple_choice`` solver reads from each
(``inspect_ai.solver._multiple_choice.parse_answers``, called on a task state
holding the completion and the choices), with ``multiple_correct`` false and
true. ``tests/test_golden_inspect_answers.py`` checks prompt-style's
``ChoiceAnswerParser`` against it. Deterministic: the same versions give the
same file.
"""

from __future__ import annotations

import itertools
import json
import platform
import sys
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

from inspect_ai.solver._multiple_choice import parse_answers

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "inspect" / "answers.json"

CHOICES = ["Paris", "the Moon", "4", "carbon dioxide", "none of the above"]

# {L}, {M}: two labels; {l}: {L} lower-cased; {T}: the text of choice {L}
TEMPLATES = [
    "ANSWER: {L}",
    "ANSWER: {l}",
    "answer: {L}",
    "Answer:{L}",
    "ANSWER : {L}",
    "ANSWER: {L}.",
    "ANSWER: {L} ",
    "ANSWER: ({L})",
    "ANSWER: **{L}**",
    "ANSWER: ${L}$",
    "ANSWER: $ {L} $",
    "ANSWER: ** {L} **",
    "**ANSWER: {L}**",
    "ANSWER: [{L}]",
    "ANSWER: {L})",
    "ANSWER: {L}: {T}",
    "ANSWER: {L} because it is right",
    "ANSWER: {L}, {M}",
    "ANSWER: {L},{M}",
    "ANSWER: {L} {M}",
    "ANSWER: {L}{M}",
    "ANSWER: {L} and {M}",
    "ANSWER: {L}, and {M}",
    "ANSWER: {L},",
    "Let me think step by step.\nThe first option is wrong.\nANSWER: {L}",
    "Reasoning about it...\n\nANSWER: {L}\n",
    "ANSWER: {L}\nWait, that is wrong.\nANSWER: {M}",
    "I first thought ANSWER: {M}, but the last line counts.\nANSWER: {L}",
    "The answer is {L}.",
    "The answer is ({L}).",
    "The correct answer is **{L}**.",
    "Final answer: {L}",
    "Final Answer: ({L})",
    "So the answer is: {L}",
    "{L}",
    "{L}.",
    "({L})",
    "**{L}**",
    "${L}$",
    "[{L}]",
    "{L}) {T}",
    "{L}. {T}",
    "\\boxed{{{L}}}",
    "The answer is \\boxed{{{L}}}.",
    "{T}",
    "I believe it is {T}.",
    "Between {L} and {M}, I pick {L}.",
    "ANSWER: {L} or {M}",
    "answer {L}",
    "ANSWER:\n{L}",
    "Option {L}",
    "",
    "I don't know.",
    "ANSWER: Z",
    "ANSWER: 2",
    "ANSWER: none",
    "ANSWERS: {L}",
    "My ANSWER: {L}",
    "ANSWER - {L}",
]


def inspect_reads(completion: str, n: int, multiple: bool) -> list[str]:
    state = SimpleNamespace(output=SimpleNamespace(completion=completion), choices=[None] * n)
    return sorted(parse_answers(state, multiple))


def main() -> None:
    cases = []
    seen = set()
    for n in (3, 4, 5):
        letters = "ABCDE"[:n]
        pairs = [(letters[0], letters[-1]), (letters[1], letters[0]), (letters[-1], letters[1])]
        for template, (first, second) in itertools.product(TEMPLATES, pairs):
            completion = template.format(L=first, M=second, l=first.lower(), T=CHOICES["ABCDE".index(first)])
            for multiple in (False, True):
                key = (completion, n, multiple)
                if key in seen:
                    continue
                seen.add(key)
                cases.append(
                    {
                        "completion": completion,
                        "choices": CHOICES[:n],
                        "multiple": multiple,
                        "inspect": inspect_reads(completion, n, multiple),
                    }
                )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "generator": {
            "script": "tools/golden/make_inspect_answers_golden.py",
            "inspect_ai": metadata.version("inspect_ai"),
            "python": platform.python_version(),
            "function": "inspect_ai.solver._multiple_choice.parse_answers",
        },
        "cases": cases,
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    parsed = sum(1 for c in cases if c["inspect"])
    print(f"{OUT}: {len(cases)} cases, {parsed} read by inspect_ai", file=sys.stderr)


if __name__ == "__main__":
    main()
