"""Simple Jinja compiled to plain Python (prompt_style.fields.jinja_compiler) against the sandbox.

Every template and record here is rendered twice: by the compiled function (which
hands a record it is not sure of to the sandbox) and by the sandbox alone
(``jinja_env.render(compile_template(...))``). Both must give the same text, or the
same exception (type and message); through the extractors, the same FieldError.
The records are chosen to be awkward (braces, ``{{ }}`` and ``{% raw %}`` in values,
unicode, whitespace, None/bool/float/list/dict values, missing fields, short lists,
dict methods against fields, trailing newlines), and every Jinja template that
lm-evaluation-harness 0.4.13 ships in its task files (tests/golden/lm_eval_jinja) is
rendered on records made for it. No timings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prompt_style import FieldError, JinjaLimits, LimitError, compile_field
from prompt_style.fields import jinja_compiler as jc
from prompt_style.formats.lm_eval.fields import LM_EVAL_JINJA, LmEvalField
from prompt_style.formats.task_template.template import PROMPTSOURCE, SCIRIFF
from prompt_style.safe import jinja_env as J
from prompt_style.safe.limits import limits_scope

PROFILES = {"fields": J.FIELDS, "lm-eval": LM_EVAL_JINJA, "sciriff": SCIRIFF, "promptsource": PROMPTSOURCE}
TEMPLATES_FILE = Path(__file__).parent / "golden/lm_eval_jinja/templates.json"


def outcome(call: Any, *args: Any) -> tuple[Any, ...]:
    try:
        return ("ok", call(*args))
    except Exception as exc:  # the exact exception is what is compared
        return ("error", type(exc), str(exc))


def sandbox_render(source: str, profile: J.JinjaProfile, record: Any) -> str:
    return J.render(J.compile_template(source, profile), record, record=True)


def sandbox_evaluate(source: str, profile: J.JinjaProfile, record: Any) -> Any:
    return J.evaluate(J.compile_expression(source, profile), record, record=True)


def same(source: str, profile: J.JinjaProfile, record: Any, kind: str = "template") -> tuple[Any, ...]:
    """Both paths' outcomes, asserted equal; returns the outcome."""
    if kind == "template":
        fast, slow = jc.template_renderer(source, profile), sandbox_render
    else:
        fast, slow = jc.expression_evaluator(source, profile), sandbox_evaluate
    got = outcome(fast, record)
    want = outcome(slow, source, profile, record)
    assert got == want or repr(got) == repr(want), f"{kind} {source!r} on {record!r}"  # repr: nan
    if got[0] == "ok":
        assert type(got[1]) is type(want[1])
    return got


def taken(source: str, profile: J.JinjaProfile, record: Any, kind: str = "template") -> bool:
    """Whether the compiled function renders ``record`` itself."""
    compiled = jc.compile_simple(source, profile, kind)
    return compiled is not None and compiled.function(record) is not jc.SLOW


# -- records ---------------------------------------------------------------------------

AWKWARD_VALUES: list[Any] = [
    "plain",
    "  spaced  ",
    "",
    "{{ q }} {% if x %}y{% endif %} {# c #}",
    "{% raw %}{{ raw }}{% endraw %}",
    "{0} {q} %s }} {{",
    "Ünïcødé — 你好 \u2028 \x00 \ud800 tab\t",
    "trailing newline\n",
    "\n\n",
    None,
    True,
    False,
    0,
    -7,
    10**30,
    1.5,
    float("nan"),
    -0.0,
    1e300,
    ["a", 1, None, 2.5, ["n"]],
    [],
    ("t", 1),
    {"k": "v", "items": "field", "n": None},
    {},
]

RECORDS: list[Any] = [
    {"q": "What?", "c": ["a", "b", "c", "d"], "d": {"text": ["x", "y"], "label": "L", "items": "I"}},
    {"q": "  What?  \n", "c": ["{a}", "}}", "{{", "%d"], "d": {"text": "tx", "items": ["i"]}},
    {"q": "{{ c }}", "c": ["only one"], "d": {}},
    {"q": None, "c": [None, True, 1.5, {"k": 1}], "d": {"text": None}},
    {"q": 3, "c": "abcd", "d": ["not", "a", "dict"]},
    {"q": ["list"], "c": ("t0", "t1", "t2", "t3"), "d": {"text": {"0": "zero"}}},
    {"q": {"strip": "field", "text": "t"}, "c": {"0": "a", 0: "int key"}, "d": {"keys": "k"}},
    {"c": ["missing q"], "d": {}},
    {"q": "no c"},
    {"q": "range and self", "range": "r", "self": "s", "c": ["x"], "d": {}},
    {"q": "x" * 3000, "c": ["y" * 2000] * 4, "d": {"text": ["z" * 1000]}},
    {"q": "   " * 500 + "big padding" + "\t" * 500, "c": [[1] * 50, {"a": [1, 2]}, 2**100, None], "d": {}},
    ["not", "a", "mapping"],
    "a string",
]

