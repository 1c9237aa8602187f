"""Rendering: RenderedPrompt, pickling, worker processes, streaming, meta templates."""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import multiprocessing
import pickle
from pathlib import Path

import pytest

from prompt_style import (
    DataError,
    PluginNotFoundError,
    RenderedPrompt,
    Task,
    TaskRenderer,
    iter_records,
    load_task,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VERSION = importlib.metadata.version("prompt-style")

TEST = [
    {"q": "What is 2+2?", "choices": ["3", "4", "5"], "answer": 1},
    {"q": "Sky colour?", "choices": ["blue", "green"], "answer": 0},
    {"q": "Odd one?", "choices": ["1", "2", "4"], "answer": 0},
]
DEV = [
    {"q": "1+1?", "choices": ["2", "3"], "answer": 0},
    {"q": "Grass?", "choices": ["red", "green"], "answer": 1},
]
MCQ = dict(doc_to_text="q", doc_to_choice="{{choices}}", doc_to_target="answer", template="mcq")


def dumps(result: RenderedPrompt) -> bytes:
    return json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")


@pytest.fixture
def mcq_task(make_task):
    return make_task({"test": TEST, "dev": DEV}, description="Desc.\n\n", num_fewshot=2, **MCQ)


# -- RenderedPrompt -------------------------------------------------------------------


def test_rendered_prompt_fields(mcq_task, pm):
    task = load_task(mcq_task, plugins=pm)
    assert isinstance(task, Task)
    results = list(task.render())
    assert [r.index for r in results] == [0, 1, 2]
    first = results[0]
    assert isinstance(first, RenderedPrompt)
    assert first.text == (
        "Desc.\n\n"
        "1+1?\nA. 2\nB. 3\nAnswer: A\n\n"
        "Grass?\nA. red\nB. green\nAnswer: B\n\n"
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"
    )
    assert first.messages is None
    assert first.continuations == (" A", " B", " C")
    assert first.target == 1
    assert results[2].target == 0
    assert first.token_ids is None
    assert [t.role for t in first.dialogue] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "".join(t.sep + t.content for t in first.dialogue) == first.text


def test_to_json_keys_exactly(mcq_task, pm):
    for result in load_task(mcq_task, plugins=pm).render():
        data = result.to_json()
        assert list(data) == ["index", "text", "messages", "continuations", "target"]
        assert isinstance(data["continuations"], list)
        json.dumps(data)


def test_plugins_used_are_recorded(mcq_task, pm):
    result = next(load_task(mcq_task, plugins=pm).render())
    plugins = result.plugins
    assert set(plugins) == {"extract_field", "format_prompt", "apply_meta_template", "retrieve_examples"}
    assert set(plugins["extract_field"]) == {"doc_to_text", "doc_to_choice", "doc_to_target", "description"}
    for used in plugins["extract_field"].values():
        assert used == {"plugin": "builtin-fields", "distribution": "prompt-style", "version": VERSION}
    assert plugins["format_prompt"] == {
        "hook": "format_prompt",
        "name": "mcq",
        "plugin": "builtin-styles",
        "distribution": "prompt-style",
        "version": VERSION,
    }
    assert plugins["apply_meta_template"]["name"] == "plain"
    assert plugins["apply_meta_template"]["plugin"] == "builtin-meta"
    assert plugins["retrieve_examples"]["name"] == "first_n"
    assert plugins["retrieve_examples"]["distribution"] == "prompt-style"
    json.dumps(dict(plugins))


def test_first_party_plugins_recorded_with_their_distribution(mcq_task, pm_all):
    task = load_task(mcq_task, plugins=pm_all, style="mcq::mmlu", meta="chatml")
    plugins = task.plugins
    assert plugins["format_prompt"]["distribution"] == "prompt-style-mmlu"
    assert plugins["format_prompt"]["version"] == importlib.metadata.version("prompt-style-mmlu")
    assert plugins["apply_meta_template"]["distribution"] == "prompt-style-chatml"
    assert next(task.render()).plugins == plugins


# -- pickling and worker processes ---------------------------------------------------


def test_renderer_pickles_byte_identical(mcq_task, pm):
    task = load_task(mcq_task, plugins=pm)
    records = list(task.records())
    expected = [dumps(r) for r in task.render()]
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        clone = pickle.loads(pickle.dumps(task.renderer, protocol=protocol))
        assert isinstance(clone, TaskRenderer)
        assert [dumps(clone.render(rec, i)) for i, rec in enumerate(records)] == expected


def test_renderer_pickles_after_use_and_before(mcq_task, pm):
    # pickled before anything was rendered, and after the few-shot caches are warm
    cold = pickle.dumps(load_task(mcq_task, plugins=pm).renderer)
    task = load_task(mcq_task, plugins=pm)
    expected = [dumps(r) for r in task.render()]
    warm = pickle.dumps(task.renderer)
    records = list(task.records())
    for blob in (cold, warm):
        clone = pickle.loads(blob)
        assert [dumps(clone.render(rec, i)) for i, rec in enumerate(records)] == expected


@pytest.mark.parametrize(
    "example, kwargs",
    [
        ("mmlu", {}),
        ("arc", {}),
        ("gpqa", {}),
        ("arc", {"meta": "chatml", "style": "mcq::numbered"}),
        ("mmlu", {"meta": "messages"}),
    ],
)
def test_example_renderers_pickle(pm_all, example, kwargs):
    task = load_task(EXAMPLES / example / "task.yaml", plugins=pm_all, **kwargs)
    expected = [dumps(r) for r in task.render()]
    clone = pickle.loads(pickle.dumps(task.renderer))
    assert [dumps(clone.render(rec, i)) for i, rec in enumerate(task.records())] == expected


def test_rendered_prompt_pickles(mcq_task, pm):
    result = next(load_task(mcq_task, plugins=pm).render())
    clone = pickle.loads(pickle.dumps(result))
    assert clone == result


def test_spawned_workers_render_identically(pm_all):
    """Two spawned workers; records partitioned two different ways; same bytes."""
    task = load_task(EXAMPLES / "arc" / "task.yaml", plugins=pm_all, meta="chatml")
    records = list(task.records())
    expected = [dumps(r) for r in task.render()]
    jobs = list(enumerate(records))
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        # partition 1: contiguous chunks in order
        forward = pool.starmap(task.renderer.render, [(rec, i) for i, rec in jobs], chunksize=6)
        # partition 2: odd indices first, then even ones reversed, one at a time
        order = [i for i in range(len(jobs)) if i % 2] + [i for i in reversed(range(len(jobs))) if not i % 2]
        shuffled = pool.starmap(task.renderer.render, [(records[i], i) for i in order], chunksize=1)
    assert [dumps(r) for r in forward] == expected
    by_index = {r.index: dumps(r) for r in shuffled}
    assert [by_index[i] for i in range(len(jobs))] == expected


# -- limit and streaming -------------------------------------------------------------


def test_render_limit(mcq_task, pm):
    task = load_task(mcq_task, plugins=pm)
    assert [r.index for r in task.render(limit=2)] == [0, 1]
    assert list(task.render(limit=0)) == []
    assert [r.index for r in task.render(limit=100)] == [0, 1, 2]


def test_render_limit_reads_no_record_past_the_limit(tmp_path, pm):
    # Record 2 is not JSON: rendering the first two must not read it.
    data = tmp_path / "test.jsonl"
    data.write_text('{"q": "a"}\n{"q": "b"}\nnot JSON\n')
    task = load_task({"data": {"test": str(data)}, "doc_to_text": "q"}, plugins=pm)
    assert [r.text for r in task.render(limit=2)] == ["a", "b"]
    assert [r.text for r in task.render(limit=1)] == ["a"]
    assert list(task.render(limit=0)) == []
    with pytest.raises(DataError):
        list(task.render(limit=3))


def test_render_is_a_lazy_iterator(mcq_task, pm):
    task = load_task(mcq_task, plugins=pm)
    results = task.render()
    assert iter(results) is results
    assert next(results).index == 0


@pytest.fixture(scope="module")
def big_jsonl(tmp_path_factory):
    """50,000 good records followed by a line that is not JSON."""
    path = tmp_path_factory.mktemp("big") / "test.jsonl"
    line = '{"q": "Question %d?", "a": "A%d"}\n'
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(line % (i, i) for i in range(50_000))
        handle.write("{this line is not JSON\n")
    return path


def test_streaming_does_not_read_ahead(big_jsonl, pm):
    # The last line is broken: a renderer that read the whole split first would
    # fail before yielding anything.
    task = load_task({"data": {"test": str(big_jsonl)}, "doc_to_text": "q", "doc_to_target": "a"}, plugins=pm)
    first = list(itertools.islice(task.render(), 5))
    assert [r.text for r in first] == [f"Question {i}?" for i in range(5)]
    assert [r.index for r in task.render(limit=1000)][-1] == 999
    # and the records iterator is lazy too
    records = task.records()
    assert next(records) == {"q": "Question 0?", "a": "A0"}


def test_streaming_reports_the_bad_line_when_it_gets_there(big_jsonl):
    with pytest.raises(DataError) as info:
        for _ in iter_records(big_jsonl, "test"):
            pass
    assert info.value.line == 50_001
    assert f"{big_jsonl}:50001" in str(info.value)


# -- meta templates ------------------------------------------------------------------


def test_meta_plain_is_the_default(mcq_task, pm):
    a = [dumps(r) for r in load_task(mcq_task, plugins=pm).render()]
    b = [dumps(r) for r in load_task(mcq_task, plugins=pm, meta="plain").render()]
    c = [dumps(r) for r in load_task(mcq_task, plugins=pm, meta=None).render()]
    assert a == b == c


def test_meta_messages_roles(mcq_task, pm):
    result = next(load_task(mcq_task, plugins=pm, meta="messages").render())
    assert result.text is None
    assert result.messages == [
        {"role": "system", "content": "Desc.\n\n"},
        {"role": "user", "content": "1+1?\nA. 2\nB. 3\nAnswer:"},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "Grass?\nA. red\nB. green\nAnswer:"},
        {"role": "assistant", "content": "B"},
        {"role": "user", "content": "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"},
    ]
    # A chat format: no target delimiter before the continuations (lm-evaluation-harness's chat rule).
    assert result.continuations == ("A", "B", "C")
    assert result.target == 1
    assert result.to_json()["messages"] == result.messages


