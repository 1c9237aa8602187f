"""Templates compiled for plain messages: ``{% for message in messages %}`` reading
``message.role`` and ``message['content']`` directly when every message is
``{"role": str, "content": str}`` and nothing else (``analysis._plain_message_reads``).

``HFChat.apply_messages`` renders such conversations with that compilation and any
other with the general one; both must give transformers' text on every template
and conversation of the goldens."""

from __future__ import annotations

import random

import pytest
from _hf_test_support import (
    FROZEN_NOW,
    TEMPLATE_FILES,
    TEXTS,
    all_conversations,
    golden_results,
    same,
    template_path,
)
from prompt_style_hf.chat_template import ChatTemplate
from prompt_style_hf.environment import HF_CHAT
from prompt_style_hf.fastpath import compile_fast
from prompt_style_hf.fastpath.template import _generate
from prompt_style_hf.meta import hf_meta

from prompt_style import ChatTemplateError, PromptStyleError
from prompt_style.safe import jinja_env

CONVERSATIONS = all_conversations()
PLAIN = [{"role": "user", "content": "ab"}, {"role": "assistant", "content": ""}, {"role": "user", "content": "c"}]


def cases():
    return [pytest.param(name, entry, id=name) for name, entry in sorted(golden_results().items())]


def meta_for(tmp_path, source: str, **options):
    """The hf meta template of ``source`` (written to a file), with ``options``."""
    path = tmp_path / "chat_template.jinja"
    path.write_text(source, encoding="utf-8")
    return hf_meta({"template": str(path), **options})


def code(source: str, plain: bool = True) -> str:
    env = jinja_env.environment(HF_CHAT)
    return _generate(env, env.parse(source), plain)


@pytest.mark.parametrize("name, entry", cases())
def test_apply_messages_matches_transformers(name, entry):
    """The commonest call (HFChat.apply_messages): plain conversations through the
    plain compilation, the others (tools, documents, more keys) through the general."""
    path = template_path(name, entry["origin"])
    options = {"template": str(path), "now": FROZEN_NOW}
    options.update({k: entry[k] for k in ("bos_token", "eos_token") if entry.get(k) is not None})
    meta = hf_meta(options)
    wrong = []
    for conv, expected in sorted(entry["renders"].items()):
        conversation = CONVERSATIONS[conv]
        try:
            out = meta.apply_messages(
                conversation["messages"],
                tools=conversation.get("tools"),
                documents=conversation.get("documents"),
                **conversation.get("kwargs", {}),
            )
            ours = {"ok": True, "text": out.text}
            if out.assistant_spans is not None:
                ours["spans"] = [list(s) for s in out.assistant_spans]
        except ChatTemplateError as exc:
            ours = {"ok": False, "error": exc.template_message}
        if not same(ours, expected):
            wrong.append(f"{conv}:\n  ours: {ours!r}\n  transformers: {expected!r}")
    assert not wrong, f"{name}: " + "\n".join(wrong)


@pytest.mark.parametrize("name, entry", cases())
def test_errors_map_to_the_same_template_lines(name, entry):
    """Both compilations have the same lines of code, so an error's template line
    (read off the general one's debug information) is right for either."""
    source = template_path(name, entry["origin"]).read_text(encoding="utf-8")
    env = jinja_env.environment(HF_CHAT)
    general, plain = compile_fast(env, source), compile_fast(env, source, plain_messages=True)
    assert plain.template.debug_info == general.template.debug_info


def test_the_loop_reads_plain_messages_directly(tmp_path):
    source = (
        "{% for message in messages %}{% if message['role'] == 'user' %}{{ message.content }}"
        "{% elif message.role != 'system' %}{{ message['content'] | trim }}{% endif %}"
        "{% if message.content %}!{% endif %}{{ message.name }}"
        "{% if 'tool_calls' in message %}{{ '<' + message.role + '>' }}{% endif %}{% endfor %}"
    )
    plain, general = code(source), code(source, plain=False)
    assert "(l_1_message['role'] == 'user')" in plain
    assert "(l_1_message['role'] != 'system')" in plain
    assert "type(l_1_message) is dict and 'content'" not in plain
    assert "('tool_calls' in l_1_message)" in plain
    # role and content are strs: printed, and added, without asking
    assert ":= l_1_message['content']) is not None and" in plain
    assert ":= l_1_message['role']) is not None else" in plain
    # A key a plain message does not have is read as before.
    assert "fast_getattr(l_1_message, 'name')" in plain
    assert "type(l_1_message) is dict and 'content'" in general
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    meta = meta_for(tmp_path, source)
    others = [{"role": "system", "content": " x "}, {"role": "user", "content": "y", "name": "n", "tool_calls": []}]
    for messages in (PLAIN, others):
        assert meta.apply_messages(messages).text == fast.render(messages).text == jinja.render(messages).text