TEMPLATES: list[str] = [
    "{{q}}",
    "{{ q }}",
    "{{q.strip()}}",
    "{{ q.strip().lower() }}",
    "{{q.upper()}}|{{q.title()}}|{{q.casefold()}}|{{q.swapcase()}}|{{q.capitalize()}}",
    "{{q.lstrip()}}<>{{q.rstrip()}}",
    "{{q.strip()}}\nA. {{c[0]}}\nB. {{c[1]}}\nC. {{c[2]}}\nD. {{c[3]}}\nAnswer:",
    "Question: {{q}}\nAnswer:",
    "{{c[-1]}} {{c[0]}}",
    "{{c.0}} / {{c.1}}",
    "{{c['0']}}",
    '{{d["text"]}}',
    "{{d.text}}",
    "{{d.text[0]}}",
    "{{d.text.0.strip()}}",
    "{{d.items}}",
    "{{d.keys}}",
    "{{d}}",
    "{{c}}",
    "{{ [q, c] }}",
    "{{ ['x', 1, none, true, 2.5] }}",
    "{{ 'literal' }} {{ 3 }} {{ none }} {{ true }} {{ 2.5 }} {{ -1 }}",
    "{{ 'a' 'b' }}",
    "text only\n",
    "",
    "{# comment #}{{q}}{# another #}",
    "{% raw %}{{q}}{% endraw %} {{q}}",
    "  {{- q -}}  \n",
    "{{q}}\n",
    "{{q}}\n\n",
    "line\r\nwindows {{q}}\r\n",
    "{{q}}{{q}}{{q.strip()}}",
    "{{range}}",
    "{{self}}",
    "{{loop}}",
    "{{missing}}",
    "{{q.missing}}",
    "{{c[7]}}",
    "{{q.strip}}",
    "{{q.split()}}",
    "{{q | trim}}",
    "{% if q %}{{q}}{% endif %}",
    "{{ q ~ c }}",
    "{{ q + 'x' }}",
    "{{ c[0:2] }}",
    "{{c.index(q)}}",
    "{{d.text.index(q.strip())}}",
    "{{ ['a', 'b', 'What?'].index(q) }}",
    "{{c.index('a')}} of {{c}}",
    "{{q.index('a')}}",
    "{{c.index(q, 1)}}",
    # filters, '+', computed keys, methods with a literal argument, conditions
    "{{q|trim}}|{{q|lower}}|{{q|upper}}|{{q|capitalize}}|{{q|string}}",
    "{{ q | trim | lower }}",
    "{{q|int}}",
    "{{c[0]|int}} {{d.text|int}}",
    "{{q|title}}",
    "{{q|trim(' ')}}",
    "{{ q + 'x' }}",
    "{{ q + ' ' + c[0] }}",
    "{{ [q + '!', c[1] + '?'] }}",
    "{{ c[0] + c[1] }}",
    "{{ 1 + 2 }}",
    "{{ c[d.label] }}",
    "{{ c[q] }}",
    "{{ ['no', 'yes'][q] }}",
    "{{ 'ABCD'[q] }}",
    "{{ d[q] }}",
    "{{q.split('a')}}",
    "{{q.split('?')[-1].strip()}}",
    "{{q.rsplit(' ')[0]}}",
    "{{q.strip('?')}}|{{q.lstrip(' ')}}|{{q.rstrip('\\n')}}",
    "{{q.removeprefix('Wh')}}{{q.removesuffix('?')}}",
    "{{ q if q is defined else c }}",
    "{{ q if q is not defined else 'none' }}",
    "{{ q if missing is defined else c[0] }}",
    "{{ q if q is none else 'set' }}",
    "{{ 'n' if q is not none else q }}",
    "{{ q.split('####')[-1].strip() if q is defined else d.text }}",
    "{{ q if range is defined else c }}",
    "{{ q if q else c }}",
    "{{ q if q is defined }}",
    "{{ q - 1 }}",
    # '-', {% if %}, {% for %} (a hand-written choice list)
    "{{ q|int - 1 }} {{ c[0]|int - d.text|int }} {{ 3 - 5 }}",
    "{% if q %}[{{q}}]{% endif %}|{% if not q %}none{% else %}some{% endif %}",
    "{% if missing %}m{% elif q %}{{q}}{% elif c %}c{% else %}e{% endif %}",
    "{% if q is defined %}{{q}}{% endif %}{% if q is none %}N{% endif %}{% if d.text is not none %}T{% endif %}",
    "{%- if q -%}\n  {{ q }}  \n{%- endif %}\n",
    "{{q}}\n{% for x in c %}{{ 'ABCD'[loop.index0] }}. {{ x }}\n{% endfor %}Answer:",
    "{% for x in c %}{{loop.index}}/{{loop.length}}{% if loop.first %}F{% endif %}"
    "{% if not loop.last %}, {% endif %}{{loop.revindex}}{{loop.revindex0}}{% endfor %}",
    "{% for x in c %}{% for y in c %}{{x}}{{y}}{{loop.index0}}{% endfor %}{{loop.index}}{% endfor %}",
    "{% for x in d.text %}<{{x}}>{% endfor %}",
    "{% for q in c %}{{q}}{% endfor %}{{q}}",
    "{% for x in c %}{{x|upper}}{{x.strip()}}{{ x + '!' }}{% endfor %}",
    "{% for x in [q, 'lit'] %}<{{x}}>{% endfor %}",
    "{% for x in c %}{% if x %}{{x}}{% else %}-{% endif %}{% endfor %}",
    "{% for x in c %}{{loop}}{% endfor %}",
    "{% for x in c %}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "{% for x in c %}{% else %}empty{% endfor %}",
    "{% for x in c if x %}{{x}}{% endfor %}",
    "{% for k, v in d.items() %}{{k}}{% endfor %}",
    "{% for x in 'abc' %}{{x}}{% endfor %}",
    "{% for x in c %}{{ x if x is defined else q }}{% endfor %}",
    # |length, comparisons with a constant, range()
    "{{ c|length }} {{ q|length }} {{ d|length }} {{ d.text|length }}",
    "{% for i in range(c|length) %}\t{{ 'ABCD'[i] }}: {{ c[i] }}\n{% endfor %}",
    "{% for i in range(q) %}{{ i }}{% endfor %}",
    "{{ 'A' if q == 'What?' else 'B' if q != 3 else c }}",
    "{% if c|length > 2 %}many{% elif c|length >= 1 %}one{% else %}none{% endif %}",
    "{% if q == none %}N{% endif %}{% if q < 5 %}L{% endif %}{% if 1.5 <= q %}G{% endif %}",
    "{{ q if q else c }} {{ c[0] if c else 'empty' }}",
    "{{ range }}{% for i in range(2) %}{{ i }}{% endfor %}",
    "{{ c|join(', ') }}|{{ c|join('') }}|{{ [q, 'x']|join('\\n') }}|{{ d.text|join('-') }}",
    "{{ c|join }} {{ c|join(sep) }} {{ c|join(', ', 'a') }}",
    # '~', replace, top-level {% set %}
    "{{ q ~ c }}|{{ 'Q: ' ~ q ~ '\\nA:' }}|{{ c[0] ~ 1 ~ none ~ d.text }}|{{ q|trim ~ q|length }}",
    "{{ q|replace('a', 'b') }}|{{ q|replace('\\n', ' ')|trim }}|{{ q|replace('', '-') }}|{{ q|replace('?', '') }}",
    "{{ q.replace('W', 'w') }}|{{ c[0].replace('', 'xy') }}|{{ d.text.replace(' ', '') }}",
    "{% set x = q.strip() %}Q: {{ x }}|{{ x ~ '!' }}{% if x %}T{% endif %}",
    "{% set a = c %}{% set n = a|length %}{{ n }}{% for y in a %}{{ y }}{% endfor %}{{ q }}",
    "{% set x = q %}{% for x in c %}{{ x }}{% endfor %}{{ x }}",
    "{% set x = missing %}{{ q }}",
    "{% set q = c %}{{ q }}",
    # 'and' and 'or' in conditions: the right side only when needed
    "{% if q is defined and q|length > 2 %}L{% elif c or missing %}C{% else %}N{% endif %}",
    "{% if not q or c[0] %}a{% endif %}{% if q and (c or d) and not missing is defined %}b{% endif %}",
    "{{ q if q and c else 'none' }}|{{ 'x' if missing is defined or d else 'y' }}",
    # slices, negative literals
    "{{ q[1:] }}|{{ q[:-1] }}|{{ q[n:] }}|{{ c[1:3] }}|{{ c[:-1]|join(',') }}|{{ d.text[0:2] }}|{{ q[-3:-1] }}",
    "{{ q[1:'x'] }}|{{ c[true:] }}|{{ q[::2] }}|{{ d[1:] }}|{{ -3 }}|{{ c[-1] }}",
    "{{ q.split(' ')[:-1]|join(' ') }} {{ q[missing:] }}",
    # first, last, default
    "{{ c|first }}|{{ c|last }}|{{ q|first }}|{{ q|last }}|{{ d.text|first }}|{{ c[0]|last }}",
    "{{ q|default('none') }}|{{ missing|default('m') }}|{{ missing|d(3) }}|{{ missing|default }}|{{ d|default(1) }}",
    "{{ c|first|upper }} {{ (c|last) ~ '!' }} {{ missing|default('x')|upper }}",
    "{{ range|default('r') }} {{ q.x|default('p') }} {{ q|default('a', true) }}",
    "{% set x = q %}{{ x|default('n') }}",
    "{% for y in c %}{{ y|default('z') }}{% endfor %}",
]


