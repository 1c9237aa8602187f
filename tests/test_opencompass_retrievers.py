"""OpenCompass retrievers (``fixk``, ``opencompass_random``, ``sliding_window``, ``zero``)
against golden indices from OpenCompass 0.5.4 (tools/golden/make_opencompass_retriever_golden.py)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from prompt_style import OptionError, PromptStyleError, TaskFileError, load_task
from prompt_style.retrievers.numpy_random import LegacyRandomState
from prompt_style.retrievers.opencompass_names import (
    OPENCOMPASS_RETRIEVERS,
    STYLE_OPTIONS,
    translate_retriever,
)

GOLDEN = json.loads((Path(__file__).parent / "golden" / "opencompass" / "retrievers.json").read_text("utf-8"))
CORE_TYPES = {"ZeroRetriever", "FixKRetriever", "RandomRetriever", "SlidingWindowRetriever"}
CORE_CASES = [c for c in GOLDEN["cases"] if c["type"] in CORE_TYPES]


def task_for(case, **extra):
    """A native task that stands for an OpenCompass golden case (as the OpenCompass reader builds it)."""
    translated = translate_retriever(
        {"type": case["type"], **case["options"]}, input_columns=case["reader_cfg"]["input_columns"]
    )
    data = {"test": case["test"]} if case["same_split"] else {"train": case["train"], "test": case["test"]}
    return {
        "data": data,
        "fewshot_split": "test" if case["same_split"] else "train",
        "doc_to_text": "question",
        "doc_to_target": case["reader_cfg"]["output_column"],
        "retriever": {"name": translated.name, **translated.options},
        **translated.task,
        **extra,
    }


def selected(task):
    select = task.renderer.retriever.select
    return [list(select(i, record)) for i, record in enumerate(task.records())]


@pytest.mark.parametrize("case", CORE_CASES, ids=[c["name"] for c in CORE_CASES])
def test_indices_equal_opencompass(case, pm):
    task = load_task(task_for(case), plugins=pm)
    size = len(case["train"])
    assert selected(task) == [[i % size for i in row] for row in case["indices"]]


@pytest.mark.parametrize("case", CORE_CASES, ids=[c["name"] for c in CORE_CASES])
def test_records_render_in_any_order(case, pm):
    task = load_task(task_for(case), plugins=pm)
    records = list(task.records())
    select = task.renderer.retriever.select
    backwards = {i: list(select(i, records[i])) for i in reversed(range(len(records)))}
    assert [backwards[i] for i in range(len(records))] == selected(load_task(task_for(case), plugins=pm))


def test_random_retriever_survives_pickling(pm):
    case = next(c for c in CORE_CASES if c["name"].startswith("random_seed1234"))
    retriever = load_task(task_for(case), plugins=pm).renderer.retriever
    retriever.select(5, {})
    copy = pickle.loads(pickle.dumps(retriever))
    assert [list(copy.select(i, {})) for i in range(10)] == case["indices"][:10]


@pytest.mark.parametrize("seed", [0, 43, 2**32 - 1])
def test_pure_python_stream_equals_numpy(seed):
    numpy = pytest.importorskip("numpy")
    state = numpy.random.RandomState(seed)
    mine = LegacyRandomState(seed, use_numpy=False)
    for n, k in [(1, 1), (10, 3), (5000, 5), (70000, 2), (3, 0), (0, 0)]:
        assert mine.choice_without_replacement(n, k) == state.choice(n, k, replace=False).tolist()


def test_pure_python_stream_without_numpy_matches_golden():
    case = next(c for c in CORE_CASES if c["name"].startswith("random_seed7_pool1000"))
    state = LegacyRandomState(case["options"]["seed"], use_numpy=False)
    k = case["options"]["ice_num"]
    assert [state.choice_without_replacement(len(case["train"]), k) for _ in case["test"]] == case["indices"]


def test_random_seed_option_and_task_seed(pm):
    case = next(c for c in CORE_CASES if c["name"] == "random_seed43_pool12_k3")
    base = task_for(case)
    # --seed replaces the seed the OpenCompass config gave (or its default, 43).
    reseeded = load_task(base, plugins=pm, seed=0)
    assert selected(reseeded)[0] != case["indices"][0]
    # Without a seed option the task's seed is used.
    task = {**base, "retriever": {"name": "opencompass_random"}, "seed": 43}
    assert selected(load_task(task, plugins=pm)) == case["indices"]


def test_random_default_k_is_one(pm):
    case = next(c for c in CORE_CASES if c["name"] == "random_seedNone_pool12_k1")
    task = task_for(case)
    task.pop("num_fewshot", None)
    assert selected(load_task(task, plugins=pm)) == case["indices"]


def test_random_more_examples_than_pool_is_error(pm):
    case = next(c for c in CORE_CASES if c["name"] == "random_seed43_pool12_k3")
    with pytest.raises(TaskFileError, match="draws 13 distinct examples but the few-shot pool has 12"):
        load_task({**task_for(case), "num_fewshot": 13}, plugins=pm)


def test_fixk_out_of_range_is_error(pm):
    case = next(c for c in CORE_CASES if c["name"] == "fixk")
    task = {**task_for(case), "retriever": {"name": "fixk", "fix_id_list": [0, 12]}}
    with pytest.raises(OptionError, match=r"12 is not an index of the few-shot pool of 12 records") as info:
        load_task(task, plugins=pm)
    assert "retriever.fix_id_list" in str(info.value)


def test_fixk_needs_ids_and_ignores_num_fewshot_as_opencompass(pm):
    """OpenCompass's FixKRetriever ignores ice_num: --shots K gives fix_id_list's examples, with a warning."""
    case = next(c for c in CORE_CASES if c["name"] == "fixk")
    with pytest.raises(OptionError, match="needs fix_id_list"):
        load_task({**task_for(case), "retriever": "fixk"}, plugins=pm)
    expected = [r.text for r in load_task(task_for(case), plugins=pm).render()]
    for options in ({"num_fewshot": 2}, {"shots": 5}):
        task = {**task_for(case), **{k: v for k, v in options.items() if k != "shots"}}
        with pytest.warns(
            UserWarning, match=r"gives the 3 examples of fix_id_list; num_fewshot \(--shots\) \d is ignored"
        ):
            loaded = load_task(task, plugins=pm, shots=options.get("shots"))
        assert [r.text for r in loaded.render()] == expected


def test_fixk_on_the_evaluated_split_is_allowed(pm):
    """Unlike ``fixed``, OpenCompass lets a record be its own example."""
    case = next(c for c in CORE_CASES if c["name"] == "fixk")
    task = {**task_for(case), "data": {"test": case["train"]}, "fewshot_split": "test"}
    assert selected(load_task(task, plugins=pm))[0] == [0, 2, 4]


def test_sliding_window_past_the_pool_is_error(pm):
    case = next(c for c in CORE_CASES if c["name"] == "sliding_separate_pool")
    task = load_task({**task_for(case), "data": {"train": case["train"][:3], "test": case["test"]}}, plugins=pm)
    with pytest.raises(PromptStyleError, match="needs pool record 3 for this record") as info:
        list(task.render())
    assert "record 4" in str(info.value)


def test_sliding_window_needs_num_fewshot(pm):
    case = next(c for c in CORE_CASES if c["name"] == "sliding_same_k3")
    task = task_for(case)
    task.pop("num_fewshot")
    with pytest.raises(TaskFileError, match="needs num_fewshot, the size of the window"):
        load_task(task, plugins=pm)


def test_renders_the_examples(pm):
    case = next(c for c in CORE_CASES if c["name"] == "sliding_same_k1")
    task = load_task({**task_for(case), "fewshot_delimiter": "|", "target_delimiter": "="}, plugins=pm)
    assert [r.text for r in task.render(limit=2)] == ["P11=p11|P0", "P0=p0|P1"]


# -- the name table for the OpenCompass reader -----------------------------------------


def test_every_supported_class_has_a_registered_retriever(pm_all):
    names = set(pm_all.names("retrieve_examples"))
    for cls, entry in OPENCOMPASS_RETRIEVERS.items():
        if entry.name and entry.distribution is None:
            assert entry.name in names, cls


def test_translate_splits_retriever_count_and_prompt_options():
    out = translate_retriever(
        {"type": "RandomRetriever", "ice_num": 4, "ice_separator": "\n\n", "seed": 7}, input_columns=["q"]
    )
    assert out.name == "opencompass_random"
    assert out.options == {"seed": 7}
    assert out.task == {"num_fewshot": 4}
    assert out.style == {"ice_separator": "\n\n", "ice_eos_token": "\n"}
    assert set(out.style) == set(STYLE_OPTIONS)


def test_translate_defaults_and_input_columns():
    assert translate_retriever({"type": "RandomRetriever"}).options == {"seed": 43}
    assert translate_retriever({"type": "ZeroRetriever"}).style == {"ice_separator": "", "ice_eos_token": ""}
    bm25 = translate_retriever({"type": "BM25Retriever", "ice_num": 2}, input_columns="question  context")
    assert (bm25.name, bm25.options, bm25.task) == (
        "bm25",
        {"input_columns": ["question", "context"]},
        {"num_fewshot": 2},
    )
    sliding = translate_retriever({"type": "opencompass.openicl.SlidingWindowRetriever", "k": 3, "ice_num": 9})
    assert (sliding.name, sliding.task) == ("sliding_window", {"num_fewshot": 3})
    topk = translate_retriever({"type": "TopkRetriever", "sentence_transformers_model_name": "/m", "batch_size": 8})
    assert topk.options == {"model": "/m", "tokenizer_name": "gpt2-xl", "batch_size": 8}


@pytest.mark.parametrize(
    "config, message",
    [
        ({"type": "FixKRetreiver"}, "unknown retriever type 'FixKRetreiver' (did you mean 'FixKRetriever'"),
        ({"type": "MDLRetriever"}, "is not supported"),
        ({"type": "FixKRetriever", "fix_ids": [1]}, "FixKRetriever has no option 'fix_ids'"),
        ({"type": "ZeroRetriever", "ice_separator": "x"}, "ZeroRetriever has no option 'ice_separator'"),
        ({"ice_num": 1}, "the retriever has no type"),
    ],
)
def test_translate_errors(config, message):
    with pytest.raises(OptionError) as info:
        translate_retriever(config)
    assert message in str(info.value)
