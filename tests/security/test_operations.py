"""Every single operation bounded before it runs: filters, methods, operators, printing.

The deadline is checked between operations, so each of these would run for seconds
or build hundreds of megabytes between two check points if its cost were not
checked first; each must stop at once with a typed error naming the budget. The
same operations within budget give exactly what plain Jinja gives.
"""

from __future__ import annotations

import jinja2
import jinja2.sandbox
import pytest

from prompt_style import JinjaLimits, LimitError, SandboxError
from prompt_style.safe import jinja_env as J
from prompt_style.safe import limits as L

DEFAULTS = JinjaLimits(deadline=30)  # a stop must come from the operation's own bound, never the clock
TEN_K = "(range(100000)|list)"
MILLION = f"({TEN_K} * 10)"


@pytest.fixture(autouse=True)
def _fresh_limits(monkeypatch):
    monkeypatch.delenv(L.ENV_LIMITS, raising=False)
    L.configure()
    L.reload()
    yield
    L.configure()
    L.reload()


def render(source: str, context: dict | None = None, limits: JinjaLimits = DEFAULTS, profile=J.FIELDS) -> str:
    return J.render(J.compile_template(source, profile), context or {"q": "What is 2+2?"}, limits)


@pytest.mark.parametrize(
    "limit, source",
    [
        # filters that run Python code per character or item
        ("max_op_cost", "{{ ('x' * 999999)|wordwrap(1) }}"),
        ("max_op_cost", "{{ ('x' * 99999)|wordwrap(79) }}"),  # one long word: cut one line at a time
        ("max_op_cost", "{{ ('ab ' * 330000)|wordwrap(5) }}"),
        ("max_op_cost", "{{ ('a.b ' * 249000)|urlize }}"),
        ("max_filter_input", "{{ ('ab ' * 3300000)|title|length }}"),
        ("max_op_cost", "{{ ('ab ' * 330000)|title|length }}"),
        ("max_op_cost", "{{ ('a ' * 4900000)|wordcount }}"),
        ("max_filter_input", "{{ ('😀' * 2400000)|urlencode|length }}"),
        ("max_op_cost", "{{ ('é' * 900000)|urlencode|length }}"),
        ("max_op_cost", f"{{{{ {MILLION}|sort|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|sort(attribute='real')|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|groupby('real')|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|max }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|min(attribute='real') }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|sum(attribute='real') }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|dictsort|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|string|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION} }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|tojson|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|join(',')|length }}}}"),
        ("max_op_cost", f"{{{{ {MILLION}|map('string')|join(',')|length }}}}"),
        ("max_op_cost", "{{ {}.fromkeys(range(100000), 'x')|xmlattr|length }}"),
        ("max_op_cost", "{{ ('é' * 999999)|list|length }}"),
        ("max_op_cost", "{{ ('\\n' * 9000000)|indent(0)|length }}"),
        ("max_op_cost", "{{ ('a' * 5000000)|trim('b' * 4999999 ~ 'a')|length }}"),
        ("max_string", '{{ ("\'" * 9000000)|e|length }}'),
        ("max_string", "{{ ('&' * 9000000)|forceescape|length }}"),
        # tojson's indentation, whatever form it takes
        ("max_string", "{{ [[[[[[1]]]]]]|tojson(99999999) }}"),
        ("max_string", "{{ [[[[[[1]]]]]]|tojson(indent=99999999) }}"),
        ("max_string", "{{ [[[[[[1]]]]]]|tojson('x' * 9000000) }}"),
        ("max_op_cost", "{{ ([[1] * 1000] * 1000)|tojson(9)|length }}"),
        ("max_string", "{{ ([['x' * 100] * 100] * 100)|tojson(999)|length }}"),
        # str.format: every fill character, and every field costs Python code
        ("max_string", "{{ '{:\\n>999999999}'.format('x') }}"),
        ("max_string", "{{ '{:\\x00^999999999}'.format('x') }}"),
        ("max_string", "{{ '{0:\\r<999999999}'.format('x') }}"),
        ("max_op_cost", "{{ ('{0}' * 3000000).format('a')|length }}"),
        ("max_op_cost", "{{ ('{a}' * 3000000).format_map({'a': 'b'})|length }}"),
        # str methods: slow per character, quadratic, or making many objects
        ("max_op_cost", "{{ ('ab ' * 3300000).title()|length }}"),
        ("max_op_cost", "{{ ('ß' * 9900000).swapcase()|length }}"),
        ("max_op_cost", "{{ ('a' * 9900000).translate({97: 'b'})|length }}"),
        ("max_op_cost", "{{ ('a' * 5000000).strip('b' * 4999999 ~ 'a')|length }}"),
        ("max_op_cost", "{{ ('a' * 5000000).lstrip('b' * 4999999 ~ 'a')|length }}"),
        ("max_op_cost", "{{ ('a' * 5000000).rstrip('b' * 4999999 ~ 'a')|length }}"),
        ("max_op_cost", "{{ ('a ' * 4900000).split()|length }}"),
        ("max_op_cost", "{{ ('a,' * 4900000).split(',')|length }}"),
        ("max_op_cost", "{{ ('a ' * 4900000).rsplit()|length }}"),
        ("max_items", "{{ ('a\\n' * 4900000).splitlines()|length }}"),
        ("max_string", "{{ ('😀' * 9000000).encode('ascii', 'xmlcharrefreplace')|length }}"),
        ("max_string", "{{ (q|e).zfill(999999999)|length }}"),
        ("max_string", "{{ (q|safe).center(999999999)|length }}"),
        ("max_string", "{{ (q|tojson).ljust(999999999)|length }}"),
        ("max_string", "{{ ((q|e) ~ '{:>999999999}').format('x')|length }}"),
        # integers: the digits of every integer built, and the cost of dividing
        ("max_int_bits", "{{ ('f' * 4000000)|int(base=16) % 7 }}"),
        ("max_int_bits", "{{ ('1' * 9000000)|int(base=2) % 7 }}"),
        ("max_int_bits", "{{ ('0x' ~ 'f' * 4000000)|int(base=0) % 7 }}"),
        ("max_int_bits", "{{ 5|round(-999999999) }}"),
        ("max_int_bits", "{{ 5|round(-10000000) }}"),
        ("max_int_bits", "{{ 5|round(999999999, 'floor') }}"),
        ("max_int_bits", "{{ 5.5|round(99999999, 'ceil') }}"),
        ("max_string", "{{ (5).to_bytes(999999999, 'big')|length }}"),
        ("max_int_bits", "{{ (0).from_bytes(('ab'.encode()) * 4000000, 'big') % 7 }}"),
        # bytes: measured as strings are
        ("max_string", "{{ ('a'.encode() * 300000000)|length }}"),
        ("max_string", "{{ 'a'.encode() * 10**9 }}"),
        ("max_string", "{{ 'a'.encode().center(999999999)|length }}"),
        ("max_string", "{{ '1'.encode().zfill(999999999)|length }}"),
        ("max_string", "{{ 'a'.encode().ljust(999999999)|length }}"),
        ("max_string", "{{ ('x' * 1000000).encode().join(['a'.encode()] * 1000)|length }}"),
        ("max_string", "{{ ('a' * 1000000).encode().replace(''.encode(), ('x' * 1000).encode())|length }}"),
        ("max_string", "{{ (('a' * 9000000).encode() + ('a' * 9000000).encode())|length }}"),
        ("max_string", "{{ ('%999999999s'.encode() % 'x'.encode())|length }}"),
        ("max_string", "{{ ('\\t' * 1000).encode().expandtabs(10**7)|length }}"),
        ("max_string", "{{ ('\\x80' * 9000000).encode('latin-1').decode('ascii', 'backslashreplace')|length }}"),
        ("max_op_cost", "{{ ('a ' * 4900000).encode().split()|length }}"),
        # comparisons: a list compares its items, a text its characters
        ("max_op_cost", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 9000000 %}{{ [a] * 1000000 == [b] * 1000000 }}"),
        ("max_op_cost", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ b in [a] * 1000000 }}"),
        ("max_op_cost", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ ([a, b] * 500)|sort|length }}"),
        ("max_op_cost", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ ([a, b] * 500)|max|length }}"),
        ("max_op_cost", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ ([a] * 1000).index(b) }}"),
    ],
)
def test_one_operation_stops_before_it_runs(limit, source):
    with pytest.raises(LimitError) as info:
        render(source)
    assert info.value.limit == limit, str(info.value)


