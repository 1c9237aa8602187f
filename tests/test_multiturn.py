"""Multi-turn dialogues (OpenCompass/AISBench MultiTurnPromptTemplate): the ``multiturn`` style,
``TaskRenderer.converse``, ``Task.render(replies=...)`` and ``prompt-style render --replies``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from prompt_style import PromptStyleError, RenderError, StyleError, load_task
from prompt_style.cli import main

ROUND = [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]
RECORD = {"question": ["1+1=?", "2+2=?", "3+3=?"], "answer": ["2", "4", "6"]}


def task(mode, records=(RECORD,), template=None, input_columns=("question",), output_column="answer"):
    """An OpenCompass/AISBench dataset config (as a mapping) with its records."""
    return {
        "reader_cfg": {"input_columns": list(input_columns), "output_column": output_column},
        "infer_cfg": {
            "prompt_template": {"type": "MultiTurnPromptTemplate", "template": template or {"round": ROUND}},
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "MultiTurnGenInferencer", "infer_mode": mode},
        },
        "data": {"test": list(records)},
    }


def prompt_lists(requests):
    """The dialogue of each request as OpenCompass's PromptList items."""
    return [[{"role": t.role, "prompt": t.content} for t in r.dialogue] for r in requests]


def test_every_with_gt(pm):
    requests = list(load_task(task("every_with_gt"), plugins=pm).render())
    assert [r.turn for r in requests] == [0, 1, 2]
    assert [r.target for r in requests] == ["2", "4", "6"]
    assert prompt_lists(requests) == [
        [{"role": "HUMAN", "prompt": "1+1=?"}],
        [{"role": "HUMAN", "prompt": "1+1=?"}, {"role": "BOT", "prompt": "2"}, {"role": "HUMAN", "prompt": "2+2=?"}],
        [
            {"role": "HUMAN", "prompt": "1+1=?"},
            {"role": "BOT", "prompt": "2"},
            {"role": "HUMAN", "prompt": "2+2=?"},
            {"role": "BOT", "prompt": "4"},
            {"role": "HUMAN", "prompt": "3+3=?"},
        ],
    ]


def test_last(pm):
    [request] = load_task(task("last"), plugins=pm).render()
    assert (request.turn, request.target) == (2, "6")
    assert [t.content for t in request.dialogue] == ["1+1=?", "2", "2+2=?", "4", "3+3=?"]


def test_every_with_a_generator(pm):
    loaded = load_task(task("every"), plugins=pm, meta="opencompass::api")
    turns = loaded.renderer.converse(RECORD, 0)
    seen = [next(turns)]
    for reply in ("answer1", "answer2"):
        seen.append(turns.send(reply))
    with pytest.raises(StopIteration):
        turns.send("answer3")
    assert seen[0].messages == [{"role": "user", "content": "1+1=?"}]
    assert seen[2].messages == [
        {"role": "user", "content": "1+1=?"},
        {"role": "assistant", "content": "answer1"},
        {"role": "user", "content": "2+2=?"},
        {"role": "assistant", "content": "answer2"},
        {"role": "user", "content": "3+3=?"},
    ]


def test_every_with_a_callback_and_with_lists(pm):
    loaded = load_task(task("every", records=[RECORD, RECORD]), plugins=pm)
    asked = []

    def model(request):
        asked.append((request.index, request.turn))
        return f"r{request.index}.{request.turn}"

    by_callback = [r.text for r in loaded.render(replies=model)]
    assert asked == [(0, 0), (0, 1), (1, 0), (1, 1)]  # no reply is asked for after the last turn
    assert by_callback[2] == "1+1=?\nr0.0\n2+2=?\nr0.1\n3+3=?"
    by_lists = [r.text for r in loaded.render(replies=[["r0.0", "r0.1"], ["r1.0", "r1.1", "unused"]])]
    assert by_lists == by_callback


def test_every_without_replies_is_an_error(pm):
    with pytest.raises(RenderError, match="needs the model's reply to turn 0") as info:
        list(load_task(task("every"), plugins=pm).render())
    assert "--replies" in str(info.value)


def test_every_with_too_few_replies(pm):
    with pytest.raises(RenderError, match="no reply to turn 1"):
        list(load_task(task("every"), plugins=pm).render(replies=[["only one"]]))


