"""Tests of the ``hf`` meta template: options, template sources, rendering tasks
and conversations, system policies, the clock, generation spans, errors, the
sandbox, the ``prompt-style chat`` command and pickling.

Each test uses a fresh plugin manager where it goes through plugins. Templates
are the corpus copy in tests/golden/transformers_chat/corpus, the goldens'
feature templates and model folders, and small ones written here.
"""

from __future__ import annotations

import json
import pickle
import warnings
from datetime import datetime
from importlib import metadata

import pytest
from _hf_test_support import CORPUS_COPY, GOLDEN
from prompt_style_hf.meta import HFChat, hf_meta

import prompt_style
from prompt_style import ChatTemplateError, OptionError, Turn
from prompt_style.cli import main

DIST = "prompt-style-hf"
TEMPLATES = CORPUS_COPY / "templates"
LLAMA3 = TEMPLATES / "chujiezheng-llama-3-instruct.jinja"
GEMMA2 = TEMPLATES / "llamacpp-google-gemma-2-2b-it.jinja"
PHI3_MINI = TEMPLATES / "llamacpp-test-phi-3-mini.jinja"
LLAMA31 = TEMPLATES / "hfjs-meta-llama-llama-3.1-8b-instruct.jinja"
GENERATION = GOLDEN / "templates" / "feature-generation.jinja"
L3 = {"template": str(LLAMA3), "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}

CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
L3_CHAT = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
)
L3_GEN = "<|start_header_id|>assistant<|end_header_id|>\n\n"


@pytest.fixture
def manager():
    return prompt_style.create_plugin_manager(environ={})


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- discovery ----------------------------------------------------------------------


def test_discovered_through_its_entry_point(manager):
    provider = manager.resolve("apply_meta_template", "hf")
    assert provider.describe()["distribution"] == DIST
    assert provider.describe()["version"] == metadata.version(DIST)
    meta = provider.factory(options=dict(L3))
    assert isinstance(meta, prompt_style.MetaTemplate) and meta.chat is True


# -- options and template sources -----------------------------------------------------


def test_template_is_required():
    with pytest.raises(OptionError, match="needs template=PATH") as caught:
        hf_meta({})
    assert caught.value.key == "meta.template"


def test_missing_template_file(tmp_path):
    with pytest.raises(OptionError, match="chat template not found"):
        hf_meta({"template": str(tmp_path / "nope.jinja")})


def test_folder_without_a_template(tmp_path):
    with pytest.raises(OptionError, match="no chat template in this folder") as caught:
        hf_meta({"template": str(tmp_path)})
    assert "chat_template.jinja" in caught.value.hint


def test_config_without_a_template(tmp_path):
    path = write(tmp_path, "tokenizer_config.json", json.dumps({"bos_token": "<s>"}))
    with pytest.raises(OptionError, match="has no 'chat_template'"):
        hf_meta({"template": str(path)})


def test_bad_json_config(tmp_path):
    path = write(tmp_path, "tokenizer_config.json", "{not json")
    with pytest.raises(OptionError, match="not valid JSON"):
        hf_meta({"template": str(path)})


def test_tokenizer_config_file_and_its_special_tokens_map(tmp_path):
    config = {
        "chat_template": "{{ bos_token }}|{{ eos_token }}|{{ messages[0].content }}",
        "bos_token": "<s>",
        "eos_token": "</s>",
    }
    path = write(tmp_path, "tokenizer_config.json", json.dumps(config))
    write(tmp_path, "special_tokens_map.json", json.dumps({"eos_token": {"content": "<|end|>"}}))
    assert hf_meta({"template": str(path)}).apply_messages([{"role": "user", "content": "x"}]).text == "<s>|<|end|>|x"


def test_jinja_file_in_a_model_folder_takes_its_tokens():
    folder = GOLDEN / "models" / "jinja-over-config"
    text = hf_meta({"template": str(folder / "chat_template.jinja")}).apply_messages(CHAT).text
    assert text.startswith("<s>[chat_template.jinja] eos=</s> unk=<unk>")


def test_processor_chat_template_json(tmp_path):
    write(tmp_path, "chat_template.json", json.dumps({"chat_template": "[{{ messages | length }}]"}))
    assert hf_meta({"template": str(tmp_path)}).apply_messages(CHAT).text == "[2]"


