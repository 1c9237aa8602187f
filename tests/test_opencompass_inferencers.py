"""OpenCompass's ChatInferencer, LLInferencer and PPLOnlyInferencer: the prompts each builds
(the golden comparison with the real OpenCompass is tests/test_golden_opencompass_inferencers.py),
--mode as an override, the JSON Lines shape of a record with several requests, and the errors."""

from __future__ import annotations

import json
import pickle
import warnings

import pytest
import yaml

from prompt_style import PromptStyleError, StyleError, load_task
from prompt_style.cli import main

INTERNLM2 = {
    "round": [
        {"role": "SYSTEM", "begin": "<|im_start|>system\n", "end": "<|im_end|>\n"},
        {"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
        {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True},
    ]
}
LLAMA2 = {
    "begin": "<s>",
    "round": [
        {"role": "HUMAN", "begin": "[INST] ", "end": " [/INST]"},
        {"role": "BOT", "begin": " ", "end": "</s>", "generate": True},
    ],
    "end": "<END>",
}
API = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
ONE_ROUND = {"round": [{"role": "HUMAN", "prompt": "{prompt}"}]}
MT_BENCH_DIALOGUE = [
    {"role": "user", "content": "Write a haiku."},
    {"role": "assistant", "content": ""},
    {"role": "user", "content": "Now in French."},
    {"role": "assistant", "content": ""},
]


def config(
    template=ONE_ROUND,
    records=(),
    inferencer="ChatInferencer",
    input_columns=("prompt",),
    output="answer",
    retriever=None,
    **options,
):
    return {
        "reader_cfg": {"input_columns": list(input_columns), "output_column": output},
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": template},
            "retriever": retriever or {"type": "ZeroRetriever"},
            "inferencer": {"type": inferencer, **options},
        },
        "data": {"test": list(records)},
    }


def render(cfg, pm, replies=None, **options):
    return list(load_task(cfg, plugins=pm, **options).render(replies=replies))


# -- ChatInferencer ---------------------------------------------------------------------


def test_chat_has_no_meta_begin_and_no_empty_system_turn(pm):
    [request] = render(config(records=[{"prompt": "Hi there"}]), pm, meta=INTERNLM2)
    assert request.text == "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"
    assert (request.turn, request.target, request.mode) == (0, "", "gen")
    # GenInferencer shows every role of the round, the empty SYSTEM turn included.
    [gen] = render(config(records=[{"prompt": "Hi there"}]), pm, meta=INTERNLM2, mode="gen")
    assert gen.text.startswith("<|im_start|>system\n<|im_end|>\n")


def test_chat_leaves_the_meta_templates_begin_and_end_out(pm):
    [request] = render(config(records=[{"prompt": "x"}]), pm, meta=LLAMA2)
    assert request.text == "[INST] x [/INST] "


def test_chat_every_with_gt_over_list_columns(pm):
    records = [{"prompt": ["Q1", "Q2"], "answer": ["A1", "A2"]}]
    requests = render(config(records=records, infer_mode="every_with_gt"), pm)
    assert [(r.text, r.turn, r.target) for r in requests] == [("Q1", 0, "A1"), ("Q1\nA1\nQ2", 1, "A2")]
    [last] = render(config(records=records), pm)  # infer_mode last, ChatInferencer's default
    assert (last.text, last.turn, last.target) == ("Q1\nA1\nQ2", 1, "A2")


def test_chat_every_takes_the_models_replies(pm):
    records = [{"prompt": ["Q1", "Q2", "Q3"], "answer": ["A1", "A2", "A3"]}]
    requests = render(config(records=records, infer_mode="every"), pm, replies=[["R1", "R2"]])
    assert [r.text for r in requests] == ["Q1", "Q1\nR1\nQ2", "Q1\nR1\nQ2\nR2\nQ3"]
    assert [r.target for r in requests] == ["A1", "A2", "A3"]
    with pytest.raises(PromptStyleError, match="needs the model's reply to turn 0"):
        render(config(records=records, infer_mode="every"), pm)


def test_a_dialogue_column_is_the_chat_not_its_python_text(pm):
    cfg = config(
        "{dialogue}",
        [{"dialogue": MT_BENCH_DIALOGUE, "capability": "writing", "judge": "j"}],
        input_columns=("dialogue", "capability"),
        output="judge",
        infer_mode="every",
    )
    requests = render(cfg, pm, meta=INTERNLM2, replies=[["Leaves fall."]])
    assert [r.text for r in requests] == [
        "<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\nLeaves fall.<|im_end|>\n"
        "<|im_start|>user\nNow in French.<|im_end|>\n<|im_start|>assistant\n",
    ]
    assert [t.section for t in requests[1].dialogue] == ["chat"] * 3
    # --mode gen: GenInferencer's prompt, which fills {dialogue} with the list's Python text.
    [gen] = render(cfg, pm, mode="gen")
    assert gen.text.startswith("[{'role': 'user'")


