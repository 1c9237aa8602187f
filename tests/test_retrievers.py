"""Retrievers: ``zero``, ``fixed``, ``first_n`` and seeded ``random``."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

import prompt_style
from prompt_style import (
    OptionError,
    PluginNotFoundError,
    PromptStyleError,
    TaskFileError,
    create_plugin_manager,
    load_task,
)

N_TEST = 60
N_TRAIN = 12
TEST = [{"q": f"T{i}", "a": f"t{i}"} for i in range(N_TEST)]
TRAIN = [{"q": f"P{i}", "a": f"p{i}"} for i in range(N_TRAIN)]
GEN = dict(doc_to_text="q", doc_to_target="a", fewshot_delimiter="|", target_delimiter="=")


def shots_of(text: str) -> list[str]:
    """The few-shot questions of a rendered text ``P3=p3|P7=p7|T0``."""
    return [part.split("=")[0] for part in text.split("|")[:-1]]


def shot_ids(task) -> dict[int, list[str]]:
    return {r.index: shots_of(r.text) for r in task.render()}


@pytest.fixture
def same_split(make_task):
    def make(**keys):
        return make_task({"test": TEST}, **{**GEN, **keys})

    return make


@pytest.fixture
def separate(make_task):
    def make(**keys):
        return make_task({"test": TEST, "train": TRAIN}, **{**GEN, **keys})

    return make


# -- zero and first_n -----------------------------------------------------------------


def test_zero_shot_by_default(separate, pm):
    task = load_task(separate(), plugins=pm)
    assert [r.text for r in task.render(limit=2)] == ["T0", "T1"]
    assert task.plugins["retrieve_examples"]["name"] == "zero"


def test_zero_with_num_fewshot_is_error(separate, pm):
    with pytest.raises(TaskFileError) as info:
        load_task(separate(retriever="zero", num_fewshot=2), plugins=pm)
    assert "num_fewshot" in str(info.value)


def test_first_n_is_the_default_with_num_fewshot(separate, pm):
    task = load_task(separate(num_fewshot=3), plugins=pm)
    assert task.plugins["retrieve_examples"]["name"] == "first_n"
    ids = shot_ids(task)
    assert all(shots == ["P0", "P1", "P2"] for shots in ids.values())
    assert next(task.render()).text == "P0=p0|P1=p1|P2=p2|T0"


def test_first_n_same_split_skips_the_record_itself(same_split, pm):
    ids = shot_ids(load_task(same_split(num_fewshot=3, retriever="first_n"), plugins=pm))
    assert ids[0] == ["T1", "T2", "T3"]
    assert ids[1] == ["T0", "T2", "T3"]
    assert ids[2] == ["T0", "T1", "T3"]
    assert ids[3] == ["T0", "T1", "T2"]
    assert ids[50] == ["T0", "T1", "T2"]
    for index, shots in ids.items():
        assert f"T{index}" not in shots
        assert len(set(shots)) == 3


def test_first_n_fewshot_split_uses_train_by_default(separate, pm):
    # train is preferred to the evaluated split as the few-shot pool
    assert next(load_task(separate(num_fewshot=1), plugins=pm).render()).text == "P0=p0|T0"


# -- fixed ----------------------------------------------------------------------------


def test_fixed(separate, pm):
    task = load_task(separate(retriever={"name": "fixed", "ids": [5, 2]}), plugins=pm)
    assert all(shots == ["P5", "P2"] for shots in shot_ids(task).values())


def test_fixed_agrees_with_num_fewshot(separate, pm):
    task = load_task(separate(retriever={"name": "fixed", "ids": [5, 2]}, num_fewshot=2), plugins=pm)
    assert next(task.render()).text == "P5=p5|P2=p2|T0"
    with pytest.raises(TaskFileError) as info:
        load_task(separate(retriever={"name": "fixed", "ids": [5, 2]}, num_fewshot=3), plugins=pm)
    assert "num_fewshot" in str(info.value)


@pytest.mark.parametrize("ids", [[N_TRAIN], [0, 99], [-1], ["1"]])
def test_fixed_ids_out_of_range(separate, pm, ids):
    path = separate(retriever={"name": "fixed", "ids": ids})
    with pytest.raises(PromptStyleError) as info:
        load_task(path, plugins=pm)
    assert "ids" in str(info.value)
    assert str(path) in str(info.value)


def test_fixed_without_ids(separate, pm):
    with pytest.raises(OptionError):
        load_task(separate(retriever="fixed"), plugins=pm)


def test_fixed_on_the_evaluated_split_is_error(same_split, pm):
    path = same_split(retriever={"name": "fixed", "ids": [0, 1]})
    with pytest.raises(TaskFileError) as info:
        load_task(path, plugins=pm)
    message = str(info.value)
    assert "fixed" in message
    assert str(path) in message
    assert "fewshot_split" in message


def test_fixed_on_the_evaluated_split_names_a_real_task_key(same_split, pm):
    # The error is about the top-level key fewshot_split; there is no key
    # "retriever.fewshot_split" in a task file.
    with pytest.raises(TaskFileError) as info:
        load_task(same_split(retriever={"name": "fixed", "ids": [0, 1]}), plugins=pm)
    assert info.value.key == "fewshot_split"


# -- random ---------------------------------------------------------------------------


def test_random_draws_k_distinct_examples(separate, pm):
    ids = shot_ids(load_task(separate(num_fewshot=4, retriever="random"), plugins=pm))
    assert len(ids) == N_TEST
    for shots in ids.values():
        assert len(shots) == 4 and len(set(shots)) == 4
        assert all(re.fullmatch(r"P\d+", s) for s in shots)
    # not the same examples for every record
    assert len({tuple(s) for s in ids.values()}) > 1


def test_random_is_reproducible_across_managers_and_tasks(separate):
    path = separate(num_fewshot=3, retriever="random", seed=99)
    a = [r.text for r in load_task(path, plugins=create_plugin_manager(entry_points=False, environ={})).render()]
    b = [r.text for r in load_task(path, plugins=create_plugin_manager(environ={})).render()]
    assert a == b


def test_random_is_reproducible_across_pickling(separate, pm):
    task = load_task(separate(num_fewshot=3, retriever="random"), plugins=pm)
    expected = [r.text for r in task.render()]
    clone = pickle.loads(pickle.dumps(task.renderer))
    records = list(task.records())
    assert [clone.render(rec, i).text for i, rec in enumerate(records)] == expected


@pytest.mark.parametrize("split", ["same", "separate"])
def test_random_depends_only_on_seed_and_index(same_split, separate, pm, split):
    make = same_split if split == "same" else separate
    path = make(num_fewshot=3, retriever="random")
    task = load_task(path, plugins=pm)
    expected = {r.index: r.text for r in task.render()}
    records = list(task.records())
    # reversed order, in a fresh task
    other = load_task(path, plugins=pm).renderer
    for i in reversed(range(len(records))):
        assert other.render(records[i], i).text == expected[i]
    # a subset (every 7th record), in another fresh task
    other = load_task(path, plugins=pm).renderer
    for i in range(3, len(records), 7):
        assert other.render(records[i], i).text == expected[i]
    # rendering one record twice gives the same
    assert other.render(records[5], 5).text == other.render(records[5], 5).text == expected[5]


def test_random_never_picks_the_record_itself(make_task, pm):
    records = [{"q": f"T{i}", "a": f"t{i}"} for i in range(200)]
    for k in (1, 5, 199):
        path = make_task({"test": records}, retriever="random", num_fewshot=k, **GEN)
        for index, shots in shot_ids(load_task(path, plugins=pm)).items():
            assert f"T{index}" not in shots
            assert len(shots) == k and len(set(shots)) == k


def test_random_never_picks_itself_with_explicit_fewshot_split(make_task, pm):
    records = [{"q": f"T{i}", "a": f"t{i}"} for i in range(40)]
    path = make_task({"test": records}, fewshot_split="test", retriever="random", num_fewshot=5, **GEN)
    for index, shots in shot_ids(load_task(path, plugins=pm)).items():
        assert f"T{index}" not in shots


def test_different_seeds_differ(separate, pm):
    a = [r.text for r in load_task(separate(num_fewshot=3, retriever="random", seed=1), plugins=pm).render()]
    b = [r.text for r in load_task(separate(num_fewshot=3, retriever="random", seed=2), plugins=pm).render()]
    assert a != b
    c = [r.text for r in load_task(separate(num_fewshot=3, retriever="random", seed=1), plugins=pm).render()]
    assert a == c


def test_seed_sources(separate, pm):
    """The task's ``seed``, the retriever's ``seed`` option, and ``load_task(seed=)``."""

    def render(path, **kwargs):
        return [r.text for r in load_task(path, plugins=pm, **kwargs).render()]

    by_task_seed = render(separate(num_fewshot=3, retriever="random", seed=7))
    by_option = render(separate(num_fewshot=3, retriever={"name": "random", "seed": 7}))
    by_argument = render(separate(num_fewshot=3, retriever="random"), seed=7)
    assert by_task_seed == by_option == by_argument
    assert by_task_seed != render(separate(num_fewshot=3, retriever="random"))


def test_seed_argument_overrides_retriever_seed_option(separate, pm):
    """``load_task(seed=)`` (and ``--seed``) must not be silently ignored when the
    task's retriever mapping has its own seed (as examples/arc/task.yaml does)."""
    path = separate(num_fewshot=3, retriever={"name": "random", "seed": 1234})
    overridden = [r.text for r in load_task(path, plugins=pm, seed=7).render()]
    expected = [r.text for r in load_task(separate(num_fewshot=3, retriever="random", seed=7), plugins=pm).render()]
    assert overridden == expected