def test_named_template_and_unknown_name():
    folder = str(GOLDEN / "models" / "config-named")
    named = hf_meta({"template": folder, "chat_template": "tool_use"})
    assert named.apply_messages(CHAT).text.startswith("<s>[tool_use]")
    with pytest.raises(OptionError, match="no chat template named 'rag'") as caught:
        hf_meta({"template": folder, "chat_template": "rag"})
    assert caught.value.hint == "its templates are: default, tool_use"


def test_tool_use_template_is_chosen_when_tools_are_given():
    meta = hf_meta({"template": str(GOLDEN / "models" / "config-named")})
    assert "[default]" in meta.apply_messages(CHAT).text
    assert "[tool_use]" in meta.apply_messages(CHAT, tools=[{"type": "function", "function": {"name": "f"}}]).text


def test_chat_template_given_as_source():
    meta = hf_meta({"chat_template": "{% for m in messages %}<{{ m.role }}>{% endfor %}"})
    assert meta.apply_messages(CHAT).text == "<system><user>"


def test_special_token_options_must_be_strings():
    with pytest.raises(OptionError, match="'bos_token' must be a string") as caught:
        hf_meta({**L3, "bos_token": ["BOS"]})
    assert "quote it" in caught.value.hint


def test_a_null_special_token_means_none():
    folder = str(GOLDEN / "models" / "jinja-over-config")
    assert (
        hf_meta({"template": folder, "unk_token": None})
        .apply_messages(CHAT)
        .text.startswith("<s>[chat_template.jinja] eos=</s> unk=- pad=-")
    )
    meta = hf_meta({"chat_template": "{{ bos_token is defined }}", "bos_token": None})
    assert meta.apply_messages(CHAT).text == "False"


def test_messages_cannot_be_an_option():
    with pytest.raises(OptionError, match="passed by the renderer"):
        hf_meta({**L3, "messages": []})


def test_bad_option_values():
    with pytest.raises(OptionError, match="system_policy"):
        hf_meta({**L3, "system_policy": "ignore"})
    with pytest.raises(OptionError, match="option 'now'"):
        hf_meta({**L3, "now": "yesterday"})
    with pytest.raises(OptionError, match="add_generation_prompt"):
        hf_meta({**L3, "add_generation_prompt": "yes"})


def test_template_syntax_error_is_reported_at_load(tmp_path):
    path = write(tmp_path, "bad.jinja", "{% for m in messages %}\n{{ m.role }\n{% endfor %}")
    with pytest.raises(ChatTemplateError, match="does not compile") as caught:
        hf_meta({"template": str(path)})
    assert caught.value.file == str(path) and caught.value.line == 2


# -- conversations: transformers' defaults ------------------------------------------------


def test_conversation_defaults_are_transformers_defaults():
    meta = hf_meta(L3)
    assert meta.apply_messages(CHAT).text == L3_CHAT
    assert meta.apply_messages(CHAT, add_generation_prompt=True).text == L3_CHAT + L3_GEN
    assert hf_meta({**L3, "add_generation_prompt": True}).apply_messages(CHAT).text == L3_CHAT + L3_GEN


def test_generation_flags_given_as_keywords_take_the_path_their_values_need():
    """add_generation_prompt and continue_final_message are keywords of their own: bools
    (or a key to continue) take the one-call path, anything else (None, 1) the general
    one, which reads them as transformers does; with other variables, the general path."""
    meta = hf_meta(L3)
    assert meta._plain is not None
    chat = [*CHAT, {"role": "assistant", "content": "Hello, I am "}]
    assert meta.apply_messages(CHAT, add_generation_prompt=False).text == L3_CHAT
    assert meta.apply_messages(CHAT, add_generation_prompt=None).text == L3_CHAT
    assert meta.apply_messages(CHAT, add_generation_prompt=1).text == L3_CHAT + L3_GEN
    assert meta.apply_messages(CHAT, add_generation_prompt=True, date_string="x").text.endswith(L3_GEN)
    continued = meta.apply_messages(chat, continue_final_message=True).text
    assert continued.endswith("Hello, I am")
    assert meta.apply_messages(chat, continue_final_message="content").text == continued
    assert meta.apply_messages(chat, continue_final_message=1, add_generation_prompt=False).text == continued
    assert meta.apply_messages(chat, continue_final_message=None).text.endswith("Hello, I am<|eot_id|>")
    with pytest.raises(ChatTemplateError, match="not compatible"):
        meta.apply_messages(CHAT, continue_final_message=1, add_generation_prompt=1)


