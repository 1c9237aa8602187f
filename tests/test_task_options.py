"""prompt_style.task_options: render's task-loading options as another tool hands them over."""

from __future__ import annotations

from pathlib import Path

import pytest

import prompt_style
from prompt_style import OptionError, task_options

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"


def test_values_as_text_become_load_task_arguments(tmp_path):
    got = task_options(
        {
            "shots": "5",
            "seed": "-3",
            "data": "test=a.jsonl, dev=b.jsonl",
            "trust_code": "true",
            "fewshot_as_multiturn": False,
            "template": "2",
            "data_root": "processed",
            "meta_options": {"add_generation_prompt": False},
            "style": "mcq::gpqa",
            "meta": "messages",
            "mode": "gen",
        },
        base=tmp_path,
    )
    assert got == {
        "shots": 5,
        "seed": -3,
        "data": {"test": str(tmp_path / "a.jsonl"), "dev": str(tmp_path / "b.jsonl")},
        "trust_code": True,
        "fewshot_as_multiturn": False,
        "template": 2,
        "read_options": {"data_root": str(tmp_path / "processed")},
        "meta_options": {"add_generation_prompt": False},
        "style": "mcq::gpqa",
        "meta": "messages",
        "mode": "gen",
    }


def test_none_means_not_given_and_paths_stay_as_given_without_base():
    assert task_options({"shots": None, "style": None}) == {}
    assert task_options({"data": ["test=x.jsonl"]}) == {"data": {"test": "x.jsonl"}}
    assert task_options({"data": {"test": "/abs/x.jsonl"}}, base="/elsewhere") == {"data": {"test": "/abs/x.jsonl"}}


def test_every_option_has_a_description_and_loads(tmp_path):
    assert set(prompt_style.TASK_OPTIONS) >= {"style", "meta", "shots", "seed", "data", "system_instruction"}
    kwargs = task_options({"shots": "1", "data": f"test={ROOT / 'examples/mmlu/data/test.jsonl'}"})
    expected = [p.text for p in prompt_style.load_task(MMLU, shots=1).render()]
    assert [p.text for p in prompt_style.load_task(MMLU, **kwargs).render()] == expected


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"shot": 1}, "-T: shot: unknown option 'shot' (did you mean 'shots'?)"),
        ({"shots": -1}, "-T: shots: must be 0 or more, not -1"),
        ({"shots": "five"}, "-T: shots: must be a whole number, not 'five'"),
        ({"shots": True}, "-T: shots: must be a whole number, not True"),
        ({"data": "test"}, "-T: data: expected SPLIT=PATH, got 'test'"),
        ({"data": {"test": 3}}, "-T: data: split 'test': the path must be text, not 3"),
        ({"trust_code": "yes"}, "-T: trust_code: must be true or false, not 'yes'"),
        ({"mode": "ppx"}, "-T: mode: must be gen or ppl, not 'ppx'"),
        ({"meta_options": "a=1"}, "-T: meta_options: must be a mapping of option names to values, not 'a=1'"),
        ({"style": ""}, "-T: style: must be text, not ''"),
    ],
)
def test_bad_values_name_the_option(values, message):
    with pytest.raises(OptionError) as exc:
        task_options(values, where="-T")
    assert str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)
