"""``prompt-style chat`` and ``prompt_style.render_chat``: one conversation through
any meta template (the core's ``plain`` and ``messages``, ``chatml``); the
Hugging Face ``hf`` meta template has its own tests in plugins/hf."""

from __future__ import annotations

import json

import pytest

import prompt_style
from prompt_style import DataError, StyleError
from prompt_style.cli import main

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi ü"}]
# A conversation renders as transformers renders it: no generation prompt unless asked.
CHATML = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi ü<|im_end|>\n"
GENERATE = "<|im_start|>assistant\n"


def run(capsys, *args):
    code = main(["chat", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path, data, name="conversation.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_text_is_exactly_the_rendered_string(tmp_path, capsys):
    assert run(capsys, write(tmp_path, CHAT), "--meta", "chatml") == (0, CHATML, "")


def test_json_has_text_and_token_ids(tmp_path, capsys):
    code, out, _ = run(capsys, write(tmp_path, CHAT), "--meta", "chatml", "--format", "json")
    line = json.loads(out)
    assert code == 0 and {k: line[k] for k in ("text", "token_ids")} == {"text": CHATML, "token_ids": None}
    assert list(line)[:2] == ["text", "token_ids"]  # as before provenance was added


def test_meta_options_and_file_options(tmp_path, capsys):
    conversation = write(tmp_path, {"messages": CHAT, "add_generation_prompt": True})
    code, out, _ = run(capsys, conversation, "--meta", "chatml")
    assert out == CHATML + GENERATE
    # the command line wins over the file
    code, out, _ = run(capsys, conversation, "--meta", "chatml", "--meta-option", "add_generation_prompt=false")
    assert out == CHATML


# The ChatML example of lm-evaluation-harness's chat-template proposal (its "<|im_start>system" typo fixed).
PROPOSAL_CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Can you give me some lorem ipsum?"},
    {"role": "assistant", "content": "Sure, here you go!\n\nLorem ipsum dolor sit amet [...]"},
    {"role": "user", "content": "Thanks! Some more please, it's not enough."},
]
PROPOSAL_CHATML = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nCan you give me some lorem ipsum?<|im_end|>\n"
    "<|im_start|>assistant\nSure, here you go!\n\nLorem ipsum dolor sit amet [...]<|im_end|>\n"
    "<|im_start|>user\nThanks! Some more please, it's not enough.<|im_end|>\n"
)


def test_chatml_conversation_matches_the_proposals_example(tmp_path, capsys):
    assert run(capsys, write(tmp_path, PROPOSAL_CHAT), "--meta", "chatml") == (0, PROPOSAL_CHATML, "")
    # Ending in an assistant turn: that turn is closed like every other (a transcript).
    code, out, _ = run(capsys, write(tmp_path, PROPOSAL_CHAT[:3]), "--meta", "chatml")
    assert out == PROPOSAL_CHATML.rsplit("<|im_start|>user", 1)[0]
    # continue_final_message leaves it open; with add_generation_prompt a new turn follows.
    conversation = write(tmp_path, {"messages": PROPOSAL_CHAT[:3], "continue_final_message": True})
    assert run(capsys, conversation, "--meta", "chatml")[1].endswith("Lorem ipsum dolor sit amet [...]")
    conversation = write(tmp_path, {"messages": PROPOSAL_CHAT[:3], "add_generation_prompt": True})
    assert run(capsys, conversation, "--meta", "chatml")[1].endswith("[...]<|im_end|>\n<|im_start|>assistant\n")
    both = write(tmp_path, {"messages": CHAT, "add_generation_prompt": True, "continue_final_message": True})
    code, _, err = run(capsys, both, "--meta", "chatml")
    assert code == 2 and "cannot both be true" in err


def test_messages_only_meta_prints_the_messages(tmp_path, capsys):
    code, out, _ = run(capsys, write(tmp_path, CHAT), "--meta", "messages")
    assert code == 0 and json.loads(out) == CHAT
    code, out, _ = run(capsys, write(tmp_path, CHAT), "--meta", "messages", "--format", "json")
    line = json.loads(out)
    assert {k: line[k] for k in ("text", "token_ids", "messages")} == {
        "text": None,
        "token_ids": None,
        "messages": CHAT,
    }


def test_plain_meta(tmp_path, capsys):
    assert run(capsys, write(tmp_path, CHAT), "--meta", "plain")[1] == "Be brief.Hi ü"


@pytest.mark.parametrize(
    "data, message",
    [
        ("{not json", "not valid JSON"),
        ('"a string"', "a conversation is a list of messages or an object"),
        ('{"tools": []}', "no 'messages' list"),
        ('{"messages": [], "kwargs": 3}', "'kwargs' must be an object"),
    ],
)
def test_bad_conversation_files(tmp_path, capsys, data, message):
    code, out, err = run(capsys, write(tmp_path, data), "--meta", "chatml")
    assert code == 2 and out == ""
    assert err.startswith("prompt-style: error: ") and message in err and err.count("\n") == 1


def test_missing_conversation_file(tmp_path, capsys):
    code, _, err = run(capsys, tmp_path / "nope.json", "--meta", "chatml")
    assert code == 2 and "conversation file not found" in err


def test_meta_without_messages_support_refuses_tools(tmp_path, capsys):
    conversation = write(tmp_path, {"messages": CHAT, "tools": [{"type": "function"}]})
    code, _, err = run(capsys, conversation, "--meta", "chatml")
    assert code == 2 and "cannot show tools" in err and "--meta hf" in err


def test_message_keys_a_meta_cannot_show(pm_all):
    chat = [{"role": "assistant", "content": "x", "tool_calls": [{"id": "1"}]}]
    with pytest.raises(StyleError, match="'tool_calls'"):
        prompt_style.render_chat(chat, meta="chatml", plugins=pm_all)
    # None values are absent keys, as in transformers
    made = prompt_style.render_chat([{"role": "user", "content": "x", "name": None}], meta="chatml", plugins=pm_all)
    assert made.text.startswith("<|im_start|>user\nx")


def test_render_chat_with_a_built_meta(pm):
    meta = prompt_style.chat_meta("messages", plugins=pm)
    assert prompt_style.render_chat(CHAT, meta=meta).messages == CHAT
    with pytest.raises(StyleError, match="no per-conversation variables"):
        prompt_style.render_chat(CHAT, meta=meta, add_generation_prompt=True)


def test_read_conversation_forms(tmp_path):
    assert prompt_style.read_conversation(CHAT).messages == CHAT
    conv = prompt_style.read_conversation(
        {"messages": CHAT, "documents": [{"title": "t", "text": "x"}], "kwargs": {"a": 1}, "b": 2}
    )
    assert conv.documents == [{"title": "t", "text": "x"}] and conv.options == {"a": 1, "b": 2}
    with pytest.raises(DataError, match="'tools' must be a list"):
        prompt_style.read_conversation({"messages": CHAT, "tools": {"x": 1}})
    assert prompt_style.read_conversation(write(tmp_path, CHAT)).messages == CHAT


def test_model_args_choose_the_meta_template(tmp_path, capsys):
    code, out, _ = run(capsys, write(tmp_path, CHAT), "--model-args", "chat_template=chatml,dtype=float16")
    assert (code, out) == (0, CHATML)


def test_model_args_in_the_api(pm_all):
    made = prompt_style.render_chat(CHAT, model_args="chat_template=chatml,add_generation_prompt=false", plugins=pm_all)
    assert made.text == CHATML.removesuffix("<|im_start|>assistant\n")
