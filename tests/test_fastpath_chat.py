"""The compiled fast path with chat formats: ChatML and API messages (their
``last_turn_affixes``), lm-evaluation-harness's chat rules, a format that strips the
content (``stripped_turn_affixes``), OpenCompass meta templates, and a chat template
without the split; each against the general path on awkward records."""

from __future__ import annotations

import pickle

import pytest
from _fastpath_support import AWKWARD, DESCRIPTIONS, assert_same, task_of

import prompt_style
from prompt_style import RenderedPrompt, load_task
from prompt_style.fast_prompts import LazyMessagesPrompt
from prompt_style.fastpath import LazyDialoguePrompt


@pytest.mark.parametrize("description", ["none", "literal"])
@pytest.mark.parametrize(
    "meta, options",
    [
        ("chatml", {}),
        ("chatml", {"add_generation_prompt": False}),
        ("chatml", {"continue_final_message": True}),
        ("messages", {}),
        ("messages", {"system": False}),
    ],
    ids=["default", "no_generation_prompt", "continue_final", "messages", "messages_no_system"],
)
@pytest.mark.parametrize("style", ["mcq", "cloze_qa", "passthrough"])
def test_chat_formats_take_the_fast_path_with_their_messages(pm_all, description, meta, options, style):
    """ChatML says how its text stands around the last turn, API messages that they
    differ only in the last message's content (last_turn_affixes): the fast path
    renders the text with string joins (ChatML) and the messages when first read,
    equal to the general path's, and their JSON from the task's."""
    task = task_of("cloze_qa" if style == "cloze_qa" else "mcq", DESCRIPTIONS[description])
    if style == "passthrough":
        task["template"] = "passthrough"
    kwargs = {"meta": meta, "meta_options": options}
    assert load_task(task, plugins=pm_all, **kwargs).renderer.fast_render() is not None
    outcomes = assert_same(task, pm_all, AWKWARD, **kwargs)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    expected = LazyMessagesPrompt if meta == "messages" else LazyDialoguePrompt
    assert any(type(p) is expected for p in made)
    from prompt_style.lines import PromptEncoder
    from prompt_style.safe.json_lines import dumps_line

    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
    fast = load_task(task, plugins=pm_all, **kwargs).renderer.render(AWKWARD[0], 0)
    if meta == "messages":
        assert fast.text is None and fast.messages[-1]["content"]
    else:
        assert fast.messages is fast.messages and fast.messages[-1]["content"] in fast.text
    fast.messages[0]["content"] = "changed"  # fresh per prompt, as the general path's
    again = load_task(task, plugins=pm_all, **kwargs).renderer.render(AWKWARD[0], 0)
    assert again.messages[0]["content"] != "changed"
    copied = pickle.loads(pickle.dumps(again))
    assert copied == again and type(copied) is RenderedPrompt and copied.dialogue == again.dialogue


@pytest.mark.parametrize("meta", ["plain", "chatml", "messages"])
@pytest.mark.parametrize("description", ["none", "literal"])
@pytest.mark.parametrize("style", ["mcq", "passthrough"])
@pytest.mark.parametrize("shots", [0, 2])
def test_chat_rules_take_the_fast_path(pm_all, meta, description, style, shots):
    """lm-evaluation-harness's chat rules (--system_instruction, --fewshot_as_multiturn):
    the instruction joins the shared turns (before the description's system turn, or as
    its own), rendered once; with a chat format and not fewshot_as_multiturn, the
    examples and the question are one user message, whose examples are rendered once."""
    task = task_of("mcq", DESCRIPTIONS[description], shots=shots)
    if style == "passthrough":
        task["template"] = "passthrough"
    for kwargs in (
        {"system_instruction": "Be brief."},
        {"system_instruction": "Ünï {x}\n", "fewshot_as_multiturn": False},
        {"fewshot_as_multiturn": False},
    ):
        if meta == "plain" and "system_instruction" not in kwargs:
            continue  # (fewshot_as_multiturn with plain text is an error)
        assert load_task(task, plugins=pm_all, meta=meta, **kwargs).renderer.fast_render() is not None
        outcomes = assert_same(task, pm_all, AWKWARD, meta=meta, **kwargs)
        made = [o for o in outcomes if o[0] == "ok"]
        assert any(isinstance(o[-1], LazyDialoguePrompt) for o in made)
        first = made[0][-1]
        shown = first.text if first.text is not None else first.messages[0]["content"]
        assert kwargs.get("system_instruction", "") in shown
        if meta != "plain":
            last = first.messages[-1]
            assert last["role"] == "user" and last["content"] == first.dialogue[-1].content
            assert bool(shots and kwargs.get("fewshot_as_multiturn") is False) is ("Shot" in last["content"])


def test_chat_formats_without_the_split_are_not_taken(pm_all):
    task = task_of("mcq", DESCRIPTIONS["literal"])
    # a chat template that looks at the content: every record through the template
    looking = (
        "{% for m in messages %}{% if m.content.startswith('<tool_response>') %}T{% endif %}"
        "<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>"
    )
    kwargs = {"meta": "hf", "meta_options": {"chat_template": looking}}
    assert load_task(task, plugins=pm_all, **kwargs).renderer.fast_render() is None
    assert_same(task, pm_all, AWKWARD, **kwargs)
    # a description per record: compiled once per description (tests/test_fast_descriptions.py)
    single = {"meta": "chatml", "fewshot_as_multiturn": False, "system_instruction": "Be brief."}
    per_description = task_of("mcq", DESCRIPTIONS["jinja"])
    assert_same(per_description, pm_all, AWKWARD[:6], **single)
    per_record = task_of("mcq", DESCRIPTIONS["jinja_empty_sometimes"])
    assert_same(per_record, pm_all, AWKWARD, meta="chatml")


