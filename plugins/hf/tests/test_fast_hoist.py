"""Root-level macros defined once per render instance (fastpath/hoist.py): same output
as Jinja's renderer over many renders, errors on the template's lines, budgets kept,
nothing of a render kept, several threads at once."""

from __future__ import annotations

import threading

import pytest
from prompt_style_hf.chat_template import ChatTemplate

from prompt_style import ChatTemplateError, JinjaLimits, LimitError
from prompt_style.safe.limits import limits_scope

MESSAGES = [
    [{"role": "user", "content": "a"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "b"}, {"role": "assistant", "content": "c"}],
    [{"role": "user", "content": "x" * 50}, {"role": "assistant", "content": ""}],
]

HOISTED = [
    # a macro reading a name set after its definition, and one set in a branch
    "{% macro f(m) %}[{{ m.role }}:{{ later }}:{{ cond if cond is defined }}]{% endmacro %}"
    "{% set later = messages | length %}{% if messages[0].role == 'system' %}{% set cond = 'S' %}{% endif %}"
    "{% for m in messages %}{{ f(m) }}{% endfor %}",
    # macros calling each other, recursion, defaults, a macro passed around
    "{% macro leaf(x, sep='-') %}{{ x }}{{ sep }}{% endmacro %}"
    "{% macro walk(n) %}{% if n > 0 %}{{ leaf(n) }}{{ walk(n - 1) }}{% endif %}{% endmacro %}"
    "{{ walk(messages | length) }}{{ leaf('z', '!') }}{% set g = leaf %}{{ g('y') }}",
    # a macro with caller, varargs and kwargs; a call block
    "{% macro box() %}<{{ caller() }}|{{ varargs | join(',') }}|{{ kwargs | length }}>{% endmacro %}"
    "{% for m in messages %}{% call box(1, 2, k=3) %}{{ m.content | length }}{% endcall %}{% endfor %}",
    # a macro redefined under the same name, and one defined inside a branch (not hoisted)
    "{% macro h() %}1{% endmacro %}{{ h() }}{% macro h() %}2{% endmacro %}{{ h() }}"
    "{% if messages %}{% macro inner() %}I{{ messages | length }}{% endmacro %}{{ inner() }}{% endif %}",
    # a namespace and the output counter shared by macros and the root
    "{% set ns = namespace(n=0) %}{% macro bump(m) %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endmacro %}"
    "{% for m in messages %}{{ bump(m) }}{% endfor %}{{ ns.n }}",
]


def render(template: ChatTemplate, messages):
    try:
        return "ok", template.render(messages, variables={"bos_token": "<s>"}).text
    except ChatTemplateError as exc:
        return "error", exc.template_message


@pytest.mark.parametrize("source", HOISTED)
def test_hoisted_macros_equal_jinja_render_after_render(source):
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    assert fast._fast is not None
    for _ in range(3):  # the instance is reused: nothing of one render reaches the next
        for messages in MESSAGES:
            assert render(fast, messages) == render(jinja, messages)


def test_root_level_macros_are_defined_once_per_instance():
    from prompt_style_hf.environment import HF_CHAT
    from prompt_style_hf.fastpath.template import _generate

    from prompt_style import safe

    env = safe.environment(HF_CHAT)
    source = _generate(env, env.parse(HOISTED[1]))
    assert "def _ps_instance(" in source
    assert "        macro = _ps_m0" in source and "    _ps_m0 = macro" in source
    compile(source, "<test>", "exec")


def test_an_error_in_a_hoisted_macro_names_its_template_line():
    source = (
        "{% macro a() %}\nA\n{% endmacro %}\n{% macro b(x) %}\n{{ raise_exception('bad ' ~ x) }}\n"
        "{% endmacro %}\n{{ a() }}{{ b(1) }}"
    )
    with pytest.raises(ChatTemplateError) as caught:
        ChatTemplate(source).render([{"role": "user", "content": "x"}])
    assert caught.value.template_message == "bad 1"
    assert caught.value.line == 5


def test_budgets_still_stop_hoisted_macros_and_the_next_render_is_right():
    source = "{% macro a(n) %}{% if n %}{{ a(n - 1) }}{{ a(n - 1) }}{% endif %}{% endmacro %}"
    source += "{{ a(messages | length) }}."
    template = ChatTemplate(source)
    with limits_scope(JinjaLimits(max_macro_calls=100)):
        with pytest.raises(LimitError) as caught:
            template.render([{"role": "user", "content": "x"}] * 12)
        assert caught.value.limit == "max_macro_calls"
        assert template.render([{"role": "user", "content": "x"}] * 2).text == "."


def test_nothing_of_a_render_stays_in_its_instance():
    template = ChatTemplate(HOISTED[0])
    template.render([{"role": "user", "content": "kept?"}])
    # (plain messages: rendered by the compilation for them, the general one if it is the same)
    module = template._fast_for({}).template.root_render_func.__globals__
    (instance,) = module["_ps_roots"]
    cells = dict(zip(instance.__code__.co_freevars, instance.__closure__ or ()))
    shared = {name for name in cells if not name.startswith("_ps_m") and name not in ("missing", "environment")}
    assert {"context", "_ps_b"} <= shared
    assert {name: cells[name].cell_contents for name in shared} == dict.fromkeys(shared)


def test_renders_in_several_threads_at_once():
    source = HOISTED[1] + "{% for m in messages %}{{ m.content }}{% endfor %}"
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    conversations = [[{"role": "user", "content": str(i) * (i % 7)}] * (1 + i % 4) for i in range(40)]
    expected = [render(jinja, messages) for messages in conversations]
    failures: list[int] = []

    def work() -> None:
        for _ in range(20):
            for i, messages in enumerate(conversations):
                if render(fast, messages) != expected[i]:
                    failures.append(i)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