def test_chat_for_an_api_model(pm):
    cfg = config(
        {"begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Be brief."}], "round": ONE_ROUND["round"]},
        [{"prompt": "Hi"}],
    )
    [request] = render(cfg, pm, meta=API)
    # The meta template has no SYSTEM role: the message keeps the chat's role.
    assert request.messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    [oc] = render(cfg, pm, meta=API, meta_options={"api_format": "opencompass"})
    assert oc.messages == [{"role": "system", "prompt": "Be brief."}, {"role": "HUMAN", "prompt": "Hi"}]


def test_chat_fills_only_the_input_and_output_columns_and_keeps_the_answer(pm):
    template = {"round": [{"role": "HUMAN", "prompt": "{question} {other}"}, {"role": "BOT", "prompt": "A: {answer}"}]}
    cfg = config(template, [{"question": "Why?", "other": "x", "answer": "Because."}], input_columns=("question",))
    [request] = render(cfg, pm, meta=INTERNLM2)
    assert request.text == "<|im_start|>user\nWhy? {other}<|im_end|>\n<|im_start|>assistant\n"
    assert request.target == "A: Because."


def test_chat_without_a_prompt_template_uses_the_single_input_column(pm):
    cfg = config(records=[{"prompt": "Q?", "answer": "A."}], infer_mode="every_with_gt")
    cfg["infer_cfg"]["ice_template"] = cfg["infer_cfg"].pop("prompt_template")
    [request] = render(cfg, pm, meta=INTERNLM2)
    assert (request.text, request.target) == ("<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n", "A.")


def test_chat_ignores_in_context_examples_with_a_warning(pm):
    cfg = config(
        {"begin": ["Examples: </E>"], "round": ONE_ROUND["round"]},
        [{"prompt": "Now?"}],
        retriever={"type": "FixKRetriever", "fix_id_list": [0]},
    )
    cfg["infer_cfg"]["prompt_template"]["ice_token"] = "</E>"
    cfg["infer_cfg"]["ice_template"] = {"type": "PromptTemplate", "template": "{prompt}"}
    with pytest.warns(UserWarning, match="ChatInferencer uses no in-context examples"):
        [request] = render(cfg, pm)
    assert request.text == "Examples: \nNow?"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PromptStyleError, match="ChatInferencer sends no in-context examples"):
            cfg["data"]["train"] = [{"prompt": "ex", "answer": "a"}]
            render(cfg, pm, shots=1)


@pytest.mark.parametrize(
    "records, options, message",
    [
        ([{"prompt": 3}], {}, "cannot make a chat of this record"),
        ([{"prompt": ["a", "b"], "answer": ["x"]}], {}, "different lengths"),
        ([{"prompt": [{"role": "user", "content": "Hi"}]}], {}, "no assistant turn"),
        (
            [{"prompt": [{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "?"}]}],
            {"infer_mode": "every_with_gt"},
            "starts with an assistant message",
        ),
        ([{"prompt": [{"content": "no role"}, {"role": "assistant", "content": ""}]}], {}, "has no role"),
        ([{"prompt": [{"role": "user", "content": 7}, {"role": "assistant", "content": ""}]}], {}, "content, not text"),
    ],
)
def test_chat_errors_name_the_record(pm, records, options, message):
    with pytest.raises(PromptStyleError, match=message) as info:
        render(config(records=records, **options), pm)
    assert "record 0" in str(info.value)


def test_chat_template_role_it_cannot_place_is_an_error(pm):
    template = {"round": [{"role": "HUMAN", "prompt": "{prompt}"}, {"role": "THOUGHTS", "prompt": "..."}]}
    with pytest.raises(StyleError, match="'THOUGHTS' item"):
        render(config(template, [{"prompt": "x"}]), pm)


def test_chat_meta_template_without_bot_or_with_strings(pm):
    with pytest.raises(PromptStyleError, match="has none"):
        render(config(records=[{"prompt": "x"}]), pm, meta={"round": [{"role": "HUMAN", "begin": "U: "}]})
    strings = {"round": ["<turn>", {"role": "HUMAN"}, {"role": "BOT", "generate": True}]}
    with pytest.raises(PromptStyleError, match="plain string '<turn>'"):
        render(config(records=[{"prompt": "x"}]), pm, meta=strings)


