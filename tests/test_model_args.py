"""lm-evaluation-harness's model-args form: ``--model-args chat_template=chatml,...``."""

from __future__ import annotations

import json
import warnings

import pytest

import prompt_style
from prompt_style import parse_model_args
from prompt_style.cli import main
from prompt_style.meta.model_args import apply_model_args

RECORDS = [{"q": "2 + 2?", "choices": ["3", "4"], "a": 1}]
MCQ = {"doc_to_text": "q", "doc_to_choice": "{{choices}}", "doc_to_target": "a", "template": "mcq"}


def test_values_read_as_lm_eval_reads_them():
    parsed = parse_model_args("chat_template=chatml,a=True,b=false,c=None,d=3,e=-2,f=0.5,g='007',h=x=y,i= spaced ")
    assert parsed.meta == "chatml"
    assert parsed.meta_options == {
        "a": True,
        "b": False,
        "c": None,
        "d": 3,
        "e": -2,
        "f": 0.5,
        "g": "007",
        "h": "x=y",
        "i": "spaced",
    }


def test_model_loading_keys_are_ignored():
    parsed = parse_model_args("dtype=bfloat16,batch_size=8,trust_remote_code=True,add_generation_prompt=false")
    assert parsed.meta is None
    assert parsed.ignored == ("dtype", "batch_size", "trust_remote_code")
    assert parsed.meta_options == {"add_generation_prompt": False}


def test_the_models_own_template(tmp_path):
    assert parse_model_args("chat_template=true").meta == "hf"
    assert parse_model_args("chat_template=auto").meta == "hf"
    parsed = parse_model_args("chat_template=templates/x.jinja")
    assert (parsed.meta, parsed.meta_options) == ("hf", {"template": "templates/x.jinja"})
    model = tmp_path / "model"
    model.mkdir()
    parsed = parse_model_args(f"pretrained={model},chat_template=hf")
    assert parsed.meta_options == {"tokenizer": str(model), "template": str(model)}
    parsed = parse_model_args(f"pretrained={model},chat_template=chatml,tokenizer=other")
    assert parsed.meta_options == {"tokenizer": "other"}
    assert parse_model_args("chat_template=false").meta is None


def test_token_options():
    parsed = parse_model_args("tokenizer=t.json,add_bos_token=false,prefix_token_id=2")
    assert parsed.meta_options == {"tokenizer": "t.json", "add_special_tokens": False, "prefix_token_id": 2}
    with pytest.warns(UserWarning, match="pretrained=org/model is not a local folder"):
        parsed = parse_model_args("pretrained=org/model,add_bos_token=true")
    assert parsed.meta_options == {}
    assert parsed.ignored == ("add_bos_token",)


def test_a_mapping_is_accepted():
    assert parse_model_args({"chat_template": "chatml", "add_generation_prompt": False}).meta == "chatml"


@pytest.mark.parametrize("text", ["chat_template", "=chatml", "a=1,,b"])
def test_malformed(text):
    if text == "a=1,,b":
        with pytest.raises(prompt_style.OptionError, match="'b' is not KEY=VALUE"):
            parse_model_args(text)
    else:
        with pytest.raises(prompt_style.OptionError, match="is not KEY=VALUE"):
            parse_model_args(text)


def test_bad_chat_template_value():
    with pytest.raises(prompt_style.OptionError, match="chat_template=3 is not a meta template name"):
        parse_model_args("chat_template=3")


def test_merging_with_meta_and_meta_options():
    assert apply_model_args("chat_template=chatml", "plain", None) == ("chatml", {})
    assert apply_model_args("chat_template=chatml", "chatml", {"a": 1}) == ("chatml", {"a": 1})
    assert apply_model_args("add_generation_prompt=false", "chatml", None) == (
        "chatml",
        {"add_generation_prompt": False},
    )
    with pytest.raises(prompt_style.OptionError, match="the meta template is given twice"):
        apply_model_args("chat_template=chatml", "messages", None)
    with pytest.raises(prompt_style.OptionError, match="'add_generation_prompt' is given twice"):
        apply_model_args("add_generation_prompt=false", "chatml", {"add_generation_prompt": True})
    with pytest.warns(UserWarning, match="ignored .* device"):
        apply_model_args("device=cuda", "plain", None)


def test_load_task_with_model_args(pm_all):
    task = prompt_style.load_task(
        {"data": {"test": RECORDS}, **MCQ},
        plugins=pm_all,
        model_args="chat_template=chatml,add_generation_prompt=False",
    )
    [out] = task.render()
    assert out.text == "<|im_start|>user\n2 + 2?\nA. 3\nB. 4\nAnswer:<|im_end|>\n"
    assert task.plugins["apply_meta_template"]["name"] == "chatml"


def test_an_unknown_option_is_the_meta_templates_error(pm_all):
    with pytest.raises(prompt_style.OptionError, match="meta template 'chatml' has no option 'add_generation_promt'"):
        prompt_style.load_task(
            {"data": {"test": RECORDS}, **MCQ}, plugins=pm_all, model_args="chat_template=chatml,add_generation_promt=0"
        )


def test_cli_model_args(tmp_path, capsys):
    (tmp_path / "test.jsonl").write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    task = tmp_path / "task.yaml"
    task.write_text(
        "task: t\ndata: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: '{{choices}}'\ndoc_to_target: a\ntemplate: mcq\n",
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["render", str(task), "--format", "jsonl", "--model-args", "chat_template=chatml,dtype=auto"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["text"].startswith("<|im_start|>user\n")
    assert main(["render", str(task), "--meta", "messages", "--model-args", "chat_template=chatml"]) == 2
    assert "the meta template is given twice" in capsys.readouterr().err
    # --model_args, as lm-evaluation-harness spells it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["render", str(task), "--format", "jsonl", "--model_args", "chat_template=chatml,dtype=auto"]) == 0
    assert json.loads(capsys.readouterr().out) == out


def test_another_default_meta_template():
    assert apply_model_args("chat_template=chatml", "hf", None, default="hf") == ("chatml", {})
    with pytest.raises(prompt_style.OptionError, match="given twice"):
        apply_model_args("chat_template=chatml", "hf", None)
