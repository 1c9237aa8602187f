"""The security payload corpus: escapes, leaks, resource bombs, YAML bombs,
hostile record values and bad command lines.

Each payload says what must happen: ``error`` (a typed error; optionally which
class and which budget) or ``ok`` (optionally the exact text). ``cases()`` turns
them into runner cases (see runner.py): Jinja payloads as ``doc_to_text`` and as
``description``, through ``prompt-style render --format jsonl`` and the Python
API, and resource bombs also as a model's chat template through ``prompt-style
chat --meta hf`` (the fast code generator, with its budgets checked inline);
YAML payloads as whole task files; hostile values as record values under three
kinds of field spec.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORDS = [
    {"q": "What is 2+2?", "a": "4", "options": ["3", "4"], "n": 3, "s": "abc"},
    {"q": "Capital of France?", "a": "Paris", "options": ["Paris", "Rome"], "n": 2, "s": "xyz"},
]
LEAK_MARKERS = (
    "<function",
    "<built-in",
    "<bound method",
    "<class",
    "object at 0x",
    "<Namespace",
    "<TemplateReference",
    "<LoopContext",
    "<Macro",
    "<generator",
    "<jinja2",
    "Undefined",
    "Traceback",
)


@dataclass
class Payload:
    category: str
    name: str
    kind: str  # jinja, yaml, value, cli
    content: Any
    expect: str = "error"  # error or ok
    error: str | None = None  # class name expected (API cases)
    limit: str | tuple[str, ...] | None = None  # budget name expected (or any of several)
    text: str | None = None  # exact text of the first record (ok cases)
    files: dict[str, str] = field(default_factory=dict)
    slow: bool = False  # in the second, slower batch (the hardening corpus: real-size payloads)
    forbid: tuple[str, ...] = ()  # text that must appear nowhere (output, messages): a secret read
    forbid_files: tuple[str, ...] = ()  # files that must not exist afterwards: a file written
    stdout: str | None = None  # "closed" (>&-) or "full" (/dev/full) for the command's output


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


P: list[Payload] = []


def _sibling(name: str) -> Any:
    """A data module next to this file (loaded by path, as the tests load this one)."""
    spec = importlib.util.spec_from_file_location(f"ps_security_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def jinja(category: str, name: str, template: str, expect: str = "error", **kw: Any) -> None:
    P.append(Payload(category, name, "jinja", template, expect, **kw))


# -- sandbox escapes: all stopped (typed error), nothing leaks ---------------------------
E = "escape"
for i, t in enumerate(
    [
        "{{ q.__class__ }}",
        "{{ q.__class__.__mro__[1].__subclasses__() }}",
        "{{ ''.__class__.__base__.__subclasses__() }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ joiner.__init__.__globals__.os }}",
        "{{ namespace.__init__.__globals__ }}",
        "{{ self._TemplateReference__context }}",
        "{{ q|attr('__class__') }}",
        "{{ (q|attr('__class__')).__mro__ }}",
        "{{ '{0.__class__.__mro__}'.format(q) }}",
        "{{ '{0.__init__.__globals__}'.format(cycler) }}",
        "{{ '{0[__class__]}'.format(q) }}",
        "{{ range.__globals__ }}",
        "{{ dict.__base__.__subclasses__() }}",
        "{{ q.format.__globals__ }}",
        "{{ options.append(1) }}",
        "{{ options.pop() }}",
        "{{ {}.update(a=1) }}",
        "{{ dict(a=1).clear() }}",
        "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
        "{% include '/etc/passwd' %}",
        "{% import 'os' as os %}{{ os }}",
        "{% extends '/etc/passwd' %}",
        "{% from 'x' import y %}{{ y }}",
        "{{ q.__len__() }}",
        "{{ config }}",
        "{{ request.application }}",
        "{{ self.__init__ }}",
        "{{ lipsum.__globals__ }}",
        "{{ q.encode.__self__.__class__ }}",
    ]
):
    jinja(E, f"escape-{i:02d}", t)

# -- leaks: a function, class or template object printed, by any path --------------------
L = "leak"
for i, t in enumerate(
    [
        "{{ cycler }}",
        "{{ joiner }}",
        "{{ namespace }}",
        "{{ dict }}",
        "{{ lipsum }}",
        "{{ range }}",
        "{{ '{0!r}'.format(lipsum) }}",
        "{{ '{0!r}'.format(range) }}",
        "{{ '{}'.format(cycler) }}",
        "{{ self }}",
        "{% for x in options %}{{ loop }}{% endfor %}",
        "{% macro m() %}{% endmacro %}{{ m }}",
        "{{ q.upper }}",
        "{{ options.index }}",
        "{{ [cycler] }}",
        "{{ cycler ~ '' }}",
        "{{ '%s' % joiner }}",
        "{{ '%r' % (range,) }}",
        "{{ '%r'|format(namespace) }}",
        "{{ range|string }}",
        "{{ [range]|join }}",
        "{{ dict(a=cycler) }}",
        "{{ cycler(1, 2) }}",
        "{{ joiner(',') }}",
        "{{ namespace(a=1) }}",
        "{{ range|pprint }}",
        "{{ q.upper|e }}",
        "{{ self|trim }}",
        "{{ (range,)|first }}",
        "{{ options|map('upper') }}",
        "{% set x %}{{ dict }}{% endset %}{{ x }}",
        "{{ [q, zz] }}",
        "{{ {'k': zz} }}",
        "{{ q ~ zz }}",
        "{% for x in options %}{{ loop.cycle }}{% endfor %}",
        "{{ {'a': range}|tojson }}",
    ]
):
    jinja(L, f"leak-{i:02d}", t)

# -- resource exhaustion: every one a LimitError (or another typed error), fast ----------
R = "resource"
bombs = [
    ("mul-str", "{{ 'a' * 10**9 }}", "max_string"),
    ("mul-str-literal", "{{ 'a' * 1000000000 }}", "max_string"),
    ("mul-list", "{{ [1] * 10**9 }}", "max_items"),
    ("pow-int", "{{ 2 ** 100000000 }}", "max_int_bits"),
    ("pow-chain", "{{ (10 ** 100000) ** 100000 }}", "max_int_bits"),
    (
        "mul-int-loop",
        "{% set ns = namespace(x=10**1000) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
        "max_int_bits",
    ),
    ("center", "{{ 'x'|center(10**9) }}", "max_string"),
    ("center-literal", "{{ 'x'|center(1000000000) }}", "max_string"),
    ("indent", "{{ ('x\n' * 100000)|indent(100000) }}", "max_string"),
    ("indent-str", "{{ ('x\n' * 100000)|indent('y' * 100000, true, true) }}", "max_string"),
    ("format-width", "{{ '%999999999s'|format('x') }}", "max_string"),
    ("format-star", "{{ '%*s'|format(999999999, 'x') }}", "max_string"),
    ("format-precision", "{{ '%.999999999f'|format(1.0) }}", "max_string"),
    ("percent-width", "{{ '%999999999d' % 1 }}", "max_string"),
    ("percent-many", "{{ '%s%s%s%s%s%s%s%s%s%s%s%s' % ((('a' * 5000000),) * 12) }}", "max_string"),
    ("str-format-width", "{{ '{:>999999999}'.format(1) }}", "max_string"),
    ("str-format-nested", "{{ '{:{}}'.format('x', 999999999) }}", "max_string"),
    ("str-format-repeat", "{{ ('{0}' * 100000).format('a' * 1000) }}", ("max_string", "max_op_cost")),
    ("wordwrap", "{{ ('ab ' * 300000)|wordwrap(1, wrapstring='x' * 1000) }}", ("max_string", "max_op_cost")),
    ("wordwrap-input", "{{ ('ab ' * 3000000)|wordwrap(5) }}", "max_filter_input"),
    ("urlize-input", "{{ ('a ' * 3000000)|urlize }}", "max_filter_input"),
    ("batch", "{{ range(10)|batch(10**9, 'x')|list }}", "max_items"),
    ("slice", "{{ range(10)|slice(10**9, 'x')|list }}", "max_items"),
    ("join-sep", "{{ range(100000)|join('x' * 1000000) }}", "max_string"),
    ("join-items", "{{ ([('a' * 5000000)] * 1000)|join }}", "max_string"),
    ("replace-empty", "{{ ('a' * 1000000)|replace('', 'x' * 1000) }}", "max_string"),
    ("str-replace", "{{ ('a' * 1000000).replace('', 'x' * 1000) }}", "max_string"),
    ("ljust", "{{ 'x'.ljust(10**9) }}", "max_string"),
    ("zfill", "{{ '1'.zfill(10**9) }}", "max_string"),
    ("expandtabs", "{{ ('\t' * 1000).expandtabs(10**7) }}", "max_string"),
    ("str-join", "{{ ('x' * 1000000).join(['a'] * 1000) }}", "max_string"),
    ("translate", "{{ ('a' * 1000).translate({97: 'b' * 1000000}) }}", "max_string"),
    (
        "concat-double",
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
        "max_string",
    ),
    (
        "plus-double",
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "max_string",
    ),
    (
        "list-quadratic",
        "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}{% endfor %}",
        ("max_work", "deadline"),
    ),
    ("concat-big", "{{ ('a' * 9000000) ~ ('a' * 9000000) }}", "max_string"),
    ("print-refs", "{{ [('a' * 5000000)] * 1000 }}", "max_output"),
    ("fromkeys", "{{ {}.fromkeys(range(100000), 'x' * 1000000) }}", "max_output"),
    ("range-huge", "{{ range(10**9)|list|length }}", "max_range"),
    ("range-length", "{{ range(10**18)|length }}", "max_range"),
    (
        "loops-triple",
        "{% for i in range(999) %}{% for j in range(999) %}{% for k in range(999) %}{% endfor %}{% endfor %}{% endfor %}",
        ("max_loop_iterations", "deadline"),
    ),
    ("loops-output", "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}", None),
    ("loop-print-big", "{% for i in range(100000) %}{{ 'x' * 10000 }}{% endfor %}", ("max_output", "max_work")),
    (
        "loop-literal",
        "{% for i in range(100000) %}{% for j in range(100) %}" + "x" * 5000 + "{% endfor %}{% endfor %}",
        ("max_output", "max_work"),
    ),
    (
        "macro-loop",
        "{% macro m() %}{% for i in range(100000) %}{{ 'x' * 10000 }}{% endfor %}{% endmacro %}{{ m() }}",
        "max_work",
    ),
    (
        "fanout-output",
        "{% macro a(n) %}{% if n %}{{ a(n-1) }}{{ a(n-1) }}{% else %}xxxxxxxxxx{% endif %}{% endmacro %}{{ a(40) }}",
        None,
    ),
    (
        "fanout-silent",
        "{% macro a(n) %}{% if n %}{{ a(n-1) }}{{ a(n-1) }}{% endif %}{% endmacro %}{{ a(40) }}",
        ("max_macro_calls", "deadline"),
    ),
    (
        "cycler-loops",
        "{% set c = cycler(1, 2, 3) %}{% for i in range(100000) %}{% for j in range(100000) %}{{ c.next() }}{% endfor %}{% endfor %}",
        None,
    ),
    ("output-long", "{{ 'x' * 9000000 }}{{ 'x' * 9000000 }}", "max_output"),
    ("output-set", "{% set x = 'a' * 9000000 %}{{ x }}{{ x }}{{ x }}", "max_output"),
    ("list-mul-print", "{{ (range(100000)|list) * 100 }}", "max_items"),
    ("string-to-list", "{{ ('x' * 10000000)|list|length }}", "max_items"),
    ("lazy-batch", "{{ ('x' * 1000000)|batch(1)|list|length }}", None),
    (
        "deep-list",
        "{% set ns = namespace(x=[]) %}{% for i in range(10000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
        None,
    ),
    (
        "deep-tojson",
        "{% set ns = namespace(x=[]) %}{% for i in range(10000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|tojson }}",
        None,
    ),
    ("recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "recursion"),
    ("recursive-loop", "{% for x in [[1]] recursive %}{{ loop([[1]]) }}{% endfor %}", "recursion"),
    ("redos", "{{ ('a' * 40 ~ '!')|regex_replace('(a+)+$', '') }}", "deadline"),
    ("redos-alt", "{{ ('a' * 40 ~ '!')|regex_replace('(a|aa)+$', '') }}", "deadline"),
    ("regex-amplify", "{{ ('a' * 100000)|regex_replace('', 'x' * 1000) }}", ("max_string", "deadline")),
    ("source-size", "{{ q }}" + "x" * 200000, "max_source"),
    ("source-tokens", "{{ " + "+".join(["1"] * 30000) + " }}", "max_tokens"),
    ("parse-nesting", "{{ " + "(" * 5000 + "q" + ")" * 5000 + " }}", None),
    ("plus-chain", "{{ " + "+".join(["1"] * 9000) + " }}", None),
    ("blocks-nesting", "{% for a in options %}" * 30 + "x" + "{% endfor %}" * 30, None),
    ("strftime-undefined", "{{ strftime_now('%Y' * 10000000) }}", None),
    ("int-str", "{{ 10 ** 5000 }}", None),
    ("sum-lists", "{{ ([[1] * 1000] * 100000)|sum(start=[]) }}", None),
    ("sort-big", "{{ ('x' * 5000000)|sort|length }}", "max_items"),
]
# With the counted budgets (10,000,000 loop iterations), a million lazy items render.
WITHIN_COUNTS = frozenset({"lazy-batch"})
for name, t, limit in bombs:
    jinja(R, name, t, "any" if name in WITHIN_COUNTS else "error", limit=limit)

# Templates that look heavy but are within budget render as they should.
jinja("within", "range-ok", "{{ range(5)|list }}", "ok", text="[0, 1, 2, 3, 4]")
jinja("within", "mul-ok", "{{ 'ab' * 3 }}", "ok", text="ababab")
jinja("within", "loop-ok", "{% for i in range(3) %}{{ i }}{% endfor %}", "ok", text="012")
jinja("within", "center-ok", "{{ 'x'|center(5) }}", "ok", text="  x  ")
jinja("within", "format-ok", "{{ '%05d'|format(42) }}", "ok", text="00042")
jinja("within", "pow-ok", "{{ 2 ** 64 }}", "ok", text="18446744073709551616")
jinja("within", "namespace-ok", "{% set ns = namespace(a=1) %}{{ ns.a }}", "ok", text="1")
jinja("within", "regex-ok", "{{ q|regex_replace('[0-9]', '#') }}", "ok", text="What is #+#?")
jinja("within", "list-print", "{{ options }}", "ok", text="['3', '4']")
jinja("within", "join-ok", "{{ options|join(', ') }}", "ok", text="3, 4")


# -- YAML payloads: whole task files ------------------------------------------------------
Y = "yaml"
DATA = {"test.jsonl": _jsonl(RECORDS)}


def yaml_case(name: str, task: str, expect: str = "error", **kw: Any) -> None:
    files = {**DATA, **kw.pop("files", {})}
    P.append(Payload(Y, name, "yaml", task, expect, files=files, **kw))


BASE = "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: a\n"
LAUGHS = "metadata:\n  x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"  x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 4)
)
BOMB = "[" + ", ".join(["*a3"] * 100) + "]"  # 100 x 7,381 nodes, expanded only where it is used
for key, body in [
    ("description", f"description: {BOMB}\n"),
    ("num_fewshot", f"num_fewshot: {BOMB}\n"),
    ("doc_to_choice", f"doc_to_choice: {BOMB}\n"),
    ("choice_labels", f"template:\n  template_type: mcq\n  choice_labels: {BOMB}\n"),
    ("retriever_ids", f"retriever:\n  name: fixed\n  ids: {BOMB}\n"),
    ("data", f"data: {{test: {BOMB}}}\ndoc_to_text: q\n"),
]:
    base = BASE if key != "data" else ""
    yaml_case(f"alias-bomb-{key}", LAUGHS + base + body, limit="max_nodes")
CLASSIC = "".join(
    ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)]
)
yaml_case("billion-laughs-classic", CLASSIC + BASE, limit="max_nodes")
yaml_case("recursive-alias", BASE + "metadata: &m {a: *m}\n")
yaml_case("recursive-alias-list", BASE + "doc_to_choice: &c [a, *c]\n")
yaml_case("undefined-alias", BASE + "description: *nope\n")
yaml_case("deep-flow", BASE + "metadata: " + "[" * 50000 + "]" * 50000 + "\n", limit="max_depth")
yaml_case(
    "deep-block", BASE + "metadata:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(2000)), limit="max_depth"
)
yaml_case("deep-flow-map", BASE + "metadata: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", limit="max_depth")
yaml_case("many-keys", BASE + "metadata:\n" + "".join(f"  k{i}: {i}\n" for i in range(300000)), limit="max_nodes")
yaml_case("big-scalar", BASE + "description: '" + "x" * 20_000_000 + "'\n", limit="max_file_bytes")
yaml_case("omap", BASE + "metadata: !!omap [{a: 1}, {b: 2}]\n")
yaml_case("pairs", BASE + "metadata: !!pairs [{a: 1}]\n")
yaml_case("set", BASE + "metadata: !!set {a, b}\n")
yaml_case("python-object", BASE + "metadata: !!python/object/apply:os.system ['echo pwned']\n")
yaml_case("python-name", BASE + "metadata: !!python/name:os.system\n")
yaml_case("python-module", BASE + "metadata: !!python/module:os\n")
yaml_case("binary", BASE + "description: !!binary aGVsbG8=\n")
yaml_case("timestamp-tag", BASE + "description: !!timestamp 2001-12-14\n")
yaml_case("custom-tag", BASE + "description: !Template {jinja: x}\n")
yaml_case("duplicate-top", BASE + "doc_to_text: a\n")
yaml_case("duplicate-deep", "data:\n  test: [{q: first, q: second, a: x}]\ndoc_to_text: q\ndoc_to_target: a\n")
yaml_case("duplicate-template", BASE + "template: {template_type: mcq, suffix: a, suffix: b}\n")
yaml_case("duplicate-equal-keys", BASE + "metadata: {1: a, true: b}\n")
yaml_case("two-documents", BASE + "---\n" + BASE)
yaml_case("not-utf8", "bytes:" + (BASE + "description: caf\xe9\n").encode("latin-1").hex())
yaml_case("nul-byte", BASE + "description: a\x00b\n")
yaml_case("tabs", BASE + "metadata:\n\tk: v\n")
yaml_case("unclosed", BASE + "description: [a, b\n")
yaml_case("empty", "")
yaml_case("scalar-root", "just a string\n")
yaml_case("list-root", "- a\n- b\n")
yaml_case("complex-key", BASE + "metadata:\n  ? [a, b]\n  : c\n")
yaml_case("garbage", "bytes:" + bytes(range(256)).hex())
yaml_case("num-fewshot-float", BASE + "num_fewshot: 1e3\n")
yaml_case("num-fewshot-bool", BASE + "num_fewshot: true\n")
yaml_case("seed-huge", BASE + "seed: " + "9" * 5000 + "\n")
yaml_case("data-dev-zero", "data: {test: /dev/zero}\ndoc_to_text: q\n")
yaml_case("data-directory", "data: {test: .}\ndoc_to_text: q\n")
# YAML 1.1 would change these silently; YAML 1.2 keeps them as written.
yaml_case(
    "yaml11-choices",
    "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: [yes, no, on, off, 0755, '1:30', 1:30, 3.10, y, 2001-12-14]\n"
    "doc_to_target: 0\ntemplate: {template_type: mcq, choice_labels: [yes, no, on, off, y, n, Y, N, ~x, NO]}\n",
    "ok",
    text="What is 2+2?\nyes. yes\nno. no\non. on\noff. off\ny. 0755\nn. 1:30\nY. 1:30\nN. 3.10\n~x. y\nNO. 2001-12-14\nAnswer:",
)
yaml_case(
    "yaml-merge-ok",
    "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: options\ndoc_to_target: 0\n"
    "metadata: {d: &d {template_type: mcq, suffix: 'A:'}}\ntemplate: {<<: *d, prefix: 'Q: '}\n",
    "ok",
    text="Q: What is 2+2?\nA. 3\nB. 4\nA:",
)
yaml_case(
    "alias-ok",
    BASE.replace("doc_to_text: q\n", "") + "metadata: {t: &t q}\ndoc_to_text: *t\n",
    "ok",
    text="What is 2+2?",
)


# Style format strings (Python's str.format, no Jinja budget) in task files: refused at load.
MC = "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: options\ndoc_to_target: 0\n"
for name, fmt in [
    ("width", "{label}. {choice:>900000000}"),
    ("width-fill", "{label}. {choice!r:_<300000000}"),
    ("precision", "{label}. {choice:.999999999}"),
    ("number-width", "{number:0999999999d}. {choice}"),
    ("nested-attribute", "{label}. {choice:{choice.__class__}}"),
    ("nested-mro", "{label:{label.__class__.__mro__}}. {choice}"),
    ("nested-field", "{label}. {choice:>{number}}"),
    ("conversion", "{label}. {choice!x}"),
]:
    for option in ("choice_format", "answer_format"):
        yaml_case(f"style-{option}-{name}", MC + f"template: {{template_type: mcq, {option}: {json.dumps(fmt)}}}\n")
yaml_case(
    "style-spec-on-data",
    MC + 'template: {template_type: mcq, choice_format: "{label}. {choice:d}"}\n',
    files={"test.jsonl": _jsonl([{"q": "x", "options": [{"k": 1}, "b"]}])},
)

# -- hostile record values: rendered verbatim, or a typed error, never a crash ------------
V = "value"
HOSTILE = [
    "{{ 7*7 }}",
    "{% for x in range(10**9) %}{% endfor %}",
    "{q}",
    "{0}",
    "%s %d",
    "|||",
    "line\u2028separator\u2029paragraph",
    "next\x85line",
    "\ud800 lone surrogate",
    "\udfff",
    "pair \ud83d\ude00 made of surrogates",
    "nul\x00byte",
    "\x1b[31mred\x1b[0m",
    "\u202eRTL override",
    "\ufeffBOM",
    "tab\tand\r\nCRLF\rCR",
    "x" * 1_000_000,
    "y" * 5_000_000,
    "😀 emoji 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "e\u0301\u0301\u0301 combining",
    "</s><|im_end|><|eot_id|>",
    "None",
    "null",
    "Undefined",
    "'quotes' \"double\" \\backslash\\",
    "<script>alert(1)</script>",
    "${HOME} $(id) `id`",
    "",
    " ",
    "\n",
]
for i, value in enumerate(HOSTILE):
    P.append(Payload(V, f"value-{i:02d}", "value", value, "ok"))
for i, value in enumerate([12345678901234567890, -0.0, 1e308, True, 0, [1, [2, [3]]], {"k": "v"}]):
    P.append(Payload(V, f"typed-value-{i:02d}", "value", value, "ok"))
# Values that are not usable as a question or a choice: typed errors.
NULLS = [
    (
        "null-question",
        {"q": None, "a": "x", "options": ["a"]},
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: a\n",
    ),
    (
        "null-choices",
        {"q": "x", "a": 0, "options": None},
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: options\ndoc_to_target: a\n",
    ),
    (
        "null-choice-item",
        {"q": "x", "a": 0, "options": ["a", None]},
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: options\ndoc_to_target: a\n",
    ),
    (
        "null-mc-answer",
        {"q": "x", "a": None, "options": ["a", "b"]},
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: options\ndoc_to_target: a\n",
    ),
    ("null-gen-target", {"q": "x", "a": None}, "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: a\n"),
    ("deep-json-record", None, "data: {test: test.jsonl}\ndoc_to_text: q\n"),
    ("huge-int-record", None, "data: {test: test.jsonl}\ndoc_to_text: q\n"),
    ("missing-in-list", {"q": "x", "a": "y"}, "data: {test: test.jsonl}\ndoc_to_text: '{{ [q, zz] }}'\n"),
    (
        "missing-in-target",
        {"q": "x", "a": "y"},
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: '{{ [a, zz] }}'\n",
    ),
]
for name, record, task in NULLS:
    if name == "deep-json-record":
        data = '{"q": ' + "[" * 100000 + "]" * 100000 + "}\n"
    elif name == "huge-int-record":
        data = '{"q": ' + "9" * 5000 + "}\n"
    else:
        data = _jsonl([record])
    P.append(Payload(V, name, "yaml", task, "error", files={"test.jsonl": data}))
P.append(
    Payload(
        V,
        "null-gen-target-allowed",
        "yaml",
        "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: a\nallow_null_target: true\n",
        "ok",
        text="x",
        files={"test.jsonl": _jsonl([{"q": "x", "a": None}])},
    )
)

# -- bad command lines: one line, exit 2 -------------------------------------------------
C = "cli"
TASK = {"task.yaml": BASE, **DATA}
for name, argv in [
    ("missing-file", ["render", "nope.yaml"]),
    ("directory", ["render", "."]),
    ("negative-shots", ["render", "task.yaml", "--shots", "-1"]),
    ("bad-limit", ["render", "task.yaml", "--limit", "abc"]),
    ("bad-data", ["render", "task.yaml", "--data", "test"]),
    ("bad-data-empty", ["render", "task.yaml", "--data", "=x.jsonl"]),
    ("data-missing", ["render", "task.yaml", "--data", "test=nope.jsonl"]),
    ("data-dir", ["render", "task.yaml", "--data", "test=."]),
    ("unknown-meta", ["render", "task.yaml", "--meta", "nope"]),
    ("bad-meta-option", ["render", "task.yaml", "--meta-option", "x"]),
    ("unknown-meta-option", ["render", "task.yaml", "--meta", "messages", "--meta-option", "nope=1"]),
    ("bad-budget-value", ["render", "task.yaml", "--budget", "deadline=abc"]),
    ("unknown-budget", ["render", "task.yaml", "--budget", "deadlines=1"]),
    ("negative-budget", ["render", "task.yaml", "--budget", "max_output=-1"]),
    ("bad-budget-form", ["render", "task.yaml", "--budget", "deadline"]),
    ("nan-budget", ["render", "task.yaml", "--budget", "deadline=nan"]),
    ("overflow-budget", ["render", "task.yaml", "--budget", "max_output=1e400"]),
    ("zero-budget", ["render", "task.yaml", "--budget", "max_items=0"]),
    ("bad-format", ["render", "task.yaml", "--format", "xml"]),
    ("unknown-command", ["nope"]),
    ("unknown-style", ["render", "task.yaml", "--style", "nope"]),
    ("bad-template", ["render", "task.yaml", "--template", "99"]),
    ("bad-task-format", ["render", "task.yaml", "--task-format", "nope"]),
    ("bad-seed", ["render", "task.yaml", "--seed", "x"]),
    ("no-args", []),
    ("render-no-task", ["render"]),
    ("huge-shots", ["render", "task.yaml", "--shots", "99999999999999999999"]),
    ("surrogate-arg", ["render", "task\udcff.yaml"]),
]:
    P.append(Payload(C, name, "cli", argv, "error", files=TASK))


# -- the hardening corpus: one operation at a time, at real size ----------------------------
# Each payload below would run for seconds or build hundreds of megabytes in one single
# operation (a filter, a method, an operator) if its cost were not bounded before it runs;
# run at full size in the second batch (slow). Expected: a typed error, fast.
OP = "operation"
_OPERATIONS = _sibling("operation_bombs")
MILLION, DISTINCT = _OPERATIONS.MILLION, _OPERATIONS.DISTINCT
for name, t in _OPERATIONS.OPERATION_BOMBS:
    P.append(Payload(OP, name, "jinja", t, "error", slow=True))
# Operations at full size that are linear and fast (a search, a parse): they render, or stop
# (a deep comparison may reach Python's recursion limit): either way within budget.
for name, t in _OPERATIONS.LINEAR:
    P.append(Payload(OP, name, "jinja", t, "any", slow=True))

# A string subclass, a mapping view or a tuple from a template: operations on them are
# bounded as on their plain counterparts (within budgets: rendered).
jinja("within", "markup-center-ok", "{{ (q|e).center(16)|length }}", "ok", text="16")
jinja("within", "bytes-ok", "{{ ('ab'.encode() * 2)|length }}", "ok", text="4")
jinja("within", "int-base-ok", "{{ 'ff'|int(base=16) }}", "ok", text="255")
jinja("within", "round-ok", "{{ 1234|round(-2) }}", "ok", text="1200")
jinja("within", "tojson-indent-ok", "{{ [1]|tojson(2) }}", "ok", text="[\n  1\n]")
jinja("within", "split-ok", "{{ 'a b c'.split()|length }}", "ok", text="3")
jinja("within", "format-fill-ok", "{{ '{:\\n>3}'.format('x')|length }}", "ok", text="3")
jinja("within", "wordwrap-ok", "{{ 'aaa bbb ccc'|wordwrap(3) }}", "ok", text="aaa\nbbb\nccc")
jinja("within", "divisibleby-ok", "{{ 12 is divisibleby(4) }}", "ok", text="True")

# -- the same bombs through the mutable profile (task-template files with promptsource's
#    semantics: list.append and friends work as in plain Jinja) --------------------------------
M = "mutable"
TT_DATA = "data/processed/tt/test.jsonl"


def task_template(name: str, jinja_source: str, expect: str = "error", **kw: Any) -> None:
    body = (
        "name: tt\ndata_dir: tt\nmetadata: {task: qa.abstractive, domains: [misc], source_type: single_source,"
        " input_context: paragraph, output_context: sentence, contributor: tests, render_as: promptsource}\n"
        f"templates:\n  0: {{name: t, jinja: {json.dumps(jinja_source)}, evaluate: true}}\n"
    )
    files = {"templates/tt.yaml": body, TT_DATA: _jsonl(RECORDS)}
    P.append(Payload(M, name, "task_template", "templates/tt.yaml", expect, files=files, slow=True, **kw))


task_template("extend-doubling", "{% set l = [1] %}{% for i in range(40) %}{{ l.extend(l) }}{% endfor %}{{ q }} ||| a")
task_template("extend-big", "{% set l = [] %}{{ l.extend(range(100000)|list * 100) }}{{ l|length }} ||| a")
task_template("list-sort-big", f"{{% set l = {MILLION} %}}{{{{ l.sort() }}}}{{{{ q }}}} ||| a")
task_template("dict-update-big", f"{{% set d = {{}} %}}{{{{ d.update({{}}.fromkeys({DISTINCT})) }}}}{{{{ q }}}} ||| a")
task_template("append-self", "{% set l = [] %}{% for i in range(100000) %}{{ l.append(l) }}{% endfor %}{{ l }} ||| a")
# a million pairs, each counted as a loop iteration: within the counted budgets, rendered
task_template("zip-list", f"{{{{ zip({MILLION}, {MILLION})|list|length }}}} ||| a", "any")
task_template(
    "ok", "{% set l = [q] %}{% if l.append('x') %}{% endif %}{{ l|join(' ') }} ||| a", "ok", text="What is 2+2? x"
)

# -- objects in records (Python API): a template reads records, it does not act on them --------
OB = "object"
SECRET = "TOP-SECRET-7f3a9c"


def api_case(
    name: str, template: str, records_py: str, expect: str = "error", call: str = "render_records", **kw: Any
) -> None:
    content = {"call": call, "template": template, "records_py": records_py}
    if "options_py" in kw:
        content["options_py"] = kw.pop("options_py")
    files = {"secret.txt": SECRET + "\n", **kw.pop("files", {})}
    P.append(
        Payload(
            OB,
            name,
            "api",
            content,
            expect,
            files=files,
            slow=True,
            forbid=(SECRET,),
            forbid_files=("pwned.txt",),
            **kw,
        )
    )


PATH = "[{'q': Path('secret.txt'), 'a': 'x'}]"
for i, template in enumerate(
    [
        "{{ q.read_text() }}",
        "{{ q.read_bytes() }}",
        "{{ q.open().read() }}",
        "{{ q.write_text('pwned') }}",
        "{{ q.with_name('pwned.txt').write_text('x') }}",
        "{{ q.with_name('pwned.txt').touch() }}",
        "{{ (q.parent / 'pwned.txt').touch() }}",
        "{{ q.parent.iterdir()|list }}",
        "{{ q.exists() }}",
        "{{ q.stat().st_size }}",
        "{{ q }}",
        "{{ q.name }}",
        "{{ q|string }}",
        "{{ [q] }}",
        "{% for part in q.parts %}{{ part }}{% endfor %}",
    ]
):
    api_case(f"path-{i:02d}", template, PATH)
for i, template in enumerate(["{{ q('secret.txt').read() }}", "{{ q('pwned.txt', 'w').write('x') }}", "{{ q }}"]):
    api_case(f"open-{i:02d}", template, "[{'q': open, 'a': 'x'}]")
FILE = "[{'q': open('secret.txt'), 'a': 'x'}]"
for i, template in enumerate(
    [
        "{{ q.read() }}",
        "{% for line in q %}{{ line }}{% endfor %}",
        "{{ q|list }}",
        "{{ q|first }}",
        "{{ q|join }}",
        "{{ 'TOP' in q }}",
        "{{ q.readline() }}",
        "{{ q|e }}",
        "{{ q|length }}",
    ]
):
    api_case(f"file-{i:02d}", template, FILE)
EVIL = (
    "[{'q': type('Evil', (str,), {'boom': lambda self: open('pwned.txt', 'w').write('x'),"
    " '__str__': lambda self: open('secret.txt').read()})('What'), 'a': 'x'}]"
)
api_case("str-subclass-00", "{{ q.boom() }}", EVIL)
# A str subclass becomes the plain text it holds: its methods and its __str__ are gone.
for i, (template, text) in enumerate(
    [("{{ q.upper() }}", "WHAT"), ("{{ q }}", "What"), ("{{ q ~ '' }}", "What"), ("{{ q|upper }}", "WHAT")], 1
):
    api_case(f"str-subclass-{i:02d}", template, EVIL, "ok", text=text)
for i, (template, records) in enumerate(
    [
        ("{{ q.strftime('%Y' * 5000000)|length }}", "[{'q': datetime.date(2020, 1, 2), 'a': 'x'}]"),
        ("{{ q ** 999999 }}", "[{'q': Decimal('1.5'), 'a': 'x'}]"),
        ("{{ q.sqrt() }}", "[{'q': Decimal('2'), 'a': 'x'}]"),
        ("{{ q.items|list }}", "[{'q': os.environ, 'a': 'x'}]"),
        ("{{ q.system('touch pwned.txt') }}", "[{'q': os, 'a': 'x'}]"),
        ("{{ q['x'] }}", "[{'q': defaultdict(lambda: open('pwned.txt', 'w')), 'a': 'x'}]"),
        ("{{ q.x }}", "[{'q': SimpleNamespace(x=SimpleNamespace()), 'a': 'x'}]"),
        ("{{ q|list }}", "[{'q': (open('secret.txt') for _ in range(1)), 'a': 'x'}]"),
        ("{{ q[0].read() }}", "[{'q': [open('secret.txt')], 'a': 'x'}]"),
        ("{{ q.k.read_text() }}", "[{'q': {'k': Path('secret.txt')}, 'a': 'x'}]"),
        ("{{ q[0][0].read_text() }}", "[{'q': ([Path('secret.txt')],), 'a': 'x'}]"),
        ("{{ q.read_text() }}", "[{'q': 'x', 'a': 'x', 'k': Path('secret.txt')}]"),
    ]
):
    api_case(f"other-{i:02d}", template, records)
# The same objects through lm-evaluation-harness task files and chat conversations.
api_case("lm-eval-path", "{{ q.read_text() }}", PATH, call="lm_eval")
api_case(
    "chat-path",
    "{{ messages[0].content.read_text() }}",
    "[{'role': 'user', 'content': Path('secret.txt')}]",
    call="render_chat",
)
api_case(
    "chat-option-path",
    "{{ q.read_text() }}",
    "[{'role': 'user', 'content': 'hi'}]",
    call="render_chat",
    options_py="{'q': Path('secret.txt')}",
)
# Plain data and its lossless conversions render as before.
api_case(
    "plain-ok",
    "{{ q }} {{ n }} {{ l|join(',') }} {{ t[0] }} {{ d.k }}",
    "[{'q': 'x', 'n': 3, 'l': ['a', 'b'], 't': ('u',), 'd': {'k': 'v'}, 'a': 'x'}]",
    "ok",
    text="x 3 a,b u v",
)
api_case("str-subclass-ok", "{{ q.upper() }}", "[{'q': type('S', (str,), {})('abc'), 'a': 'x'}]", "ok", text="ABC")
api_case("unused-object-ok", "{{ q }}", "[{'q': 'x', 'a': 'x', 'image': Path('secret.txt')}]", "ok", text="x")
api_case("mapping-record-ok", "{{ q }}", "[OrderedDict(q='x', a='y')]", "ok", text="x")

# -- files: includes, data files, special files ---------------------------------------------------
F = "file"


def file_case(name: str, files: dict[str, str], argv: list[str], expect: str = "error", **kw: Any) -> None:
    P.append(Payload(F, name, "cli", argv, expect, files={**DATA, **files}, slow=True, **kw))


LM = "task: t\ndataset_path: json\noutput_type: generate_until\ndoc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n"
RENDER_LM = ["render", "task.yaml", "--data", "test=test.jsonl", "--format", "jsonl"]
AMPLIFY = {"task.yaml": LM + "include: [" + ", ".join(["inc1.yaml"] * 40) + "]\n"}
for level in range(1, 6):
    AMPLIFY[f"inc{level}.yaml"] = "include: [" + ", ".join([f"inc{level + 1}.yaml"] * 40) + "]\nx: 1\n"
AMPLIFY["inc6.yaml"] = "x: 1\n"
file_case("include-amplification", AMPLIFY, RENDER_LM)
BIG_INCLUDE = {
    "task.yaml": LM + "include: [" + ", ".join(["big.yaml"] * 200) + "]\n",
    "big.yaml": "description: '" + "x" * 4_000_000 + "'\n",
}
file_case("include-bytes", BIG_INCLUDE, RENDER_LM)
file_case(
    "include-symlink-loop",
    {"task.yaml": LM + "include: loop1.yaml\n", "loop1.yaml": "symlink:loop2.yaml", "loop2.yaml": "symlink:loop1.yaml"},
    RENDER_LM,
)
file_case("include-nul", {"task.yaml": LM + 'include: "a\\0b.yaml"\n'}, RENDER_LM)
file_case("include-directory", {"task.yaml": LM + "include: sub\n", "sub/x": "x"}, RENDER_LM)
file_case("include-fifo", {"task.yaml": LM + "include: pipe.yaml\n", "pipe.yaml": "fifo:"}, RENDER_LM)
file_case("include-dev-zero", {"task.yaml": LM + "include: /dev/zero\n"}, RENDER_LM)
file_case("include-dev-stdin", {"task.yaml": LM + "include: /dev/stdin\n"}, RENDER_LM)
file_case("include-proc", {"task.yaml": LM + "include: /proc/self/environ\n"}, RENDER_LM)
file_case("task-fifo", {"task.yaml": "fifo:"}, ["render", "task.yaml"])
file_case("task-dev-zero", {}, ["render", "/dev/zero"])
file_case(
    "meta-template-fifo", {"task.yaml": BASE, "meta.yaml": "fifo:"}, ["render", "task.yaml", "--meta", "meta.yaml"]
)
file_case(
    "chat-template-fifo",
    {"conversation.json": "[]", "chat.jinja": "fifo:"},
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
file_case(
    "chat-template-dev-zero",
    {"conversation.json": "[]"},
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=/dev/zero"],
)
file_case(
    "conversation-fifo",
    {"conversation.json": "fifo:", "chat.jinja": "{{ messages }}"},
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
file_case(
    "conversation-dev-zero",
    {"chat.jinja": "{{ messages }}"},
    ["chat", "/dev/zero", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
file_case(
    "data-fifo", {"task.yaml": BASE.replace("test.jsonl", "pipe.jsonl"), "pipe.jsonl": "fifo:"}, ["render", "task.yaml"]
)
file_case("data-dev-zero-option", {"task.yaml": BASE}, ["render", "task.yaml", "--data", "test=/dev/zero"])
file_case(
    "jsonl-line-20mb",
    {"task.yaml": BASE, "test.jsonl": '{"q": "' + "x" * 20_000_000 + '", "a": "x"}\n'},
    ["render", "task.yaml", "--format", "jsonl"],
)
file_case(
    "jsonl-line-50mb",
    {"task.yaml": BASE, "test.jsonl": '{"q": "' + "x" * 50_000_000 + '"}\n'},
    ["render", "task.yaml", "--format", "jsonl"],
)
file_case(
    "jsonl-sparse-2gb",
    {"task.yaml": BASE, "test.jsonl": "sparse:2000000000:" + b'{"q": "'.hex()},
    ["render", "task.yaml", "--format", "jsonl"],
)
file_case(
    "jsonl-no-newline-2gb",
    {"task.yaml": BASE.replace(".jsonl", ".json"), "test.json": "sparse:2000000000:" + b'[{"q": "'.hex()},
    ["render", "task.yaml", "--format", "jsonl"],
)
file_case(
    "jsonl-line-ok",
    {"task.yaml": BASE, "test.jsonl": '{"q": "' + "x" * 2_000_000 + '", "a": "x"}\n'},
    ["render", "task.yaml", "--format", "jsonl"],
    "ok",
    text="x" * 2_000_000,
)
JSON_DEEP = "{" + '"a": [' * 5000 + "]" * 5000 + "}"
file_case("json-task-deep", {"task.json": JSON_DEEP}, ["render", "task.json"])
file_case(
    "json-task-nodes",
    {
        "task.json": '{"data": {"test": "test.jsonl"}, "doc_to_text": "q", "metadata": ['
        + ", ".join(["1"] * 300000)
        + "]}"
    },
    ["render", "task.json"],
)
file_case(
    "json-task-surrogate-deep",
    {"task.json": '{"x": "\\ud83d\\ude00", "y": ' + "[" * 5000 + "]" * 5000 + "}"},
    ["render", "task.json"],
)
file_case(
    "json-task-ok",
    {
        "task.json": '{"data": {"test": "test.jsonl"}, "doc_to_text": "q", "doc_to_target": "a",'
        ' "description": "\\ud83d\\ude00 "}'
    },
    ["render", "task.json"],
    "ok",
)

# A task's own texts are repeated with every few-shot example: a 4 MB delimiter and 250
# examples would make each prompt a gigabyte.
DEV = {"dev.jsonl": _jsonl([{"q": f"q{i}", "a": "x"} for i in range(300)])}
SHOTS = "data: {test: test.jsonl, dev: dev.jsonl}\nfewshot_split: dev\nnum_fewshot: 250\ndoc_to_text: q\n"
file_case(
    "repeated-fewshot-delimiter",
    {**DEV, "task.yaml": SHOTS + "doc_to_target: a\nfewshot_delimiter: '" + "x" * 4_000_000 + "'\n"},
    ["render", "task.yaml", "--format", "jsonl"],
)
file_case(
    "repeated-target-delimiter",
    {**DEV, "task.yaml": SHOTS + "doc_to_target: a\ntarget_delimiter: '" + "x" * 4_000_000 + "'\n"},
    ["render", "task.yaml", "--format", "jsonl"],
)
file_case(
    "repeated-prefix",
    {
        **DEV,
        "task.yaml": SHOTS + "doc_to_choice: [a, b]\ndoc_to_target: 0\n"
        "template: {template_type: mcq, prefix: '" + "x" * 4_000_000 + "'}\n",
    },
    ["render", "task.yaml", "--format", "jsonl"],
)

# -- errors and output: one printable line, no traceback, no Python internals --------------------
OUT = "output"
CHAT_CONVERSATION = json.dumps([{"role": "user", "content": RECORDS[0]["q"]}])


def output_case(name: str, files: dict[str, str], argv: list[str], expect: str = "error", **kw: Any) -> None:
    P.append(Payload(OUT, name, "cli", argv, expect, files={**DATA, "task.yaml": BASE, **files}, slow=True, **kw))


output_case(
    "leak-getitem-range",
    {"task.yaml": BASE.replace("doc_to_text: q", "doc_to_text: '{{ {}[range] }}'")},
    ["render", "task.yaml"],
)
output_case(
    "leak-index-method",
    {"task.yaml": BASE.replace("doc_to_text: q", "doc_to_text: '{{ [1].index(q.upper) }}'")},
    ["render", "task.yaml"],
)
output_case(
    "leak-raise-class",
    {"conversation.json": CHAT_CONVERSATION, "chat.jinja": "{{ raise_exception(cycler) }}"},
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
output_case(
    "leak-raise-method",
    {"conversation.json": CHAT_CONVERSATION, "chat.jinja": "{{ raise_exception(messages[0].content.upper) }}"},
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
output_case(
    "leak-attribute-error",
    {"task.yaml": BASE.replace("doc_to_text: q", "doc_to_text: '{{ q.upper.x.y }}'")},
    ["render", "task.yaml"],
)
output_case(
    "leak-call-error",
    {"task.yaml": BASE.replace("doc_to_text: q", "doc_to_text: '{{ q.upper(cycler) }}'")},
    ["render", "task.yaml"],
)
output_case("control-yaml-key", {"task.yaml": BASE + '"bad\\e[31mkey\\r\\u2028": 1\n'}, ["render", "task.yaml"])
output_case(
    "control-raise",
    {
        "conversation.json": CHAT_CONVERSATION,
        "chat.jinja": "{{ raise_exception('a\\x1b[2J\\rb\\u2028c\\u202ed\\x00e\\x7f') }}",
    },
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
output_case("control-path", {}, ["render", "no\x1b[31mpe\r.yaml"])
output_case(
    "control-record-key",
    {
        "task.yaml": BASE.replace("doc_to_text: q", "doc_to_text: zz"),
        "test.jsonl": json.dumps({"q\x1b[2J\r\u2028": "x", "a": "y"}) + "\n",
    },
    ["render", "task.yaml"],
)
output_case(
    "control-content",
    {
        "conversation.json": json.dumps([{"role": "us\x1b[2Jer\r", "content": "x"}]),
        "chat.jinja": "{{ raise_exception(messages[0].role) }}",
    },
    ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"],
)
output_case("control-data-path", {}, ["render", "task.yaml", "--data", "test=a\x1b]0;x\x07b.jsonl"])
output_case("long-seed", {}, ["render", "task.yaml", "--seed", "9" * 5000])
output_case("long-limit", {}, ["render", "task.yaml", "--limit", "9" * 5000])
output_case("long-path", {}, ["render", "x" * 3000 + ".yaml"])
output_case("long-key", {"task.yaml": BASE + "k" * 5000 + ": 1\n"}, ["render", "task.yaml"])
output_case(
    "long-problems",
    {
        "task.yaml": "task: t\ndataset_path: json\n"
        + "".join(f"doc_to_text{i}: '{{{{ x }}}}{'y' * 100}'\n" for i in range(100))
    },
    ["render", "task.yaml", "--data", "test=test.jsonl"],
)
output_case(
    "long-template-error",
    {"task.yaml": BASE.replace("doc_to_text: q", "doc_to_text: '{{ " + "q." * 3000 + "x }}'")},
    ["render", "task.yaml"],
)
output_case("limit-huge", {}, ["render", "task.yaml", "--limit", "99999999999999999999"], "ok")
output_case("stdout-closed", {}, ["render", "task.yaml"], stdout="closed")
output_case("stdout-full", {}, ["render", "task.yaml"], stdout="full")
output_case("stdout-full-jsonl", {}, ["render", "task.yaml", "--format", "jsonl"], stdout="full")
output_case("chat-stdout-full", {"conversation.json": CHAT_CONVERSATION}, ["chat", "conversation.json"], stdout="full")
output_case("plugins-stdout-full", {}, ["plugins"], stdout="full")
TT_TASK = (
    "name: tt\ndata_dir: tt\nmetadata: {task: qa.abstractive, domains: [misc], source_type: single_source,"
    " input_context: paragraph, output_context: sentence, contributor: tests}\n"
    "templates:\n  0: {name: t, jinja: '{{ q }} ||| {{ a }}', evaluate: true}\n"
)
PROMPTSOURCE = (
    "dataset: d\ntemplates:\n  abc-1: !Template\n    answer_choices: null\n    id: abc-1\n"
    "    jinja: '{{ q }} ||| {{ a }}'\n    metadata: !TemplateMetadata\n      choices_in_prompt: false\n"
    "      metrics: [Accuracy]\n      original_task: true\n    name: t\n    reference: ''\n"
)
OUT_FILES = {"tt.yaml": TT_TASK, "data/processed/tt/test.jsonl": _jsonl(RECORDS), "templates.yaml": PROMPTSOURCE}
for command, source in (("instantiate", ["tt.yaml"]), ("convert", ["promptsource", "templates.yaml"])):
    for where in ("/proc/x", "task.yaml", "/dev/null/x", "a\x00b"):
        name = where.strip("/").replace("/", "-").replace("\x00", "nul")
        output_case(f"{command}-out-{name}", OUT_FILES, [command, *source, "--out", where])
    output_case(f"{command}-ok", OUT_FILES, [command, *source, "--out", "made"], "ok")
output_case("export-out-proc", {}, ["export", "task.yaml", "--out", "/proc/x"])
output_case(
    "nan-target",
    {"test.jsonl": '{"q": "x", "a": NaN}\n{"q": "y", "a": Infinity}\n{"q": "z", "a": -Infinity}\n'},
    ["render", "task.yaml", "--format", "jsonl"],
    "ok",
    text="x",
)
output_case(
    "nan-choices",
    {"task.yaml": "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: [.inf, .nan, -.inf]\ndoc_to_target: 0\n"},
    ["render", "task.yaml", "--format", "jsonl"],
    "ok",
)
output_case(
    "nan-record-value",
    {"test.jsonl": '{"q": NaN, "a": "x"}\n'},
    ["render", "task.yaml", "--format", "jsonl"],
    "ok",
    text="nan",
)


# -- turning payloads into runner cases ----------------------------------------------------


# Resource bombs that are not bombs as chat templates: lm-evaluation-harness's regex_replace
# filter is not one of transformers' chat-template filters (a typed error of its own).
NOT_CHAT = frozenset({"redos", "redos-alt", "regex-amplify"})
# transformers' tojson takes ensure_ascii first, indent second: tojson(99999999) is compact there.
CHAT_OK = frozenset({"tojson-indent-positional", "tojson-indent-string"})
CONVERSATION = json.dumps([{"role": "user", "content": RECORDS[0]["q"]}])
CHAT_VARIABLES = {
    "q": f"q={json.dumps(RECORDS[0]['q'])}",
    "options": f"options={json.dumps(RECORDS[0]['options'])}",
    "n": f"n={RECORDS[0]['n']}",
    "s": f"s={json.dumps(RECORDS[0]['s'])}",
}


def _task(text_spec: str | None = None, description: str | None = None) -> str:
    lines = ["data: {test: test.jsonl}", f"doc_to_text: {json.dumps(text_spec or 'q')}", "doc_to_target: a"]
    if description is not None:
        lines.append(f"description: {json.dumps(description)}")
    return "\n".join(lines) + "\n"


def cases() -> list[dict]:
    out: list[dict] = []
    for p in P:
        base = {"category": p.category, "payload": p.name, "expect": p.expect, "limit": p.limit, "text": p.text}
        base.update(slow=p.slow, forbid=list(p.forbid), forbid_files=list(p.forbid_files))
        if p.stdout:
            base["stdout"] = p.stdout
        if p.kind == "jinja":
            files = {"test.jsonl": _jsonl(RECORDS)}
            variants = [
                ("doc_to_text/cli", {"task.yaml": _task(p.content)}, "cli"),
                ("description/cli", {"task.yaml": _task(description=p.content)}, "cli"),
                ("doc_to_text/api", {"task.yaml": _task(p.content)}, "api"),
            ]
            for where, task, mode in variants:
                case = {**base, "id": f"{p.category}/{p.name}/{where}", "files": {**files, **task}, "where": where}
                if mode == "cli":
                    case["cli"] = ["render", "task.yaml", "--format", "jsonl"]
                else:
                    case["api"] = {"task": "task.yaml"}
                    case["error"] = p.error
                out.append(case)
            if p.category in (R, OP) and p.name not in NOT_CHAT:
                # The bomb as a model's chat template, through the fast code generator of the
                # `hf` meta template (its budgets are checked inline), the record's fields as
                # template variables.
                out.append(
                    {
                        **base,
                        **({"expect": "ok"} if p.name in CHAT_OK else {}),
                        "id": f"{p.category}/{p.name}/chat_template/cli",
                        "files": {"chat.jinja": p.content, "conversation.json": CONVERSATION},
                        "where": "chat_template",
                        "cli": ["chat", "conversation.json", "--meta", "hf", "--meta-option", "template=chat.jinja"]
                        + [arg for key in ("q", "options", "n", "s") for arg in ("--meta-option", CHAT_VARIABLES[key])],
                    }
                )
        elif p.kind == "yaml":
            files = {**p.files, "task.yaml": p.content}
            out.append(
                {
                    **base,
                    "id": f"{p.category}/{p.name}/cli",
                    "files": files,
                    "cli": ["render", "task.yaml", "--format", "jsonl"],
                }
            )
            out.append({**base, "id": f"{p.category}/{p.name}/api", "files": files, "api": {"task": "task.yaml"}})
        elif p.kind == "value":
            record = {"q": p.content, "a": "x", "c": ["first", p.content]}
            data = json.dumps(record) + "\n"  # ASCII JSON: surrogates as \\uXXXX escapes
            for spec_name, spec in [("name", "q"), ("jinja", "Q: {{ q }}"), ("format", "Q: {q}")]:
                task = _task(spec)
                value = json.loads(data)["q"]  # what the record holds (surrogate pairs join)
                expected = str(value) if spec_name == "name" else f"Q: {value}"
                files = {"test.jsonl": data, "task.yaml": task}
                out.append(
                    {
                        **base,
                        "id": f"{p.category}/{p.name}/{spec_name}/cli",
                        "files": files,
                        "cli": ["render", "task.yaml", "--format", "jsonl"],
                        "text": expected,
                    }
                )
                if spec_name != "jinja":
                    continue  # the Python API path once per value
                out.append(
                    {
                        **base,
                        "id": f"{p.category}/{p.name}/{spec_name}/api",
                        "files": files,
                        "api": {"task": "task.yaml"},
                        "text": expected,
                    }
                )
            mc = "data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: 1\ntemplate: cloze\n"
            out.append(
                {
                    **base,
                    "id": f"{p.category}/{p.name}/choice/cli",
                    "files": {"test.jsonl": data, "task.yaml": mc},
                    "cli": ["render", "task.yaml", "--format", "jsonl"],
                    "text": None,
                    "continuation": " " + str(json.loads(data)["q"]),
                }
            )
        elif p.kind == "cli":
            out.append({**base, "id": f"{p.category}/{p.name}", "files": p.files, "cli": p.content})
        elif p.kind == "task_template":
            out.append(
                {
                    **base,
                    "id": f"{p.category}/{p.name}/cli",
                    "files": p.files,
                    "cli": ["render", p.content, "--format", "jsonl"],
                }
            )
            out.append({**base, "id": f"{p.category}/{p.name}/api", "files": p.files, "api": {"task": p.content}})
        elif p.kind == "api":
            out.append({**base, "id": f"{p.category}/{p.name}/api", "files": p.files, "api": dict(p.content)})
    return out
