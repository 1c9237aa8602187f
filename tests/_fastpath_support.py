"""Records, styles and the comparison of the two paths, shared by the fast path's
tests (``test_fastpath.py``, ``test_fastpath_chat.py``): imported by name (this folder
is put on ``sys.path`` by ``conftest.py``)."""

from __future__ import annotations

import functools
from typing import Any

import prompt_style
from prompt_style import load_task
from prompt_style.render import TaskRenderer

# -- records -------------------------------------------------------------------------

AWKWARD: list[dict[str, Any]] = [
    {"q": "Plain question?", "c": ["a", "b", "c", "d"], "a": 1, "s": "math"},
    {"q": "  {braces} {{x}} {0} %s {q}  ", "c": ["{a}", "}{", "{{", "%d"], "a": 0, "s": "x_y"},
    {"q": "Ünïcødé — 你好 \u2028 tab\t", "c": ["α", "β", "γ"], "a": 2, "s": "ü"},
    {"q": "five?", "c": ["1", "2", "3", "4", "5"], "a": 4, "s": "a"},
    {"q": "\n leading newline", "c": [" sp ", "\ttab", "x\n", ""], "a": 3, "s": "b"},
    {"q": "ints", "c": [1, 2, 3], "a": 0, "s": "c"},
    {"q": "floats and bools", "c": [1.5, True, "x"], "a": 1, "s": "c"},
    {"q": "null choice", "c": ["a", None], "a": 0, "s": "c"},
    {"q": None, "c": ["a", "b"], "a": 0, "s": "c"},
    {"q": "null choices", "c": None, "a": 0, "s": "c"},
    {"q": "null target", "c": ["a", "b"], "a": None, "s": "c"},
    {"q": "out of range", "c": ["a", "b"], "a": 5, "s": "c"},
    {"q": "negative", "c": ["a", "b"], "a": -1, "s": "c"},
    {"q": "text target", "c": ["a", "b"], "a": "b", "s": "c"},
    {"q": "digit text target", "c": ["3", "4", "5"], "a": "3", "s": "c"},
    {"q": "ambiguous digits", "c": ["3", "4", "5", "6"], "a": "3", "s": "c"},
    {"q": "bool target", "c": ["a", "b"], "a": True, "s": "c"},
    {"q": "list target", "c": ["a", "b", "c"], "a": [0, 2], "s": "c"},
    {"q": "float target", "c": ["a", "b"], "a": 1.0, "s": "c"},
    {"q": "no choices", "c": [], "a": 0, "s": "c"},
    {"q": 42, "c": ["a", "b"], "a": 0, "s": "c"},
    {"q": "26 choices", "c": [f"o{i}" for i in range(26)], "a": 25, "s": "c"},
    {"q": "27 choices", "c": [f"o{i}" for i in range(27)], "a": 0, "s": "c"},
    {"q": "70 choices", "c": [f"o{i}" for i in range(70)], "a": 69, "s": "c"},
    {"c": ["a", "b"], "a": 0, "s": "missing question"},
    {"q": "missing choices", "a": 0, "s": "c"},
    {"q": "choices as text", "c": "['a', 'b']", "a": 1, "s": "c"},
    {"q": "blank ___ inside", "c": ["a", "b"], "a": 0, "s": "c"},
    {"q": "dict choice", "c": [{"k": 1}, "b"], "a": 0, "s": "c"},
]

POOL: list[dict[str, Any]] = [
    {"q": "Shot {0} one?", "c": ["x", "y", "z", "w"], "a": 2, "s": "dev"},
    {"q": "  shot two  ", "c": ["{p}", "q"], "a": 1, "s": "dev"},
    {"q": "shot ___ three", "c": ["α", "β", "γ"], "a": 0, "s": "dev"},
]

# Style options (the built-in ``mcq`` takes every ChoiceStyle option).
STYLES: dict[str, dict[str, Any]] = {
    "mcq": {},
    "conversion_spec": {"choice_format": "{label}) {choice!r:>8}", "answer_format": "({label})"},
    "numbers": {"choice_format": "{number:02d}. {choice}", "answer_format": "{number}"},
    "labels_5": {"choice_labels": ["1", "2", "3", "4", "5"]},
    "answer_with_choice": {"answer_format": "{label}: {choice}"},
    "cloze_qa": {"prefix": "Question: ", "show_choices": False, "answer_format": "{choice}"},
    "cloze_end": {
        "suffix": "",
        "blank_marker": "______",
        "choices_header": "\nOptions: ",
        "choice_delimiter": " ",
        "answer_format": "{choice}",
    },
    "cloze_inline": {"blank_marker": "___", "blank_position": "inline", "answer_format": "{choice}"},
    "braces_everywhere": {
        "prefix": "Q{0}: ",
        "suffix": "{Answer}:",
        "choices_header": "Opts {{x}}:\n",
        "question_choice_delimiter": "",
        "choice_delimiter": " | ",
    },
    "no_suffix": {"suffix": "", "question_choice_delimiter": "\n\n"},
    "ascii_label": {"choice_format": "{label!a}={choice!s}", "choice_labels": ["é", "ü", "ö", "ä", "ß"] * 6},
}

DESCRIPTIONS: dict[str, Any] = {
    "none": None,
    "literal": "The following {x} are questions.\n\n",
    "jinja": "About {{ s }}:\n\n",
    "jinja_empty_sometimes": "{% if s != 'c' %}Subject {{ s }}\n{% endif %}",
}


def outcome(render: Any) -> tuple[Any, ...]:
    """What rendering gives: the prompt's observable fields, or the error."""
    try:
        r = render()
    except prompt_style.PromptStyleError as exc:
        return ("error", type(exc).__name__, str(exc), exc.key, exc.index, exc.split, exc.line)
    return ("ok", r.to_json(), r.dialogue, r.continuations, r.target, r.text, r.messages, r.until, r)


def renderers(task: Any, pm: Any, **kwargs: Any) -> tuple[TaskRenderer, TaskRenderer]:
    fast = load_task(task, plugins=pm, **kwargs).renderer
    general = load_task(task, plugins=pm, **kwargs).renderer
    general._fast = None  # the general path only
    return fast, general


def assert_same(task: Any, pm: Any, records: list[Any], **kwargs: Any) -> list[tuple[Any, ...]]:
    """Render every record through both paths (``task``: a task file or its mapping); they
    must agree. Returns the outcomes."""
    fast, general = renderers(task, pm, **kwargs)
    outcomes = []
    for index, record in enumerate(records):
        a = outcome(functools.partial(fast.render, record, index))
        b = outcome(functools.partial(general.render, record, index))
        assert a == b, f"record {index} {record!r}:\nfast    {a!r}\ngeneral {b!r}"
        outcomes.append(a)
    return outcomes


def task_of(style: str = "mcq", description: Any = None, shots: int = 2, **keys: Any) -> dict[str, Any]:
    pool = POOL if style != "cloze_inline" else [{**r, "q": r["q"] + " ___"} for r in POOL]
    task: dict[str, Any] = {
        "data": {"test": [{"q": "unused", "c": ["a"], "a": 0}], "dev": pool},
        "fewshot_split": "dev",
        "doc_to_text": "q",
        "doc_to_choice": "c",
        "doc_to_target": "a",
        "template": {"template_type": "mcq", **STYLES[style]},
        "num_fewshot": shots,
        **keys,
    }
    if description is not None:
        task["description"] = description
    return task
