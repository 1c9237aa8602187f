"""Tests of prompt-style-chat-formats: every chat format by name is byte-identical
to the published template it bundles, on the corpus's conversations and on the
golden conversations (tests/golden/transformers_chat, made with transformers).

The bundled templates are checked against the chat-template corpus (the live
corpus directory when this checkout sits next to it, else the copy committed in
tests/golden/transformers_chat/corpus), and the expected strings are the ones
transformers rendered for those templates.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pytest
from prompt_style_chat_formats import ALIASES, FAMILIES, FORMATS, chat_format, template_text

import prompt_style
from prompt_style import ChatTemplateError, OptionError, Turn

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden" / "transformers_chat"
COPY = GOLDEN / "corpus"
NOW = "2025-07-10T12:00:00"


def live_corpus() -> Path | None:
    given = os.environ.get("PROMPT_STYLE_CHAT_CORPUS")
    if given:
        return Path(given)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "corpora" / "chat_templates"
        if (candidate / "expected.json").is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def corpus_name(name: str) -> str:
    return FORMATS[name].file.removesuffix(".jinja")


def render(name: str, conversation: dict, **options):
    meta = chat_format(name, {"now": NOW, **options})
    kwargs = dict(conversation.get("kwargs", {}))
    try:
        text = meta.apply_messages(
            conversation["messages"], tools=conversation.get("tools"), documents=conversation.get("documents"), **kwargs
        ).text
    except ChatTemplateError as exc:
        return {"ok": False, "error": exc.template_message}
    return {"ok": True, "text": text}


CONVERSATION_NAMES = set(load(COPY / "expected.json")["meta"]["conversations"]) | set(
    load(GOLDEN / "conversations.json")["conversations"]
)


def cases():
    corpus = load(COPY / "expected.json")
    golden = load(GOLDEN / "expected.json")
    convs = {**corpus["meta"]["conversations"], **load(GOLDEN / "conversations.json")["conversations"]}
    out = []
    for name in sorted(FORMATS):
        template = corpus_name(name)
        expected = {**corpus["results"][template]["renders"], **golden["results"][template]["renders"]}
        out.append(pytest.param(name, [(conv, convs[conv], expected[conv]) for conv in sorted(expected)], id=name))
    return out


@pytest.mark.parametrize("name, checks", cases())
def test_format_is_byte_identical_to_its_template(name, checks):
    wrong = []
    for conv, conversation, expected in checks:
        ours = render(name, conversation)
        ok = ours["ok"] == expected["ok"] and (
            ours["text"] == expected["text"] if ours["ok"] else ours["error"].startswith(expected["error"])
        )
        if not ok:
            wrong.append(f"{conv}:\n  ours: {ours!r}\n  transformers: {expected!r}")
    assert not wrong, f"{name}: " + "\n".join(wrong)
    assert len(checks) == len(CONVERSATION_NAMES)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_bundled_template_is_the_published_one(name):
    for corpus in filter(None, (live_corpus(), COPY)):
        path = corpus / "templates" / FORMATS[name].file
        if path.is_file():
            assert template_text(name) == path.read_text(encoding="utf-8")
    info = load(COPY / "index.json")[corpus_name(name)]
    for token in ("bos_token", "eos_token"):
        # the corpus's tokens, or the model's own where the template does not use them
        if token in template_text(name):
            assert getattr(FORMATS[name], token) == info[token]


def test_every_family_of_the_issue_is_there():
    for family in ("llama-2", "llama-3", "mistral", "zephyr", "vicuna", "alpaca", "gemma", "phi-3", "qwen"):
        assert family in FORMATS
    assert {"v1", "v3", "v7"} <= set(FAMILIES["mistral"])


@pytest.mark.parametrize("variant", ["v1", "v3", "v3-tekken", "v7"])
def test_variant_by_option_by_name_and_by_alias(variant):
    chat = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    by_name = chat_format(f"mistral::{variant}", {}).apply_messages(chat).text
    assert chat_format("mistral", {"variant": variant}).apply_messages(chat).text == by_name
    assert chat_format(f"mistral-{variant}", {}).apply_messages(chat).text == by_name


def test_mistral_spacing_variants():
    chat = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    assert (
        chat_format("mistral::v1", {}).apply_messages(chat).text == "<s> [INST] Hi [/INST] Hello</s> [INST] Bye [/INST]"
    )
    assert (
        chat_format("mistral::v3", {}).apply_messages(chat).text
        == "<s> [INST] Hi [/INST] Hello </s> [INST] Bye [/INST]"
    )
    assert (
        chat_format("mistral::v3-tekken", {}).apply_messages(chat).text == "<s>[INST]Hi[/INST]Hello</s>[INST]Bye[/INST]"
    )
    assert chat_format("mistral::v7", {}).apply_messages(chat).text == "<s>[INST] Hi[/INST] Hello</s>[INST] Bye[/INST]"


def test_unknown_variant_and_template_option():
    with pytest.raises(OptionError, match="no variant 'v9'") as caught:
        chat_format("mistral", {"variant": "v9"})
    assert "v1" in caught.value.hint
    with pytest.raises(OptionError, match="has no variants|no variant"):
        chat_format("vicuna", {"variant": "x"})
    with pytest.raises(OptionError, match="use --meta hf"):
        chat_format("llama-3", {"template": "x.jinja"})


def test_formats_take_hf_options():
    chat = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert chat_format("gemma::2", {"system_policy": "merge"}).apply_messages(chat).text == (
        "<bos><start_of_turn>user\nS\n\nU<end_of_turn>\n"
    )
    assert (
        "Today Date: 03 Mar 2033"
        in chat_format("llama-3::3.1", {"date_string": "03 Mar 2033"}).apply_messages(chat).text
    )


def test_names_are_discovered_and_render_a_task():
    manager = prompt_style.create_plugin_manager(environ={})
    names = set(FORMATS) | set(ALIASES)
    [row] = [r for r in manager.describe() if r["name"] == "chat-formats"]
    assert set(row["hooks"]["apply_meta_template"]) == names
    assert (
        row["distribution"]
        == "prompt-style-chat-formats"
        == manager.resolve("apply_meta_template", "llama-3").describe()["distribution"]
    )
    assert metadata.version("prompt-style-chat-formats")
    task = {"task": "t", "doc_to_text": "q", "template": "passthrough"}
    [out] = prompt_style.render_records([{"q": "Hi"}], plugins=manager, meta="llama-3", **task)
    assert out.text == (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    meta = manager.resolve("apply_meta_template", "zephyr").factory(options={})
    assert meta.chat is True
    assert meta.apply((Turn("user", "Hi"),)).text == "<|user|>\nHi</s>\n<|assistant|>\n"
