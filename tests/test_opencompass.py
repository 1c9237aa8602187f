"""OpenCompass dataset configs, templates, meta templates and modes (docs/opencompass.md).

Parity with the real OpenCompass is in test_golden_opencompass.py; this module
checks the rules one by one, the documented differences, and the errors.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import yaml

from prompt_style import (
    OptionError,
    PromptStyleError,
    StyleError,
    TaskFileError,
    Turn,
    load_task,
    render_records,
)
from prompt_style.cli import main
from prompt_style.meta.opencompass import NAMED_META_TEMPLATES, OpenCompassMeta
from prompt_style.safe.oc_python import exec_config
from prompt_style.styles.opencompass.template import RAW, FieldText, PromptTemplate

GOLDEN = Path(__file__).parent / "golden" / "opencompass"
CHAT = {
    "round": [
        {"role": "HUMAN", "begin": "<H>", "end": "</H>\n"},
        {"role": "BOT", "begin": "<B>", "end": "</B>\n", "generate": True},
    ]
}
API = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}


def dataset(prompt=None, ice=None, retriever=None, inferencer="GenInferencer", **reader):
    infer = {"retriever": retriever or {"type": "ZeroRetriever"}, "inferencer": {"type": inferencer}}
    if prompt is not None:
        infer["prompt_template"] = (
            prompt
            if isinstance(prompt, dict) and "template" in prompt
            else {"type": "PromptTemplate", "template": prompt}
        )
    if ice is not None:
        infer["ice_template"] = (
            ice if isinstance(ice, dict) and "template" in ice else {"type": "PromptTemplate", "template": ice}
        )
    return {
        "abbr": "demo",
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer", **reader},
        "infer_cfg": infer,
    }


def render(config, test, train=None, pm=None, **kwargs):
    data = {"test": test}
    if train is not None:
        data[config["reader_cfg"].get("train_split", "train")] = train
    return list(load_task({**config, "data": data}, plugins=pm, **kwargs).render())


QA = [{"question": "1+1=?", "answer": "2"}]
POOL = [{"question": "2+2=?", "answer": "4"}, {"question": "3+3=?", "answer": "6"}]
DIALOGUE_ICE = {"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}
DIALOGUE_PROMPT = {
    "type": "PromptTemplate",
    "template": {
        "begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Solve."}, "</E>"],
        "round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}],
    },
    "ice_token": "</E>",
}
FIXK = {"type": "FixKRetriever", "fix_id_list": [0, 1]}


# -- placeholders ---------------------------------------------------------------------


def test_placeholders_replace_semantics():
    text = FieldText("{a} {b} {{a}} {missing} {} {a.b}")
    assert text.fill({"a": 1, "b": None, "a.b": "dot"}) == "1 None {1} {missing} {} dot"
    # values are not scanned again
    assert FieldText("{a}{b}").fill({"a": "{b}", "b": "x"}) == "{b}x"
    assert FieldText("{a}").fill({"a": "x"}, {"a": "over"}) == "over"


def test_output_column_masked_in_gen_filled_in_ppl(pm):
    config = dataset("Q: {question}\nA: {answer}")
    (gen,) = render(config, QA, pm=pm)
    assert gen.text == "Q: 1+1=?\nA: " and gen.mode == "gen" and gen.target == "2"
    (ppl,) = render(config, QA, pm=pm, mode="ppl")
    assert ppl.text is None and [(c.label, c.text) for c in ppl.candidates] == [("2", "Q: 1+1=?\nA: 2")]


def test_gen_field_replace_token(pm):
    config = dataset("A: {answer}")
    config["infer_cfg"]["inferencer"]["gen_field_replace_token"] = "<ANS>"
    assert render(config, QA, pm=pm)[0].text == "A: <ANS>"


def test_label_keyed_ppl_and_gen_uses_first_label(pm):
    config = dataset({"B": "{question} -> no", "A": "{question} -> yes"}, inferencer="PPLInferencer")
    (ppl,) = render(config, QA, pm=pm)
    assert ppl.mode == "ppl"
    assert [(c.label, c.text) for c in ppl.candidates] == [("B", "1+1=? -> no"), ("A", "1+1=? -> yes")]
    (gen,) = render(config, QA, pm=pm, mode="gen")
    assert gen.text == "1+1=? -> no"


def test_record_values_are_not_rescanned(pm):
    config = dataset("{question} / {answer}", inferencer="PPLInferencer")
    (result,) = render(config, [{"question": "Is {answer} leaked?", "answer": "secret"}], pm=pm)
    # OpenCompass would give "Is secret leaked? / secret".
    assert result.candidates[0].text == "Is {answer} leaked? / secret"


# -- dialogue templates and in-context examples ----------------------------------------


def test_dialogue_few_shot_promptlist_and_plain_join(pm):
    (result,) = render(dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK), QA, POOL, pm=pm)
    assert result.text == "Solve.\n2+2=?\n4\n3+3=?\n6\n1+1=?"
    assert [(t.role, t.content, t.section) for t in result.dialogue] == [
        ("SYSTEM", "Solve.", "begin"),
        ("HUMAN", "2+2=?", "ice"),
        ("BOT", "4", "ice"),
        ("HUMAN", "3+3=?", "ice"),
        ("BOT", "6", "ice"),
        ("HUMAN", "1+1=?", "round"),
        ("BOT", "", "round"),
    ]
    assert result.dialogue[0].fallback_role == "HUMAN"
    assert result.to_json()["dialogue"][0] == {
        "role": "SYSTEM",
        "prompt": "Solve.",
        "section": "begin",
        "fallback_role": "HUMAN",
    }


def test_meta_template_gen_stops_at_generate_role_and_ppl_renders_all(pm):
    config = dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK)
    (gen,) = render(config, QA, POOL, pm=pm, meta=CHAT)
    assert gen.text == "<H>Solve.</H>\n<H>2+2=?</H>\n<B>4</B>\n<H>3+3=?</H>\n<B>6</B>\n<H>1+1=?</H>\n<B>"
    (ppl,) = render(config, QA, POOL, pm=pm, meta={**CHAT, "end": "<END>"}, mode="ppl")
    assert ppl.candidates[0].text.endswith("<H>1+1=?</H>\n<B>2</B>\n<END>")


def test_api_meta_gives_messages_and_opencompass_format(pm):
    config = dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK)
    (result,) = render(config, QA, POOL, pm=pm, meta=API)
    assert result.text is None
    assert result.messages == [
        {"role": "user", "content": "Solve.\n2+2=?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "3+3=?"},
        {"role": "assistant", "content": "6"},
        {"role": "user", "content": "1+1=?"},
    ]
    (own,) = render(config, QA, POOL, pm=pm, meta=API, meta_options={"api_format": "opencompass"})
    assert own.messages[0] == {"role": "HUMAN", "prompt": "Solve.\n2+2=?"}


def test_chat_meta_templates_stop_a_generation_prompt_at_its_answer_turn(pm, pm_all):
    """OpenCompass's chat models (``HuggingFacewithChatTemplate``'s default meta template, API
    models) stop a generation prompt at the BOT turn of its last round: a chat meta template
    (messages, chatml, hf) sends no assistant turn for the masked answer, and no prefill."""
    config = dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK)
    asked = [
        {"role": "system", "content": "Solve."},
        {"role": "user", "content": "2+2=?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "3+3=?"},
        {"role": "assistant", "content": "6"},
        {"role": "user", "content": "1+1=?"},
    ]
    (chat,) = render(config, QA, POOL, pm=pm, meta="messages")
    assert chat.messages == asked
    (api,) = render(config, QA, POOL, pm=pm, meta=API)
    assert api.messages == [{"role": "user", "content": "Solve.\n2+2=?"}, *asked[2:]]
    # a BOT prompt with text around the answer column: OpenCompass's chat models drop it whole
    answer = {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": " {answer}\n"}]}
    config = dataset(
        {"type": "PromptTemplate", "template": {"begin": "</E>", **answer}, "ice_token": "</E>"}, answer, FIXK
    )
    (chat,) = render(config, QA, POOL, pm=pm_all, meta="chatml")
    assert chat.text.endswith("<|im_start|>user\nQ: 1+1=?<|im_end|>\n<|im_start|>assistant\n")
    assert chat.messages[-1] == {"role": "user", "content": "Q: 1+1=?"}
    # without a chat meta template the answer turn stays (OpenCompass's plain join), and
    # perplexity prompts keep the answer
    (plain,) = render(config, QA, POOL, pm=pm)
    assert plain.text.endswith("Q: 1+1=?\n \n")
    (ppl,) = render(dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK), QA, POOL, pm=pm, meta="messages", mode="ppl")
    assert ppl.candidates[0].messages[-1] == {"role": "assistant", "content": "2"}


def test_ice_template_alone_serves_both_zero_shot_included(pm):
    ice = {
        "type": "PromptTemplate",
        "template": "</E>Q: {question}\nA: {answer}",
        "ice_token": "</E>",
    }
    (zero,) = render(dataset(ice=ice), QA, pm=pm)
    assert zero.text == "Q: 1+1=?\nA: "
    retriever = {"type": "FixKRetriever", "fix_id_list": [1, 0], "ice_separator": "|", "ice_eos_token": "#"}
    (few,) = render(dataset(ice=ice, retriever=retriever), QA, POOL, pm=pm)
    assert few.text == "Q: 3+3=?\nA: 6|Q: 2+2=?\nA: 4#Q: 1+1=?\nA: "


def test_ice_template_without_ice_token_zero_shot_renders(pm):
    # OpenCompass raises NotImplementedError here; with no examples to place, we render.
    (result,) = render(dataset(ice="Q: {question}\nA: {answer}"), QA, pm=pm)
    assert result.text == "Q: 1+1=?\nA: "


def test_string_examples_default_separators(pm):
    config = dataset(
        {"type": "PromptTemplate", "template": "</E>{question}", "ice_token": "</E>"},
        "{question} {answer}",
        FIXK,
    )
    assert render(config, QA, POOL, pm=pm)[0].text == "2+2=? 4\n3+3=? 6\n1+1=?"


def test_sep_token_removed_from_prompt_and_examples(pm):
    prompt = {
        "type": "PromptTemplate",
        "template": "</E>Q: {question}<S>A: {answer}",
        "ice_token": "</E>",
        "sep_token": "<S>",
    }
    ice = {"type": "PromptTemplate", "template": "Q: {question}<S>A: {answer}", "sep_token": "<S>"}
    (result,) = render(dataset(prompt, ice, FIXK, inferencer="PPLInferencer"), QA, POOL, pm=pm)
    # OpenCompass keeps <S> in the examples of perplexity prompts.
    assert result.candidates[0].text == "Q: 2+2=?A: 4\nQ: 3+3=?A: 6\nQ: 1+1=?A: 2"


def test_label_keyed_ice_uses_each_example_label(pm):
    template = {
        "yes": {
            "begin": "</E>",
            "round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "Yes"}],
        },
        "no": {"begin": "</E>", "round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "No"}]},
    }
    config = dataset(
        ice={"type": "PromptTemplate", "template": template, "ice_token": "</E>"},
        retriever={"type": "FixKRetriever", "fix_id_list": [0, 1]},
        inferencer="PPLInferencer",
        output_column="label",
    )
    pool = [{"question": "sky blue?", "label": "yes"}, {"question": "fire cold?", "label": "no"}]
    (result,) = render(config, [{"question": "water wet?", "label": "yes"}], pool, pm=pm, meta=CHAT)
    assert [c.label for c in result.candidates] == ["yes", "no"]
    # separators and the end token (\n) stand between the dialogue examples, as OpenCompass puts them
    assert result.candidates[0].text == (
        "<H>sky blue?</H>\n<B>Yes</B>\n\n<H>fire cold?</H>\n<B>No</B>\n\n\n<H>water wet?</H>\n<B>Yes</B>\n"
    )
    with pytest.raises(StyleError, match="no template for the label 'maybe'"):
        render(config, [{"question": "q", "label": "yes"}], [{"question": "?", "label": "maybe"}, *pool], pm=pm)


def test_awkward_values(pm):
    records = [{"question": "Ünï {x} </E> \n line", "answer": "multi\nline"}, {"question": "", "answer": ""}]
    config = dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, {"type": "FixKRetriever", "fix_id_list": [0]})
    first, second = render(config, records, records, pm=pm, meta=CHAT, mode="ppl")
    assert "<H>Ünï {x} </E> \n line</H>\n<B>multi\nline</B>\n" in first.candidates[0].text
    assert second.candidates[0].text.endswith("<H></H>\n<B></B>\n")


# -- meta templates ------------------------------------------------------------------


def test_missing_role_is_an_error_naming_the_roles(pm):
    prompt = {
        "begin": [{"role": "SYSTEM", "prompt": "Be brief."}],
        "round": [{"role": "HUMAN", "prompt": "{question}"}],
    }
    with pytest.raises(StyleError) as info:
        render(dataset(prompt), QA, pm=pm, meta=CHAT)
    message = str(info.value)
    assert "'SYSTEM'" in message and "HUMAN, BOT" in message and "record 0" in message
    prompt["begin"][0]["fallback_role"] = "ADMIN"
    with pytest.raises(StyleError, match="nor its fallback_role 'ADMIN'"):
        render(dataset(prompt), QA, pm=pm, meta=CHAT)
    # with the role reserved, it renders
    meta = {**CHAT, "reserved_roles": [{"role": "SYSTEM", "begin": "<S>", "end": "</S>"}]}
    assert render(dataset(prompt), QA, pm=pm, meta=meta)[0].text == "<S>Be brief.</S><H>1+1=?</H>\n<B>"


def test_meta_round_roles_missing_from_the_dialogue_use_their_default_prompt(pm):
    meta = {
        "begin": "[start]",
        "round": [
            {"role": "HUMAN", "begin": "H: ", "end": "\n"},
            {"role": "THOUGHTS", "begin": "T: ", "end": "\n", "prompt": "None"},
            {"role": "BOT", "begin": "B: ", "end": "\n", "generate": True},
        ],
        "end": "[end]",
    }
    config = dataset({"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]})
    assert render(config, QA, pm=pm, meta=meta)[0].text == "[start]H: 1+1=?\nT: None\nB: "
    (ppl,) = render(config, QA, pm=pm, meta=meta, mode="ppl")
    assert ppl.candidates[0].text == "[start]H: 1+1=?\nT: None\nB: 2\n[end]"
    no_generate = {**meta, "round": [{k: v for k, v in r.items() if k != "generate"} for r in meta["round"]]}
    assert render(config, QA, pm=pm, meta=no_generate)[0].text == "[start]H: 1+1=?\nT: None\nB: \n[end]"


def test_end_section_renders_in_ppl(pm):
    # OpenCompass opens the end section with pos='end' and fails (IndexError) in perplexity mode.
    prompt = {
        "round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}],
        "end": [{"role": "HUMAN", "prompt": "Sure?"}, "EOF"],
    }
    (result,) = render(dataset(prompt), QA, pm=pm, meta=CHAT, mode="ppl")
    assert result.candidates[0].text == "<H>1+1=?</H>\n<B>2</B>\n<H>Sure?</H>\nEOF"


def test_fallback_role_inside_a_round(pm):
    # OpenCompass's LM parser fails (KeyError) here; its API parser falls back, and so do we.
    prompt = {
        "round": [
            {"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Think."},
            {"role": "HUMAN", "prompt": "{question}"},
        ]
    }
    assert render(dataset(prompt), QA, pm=pm, meta=CHAT)[0].text == "<H>Think.</H>\n<B></B>\n<H>1+1=?</H>\n<B>"


def test_reserved_role_inside_a_round_is_rendered_in_place(pm):
    prompt = {"round": [{"role": "SYSTEM", "prompt": "Think."}, {"role": "HUMAN", "prompt": "{question}"}]}
    meta = {**API, "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}]}
    # OpenCompass's API parser drops it (or fails without a fallback_role).
    assert render(dataset(prompt), QA, pm=pm, meta=meta)[0].messages == [
        {"role": "system", "content": "Think."},
        {"role": "user", "content": "1+1=?"},
    ]


def test_plain_text_dropped_for_api_models_with_a_warning(pm):
    prompt = {"begin": "Read carefully.", "round": [{"role": "HUMAN", "prompt": "{question}"}]}
    with pytest.warns(UserWarning, match="left out of API messages"):
        (result,) = render(dataset(prompt), QA, pm=pm, meta=API)
    assert result.messages == [{"role": "user", "content": "1+1=?"}]


def test_string_prompt_passes_through_meta_templates(pm):
    config = dataset("Q: {question}")
    assert render(config, QA, pm=pm, meta=CHAT)[0].text == "Q: 1+1=?"
    assert render(config, QA, pm=pm, meta=API)[0].messages == [{"role": "user", "content": "Q: 1+1=?"}]


def test_api_meta_begin_is_a_system_message(pm):
    meta = {**API, "begin": "You are helpful."}
    result = render(dataset({"round": [{"role": "HUMAN", "prompt": "{question}"}]}), QA, pm=pm, meta=meta)[0]
    assert result.messages == [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "1+1=?"}]


@pytest.mark.parametrize(
    "template, message",
    [
        ({"round": [{"role": "HUMAN", "begin": ["<s>", 2]}]}, "a token id has no text"),
        ({"round": [{"role": "HUMAN", "generation": True}]}, "did you mean 'generate'"),
        ({"rounds": []}, "has no key 'rounds'"),
        ({"round": [{"role": "HUMAN"}, {"role": "HUMAN"}]}, "appears twice"),
        ({"round": [{"role": "HUMAN", "api_role": "USER"}]}, "not HUMAN, BOT or SYSTEM"),
        ({"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT"}]}, "has no api_role"),
        ({"round": ["text", {"role": "HUMAN", "api_role": "HUMAN"}]}, "plain string"),
    ],
)
def test_bad_meta_templates(pm, template, message):
    with pytest.raises(OptionError, match=message):
        render(dataset("{question}"), QA, pm=pm, meta=template)


def test_named_meta_templates(pm):
    names = [n for n in pm.names("apply_meta_template") if n.startswith("opencompass::")]
    assert len(names) == len(NAMED_META_TEMPLATES) >= 10
    result = render(dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK), QA, POOL, pm=pm, meta="opencompass::internlm2-chat")
    # SYSTEM is in this template's round, so every round shows it (empty) as OpenCompass does.
    assert result[0].text.startswith(
        "<|im_start|>system\nSolve.<|im_end|>\n<|im_start|>system\n<|im_end|>\n<|im_start|>user\n2+2=?"
    )
    assert result[0].text.endswith("<|im_start|>user\n1+1=?<|im_end|>\n<|im_start|>assistant\n")
    with pytest.raises(OptionError, match="built in"):
        render(dataset("{q}"), QA, pm=pm, meta="opencompass::api", meta_options={"template": CHAT})


def test_meta_template_files_and_model_configs(pm, tmp_path):
    path = tmp_path / "meta.yaml"
    path.write_text(yaml.safe_dump(CHAT), encoding="utf-8")
    config = dataset("{question}", inferencer="GenInferencer")
    dialogue_config = dataset({"round": [{"role": "HUMAN", "prompt": "{question}"}]})
    assert render(dialogue_config, QA, pm=pm, meta=str(path))[0].text == "<H>1+1=?</H>\n<B>"
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"models": [{"abbr": "m", "meta_template": CHAT}]}), encoding="utf-8")
    assert render(dialogue_config, QA, pm=pm, meta=model)[0].text == "<H>1+1=?</H>\n<B>"
    with pytest.raises(TaskFileError, match="--trust-code"):
        render(config, QA, pm=pm, meta=str(GOLDEN / "py" / "gpt_4.py"))
    api = render(dialogue_config, QA, pm=pm, meta=str(GOLDEN / "py" / "gpt_4.py"), trust_code=True)
    assert api[0].messages == [{"role": "user", "content": "1+1=?"}]
    empty = tmp_path / "empty.yaml"
    empty.write_text("foo: 1\n", encoding="utf-8")
    with pytest.raises(OptionError, match="a meta template has no key 'foo'") as info:
        render(config, QA, pm=pm, meta=str(empty))
    assert info.value.file == str(empty)


def test_no_meta_template_is_the_plain_join(pm):
    config = dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK)
    plain = render(config, QA, POOL, pm=pm)[0].text
    assert render(config, QA, POOL, pm=pm, meta="opencompass")[0].text == plain
    # a prompt starting with an empty string item: OpenCompass's join still puts a newline first
    zero = dataset({"begin": "</E>", "round": [{"role": "HUMAN", "prompt": "{question}"}]} | {})
    zero["infer_cfg"]["prompt_template"]["ice_token"] = "</E>"
    assert render(zero, QA, pm=pm)[0].text == "\n1+1=?"


def test_meta_pickles(pm):
    meta = OpenCompassMeta(template=CHAT)
    clone = pickle.loads(pickle.dumps(meta))
    dialogue = (Turn("HUMAN", "hi"), Turn(RAW, "raw", section="begin"))
    assert clone.apply(dialogue).text == meta.apply(dialogue).text
    task = load_task(
        {**dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK), "data": {"test": QA, "train": POOL}}, plugins=pm, meta=CHAT
    )
    renderer = pickle.loads(pickle.dumps(task.renderer))
    assert renderer.render(QA[0], 0).text == task.renderer.render(QA[0], 0).text


# -- reading configs -----------------------------------------------------------------


@pytest.mark.parametrize(
    "change, key, message",
    [
        (
            lambda d: d["infer_cfg"]["retriever"].update(type="NoSuchRetriever"),
            "infer_cfg.retriever.type",
            "FixKRetriever",
        ),
        (lambda d: d["infer_cfg"]["inferencer"].update(type="NoSuch"), "infer_cfg.inferencer.type", "PPLInferencer"),
        (
            lambda d: d["infer_cfg"]["prompt_template"].update(type="NoSuch"),
            "infer_cfg.prompt_template.type",
            "MMPromptTemplate",
        ),
        (lambda d: d["infer_cfg"].update(retreiver={}), "infer_cfg.retreiver", "retriever"),
        (lambda d: d["reader_cfg"].update(test_range="first 10"), "reader_cfg.test_range", "not an index slice"),
        (
            lambda d: d["reader_cfg"].update(train_range=[0, 10]),
            "reader_cfg.train_range",
            "must be a number or a slice",
        ),
        (
            lambda d: d["infer_cfg"]["prompt_template"].update(ice_token="</E>"),
            "infer_cfg.prompt_template.template",
            "does not appear",
        ),
        (lambda d: d.pop("reader_cfg"), "reader_cfg", "no reader_cfg"),
        (
            lambda d: d["infer_cfg"]["prompt_template"].update(template={"round": [{"prompt": "x"}]}),
            "infer_cfg.prompt_template.template.round.0.role",
            "role name",
        ),
    ],
)
def test_config_errors_name_the_key_and_line(pm, tmp_path, change, key, message):
    config = dataset("Q: {question}")
    change(config)
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with pytest.raises(TaskFileError) as info:
        load_task(path, plugins=pm, data={"test": QA})
    assert info.value.key == key
    assert message in str(info.value)
    assert info.value.file == str(path)
    assert info.value.line is not None or key == "reader_cfg"  # a missing key has no line


def test_data_for_the_splits_reader_cfg_names(pm, tmp_path):
    config = dataset(DIALOGUE_PROMPT, DIALOGUE_ICE, FIXK, train_split="dev", test_split="val")
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(TaskFileError, match=r"evaluated split 'val'.*--data val=PATH"):
        load_task(path, plugins=pm)
    with pytest.raises(TaskFileError, match=r"few-shot split 'dev'.*--data dev=PATH"):
        load_task(path, plugins=pm, data={"val": QA})
    task = load_task(path, plugins=pm, data={"val": QA, "dev": POOL})
    assert next(task.render()).text.startswith("Solve.\n2+2=?")


def test_several_datasets_choose_with_template(pm, tmp_path):
    first, second = dataset("A {question}"), dataset("B {question}")
    second["abbr"] = "other"
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({"datasets": [first, second]}), encoding="utf-8")
    with pytest.raises(TaskFileError, match="holds 2 datasets: demo, other"):
        load_task(path, plugins=pm, data={"test": QA})
    assert next(load_task(path, plugins=pm, data={"test": QA}, template="other").render()).text == "B 1+1=?"
    assert next(load_task(path, plugins=pm, data={"test": QA}, template=0).render()).text == "A 1+1=?"


def test_mode_option_needs_a_style_with_modes(pm, make_task):
    path = make_task({"test": [{"q": "x"}]}, doc_to_text="q")
    with pytest.raises(PromptStyleError, match="has no mode 'ppl'"):
        load_task(path, plugins=pm, mode="ppl")


def test_render_records_with_a_dataset_config(pm):
    config = dataset("Q: {question}")
    results = render_records(QA, plugins=pm, reader_cfg=config["reader_cfg"], infer_cfg=config["infer_cfg"])
    assert results[0].text == "Q: 1+1=?"


# -- OpenCompass's own .py configs ---------------------------------------------------


def _by_name(value):
    if isinstance(value, dict):
        return {k: _by_name(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_by_name(v) for v in value]
    return getattr(value, "__opencompass_name__", value)


@pytest.mark.parametrize("name", sorted(p.stem for p in (GOLDEN / "py").glob("*.py")))
def test_python_configs_read_as_mmengine_reads_them(name):
    namespace = exec_config(GOLDEN / "py" / f"{name}.py")
    expected = json.loads((GOLDEN / "py" / f"{name}.expected.json").read_text(encoding="utf-8"))
    got = {
        key: [
            {k: _by_name(v) for k, v in item.items() if k in ("abbr", "reader_cfg", "infer_cfg", "meta_template")}
            for item in value
        ]
        for key, value in namespace.items()
        if key.endswith("datasets") or key == "models"
    }
    # Through JSON as the expected file went: label keys 0, 1, ... read "0", "1", ...
    assert json.loads(json.dumps(got, ensure_ascii=False)) == expected


def test_python_dataset_config_needs_trust_code(pm):
    path = GOLDEN / "py" / "ARC_c_few_shot_ppl.py"
    records = GOLDEN / "records" / "ARC_c_few_shot_ppl"
    data = {"train": records / "train.jsonl", "test": records / "test.jsonl"}
    with pytest.raises(TaskFileError, match="needs --trust-code") as info:
        load_task(path, plugins=pm, data=data)
    assert "\n" not in str(info.value)
    yaml_task = load_task(GOLDEN / "datasets" / "ARC_c_few_shot_ppl.yaml", plugins=pm, data=data)
    py_task = load_task(path, plugins=pm, data=data, trust_code=True)
    assert [[c.text for c in r.candidates] for r in py_task.render()] == [
        [c.text for c in r.candidates] for r in yaml_task.render()
    ]


def test_python_config_read_base_and_relative_imports(pm, tmp_path):
    base = tmp_path / "configs" / "datasets" / "demo"
    base.mkdir(parents=True)
    (base / "demo_gen.py").write_text(
        "from opencompass.openicl.icl_prompt_template import PromptTemplate\n"
        "from opencompass.openicl.icl_retriever import ZeroRetriever\n"
        "from opencompass.openicl.icl_inferencer import GenInferencer\n"
        "from opencompass.datasets import DemoDataset\n"
        "demo_datasets = [dict(abbr='demo', type=DemoDataset, reader_cfg=dict(input_columns=['question'], "
        "output_column='answer'), infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template='Q: {question}'), "
        "retriever=dict(type=ZeroRetriever), inferencer=dict(type=GenInferencer)))]\n",
        encoding="utf-8",
    )
    top = tmp_path / "configs" / "eval_demo.py"
    top.write_text(
        "from mmengine.config import read_base\n"
        "with read_base():\n"
        "    from .datasets.demo.demo_gen import demo_datasets\n"
        "    from opencompass.configs.datasets.demo.demo_gen import demo_datasets as again\n"
        "datasets = [*demo_datasets]\n",
        encoding="utf-8",
    )
    task = load_task(top, plugins=pm, trust_code=True, data={"test": QA})
    assert next(task.render()).text == "Q: 1+1=?"
    bad = tmp_path / "configs" / "bad.py"
    bad.write_text("from opencompass.utils import something\nx = something(1)\ninfer_cfg = 1\n", encoding="utf-8")
    with pytest.raises(TaskFileError, match="cannot run OpenCompass code") as info:
        load_task(bad, plugins=pm, trust_code=True, data={"test": QA})
    assert info.value.line == 2


def test_python_config_that_only_re_exports_loads(pm, tmp_path):
    """`from mmengine import read_base` and a file naming neither infer_cfg nor opencompass
    (OpenCompass's `x_gen.py` files); a library prompt-style lacks is answered with markers."""
    base = tmp_path / "configs" / "datasets" / "demo"
    base.mkdir(parents=True)
    (base / "demo_gen_1a2b3c.py").write_text(
        "from some_library_prompt_style_lacks import parallel\n"
        "from opencompass.openicl.icl_prompt_template import PromptTemplate\n"
        "demo_datasets = [dict(abbr='demo', reader_cfg=dict(input_columns=['question'], output_column='answer', "
        "test_range='[1:]'), infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template='Q: {question}'), "
        "retriever=dict(type='ZeroRetriever'), inferencer=dict(type='GenInferencer')))]\n",
        encoding="utf-8",
    )
    (base / "demo_gen.py").write_text(
        "from mmengine import read_base\nwith read_base():\n    from .demo_gen_1a2b3c import demo_datasets  # noqa\n",
        encoding="utf-8",
    )
    records = [{"question": "first", "answer": "1"}, {"question": "second", "answer": "2"}]
    task = load_task(base / "demo_gen.py", plugins=pm, trust_code=True, data={"test": records})
    assert [r.text for r in task.render()] == ["Q: second"]


@pytest.mark.parametrize(
    "size, expected",
    [
        ("[2:5]", ["q2", "q3", "q4"]),
        ("[::-3]", ["q9", "q6", "q3", "q0"]),
        ("[-4:]", ["q6", "q7", "q8", "q9"]),
        (3, ["q1", "q5", "q6"]),  # OpenCompass's load_partial_dataset: random.Random(3) shuffles the indices
        (0.5, ["q2", "q3", "q1", "q0", "q8"]),
        (20, [f"q{i}" for i in range(10)]),
        (0, [f"q{i}" for i in range(10)]),
    ],
)
def test_test_range_keeps_what_opencompass_keeps(pm, size, expected):
    config = {
        "reader_cfg": {"input_columns": ["q"], "output_column": "a", "test_range": size},
        "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": "{q}"}},
        "data": {"test": [{"q": f"q{i}", "a": str(i)} for i in range(10)]},
    }
    assert [r.text for r in load_task(config, plugins=pm).render()] == expected