def test_random_option_typo(separate, pm):
    with pytest.raises(OptionError) as info:
        load_task(separate(num_fewshot=1, retriever={"name": "random", "sed": 3}), plugins=pm)
    assert "did you mean 'seed'" in str(info.value)


def test_unknown_retriever(separate, pm):
    with pytest.raises(PluginNotFoundError) as info:
        load_task(separate(num_fewshot=1, retriever="randm"), plugins=pm)
    assert "random" in str(info.value)


# -- pool size ------------------------------------------------------------------------


@pytest.mark.parametrize("retriever", [None, "first_n", "random"])
def test_num_fewshot_larger_than_pool(separate, pm, retriever):
    keys = {"num_fewshot": N_TRAIN + 1}
    if retriever:
        keys["retriever"] = retriever
    path = separate(**keys)
    with pytest.raises(TaskFileError) as info:
        load_task(path, plugins=pm)
    message = str(info.value)
    assert "num_fewshot" in message
    assert str(N_TRAIN) in message
    assert str(path) in message


@pytest.mark.parametrize("retriever", ["first_n", "random"])
def test_num_fewshot_larger_than_pool_names_the_key(separate, pm, retriever):
    # num_fewshot is a top-level task key; the error's key and line must be its own.
    path = separate(num_fewshot=N_TRAIN + 1, retriever=retriever)
    with pytest.raises(TaskFileError) as info:
        load_task(path, plugins=pm)
    assert info.value.key == "num_fewshot"
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("num_fewshot:"))
    assert info.value.line == line