@pytest.mark.parametrize(
    "source",
    [
        # messages may be something else
        "{% set messages = messages[0] %}{% for message in messages %}{{ message.role }}{% endfor %}",
        "{% set messages = other[1:] %}{% for message in messages %}{{ message.role }}{% endfor %}",
        "{% set messages, x = messages[1:], 1 %}{% for message in messages %}{{ message.role }}{% endfor %}",
        "{% for messages in [messages] %}{% endfor %}{% for message in messages %}{{ message.role }}{% endfor %}",
        "{% macro f(messages) %}{% endmacro %}{% for message in messages %}{{ message.role }}{% endfor %}",
        # the loop's name may be something else
        "{% for message in messages %}{% set message = {'role': 1} %}{{ message.role }}{% endfor %}",
        "{% for message in messages %}{% for message in [1] %}{% endfor %}{{ message.role }}{% endfor %}",
        "{% for message in messages recursive %}{{ message.role }}{% endfor %}",
        "{% for message, x in messages %}{{ message.role }}{% endfor %}",
        "{% for message in messages|reverse %}{{ message.role }}{% endfor %}",
        "{% for message in loop_messages %}{{ message.role }}{% endfor %}",
        # the name outside the loop's body
        "{% for message in messages %}{% else %}{{ message.role }}{% endfor %}",
        "{% for message in messages %}{% macro f() %}{{ message.role }}{% endmacro %}{% endfor %}",
        "{% for message in messages %}{% call f() %}{{ message.role }}{% endcall %}{% endfor %}",
    ],
)
def test_names_that_may_not_be_a_plain_message_are_read_as_before(source):
    assert code(source) == code(source, plain=False)


def test_a_template_with_nothing_to_specialize_is_compiled_once():
    env = jinja_env.environment(HF_CHAT)
    source = "{{ messages[0].content }}"
    assert compile_fast(env, source, plain_messages=True) is compile_fast(env, source)
    loop = "{% for m in messages %}{{ m.content }}{% endfor %}"
    assert compile_fast(env, loop, plain_messages=True) is not compile_fast(env, loop)
    assert compile_fast(env, loop, plain_messages=True).specialized


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "a", "name": "n"}],  # a key more
        [{"role": "user", "content": None}],  # None is dropped (transformers)
        [{"role": "user"}],  # a key less
        [{"role": "user", "content": [{"type": "text", "text": "a"}]}],  # parts
        [("role", "user")],  # not a message
    ],
)
def test_messages_that_are_not_plain_render_through_the_general_compilation(tmp_path, messages):
    source = "{% for m in messages %}[{{ m.role }}|{{ m.content }}|{{ m.name }}]{% endfor %}"
    meta, jinja = meta_for(tmp_path, source), ChatTemplate(source, engine="jinja")
    try:
        expected = jinja.render(messages).text
    except PromptStyleError as exc:
        with pytest.raises(type(exc)):
            meta.apply_messages(messages)
    else:
        assert meta.apply_messages(messages).text == expected


def test_an_error_in_the_loop_names_its_template_line(tmp_path):
    source = (
        "{% for message in messages %}\n{{ message.content }}\n"
        "{{ raise_exception('no ' + message.role) }}\n{% endfor %}"
    )
    with pytest.raises(ChatTemplateError) as caught:
        meta_for(tmp_path, source).apply_messages(PLAIN)
    assert caught.value.template_message == "no user" and caught.value.line == 3


def test_a_slice_of_the_messages_is_plain_messages(tmp_path):
    """{% set messages = messages[1:] %} (Llama 3's templates): still plain messages."""
    source = (
        "{% if messages[0].role == 'system' %}{% set messages = messages[1:] %}{% endif %}"
        "{% for message in messages %}{{ message.role + ':' + message.content }}{% endfor %}"
    )
    assert "l_1_message['role']) is not None" in code(source)
    meta, jinja = meta_for(tmp_path, source), ChatTemplate(source, engine="jinja")
    chat = [{"role": "system", "content": "s"}, *PLAIN]
    assert meta.apply_messages(chat).text == jinja.render(chat).text == "user:abassistant:user:c"


def test_chat_template_render_takes_the_plain_compilation_for_plain_messages():
    """ChatTemplate.render (HFChat.apply, a task's dialogue): plain messages through the
    plain compilation (compiled when first needed), the others through the general."""
    source = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% if m.name %}({{ m.name }}){% endif %}{% endfor %}"
    template, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    assert template._fast_plain is None
    named = [{"role": "user", "content": "a", "name": "n"}]
    assert template.render(named).text == jinja.render(named).text == "<user>a(n)"
    assert template._fast_plain is None  # not needed yet
    assert template.render(PLAIN).text == jinja.render(PLAIN).text
    assert template._fast_plain is not None and template._fast_plain is not template._fast
    continued = template.render(PLAIN, continue_final_message=True).text
    assert continued == jinja.render(PLAIN, continue_final_message=True).text == "<user>ab<assistant><user>c"