@pytest.mark.parametrize("profile", PROFILES.values(), ids=PROFILES.keys())
@pytest.mark.parametrize("source", TEMPLATES)
def test_templates_match_the_sandbox_on_awkward_records(source, profile):
    for record in RECORDS:
        same(source, profile, record)
    for value in AWKWARD_VALUES:
        same(source, profile, {"q": value, "c": [value] * 4, "d": {"text": value, "items": value}})


EXPRESSIONS = [
    "q",
    "q.strip()",
    "c",
    "c[0]",
    "c.1",
    "d.text",
    "d['text'][0]",
    "[q, c[0]]",
    "d.items",
    "'x'",
    "3",
    "c.index(q)",
    "d.text.index(q)",
    "['a', 'b'].index(c[0])",
    "c.index(3)",
    "q|int",
    "c[0]|int",
    "q|trim",
    "c[q]",
    "['no', 'yes'][q]",
    "q + 'x'",
    "q + c[0]",
    "q.split(' ')",
    "q.split('?')[0].strip()",
    "q if q is defined else c",
    "c if q is none else q",
    "q.strip() if missing is defined else 'fallback'",
    "q|int - 1",
    "q - c[0]",
    "c[0]|int - 1",
    "c|length",
    "q == 'What?'",
    "q if q != none else c",
    "range(q|length)",
    "c|join(', ')",
    "q ~ c[0]",
    "'[' ~ q ~ ']'",
    "q|replace(' ', '_')",
    "q.replace('?', '')",
    "c|first",
    "q[2:]",
    "c[:-1]",
    "c|last",
    "missing|default('x')",
    "q|default(none)",
]


@pytest.mark.parametrize("profile", PROFILES.values(), ids=PROFILES.keys())
@pytest.mark.parametrize("source", EXPRESSIONS)
def test_expressions_match_the_sandbox(source, profile):
    for record in RECORDS:
        same(source, profile, record, "expression")
    for value in AWKWARD_VALUES:
        same(source, profile, {"q": value, "c": [value] * 2, "d": {"text": [value]}}, "expression")


def test_values_print_as_jinja_prints_them():
    source = "{{a}}|{{b}}|{{c}}|{{d}}|{{e}}|{{f}}"
    record = {"a": None, "b": True, "c": 1.5, "d": ["x", 1, None], "e": {"k": [1.0]}, "f": -0.0}
    assert taken(source, J.FIELDS, record)
    assert same(source, J.FIELDS, record) == ("ok", "None|True|1.5|['x', 1, None]|{'k': [1.0]}|-0.0")


def test_record_fields_win_over_dict_methods_in_the_fields_profile():
    record = {"d": {"items": "the field", "text": "t"}}
    assert same("{{d.items}}", J.FIELDS, record) == ("ok", "the field")
    assert taken("{{d.items}}", J.FIELDS, record)
    # lm-evaluation-harness's Jinja gives the dict method (which the sandbox refuses to print)
    assert jc.compile_simple("{{d.items}}", LM_EVAL_JINJA) is None
    assert same("{{d.items}}", LM_EVAL_JINJA, record)[0] == "error"
    assert same("{{d.text}}", LM_EVAL_JINJA, record) == ("ok", "t")


def test_compiled_path_is_taken_for_plain_records():
    source = "{{q.strip()}}\nA. {{c[0]}}\nB. {{c[1]}}\nC. {{c[2]}}\nD. {{c[3]}}\nAnswer:"
    for profile in PROFILES.values():
        for record in RECORDS[:2]:
            assert taken(source, profile, record)
    for source in ("{{range}}", "{{q.missing}}", "{{c[7]}}", "{{missing}}"):
        assert not taken(source, J.FIELDS, RECORDS[0])  # the sandbox decides


def test_conditions_loops_and_differences_are_taken_for_plain_records():
    # (other tests' budgets lower the process's least loop budget: the default here, and
    # never above what it was afterwards)
    floor = jc._limits.ITER_FLOOR
    before = floor[0]
    floor[0] = JinjaLimits().max_loop_iterations
    try:
        _conditions_loops_and_differences()
    finally:
        floor[0] = min(floor[0], before)


def _conditions_loops_and_differences() -> None:
    record = {"q": "What?", "c": ["a", "b", "c", "d"], "n": "3", "ctx": ""}
    for source, kind, expected in [
        (
            "{{q}}\n{% for x in c %}{{ 'ABCD'[loop.index0] }}. {{ x }}\n{% endfor %}Answer:",
            "template",
            "What?\nA. a\nB. b\nC. c\nD. d\nAnswer:",
        ),
        ("{% if ctx %}Context: {{ctx}}\n{% endif %}Q: {{q}}", "template", "Q: What?"),
        ("{% for x in c %}{{x}}{% if not loop.last %}, {% endif %}{% endfor %}", "template", "a, b, c, d"),
        ("n|int - 1", "expression", 2),
    ]:
        for profile in PROFILES.values():
            assert jc.compile_simple(source, profile, kind).function(record) == expected
            same(source, profile, record, kind)
    # past the loop cap, or a loop budget below the iterations: the sandbox's
    many = {"q": "Q", "c": ["x"] * (jc._LOOP_CAP + 1)}
    assert not taken("{% for x in c %}{{x}}{% endfor %}", J.FIELDS, many)
    same("{% for x in c %}{{x}}{% endfor %}", J.FIELDS, many)
    with limits_scope(JinjaLimits(max_loop_iterations=2)):
        assert not taken("{% for x in c %}{{x}}{% endfor %}", J.FIELDS, record)
        got = same("{% for x in c %}{{x}}{% endfor %}", J.FIELDS, record)
    assert got[0] == "error" and "max_loop_iterations" in got[2]


