"""Every budget of the sandbox holds on the fast code generator's path too.

The fast generator checks budgets inline (a local count of the characters that
``+``, ``~``, printed strings and string filters build, loops counted at once, a
deadline check point per iteration and per macro call) and falls back on the
sandbox's own functions on its slow paths. Each payload here goes through a chat
template rendered by the fast engine, with small budgets, and must stop with the
budget named; the Jinja engine stops it too.
"""

from __future__ import annotations

import pytest
from prompt_style_hf.chat_template import ChatTemplate
from prompt_style_hf.fastpath.codegen import FastCodeGenerator
from prompt_style_hf.fastpath.template import _generate

from prompt_style import JinjaLimits, LimitError
from prompt_style.safe import jinja_env
from prompt_style.safe.limits import limits_scope

SMALL = JinjaLimits(
    max_source=2000,
    max_tokens=500,
    max_output=1000,
    max_string=1000,
    max_items=100,
    max_range=50,
    max_loop_iterations=500,
    max_macro_calls=1000,
    max_work=5000,
    max_filter_input=300,
    max_int_bits=256,
    deadline=0.2,
)
MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]

PAYLOADS = [
    # + of two strings, inline: the count reaches the room, the slow path names max_string
    ("max_string", "{{ ('a' * 600) + ('a' * 600) }}"),
    ("max_string", "{{ 'a' + 'b' * 2000 }}"),
    ("max_string", "{% set x = 'a' * 600 %}{{ x + x }}"),
    ("max_string", "{% set x = 'a' * 600 %}{% set y = x + x %}"),
    # a chain of + joined at once: its slow path adds one + at a time
    ("max_string", "{% set x = 'a' * 600 %}{{ '<' + x + '|' + x + '>' }}"),
    ("max_string", "{% set x = 'a' * 600 %}{% set y = '<' + x + '|' + x + '>' %}"),
    ("max_string", "{% set x = 'a' * 400 %}{{ '<' + x + x + x + '>' }}"),
    # ~ of strings, inline
    ("max_string", "{% set x = 'a' * 600 %}{{ x ~ x }}"),
    ("max_string", "{% set x = 'a' * 600 %}{% set y = '<' ~ x ~ x %}"),
    # a printed string longer than max_output
    ("max_output", "{{ bos_token }}"),
    ("max_output", "{% for i in range(40) %}{{ 'x' * 40 }}{% endfor %}"),
    (
        ("max_output", "max_work"),  # the output is measured at the end; what it took to build it, as it goes
        "{% for m in messages %}{% for i in range(45) %}{{ '<' + 'x' * 20 + '>' }}{% endfor %}{% endfor %}",
    ),
    # trim/lower/upper inline
    ("max_string", "{{ (bos_token ~ '')|trim }}"),
    ("max_string", "{% set x = 'ß' * 300 %}{{ (x ~ x)|upper }}"),
    # loops counted at once, and per item
    ("max_loop_iterations", "{% for i in range(50) %}{% for j in range(50) %}{% endfor %}{% endfor %}"),
    ("max_loop_iterations", "{% for i in range(50) %}{% for j in range(50) %}{{ loop.index }}{% endfor %}{% endfor %}"),
    ("max_loop_iterations", "{% for m in big %}{% for n in big %}{% endfor %}{% endfor %}"),
    ("max_loop_iterations", "{% for m in big %}{% for n in big|select %}{% endfor %}{% endfor %}"),
    ("max_items", "{{ big|selectattr('x')|list }}{{ (big * 2)|selectattr('x')|list }}"),
    ("max_items", "{{ huge|list|length }}"),
    # a loop over a dict's |items (taken whole) and a loop filter: counted as Jinja's renderer counts them
    ("max_items", "{% for k, v in wide|items %}{% endfor %}"),
    ("max_loop_iterations", "{% for i in range(20) %}{% for k, v in dict40|items %}{% endfor %}{% endfor %}"),
    (
        "max_loop_iterations",
        "{% for i in range(20) %}{% for m in big if m.x %}{% if loop.last %}{% endif %}{% endfor %}{% endfor %}",
    ),
    ("max_loop_iterations", "{% for i in range(20) %}{% for m in big if not m.x %}{% endfor %}{% endfor %}"),
    (
        ("max_work", "max_output"),
        "{% for i in range(20) %}{% for m in big if m.x %}" + "x" * 30 + "{% endfor %}{% endfor %}",
    ),
    # literal text a loop prints, charged per iteration
    (
        ("max_work", "max_output"),
        "{% for i in range(50) %}{% for m in messages %}" + "x" * 60 + "{% endfor %}{% endfor %}",
    ),
    (
        ("max_work", "max_output"),
        "{% for i in range(50) %}{% for m in messages %}{{ '" + "x" * 60 + "' }}{% endfor %}{% endfor %}",
    ),
    (
        "max_work",
        "{% for i in range(50) %}{% set y %}{% for m in messages %}"
        + "x" * 60
        + "{% endfor %}{% endset %}{% endfor %}",
    ),
    ("max_work", "{% for i in range(50) %}{% set y = 'x' * 200 %}{% endfor %}"),
    # a macro's result, charged when it returns
    ("max_work", "{% macro m() %}{% for i in range(40) %}{{ 'x' * 300 }}{% endfor %}{% endmacro %}{{ m()|length }}"),
    ("max_work", "{% macro m() %}{{ 'x' * 900 }}{% endmacro %}{% for i in range(40) %}{% set y = m() %}{% endfor %}"),
    # % and * still go through the sandbox
    ("max_string", "{{ '%2000s' % 'x' }}"),
    ("max_int_bits", "{{ (2 ** 200) * (2 ** 200) }}"),
    # str methods called directly are charged; those that can amplify are sized first
    ("max_string", "{% set x = 'ß' * 600 %}{{ x.upper() }}"),
    ("max_string", "{% set x = 'ß' * 600 %}{{ x.upper() + '' }}"),
    ("max_string", "{{ 'x'.ljust(2000) }}"),
    ("max_string", "{{ ('a' * 100).replace('a', 'bb' * 10) }}"),
    (
        "max_work",
        "{% set x = 'ab ' * 90 %}{% for i in range(20) %}{% for j in range(20) %}{% set y = x.split() %}"
        "{% endfor %}{% endfor %}",
    ),
    ("max_items", "{% set x = 'a b ' * 200 %}{% set y = x.split() %}"),
    # macro calls are counted (and each is a check point of the deadline)
    (
        "max_macro_calls",
        "{% macro a(n) %}{% if n %}{% set x = a(n-1) %}{% set y = a(n-1) %}{% endif %}{% endmacro %}{{ a(40) }}",
    ),
    ("max_macro_calls", "{% macro a(n) %}{% if n %}{{ a(n-1) }}{{ a(n-1) }}{% endif %}{% endmacro %}{{ a(40) }}"),
    (
        "max_macro_calls",
        "{% macro b() %}{{ caller() }}{{ caller() }}{% endmacro %}{% for i in range(20) %}{% for j in range(20) %}"
        "{% call b() %}x{% endcall %}{% endfor %}{% endfor %}",
    ),
    ("recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
]


def stop(source: str, engine: str, limits: JinjaLimits = SMALL) -> LimitError:
    template = ChatTemplate(source, engine=engine)
    if engine == "auto":
        assert template._fast is not None, "the fast generator should take this template"
    variables = {
        "bos_token": "b" * 2000,
        "big": [{"x": 1}] * 60,
        "huge": [1] * 150,
        "wide": {str(i): i for i in range(150)},
        "dict40": {str(i): i for i in range(40)},
    }
    with limits_scope(limits), pytest.raises(LimitError) as info:
        template.render(MESSAGES, variables=variables)
    return info.value


@pytest.mark.parametrize("engine", ["auto", "jinja"])
@pytest.mark.parametrize("limit, source", PAYLOADS)
def test_each_budget_stops_the_fast_engine(limit, source, engine):
    error = stop(source, engine)
    assert error.limit in ((limit,) if isinstance(limit, str) else limit), error


def test_the_deadline_stops_a_long_loop_of_cheap_iterations():
    """Loops over a sequence are counted at once: the deadline is checked at every iteration."""
    source = "{% for i in range(100000) %}{% for j in range(100000) %}{{ loop.index0 % 2 }}{% endfor %}{% endfor %}"
    limits = SMALL.replace(max_range=10**6, max_loop_iterations=10**12, max_work=10**15, max_output=10**15)
    assert stop(source, "auto", limits).limit == "deadline"


@pytest.mark.parametrize("engine", ["auto", "jinja"])
def test_the_deadline_stops_macros_within_their_count(engine):
    """Every macro call is a check point of the deadline too."""
    source = "{% macro a(n) %}{% if n %}{{ a(n-1) }}{{ a(n-1) }}{% endif %}{% endmacro %}{{ a(40) }}"
    assert stop(source, engine, SMALL.replace(max_macro_calls=10**12)).limit == "deadline"


def test_macro_calls_are_counted_alike_by_both_engines():
    """The fast engine counts a macro call where Jinja's renderer does (macros, caller(),
    not {% generation %} bodies), so both accept the same templates."""
    source = (
        "{% macro m(x) %}{{ x }}{% endmacro %}{% macro c() %}[{{ caller() }}]{% endmacro %}"
        "{% for i in range(5) %}{{ m(i) }}{% call c() %}{{ m(i) }}{% endcall %}{% endfor %}"
        "{% generation %}{{ m(9) }}{% endgeneration %}"
    )
    from prompt_style.safe._sandbox import budget as sandbox_budget

    counts = []
    for engine in ("auto", "jinja"):
        with limits_scope(SMALL):
            ChatTemplate(source, engine=engine).render(MESSAGES, variables={})
        counts.append(sandbox_budget._SPARE[-1].calls)
    assert counts == [21, 21]


def test_inline_checks_are_in_the_generated_code():
    """The common operations are checked inline, not through the sandbox's functions."""
    env = jinja_env.environment(ChatTemplate("x")._fast.environment and _profile())
    generator = FastCodeGenerator(env, None, "<test>", optimized=False)
    source = (
        "{% for m in messages %}{{ '<' + m['role'] + '>' + m['content'] | trim }}{{ m['role'] ~ '\\n' }}"
        "{{ m.content }}{% endfor %}{{ 'a' + x }}"
    )
    generator.visit(jinja_env.prepare_tree(env.parse(source)))
    code = generator.stream.getvalue()
    assert "call_binop" not in code and "environment.finalize" not in code
    assert "_ps_w := _ps_w +" in code and "_ps_room" in code
    assert "if _ps_b.due: _ps_b.tick()" in code


def test_chains_of_three_strings_or_more_are_one_f_string():
    """'<' + role + '>' + content: one f-string of the parts (each checked to be a str
    first), two strings a plain +."""
    template = ChatTemplate("{% for m in messages %}{{ '<' + m.role + '>' + m.content }}{{ m.role + '|' }}{% endfor %}")
    code = _generate(template._fast.environment, template._fast.environment.parse(template.source))
    assert "('<' f'{t_" in code and "''.join((" not in code
    assert template.render(MESSAGES).text == "<user>hiuser|<assistant>helloassistant|"


def test_a_printed_name_nothing_sets_prints_nothing_inline():
    """{{ bos_token }} without a bos_token: '' written in place of Jinja's Undefined (which
    prints as nothing) and counted inline as a string of no characters, as print_value
    charges nothing for it; a name set by the template, or an argument, reads as before."""
    template = ChatTemplate("{{ bos_token }}{% macro f(a) %}{{ a }}{% endmacro %}{{ f() }}{{ f('a') }}")
    assert template._fast is not None
    code = _generate(template._fast.environment, template._fast.environment.parse(template.source))
    assert "('' if l_0_bos_token is missing else l_0_bos_token)" in code
    assert "undefined(name='bos_token')" not in code
    assert template.render(MESSAGES).text == "a"
    assert template.render(MESSAGES, variables={"bos_token": "<s>"}).text == "<s>a"
    with limits_scope(SMALL), pytest.raises(LimitError) as info:
        template.render(MESSAGES, variables={"bos_token": "b" * 2000})
    assert info.value.limit == "max_output"


def test_a_str_filter_of_an_undefined_value_is_checked_as_the_guard_checks_it():
    """``param.description|trim`` where there is none: Jinja's Undefined trimmed is '',
    after the guard's checks (its size as text against max_string), which depend on the
    limits only; once the guarded filter let one through under some limits, the same
    limits give '' directly, and other limits are checked again by the guard."""
    source = "{% for m in messages %}[{{ m.nope|trim }}{{ m.nope|upper }}{{ nothing|lower }}]{% endfor %}"
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    assert fast._fast is not None
    for _ in range(3):
        assert fast.render(MESSAGES).text == jinja.render(MESSAGES).text == "[][]"
    tiny = SMALL.replace(max_string=5)  # an undefined value sizes as 9 characters of text
    for template in (jinja, fast, fast):
        with limits_scope(tiny), pytest.raises(LimitError) as info:
            template.render(MESSAGES)
        assert info.value.limit == "max_string"
    with limits_scope(SMALL):
        assert fast.render(MESSAGES).text == "[][]"


def test_a_key_known_when_it_runs_is_tested_inline_when_a_dict_lacks_it():
    """``map[key] is defined``: a str key the dict does not hold and that names nothing of a
    dict is undefined, inline; a key naming a dict method goes to the sandbox (defined)."""
    source = (
        "{% set m = {'a': 1} %}{% for k in ['a', 'b', 'items', '__class__', 'get'] %}"
        "{{ m[k] is defined }}{{ m[k] is undefined }}{% endfor %}"
    )
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    code = _generate(fast._fast.environment, fast._fast.environment.parse(source))
    assert "not in _ps_dict_attributes else" in code
    expected = "TrueFalse" + "FalseTrue" + "TrueFalse" + "FalseTrue" + "TrueFalse"
    assert fast.render(MESSAGES).text == jinja.render(MESSAGES).text == expected


def test_a_selection_of_nothing_taken_whole_is_an_empty_list_inline():
    """``tools|selectattr(...)|list`` without tools: [] inline while the render is not
    due (the filter's check point), the prepared filter otherwise; as Jinja renders it."""
    source = (
        "{{ tools|selectattr('type', 'equalto', 'x')|list|length }}{{ []|selectattr('type')|list }}"
        "{{ (messages|selectattr('role', 'equalto', 'user')|list)[0].content }}{{ nothing|select|list }}"
    )
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    code = _generate(fast._fast.environment, fast._fast.environment.parse(source))
    assert "is None or type(" in code and "and not _ps_b.due) else " in code
    assert "len(((t_" in code  # x|list|length: the length of the list, no type tests
    assert fast.render(MESSAGES).text == jinja.render(MESSAGES).text == "0[]hi[]"
    tools = [{"type": "x"}, {"type": "y"}]
    assert fast.render(MESSAGES, tools=tools).text == jinja.render(MESSAGES, tools=tools).text == "1[]hi[]"


def _profile():
    from prompt_style_hf.environment import HF_CHAT

    return HF_CHAT


@pytest.mark.parametrize(
    "source",
    [
        # a chain of + whose operands are not all strings: the same result or error as Jinja
        "{{ 'a' + 1 + raise_exception('boom') }}",
        "{{ 'a' + nothing + raise_exception('boom') }}",
        "{{ 'a' + ('b'|safe) + 'c' + messages[0]['role'] }}",
        "{{ 'a' + [1] + 'b' }}",
        "{{ 'x' + messages[5]['role'] + 'y' }}",
        "{{ 'x' + messages[0].role + messages[1].nothing + 'y' }}",
        "{{ 'x' + messages[0].role + (messages|length) + 'y' }}",
        "{% set n = 'x' + messages[0]['content'] + '|' + messages[1]['content'] %}{{ n }}",
        "{{ 1 + 2 + 3 }}{{ messages|length + 1 }}",
        "{{ 'a' ~ 1 ~ none ~ nothing ~ ('b'|safe) }}",
        "{{ ('a' + 'b')|upper + ('c' ~ 'd')|trim + '!' }}",
        "{% macro m(x) %}<{{ x }}>{% endmacro %}{{ 'a' + m('b') + 'c' }}{{ m(1) ~ m(none) }}",
        "{{ (messages[0]['content'] * 2) + '|' + messages[0].role|upper }}",
        "{{ '' + '' + messages[0].content[0:0] }}",
        # str methods called directly on a str, through the sandbox on anything else
        "{{ messages[0].content.strip() }}{{ (' x ').strip(' ') }}{{ 'ß'.upper() }}{{ 'a\r\nb'.replace('\r\n', '') }}",
        "{{ messages[0].content.startswith('h') }}{{ messages[0].content.index('i') }}",
        "{{ messages[0].content.index('z') }}",
        "{{ messages.startswith('h') }}",
        "{{ nothing.strip() }}",
        "{{ none.strip() }}",
        "{{ messages[0].content.strip(1) }}",
        "{{ 'abc'.replace('b', 'xx') }}{{ 'abc'.replace('b', '', 1) }}",
        # defined tests of keys, inline on dicts
        "{{ messages[0].role is defined }}{{ messages[0].x is defined }}{{ messages[0]['x'] is undefined }}"
        "{{ messages[0].items is defined }}{{ nothing.x is defined }}{{ 'abc'.x is defined }}"
        "{{ {'a': nothing}.a is defined }}{{ messages[0].role is not defined }}",
        "{{ tools is defined }}{{ nothing is defined }}{{ nothing is undefined }}{% set u = nothing %}"
        "{{ u is defined }}{{ messages is defined }}{% for m in messages %}{{ m is defined }}{{ loop is defined }}"
        "{{ u is defined }}{% set u = 1 %}{{ u is defined }}{% endfor %}{{ u is undefined }}"
        "{% macro f(a, b=1) %}{{ a is defined }}{{ b is defined }}{{ c is defined }}{{ u is defined }}{% endmacro %}"
        "{{ f() }}{{ f(1) }}{% set ns = namespace(a=1) %}{{ ns is defined }}{{ namespace is defined }}",
        "{{ messages|selectattr('x', 'defined')|list }}{{ messages|rejectattr('role', 'defined')|list }}"
        "{{ messages|selectattr('role', 'undefined')|list|length }}{{ [{'a': nothing}]|selectattr('a')|list }}"
        "{{ messages|selectattr('role', 'equalto', 'user')|list }}{{ ['a', 1]|select('equalto', 'a')|list }}",
        # attributes of the characters of a text: an undefined value each time
        "{{ messages[0].content|selectattr('type', 'equalto', 'image')|list }}"
        "{{ messages[1].content|rejectattr('type', 'equalto', 'text')|list }}"
        "{{ ['ab', {'type': 'x'}, 'c']|selectattr('type', 'undefined')|list }}"
        "{{ 'abc'|selectattr('upper')|list|length }}{{ 'abc'|selectattr('type', 'none')|list }}",
        "{{ 'abc'|selectattr('type', 'lt', 3)|list }}",
        # comparisons of keys with constants, inline
        "{{ messages[0].role == 'user' }}{{ messages[0]['x'] == 'a' }}{{ messages[0].x != none }}"
        "{{ 'abc'.x == 'a' }}{{ 'abc'.upper == 'x' }}{{ nothing.x == 1 }}{{ messages[0].items == 1 }}"
        "{{ [1]['x'] != 1 }}{{ {'a': nothing}.a == 1 }}{{ messages[0].role != 'user' }}",
        "{% for c in messages[0].content %}{{ c['type'] == 'image' }}{{ loop.index }}{{ c }}{% endfor %}",
        "{{ (1).x == 1 }}",
        # filters that only read their value, inline
        "{{ messages|length }}{{ 'abc'|length }}{{ nothing|length }}{{ (messages|first).role }}{{ []|first }}"
        "{{ messages|last }}{{ 'abc'|first }}{{ nothing|default('d') }}{{ none|default('d') }}{{ nothing|d }}"
        "{{ messages|default }}{{ 1|string }}{{ 'a'|string }}{{ messages|list|length }}{{ 'ab'|list }}"
        "{{ (1, 2)|list }}{{ 'abc'|capitalize }}{{ nothing|capitalize }}{{ nothing|list }}{{ none|first }}",
        "{{ messages|selectattr('role')|list|length }}{{ messages|map(attribute='role')|list }}",
        # list items by constant index, inline
        "{{ messages[0].role }}{{ messages[-1].role }}{{ messages[1].role }}{{ messages[-2].role }}"
        "{{ messages[2] }}{{ messages[-3] }}{{ 'abc'[0] }}{{ nothing[0] }}{{ {0: 'a'}[0] }}{{ (1, 2)[-1] }}",
        # dict methods called directly on a dict
        "{{ messages[0].get('role') }}{{ messages[0].get('x', 'd') }}{{ messages[0].items()|list }}"
        "{{ {'get': 1}.get('get') }}{{ 'abc'.get('x') }}{{ nothing.get('x') }}{{ messages.get('x') }}",
        "{{ 'abc'|selectattr('type', 'divisibleby', 3)|list }}",
        # comparisons with a constant operand, and selections of nothing
        "{{ 'role' in messages[0] }}{{ 'x' in nothing }}{{ 'a' in ['a'] }}{{ 1 in messages }}{{ 'e' in 'hello' }}"
        "{{ 'b' not in ('a',) }}{{ 2 > messages | length }}{{ none in [none] }}{{ 'x' == nothing }}{{ 1 < 2.5 }}",
        "{{ none|selectattr('type', 'equalto', 'x')|list }}{{ []|select|list }}{{ ()|reject|list }}"
        "{{ ''|select|list }}{{ nothing|selectattr('a')|list }}{% for x in none|select %}{{ x }}{% endfor %}",
        # items by a key known only when it runs, and whether they are defined
        "{% set m = {'a': 1, 'items': 2, 3: 'three', 'u': nothing} %}{% for k in ['a', 'b', 'items', 'keys', 3, 4]"
        " %}{{ m[k] if m[k] is defined else '-' }}{{ m[k] is undefined }}{{ messages[0][k] is defined }}"
        "{{ 'abc'[k] is defined }}{{ nothing[k] is defined }}{% endfor %}{{ m['u' ~ ''] is defined }}"
        "{{ messages[loop_index | default(0)] is defined }}{{ {'x': 1}[messages[0].role] is defined }}",
        # chains of + and ~ joined as one f-string: constants with braces, quotes, backslashes
        "{% for m in messages %}{{ '{' + m.role + '}\\'\"' + m.content + '\\n{x}' }}{{ m.role ~ '{}' ~ m.content ~ 1 }}"
        "{% set y = '<' + m.role + '|' + m.content + '>' %}{{ y }}{{ '{' + m.nope + '}' }}{{ '[' + 1 + ']' }}"
        "{% endfor %}",
        # a name the loop body assigns starts each iteration as the context has it (read once)
        "{% set x = 'outer' %}{% for m in messages %}[{{ x }}{% set x = m.role %}{{ x }}{% for c in 'ab' %}"
        "{{ x }}{% set x = c %}{{ x }}{% endfor %}{{ x }}]{% endfor %}{{ x }}{% macro f() %}{% for i in [1, 2] %}"
        "{{ y }}{% set y = i %}{% endfor %}{% endmacro %}{{ f() }}{% set y = 'late' %}{{ f() }}",
        # a constant in a dict (tested first), a text, a list, an undefined value
        "{% for m in messages %}{{ 'role' in m }}{{ 'x' not in m }}{{ 'h' in m.content }}{{ 'user' in [m.role] }}"
        "{{ 1 in m }}{{ 'a' in m.nope }}{% endfor %}{{ 'a' in nothing }}{{ 'a' not in {'a': 1} }}",
        # a printed name that nothing sets: nothing printed (Jinja's Undefined), in the root, a
        # loop and a macro; a name set later in the loop, or by a macro's argument
        "{{ nothing }}|{{ bos_token }}{% for m in messages %}{{ x }}{% set x = m.role %}{{ x }}{{ nothing }}"
        "{% endfor %}{% macro f(a, b) %}{{ a }}{{ b }}{{ nothing }}{% endmacro %}{{ f(1) }}|{{ f(1, 2) }}"
        "{% set bos_token = 'B' %}{{ bos_token }}",
        "{% set k = 'role' %}{{ messages[0][k] }}{{ messages[1][k ~ ''] }}{{ {}[k] }}{{ messages[0][k ~ 'x'] }}",
        # a loop over |items: a dict's items taken whole; anything else through the filter
        "{% for k, v in messages[0]|items %}{{ k }}={{ v }}{{ loop.index }}/{{ loop.length }};{% endfor %}"
        "{% for k, v in {}|items %}x{% else %}empty{% endfor %}{% for k in nothing|items %}{{ k }}{% endfor %}",
        "{% for k, v in messages|items %}{{ k }}{% endfor %}",
        "{% for p in messages[0]|items %}{{ p[0] }}{{ p|length }}{% endfor %}{{ messages[0]|items|list|length }}",
        # loop filters: loop.* over the filtered items, the test reading outer names, else, nesting
        "{% set skip = 'assistant' %}{% for m in messages if m.role != skip %}{{ m.content }}{{ loop.index }}"
        "{{ loop.length }}{{ loop.last }}{{ loop.first }}{{ loop.revindex }}{% endfor %}",
        "{% for k, v in messages[0]|items if k != 'role' %}{{ k }}{{ v }}{% if not loop.last %},{% endif %}"
        "{% endfor %}{% for m in messages if m.nope %}x{% else %}none{% endfor %}",
        "{% for m in messages if m.role == 'user' %}{% for c in m.content if c != 'i' %}{{ c }}{{ loop.index }}"
        "{% endfor %}|{{ loop.index }}{% endfor %}",
        "{% for m in messages if m.role == 'user' %}{% set r = m.role %}{{ r }}{% endfor %}{{ r is defined }}",
        "{% for m in messages if m is mapping %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}",
        "{% for x in nothing if x %}{{ x }}{% else %}undefined{% endfor %}{% for x in 'ab' if x != 'a' %}{{ x }}"
        "{% endfor %}",
    ],
)
def test_inline_operations_equal_jinja(source):
    fast, jinja = ChatTemplate(source), ChatTemplate(source, engine="jinja")
    assert fast._fast is not None

    def outcome(template):
        try:
            return "ok", template.render(MESSAGES).text
        except Exception as exc:  # the same error, with the same message
            return type(exc).__name__, getattr(exc, "template_message", str(exc))

    assert outcome(fast) == outcome(jinja)


@pytest.mark.parametrize(
    "source",
    [
        # the inner loop stops after 3 of 60 iterations: 80 counted, not 1,220
        "{% for j in range(20) %}{% for i in big %}{% if loop.index > 2 %}{% break %}{% endif %}{% endfor %}"
        "{% endfor %}ok",
        # its literal text is charged for the iterations that run: 2,400 characters, not 72,000
        "{% for j in range(20) %}{% set y %}{% for i in big %}{% if loop.index > 2 %}{% break %}{% endif %}"
        + "x" * 20
        + "{% endfor %}{% endset %}{% endfor %}ok",
        "{% for m in (messages * 30) %}{% if m.role == 'assistant' %}{% break %}{% endif %}{% endfor %}ok",
    ],
)
def test_a_loop_that_breaks_counts_only_what_runs(source):
    """A loop with {% break %} is counted one iteration at a time, as Jinja's own
    renderer counts it, so both engines stop (or not) on the same templates."""
    limits = SMALL.replace(max_work=3000)
    variables = {"big": [{"x": 1}] * 60}
    for engine in ("auto", "jinja"):
        with limits_scope(limits):
            assert ChatTemplate(source, engine=engine).render(MESSAGES, variables=variables).text == "ok"


def test_the_fast_engine_joins_its_output_as_it_grows():
    """A loop printing a number per iteration (within the counted budgets) keeps the
    output joined as it grows and stops on max_output once it is over, not at the end
    with millions of small strings held (600 MB for ten million)."""
    from prompt_style.safe._sandbox import budget as sandbox_budget

    seen = []
    real = sandbox_budget._compact

    def compact(out, limits):
        seen.append(len(out))
        return real(out, limits)

    source = "{% for i in range(100000) %}{% for j in range(40) %}{{ i }}{% endfor %}{% endfor %}"
    limits = JinjaLimits(max_output=1_000_000, max_loop_iterations=10_000_000, max_range=100_000)
    template = ChatTemplate(source)
    assert template._fast is not None
    sandbox_budget_compact = sandbox_budget._compact
    try:
        sandbox_budget._compact = compact
        with limits_scope(limits), pytest.raises(LimitError) as info:
            template.render(MESSAGES, variables={})
    finally:
        sandbox_budget._compact = sandbox_budget_compact
    assert info.value.limit == "max_output"
    assert seen and max(seen) < 2 * 1_000_000, seen  # joined long before the end


@pytest.mark.parametrize(
    "source",
    [
        "{{ key in names }}",
        "{{ key not in names }}",
        "{% for k in names if k not in names %}{% endfor %}",
        "{{ '" + "k" * 900 + "' in names }}",
    ],
)
def test_in_a_list_is_sized_by_both_engines(source):
    """``text in list`` compares the text with every item: inline within max_op_cost
    (the list's length times the text's), else refused as the sandbox refuses it."""
    variables = {"key": "k" * 900, "names": ["k" * 900] * 90}
    for engine in ("auto", "jinja"):
        template = ChatTemplate(source, engine=engine)
        with limits_scope(SMALL.replace(max_op_cost=50_000)), pytest.raises(LimitError) as info:
            template.render(MESSAGES, variables=variables)
        assert info.value.limit == "max_op_cost", engine
        with limits_scope(SMALL.replace(max_op_cost=100_000)):
            template.render(MESSAGES, variables=variables)  # 81,000: within
