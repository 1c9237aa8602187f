"""The hardening corpus's payloads (payloads.py, category ``operation``): one Jinja
operation at a time, at real size. Data only: payloads.py turns them into payloads.

Each template of :data:`OPERATION_BOMBS` would run for seconds or build hundreds of
megabytes in one single operation (a filter, a method, an operator) if its cost were
not bounded before it runs; each of :data:`LINEAR` is linear and fast at full size (a
search, a parse), and renders or stops within budget.
"""

from __future__ import annotations

TEN_K = "(range(100000)|list)"  # 100,000 items (max_range), made in microseconds
MILLION = f"({TEN_K} * 10)"  # 1,000,000 items (max_items)
DISTINCT = "(" + " + ".join(f"(range({i * 100000}, {(i + 1) * 100000})|list)" for i in range(10)) + ")"
OPERATION_BOMBS = [
    # filters that run Python code per character or item
    ("wordwrap-width-1", "{{ ('x' * 999999)|wordwrap(1) }}"),
    ("wordwrap-long-word", "{{ ('x' * 999999)|wordwrap(79) }}"),
    ("wordwrap-words", "{{ ('ab ' * 330000)|wordwrap(5) }}"),
    ("wordwrap-no-break", "{{ ('ab ' * 330000)|wordwrap(2, false) }}"),
    ("urlize", "{{ ('a.b ' * 249000)|urlize }}"),
    ("title-filter", "{{ ('ab ' * 3300000)|title|length }}"),
    ("striptags", "{{ ('<a> ' * 2400000)|striptags|length }}"),
    ("wordcount", "{{ ('a ' * 4900000)|wordcount }}"),
    ("urlencode-text", "{{ ('😀' * 2400000)|urlencode|length }}"),
    ("urlencode-mapping", "{{ {}.fromkeys(range(100000), 'é' * 90)|urlencode|length }}"),
    ("xmlattr", "{{ {}.fromkeys(range(100000)|map('string'), 'x' * 90)|xmlattr|length }}"),
    ("sort", f"{{{{ {MILLION}|sort|length }}}}"),
    ("sort-strings", "{{ ('ab ' * 1000000).split()|sort|length }}"),
    ("sort-attribute", f"{{{{ {MILLION}|sort(attribute='real')|length }}}}"),
    ("dictsort", f"{{{{ {{}}.fromkeys({DISTINCT})|dictsort|length }}}}"),
    ("groupby", f"{{{{ {MILLION}|groupby('real')|length }}}}"),
    ("max", f"{{{{ {MILLION}|max }}}}"),
    ("min-attribute", f"{{{{ {MILLION}|min(attribute='real') }}}}"),
    ("sum-attribute", f"{{{{ {MILLION}|sum(attribute='real') }}}}"),
    ("pprint", f"{{{{ {MILLION}|pprint|length }}}}"),
    ("string", f"{{{{ {MILLION}|string|length }}}}"),
    ("print-list", f"{{{{ {MILLION} }}}}"),
    ("tojson-list", f"{{{{ {MILLION}|tojson|length }}}}"),
    ("tojson-indent", f"{{{{ {MILLION}|tojson(1)|length }}}}"),
    ("tojson-indent-positional", "{{ [[[[[[1]]]]]]|tojson(99999999) }}"),
    ("tojson-indent-keyword", "{{ [[[[[[1]]]]]]|tojson(indent=99999999) }}"),
    ("tojson-indent-string", "{{ [[[[[[1]]]]]]|tojson('x' * 9000000) }}"),
    ("tojson-indent-wide", "{{ ([[1] * 1000] * 1000)|tojson(9)|length }}"),
    ("list-of-text", "{{ ('é' * 999999)|list|length }}"),
    ("join-million", f"{{{{ {MILLION}|join(',')|length }}}}"),
    ("indent-lines", "{{ ('\\n' * 9000000)|indent(0)|length }}"),
    ("escape", '{{ ("\'" * 9000000)|e|length }}'),
    ("forceescape", "{{ ('&' * 9000000)|forceescape|length }}"),
    ("trim-chars", "{{ ('a' * 5000000)|trim('b' * 4999999 ~ 'a')|length }}"),
    ("format-fill-newline", "{{ '{:\\n>999999999}'.format('x') }}"),
    ("format-fill-nul", "{{ '{:\\x00^999999999}'.format('x') }}"),
    ("format-fill-cr", "{{ '{0:\\r<999999999}'.format('x') }}"),
    ("format-many-fields", "{{ ('{0}' * 3000000).format('a')|length }}"),
    ("format-map-many", "{{ ('{a}' * 3000000).format_map({'a': 'b'})|length }}"),
    ("format-filter-many", "{{ ('%s' * 3000000)|format(*(['a'] * 3000000))|length }}"),
    # str methods: one C call each, slow per character, quadratic, or building many objects
    ("str-title", "{{ ('ab ' * 3300000).title()|length }}"),
    ("str-swapcase", "{{ ('ß' * 9900000).swapcase()|length }}"),
    ("str-upper-grows", "{{ ('ΐ' * 9900000).upper()|length }}"),
    ("str-translate", "{{ ('a' * 9900000).translate({97: 'b'})|length }}"),
    ("str-strip-chars", "{{ ('a' * 5000000).strip('b' * 4999999 ~ 'a')|length }}"),
    ("str-lstrip-chars", "{{ ('a' * 5000000).lstrip('b' * 4999999 ~ 'a')|length }}"),
    ("str-rstrip-chars", "{{ ('a' * 5000000).rstrip('b' * 4999999 ~ 'a')|length }}"),
    ("str-split", "{{ ('a ' * 4900000).split()|length }}"),
    ("str-split-sep", "{{ ('a,' * 4900000).split(',')|length }}"),
    ("str-rsplit", "{{ ('a ' * 4900000).rsplit()|length }}"),
    ("str-splitlines", "{{ ('a\\n' * 4900000).splitlines()|length }}"),
    (
        "str-split-kept",
        "{% set a = ('ab ' * 1000000).split() %}{% set b = ('cd ' * 1000000).split() %}"
        "{% set c = ('ef ' * 1000000).split() %}{% set d = ('gh ' * 1000000).split() %}{{ a|length + d|length }}",
    ),
    ("str-encode-xmlcharref", "{{ ('😀' * 9000000).encode('ascii', 'xmlcharrefreplace')|length }}"),
    ("str-encode-punycode", "{{ ('é' * 1000000).encode('punycode')|length }}"),
    ("str-encode-idna", "{{ ('a.' * 1000000).encode('idna')|length }}"),
    ("str-encode-utf32", "{{ ('x' * 9900000).encode('utf-32')|length }}"),
    ("str-expandtabs", "{{ ('\\t' * 9000000).expandtabs(1)|length }}"),
    ("str-zfill-markup", "{{ (q|e).zfill(999999999)|length }}"),
    ("str-center-markup", "{{ (q|safe).center(999999999)|length }}"),
    ("str-ljust-markup", "{{ (q|tojson).ljust(999999999)|length }}"),
    ("str-format-markup", "{{ ((q|e) ~ '{:>999999999}').format('x')|length }}"),
    ("strftime-many", "{{ strftime_now('%c' * 2000000)|length }}"),
    # integers: digits of every value an operator or a method builds, and its cost
    ("int-base-16", "{{ ('f' * 4000000)|int(base=16) % 7 }}"),
    ("int-base-2", "{{ ('1' * 9000000)|int(base=2) % 7 }}"),
    ("int-base-0", "{{ ('0x' ~ 'f' * 4000000)|int(base=0) % 7 }}"),
    ("int-mod-big", "{{ (('f' * 2000000)|int(base=16)) % (('f' * 1000000)|int(base=16) + 1) }}"),
    ("int-floordiv-big", "{{ (('f' * 2000000)|int(base=16)) // (('f' * 1000000)|int(base=16) + 1) }}"),
    ("int-divisibleby", "{{ (('f' * 2000000)|int(base=16)) is divisibleby(('f' * 1000000)|int(base=16) + 1) }}"),
    ("int-pow-small", "{{ (('f' * 3000)|int(base=16)) ** 3 % 7 }}"),
    ("int-round-negative", "{{ 5|round(-999999999) }}"),
    ("int-round-negative-10m", "{{ 5|round(-10000000) }}"),
    ("int-round-floor", "{{ 5|round(999999999, 'floor') }}"),
    ("int-round-ceil", "{{ 5.5|round(99999999, 'ceil') }}"),
    ("int-to-bytes", "{{ (5).to_bytes(999999999, 'big')|length }}"),
    ("int-from-bytes", "{{ (0).from_bytes(('ab'.encode()) * 4000000, 'big') % 7 }}"),
    ("int-bin-format", "{{ '{:b}'.format(('f' * 3000000)|int(base=16))|length }}"),
    ("int-mul-chain", "{% set ns = namespace(x=3) %}{% for i in range(64) %}{% set ns.x = ns.x * ns.x %}{% endfor %}"),
    ("float-fromhex", "{{ (1.5).fromhex('0x1.' ~ '0' * 9900000 ~ 'p1') }}"),
    # bytes: measured like strings
    ("bytes-mul-print", "{{ ('a'.encode() * 300000000)|length }}"),
    ("bytes-mul-huge", "{{ 'a'.encode() * 10**9 }}"),
    ("bytes-center", "{{ 'a'.encode().center(999999999)|length }}"),
    ("bytes-zfill", "{{ '1'.encode().zfill(999999999)|length }}"),
    ("bytes-ljust", "{{ 'a'.encode().ljust(999999999)|length }}"),
    ("bytes-join", "{{ ('x' * 1000000).encode().join(['a'.encode()] * 1000)|length }}"),
    ("bytes-replace", "{{ ('a' * 1000000).encode().replace(''.encode(), ('x' * 1000).encode())|length }}"),
    ("bytes-plus", "{{ (('a' * 9000000).encode() + ('a' * 9000000).encode())|length }}"),
    ("bytes-percent", "{{ ('%999999999s'.encode() % 'x'.encode())|length }}"),
    ("bytes-expandtabs", "{{ ('\\t' * 1000).encode().expandtabs(10**7)|length }}"),
    ("bytes-hex", "{{ ('a' * 9000000).encode().hex(':')|length }}"),
    (
        "bytes-decode-backslash",
        "{{ ('\\x80' * 9000000).encode('latin-1').decode('ascii', 'backslashreplace')|length }}",
    ),
    ("bytes-split", "{{ ('a ' * 4900000).encode().split()|length }}"),
    ("bytes-translate-delete", "{{ ('a' * 9000000).encode().translate(none, 'b'.encode())|length }}"),
    # lists and mappings
    ("list-index-method", "{{ [1].index(q.upper) }}"),
    ("dict-fromkeys-big", f"{{{{ {{}}.fromkeys({DISTINCT})|length }}}}"),
    (
        "list-compare-deep",
        "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}"
        "{{ ns.x == ns.x }}",
    ),
    # comparisons: two lists compare their items, two texts their characters
    ("compare-lists", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 9000000 %}{{ [a] * 1000000 == [b] * 1000000 }}"),
    ("compare-in-list", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ b in [a] * 1000000 }}"),
    (
        "compare-sort-texts",
        "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ ([a, b] * 500)|sort|length }}",
    ),
    (
        "compare-max-texts",
        "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ ([a, b] * 500)|max|length }}",
    ),
    ("compare-index", "{% set a = 'a' * 9000000 %}{% set b = 'a' * 8999999 ~ 'b' %}{{ ([a] * 1000000).index(b) }}"),
    (
        "compare-map-default",
        "{% set a = 'a' * 9000000 %}{% set b = 'a' * 9000000 %}"
        "{{ ([none] * 1000000)|map('default', a, true)|list == ([none] * 1000000)|map('default', b, true)|list }}",
    ),
    ("map-wordwrap", "{{ ('x' * 999999)|map('wordwrap', 1)|list|length }}"),
    # the deadline inside a macro that calls itself: a check point at every call
    ("macro-fanout", "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}"),
    (
        "macro-fanout-args",
        "{% macro f(n, s) %}{% if n %}{{ f(n - 1, s) }}{{ f(n - 1, s) }}{% endif %}{% endmacro %}"
        "{{ f(40, 'x' * 1000) }}",
    ),
    ("macro-doubling", "{% macro f(n, s) %}{% if n %}{{ f(n - 1, s ~ s) }}{% endif %}{% endmacro %}{{ f(64, 'xy') }}"),
    (
        "loop-then-slow-op",
        "{% for i in range(20000) %}{{ ('ab ' * 30).title()|length }}{% endfor %}"
        "{{ ('ab ' * 3300000).title()|length }}",
    ),
    # keeping what each operation built, within max_work
    (
        "keep-wide-strings",
        "{% set ns = namespace(l=[]) %}{% for i in range(12) %}"
        "{% set ns.l = ns.l + ['\\U0001F600' * 9000000 ~ i] %}{% endfor %}{{ ns.l|length }}",
    ),
]
LINEAR = [
    ("str-count-needle", "{{ ('a' * 9900000).count('a' * 90 ~ 'b') }}"),
    ("str-find-needle", "{{ ('a' * 9900000).find('a' * 90 ~ 'b') }}"),
    ("str-in-needle", "{{ ('a' * 90 ~ 'b') in ('a' * 9900000) }}"),
    ("float-long-text", "{{ ('1' * 9900000)|float }}"),
    (
        "list-compare-deep",
        "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}"
        "{{ ns.x == ns.x }}",
    ),
]