def test_apply_messages_compiles_the_plain_template_when_first_needed(tmp_path):
    """Made by the first plain conversation (with tools or without: only the messages
    are read as plain), not when the meta template is built."""
    source = "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}<{{ tools | length if tools else 0 }}>"
    meta = meta_for(tmp_path, source)
    template = meta._single
    assert template._fast_plain is None
    assert meta.apply_messages([{"role": "user", "content": "a", "name": "n"}]).text == "[user]a<0>"
    assert template._fast_plain is None
    tool = [{"type": "function", "function": {"name": "f"}}]
    assert meta.apply_messages(PLAIN, tools=tool).text == "[user]ab[assistant][user]c<1>"
    assert template._fast_plain is not None and template._fast_plain is not template._fast
    assert meta.apply_messages(PLAIN).text == "[user]ab[assistant][user]c<0>"


def _plain_conversations(seed: int, count: int):
    rng = random.Random(seed)
    roles = ["user", "assistant", "system", "tool", "developer", "ipython"]
    for _ in range(count):
        messages = [
            {"role": rng.choice(roles[:2]) if rng.random() < 0.7 else rng.choice(roles), "content": rng.choice(TEXTS)}
            for _ in range(rng.randint(1, 6))
        ]
        if rng.random() < 0.5:
            messages = [{"content": m["content"] + rng.choice(TEXTS), "role": m["role"]} for m in messages]
        yield messages, rng.choice([{}, {"add_generation_prompt": True}, {"continue_final_message": True}])


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: p.stem)
def test_plain_conversations_render_as_jinja_renders_them(tmp_path, path):
    """Seeded random plain conversations (roles of every kind, the contents of
    test_fast_engine: empty, whitespace, template syntax, special tokens, unicode), with
    each flag: apply_messages (the plain compilation) gives Jinja's own text, or its error."""
    source = path.read_text(encoding="utf-8")
    options = {"template": str(path), "now": FROZEN_NOW, "bos_token": "<s>", "eos_token": "</s>"}
    meta, jinja = hf_meta(options), ChatTemplate(source, engine="jinja")
    tokens = {"bos_token": "<s>", "eos_token": "</s>"}
    for messages, flags in _plain_conversations(hash(path.name) % 10_000, 20):
        expected = _outcome(jinja.render, messages, variables=tokens, now=FROZEN_NOW, **flags)
        assert _outcome(meta.apply_messages, messages, **flags) == expected, (messages, flags)


LOOP_MESSAGES = (
    "{% if messages[0].role == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% else %}{% set loop_messages = messages %}{% endif %}"
    "{% for message in loop_messages %}[{{ message.role }}]{{ message.content }}{% endfor %}"
)


def test_a_list_assigned_from_the_messages_is_read_as_plain(tmp_path):
    """{% set loop_messages = messages[1:] %} (Mistral's, Command R's templates): its
    messages are plain too; a variable of that name renders through the general
    compilation (it is what such a loop reads where the template assigns nothing)."""
    env = jinja_env.environment(HF_CHAT)
    plain = compile_fast(env, LOOP_MESSAGES, plain_messages=True)
    assert plain.specialized and plain.plain_names == {"loop_messages"}
    assert "l_1_message['role']) is not None" in code(LOOP_MESSAGES)
    meta, jinja = meta_for(tmp_path, LOOP_MESSAGES), ChatTemplate(LOOP_MESSAGES, engine="jinja")
    chat = [{"role": "system", "content": "s"}, *PLAIN]
    for messages in (chat, PLAIN):
        assert meta.apply_messages(messages).text == jinja.render(messages).text
    assert meta.apply_messages(chat).text == "[user]ab[assistant][user]c"


@pytest.mark.parametrize(
    "source",
    [
        # read where the template assigns nothing: the variable's value
        "{% if false %}{% set loop_messages = messages %}{% endif %}"
        "{% for m in loop_messages %}[{{ m.role }}|{{ m.content }}]{% endfor %}",
        # assigned from each other only
        "{% set a = b[1:] %}{% set b = a %}{% for m in a %}[{{ m.role }}|{{ m.content }}]{% endfor %}",
    ],
)
def test_a_variable_named_like_a_plain_list_is_read_as_before(tmp_path, source):
    template, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    given = [{"content": "x"}, {"role": 1, "content": 2, "name": "n"}]
    for name in ("loop_messages", "a", "b"):
        expected = _outcome(jinja.render, PLAIN, variables={name: given})
        assert _outcome(template.render, PLAIN, variables={name: given}) == expected
        meta = meta_for(tmp_path, source, **{name: given})
        assert _outcome(meta.apply_messages, PLAIN) == expected
    assert _outcome(template.render, PLAIN) == _outcome(jinja.render, PLAIN)


def _outcome(render, messages, **keywords):
    try:
        return "ok", render(messages, **keywords).text
    except ChatTemplateError as exc:
        return "error", exc.template_message