def test_concatenation_replace_set_first_last_and_default_compile():
    record = {"q": "  Line one\nline two?  ", "c": ["a", "b"], "n": 3}
    for profile in PROFILES.values():
        for source, kind, expected in [
            ("{{ 'Q: ' ~ q|trim ~ '\\nA:' }}", "template", "Q: Line one\nline two?\nA:"),
            ("{{ c[0] ~ n ~ none }}", "template", "a3None"),
            ("{{ q|replace('\\n', ' ')|trim }}", "template", "Line one line two?"),
            ("{{ q.replace('line', 'LINE') }}", "template", "  Line one\nLINE two?  "),
            ("{% set x = q.strip() %}Q: {{ x }}{% if x %}.{% endif %}", "template", "Q: Line one\nline two?."),
            ("{% set k = c|length %}{% for y in c %}{{ y }}/{{ k }} {% endfor %}", "template", "a/2 b/2 "),
            ("'[' ~ n ~ ']'", "expression", "[3]"),
            ("{{ c|first }}-{{ c|last }}-{{ q|trim|first }}", "template", "a-b-L"),
            ("{{ missing|default('none') }}|{{ n|d(0) }}|{{ c|default }}", "template", "none|3|['a', 'b']"),
        ]:
            assert jc.compile_simple(source, profile, kind).function(record) == expected, source
            assert same(source, profile, record, kind) == ("ok", expected)
    # a replace that would grow past what compiled code builds: the sandbox's
    big = {"q": "x" * 4000}
    assert not taken("{{ q.replace('x', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy' * 6) }}", J.FIELDS, big)


def test_index_of_a_value_compiles():
    # lm-evaluation-harness's ARC, OpenBookQA and MathQA targets
    arc = {"choices": {"label": ["A", "B", "C"], "text": ["x", "y", "z"]}, "answerKey": " B"}
    for profile in PROFILES.values():
        for source in ("{{choices.label.index(answerKey.lstrip())}}", "{{['A', 'B', 'C'].index(answerKey.strip())}}"):
            assert taken(source, profile, arc)
            assert same(source, profile, arc) == ("ok", "1")
            assert same(source[2:-2], profile, arc, "expression") == ("ok", 1)
        for record in (
            {"choices": {"label": ["A"]}, "answerKey": " B"},  # not in the list: the sandbox's error
            {"choices": {"label": "ABC"}, "answerKey": "B"},  # a str's index: the sandbox's
            {"choices": {"label": ["A", ["B"]]}, "answerKey": ["B"]},
            {"choices": {"label": ("A", "B")}, "answerKey": "B"},
            {"choices": {"label": ["A", 2]}, "answerKey": 2},
            {"choices": {"label": {"B": 1}}, "answerKey": "B"},
        ):
            same("{{choices.label.index(answerKey)}}", profile, record)
            same("choices.label.index(answerKey)", profile, record, "expression")
    with limits_scope(JinjaLimits(max_work=1)):
        same("{{choices.label.index(answerKey.lstrip())}}", J.FIELDS, arc)


def test_what_does_not_compile():
    for source in (
        "{% if q == c %}{{q}}{% endif %}",
        "{% if q is string %}{{q}}{% endif %}",
        "{{ 1 < q < 3 }}",
        "{% for x in c %}{{loop}}{% endfor %}",
        "{% for x in c %}{% else %}e{% endfor %}",
        "{{q|title}}",
        "{{q|trim(' ')}}",
        "{{q * 2}}",
        "{{c[0:2:1]}}",
        "{{q.split()}}",
        "{{q.replace('a', 'b', 1)}}",
        "{{q|replace('a', c)}}",
        "{{q|replace('a', 'b', 1)}}",
        # {% set %}: only in the template's own body, a name, set once, not read before
        "{% if q %}{% set x = q %}{% endif %}{{x}}",
        "{% for y in c %}{% set x = y %}{{x}}{% endfor %}",
        "{% set x, y = q, c %}{{x}}",
        "{{x}}{% set x = q %}{{x}}",
        "{% set x = q %}{% set x = c %}{{x}}",
        "{% set x = q %}{{ x if x is defined else c }}",
        "{% set range = q %}{{range}}",
        "{% set x %}block{% endset %}{{x}}",
        "{{q if q}}",
        "{{q if q == c else c}}",
        "{{q if range is defined else c}}",
    ):
        assert jc.compile_simple(source) is None
        assert jc.compile_simple(source, LM_EVAL_JINJA) is None
    for source in ("{{self}}", "{{loop}}", "{{ q", "{{ q.strip(q) }}", "{{ q.split(' ', 1) }}"):
        assert jc.compile_simple(source) is None


# -- budgets ----------------------------------------------------------------------------

BUDGETS = [
    JinjaLimits(max_output=10),
    JinjaLimits(max_output=40),
    JinjaLimits(max_string=5),
    JinjaLimits(max_work=12),
    JinjaLimits(max_work=30, max_output=1000),
    JinjaLimits(max_items=3),
    JinjaLimits(max_int_bits=20),
    JinjaLimits(max_loop_iterations=3),
    JinjaLimits(max_range=1),
]


@pytest.mark.parametrize("limits", BUDGETS, ids=lambda limits: repr(limits)[:60])
def test_budget_errors_are_the_sandboxs(limits):
    sources = [
        "{{q}}",
        "{{q.strip()}}",
        "{{q.strip()}} {{c}}",
        "{{ c }}",
        "literal text longer than ten",
        "{{c[0]}}{{c[1]}}",
        "{{q|upper}} {{c[0]|trim}}",
        "{{q + c[1]}}",
        "{{q.split(' ')}}",
        "{{q.split(' ')[-1] + c[0]}}",
        "{{c[0]|int}}",
        "{{c[q]}}",
        "{{q if q is defined else c}}",
        "{% for x in c %}{{x}}, {% endfor %}",
        "{% for x in c %}{% for y in c %}.{% endfor %}{% endfor %}",
        "{% if q %}{{q}}{% endif %}",
        "{% for i in range(c|length) %}{{c[i]}}{% endfor %}",
        "{{ c|join(', ') }}",
        "{{ q ~ c[0] ~ c }}",
        "{{ q|replace(' ', '___') }}{{ q.replace('', '--') }}",
        "{% set x = q|upper %}{{ x ~ x }}",
        "{{ c|first }}{{ c|last }}{{ missing|default('d' * 1) }}{{ q|default('x') }}",
        "{{ q[1:] }}{{ c[:-1] }}",
    ]
    records = [
        {"q": "short", "c": ["a", "b"]},
        {"q": "   a much longer question text   ", "c": ["x" * 30, "y"]},
        {"q": "q", "c": [[1, 2, 3]] * 5},
        {"q": "a b c d e f g", "c": ["12345678", "9" * 40]},
        {"q": 1, "c": [" 42 ", "3.5", "nan"]},
    ]
    with limits_scope(limits):
        for profile in PROFILES.values():
            for source in sources:
                for record in records:
                    same(source, profile, record)
                    same(
                        source.strip("{} ").replace("}} {{", "") if "{" in source else "q",
                        profile,
                        record,
                        "expression",
                    )