def test_continue_final_message():
    chat = [*CHAT, {"role": "assistant", "content": "Hello, I am "}]
    text = hf_meta(L3).apply_messages(chat, continue_final_message=True).text
    assert text.endswith("<|start_header_id|>assistant<|end_header_id|>\n\nHello, I am")


def test_continue_final_message_and_generation_prompt_conflict():
    with pytest.raises(ChatTemplateError, match="not compatible"):
        hf_meta(L3).apply_messages(CHAT, continue_final_message=True, add_generation_prompt=True)


def test_extra_options_are_template_variables():
    meta = hf_meta({"template": str(LLAMA31), "date_string": "01 Jan 2030"})
    assert "Today Date: 01 Jan 2030" in meta.apply_messages(CHAT).text
    assert "Today Date: 02 Feb 2031" in meta.apply_messages(CHAT, date_string="02 Feb 2031").text


def test_empty_conversation_is_transformers_error():
    with pytest.raises(ChatTemplateError, match="Cannot apply chat template to an empty conversation"):
        hf_meta(L3).apply_messages([])


def test_messages_are_not_changed():
    chat = [{"role": "user", "content": "Hi", "name": None}, {"role": "assistant", "content": "Hel"}]
    before = json.dumps(chat)
    hf_meta(L3).apply_messages(chat, continue_final_message=True)
    assert json.dumps(chat) == before


def test_tools_given_as_python_functions():
    import importlib.util

    spec = importlib.util.spec_from_file_location("hf_tools_for_meta", GOLDEN / "tool_functions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    meta = hf_meta({"chat_template": "{% for t in tools %}{{ t | tojson }}{% endfor %}"})
    text = meta.apply_messages(CHAT, tools=[module.get_weather])
    assert json.loads(text.text)["function"]["description"] == "Get the weather for a city"


# -- task dialogues -----------------------------------------------------------------------


def test_dialogue_ends_ready_for_the_answer():
    meta = hf_meta(L3)
    dialogue = (Turn("SYSTEM", "Be brief."), Turn("HUMAN", "Hi"))
    made = meta.apply(dialogue)
    assert made.text == L3_CHAT + L3_GEN
    assert made.messages == CHAT


def test_dialogue_ending_with_assistant_turn_is_continued():
    made = hf_meta(L3).apply((Turn("user", "Hi"), Turn("assistant", "Answer:")))
    assert made.text.endswith("<|start_header_id|>assistant<|end_header_id|>\n\nAnswer:")


def test_dialogue_generation_prompt_can_be_switched_off():
    made = hf_meta({**L3, "add_generation_prompt": False}).apply((Turn("user", "Hi"),))
    assert made.text.endswith("Hi<|eot_id|>")


def test_task_renders_with_a_models_template(manager):
    task = {
        "task": "tiny",
        "doc_to_text": "question",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "answer",
        "template": "mcq",
    }
    record = {"question": "What is 2 + 2?", "choices": ["3", "4"], "answer": 1}
    [out] = prompt_style.render_records([record], plugins=manager, meta="hf", meta_options=L3, **task)
    assert out.text == (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n"
        "What is 2 + 2?\nA. 3\nB. 4\nAnswer:<|eot_id|>" + L3_GEN
    )
    # lm-evaluation-harness's chat rules: continuations carry no target delimiter.
    assert out.continuations == ("A", "B")
    assert out.to_json()["text"] == out.text


def test_template_error_names_the_record(manager):
    task = {"task": "t", "doc_to_text": "q", "template": "passthrough", "description": "System text."}
    with pytest.raises(ChatTemplateError) as caught:
        prompt_style.render_records(
            [{"q": "Hi"}], plugins=manager, meta="hf", meta_options={"template": str(GEMMA2)}, **task
        )
    err = caught.value
    assert err.template_message == "System role not supported"
    assert err.index == 0 and err.file == str(GEMMA2) and err.line == 1
    assert "system_policy=merge" in err.hint


def test_a_special_token_nothing_names_gets_a_hint():
    """transformers' message, and a hint saying how to give the token (not the system-turn hint)."""
    meta = hf_meta({"chat_template": "{{ messages[0]['content'] + eos_token }}"})
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}]
    with pytest.raises(ChatTemplateError) as caught:
        meta.apply_messages(messages)
    err = caught.value
    assert err.template_message == "'eos_token' is undefined"
    assert "--meta-option eos_token=" in err.hint and "system_policy" not in err.hint
    assert meta.apply_messages(messages, eos_token="</s>").text == "S</s>"