@pytest.mark.parametrize("retriever", ["first_n", "random"])
def test_same_split_pool_excludes_the_record(same_split, pm, retriever):
    with pytest.raises(TaskFileError) as info:
        load_task(same_split(num_fewshot=N_TEST, retriever=retriever), plugins=pm)
    assert "num_fewshot" in str(info.value)
    # N_TEST - 1 examples fit
    task = load_task(same_split(num_fewshot=N_TEST - 1, retriever=retriever), plugins=pm)
    shots = shots_of(next(task.render()).text)
    assert len(shots) == N_TEST - 1 and "T0" not in shots


def test_shots_argument_replaces_num_fewshot(separate, pm):
    task = load_task(separate(num_fewshot=3), plugins=pm, shots=1)
    assert next(task.render()).text == "P0=p0|T0"
    task = load_task(separate(num_fewshot=3), plugins=pm, shots=0)
    assert next(task.render()).text == "T0"
    with pytest.raises(TaskFileError):
        load_task(separate(), plugins=pm, shots=-1)


def test_first_n_on_the_evaluated_split_skips_duplicates_like_lm_eval(pm):
    # Expected strings from lm-evaluation-harness 0.4.13 (tools/golden/README.md).
    from prompt_style import render_records

    records = [{"q": "alpha", "a": "a"}, {"q": "beta ", "a": "b"}, {"q": "alpha", "a": "a"}, {"q": "gamma", "a": "b"}]
    results = render_records(
        records, doc_to_text="Q: {{q}}", doc_to_target="a", num_fewshot=2, retriever="first_n", plugins=pm
    )
    assert results[0].text == "Q: beta  b\n\nQ: gamma b\n\nQ: alpha"
    assert results[2].text == "Q: beta  b\n\nQ: gamma b\n\nQ: alpha"


def test_explicit_zero_shots_is_zero_shot_whatever_the_retriever(make_task, pm):
    """--shots 0 (shots=0) renders zero-shot even when the task names a retriever
    with fixed examples, instead of failing on the (unloaded) few-shot pool."""
    path = make_task(
        {"test": [{"q": "Q0", "a": "A0"}], "train": [{"q": "T0", "a": "B0"}, {"q": "T1", "a": "B1"}]},
        doc_to_text="q",
        doc_to_target="a",
        fewshot_split="train",
        retriever={"name": "fixed", "ids": [0, 1]},
    )
    few = prompt_style.load_task(path, plugins=pm)
    assert [p.text for p in few.render()] == ["T0 B0\n\nT1 B1\n\nQ0"]
    zero = prompt_style.load_task(path, plugins=pm, shots=0)
    assert [p.text for p in zero.render()] == ["Q0"]
    assert zero.plugins["retrieve_examples"]["name"] == "zero"


def test_explicit_zero_shots_on_an_opencompass_fixk_config(pm):
    task = Path(__file__).resolve().parents[1] / "examples" / "opencompass" / "task.yaml"
    [prompt] = prompt_style.load_task(task, plugins=pm, shots=0).render(limit=1)
    assert "</E>" not in prompt.text and "Question: What is 15% of 200?" not in prompt.text