class _Strippy:
    """A chat format that strips the last turn's content (as Llama 3's template trims
    every content): it promises ``stripped_turn_affixes`` only."""

    chat = True

    def apply(self, dialogue):
        text = "".join(f"<{t.role}>{t.content.strip()}</{t.role}>" for t in dialogue) + "<assistant>"
        return prompt_style.ModelInput(text=text, messages=[{"role": t.role, "content": t.content} for t in dialogue])

    def last_turn_affixes(self, dialogue):
        return None

    def stripped_turn_affixes(self, dialogue):
        *head, last = dialogue
        before = "".join(f"<{t.role}>{t.content.strip()}</{t.role}>" for t in head) + f"<{last.role}>"
        return before, f"</{last.role}><assistant>"


def _strippy_manager():
    from prompt_style import hookimpl

    class Plugin:
        @hookimpl
        def apply_meta_template(self):
            return {"strippy": lambda *, options: _Strippy()}

    return prompt_style.create_plugin_manager(environ={}, plugins=[("strippy", Plugin())])


@pytest.mark.parametrize("style", ["mcq", "passthrough"])
@pytest.mark.parametrize(
    "rules", [{}, {"fewshot_as_multiturn": False}, {"system_instruction": " Be brief. "}], ids=["turns", "one", "sys"]
)
@pytest.mark.parametrize("shots", [0, 2])
def test_a_format_that_strips_the_content_takes_the_records_it_leaves_alone(style, rules, shots):
    """``stripped_turn_affixes``: the fast path takes a record whose last turn's content
    (the lead, then the record's own text) strip() leaves as it is; the others (white
    space at either end of a passthrough question; an empty question after a lead that
    ends in white space) go to the general path, which strips them."""
    manager = _strippy_manager()
    task = task_of("mcq", DESCRIPTIONS["literal"], shots=shots)
    if style == "passthrough":
        task["template"] = "passthrough"
    records = [*AWKWARD, {"q": "", "c": ["a", "b"], "a": 0}, {"q": " \n", "c": ["a", "b"], "a": 1}]
    assert load_task(task, plugins=manager, meta="strippy", **rules).renderer.fast_render() is not None
    outcomes = assert_same(task, manager, records, meta="strippy", **rules)
    assert any(isinstance(o[-1], LazyDialoguePrompt) for o in outcomes if o[0] == "ok")
    if style == "passthrough":  # a question with white space around it: the general path's
        fast = load_task(task, plugins=manager, meta="strippy", **rules).renderer.fast_render()
        assert fast(AWKWARD[1], 1) is None and fast(AWKWARD[0], 0) is not None


OC_META = {
    "begin": "<BEGIN>",
    "round": [
        {"role": "HUMAN", "begin": "<H>", "end": "</H>\n"},
        "<between>",
        {"role": "BOT", "begin": "<B>", "end": "</B>\n", "generate": True},
    ],
    "reserved_roles": [{"role": "SYSTEM", "begin": "<S>", "end": "</S>\n"}],
    "end": "<END>",
}


@pytest.mark.parametrize(
    "meta,options",
    [
        ("opencompass::internlm2-chat", {}),
        ("opencompass::vicuna", {}),
        ("opencompass::chatglm2", {}),
        ("opencompass", {"template": OC_META}),
    ],
    ids=["internlm2", "vicuna", "chatglm2", "own"],
)
@pytest.mark.parametrize("description", ["none", "literal"])
@pytest.mark.parametrize("style", ["mcq", "passthrough"])
@pytest.mark.parametrize("shots", [0, 2])
def test_opencompass_meta_templates_take_the_fast_path(pm_all, meta, options, description, style, shots):
    """An OpenCompass meta template writes each content as it is where its role puts it
    (``last_turn_affixes``): the fast path renders the text with string joins, equal to
    the general path's, lines included."""
    task = task_of("mcq", DESCRIPTIONS[description], shots=shots)
    if style == "passthrough":
        task["template"] = "passthrough"
    kwargs = {"meta": meta, "meta_options": options}
    loaded = load_task(task, plugins=pm_all, **kwargs)
    assert loaded.renderer.fast_render() is not None
    split = loaded.renderer.meta.last_turn_affixes((prompt_style.Turn("user", ""),))
    assert split is not None and all(type(t) is str for t in split)
    outcomes = assert_same(task, pm_all, AWKWARD, **kwargs)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(type(p) is LazyDialoguePrompt for p in made)
    from prompt_style.lines import PromptEncoder
    from prompt_style.safe.json_lines import dumps_line

    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")


def test_opencompass_meta_templates_say_where_only_for_text():
    from prompt_style.meta.opencompass import OpenCompassMeta

    turn = prompt_style.Turn("user", "Q")
    assert OpenCompassMeta(OC_META).last_turn_affixes((turn,)) == ("<BEGIN><H>", "</H>\n<between><B>")
    api = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
    assert OpenCompassMeta(api).last_turn_affixes((turn,)) is None  # API messages
    parts = prompt_style.Turn("user", ({"type": "text", "text": "Q"},))
    assert OpenCompassMeta(OC_META).last_turn_affixes((parts,)) is None