def test_a_value_over_max_output_is_the_sandboxs_error():
    record = {"q": "x" * 50}
    with limits_scope(JinjaLimits(max_output=20)):
        got = same("{{q}}", J.FIELDS, record)
    assert got[0] == "error" and got[1] is LimitError and "max_output" in got[2]


def test_large_values_go_to_the_sandbox_and_render_the_same():
    big = " " + "x" * (jc._CLOCK_CAP + 10) + " "
    record = {"q": big, "c": [big[:100]]}
    assert not taken("{{q.strip()}}", J.FIELDS, record)
    assert same("{{q.strip()}}", J.FIELDS, record) == ("ok", big.strip())
    deep: Any = []
    for _ in range(250):
        deep = [deep]
    same("{{q}}", J.FIELDS, {"q": deep})  # too deep to print: the sandbox's error
    same("q", J.FIELDS, {"q": deep}, "expression")


# -- through the extractors: the same FieldError ------------------------------------------


def _sandboxed(extractor: Any) -> Any:
    """The same extractor with its compiled path switched off."""
    clone = compile_field(extractor.spec, extractor.key)
    if hasattr(clone, "_render"):
        clone._render = lambda record: J.render(J.template(clone.spec), record)
    if hasattr(clone, "_fast"):
        clone._fast = None
    return clone


ERROR_SPECS = [
    "{{q.strip()}} and {{c[7]}}",
    "A: {{missing}}",
    "{{d.zz}} text",
    "{{c.text}} text",
    "{{q.strip()}} {{d.text.zz}}",
    "{{ d.zz }}",
    "{{ c.text }}",
    "{{ c[9] }}",
    "{{ missing.strip() }}",
    "{{ q.strip() }}",
    "{{ d.text[5] }}",
]


@pytest.mark.parametrize("spec", ERROR_SPECS)
def test_extractor_errors_are_the_same_through_both_paths(spec):
    extractor = compile_field(spec, "doc_to_text")
    slow = _sandboxed(extractor)
    for record in RECORDS + [{"q": v, "c": [v], "d": {"text": [v]}} for v in AWKWARD_VALUES]:
        got, want = outcome(extractor, record), outcome(slow, record)
        assert got == want, (spec, record)


def test_extractor_errors_name_the_field():
    ex = compile_field("{{ d.zz }}", "doc_to_text")
    with pytest.raises(FieldError, match=r"field 'zz' is missing \('\{\{ d.zz \}\}'\)") as info:
        ex({"d": {"a": 1, "b": 2}})
    assert info.value.hint == "the record has: a, b" and info.value.key == "doc_to_text"
    with pytest.raises(FieldError, match=r"'\{\{ c.text \}\}': a list has no field 'text'") as info:
        compile_field("{{ c.text }}", "doc_to_choice")({"c": ["a"]})
    assert "use [index] for lists" in info.value.hint
    with pytest.raises(FieldError, match=r"index 7 is out of range in '\{\{c\[7\]\}\}'") as info:
        compile_field("{{c[7]}}", "doc_to_text")({"c": ["a", "b"]})
    assert info.value.hint == "the sequence has 2 items"
    with pytest.raises(FieldError, match="field 'zz' is missing"):
        compile_field("A {{d.zz}} B", "doc_to_text")({"d": {}})


def test_lm_eval_fields_give_the_same_through_both_paths(monkeypatch):
    source = "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nAnswer:"
    field = LmEvalField(source, "doc_to_text", "text", True)
    records = [
        {"question": " q ", "choices": ["a", "b"]},
        {"question": " 12 ", "choices": ["a", "b"]},
        {"question": None, "choices": ["a", "b"]},
        {"question": "q", "choices": ["a"]},
        {"choices": ["a", "b"]},
    ]
    fast = [outcome(field, r) for r in records]
    monkeypatch.setattr(
        "prompt_style.formats.lm_eval.fields.template_renderer",
        lambda source, profile: lambda record: sandbox_render(source, profile, record),
    )
    assert fast == [outcome(field, r) for r in records]


# -- lm-evaluation-harness 0.4.13's own templates ------------------------------------------


def _paths(node: tuple[Any, ...], into: list[tuple[str, tuple[Any, ...], bool]], method: bool = False) -> None:
    """(name, steps, ends in a str method) of every path in an expression."""
    op = node[0]
    if op in ("call", "call1", "filter", "int"):
        _paths(node[1], into, True)
    elif op == "list":
        for item in node[1]:
            _paths(item, into)
    elif op in ("add", "getitem"):
        _paths(node[1], into)
        _paths(node[2], into)
    elif op == "cond":
        test = node[1]
        if test[0] == "none":
            _paths(test[1], into)
        _paths(node[2], into)
        _paths(node[3], into)
    elif op in ("name", "attr", "item"):
        steps: list[Any] = []
        while node[0] != "name":
            if node[0] == "call":
                method = True
            else:
                steps.append(node[2])
            node = node[1]
        into.append((node[1], tuple(reversed(steps)), method))


def _put(record: dict[str, Any], name: str, steps: tuple[Any, ...], leaf: Any) -> None:
    if not steps:
        record.setdefault(name, leaf)
        return
    holder: Any = record
    key: Any = name
    for step in steps:
        want: Any = [] if isinstance(step, int) else {}
        current = holder.get(key) if isinstance(holder, dict) else holder[key]
        if not isinstance(current, type(want)):
            current = want
            holder[key] = current
        if isinstance(step, int):
            size = step + 1 if step >= 0 else -step
            while len(current) < size:
                current.append(None)
        holder, key = current, step
    if isinstance(holder, dict):
        holder.setdefault(key, leaf)
    elif holder[key] is None:
        holder[key] = leaf