def test_chat_config_errors(pm):
    bad = config(records=[{"prompt": "x"}], infer_mode="sometimes")
    with pytest.raises(PromptStyleError, match="infer_cfg.inferencer.infer_mode"):
        load_task(bad, plugins=pm)
    raw = config(records=[{"prompt": "x"}])
    raw["infer_cfg"]["prompt_template"] = {"type": "RawPromptTemplate", "messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(PromptStyleError, match="ChatInferencer makes its chat from a PromptTemplate"):
        load_task(raw, plugins=pm)


def test_chat_renderer_pickles(pm):
    task = load_task(config(records=[{"prompt": ["Q1", "Q2"], "answer": ["A1", "A2"]}]), plugins=pm, meta=INTERNLM2)
    renderer = pickle.loads(pickle.dumps(task.renderer))
    [request] = list(renderer.converse({"prompt": ["Q1", "Q2"], "answer": ["A1", "A2"]}, 0))
    assert request.text.endswith("<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n")


# -- LLInferencer and PPLOnlyInferencer -------------------------------------------------------------

WINOGRANDE = {
    "opt1": "The trophy was too big.",
    "opt2": "The suitcase was too big.",
    "answer": 1,
    "cont": " was too big.",
}


def test_ll_gives_every_labels_prompt_and_the_scored_cont(pm):
    cfg = config({1: "{opt1}", 2: "{opt2}"}, [WINOGRANDE], "LLInferencer", ("opt1", "opt2"))
    [result] = render(cfg, pm, meta=LLAMA2)
    assert result.mode == "ppl"
    assert [(c.label, c.text) for c in result.candidates] == [
        (1, "The trophy was too big."),
        (2, "The suitcase was too big."),
    ]
    assert result.continuations == (" was too big.",)
    assert result.to_json()["continuations"] == [" was too big."]


def test_ll_labels_option_and_missing_cont(pm):
    cfg = config({1: "{opt1}", 2: "{opt2}"}, [WINOGRANDE], "LLInferencer", ("opt1", "opt2"), labels=[2])
    [result] = render(cfg, pm)
    assert [c.label for c in result.candidates] == [2]
    no_cont = {k: v for k, v in WINOGRANDE.items() if k != "cont"}
    cfg = config({1: "{opt1}", 2: "{opt2}"}, [no_cont], "LLInferencer", ("opt1", "opt2"))
    with pytest.raises(PromptStyleError, match="'cont'") as info:
        render(cfg, pm)
    assert "record 0" in str(info.value)
    # --mode ppl: PPLInferencer's candidates, which need no cont.
    [ppl] = render(cfg, pm, mode="ppl")
    assert len(ppl.candidates) == 2 and ppl.continuations == ()


def test_ppl_only_scores_the_generation_prompt_whole(pm):
    template = {"round": [{"role": "HUMAN", "prompt": "{text}"}, {"role": "BOT", "prompt": ""}]}
    cfg = config(template, [{"text": "x"}], "PPLOnlyInferencer", ("text",), None)
    [result] = render(cfg, pm, meta=LLAMA2)
    assert (result.text, result.mode, result.candidates) == ("<s>[INST] x [/INST] </s><END>", "ppl", None)
    assert result.to_json()["mode"] == "ppl" and "dialogue" in result.to_json()
    [gen] = render(cfg, pm, meta=LLAMA2, mode="gen")
    assert gen.text == "<s>[INST] x [/INST] "


def test_ppl_inferencer_labels_option(pm):
    template = {
        label: {"round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": label}]} for label in "ABC"
    }
    cfg = config(template, [{"q": "Pick.", "answer": "A"}], "PPLInferencer", ("q",), labels=["C", "A"])
    [result] = render(cfg, pm)
    assert [(c.label, c.text) for c in result.candidates] == [("C", "Pick.\nC"), ("A", "Pick.\nA")]


# -- the command line -------------------------------------------------------------------------------


def test_cli_one_json_line_per_request(tmp_path, capsys):
    cfg = config(
        records=[{"prompt": ["Q1", "Q2"], "answer": ["A1", "A2"]}, {"prompt": ["P"], "answer": ["B"]}],
        infer_mode="every",
    )
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    replies = tmp_path / "replies.jsonl"
    replies.write_text('["R1"]\n[]\n', encoding="utf-8")
    assert main(["render", str(task), "--replies", str(replies), "--format", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["index"], line["turn"], line["text"], line["target"]) for line in lines] == [
        (0, 0, "Q1", "A1"),
        (0, 1, "Q1\nR1\nQ2", "A2"),
        (1, 0, "P", "B"),
    ]


def test_cli_bad_record_is_one_line_exit_2(tmp_path, capsys):
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump(config(records=[{"prompt": 3}])), encoding="utf-8")
    assert main(["render", str(task)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "record 0" in err and "cannot make a chat" in err


def test_chat_with_a_system_instruction(pm):
    [request] = render(config(records=[{"prompt": "Hi"}]), pm, meta=INTERNLM2, system_instruction="Be brief.")
    assert request.text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