def test_meta_messages_without_system(mcq_task, pm):
    result = next(load_task(mcq_task, plugins=pm, meta="messages", meta_options={"system": False}).render())
    assert [m["role"] for m in result.messages] == ["user", "user", "assistant", "user", "assistant", "user"]


def test_meta_messages_zero_shot(make_task, pm):
    path = make_task({"test": TEST}, **MCQ)
    result = next(load_task(path, plugins=pm, meta="messages").render())
    assert result.messages == [{"role": "user", "content": "What is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"}]


def test_meta_unknown_option(mcq_task, pm):
    from prompt_style import OptionError

    with pytest.raises(OptionError) as info:
        load_task(mcq_task, plugins=pm, meta="messages", meta_options={"sytem": False})
    assert "did you mean 'system'" in str(info.value)


def test_unknown_meta(mcq_task, pm):
    with pytest.raises(PluginNotFoundError) as info:
        load_task(mcq_task, plugins=pm, meta="mesages")
    assert "messages" in str(info.value)


def test_meta_chatml(mcq_task, pm_all):
    result = next(load_task(mcq_task, plugins=pm_all, meta="chatml").render())
    assert result.text == (
        "<|im_start|>system\nDesc.\n\n<|im_end|>\n"
        "<|im_start|>user\n1+1?\nA. 2\nB. 3\nAnswer:<|im_end|>\n"
        "<|im_start|>assistant\nA<|im_end|>\n"
        "<|im_start|>user\nGrass?\nA. red\nB. green\nAnswer:<|im_end|>\n"
        "<|im_start|>assistant\nB<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?\nA. 3\nB. 4\nC. 5\nAnswer:<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "user", "assistant", "user"]


# -- styles by name ------------------------------------------------------------------


def test_mcq_to_cloze_by_one_word(pm_all):
    path = EXAMPLES / "arc" / "task.yaml"
    cloze = list(load_task(path, plugins=pm_all).render(limit=3))
    mcq = list(load_task(path, plugins=pm_all, style="mcq").render(limit=3))
    assert cloze[0].text.endswith("Question: Which form of energy is stored in a stretched rubber band?\nAnswer:")
    assert cloze[0].continuations == (
        " sound energy",
        " elastic potential energy",
        " chemical energy",
        " nuclear energy",
    )
    assert mcq[0].text.endswith(
        "Which form of energy is stored in a stretched rubber band?\n"
        "A. sound energy\nB. elastic potential energy\nC. chemical energy\nD. nuclear energy\nAnswer:"
    )
    assert mcq[0].continuations == (" A", " B", " C", " D")
    # same gold answer, same few-shot examples (seeded by record index)
    assert [r.target for r in cloze] == [r.target for r in mcq]


@pytest.mark.parametrize(
    "style", ["mcq", "mcq::mmlu", "mcq::gpqa", "mcq::numbered", "cloze", "cloze::options", "passthrough"]
)
def test_every_style_renders_every_example(pm_all, style):
    # gpqa's answers are written "(A)".."(D)"; its task file turns them into indices
    for example in ("mmlu", "arc", "gpqa"):
        results = list(load_task(EXAMPLES / example / "task.yaml", plugins=pm_all, style=style).render())
        assert len(results) > 20
        for r in results:
            assert r.text
            assert isinstance(r.target, int) and 0 <= r.target < len(r.continuations)


# -- the examples --------------------------------------------------------------------


def test_example_mmlu(pm_all):
    task = load_task(EXAMPLES / "mmlu" / "task.yaml", plugins=pm_all)
    results = list(task.render())
    assert len(results) == 24
    first = results[0]
    assert first.text.startswith(
        "The following are multiple choice questions (with answers) about elementary mathematics.\n\n"
        "What is 15% of 200?\nA. 15\nB. 20\nC. 30\nD. 35\nAnswer: C\n\n"
    )
    assert first.text.endswith("What is the value of 7 × 8?\nA. 54\nB. 56\nC. 48\nD. 64\nAnswer:")
    assert first.text.count("Answer:") == 6
    assert first.continuations == (" A", " B", " C", " D")
    assert first.target == 1
    # data are never templates: `{x}` and `{{7*7}}` in questions stay as written
    assert "Let {x} denote the number of apples" in results[1].text
    assert 'Submitting the string "{{7*7}}" causes the page to display "49"' in results[17].text


def test_example_arc(pm_all):
    results = list(load_task(EXAMPLES / "arc" / "task.yaml", plugins=pm_all).render())
    assert len(results) == 24
    for r in results:
        assert r.text.count("Question: ") == 4
        assert 3 <= len(r.continuations) <= 5
    numeric = [json.loads(line) for line in (EXAMPLES / "arc" / "data" / "test.jsonl").read_text().splitlines()]
    for record, r in zip(numeric, results):
        assert r.target == record["choices"]["label"].index(record["answerKey"])


def test_example_gpqa(pm_all):
    results = list(load_task(EXAMPLES / "gpqa" / "task.yaml", plugins=pm_all).render())
    assert len(results) == 22
    assert results[0].text.startswith("What is the correct answer to this question:A particle of mass m")
    assert results[0].text.endswith("Answer:")
    assert "Choices:\n(A) " in results[0].text
    assert results[0].continuations == (" (A)", " (B)", " (C)", " (D)")
    assert results[0].target == 1


def test_examples_render_with_default_plugin_manager():
    # load_task without plugins= uses the process-wide manager (reset per test by conftest)
    for example in ("mmlu", "arc", "gpqa"):
        assert len(list(load_task(EXAMPLES / example / "task.yaml").render(limit=2))) == 2


def test_a_null_question_is_an_error_naming_the_record(tmp_path):
    from prompt_style import FieldError

    data = tmp_path / "t.jsonl"
    data.write_text('{"q": "fine"}\n{"q": null}\n')
    from prompt_style import create_plugin_manager

    task = load_task(
        {"data": {"test": str(data)}, "doc_to_text": "q"}, plugins=create_plugin_manager(entry_points=False, environ={})
    )
    results = task.render()
    assert next(results).text == "fine"
    with pytest.raises(FieldError) as caught:
        next(results)
    assert "record 1" in str(caught.value) and "doc_to_text" in str(caught.value)


def test_records_given_in_memory_render_like_files(tmp_path, pm_all):
    from prompt_style import render_records

    test = [{"q": "2+2?", "c": ["3", "4"], "a": 1}, {"q": "3+3?", "c": ["6", "9"], "a": 0}]
    dev = [{"q": "1+1?", "c": ["2", "3"], "a": 0}]
    keys = dict(doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq::mmlu", num_fewshot=1)
    in_memory = render_records(test, fewshot=dev, plugins=pm_all, **keys)
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in test))
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dev))
    from_files = list(
        load_task(
            {
                "data": {"test": str(tmp_path / "test.jsonl"), "dev": str(tmp_path / "dev.jsonl")},
                "fewshot_split": "dev",
                **keys,
            },
            plugins=pm_all,
        ).render()
    )
    assert [r.to_json() for r in in_memory] == [r.to_json() for r in from_files]
    assert in_memory[0].text == "1+1?\nA. 2\nB. 3\nAnswer: A\n\n2+2?\nA. 3\nB. 4\nAnswer:"


def test_inline_records_in_a_task_file(tmp_path, pm_all):
    (tmp_path / "t.yaml").write_text("data:\n  test:\n    - {q: hi}\n    - {q: there}\ndoc_to_text: q\n")
    assert [r.text for r in load_task(tmp_path / "t.yaml", plugins=pm_all).render()] == ["hi", "there"]


@pytest.mark.parametrize("bad, message", [([], "empty"), (["x"], "record 0 is a str")])
def test_bad_records_in_memory_are_data_errors(pm_all, bad, message):
    from prompt_style import DataError, render_records

    with pytest.raises(DataError, match=message):
        render_records(bad, doc_to_text="q", plugins=pm_all)