def test_begin_and_end_are_in_every_request(pm):
    template = {
        "begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Topic: {topic}"}],
        "round": ROUND,
        "end": [{"role": "HUMAN", "prompt": "Be brief."}],
    }
    records = [{**RECORD, "topic": "sums"}]
    requests = list(load_task(task("every_with_gt", records, template), plugins=pm).render())
    assert prompt_lists(requests)[1] == [
        {"role": "SYSTEM", "prompt": "Topic: sums"},
        {"role": "HUMAN", "prompt": "1+1=?"},
        {"role": "BOT", "prompt": "2"},
        {"role": "HUMAN", "prompt": "2+2=?"},
        {"role": "HUMAN", "prompt": "Be brief."},
    ]
    assert requests[0].dialogue[0].fallback_role == "HUMAN"


def test_field_names_come_from_the_reader_config(pm):
    template = {"round": [{"role": "HUMAN", "prompt": "Q: {turns} ({id})"}, {"role": "BOT", "prompt": "{refs}"}]}
    records = [{"turns": ["a", "b"], "refs": ["x", "y"], "id": 7}]
    config = task("every_with_gt", records, template, input_columns=["turns", "id"], output_column="refs")
    requests = list(load_task(config, plugins=pm).render())
    assert requests[1].text == "Q: a (7)\nx\nQ: b (7)"
    assert [r.target for r in requests] == ["x", "y"]


def test_values_are_not_rescanned(pm):
    records = [{"question": ["say {answer}", "{nope}"], "answer": ["{question}", "ok"]}]
    [request] = load_task(task("last", records), plugins=pm).render()
    assert request.text == "say {answer}\n{question}\n{nope}"


def test_render_one_record_refers_to_converse(pm):
    loaded = load_task(task("last"), plugins=pm)
    with pytest.raises(RenderError, match="multi-turn dialogue"):
        loaded.renderer.render(RECORD, 0)


@pytest.mark.parametrize(
    "record, message",
    [
        ({"question": ["a", "b"], "answer": ["x"]}, "the turn lists differ in length (question: 2, answer: 1)"),
        ({"question": [], "answer": []}, "has no turns"),
        ({"question": "a", "answer": "x"}, "none of the fields the round names (question, answer) holds a list"),
    ],
)
def test_bad_records(pm, record, message):
    with pytest.raises(StyleError) as info:
        list(load_task(task("every_with_gt", [record]), plugins=pm).render())
    assert message in str(info.value)
    assert "record 0" in str(info.value)


def test_bad_infer_mode(pm):
    with pytest.raises(PromptStyleError, match="infer_mode: must be one of every, every_with_gt, last"):
        load_task(task("sometimes"), plugins=pm)


def test_a_string_template_is_refused(pm):
    config = task("last")
    config["infer_cfg"]["prompt_template"]["template"] = "{question}"
    with pytest.raises(PromptStyleError, match="needs a dialogue template"):
        load_task(config, plugins=pm)


def test_no_bot_turn_is_an_error(pm):
    template = {"round": [{"role": "HUMAN", "prompt": "{question}"}]}
    with pytest.raises(RenderError, match="no model turn"):
        list(load_task(task("last", template=template), plugins=pm).render())


def test_in_context_examples_are_refused(pm):
    config = task("last", template={"begin": "</E>", "round": ROUND})
    config["infer_cfg"]["prompt_template"]["ice_token"] = "</E>"
    config["infer_cfg"]["ice_template"] = config["infer_cfg"]["prompt_template"]
    config["infer_cfg"]["retriever"] = {"type": "FixKRetriever", "fix_id_list": [0]}
    config["data"]["train"] = [RECORD]
    with pytest.raises(PromptStyleError, match="takes no in-context examples"):
        list(load_task(config, plugins=pm).render())


def test_dialogue_examples_inside_a_role_prompt_are_an_error_not_dropped(pm):
    """The round is filled by PromptTemplate's own code: examples that cannot go where
    the ice token stands are an error, as for any dialogue template."""
    round_ = [{"role": "HUMAN", "prompt": "</E>{question}"}, {"role": "BOT", "prompt": "{answer}"}]
    example = {"round": [{"role": "HUMAN", "prompt": "Q {question}"}, {"role": "BOT", "prompt": "A {answer}"}]}
    config = {
        "doc_to_text": "question",
        "doc_to_target": "answer",
        "template": {
            "template_type": "opencompass",
            "ice_template": {"type": "PromptTemplate", "template": example},
            "prompt_template": {"type": "MultiTurnPromptTemplate", "ice_token": "</E>", "template": {"round": round_}},
            "infer_mode": "last",
        },
        "retriever": {"name": "fixed", "ids": [0]},
        "num_fewshot": 1,
        "fewshot_split": "dev",
        "data": {"test": [RECORD], "dev": [{"question": "0+0=?", "answer": "0"}]},
    }
    with pytest.raises(StyleError, match="the ice token stands inside the prompt of a HUMAN item"):
        list(load_task(config, plugins=pm).render())