def test_large_integers_cannot_be_divided_into_each_other():
    big = int("f" * 3000, 16)  # from a record (the Python API): 12,000 bits
    huge = int("f" * 60000, 16)  # 240,000 bits
    for source in ("{{ a % b }}", "{{ a // b }}", "{{ a is divisibleby(b) }}"):
        with pytest.raises(LimitError) as info:
            render(source, {"a": huge * huge, "b": huge + 1})
        assert info.value.limit == "max_int_bits"
        # a small divisor, or numbers within max_int_bits: as Python computes them
        assert render(source, {"a": big, "b": 7}) == jinja2.Environment().from_string(source).render(a=big, b=7)
        assert render(source, {"a": big, "b": big // 3 + 1})


def test_slow_codecs_are_refused():
    for codec in ("punycode", "idna"):
        with pytest.raises(SandboxError, match=codec):
            render(f"{{{{ q.encode('{codec}') }}}}")


def test_every_public_method_of_plain_values_is_sized():
    """A method the tables do not know is refused: none of Python's may be missing."""
    from prompt_style.safe._sandbox import costs

    for kind in (str, bytes):
        assert {n for n in dir(kind) if not n.startswith("_")} <= costs.TEXT_METHODS, kind
    numbers = costs.INT_METHODS | {"to_bytes", "from_bytes", "hex", "fromhex"}
    for kind in (int, float, bool):
        assert {n for n in dir(kind) if not n.startswith("_") and callable(getattr(kind, n))} <= numbers, kind
    containers = costs.SEQUENCE_METHODS | costs.MUTATING_METHODS
    for kind in (list, tuple, dict):
        assert {n for n in dir(kind) if not n.startswith("_")} <= containers, kind


def test_a_split_is_never_cut_short():
    # ``maxsplit`` capped at what the budgets allow: a split that would make more is refused.
    small = JinjaLimits(max_items=100, deadline=30)
    text = "a " * 5000
    with pytest.raises(LimitError) as info:
        render("{{ q.split()|length }}", {"q": text}, small)
    assert info.value.limit == "max_items"
    assert render("{{ q.split()|length }}", {"q": "a " * 99}, small) == "99"
    assert render("{{ q.split(' ', 3)|length }}", {"q": text}, small) == "4"
    assert render("{{ q.rsplit()[-1] }}", {"q": "x " * 50 + "last"}, small) == "last"


@pytest.mark.parametrize(
    "source, context",
    [
        ("{{ (q|e).center(16) }}", {"q": "<b>"}),
        ("{{ ('ab'.encode() * 2)|length }}", {}),
        ("{{ 'ff'|int(base=16) }} {{ '0x1f'|int(base=0) }} {{ '12'|int }}", {}),
        ("{{ 1234|round(-2) }} {{ 12.345|round(2) }} {{ 2.5|round(0, 'floor') }}", {}),
        ("{{ [1, [2]]|tojson(2) }}|{{ {'a': [1]}|tojson(indent=' ') }}", {}),
        ("{{ 'a b  c'.split() }} {{ 'a,b'.split(',') }} {{ 'a\\nb\\r\\nc'.splitlines() }}", {}),
        ("{{ '{:\\n>3}'.format('x') }}{{ '{:*^7}'.format('x') }}{{ '{0:>{1}}'.format('x', 4) }}", {}),
        ("{{ 'aaa bbb ccc'|wordwrap(3) }}|{{ ('x' * 20)|wordwrap(7) }}|{{ 'a-b c'|wordwrap(2, false) }}", {}),
        ("{{ 12 is divisibleby(4) }} {{ 7 % 3 }} {{ 7 // 2 }} {{ 2 ** 10 }}", {}),
        ("{{ q.strip('?W') }} {{ q.title() }} {{ q.swapcase() }} {{ q.translate({87: 'w'}) }}", {"q": "What?"}),
        ("{{ q|urlencode }} {{ {'a': 'b c'}|urlencode }} {{ q|wordcount }} {{ q|title }}", {"q": "a b&c é"}),
        ("{{ [3, 1, 2]|sort }} {{ {'b': 1, 'a': 2}|dictsort }} {{ [1, 5]|max }} {{ [1, 5]|sum }}", {}),
        ("{{ (5).to_bytes(2, 'big') }} {{ (0).from_bytes('ab'.encode(), 'big') }} {{ (1.5).hex() }}", {}),
        ("{{ 'x'.encode().hex() }} {{ 'é'.encode() }} {{ 'x'.encode('utf-16')|length }}", {}),
        ("{{ ''.maketrans('a', 'b') }} {{ {}.fromkeys('ab', 1) }} {{ [1, 2, 1].count(1) }}", {}),
        ("{{ q|e }} {{ q|forceescape }} {{ q|striptags }} {{ (q|e).striptags() }}", {"q": "<a href='x'>&amp;</a>"}),
        (
            "{{ q == q }} {{ [q] == [q] }} {{ q in l }} {{ q not in l }} {{ l < m }} {{ d == d }} {{ 1 < 2 < 3 }}",
            {"q": "x", "l": ["x", "y"], "m": ["y"], "d": {"k": [1]}},
        ),
    ],
)
def test_within_budget_the_result_is_plain_jinja_s(source, context):
    expected = jinja2.sandbox.ImmutableSandboxedEnvironment().from_string(source).render(**context)
    assert render(source, context) == expected


def test_the_output_of_many_small_pieces_is_joined_as_it_grows():
    """Ten million one-character prints keep ten million small strings unless they are
    joined as the output grows: the output's memory stays about its characters'."""
    import resource

    source = "{% for i in range(1000) %}{% for j in range(1000) %}{{ j % 10 }}{% endfor %}{% endfor %}"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    text = render(source, {}, JinjaLimits(deadline=60))
    assert len(text) == 1_000_000 and text.startswith("0123456789")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 40_000  # KiB: not 60 MB of pieces
