"""Fields of user code (a Python callable, lm-evaluation-harness's ``!function``) on the
renderer's compiled fast path: the same prompts and errors as the general path, and each
field called once a record, as without the fast path, whichever path renders it."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from _fastpath_support import outcome

from prompt_style import load_task

AWKWARD: list[dict[str, Any]] = [
    {"q": "Plain question?", "c": ["a", "b", "c", "d"], "a": 1},
    {"q": "  {braces} {{x}} {0} %s {q}  ", "c": ["{a}", "}{", "{{", "%d"], "a": 0},
    {"q": "Ünïcødé — 你好 \u2028 tab\t", "c": ["α", "β", "γ"], "a": 2},
    {"q": "ints", "c": [1, 2, 3], "a": 0},
    {"q": "null choice", "c": ["a", None], "a": 0},
    {"q": None, "c": ["a", "b"], "a": 0},
    {"q": "null choices", "c": None, "a": 0},
    {"q": "null target", "c": ["a", "b"], "a": None},
    {"q": "out of range", "c": ["a", "b"], "a": 5},
    {"q": "text target", "c": ["a", "b"], "a": "b"},
    {"q": "list target", "c": ["a", "b", "c"], "a": [0, 2]},
    {"q": 42, "c": ["a", "b"], "a": 0},
    {"c": ["a", "b"], "a": 0},
    {"q": "missing choices", "a": 0},
    {"q": "choices as text", "c": "['a', 'b']", "a": 1},
]

POOL: list[dict[str, Any]] = [
    {"q": "Shot one?", "c": ["x", "y", "z", "w"], "a": 2},
    {"q": "  shot two  ", "c": ["{p}", "q"], "a": 1},
    {"q": "shot three", "c": ["α", "β", "γ"], "a": 0},
]


def task_of(style: str = "mcq", **keys: Any) -> dict[str, Any]:
    return {
        "data": {"test": [{"q": "unused", "c": ["a"], "a": 0}], "dev": POOL},
        "fewshot_split": "dev",
        "doc_to_text": "q",
        "doc_to_choice": "c",
        "doc_to_target": "a",
        "template": {"template_type": style},
        "num_fewshot": 2,
        **keys,
    }


class _Counting:
    """User code that keeps state: the number of calls per record shows in the text."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.calls: dict[int, int] = {}

    def __call__(self, record: Any) -> Any:
        key = id(record)
        self.calls[key] = self.calls.get(key, 0) + 1
        value = record.get(self.spec) if isinstance(record, dict) else None
        if self.spec == "q" and isinstance(value, str):
            return f"{value} (call {self.calls[key]})"
        return value


@pytest.mark.parametrize("retriever", ["first_n", "random"])
@pytest.mark.parametrize("bad", ["text", "target"])
def test_user_code_fields_take_the_fast_path_and_run_once_a_record(pm, retriever, bad):
    """A callable field (lm-evaluation-harness's ``!function``) is called once a record,
    on either path: the fast path keeps its value (or error) for the general path, which
    renders a record the fast path does not (a null target, a text question that is a
    number...)."""
    fields = {"q": _Counting("q"), "c": _Counting("c"), "a": _Counting("a")}
    task = task_of("mcq", doc_to_text=fields["q"], doc_to_choice=fields["c"], doc_to_target=fields["a"])
    task["retriever"] = retriever
    records = [dict(r) for r in AWKWARD]
    fast = load_task(task, plugins=pm).renderer
    assert fast.fast_render() is not None
    made = [outcome(functools.partial(fast.render, record, index)) for index, record in enumerate(records)]
    assert all(fields[k].calls.get(id(r), 0) <= 1 for k in fields for r in records)
    # the general path alone, with fresh counters: the same prompts and errors
    plain = {"q": _Counting("q"), "c": _Counting("c"), "a": _Counting("a")}
    other = task_of("mcq", doc_to_text=plain["q"], doc_to_choice=plain["c"], doc_to_target=plain["a"])
    other["retriever"] = retriever
    general = load_task(other, plugins=pm).renderer
    general._fast = None
    expected = [outcome(functools.partial(general.render, record, index)) for index, record in enumerate(records)]
    assert [m[:-1] for m in made] == [e[:-1] for e in expected]
    assert any(m[0] == "error" for m in made) and any(m[0] == "ok" for m in made)
    assert {k: [c.calls.get(id(r)) for r in records] for k, c in fields.items()} == {
        k: [c.calls.get(id(r)) for r in records] for k, c in plain.items()
    }


def test_user_code_generation_fields_run_once_a_record(pm):
    def make() -> tuple[dict[str, Any], dict[str, _Counting]]:
        fields = {"q": _Counting("q"), "a": _Counting("a")}
        task = task_of("mcq", doc_to_text=fields["q"], doc_to_target=fields["a"])
        task.pop("doc_to_choice")
        task.update(template="passthrough", output_type="generate_until")
        return task, fields

    records = [dict(r) for r in AWKWARD]
    task, fields = make()
    fast = load_task(task, plugins=pm).renderer
    assert fast.fast_render() is not None
    made = [outcome(functools.partial(fast.render, r, i)) for i, r in enumerate(records)]
    other, plain = make()
    general = load_task(other, plugins=pm).renderer
    general._fast = None
    expected = [outcome(functools.partial(general.render, r, i)) for i, r in enumerate(records)]
    assert [m[:-1] for m in made] == [e[:-1] for e in expected]
    assert {k: [c.calls.get(id(r)) for r in records] for k, c in fields.items()} == {
        k: [c.calls.get(id(r)) for r in records] for k, c in plain.items()
    }