# -- system policies ----------------------------------------------------------------------------


def test_system_policy_error_is_transformers_behaviour():
    with pytest.raises(ChatTemplateError, match="System role not supported"):
        hf_meta({"template": str(GEMMA2)}).apply_messages(CHAT)


def test_system_policy_merge_into_the_first_user_turn():
    meta = hf_meta({"template": str(GEMMA2), "bos_token": "<bos>", "system_policy": "merge"})
    assert meta.apply_messages(CHAT).text == "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"


def test_system_policy_merge_when_the_template_silently_drops_it():
    # Phi-3-mini's template ignores system turns without raising.
    plain = hf_meta({"template": str(PHI3_MINI), "bos_token": "<s>"}).apply_messages(CHAT).text
    assert "Be brief." not in plain
    merged = hf_meta({"template": str(PHI3_MINI), "bos_token": "<s>", "system_policy": "merge"})
    assert merged.apply_messages(CHAT).text == "<s><|user|>\nBe brief.\n\nHi<|end|>\n<|assistant|>\n"


def test_system_policy_drop_warns_once():
    meta = hf_meta({"template": str(GEMMA2), "bos_token": "<bos>", "system_policy": "drop"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = meta.apply_messages(CHAT).text
        meta.apply_messages(CHAT)
    assert first == "<bos><start_of_turn>user\nHi<end_of_turn>\n"
    assert len(caught) == 1 and "system turns are dropped" in str(caught[0].message)


def test_system_policy_keeps_templates_that_show_system_turns():
    meta = hf_meta({**L3, "system_policy": "merge"})
    assert meta.apply_messages(CHAT).text == L3_CHAT


# -- the clock -------------------------------------------------------------------------------


CLOCK = "{{ strftime_now('%Y-%m-%d %H:%M') }}"


def test_now_fixes_the_clock():
    assert (
        hf_meta({"chat_template": CLOCK, "now": "2025-07-10T12:00:00"}).apply_messages(CHAT).text == "2025-07-10 12:00"
    )
    dated = hf_meta({"chat_template": CLOCK, "now": datetime(2024, 2, 29, 8, 30)})
    assert dated.apply_messages(CHAT).text == "2024-02-29 08:30"


def test_default_clock_is_the_real_clock():
    before = datetime.now().strftime("%Y-%m-%d")
    text = hf_meta({"chat_template": CLOCK}).apply_messages(CHAT).text
    assert text[:10] in {before, datetime.now().strftime("%Y-%m-%d")}


# -- {% generation %} spans ------------------------------------------------------------------------


def test_generation_spans():
    chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    made = hf_meta({"template": str(GENERATION)}).apply_messages(chat)
    assert made.text == "<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n"
    [(start, end)] = made.assistant_spans
    assert made.text[start:end] == "Hello!<|end|>\n"


def test_generation_spans_are_cut_with_the_continued_message():
    chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hel"}]
    made = hf_meta({"template": str(GENERATION)}).apply_messages(chat, continue_final_message=True)
    assert made.text.endswith("Hel")
    [(start, end)] = made.assistant_spans
    assert made.text[start:end] == "Hel"


def test_templates_without_generation_blocks_have_no_spans():
    assert hf_meta(L3).apply_messages(CHAT).assistant_spans is None


def test_spans_reach_the_rendered_prompt(manager):
    task = {"task": "t", "doc_to_text": "q", "template": "passthrough"}
    [out] = prompt_style.render_records(
        [{"q": "Hi"}], plugins=manager, meta="hf", meta_options={"template": str(GENERATION)}, **task
    )
    assert out.assistant_spans == [] and out.to_json()["assistant_spans"] == []


# -- the sandbox ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, message",
    [
        ("{{ ''.__class__.__mro__ }}", "__class__"),
        ("{% set ns = namespace() %}{% set ns._x = 1 %}", "underscore"),
        ("{{ messages.append(1) }}", "append"),
        ("{{ dict.mro() }}", "mro"),
    ],
)
def test_sandbox_refuses(source, message):
    # A ChatTemplateError carrying Jinja's SecurityError, or the sandbox's own typed error.
    with pytest.raises(prompt_style.PromptStyleError) as caught:
        hf_meta({"chat_template": source}).apply_messages(CHAT)
    text = getattr(caught.value, "template_message", caught.value.message)
    assert message in text or "undefined" in text


def test_tojson_does_not_escape_html():
    meta = hf_meta({"chat_template": "{{ messages[0].content | tojson }}"})
    assert meta.apply_messages([{"role": "user", "content": "<b>é&</b>"}]).text == '"<b>é&</b>"'


# -- pickling -------------------------------------------------------------------------------------------


def test_meta_template_pickles():
    meta = hf_meta({**L3, "system_policy": "merge"})
    again = pickle.loads(pickle.dumps(meta))
    assert again.apply_messages(CHAT).text == meta.apply_messages(CHAT).text


def test_the_commonest_call_is_answered_by_the_instance_and_pickles():
    """A meta template whose options allow it answers apply_messages with a function of
    its own (the commonest call in one function); it is made again after pickling, and
    the system-turn hint is added on that path too."""
    meta = hf_meta(L3)
    assert "apply_messages" in vars(meta) and meta.apply_messages.__doc__ == HFChat.apply_messages.__doc__
    again = pickle.loads(pickle.dumps(meta))
    assert "apply_messages" in vars(again) and again.apply_messages is not meta.apply_messages
    for made in (meta, again):
        assert made.apply_messages(CHAT).text == HFChat.apply_messages(made, CHAT).text == L3_CHAT
        result = made.apply_messages(CHAT, add_generation_prompt=True)
        assert (result.text, result.messages, result.token_ids, result.assistant_spans) == (
            L3_CHAT + L3_GEN,
            CHAT,
            None,
            None,
        )
    assert "apply_messages" not in vars(hf_meta({**L3, "system_policy": "merge"}))
    gemma = hf_meta({"template": str(GEMMA2)})
    with pytest.raises(ChatTemplateError) as caught:
        gemma.apply_messages(CHAT)
    assert "system_policy=merge" in caught.value.hint


# -- prompt-style chat with hf ----------------------------------------------------------------------------


def run_chat(capsys, *args):
    code = main(["chat", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_renders_a_models_template(tmp_path, capsys):
    conversation = write(tmp_path, "c.json", json.dumps(CHAT))
    code, out, err = run_chat(
        capsys,
        conversation,
        "--meta-option",
        f"template={LLAMA3}",
        "--meta-option",
        "bos_token=<|begin_of_text|>",
        "--meta-option",
        "add_generation_prompt=true",
    )
    assert (code, out, err) == (0, L3_CHAT + L3_GEN, "")


def test_cli_template_error_is_one_line(tmp_path, capsys):
    conversation = write(tmp_path, "c.json", json.dumps(CHAT))
    code, out, err = run_chat(capsys, conversation, "--meta-option", f"template={GEMMA2}")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("prompt-style: error: ")
    assert "System role not supported" in err


def test_cli_conversation_object_with_tools_and_options(tmp_path, capsys):
    conversation = write(
        tmp_path,
        "c.json",
        json.dumps(
            {
                "messages": [{"role": "user", "content": "Hi"}],
                "tools": [{"type": "function", "function": {"name": "lookup"}}],
                "kwargs": {"add_generation_prompt": True},
                "greeting": "hello",
            }
        ),
    )
    template = "{{ greeting }}|{{ tools[0].function.name }}|{{ add_generation_prompt }}"
    code, out, _ = run_chat(capsys, conversation, "--meta-option", f"chat_template={template}", "--format", "json")
    assert code == 0
    line = json.loads(out)
    assert {k: line[k] for k in ("text", "token_ids")} == {"text": "hello|lookup|True", "token_ids": None}


def test_cli_the_corpus_way(tmp_path, capsys):
    """Every corpus conversation through the command gives the corpus string."""
    expected = json.loads((CORPUS_COPY / "expected.json").read_text(encoding="utf-8"))
    name = "chujiezheng-llama-2-chat"
    for conv_name, conv in expected["meta"]["conversations"].items():
        path = write(tmp_path, f"{conv_name}.json", json.dumps(conv))
        code, out, _ = run_chat(
            capsys,
            path,
            "--meta-option",
            f"template={TEMPLATES / (name + '.jinja')}",
            "--meta-option",
            "bos_token=<s>",
            "--meta-option",
            "eos_token=</s>",
        )
        assert (code, out) == (0, expected["results"][name]["renders"][conv_name]["text"])


def test_api_render_chat(manager):
    made = prompt_style.render_chat(CHAT, meta="hf", meta_options=L3, plugins=manager, add_generation_prompt=True)
    assert made.text == L3_CHAT + L3_GEN
    built = prompt_style.chat_meta("hf", L3, plugins=manager)
    assert isinstance(built, HFChat)
    assert prompt_style.render_chat(CHAT, meta=built).text == L3_CHAT


def test_sanitize_control_tokens_is_refused_never_ignored(tmp_path):
    """transformers encodes special-token text in contents as text with
    sanitize_control_tokens=True, and only when it tokenizes (tokenize=False raises);
    hf does neither, so it refuses the option (false, the default, is accepted)."""
    with pytest.raises(OptionError, match="sanitize_control_tokens=true is not supported") as info:
        hf_meta({**L3, "sanitize_control_tokens": True})
    assert info.value.key == "sanitize_control_tokens" and "requires `tokenize=True`" in str(info.value)
    meta = hf_meta({**L3, "sanitize_control_tokens": False})
    assert meta.apply_messages(CHAT).text == L3_CHAT
    with pytest.raises(OptionError, match="not supported"):
        meta.apply_messages(CHAT, sanitize_control_tokens=True)
    with pytest.raises(OptionError, match="must be true or false"):
        hf_meta({**L3, "sanitize_control_tokens": "yes"})
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps({"messages": CHAT, "kwargs": {"sanitize_control_tokens": True}}))
    assert main(["chat", str(conversation), "--meta-option", f"template={LLAMA3}"]) == 2


@pytest.mark.parametrize(
    "rendered, final, expected",
    [
        ("<u>Hi, I amCONTINUE_FINAL_MESSAGE_TAG </u>", "Hi, I am", "<u>Hi, I am"),
        # the template trimmed the tag's space (and the message's)
        ("<u>Hi, I am CONTINUE_FINAL_MESSAGE_TAG</u>", "Hi, I am ", "<u>Hi, I am"),
        # the message is elsewhere than before the tag (transformers asks only that it is there)
        ("Hi!<u>hiCONTINUE_FINAL_MESSAGE_TAG </u>", "Hi!", "Hi!<u>hi"),
        # the message is longer than the text before the tag
        ("aCONTINUE_FINAL_MESSAGE_TAG bbbbbbbbbbbbbbbbbbbbbbb", "bbbbbbbbbbbbbbbbbbbbbbb", "a"),
        # the last tag is the one cut at
        ("xCONTINUE_FINAL_MESSAGE_TAG yCONTINUE_FINAL_MESSAGE_TAG z", "y", "xCONTINUE_FINAL_MESSAGE_TAG y"),
        ("<u>CONTINUE_FINAL_MESSAGE_TAG </u>", "", "<u>"),
    ],
)
def test_cut_at_tag_cuts_where_transformers_does(rendered, final, expected):
    from prompt_style_hf.conversation import cut_at_tag

    text, at = cut_at_tag(rendered, final)
    assert text == expected and at == len(expected)


@pytest.mark.parametrize(
    "rendered, final",
    [("<u>Hi</u>", "Hi"), ("<u>HeyCONTINUE_FINAL_MESSAGE_TAG </u>", "Hi"), ("CONTINUE_FINAL_MESSAGE_TAG ", "Hi")],
)
def test_cut_at_tag_refuses_a_text_without_the_message_or_the_tag(rendered, final):
    from prompt_style_hf.conversation import cut_at_tag

    with pytest.raises(ValueError, match="the final message does not appear in the chat"):
        cut_at_tag(rendered, final)