def test_gen_inferencer_gives_the_whole_dialogue_once(pm):
    """With GenInferencer AISBench sends one prompt: every turn, the last answer masked."""
    config = task("last")
    config["infer_cfg"]["inferencer"] = {"type": "GenInferencer"}
    [result] = load_task(config, plugins=pm).render()
    assert result.turn is None
    assert result.text == "1+1=?\n2\n2+2=?\n4\n3+3=?\n6"


# -- CLI --------------------------------------------------------------------------------


@pytest.fixture
def task_file(tmp_path):
    def write(mode):
        path = tmp_path / f"{mode}.yaml"
        config = task(mode, records=[RECORD, {"question": ["hi"], "answer": ["hello"]}])
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path

    return write


def test_cli_every_with_gt_one_request_per_line(task_file, capsys):
    assert main(["render", str(task_file("every_with_gt")), "--format", "jsonl", "--meta", "opencompass::api"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["index"], r["turn"]) for r in rows] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert rows[1]["messages"][-1] == {"role": "user", "content": "2+2=?"}


def test_cli_last_text(task_file, capsys):
    assert main(["render", str(task_file("last"))]) == 0
    out = capsys.readouterr().out
    assert '=== record 0 · target: "6" · turn 2\n1+1=?\n2\n2+2=?\n4\n3+3=?\n' in out
    assert '=== record 1 · target: "hello" · turn 0\nhi\n' in out


def test_cli_every_with_replies(task_file, tmp_path, capsys):
    replies = tmp_path / "replies.jsonl"
    replies.write_text('["A1", "A2", "A3"]\n["B1"]\n', encoding="utf-8")
    assert main(["render", str(task_file("every")), "--replies", str(replies), "--format", "jsonl"]) == 0
    texts = [json.loads(line)["text"] for line in capsys.readouterr().out.splitlines()]
    assert texts == ["1+1=?", "1+1=?\nA1\n2+2=?", "1+1=?\nA1\n2+2=?\nA2\n3+3=?", "hi"]


def test_cli_every_without_replies_exits_2(task_file, capsys):
    assert main(["render", str(task_file("every"))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prompt-style: error: ") and err.count("\n") == 1
    assert "--replies" in err


@pytest.mark.parametrize("content, message", [("[1, 2]\n", "JSON list of reply strings"), ("nope\n", "not JSON")])
def test_cli_bad_replies_file(task_file, tmp_path, capsys, content, message):
    replies = tmp_path / "replies.jsonl"
    replies.write_text(content, encoding="utf-8")
    assert main(["render", str(task_file("every")), "--replies", str(replies)]) == 2
    err = capsys.readouterr().err
    assert message in err and f"{replies}:1" in err


def test_cli_missing_replies_file(task_file, capsys):
    assert main(["render", str(task_file("every")), "--replies", "/no/such/file.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "/no/such/file.jsonl" in err and "replies" in err and "not found" in err


def test_errors_are_prompt_style_errors():
    assert issubclass(RenderError, PromptStyleError)


# -- the documented example (docs/opencompass.md) ------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "opencompass_multiturn"


def test_example_every_with_gt(capsys):
    assert main(["render", str(EXAMPLE / "task.yaml"), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["index"], r["turn"], r["target"]) for r in rows] == [
        (0, 0, "2"),
        (0, 1, "4"),
        (0, 2, "8"),
        (1, 0, "7"),
        (1, 1, "4"),
    ]


def test_example_every_with_replies(capsys):
    replies = EXAMPLE / "replies.jsonl"
    assert main(["render", str(EXAMPLE / "task_every.yaml"), "--replies", str(replies)]) == 0
    out = capsys.readouterr().out
    assert '=== record 0 · target: "8" · turn 2\nAnswer with a number only.\n1+1=?\n2\nAdd 2.\n5\nDouble it.\n' in out