def records_for(parts: list[Any], variant: int) -> list[dict[str, Any]]:
    """Records with the fields a template reads: text leaves (awkward ones), then
    values of other types, then a field missing and a list too short."""
    paths: list[tuple[str, tuple[Any, ...], bool]] = []
    for part in parts:
        if not isinstance(part, str):
            _paths(part, paths)
    leaves = [" text {{x}} {% raw %}\n", "Ünïcødé\u2028", "", "  a  \n", "{0}}"]
    out = []
    for n, leaf in enumerate(leaves):
        record: dict[str, Any] = {}
        for i, (name, steps, _) in enumerate(paths):
            _put(record, name, steps, leaves[(n + i + variant) % len(leaves)] if n else leaf)
        out.append(record)
    for odd in (None, 3, 2.5, True, ["l", 1], {"k": "v"}):
        record = {}
        for name, steps, _ in paths:
            _put(record, name, steps, odd)
        out.append(record)
    if paths:
        name, steps, _ = paths[variant % len(paths)]
        broken = json.loads(json.dumps(out[0]))
        broken.pop(name, None)
        out.append(broken)
        shortened = json.loads(json.dumps(out[0]))
        holder: Any = shortened
        for step in (name, *steps):
            if isinstance(holder, list) and holder:
                holder.pop()
                break
            holder = holder.get(step) if isinstance(holder, dict) else None
            if holder is None:
                break
        out.append(shortened)
    return out


def _lm_eval_templates() -> list[dict[str, Any]]:
    return json.loads(TEMPLATES_FILE.read_text(encoding="utf-8"))["templates"]


def test_lm_eval_templates_file_is_lm_evals():
    data = json.loads(TEMPLATES_FILE.read_text(encoding="utf-8"))
    assert data["generator"]["lm_eval"] == "0.4.13"
    assert len(data["templates"]) > 1500


def test_every_lm_eval_template_the_compiler_accepts_renders_as_the_sandbox():
    """Every Jinja template lm-evaluation-harness 0.4.13 ships (doc_to_text,
    doc_to_target, doc_to_choice, description, gen_prefix), as lm-eval task files
    render them (lm-eval's profile); the ones the compiler accepts are rendered on
    records made for them through both paths."""
    accepted = 0
    rendered_fast = 0
    templates = _lm_eval_templates()
    for number, entry in enumerate(templates):
        source = entry["source"]
        compiled = jc.compile_simple(source, LM_EVAL_JINJA)
        if compiled is None:
            continue
        accepted += 1
        parts = jc._parse(source, LM_EVAL_JINJA, "template")
        for record in records_for(parts, number):
            same(source, LM_EVAL_JINJA, record)
            rendered_fast += compiled.function(record) is not jc.SLOW
    # 1,716 of the 1,833 distinct templates (94%): the rest use {% if %}, {% for %},
    # {% set %}, comparisons, slices, filters with arguments or methods such as replace,
    # and render in the sandbox
    assert accepted >= 1716, accepted
    assert rendered_fast > accepted * 5


def test_lm_eval_templates_through_the_field_spec_profile():
    """The same templates as prompt-style task files would write them: a single
    ``{{ expression }}`` keeps its type (an Expression), anything else is a Template."""
    for number, entry in enumerate(_lm_eval_templates()[::3]):
        spec = entry["source"]
        inner = J.single_expression(spec)
        kind, source = ("expression", inner) if inner is not None else ("template", spec)
        if jc.compile_simple(source, J.FIELDS, kind) is None:
            continue
        parts = jc._parse(source, J.FIELDS, kind)
        for record in records_for(parts, number)[:8]:
            same(source, J.FIELDS, record, kind)


# -- generated code holds no text from the template or the records -------------------------

HOSTILE = {
    "name": "{{ q }}",
    "key": "{{ d['\\'); import os; os.system(\"x\") #'] }}",
    "key2": "{{ d[\"__import__('os')\"] }}",
    "text": "'''\"\"\" {L0} {v1} \\N{BULLET} \\x00 }}{{q}}{{ '{ SLOW }' }}",
    "attr": "{{ d.__class__ }}",
}


def test_generated_code_holds_only_its_own_names():
    for source in [*HOSTILE.values(), *TEMPLATES, *[t["source"] for t in _lm_eval_templates()[:300]]]:
        for profile in PROFILES.values():
            compiled = jc.compile_simple(source, profile)
            if compiled is None:
                continue
            names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", compiled.code))
            allowed = jc._CODE_NAMES | {
                "def",
                "return",
                "if",
                "is",
                "not",
                "and",
                "or",
                "None",
                "try",
                "except",
                "else",
                "elif",
                "in",
                "for",
                "pass",
                "bool",
                "join",
            }
            assert names <= allowed | {n for n in names if jc._OWN.fullmatch(n)}, names - allowed
            assert not re.search(r"[\"#\\]", compiled.code)  # no string literals or comments
            assert "'" not in compiled.code.replace("f'{", "").replace("}'", "").replace("return ''", "")


def test_hostile_keys_and_text_are_values():
    record = {
        "q": "Q",
        "d": {'\'); import os; os.system("x") #': "ONE", "__import__('os')": "TWO", "__class__": "THREE"},
    }
    assert same(HOSTILE["key"], J.FIELDS, record) == ("ok", "ONE")
    assert same(HOSTILE["key2"], J.FIELDS, record) == ("ok", "TWO")
    assert same(HOSTILE["text"], J.FIELDS, record) == ("ok", "'''\"\"\" {L0} {v1} \\N{BULLET} \\x00 }}Q{ SLOW }")
    # a field named like a private attribute is a field in the field-spec profile, as in the sandbox
    assert same(HOSTILE["attr"], J.FIELDS, record) == ("ok", "THREE")
    for key in ("key", "key2", "text"):
        assert taken(HOSTILE[key], J.FIELDS, record)


def test_records_never_reach_the_compiler():
    """The code is made from the template alone, once: rendering any record leaves it
    (and the per-process cache of generated code) as it was."""
    source = "{{q.strip()}} {{d.text}} {{c[0]}}"
    compiled = jc.compile_simple(source)
    code, makers = compiled.code, jc._maker.cache_info().currsize
    for record in RECORDS + [{"q": "'); import os #", "d": {"text": "{{ evil }}"}, "c": ['"""']}]:
        same(source, J.FIELDS, record)
    assert jc.compile_simple(source) is compiled and compiled.code == code
    assert jc._maker.cache_info().currsize == makers


@pytest.mark.parametrize("kind", ["template", "expression"])
@pytest.mark.parametrize("value", [int("9" * 4000), 1.5, True, None, 10**40, [int("9" * 300)], {"k": 1.25}, "x" * 40])
@pytest.mark.parametrize("max_output", [5, 20, 40, 2000, 10_000])
def test_printed_numbers_are_budgeted_as_in_the_sandbox(kind, value, max_output):
    """A number's text counts against max_output as any value's does (the sandbox's
    check_value): an expression giving a 4,000-digit integer under max_output=2000 is
    a LimitError through both paths, not a value."""
    source = "{{ q }}" if kind == "expression" else "Q: {{ q }}"
    profile_source = "q" if kind == "expression" else source
    for profile in PROFILES.values():
        with limits_scope(JinjaLimits(max_output=max_output)):
            same(profile_source, profile, {"q": value}, kind)
    assert jc.printed_size_bound(int("9" * 4000), 2000) is None
    assert jc.printed_size_bound(1.5, 31) is None and jc.printed_size_bound(1.5, 32) == 32


