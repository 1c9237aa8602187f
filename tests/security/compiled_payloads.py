"""Payloads aimed at the compiled paths: simple Jinja turned into plain Python
(``fields/jinja_compiler.py``) and the renderer's generated fast path
(``fastpath.py``, ``styles/compiled.py``).

Those paths bypass the sandbox's machinery, so they must reproduce its budgets
exactly. Every case here is a task file whose templates compile, rendered over
hostile records (huge strings, strings that grow under ``upper()``, lone
surrogates, line separators, deep nesting, huge numbers, values of the wrong
type, Jinja inside data) under the default budgets and under tight ones, as
native task files and lm-evaluation-harness task files, with the template as
``doc_to_text``, ``doc_to_target``, ``doc_to_choice`` and ``description``.
differential.py renders each case by the compiled paths and by the sandbox alone;
test_compiled_paths.py requires the same text or the same typed error, record by
record, and no crash or hang.
"""

from __future__ import annotations

import json
from typing import Any

# -- hostile values ------------------------------------------------------------------------

BIG = 1_200_000  # characters: above the compiled code's 1 Mi threshold, within max_string

VALUES: list[tuple[str, Any]] = [
    ("plain", "What is 2+2?"),
    ("spaced", "  padded question  \n"),
    ("empty", ""),
    ("jinja-in-data", "{{ 7*7 }} {% for x in range(10**9) %}{% endfor %} {# c #}"),
    ("format-in-data", "{0} {q} %s {choice.__class__}"),
    ("line-separators", "a\u2028b\u2029c\x85d\r\ne"),
    ("surrogates", "\ud800 lone \udfff"),
    ("nul-escape", "nul\x00\x1b[31m\u202e"),
    ("grows-upper", "\u00df\ufb03" * 250_000),  # 'ß' -> 'SS', 'ﬃ' -> 'FFI': 5x under upper()
    ("grows-upper-small", "\u00df\ufb03" * 300),
    ("huge-spaces", " " * (BIG // 2) + "x" + " " * (BIG // 2)),
    ("huge", "y" * BIG),
    ("just-over-threshold", "z" * ((1 << 20) + 1)),
    ("at-threshold", "w" * (1 << 20)),
    ("unprintable-big", "\x01" * 120_000),
    ("list", ["a", "b"]),
    ("list-huge-items", ["a" * 300_000] * 4),
    ("list-many", ["x"] * 20_000),
    ("deep-list", None),  # built below (nested 300 deep)
    ("dict", {"k": "v", "items": "field", "strip": "s"}),
    ("int", 7),
    ("int-huge", int("9" * 4000)),
    ("float", 1e308),
    ("bool", True),
    ("null", None),
]


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _value(name: str, value: Any) -> Any:
    return _deep(300) if name == "deep-list" else value


def _small(value: Any) -> Any:
    """A value cut to a few thousand characters (the quick run's tight budgets stop it as
    they stop the large one)."""
    if isinstance(value, str) and len(value) > 6000:
        return value[:3000] + value[-3000:]
    if isinstance(value, list) and len(value) > 50:
        return value[:50]
    if isinstance(value, list):
        return [_small(item) for item in value]
    return value


def records(key: str = "q", small: bool = False) -> list[dict]:
    """One record per hostile value, in ``key`` (the others plain); ``small``: values cut short."""
    out = []
    for name, value in VALUES:
        if small:
            if name in ("just-over-threshold", "at-threshold"):
                continue  # about the 1 Mi threshold: the full run's
            value = _small(value)
        record = {"q": "Question?", "a": "answer", "options": ["first", "second"], "gold": 1, "name": name}
        record["self"] = record["loop"] = " a field Jinja's name hides "  # {{ self }} is the template
        record[key] = _value(name, value)
        out.append(record)
    return out


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# -- budgets ------------------------------------------------------------------------------

LIMITS: dict[str, dict | None] = {
    "default": None,
    "tight": {"max_output": 2000, "max_string": 500, "max_work": 3000, "max_items": 5},
    "output": {"max_output": 5000},
    "work": {"max_work": 1000},
}

# -- simple templates (each one compiles) --------------------------------------------------

TEXT_TEMPLATES = [
    "{{ q }}",
    "Q: {{ q }}\nA:",
    "{{ q.strip() }}",
    "Q: {{ q.upper() }}\nA:",
    "{{ q.strip().lower().title() }}",
    "{{ q }}{{ q }}{{ q }}{{ q }}",
    "{{ [q, a] }}",
    "{{ q[0] }}|{{ q[-1] }}",
    "{{ q.k }}/{{ q['items'] }}",
    "{{ q.swapcase() }}{{ q.casefold() }}",
    "{{ 'lit' }} {{ 12345 }} {{ none }} {{ 1.5 }} {{ q }}",
    "{{ q | trim | upper }} {{ q | capitalize }} {{ q | string }}",
    "{{ q + ' / ' + a + q }}",
    "{{ q.split(' ')[-1].strip('?') }}{{ q.rsplit('a')[0] }}",
    "{{ options[gold] }} {{ ['x', 'y'][gold] }} {{ q[gold] }}",
    "{{ q if q is defined else a }} {{ a if q is none else q }}",
    "{{ gold | int }} {{ q | int }}",
    "{% if q %}[{{ q }}]{% else %}-{% endif %}{% if q is none %}N{% endif %}",
    "{% for x in q %}{{ 'ABCD'[loop.index0] }}. {{ x }}\n{% endfor %}{{ gold | int - 1 }}",
    "{% for x in options %}{% for y in q %}{{ y }}{{ loop.index }}{% endfor %}{{ x }}{% endfor %}",
    "{% for i in range(q|length) %}{{ q[i] }}{% endfor %}{{ 'A' if q == 'x' else gold > 0 }}",
    "{{ q|join(', ') }} {{ options|join('\\n') }}",
    "{{ 'Q: ' ~ q ~ ' / ' ~ a }}{{ q ~ gold }}",
    "{{ q | replace('a', 'bbbb') }}|{{ q.replace(' ', '') }}|{{ q | replace('', '--') }}",
    "{% set x = q.strip() %}{{ x }}|{{ x ~ x }}{% if x %}!{% endif %}",
    "{{ q | sort | join(',') }} {{ q | first }} {{ q | last }} {{ options | first }}",
    "{{ q | default('d') }} {{ missing | default('m') }} {{ gold | d(0) }}",
    "{{ q[1:] }}|{{ q[:-1] }}|{{ options[gold:] }}|{{ q[-5:gold] }}",
    "{% if q and q|length > 3 or missing %}[{{ q.upper() }}]{% endif %}{{ a if q or a else gold }}",
]


def _native(**keys: Any) -> str:
    lines = ["data: {test: test.jsonl}"]
    for key, value in keys.items():
        lines.append(f"{key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def _lm_eval(**keys: Any) -> str:
    lines = ["task: probe", "dataset_path: probe/none", "test_split: test"]
    for key, value in keys.items():
        lines.append(f"{key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


ROWS = {key: (lambda key=key: records(key)) for key in ("q", "options", "gold")}
ROWS.update({f"{key}-small": (lambda key=key: records(key, small=True)) for key in ("q", "options", "gold")})
ROWS["escape"] = lambda: ESCAPE_ROWS
ROWS["none"] = lambda: []
_DATA: dict[str, str] = {}


def data_text(rows: str) -> str:
    """The JSON Lines of a named set of records (made once: they are large)."""
    text = _DATA.get(rows)
    if text is None:
        text = _DATA[rows] = _jsonl(ROWS[rows]())
    return text


def _case(cid: str, category: str, task: str, rows: str, limits: str, **more: Any) -> dict:
    budget = LIMITS[limits]
    case = {
        "id": f"{category}/{cid}/{limits}",
        "category": category,
        "files": {"task.yaml": task},
        "rows": rows,
        "task": "task.yaml",
        "limits": budget,
        "budget": [f"{k}={v}" for k, v in (budget or {}).items()],
        **more,
    }
    return case


QUICK_MODES = ("fast", "pickled", "worker-env", "sandbox", "cli", "cli-sandbox")


def quick_cases() -> list[dict]:
    """The cases the test suite runs (a few seconds of work): tight budgets, values cut
    short, every template and position once, fewer modes. ``cases()`` is the full run."""
    out = []
    for case in cases():
        if case["limits"] is None and case["category"] not in ("escape", "style-format"):
            continue
        if case["limits"] is not None and case["id"].rsplit("/", 1)[1] != "tight":
            continue
        if case["category"] == "escape" and "lm-eval" in case["id"]:
            continue
        if case["category"] == "style-format" and "answer_format" in case["id"]:
            continue
        case = dict(case)
        if case.get("rows") in ("q", "options", "gold"):
            case["rows"] += "-small"
        modes = [mode for mode in case.get("modes", QUICK_MODES) if mode in QUICK_MODES]
        if case["limits"] is None:  # worker processes differ only in the budgets they know
            modes = [mode for mode in modes if mode not in ("pickled", "worker-env")]
        if case["category"] == "escape":  # the command line is the full run's
            modes = [mode for mode in modes if not mode.startswith("cli")]
        case["modes"] = modes
        out.append(case)
    return out


def cases() -> list[dict]:
    out: list[dict] = []
    rows = "q"
    # 1. Compiled templates as doc_to_text (generation task), every hostile value, every budget set.
    for i, template in enumerate(TEXT_TEMPLATES):
        for limits in LIMITS:
            out.append(
                _case(f"text-{i:02d}", "doc_to_text", _native(doc_to_text=template, doc_to_target="a"), rows, limits)
            )
    # 2. As description (a per-record description), doc_to_target and doc_to_choice.
    for i, template in enumerate(["{{ q }}\n\n", "About {{ q.strip() }}:\n\n", "{{ q.upper() }}"]):
        for limits in LIMITS:
            task = _native(doc_to_text="a", doc_to_target="a", description=template)
            out.append(_case(f"description-{i:02d}", "description", task, rows, limits))
    for i, template in enumerate(["{{ q }}", "{{ q.strip() }}", "A: {{ q }}"]):
        for limits in LIMITS:
            task = _native(doc_to_text="a", doc_to_target=template)
            out.append(_case(f"target-{i:02d}", "doc_to_target", task, rows, limits))
    choice_rows = "options"
    for i, (template, style) in enumerate(
        [("{{ options }}", "mcq"), ("{{ options }}", "cloze"), ("{{ [q, a] }}", "mcq"), ("{{ options }}", "mcq::mmlu")]
    ):
        for limits in LIMITS:
            task = _native(doc_to_text="q", doc_to_choice=template, doc_to_target="gold", template=style)
            out.append(_case(f"choice-{i:02d}", "doc_to_choice", task, choice_rows, limits))
    # 3. The renderer's fast path: multiple choice with the question through a str method,
    #    choices and target as expressions, a description the same for every record.
    target_rows = "gold"
    for i, keys in enumerate(
        [
            {"doc_to_text": "{{ q.strip() }}", "doc_to_choice": "options", "doc_to_target": "gold", "template": "mcq"},
            {"doc_to_text": "{{ q.upper() }}", "doc_to_choice": "{{ options }}", "doc_to_target": "{{ gold }}"},
            {
                "doc_to_text": "Q: {{ q }}",
                "doc_to_choice": "{{ options }}",
                "doc_to_target": "gold",
                "template": "cloze",
            },
            {"doc_to_text": "{{ q }}", "doc_to_choice": "options", "doc_to_target": "gold", "description": "{{ 'D' }}"},
            {"doc_to_text": "{{ self.strip() }}", "doc_to_choice": "options", "doc_to_target": "gold"},
            {"doc_to_text": "{{ loop.strip() }}", "doc_to_choice": "options", "doc_to_target": "gold"},
        ]
    ):
        keys.setdefault("template", "mcq")
        for limits in LIMITS:
            out.append(_case(f"fast-q-{i:02d}", "fastpath", _native(**keys), rows, limits))
            out.append(_case(f"fast-choices-{i:02d}", "fastpath", _native(**keys), choice_rows, limits))
            out.append(_case(f"fast-target-{i:02d}", "fastpath", _native(**keys), target_rows, limits))
    # 4. lm-evaluation-harness task files (their profile: Jinja's attribute rule, ast choices).
    for i, keys in enumerate(
        [
            {
                "output_type": "multiple_choice",
                "doc_to_text": "{{q.strip()}}\nAnswer:",
                "doc_to_choice": "{{options}}",
                "doc_to_target": "gold",
            },
            {
                "output_type": "multiple_choice",
                "doc_to_text": "Question: {{q}}\nAnswer:",
                "doc_to_choice": ["A", "B"],
                "doc_to_target": "{{gold}}",
            },
            {"output_type": "generate_until", "doc_to_text": "{{q}}", "doc_to_target": "{{a}}"},
            {
                "output_type": "generate_until",
                "doc_to_text": "{{q.upper()}}",
                "doc_to_target": " {{a}}",
                "description": "{{q}}\n\n",
            },
            {
                "output_type": "multiple_choice",
                "doc_to_text": "{{q}}",
                "doc_to_choice": "{{options}}",
                "doc_to_target": "{{options.index(a)}}",
            },
        ]
    ):
        for limits in LIMITS:
            task = _lm_eval(**keys)
            for name, rows_of in (("q", rows), ("options", choice_rows), ("gold", target_rows)):
                out.append(
                    _case(
                        f"lm-eval-{i:02d}-{name}",
                        "lm-eval",
                        task,
                        rows_of,
                        limits,
                        load={"data": {"test": "test.jsonl"}},
                        cli_data="test=test.jsonl",
                    )
                )
    # 4b. lm-evaluation-harness keys beyond doc_to_*: gen_prefix, fewshot_config's own
    #     doc_to_text, a rolling task, a choice list and target written as expressions.
    for i, keys in enumerate(
        [
            {
                "output_type": "generate_until",
                "doc_to_text": "{{q}}",
                "doc_to_target": "{{a}}",
                "gen_prefix": "{{q.strip()}}",
            },
            {
                "output_type": "multiple_choice",
                "doc_to_text": "{{q}}",
                "doc_to_choice": ["x", "y"],
                "doc_to_target": 0,
                "gen_prefix": "P {{q}}",
            },
            {
                "output_type": "generate_until",
                "doc_to_text": "{{q}}",
                "doc_to_target": "{{a}}",
                "fewshot_config": {"sampler": "first_n", "doc_to_text": "{{q.upper()}}"},
                "num_fewshot": 2,
                "fewshot_split": "test",
            },
            {"output_type": "loglikelihood_rolling", "doc_to_text": "", "doc_to_target": "{{q}}"},
            {
                "output_type": "multiple_choice",
                "doc_to_text": "{{q}}",
                "doc_to_choice": "{{[q, a]}}",
                "doc_to_target": "{{0}}",
            },
        ]
    ):
        for limits in LIMITS:
            more = {"load": {"data": {"test": "test.jsonl"}}, "cli_data": "test=test.jsonl"}
            out.append(_case(f"lm-eval-keys-{i:02d}", "lm-eval", _lm_eval(**keys), "q", limits, **more))
    # 5. Escapes and leaks written as simple templates: the compiled code hands every one
    #    to the sandbox, which stops it (the same error through both paths).
    for i, template in enumerate(ESCAPES):
        task = _native(doc_to_text=template, doc_to_target="a")
        out.append(_case(f"escape-{i:02d}", "escape", task, "escape", "default"))
        lm = _lm_eval(output_type="generate_until", doc_to_text=template, doc_to_target="{{a}}")
        more = {"load": {"data": {"test": "test.jsonl"}}, "cli_data": "test=test.jsonl"}
        out.append(_case(f"escape-lm-eval-{i:02d}", "escape", lm, "escape", "default", **more))
    # 6. Records only the Python API can give (str subclasses, tuples, objects, mappings
    #    that are not dicts): the compiled code must hand each to the sandbox.
    for i, template in enumerate(TEXT_TEMPLATES + ["{{ q.k }}", "{{ q[0] }}", "{{ q.upper }}"]):
        for limits in ("default", "tight"):
            task = _native(doc_to_text=template, doc_to_target="a")
            case = _case(f"python-{i:02d}", "python-records", task, "none", limits)
            case["records_py"] = PYTHON_RECORDS
            case["modes"] = ["fast", "many", "general", "sandbox"]
            out.append(case)
    # 7. Style format strings (str.format, no Jinja budget): widths that build gigabytes,
    #    fields inside specs that read the data's attributes, specs the choices do not take.
    for i, fmt in enumerate(STYLE_FORMATS):
        for option in ("choice_format", "answer_format"):
            style = {"template_type": "mcq", option: fmt}
            task = _native(doc_to_text="q", doc_to_choice="options", doc_to_target="gold", template=style)
            out.append(_case(f"style-{option}-{i:02d}", "style-format", task, "options-small", "default"))
    # 8. Few-shot examples with hostile values, shared by every record (the fast path
    #    builds their block once): within the task's budgets, whichever path comes first.
    for i, ids in enumerate([[8, 0], [13, 1], [10], [16, 0], [21]]):
        for limits in LIMITS:
            keys = {"doc_to_text": "{{ q.strip() }}", "doc_to_choice": "options", "doc_to_target": "gold"}
            task = _native(**keys, template="mcq", fewshot_split="dev", num_fewshot=len(ids))
            task = task.replace("data: {test: test.jsonl}", "data: {test: test.jsonl, dev: test.jsonl}")
            task += f"retriever: {{name: fixed, ids: {ids}}}\n"
            out.append(_case(f"fewshot-{i:02d}", "fewshot", task, "q", limits))
    return out


STYLE_FORMATS = [
    "{label}. {choice:>900000000}",
    "{label}. {choice!r:_<300000000}",
    "{label}. {choice:.999999999}",
    "{number:0999999999d}. {choice}",
    "{label}. {choice:{choice.__class__}}",
    "{label:{label.__class__.__mro__}}. {choice}",
    "{label}. {choice:>{number}}",
    "{label}. {choice!x}",
    "{label}. {choice:d}",
    "{label}. {choice:>5}",
    "{label:>3}. {choice!r:.5}",
]


ESCAPES = [
    "{{ q.__class__ }}",
    "{{ q['__class__'] }}",
    "{{ q.__class__.__mro__ }}",
    "{{ q.mro }}",
    "{{ q.upper }}",
    "{{ q.format }}",
    "{{ q.strip }}",
    "{{ options.append }}",
    "{{ options.items }}",
    "{{ q.items }}",
    "{{ lipsum }}",
    "{{ cycler }}",
    "{{ joiner }}",
    "{{ namespace }}",
    "{{ range }}",
    "{{ dict }}",
    "{{ [lipsum, q] }}",
    "{{ [q, zz] }}",
    "{{ zz }}",
    "{{ q.zz }}",
    "{{ options[5] }}",
    "{{ options.0 }}{{ options[-1] }}",
    "{{ q.__init__ }}",
    "{{ q._private }}",
    "{{ q.__dict__ }}",
    "Q: {{ q.strip().upper() }} {{ 'const' }} {{ none }}",
]
ESCAPE_ROWS = [
    {"q": "text", "a": "x", "options": ["a", "b"]},
    {
        "q": {"__class__": "data", "mro": "m", "upper": "u", "items": "i", "_private": "p", "zz": "z", "__dict__": "d"},
        "a": "x",
        "options": ["a"],
    },
    {"q": ["l", "m"], "a": "x", "options": {"append": "ap", "items": "it", "0": "zero"}},
    {"q": "text", "a": "x", "options": [], "zz": "defined", "lipsum": "L", "range": "R", "cycler": "C", "dict": "D"},
    {"q": None, "a": "x", "options": None},
]
PYTHON_RECORDS = """[
    {"q": Text("subclass  "), "a": "x"},
    {"q": ("tu", "ple"), "a": "x"},
    {"q": {"k": "v"}.keys(), "a": "x"},
    {"q": frozenset(["a"]), "a": "x"},
    {"q": b"bytes", "a": "x"},
    {"q": Shown(), "a": "x"},
    {"q": Opaque(), "a": "x"},
    {"q": datetime.date(2020, 1, 2), "a": "x"},
    {"q": Decimal("1.50"), "a": "x"},
    {"q": 1 + 2j, "a": "x"},
    {"q": OrderedDict(k="v"), "a": "x"},
    {"q": [Text("a"), ("b",), {"k": Opaque()}], "a": "x"},
    {"q": range(5), "a": "x"},
    {"q": len, "a": "x"},
    {"q": Text, "a": "x"},
    {"q": float("nan"), "a": "x"},
    {"q": -0.0, "a": "x"},
    OrderedDict(q="mapping record", a="x"),
    {"q": "x" * 3000, "a": "x"},
    {"q": ["x" * 3000], "a": "x"},
]"""
