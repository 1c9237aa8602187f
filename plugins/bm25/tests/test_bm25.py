"""The ``bm25`` retriever against OpenCompass 0.5.4's BM25Retriever (golden indices) and
``nltk.word_tokenize`` (golden tokens), from tools/golden/make_opencompass_retriever_golden.py."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from prompt_style_bm25 import word_tokenize

from prompt_style import DataError, OptionError, TaskFileError, create_plugin_manager, load_task, render_records
from prompt_style.retrievers.opencompass_names import translate_retriever

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "opencompass"
CASES = [
    c for c in json.loads((GOLDEN / "retrievers.json").read_text("utf-8"))["cases"] if c["type"] == "BM25Retriever"
]
TOKENS = json.loads((GOLDEN / "word_tokenize.json").read_text("utf-8"))["cases"]


@pytest.fixture
def pm_all():
    """A fresh manager per test; environ={} so PROMPT_STYLE_* variables of the shell do not leak in."""
    return create_plugin_manager(environ={})


def task_for(case):
    translated = translate_retriever(
        {"type": case["type"], **case["options"]}, input_columns=case["reader_cfg"]["input_columns"]
    )
    data = {"test": case["test"]} if case["same_split"] else {"train": case["train"], "test": case["test"]}
    return {
        "data": data,
        "fewshot_split": "test" if case["same_split"] else "train",
        "doc_to_text": "question",
        "doc_to_target": "answer",
        "retriever": {"name": translated.name, **translated.options},
        **translated.task,
    }


@pytest.mark.parametrize("case", TOKENS, ids=range(len(TOKENS)))
def test_word_tokenize_equals_nltk(case):
    assert word_tokenize(case["text"]) == case["tokens"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_indices_equal_opencompass(case, pm_all):
    task = load_task(task_for(case), plugins=pm_all)
    select = task.renderer.retriever.select
    assert [list(select(i, r)) for i, r in enumerate(task.records())] == case["indices"]


def test_pickles(pm_all):
    case = CASES[0]
    retriever = load_task(task_for(case), plugins=pm_all).renderer.retriever
    copy = pickle.loads(pickle.dumps(retriever))
    assert [list(copy.select(i, r)) for i, r in enumerate(case["test"])] == case["indices"]


def test_renders_the_best_match(pm_all):
    pool = [{"q": "The capital of France is Paris.", "a": "Paris"}, {"q": "Cats chase mice.", "a": "mice"}]
    [out] = render_records(
        [{"q": "What do cats chase?", "a": ""}],
        fewshot=pool,
        plugins=pm_all,
        doc_to_text="q",
        doc_to_target="a",
        num_fewshot=1,
        retriever={"name": "bm25", "input_columns": "q"},
    )
    assert out.text == "Cats chase mice. mice\n\nWhat do cats chase?"


@pytest.mark.parametrize(
    "retriever, k, error, message",
    [
        ({"name": "bm25"}, 1, OptionError, "needs input_columns"),
        ({"name": "bm25", "input_columns": ["q"], "model": "x"}, 1, OptionError, "has no option 'model'"),
        ({"name": "bm25", "input_columns": ["q"]}, 3, TaskFileError, "needs 3 examples but the few-shot pool has 2"),
        ({"name": "bm25", "input_columns": ["q", "nope"]}, 1, DataError, "has no input column 'nope'"),
    ],
)
def test_errors(pm_all, retriever, k, error, message):
    pool = [{"q": "a", "a": "b"}, {"q": "c", "a": "d"}]
    with pytest.raises(error) as info:
        render_records(
            [{"q": "a", "a": ""}],
            fewshot=pool,
            plugins=pm_all,
            doc_to_text="q",
            doc_to_target="a",
            num_fewshot=k,
            retriever=retriever,
        )
    assert message in str(info.value)


def test_documented_example(capsys):
    from prompt_style.cli import main

    example = Path(__file__).resolve().parents[3] / "examples" / "opencompass_bm25" / "task.yaml"
    assert main(["render", str(example)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        '=== record 0 · target: "Rome"\nQ: What is the capital of Japan?\nA: Tokyo\n\n'
        "Q: What is the capital of France?\nA: Paris\n\nQ: What is the capital of Italy?\nA:\n"
    )


def test_a_negative_count_is_an_error():
    # An OpenCompass config's ice_num reaches the factory as it is written.
    from prompt_style_bm25 import bm25

    with pytest.raises(TaskFileError, match="retriever 'bm25': num_fewshot must be 0 or more, not -1"):
        bm25(options={"input_columns": ["q"]}, pool=[{"q": "a"}, {"q": "b"}], k=-1, same_split=False, seed=0)