class _Shown:
    def __str__(self) -> str:
        return "shown"


def test_objects_with_default_repr_never_print_their_address():
    """An object in a record is not plain data: a template that refers to it is refused
    naming the field and the type (never printing it, nor Python's default repr with its
    address, alone or inside a list or a mapping)."""
    from prompt_style import DataError

    for source in ("{{ q }}", "{{ [q] }}", "{{ {'k': q} }}", "Q: {{ [q, 1] }}"):
        result = same(source, J.FIELDS, {"q": _Shown()})
        assert result[0] == "error" and result[1] is DataError, result
        assert "object at 0x" not in result[2] and "field 'q' holds a" in result[2]


def test_a_list_of_strings_is_bounded_as_the_walk_bounds_it():
    # the one-step sum for lists of str agrees with the walk (which an int item forces)
    for value in (["a"], ["", "xyz", "Ünï"], ("t0", "t1"), ["x" * 50] * 7):
        walked = jc.printed_size_bound([*value, 0], 10**6)
        assert jc.printed_size_bound(value, 10**6) == walked - 4
        assert jc.printed_size_bound(value, walked - 5) is None
    assert jc.printed_size_bound([], 10) == 2


_FLOOR_SCRIPT = r"""
from prompt_style import JinjaLimits
from prompt_style.fields import jinja_compiler as jc
from prompt_style.formats.lm_eval.fields import LM_EVAL_JINJA
from prompt_style.safe import jinja_env as J
from prompt_style.safe.limits import ITER_FLOOR, RANGE_FLOOR, SIZE_FLOOR, limits_scope

# a fresh process: no small budget made yet, so the compiled code reads none within the floor
assert SIZE_FLOOR[0] >= 100_000, SIZE_FLOOR
PROFILES = {"fields": J.FIELDS, "lm-eval": LM_EVAL_JINJA}


def outcome(call, *args):
    try:
        return ("ok", call(*args))
    except Exception as exc:
        return ("error", type(exc), str(exc))


def same(source, profile, record, kind):
    if kind == "template":
        fast = jc.template_renderer(source, profile)
        want = outcome(lambda r: J.render(J.compile_template(source, profile), r, record=True), record)
    else:
        fast = jc.expression_evaluator(source, profile)
        want = outcome(lambda r: J.evaluate(J.compile_expression(source, profile), r, record=True), record)
    got = outcome(fast, record)
    assert got == want, (source, record, got, want)


def taken(source, profile, record, kind):
    return jc.compile_simple(source, profile, kind).function(record) is not jc.SLOW

cases = [
    ("[a, b]", "expression"),
    ("[a, 'k', b]", "expression"),
    ("c.index(k)", "expression"),
    ("c", "expression"),
    ("Q: {{a}} {{b}}", "template"),
    ("k|int", "expression"),
    ("{{a.split(' ')}} {{b|upper}}", "template"),
    ("{% for x in c %}{{x}}. {% if a %}{{a}}{% endif %}{% endfor %}", "template"),
    ("k|int - 1", "expression"),
    ("{% for i in range(c|length) %}{{ c[i] }}{% if c[i] == 'q' %}!{% endif %}{% endfor %}", "template"),
    ("{{ c|join(', ') }}", "template"),
]
records = [
    {"a": "x", "b": "y", "c": ["p", "q"], "k": "q"},
    {"a": "x" * 40, "b": 7, "c": ["p"] * 30 + ["q"], "k": "q"},
    {"a": ["n", 1], "b": "y", "c": list(range(9)), "k": 8},
    {"a": "a b c d e", "b": "bee", "c": [], "k": "1234567890123"},
]
for profile in PROFILES.values():
    for source, kind in cases:
        for record in records:
            same(source, profile, record, kind)
    assert taken("[a, b]", profile, records[0], "expression")
    assert taken("k|int", profile, records[3], "expression")  # 13 digits: no max_int_bits check
    assert taken("{% for x in c %}{{x}}. {% if a %}{{a}}{% endif %}{% endfor %}", profile, records[0], "template")
    assert taken("{% for i in range(c|length) %}{{ c[i] }}{% if c[i] == 'q' %}!{% endif %}{% endfor %}", profile, records[0], "template")
# budgets made afterwards lower the floor: the compiled code then reads them, and stops
# where the sandbox stops
small = JinjaLimits(max_output=12, max_work=12, max_int_bits=40, max_loop_iterations=5, max_range=3)
assert SIZE_FLOOR[0] <= 12 and ITER_FLOOR[0] == 5 and RANGE_FLOOR[0] == 3
for profile in PROFILES.values():  # a text of 13 digits is the sandbox's to check now
    assert not taken("k|int", profile, records[3], "expression")
with limits_scope(small):
    for profile in PROFILES.values():
        for source, kind in cases:
            for record in records:
                same(source, profile, record, kind)
print("ok")
"""


