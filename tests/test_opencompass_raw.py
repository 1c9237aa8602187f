"""OpenCompass's RawPromptTemplate (docs/opencompass.md, "Message-list templates").

Parity with the real OpenCompass is in test_golden_opencompass_raw.py; this module
checks the rules one by one, the documented differences, and the errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from prompt_style import OptionError, PromptStyleError, TaskFileError, load_task
from prompt_style.cli import main
from prompt_style.meta.opencompass import merge_messages
from prompt_style.styles.opencompass.raw_prompt import MESSAGES, RawPromptTemplate

GOLDEN = Path(__file__).parent / "golden" / "opencompass" / "raw"
API = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
CHAT = {
    "round": [
        {"role": "HUMAN", "begin": "<H>", "end": "</H>\n"},
        {"role": "BOT", "begin": "<B>", "end": "</B>\n", "generate": True},
    ],
    "reserved_roles": [{"role": "SYSTEM", "begin": "<S>", "end": "</S>\n"}],
}
NO_SYSTEM = {"round": CHAT["round"]}
QA = [{"question": "1+1=?", "answer": "2"}]
POOL = [{"question": "2+2=?", "answer": "4"}, {"question": "3+3=?", "answer": "6"}]
USER_Q = {"role": "user", "content": "Q: {question}"}
FIXK = {"type": "FixKRetriever", "fix_id_list": [0, 1]}


def raw(messages, **options):
    return {"type": "RawPromptTemplate", "messages": messages, **options}


def dataset(prompt=None, ice=None, retriever=None, inferencer=None, columns=("question",), **reader):
    infer = {
        "retriever": retriever or {"type": "ZeroRetriever"},
        "inferencer": inferencer or {"type": "GenInferencer"},
    }
    if prompt is not None:
        infer["prompt_template"] = prompt
    if ice is not None:
        infer["ice_template"] = ice
    return {
        "abbr": "demo",
        "reader_cfg": {"input_columns": list(columns), "output_column": "answer", **reader},
        "infer_cfg": infer,
    }


def task(config, test, train=None, pm=None, **kwargs):
    data = {"test": test}
    if train is not None:
        data["train"] = train
    return load_task({**config, "data": data}, plugins=pm, **kwargs)


def render(config, test, train=None, pm=None, **kwargs):
    return list(task(config, test, train, pm, **kwargs).render())


# -- filling -----------------------------------------------------------------------------------


def test_messages_pass_to_api_models_as_written(pm):
    config = dataset(raw([{"role": "system", "content": "Be brief."}, USER_Q]))
    (result,) = render(config, QA, pm=pm, meta=API)
    assert result.messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q: 1+1=?"}]
    assert [t.section for t in result.dialogue] == [MESSAGES, MESSAGES]


def test_few_shot_examples_are_messages_where_the_ice_token_stands(pm):
    ice = raw([USER_Q, {"role": "assistant", "content": "A: {answer}"}])
    prompt = raw([{"role": "system", "content": "Solve."}, "</E>", USER_Q])
    (result,) = render(dataset(prompt, ice, FIXK), QA, POOL, pm=pm, meta=API)
    assert result.messages == [
        {"role": "system", "content": "Solve."},
        {"role": "user", "content": "Q: 2+2=?"},
        {"role": "assistant", "content": "A: 4"},
        {"role": "user", "content": "Q: 3+3=?"},
        {"role": "assistant", "content": "A: 6"},
        {"role": "user", "content": "Q: 1+1=?"},
    ]


def test_output_column_is_masked_in_generation(pm):
    """OpenCompass fills it (the answer leaks into the last assistant message); we mask it."""
    ice = raw(["</E>", USER_Q, {"role": "assistant", "content": "{answer}"}])
    (result,) = render(dataset(None, ice, FIXK), QA, POOL, pm=pm, meta=API)
    assert result.messages[-1] == {"role": "assistant", "content": ""}
    assert result.messages[1] == {"role": "assistant", "content": "4"}  # examples keep their answers
    config = dataset(raw([{"role": "user", "content": "{question} [{answer}]"}]))
    config["infer_cfg"]["inferencer"]["gen_field_replace_token"] = "<MASK>"
    (result,) = render(config, QA, pm=pm, meta=API)
    assert result.messages == [{"role": "user", "content": "1+1=? [<MASK>]"}]


def test_values_are_never_rescanned(pm):
    config = dataset(raw([{"role": "user", "content": "{question} | {context}"}]), columns=("question", "context"))
    record = {"question": "{context} </E> {{x}}", "context": "{question}", "answer": "a"}
    (result,) = render(config, [record], pm=pm, meta=API)
    assert result.messages[0]["content"] == "{context} </E> {{x}} | {question}"


def test_unknown_placeholders_and_format_variables_false(pm):
    config = dataset(raw([{"role": "user", "content": "{question} {missing} {} \\frac{1}{2}"}]))
    (result,) = render(config, QA, pm=pm, meta=API)
    assert result.messages[0]["content"] == "1+1=? {missing} {} \\frac{1}{2}"
    config = dataset(raw([{"role": "user", "content": "{question}"}], format_variables=False))
    (result,) = render(config, QA, pm=pm, meta=API)
    assert result.messages[0]["content"] == "{question}"


def test_expand_column_inserts_the_record_messages_unfilled(pm):
    config = dataset(raw([{"expand_column": "history"}, USER_Q]), columns=("history", "question"))
    record = {
        "history": [{"role": "user", "content": "{question}"}, {"role": "assistant", "content": "", "name": "bot"}],
        "question": "Ünïcödé 😀",
        "answer": "x",
    }
    (result,) = render(config, [record], pm=pm, meta=API)
    assert result.messages == [
        {"role": "user", "content": "{question}"},
        {"role": "assistant", "content": "", "name": "bot"},
        {"role": "user", "content": "Q: Ünïcödé 😀"},
    ]
    record["history"] = []
    (result,) = render(config, [record], pm=pm, meta=API)
    assert result.messages == [{"role": "user", "content": "Q: Ünïcödé 😀"}]


def test_extra_keys_and_content_parts_pass_through(pm):
    parts = [{"type": "image_url", "image_url": {"url": "{image}"}}, {"type": "text", "text": "{question}"}]
    config = dataset(raw([{"role": "user", "content": parts, "name": "u1"}]))
    (result,) = render(config, QA, pm=pm, meta=API)
    assert result.messages == [{"role": "user", "content": parts, "name": "u1"}]  # parts are not filled
    (result,) = render(config, QA, pm=pm, meta="messages")
    assert result.messages == [{"role": "user", "content": parts, "name": "u1"}]
    line = json.loads(json.dumps(result.dialogue[0]._asdict(), default=list))
    assert line["extra"] == {"name": "u1"}


def test_language_models_read_the_equivalent_dialogue(pm):
    config = dataset(raw([{"role": "system", "content": "Sys."}, USER_Q, {"role": "assistant", "content": ""}]))
    (result,) = render(config, QA, pm=pm, meta=CHAT)
    assert result.text == "<S>Sys.</S>\n<H>Q: 1+1=?</H>\n<B>"
    # No SYSTEM role: the system message is the user's (fallback_role HUMAN).
    (result,) = render(config, QA, pm=pm, meta=NO_SYSTEM)
    assert result.text == "<H>Sys.</H>\n<H>Q: 1+1=?</H>\n<B>"
    # No meta template: the contents joined with newlines, as OpenCompass joins a dialogue.
    (result,) = render(config, QA, pm=pm)
    assert result.text == "Sys.\nQ: 1+1=?"


def test_system_messages_only_still_open_the_model_turn(pm):
    config = dataset(raw([{"role": "system", "content": "Introduce yourself."}]))
    (result,) = render(config, QA, pm=pm, meta=CHAT)
    assert result.text == "<S>Introduce yourself.</S>\n<H></H>\n<B>"


def test_a_meta_template_without_the_roles_is_an_error(pm):
    meta = {"round": [{"role": "USER", "begin": "U:"}, {"role": "MODEL", "begin": "M:", "generate": True}]}
    with pytest.raises(PromptStyleError, match="HUMAN"):
        render(dataset(raw([USER_Q])), QA, pm=pm, meta=meta)
    # A meta template naming its roles user/assistant keeps those names.
    meta = {"round": [{"role": "user", "begin": "U:"}, {"role": "assistant", "begin": "M:", "generate": True}]}
    (result,) = render(dataset(raw([USER_Q])), QA, pm=pm, meta=meta)
    assert result.text == "U:Q: 1+1=?M:"


def test_content_parts_cannot_be_text(pm):
    config = dataset(raw([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]))
    with pytest.raises(PromptStyleError, match="multimodal"):
        render(config, QA, pm=pm, meta=CHAT)


def test_chat_rules_add_the_system_instruction(pm):
    config = dataset(raw([USER_Q]))
    (result,) = render(config, QA, pm=pm, meta=API, system_instruction="Think.")
    assert result.messages == [{"role": "system", "content": "Think."}, {"role": "user", "content": "Q: 1+1=?"}]


# -- meta templates that are lists of messages --------------------------------------------------


def test_list_meta_template_merges_as_opencompass(pm, tmp_path):
    meta = [{"role": "system", "content": "SYS: "}, {"role": "user", "content": "U: "}]
    config = dataset(raw([{"role": "system", "content": "s"}, USER_Q]))
    (result,) = render(config, QA, pm=pm, meta=meta)
    assert result.messages == [{"role": "system", "content": "SYS: s"}, {"role": "user", "content": "U: Q: 1+1=?"}]
    path = tmp_path / "meta.yaml"
    path.write_text(yaml.safe_dump(meta), encoding="utf-8")
    assert render(config, QA, pm=pm, meta=path)[0].messages == result.messages
    path.write_text(yaml.safe_dump({"models": [{"abbr": "m", "meta_template": meta}]}), encoding="utf-8")
    assert render(config, QA, pm=pm, meta=path)[0].messages == result.messages


def test_merge_messages_rules():
    prompt = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    # A role coming later waits for it; one that never comes is inserted where it stands.
    assert merge_messages([{"role": "assistant", "content": "A> "}], prompt) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "A> a"},
    ]
    assert merge_messages([{"role": "system", "content": "S"}], prompt) == [{"role": "system", "content": "S"}, *prompt]
    parts = [{"role": "user", "content": [{"type": "text", "text": "x"}]}]
    assert merge_messages([{"role": "user", "content": "U "}], parts)[0]["content"][0] == {"type": "text", "text": "U "}


def test_list_meta_template_with_other_prompts(pm):
    meta = [{"role": "system", "content": "SYS"}]
    string = dataset({"type": "PromptTemplate", "template": "Q: {question}"})
    (result,) = render(string, QA, pm=pm, meta=meta)
    assert result.messages == [{"role": "user", "content": "Q: 1+1=?"}]  # OpenCompass hands over the string
    dialogue = dataset({"type": "PromptTemplate", "template": {"round": [{"role": "HUMAN", "prompt": "{question}"}]}})
    with pytest.raises(PromptStyleError, match="list of messages applies to RawPromptTemplate"):
        render(dialogue, QA, pm=pm, meta=meta)
    with pytest.raises(OptionError, match="system, user or assistant"):
        render(string, QA, pm=pm, meta=[{"role": "HUMAN", "content": "x"}])


# -- multiround -----------------------------------------------------------------------------------


def _multiround():
    config = dataset(raw([{"expand_column": "dialogue"}]), columns=("dialogue",))
    config["infer_cfg"]["inferencer"] = {"type": "GenInferencer", "multiround": True}
    record = {
        "dialogue": [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "two"},
            {"role": "assistant", "content": ""},
        ],
        "answer": "ref",
    }
    return config, record


def test_multiround_requests_one_per_empty_assistant_message(pm):
    config, record = _multiround()
    t = task(config, [record], pm=pm, meta=API)
    turns = t.renderer.converse(record, 0)
    first = next(turns)
    assert first.messages == [{"role": "user", "content": "one"}] and first.turn == 0
    second = turns.send("R {answer} </E>")
    assert second.messages == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "R {answer} </E>"},
        {"role": "user", "content": "two"},
    ]
    with pytest.raises(StopIteration):
        turns.send("last")
    requests = list(t.render(replies=[["a", "b"]]))
    assert [r.turn for r in requests] == [0, 1]
    with pytest.raises(PromptStyleError, match="multiround' needs the model's reply"):
        list(t.render())


def test_multiround_errors(pm):
    config, record = _multiround()
    record["dialogue"] = [{"role": "user", "content": "no slot"}]
    with pytest.raises(PromptStyleError, match="no empty assistant message"):
        list(task(config, [record], pm=pm, meta=API).render(replies=[[]]))
    config["infer_cfg"]["prompt_template"] = {"type": "PromptTemplate", "template": "{question}"}
    with pytest.raises(TaskFileError, match="multiround") as info:
        task(config, [record], pm=pm)
    assert "infer_cfg.inferencer.multiround" in str(info.value)


def test_multiround_from_the_command_line(tmp_path, capsys):
    config, record = _multiround()
    (tmp_path / "task.yaml").write_text(yaml.safe_dump({**config, "data": {"test": "test.jsonl"}}), encoding="utf-8")
    (tmp_path / "test.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "replies.jsonl").write_text(json.dumps(["R1", "R2"]) + "\n", encoding="utf-8")
    args = ["render", str(tmp_path / "task.yaml"), "--meta", "opencompass::api", "--format", "jsonl"]
    assert main([*args, "--replies", str(tmp_path / "replies.jsonl")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["turn"] for line in lines] == [0, 1]
    assert lines[1]["messages"][1] == {"role": "assistant", "content": "R1"}


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template, key, message",
    [
        (raw("not a list"), "prompt_template.messages", "must be a list of messages"),
        (raw([{"content": "x"}]), "prompt_template.messages.0", "needs a role"),
        (raw([{"role": "HUMAN", "content": "x"}]), "prompt_template.messages.0.role", "not system, user or assistant"),
        (raw([{"role": "user"}]), "prompt_template.messages.0", "needs a content"),
        (raw([{"role": "user", "content": 3}]), "prompt_template.messages.0.content", "string or a list"),
        (raw([{"role": "user", "content": ["x"]}]), "prompt_template.messages.0.content.0", "must be a mapping"),
        (raw(["stray", USER_Q]), "prompt_template.messages.0", "is not the ice_token"),
        (raw([{"expand_column": "h", "role": "user"}]), "prompt_template.messages.0.role", "no other keys"),
        (raw([{"expand_column": 5}]), "prompt_template.messages.0.expand_column", "must name a field"),
        (raw([USER_Q], format_variables="yes"), "prompt_template.format_variables", "true or false"),
        (raw([USER_Q], ice_token=""), "prompt_template.ice_token", "non-empty string"),
        ({"type": "RawPromptTemplate", "template": "x"}, "prompt_template", "has no messages"),
        ({**raw([USER_Q]), "template": "x"}, "prompt_template.template", "no argument 'template'"),
        (3, "prompt_template", "must be a mapping"),
    ],
)
def test_config_errors_name_the_key(pm, template, key, message):
    with pytest.raises(TaskFileError, match=message) as info:
        task(dataset(template), QA, pm=pm)
    assert f"infer_cfg.{key}:" in str(info.value)


@pytest.mark.parametrize(
    "history, message",
    [
        (None, "no field 'history'"),
        ("[{'role': 'user'}]", "must be a list of messages, not str"),
        ([["user", "x"]], r"history\[0\] must be a message"),
        ([{"role": "tool", "content": "x"}], r"history\[0\] has the role 'tool'"),
        ([{"role": "user"}], r"history\[0\] has no content"),
        ([{"role": "user", "content": None}], "content must be a string or a list"),
    ],
)
def test_bad_expand_column_values_name_the_record(pm, history, message):
    config = dataset(raw([{"expand_column": "history"}, USER_Q]), columns=("history", "question"))
    good = {"history": [], "question": "q", "answer": "a"}
    bad = {"question": "q", "answer": "a"} if history is None else {**good, "history": history}
    with pytest.raises(PromptStyleError, match=message) as info:
        render(config, [good, bad], pm=pm, meta=API)
    assert "record 1" in str(info.value)


def test_no_messages_at_all_is_an_error(pm):
    config = dataset(raw([{"expand_column": "history"}]), columns=("history",))
    with pytest.raises(PromptStyleError, match="no messages"):
        render(config, [{"history": [], "answer": "a"}], pm=pm, meta=API)


def test_examples_need_somewhere_to_go(pm):
    ice = raw([USER_Q, {"role": "assistant", "content": "{answer}"}])
    with pytest.raises(PromptStyleError, match="nowhere to go"):
        render(dataset(raw([USER_Q]), ice, FIXK), QA, POOL, pm=pm)
    with pytest.raises(PromptStyleError, match="no ice_token"):
        render(dataset(raw([USER_Q], ice_token=None), ice, FIXK), QA, POOL, pm=pm)
    with pytest.raises(PromptStyleError, match="no ice_template"):
        render(dataset(raw(["</E>", USER_Q]), None, FIXK), QA, POOL, pm=pm)


def test_raw_and_text_templates_do_not_mix(pm):
    text = {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"}
    with pytest.raises(TaskFileError, match="the ice_template is a RawPromptTemplate but the other"):
        task(
            dataset({"type": "PromptTemplate", "template": "</E>{question}", "ice_token": "</E>"}, raw([USER_Q])),
            QA,
            pm=pm,
        )
    with pytest.raises(TaskFileError, match="the prompt_template is a RawPromptTemplate but the other"):
        task(dataset(raw(["</E>", USER_Q]), text, FIXK), QA, POOL, pm=pm)


def test_perplexity_is_an_error(pm, capsys):
    config = dataset(raw([USER_Q]), inferencer={"type": "PPLInferencer"})
    with pytest.raises(TaskFileError, match="no perplexity mode") as info:
        task(config, QA, pm=pm)
    assert "infer_cfg.inferencer.type" in str(info.value)
    with pytest.raises(OptionError, match="no perplexity mode"):
        task(dataset(raw([USER_Q])), QA, pm=pm, mode="ppl")
    args = [
        "render",
        str(GOLDEN / "datasets" / "mmlu_llmjudge_rawprompt_gen_af67f0.yaml"),
        "--data",
        f"test={GOLDEN / 'records' / 'mmlu_llmjudge_rawprompt_gen_af67f0' / 'test.jsonl'}",
        "--mode",
        "ppl",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("prompt-style: error:") and "no perplexity mode" in err and len(err.splitlines()) == 1


def test_template_object_api():
    template = RawPromptTemplate([{"role": "user", "content": "{q}"}, "</E>"], key="prompt_template")
    assert template.has_ice_slot() and template.kind == "messages" and template.labels == ()
    (turn,) = template.fill({"q": "x"}, "")
    assert (turn.role, turn.content, turn.sep, turn.section) == ("user", "x", "", MESSAGES)


def test_shipped_python_config_from_the_command_line(capsys):
    path = GOLDEN / "py" / "BuySideFinBench_gen_ca1704.py"
    records = GOLDEN / "records" / "BuySideFinBench_gen_ca1704_en"
    args = ["render", str(path), "--template", "BuySideFinBench-three_statements_en", "--limit", "1"]
    args += ["--data", f"dev={records / 'dev.jsonl'}", "--data", f"test={records / 'test.jsonl'}"]
    assert main(args) == 2
    assert "--trust-code" in capsys.readouterr().err
    assert main([*args, "--trust-code", "--meta", "opencompass::api", "--format", "jsonl"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert len(line["messages"]) == 11 and line["messages"][-1]["role"] == "user"


# -- the documented examples (docs/opencompass.md) ----------------------------------------------

EXAMPLES = Path(__file__).parent.parent / "examples" / "opencompass_raw"


def test_documented_examples(capsys):
    task_file = str(EXAMPLES / "task.yaml")
    assert main(["render", task_file, "--meta", "opencompass::api", "--limit", "1", "--format", "jsonl"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["messages"][0] == {
        "role": "system",
        "content": "Answer the multiple-choice question with A, B, C or D.",
    }
    assert line["messages"][2] == {"role": "assistant", "content": "The answer is C."}
    assert line["messages"][-1]["content"].startswith("Question: What is the value of 7 × 8?")
    meta = str(EXAMPLES.parent / "opencompass" / "meta.yaml")
    assert main(["render", task_file, "--meta", meta, "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('=== record 0 · target: "B"\n<|im_start|>system\nAnswer the multiple-choice')
    assert out.endswith("D. 64<|im_end|>\n<|im_start|>assistant\n\n")
    assert (
        main(["render", task_file, "--meta", str(EXAMPLES / "meta_list.yaml"), "--limit", "1", "--format", "jsonl"])
        == 0
    )
    first = json.loads(capsys.readouterr().out)["messages"][0]
    assert first["content"] == "You are a careful assistant. Answer the multiple-choice question with A, B, C or D."
    multiround = str(EXAMPLES / "task_multiround.yaml")
    replies = str(EXAMPLES / "replies.jsonl")
    assert main(["render", multiround, "--meta", "opencompass::api", "--replies", replies, "--format", "jsonl"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["index"], x["turn"]) for x in lines] == [(0, 0), (0, 1), (1, 0)]
    assert lines[1]["messages"][2] == {"role": "assistant", "content": "7"}


def test_bad_example_data_names_the_pool_record(pm):
    ice = raw([{"expand_column": "history"}, USER_Q, {"role": "assistant", "content": "{answer}"}])
    prompt = raw(["</E>", USER_Q])
    config = dataset(prompt, ice, FIXK, columns=("history", "question"))
    pool = [{"history": [], "question": "a", "answer": "b"}, {"history": "oops", "question": "c", "answer": "d"}]
    with pytest.raises(PromptStyleError, match=r"in-context example \(record 1 of the pool\).*must be a list"):
        render(config, [{"history": [], "question": "q", "answer": "x"}], pool, pm=pm)
