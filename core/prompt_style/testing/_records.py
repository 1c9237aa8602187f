"""The records the conformance kit renders: few, small, and awkward where it matters."""

from __future__ import annotations

from typing import Any

__all__ = ["FIELDS", "UNICODE_QUESTION", "UNICODE_CHOICES", "mcq_record", "pool", "unicode_record"]

FIELDS = {"doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer"}
"""The task keys of the kit's records (``question``, ``choices``, ``answer``)."""

# Mixed scripts, a combining accent (kept as written: no normalization), an emoji
# outside the BMP, right-to-left text and a non-breaking space.
UNICODE_QUESTION = "Quelle est la capitale du Japon ? 日本の首都は？ «Ωmega» e\u0301 🚀 עברית\u00a0?"
UNICODE_CHOICES = ["Tōkyō 東京", "Ōsaka 大阪", "Kyōto 京都", "São Paulo 🇧🇷"]


def mcq_record(n: int, answer: int | None = None, *, tag: str = "") -> dict[str, Any]:
    """A record with ``n`` distinct choices; the answer is choice ``n - 1`` unless given."""
    return {
        "question": f"Question{tag} with {n} choices: which is choice {n - 1 if answer is None else answer}?",
        "choices": [f"option {i}{tag}" for i in range(n)],
        "answer": n - 1 if answer is None else answer,
    }


def unicode_record() -> dict[str, Any]:
    return {"question": UNICODE_QUESTION, "choices": list(UNICODE_CHOICES), "answer": 0}


def pool(size: int, n: int = 4) -> list[dict[str, Any]]:
    """``size`` few-shot records, each recognisable (``Example 3: ...``), answers varying."""
    return [
        {
            "question": f"Example {i}: which choice is number {i % n}?",
            "choices": [f"ex{i} choice {j}" for j in range(n)],
            "answer": i % n,
        }
        for i in range(size)
    ]