def test_the_least_threshold_skips_no_budget_it_must_read(tmp_path):
    # in a fresh process (the other tests' budgets lower the floor of this one)
    import os
    import subprocess
    import sys

    script = tmp_path / "floor.py"
    script.write_text(_FLOOR_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PROMPT_STYLE_LIMITS"},
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


LM_EVAL_VALUES: list[Any] = [
    ["a", "b"],
    [],
    ["it's", 'say "hi"', "back\\slash", "new\nline", "\ud800 lone", "Ünïcødé ✓", "\x00", "{{ x }}"],
    ["a", 1],
    ["a", None],
    [["nested"]],
    ("t0", "t1"),
    "['a', 'b']",
    "plain",
    None,
    7,
    "0",
    "00",
    "01",
    "123",
    "\u0663",  # ARABIC-INDIC DIGIT THREE: isdigit, not a Python number
    "\u00b2",
    "9" * 5000,
    -1,
    True,
]


@pytest.mark.parametrize(
    "source, kind",
    [
        ("{{choices.text}}", "choice"),
        ("{{ choices.text }}", "choice"),
        ("{{choices.text}} ", "choice"),
        ("{{choices['text']}}", "choice"),
        ("{{[choices.text, 'x']}}", "choice"),
        ("{{choices.text}}", "target"),
        ("{{ choices['text'] }}", "target"),
        ("{{choices.text}}", "text"),
        ("Q: {{choices.text}}", "text"),
        ("{{choices.text}}", "resolve"),
    ],
)
def test_lm_eval_fast_getters_read_what_the_field_reads(source, kind):
    """The renderer's quicker function (a choice list copied rather than printed and read
    back with ast.literal_eval; digit strings read as ints) gives the field's value or
    hands the record back (raises), on awkward values."""
    for digits in (True, False):
        _fast_getter_reads_what_the_field_reads(LmEvalField(source, f"doc_to_{kind}", kind, digits))


def _fast_getter_reads_what_the_field_reads(field: LmEvalField) -> None:
    getter, fallback = field.fast_getters()
    _getter_reads_what_the_field_reads(field, field.fast_getter())
    _getter_reads_what_the_field_reads(field, getter, fallback)
    if fallback is not None:
        # the getter itself, not its fallback, takes the common values
        common = {"choice": ["a", "b"], "target": "B"}[field.kind]
        if field({"choices": {"text": common}}) == common:  # (not "{{[choices.text, 'x']}}")
            assert getter({"choices": {"text": common}}) == common
            if field.digits and field.kind == "target":
                assert getter({"choices": {"text": 7}}) == 7
        assert getter({"choices": {"text": common}, field.source: "column"}) is jc.SLOW


def _getter_reads_what_the_field_reads(field: LmEvalField, fast: Any, fallback: Any = None) -> None:
    source = field.source
    for value in [*LM_EVAL_VALUES, "[x]", "[", "]", "", "A", " 1", "1 ", 10**3999, 10**4001, 0]:
        record = {"choices": {"text": value}}
        want = outcome(field, record)
        try:
            got = ("ok", fast(record))
            if got[1] is jc.SLOW and fallback is not None:
                got = ("ok", fallback(record))
        except Exception:
            continue  # handed back: the renderer calls the field itself
        if got[1] is jc.SLOW:
            continue  # handed back (the renderer's type checks let no SLOW through)
        assert got[0] == want[0] == "ok" and repr(got[1]) == repr(want[1]), (source, value, got, want)
        assert type(got[1]) is type(want[1])
        if type(want[1]) is list:
            assert got[1] is not value  # a fresh list, as the printed route makes


@pytest.mark.parametrize("max_output", [5, 20, 40, 2000])
def test_lm_eval_fast_getters_are_budgeted_as_the_field(max_output):
    """Under small budgets the getter gives SLOW for what printing would overrun, and
    getter-then-fallback gives what the field gives (the value or its error)."""
    with limits_scope(JinjaLimits(max_output=max_output)):
        for source, kind in (("{{choices.text}}", "choice"), ("{{choices.text}}", "target")):
            for digits in (True, False):
                field = LmEvalField(source, f"doc_to_{kind}", kind, digits)
                _getter_reads_what_the_field_reads(field, *field.fast_getters())
                getter = field.fast_getters()[0]
                for value in (["ab"] * 40, "x" * 300, 10**300):
                    got = getter({"choices": {"text": value}})
                    want = outcome(field, {"choices": {"text": value}})
                    assert got is jc.SLOW or (want[0] == "ok" and want[1] == got), (value, want)


def test_compile_simple_result_is_for_expressions_only():
    with pytest.raises(ValueError, match="result"):
        jc.compile_simple("{{ q }}", J.FIELDS, "template", result="texts")
    with pytest.raises(ValueError, match="result"):
        jc.compile_simple("q", J.FIELDS, "expression", result="list")


def test_lm_eval_text_getter_hands_back_a_column_named_like_the_template():
    # lm-evaluation-harness reads a record's column named exactly like the template
    for digits in (True, False):
        field = LmEvalField("Q: {{q}}", "doc_to_text", "text", digits)
        fast = field.fast_getter()
        assert fast({"q": "x"}) == field({"q": "x"}) == "Q: x"
        assert fast({"q": "x", "Q: {{q}}": "column"}) is jc.SLOW
        assert field({"q": "x", "Q: {{q}}": "column"}) == "column"
    digits = LmEvalField("{{q}}", "doc_to_text", "text", True)
    assert digits.fast_getter()({"q": "12"}) is jc.SLOW and digits({"q": "12"}) == 12


def test_lm_eval_digit_targets_read_as_python_reads_them():
    from prompt_style.formats.lm_eval.fields import _digits, _literal

    for text in [
        "0",
        "00",
        "000",
        "7",
        "10",
        "01",
        "0010",
        "123456789" * 10,
        "9" * 4001,
        "\u0663",
        "\u00b2",
        "1\u0663",
    ]:
        assert text.isdigit()
        assert outcome(_digits, text)[:2] == outcome(_literal, text)[:2], text


def test_many_joins_of_a_large_text_go_to_the_sandbox():
    # each '+' is bounded, and so is all a render builds: past CAP the sandbox decides
    source = "{{" + " + ".join(["q"] * 40) + "}}"
    record = {"q": "x" * 60_000}
    for profile in PROFILES.values():
        assert not taken(source, profile, record)
        same(source, profile, record)
        assert taken(source, profile, {"q": "x" * 100})
    chain = "{{ q" + "|lower" * 30 + " }}"
    assert not taken(chain, J.FIELDS, {"q": "y" * 60_000})
    same(chain, J.FIELDS, {"q": "y" * 60_000})


def test_lm_eval_quick_target_text_keeps_the_printed_budget():
    # lm-eval prints a target: a text over max_output stops there, through the quick path too
    field = LmEvalField("{{answer}}", "doc_to_target", "target", True)
    fast = field.fast_getter()
    record = {"answer": "x" * 50}
    with limits_scope(JinjaLimits(max_output=20)):
        want = outcome(field, record)
        assert want[0] == "error" and "max_output" in want[2]  # the FieldError of the LimitError
        try:
            got = ("ok", fast(record))
        except Exception as exc:  # handed back to the field, or the same stop
            got = ("error", type(exc), str(exc))
        assert got[0] == "error", got


@pytest.mark.parametrize(
    "source, checked",
    [
        ("{{ q }}", True),
        ("{{ q }}1{{ a }}", True),
        ("{{ q }}\u0663", True),
        ("Q: {{ q }}", False),
        ("{{ q }}\nA. {{ a }}", False),
    ],
)
def test_a_text_that_cannot_be_all_digits_is_not_asked_whether_it_is(source, checked):
    """``digits``: a text of digits is read as a number; literal text with anything
    but digits never renders to digits alone, so the check is left out, and the text
    is the same."""
    compiled = jc.compile_simple(source, LM_EVAL_JINJA, digits=True)
    assert ("isdigit()" in compiled.code) is checked
    for q, a in [("1", "2"), ("x", "2"), ("", ""), ("\u0663", "")]:
        record = {"q": q, "a": a}
        expected = J.render(J.compile_template(source, LM_EVAL_JINJA), record, record=True)
        got = compiled.function(record)
        assert got == (jc.SLOW if expected.isdigit() else expected)
