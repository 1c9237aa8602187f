"""The fast code generator renders exactly what Jinja's own renderer renders.

Seeded random conversations (roles, empty and whitespace contents, unicode,
template syntax and special-token text in contents, multimodal parts,
non-string contents, tool calls, reasoning, generation flags, tools) through
every corpus and feature template, with both engines: same text, or the same
error. (tools/golden/fuzz_chat_templates.py runs the same against the real
transformers.)"""

from __future__ import annotations

import random

import pytest
from _hf_test_support import FROZEN_NOW, TEMPLATE_FILES, TEXTS
from prompt_style_hf.chat_template import ChatTemplate
from prompt_style_hf.fastpath.codegen import FastCodeGenerator

import prompt_style
from prompt_style import ChatTemplateError, PromptStyleError

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def conversations(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        messages = []
        for _ in range(rng.randint(1, 5)):
            role = (
                rng.choice(["system", "user", "assistant", "tool", "developer"])
                if rng.random() < 0.3
                else rng.choice(["user", "assistant"])
            )
            r = rng.random()
            if r < 0.8:
                content = rng.choice(TEXTS) + rng.choice(TEXTS)
            elif r < 0.9:
                content = [{"type": "text", "text": rng.choice(TEXTS)}, {"type": "image"}]
            else:
                content = rng.choice([None, 7, ["x"]])
            message = {"role": role, "content": content}
            if rng.random() < 0.1:
                message["tool_calls"] = [
                    {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
                ]
            if rng.random() < 0.05:
                message["reasoning_content"] = rng.choice(TEXTS)
            if role == "tool":
                message["tool_call_id"] = "abcdefghi"
            messages.append(message)
        flags = rng.choice([{}, {"add_generation_prompt": True}, {"continue_final_message": True}])
        yield messages, flags, (TOOLS if rng.random() < 0.2 else None)


def outcome(template: ChatTemplate, messages, flags, tools):
    try:
        return (
            "ok",
            template.render(
                messages, tools=tools, variables={"bos_token": "<s>", "eos_token": "</s>"}, now=FROZEN_NOW, **flags
            ).text,
        )
    except ChatTemplateError as exc:
        return ("error", exc.template_message)
    except PromptStyleError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: p.stem)
def test_fast_engine_equals_jinja(path):
    source = path.read_text(encoding="utf-8")
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    assert fast._fast is not None, "the fast generator should take every corpus template"
    for i, (messages, flags, tools) in enumerate(conversations(hash(path.name) % 10_000, 12)):
        assert outcome(fast, messages, flags, tools) == outcome(jinja, messages, flags, tools), (i, messages, flags)


SCOPING = [
    # names read before and after assignments, in loops, branches and macros
    "{% set x = 1 %}{% for m in messages %}{{ x }}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}",
    "{{ x }}{% if messages %}{% set x = 2 %}{% endif %}{{ x }}",
    "{% for m in messages %}{% for c in m.content %}{{ loop.index }}{{ loop.length }}{% endfor %}"
    "{{ loop.index0 }}{% endfor %}",
    "{% for m in messages %}{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %}{{ loop.revindex }}"
    "{{ loop.previtem.role if loop.previtem is defined }}"
    "{{ loop.nextitem.role if loop.nextitem is defined }}{% endfor %}",
    "{% for m in messages if m.role == 'user' %}{{ loop.index }}{{ loop.last }}{% endfor %}",
    "{% macro f(a, b=2) %}{{ a }}{{ b }}{{ caller() if caller is defined }}{% endmacro %}{{ f(1) }}{{ f(1, 3) }}"
    "{% call f(5) %}C{% endcall %}",
    "{% macro g() %}{{ varargs | length }}{{ kwargs | length }}{% endmacro %}{{ g(1, 2, k=3) }}",
    "{% for m in messages %}{% set y = m.role %}{% endfor %}{{ y }}",
    # an assignment in one iteration does not reach the next
    "{% for m in messages %}{% if m.role == 'user' %}{% set r = m.content %}{% endif %}"
    "{{ loop.index }}{{ r is defined }}{{ r if r is defined }}{% endfor %}",
    "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}",
    "{% for a, b in [(1, 2), (3, 4)] %}{{ a }}{{ b }}{{ loop.index }}{% else %}E{% endfor %}",
    "{% for m in [] %}x{% else %}{{ loop is defined }}{% endfor %}",
    "{% for m in messages %}{% for k, v in m | dictsort %}{{ k }}{% endfor %}{% endfor %}",
    "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join('|') }}",
    "{{ messages | rejectattr('content') | list | length }}{{ messages | map('string') | list | length }}",
    "{% set s %}{% for m in messages %}{{ loop.index }}{% endfor %}{% endset %}{{ s }}",
    "{% filter upper %}{% for m in messages %}{{ m.role }}{% endfor %}{% endfilter %}",
    "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}",
    "{{ messages[0]['content'] }}{{ messages[-1].role }}{{ messages[0].get('missing', 'd') }}"
    "{{ messages[0].keys() | list | length }}",
    "{{ (messages | first).role }}{{ undefined_name.attr if false else 'ok' }}{{ 'x'.upper() }}{{ 'a,b'.split(',') }}",
    "{% for m in messages %}{{ loop.cycle('a', 'b') }}{{ loop.changed(m.role) }}{{ loop.depth }}{% endfor %}",
]


@pytest.mark.parametrize("source", SCOPING)
def test_scoping_and_loops_equal_jinja(source):
    messages = [
        {"role": "user", "content": "ab"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "c"},
    ]
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    assert fast._fast is not None
    assert outcome(fast, messages, {}, None) == outcome(jinja, messages, {}, None)


def test_generated_code_reads_plain_dicts_directly():
    from prompt_style_hf.environment import HF_CHAT

    from prompt_style.safe import jinja_env

    env = jinja_env.environment(HF_CHAT)
    generator = FastCodeGenerator(env, None, "<test>", optimized=True)
    generator.visit(env.parse("{% for m in messages %}{{ m['role'] }}{{ loop.index0 }}{% endfor %}"))
    code = generator.stream.getvalue()
    assert "LoopContext(" not in code and "enumerate(" in code
    assert "type(l_1_m) is dict" in code


@pytest.mark.parametrize("engine", ["auto", "jinja"])
@pytest.mark.parametrize(
    "source",
    [
        "{{ messages|map(attribute='role') }}",
        "{{ (messages|map(attribute='role')) ~ '!' }}",
        "{{ messages|selectattr('role')|string }}",
        "{{ [messages|reject('none')]|join }}",
    ],
)
def test_printing_a_lazy_sequence_is_refused_by_both_engines(source, engine):
    """transformers prints '<generator object ... at 0x...>' (an address that changes
    every run); the sandbox refuses it in both engines."""
    with pytest.raises(prompt_style.SandboxError, match="lazy sequence"):
        ChatTemplate(source, engine=engine).render([{"role": "user", "content": "x"}])


@pytest.mark.parametrize("engine", ["auto", "jinja"])
def test_tojson_of_a_lazy_sequence_fails_as_in_transformers(engine):
    tools = [{"type": "function", "function": {"name": "f"}}]
    for source in (
        "{{ tools|map(attribute='function')|tojson }}",
        "{{ tools|map(attribute='function')|tojson(indent=2) }}",
    ):
        with pytest.raises(ChatTemplateError) as caught:
            ChatTemplate(source, engine=engine).render([{"role": "user", "content": "x"}], tools=tools)
        assert caught.value.template_message == "Object of type generator is not JSON serializable"
    listed = "{{ tools|map(attribute='function')|list|tojson }}"
    assert (
        ChatTemplate(listed, engine=engine).render([{"role": "user", "content": "x"}], tools=tools).text
        == '[{"name": "f"}]'
    )


def test_generated_code_filters_loops_and_takes_dict_items_whole():
    from prompt_style_hf.environment import HF_CHAT

    from prompt_style.safe import jinja_env

    env = jinja_env.environment(HF_CHAT)
    generator = FastCodeGenerator(env, None, "<test>", optimized=True)
    tree = jinja_env.prepare_tree(env.parse("{% for k, v in tool|items if k != 'x' %}{{ loop.last }}{% endfor %}"))
    generator.visit(tree)
    code = generator.stream.getvalue()
    assert "LoopContext(" not in code and "enumerate(" in code
    assert "_ps_dict_items(" in code and "(fiter):" in code
