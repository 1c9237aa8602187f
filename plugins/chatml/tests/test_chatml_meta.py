"""Tests of prompt-style-chatml: the ``chatml`` meta template.

Every test gets a fresh plugin manager; tasks render a few records held in
memory with ``prompt_style.render_records``. They use only the core's built-in
styles (``mcq``, ``passthrough``), so this distribution is tested on its own.
The parity tests compare with the exact strings transformers rendered for
real ChatML chat templates (``data/transformers_chatml.json``, see its
``_note`` for where they come from).
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest
from prompt_style_chatml import ChatML

import prompt_style
from prompt_style import Turn

DIST = "prompt-style-chatml"
PLUGIN = "chatml"
META = "chatml"
HERE = Path(__file__).resolve().parent
PARITY = json.loads((HERE / "data" / "transformers_chatml.json").read_text(encoding="utf-8"))


# -- the manager and the records ------------------------------------------------


@pytest.fixture
def manager() -> prompt_style.PluginManager:
    """A fresh manager per test; environ={} so PROMPT_STYLE_* variables of the shell do not leak in."""
    return prompt_style.create_plugin_manager(environ={})


def chatml_factory(manager, **options):
    return manager.resolve("apply_meta_template", META).factory(options=options)


# A multiple-choice task with the core's built-in ``mcq`` style (the MMLU layout).
TASK = {
    "task": "tiny",
    "doc_to_text": "question",
    "doc_to_choice": "{{choices}}",
    "doc_to_target": "answer",
    "template": "mcq",
}

RECORD = {"question": "What is 2 + 2?", "choices": ["3", "4", "5"], "answer": 1}
QUESTION = "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nAnswer:"
TRAIN = [
    {"question": "What is 1 + 1?", "choices": ["2", "3"], "answer": 0},
    {"question": "What is 3 - 1?", "choices": ["1", "2", "3", "4"], "answer": 1},
]
SHOT1 = "What is 1 + 1?\nA. 2\nB. 3\nAnswer:"
SHOT2 = "What is 3 - 1?\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer:"


# -- discovery ------------------------------------------------------------------


def test_discovered_through_its_entry_point(manager):
    pyproject = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.MULTILINE).group(1)
    [info] = [p for p in manager.plugins if p.name == PLUGIN]
    assert info.distribution == DIST
    assert info.version == metadata.version(DIST) == declared
    assert info.module == "prompt_style_chatml"
    assert info.status == "loaded" and not info.builtin and not info.errors
    entry_points = [ep for ep in metadata.distribution(DIST).entry_points if ep.group == "prompt_style"]
    assert [(ep.name, ep.value) for ep in entry_points] == [(PLUGIN, "prompt_style_chatml")]


def test_resolve_attributes_the_meta_template_to_the_distribution(manager):
    provider = manager.resolve("apply_meta_template", META)
    assert provider.describe() == {
        "hook": "apply_meta_template",
        "name": META,
        "plugin": PLUGIN,
        "distribution": DIST,
        "version": metadata.version(DIST),
    }
    [row] = [r for r in manager.describe() if r["name"] == PLUGIN]
    assert row["hooks"] == {"apply_meta_template": [META]}
    assert isinstance(provider.factory(options={}), prompt_style.MetaTemplate)


def test_rendered_task_records_the_plugin_used(manager):
    loaded = prompt_style.load_task({**TASK, "data": {"test": [RECORD]}}, plugins=manager, meta=META)
    assert loaded.plugins["apply_meta_template"]["distribution"] == DIST
    assert loaded.plugins["apply_meta_template"]["version"] == metadata.version(DIST)


def test_disabled_plugin_names_the_distribution_to_install():
    manager = prompt_style.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": PLUGIN})
    with pytest.raises(prompt_style.PluginNotFoundError) as caught:
        manager.resolve("apply_meta_template", META)
    # installed but blocked: the error names the distribution and says it is blocked
    assert DIST in str(caught.value) and "blocked" in str(caught.value)


# -- through render_records (``fewshot=`` records are a ``dev`` split) -----------


def test_zero_shot(manager):
    [out] = prompt_style.render_records([RECORD], plugins=manager, meta=META, **TASK)
    assert out.text == f"<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n"
    assert out.messages == [{"role": "user", "content": QUESTION}]
    # lm-evaluation-harness's chat rule: no target delimiter before the continuations.
    assert out.continuations == ("A", "B", "C")
    assert out.target == 1


def test_zero_shot_with_description_as_system_turn(manager):
    [out] = prompt_style.render_records([RECORD], plugins=manager, meta=META, description="Arithmetic.\n\n", **TASK)
    # The description is the system turn, verbatim (its trailing blank line included).
    assert out.text == (
        "<|im_start|>system\nArithmetic.\n\n<|im_end|>\n"
        f"<|im_start|>user\n{QUESTION}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert out.messages == [
        {"role": "system", "content": "Arithmetic.\n\n"},
        {"role": "user", "content": QUESTION},
    ]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_number_of_choices(manager, n):
    choices = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][:n]
    record = {"question": "Which day?", "choices": choices, "answer": n - 1}
    [out] = prompt_style.render_records([record], plugins=manager, meta=META, **TASK)
    listed = "\n".join(f"{label}. {day}" for label, day in zip("ABCDEFG", choices))
    assert out.text == f"<|im_start|>user\nWhich day?\n{listed}\nAnswer:<|im_end|>\n<|im_start|>assistant\n"
    assert out.continuations == tuple("ABCDEFG"[:n])
    assert out.target == n - 1


def test_few_shot_as_multiturn(manager):
    [out] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN, num_fewshot=2, plugins=manager, meta=META, description="Arithmetic.", **TASK
    )
    assert out.text == (
        "<|im_start|>system\nArithmetic.<|im_end|>\n"
        f"<|im_start|>user\n{SHOT1}<|im_end|>\n"
        "<|im_start|>assistant\nA<|im_end|>\n"
        f"<|im_start|>user\n{SHOT2}<|im_end|>\n"
        "<|im_start|>assistant\nB<|im_end|>\n"
        f"<|im_start|>user\n{QUESTION}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert out.messages == [
        {"role": "system", "content": "Arithmetic."},
        {"role": "user", "content": SHOT1},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": SHOT2},
        {"role": "assistant", "content": "B"},
        {"role": "user", "content": QUESTION},
    ]
    assert out.continuations == ("A", "B", "C")
    assert out.target == 1


def test_messages_agree_with_the_builtin_messages_meta_template(manager):
    task = {**TASK, "num_fewshot": 2, "description": "Arithmetic."}
    [chat] = prompt_style.render_records([RECORD], fewshot=TRAIN, plugins=manager, meta=META, **task)
    [api] = prompt_style.render_records([RECORD], fewshot=TRAIN, plugins=manager, meta="messages", **task)
    assert chat.messages == api.messages
    assert api.text is None


def test_fewshot_as_multiturn_false_is_one_user_message(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=TRAIN,
        num_fewshot=2,
        plugins=manager,
        meta=META,
        fewshot_as_multiturn=False,
        description="Arithmetic.",
        **TASK,
    )
    user = f"{SHOT1} A\n\n{SHOT2} B\n\n{QUESTION}"
    assert out.messages == [{"role": "system", "content": "Arithmetic."}, {"role": "user", "content": user}]
    assert out.text == (
        f"<|im_start|>system\nArithmetic.<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    )


def test_fewshot_as_multiturn_false_user_message_is_the_plain_prompt(manager):
    task = {**TASK, "num_fewshot": 2}
    [chat] = prompt_style.render_records(
        [RECORD], fewshot=TRAIN, plugins=manager, meta=META, fewshot_as_multiturn=False, **task
    )
    [plain] = prompt_style.render_records([RECORD], fewshot=TRAIN, plugins=manager, meta="plain", **task)
    assert chat.messages == [{"role": "user", "content": plain.text}]


def test_add_generation_prompt_false(manager):
    [out] = prompt_style.render_records(
        [RECORD], plugins=manager, meta=META, meta_options={"add_generation_prompt": False}, **TASK
    )
    assert out.text == f"<|im_start|>user\n{QUESTION}<|im_end|>\n"
    assert out.messages == [{"role": "user", "content": QUESTION}]


def test_no_generation_prompt_and_one_user_message(manager):
    [out] = prompt_style.render_records(
        [RECORD],
        fewshot=TRAIN,
        num_fewshot=1,
        plugins=manager,
        meta=META,
        meta_options={"add_generation_prompt": False},
        fewshot_as_multiturn=False,
        **TASK,
    )
    assert out.text == f"<|im_start|>user\n{SHOT1} A\n\n{QUESTION}<|im_end|>\n"


def test_passthrough_generation_task(manager):
    records = [{"prompt": "Translate to French: cat", "reference": "chat"}]
    [out] = prompt_style.render_records(
        records, plugins=manager, meta=META, task="gen", doc_to_text="prompt", doc_to_target="reference"
    )
    assert out.text == "<|im_start|>user\nTranslate to French: cat<|im_end|>\n<|im_start|>assistant\n"
    assert out.continuations == ()
    assert out.target == "chat"


def test_unknown_option_says_did_you_mean(manager):
    with pytest.raises(prompt_style.OptionError) as caught:
        prompt_style.render_records(
            [RECORD], plugins=manager, meta=META, meta_options={"add_generation_promt": False}, **TASK
        )
    assert "meta template 'chatml' has no option 'add_generation_promt'" in str(caught.value)
    assert "(did you mean 'add_generation_prompt'" in str(caught.value)
    assert caught.value.key.endswith("add_generation_promt")


def test_unknown_option_from_the_factory(manager):
    with pytest.raises(prompt_style.OptionError, match=r"did you mean 'add_generation_prompt'\?"):
        chatml_factory(manager, add_generation_prompts=True)


def test_fewshot_as_multiturn_is_not_a_chatml_option(manager):
    # It is a chat rule of the core, for every chat format (load_task(fewshot_as_multiturn=...)).
    with pytest.raises(prompt_style.OptionError, match="has no option 'fewshot_as_multiturn'"):
        chatml_factory(manager, fewshot_as_multiturn=False)


def test_option_of_the_wrong_type(manager):
    with pytest.raises(prompt_style.OptionError, match="option 'add_generation_prompt' must be bool"):
        prompt_style.render_records(
            [RECORD], plugins=manager, meta=META, meta_options={"add_generation_prompt": "no"}, **TASK
        )


# -- the meta template on dialogues ---------------------------------------------


def test_defaults(manager):
    meta = chatml_factory(manager)
    assert meta == ChatML(add_generation_prompt=None, continue_final_message=False)
    # Unset: a task's prompt ends ready for the answer.
    assert meta.apply((Turn("user", "U"),)).text.endswith("<|im_start|>assistant\n")


def test_each_turn_then_the_generation_prompt(manager):
    dialogue = (Turn("system", "S"), Turn("user", "U1"), Turn("assistant", "A1"), Turn("user", "U2"))
    made = chatml_factory(manager).apply(dialogue)
    assert made.text == (
        "<|im_start|>system\nS<|im_end|>\n"
        "<|im_start|>user\nU1<|im_end|>\n"
        "<|im_start|>assistant\nA1<|im_end|>\n"
        "<|im_start|>user\nU2<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert made.messages == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "U2"},
    ]
    assert made.token_ids is None


def test_separators_are_ignored_in_multiturn_mode(manager):
    dialogue = (Turn("user", "Q1"), Turn("assistant", "A", sep=" "), Turn("user", "Q2", sep="\n\n"))
    made = chatml_factory(manager).apply(dialogue)
    assert [m["content"] for m in made.messages] == ["Q1", "A", "Q2"]


def test_a_final_assistant_turn_is_continued(manager):
    # An answer prefill (lm-evaluation-harness's gen_prefix): the turn stays open.
    dialogue = (Turn("user", "Q"), Turn("assistant", "Answer: "))
    made = chatml_factory(manager).apply(dialogue)
    assert made.text == "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nAnswer: "
    assert made.messages == [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "Answer: "}]
    closed = chatml_factory(manager, add_generation_prompt=False).apply(dialogue)
    assert closed.text == "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nAnswer: <|im_end|>\n"


def test_opencompass_role_names(manager):
    dialogue = (Turn("SYSTEM", "S"), Turn("HUMAN", "Hi"), Turn("BOT", "Hello"), Turn("HUMAN", "Bye"))
    made = chatml_factory(manager, add_generation_prompt=False).apply(dialogue)
    assert made.text == (
        "<|im_start|>system\nS<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello<|im_end|>\n"
        "<|im_start|>user\nBye<|im_end|>\n"
    )


def test_content_is_kept_verbatim(manager):
    content = "  spaces, <tags>, {braces}, {{jinja}}, é, and a trailing newline\n"
    made = chatml_factory(manager).apply((Turn("user", content),))
    assert made.text == f"<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n"
    assert made.messages == [{"role": "user", "content": content}]


def test_empty_dialogue(manager):
    assert chatml_factory(manager).apply(()).text == "<|im_start|>assistant\n"
    assert chatml_factory(manager, add_generation_prompt=False).apply(()).text == ""


def test_multimodal_parts_are_a_style_error(manager):
    parts = ({"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": "x.png"}})
    with pytest.raises(prompt_style.StyleError, match="multimodal"):
        chatml_factory(manager).apply((Turn("user", parts),))


# -- parity with transformers' apply_chat_template ------------------------------


def _dialogue(messages: list[dict]) -> tuple[Turn, ...]:
    return tuple(Turn(m["role"], m["content"]) for m in messages)


def _parity_cases():
    """Every (template, conversation) the chatml meta template can represent, as given.

    Conversations it cannot represent (``not_representable``) are left out; for
    templates with a default system prompt only conversations that bring their
    own system message are compared as given (the others are compared in
    ``test_parity_with_transformers_given_the_default_system_prompt``). Known
    differences are strict xfails, so a change in behaviour is noticed.
    """
    for template, entry in PARITY["templates"].items():
        for conversation, conv in PARITY["conversations"].items():
            if conversation in PARITY["not_representable"]:
                continue
            if entry["default_system"] and conv["messages"][0]["role"] != "system":
                continue
            reason = entry["known_differences"].get(conversation)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(template, conversation, id=f"{template}-{conversation}", marks=marks)


def _default_system_cases():
    for template, entry in PARITY["templates"].items():
        if not entry["default_system"]:
            continue
        for conversation, conv in PARITY["conversations"].items():
            if conversation in PARITY["not_representable"]:
                continue
            if conv["messages"][0]["role"] != "system":
                yield pytest.param(template, conversation, id=f"{template}-{conversation}")


def _generation_prompt(conv: dict) -> bool:
    # transformers' default is add_generation_prompt=False; ours is True, so always pass it.
    return conv["kwargs"].get("add_generation_prompt", False)


def test_parity_data_is_self_described():
    assert PARITY["transformers"] == "5.23.0"
    assert "expected.json" in PARITY["_note"]
    for entry in PARITY["templates"].values():
        assert set(entry["renders"]) == set(PARITY["conversations"])
        assert entry["file"].endswith(".jinja")
    assert len(list(_parity_cases())) == 16  # 15 match, 1 known difference
    assert len(list(_default_system_cases())) == 9


@pytest.mark.parametrize(("template", "conversation"), list(_parity_cases()))
def test_parity_with_transformers(template, conversation):
    conv = PARITY["conversations"][conversation]
    expected = PARITY["templates"][template]["renders"][conversation]
    made = ChatML(add_generation_prompt=_generation_prompt(conv)).apply(_dialogue(conv["messages"]))
    assert made.text == expected
    assert made.messages == conv["messages"]


@pytest.mark.parametrize(("template", "conversation"), list(_default_system_cases()))
def test_parity_with_transformers_given_the_default_system_prompt(template, conversation):
    """Qwen2.5 and Qwen2.5-VL insert a default system prompt; given as a system turn, we match."""
    entry = PARITY["templates"][template]
    conv = PARITY["conversations"][conversation]
    dialogue = (Turn("system", entry["default_system"]), *_dialogue(conv["messages"]))
    made = ChatML(add_generation_prompt=_generation_prompt(conv)).apply(dialogue)
    assert made.text == entry["renders"][conversation]


def test_continue_final_message_is_a_final_assistant_turn():
    """transformers' continue_final_message is what the default options do with a
    dialogue that ends with an assistant turn."""
    conv = PARITY["conversations"]["continue_final_message"]
    expected = PARITY["templates"]["llamacpp-test-teknium-openhermes-2.5-mistral-7b"]["renders"][
        "continue_final_message"
    ]
    made = ChatML().apply(_dialogue(conv["messages"]))
    assert made.text == expected


@pytest.mark.parametrize(
    "conversation",
    [c for c in PARITY["conversations"] if c not in PARITY["not_representable"]],
)
def test_parity_through_the_plugin_manager(manager, conversation):
    """The resolved factory (what load_task uses) matches the pure ChatML template too."""
    conv = PARITY["conversations"][conversation]
    expected = PARITY["templates"]["llamacpp-test-teknium-openhermes-2.5-mistral-7b"]["renders"][conversation]
    meta = chatml_factory(manager, add_generation_prompt=_generation_prompt(conv))
    assert meta.apply(_dialogue(conv["messages"])).text == expected