def test_float_range_of_one_or_more_is_an_error(pm):
    config = {
        "reader_cfg": {"input_columns": ["q"], "output_column": "a", "test_range": 2.5},
        "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": "{q}"}},
        "data": {"test": [{"q": f"q{i}", "a": str(i)} for i in range(10)]},
    }
    with pytest.raises(PromptStyleError, match="neither a whole number") as info:
        list(load_task(config, plugins=pm).render())
    assert "test_range" in str(info.value) and "\n" not in str(info.value)


# -- command line --------------------------------------------------------------------


def _golden_args(name):
    records = GOLDEN / "records" / name
    args = [str(GOLDEN / "datasets" / f"{name}.yaml")]
    for path in sorted(records.glob("*.jsonl")):
        args += ["--data", f"{path.stem}={path}"]
    return args


def test_cli_jsonl_gen_and_ppl(capsys):
    meta = str(GOLDEN / "metas" / "internlm2_chat_7b_with_system.yaml")
    assert main(["render", *_golden_args("ceval_ppl_578f8d"), "--meta", meta, "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["mode"] == "ppl" and [c["label"] for c in rows[0]["candidates"]] == ["A", "B", "C", "D"]
    assert {"label", "text", "messages", "dialogue"} <= set(rows[0]["candidates"][0])
    assert (
        main(["render", *_golden_args("ceval_ppl_578f8d"), "--meta", meta, "--mode", "gen", "--format", "jsonl"]) == 0
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["mode"] == "gen" and rows[0]["text"].endswith("<|im_start|>assistant\n")
    assert rows[0]["dialogue"][-1]["section"] == "round"


def test_cli_text_shows_candidates(capsys):
    assert main(["render", *_golden_args("synthetic_int_labels"), "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "--- candidate 0\n" in out and "--- candidate 1\n" in out


def test_cli_missing_role_exits_2_with_one_line(capsys):
    meta = str(GOLDEN / "metas" / "qwen_7b_chat.yaml")
    assert main(["render", *_golden_args("synthetic_system_no_fallback"), "--meta", meta]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("prompt-style: error: ")
    assert "'SYSTEM'" in err and "HUMAN, BOT" in err


def test_cli_python_config_refused_without_trust_code(capsys):
    assert main(["render", str(GOLDEN / "py" / "gsm8k_gen_1d7fe4.py"), "--data", "test=x.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--trust-code" in err


def test_template_engine_compiles_once():
    template = PromptTemplate({"round": [{"role": "HUMAN", "prompt": "{question}</E>"}]}, ice_token="</E>")
    assert template.kind == "dialogue" and template.has_ice_slot()
    assert template.fill({"question": "q"}, "ICE") == (Turn("HUMAN", "qICE", "", None, "round"),)


def test_api_model_gets_few_shot_turns_of_begin_whole(pm):
    """A BOT turn in `begin` (a few-shot answer): OpenCompass's API parser stops there in
    generation mode and fails; prompt-style sends it, as language models show it."""
    config = {
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {
                "type": "PromptTemplate",
                "template": {
                    "begin": [{"role": "HUMAN", "prompt": "Example Q"}, {"role": "BOT", "prompt": "Example A"}],
                    "round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}],
                },
            },
        },
        "data": {"test": [{"q": "Real Q", "a": "Real A"}]},
    }
    meta = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
    result = next(load_task(config, plugins=pm, meta=meta).render())
    assert result.messages == [
        {"role": "user", "content": "Example Q"},
        {"role": "assistant", "content": "Example A"},
        {"role": "user", "content": "Real Q"},
    ]


DEMO_CONFIG = (
    "from opencompass.openicl.icl_prompt_template import PromptTemplate\n"
    "demo_datasets = [dict(abbr='demo', reader_cfg=dict(input_columns=['question'], output_column='answer'), "
    "infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template='{prefix}: {question}'), "
    "retriever=dict(type='ZeroRetriever'), inferencer=dict(type='GenInferencer')))]\n"
)
USER_CONFIG = (
    "from mmengine.config import read_base\n"
    "with read_base():\n"
    "    from opencompass.configs.datasets.demo.demo_gen import demo_datasets\n"
    "datasets = demo_datasets\n"
)


def test_user_config_imports_opencompass_configs_from_the_installed_package(pm, tmp_path, monkeypatch):
    """A config outside OpenCompass's tree, in a folder that happens to be called configs,
    imports opencompass.configs.* from the installed opencompass (found, not imported)."""
    site = tmp_path / "site"
    demo = site / "opencompass" / "configs" / "datasets" / "demo"
    demo.mkdir(parents=True)
    (site / "opencompass" / "__init__.py").write_text("raise ImportError('never imported')\n", encoding="utf-8")
    (demo / "demo_gen.py").write_text(DEMO_CONFIG.replace("{prefix}", "installed"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    user = tmp_path / "work" / "configs"
    user.mkdir(parents=True)
    (user / "eval_mine.py").write_text(USER_CONFIG, encoding="utf-8")
    task = load_task(user / "eval_mine.py", plugins=pm, trust_code=True, data={"test": QA})
    assert next(task.render()).text == "installed: 1+1=?"
    # A copy of OpenCompass's tree that holds the config still wins over the installed one.
    copy = tmp_path / "copy" / "configs"
    (copy / "datasets" / "demo").mkdir(parents=True)
    (copy / "datasets" / "demo" / "demo_gen.py").write_text(DEMO_CONFIG.replace("{prefix}", "copy"), encoding="utf-8")
    (copy / "eval_mine.py").write_text(USER_CONFIG, encoding="utf-8")
    task = load_task(copy / "eval_mine.py", plugins=pm, trust_code=True, data={"test": QA})
    assert next(task.render()).text == "copy: 1+1=?"


def test_user_config_importing_opencompass_configs_without_opencompass(pm, tmp_path):
    import importlib.util

    if importlib.util.find_spec("opencompass") is not None:
        pytest.skip("opencompass is installed in this environment")
    user = tmp_path / "configs"
    user.mkdir()
    (user / "eval_mine.py").write_text(USER_CONFIG, encoding="utf-8")
    with pytest.raises(TaskFileError, match="cannot import opencompass.configs.datasets.demo.demo_gen") as info:
        load_task(user / "eval_mine.py", plugins=pm, trust_code=True, data={"test": QA})
    assert "opencompass is not installed" in str(info.value) and "pip install opencompass" in str(info.value)
    assert info.value.line == 3
