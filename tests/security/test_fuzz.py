"""Seeded fuzzing: thousands of generated task configurations, records and task
files. Every outcome must be prompts or a typed error (PromptStyleError): never
another exception, never a value the output formats cannot write."""

from __future__ import annotations

import json
import random

import pytest

import prompt_style
from prompt_style import JinjaLimits, PromptStyleError, load_yaml
from prompt_style.cli.render import _not_json, _text_block
from prompt_style.safe.json_lines import dumps_line

SEED = 20250710
CONFIGS = 3000
YAML_MUTANTS = 1500
# Small budgets: a generated bomb stops in milliseconds, so the fuzz stays fast.
LIMITS = JinjaLimits(
    max_source=5000,
    max_tokens=2000,
    max_output=100_000,
    max_string=100_000,
    max_items=10_000,
    max_range=1000,
    max_loop_iterations=20_000,
    max_work=1_000_000,
    max_filter_input=20_000,
    max_int_bits=2000,
    deadline=0.2,
)

PRESENT = ["q", "a", "c", "n", "d", "x"]
NAMES = PRESENT + ["items", "self", "loop", "zz", "range", "__class__"]
STRINGS = [
    "",
    " ",
    "text",
    "{{ q }}",
    "{q}",
    "%s",
    "|||",
    "\u2028",
    "\ud800",
    "\x00",
    "None",
    "😀",
    "a\nb",
    "é",
    "0755",
]
FILTERS = [
    "upper",
    "lower",
    "trim",
    "length",
    "list",
    "first",
    "last",
    "join",
    "join(', ')",
    "string",
    "int",
    "float",
    "center(9)",
    "center(1000000000)",
    "indent(2)",
    "indent(100000, true)",
    "replace('a', 'bb')",
    "replace('', 'x')",
    "format(1)",
    "wordwrap(3)",
    "truncate(5)",
    "batch(2)|list",
    "slice(2)|list",
    "sort",
    "unique|list",
    "reverse",
    "map('upper')|list",
    "select|list",
    "sum",
    "tojson",
    "pprint",
    "title",
    "capitalize",
    "striptags",
    "urlize",
    "default('d')",
    "d",
    "e",
    "safe",
    "items|list",
    "dictsort",
    "random",
    "count",
    "abs",
    "round",
    "min",
    "max",
    "regex_replace('a', 'b')",
    "regex_replace('(a+)+$', '')",
    "attr('__class__')",
    "batch(1000000000)|list",
    "nosuchfilter",
    "map('nosuch')",
]


def value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if roll < 0.4 or depth > 2:
        return rng.choice(STRINGS + [rng.choice(STRINGS) * rng.randint(1, 5)])
    if roll < 0.5:
        return rng.choice([0, 1, -1, 2, 10**20, 3.5, float("inf"), True, False])
    if roll < 0.6:
        return None
    if roll < 0.85:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(NAMES): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def name(rng: random.Random) -> str:
    return rng.choice(PRESENT) if rng.random() < 0.9 else rng.choice(NAMES)


def atom(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return name(rng)
    return rng.choice(
        [
            name(rng),
            repr(rng.choice(STRINGS)),
            str(rng.choice([0, 1, 2, 3, 10, 999999999, -1])),
            "[q, a]",
            "{'k': q}",
            "range(%d)" % rng.choice([0, 3, 10, 10**9]),
            rng.choice(["cycler", "joiner", "namespace", "dict", "self", "lipsum", "cycler(1, 2)", "namespace(a=1)"]),
            "q.upper()",
            "q.split()",
            "c[0]",
            "d.items()",
            "q.__class__",
            "'{0}'.format(q)",
            "'%s' % q",
        ]
    )


def expr(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        return atom(rng)
    if roll < 0.6:
        return f"{expr(rng, depth + 1)}|{rng.choice(FILTERS)}"
    if roll < 0.8:
        op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "~", "and", "or", "==", "<", "in", "if"])
        if op == "if":
            return f"({expr(rng, depth + 1)} if {expr(rng, depth + 1)} else {expr(rng, depth + 1)})"
        return f"({expr(rng, depth + 1)} {op} {expr(rng, depth + 1)})"
    return f"{expr(rng, depth + 1)}[{rng.choice(['0', '1', '-1', repr('k'), '1:3'])}]"


def template(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.5:
            parts.append("{{ %s }}" % expr(rng))
        elif roll < 0.65:
            parts.append("{%% for x in %s %%}{{ x }}{{ loop.index }}{%% endfor %%}" % expr(rng))
        elif roll < 0.75:
            parts.append("{%% if %s %%}yes{%% else %%}no{%% endif %%}" % expr(rng))
        elif roll < 0.85:
            parts.append("{%% set v = %s %%}{{ v }}" % expr(rng))
        elif roll < 0.9:
            parts.append("{% macro m(k) %}{{ k }}{% endmacro %}{{ m(" + expr(rng) + ") }}")
        else:
            parts.append(rng.choice(["text ", "\n", "{{", "{%", "}}", "{# c #}", "{% raw %}{{ q }}{% endraw %}"]))
    return "".join(parts)


def spec(rng: random.Random):
    roll = rng.random()
    if roll < 0.3:
        return name(rng)
    if roll < 0.45:
        return "{%s} and {%s}" % (name(rng), name(rng))
    if roll < 0.7:
        return "{{ %s }}" % expr(rng)
    if roll < 0.95:
        return template(rng)
    return value(rng)


def config(rng: random.Random) -> tuple[dict, list, list]:
    def record() -> dict:
        out = {
            "q": rng.choice(STRINGS[2:]) if rng.random() < 0.8 else value(rng),
            "a": rng.choice([0, 1, "b", value(rng)]),
            "c": [rng.choice(STRINGS) for _ in range(rng.randint(1, 4))] if rng.random() < 0.8 else value(rng),
        }
        out.update({key: value(rng) for key in ("n", "d", "x") if rng.random() < 0.9})
        return out

    records = [record() for _ in range(rng.randint(1, 3))]
    shots = [record() for _ in range(rng.randint(0, 3))]
    task: dict = {"doc_to_text": spec(rng)}
    if rng.random() < 0.5:
        task["doc_to_choice"] = "c" if rng.random() < 0.5 else spec(rng)
    if rng.random() < 0.7 or shots:
        task["doc_to_target"] = "a" if rng.random() < 0.5 else spec(rng)
    if rng.random() < 0.4:
        task["description"] = spec(rng)
    if rng.random() < 0.3:
        task["template"] = rng.choice(["mcq", "passthrough", "cloze", "mcq::mmlu"])
    elif rng.random() < 0.3:
        task["template"] = rng.choice(
            [
                "mcq",
                "passthrough",
                "cloze",
                "mcq::mmlu",
                "nope",
                {"template_type": "mcq", "choice_labels": value(rng)},
                {"template_type": "mcq", "choice_format": rng.choice(["{label}) {choice}", "{nope}", "{", "{number}"])},
                {"template_type": "mcq", rng.choice(["suffix", "prefix", "sufix"]): value(rng)},
            ]
        )
    if shots and rng.random() < 0.5:
        task["num_fewshot"] = rng.choice([0, 1, 2, 1, 2, 1]) if rng.random() < 0.9 else rng.choice([5, -1, "2", True])
    if rng.random() < 0.1:
        task["retriever"] = rng.choice(["random", "first_n", {"name": "fixed", "ids": [0, 99]}, {"name": 3}, "nope"])
    if rng.random() < 0.2:
        task["allow_null_target"] = rng.choice([True, False]) if rng.random() < 0.9 else "yes"
    if rng.random() < 0.05:
        task[rng.choice(["doc_to_txt", "seed", "fewshot_delimiter", "target_delimiter"])] = value(rng)
    return task, records, shots


def run(task: dict, records: list, shots: list) -> None:
    data = {"test": records}
    if shots:
        data["dev"] = shots
        task = {**task, "fewshot_split": "dev"}
    try:
        loaded = prompt_style.load_task({"data": data, **task}, limits=LIMITS)
        for result in loaded.render():
            dumps_line(result.to_json(), _not_json(result.index)).encode("utf-8")
            _text_block(result).encode("utf-8", "backslashreplace")
    except PromptStyleError:
        pass


@pytest.mark.slow  # 3,000 fuzzed tasks: seconds
def test_fuzzed_configurations_give_prompts_or_typed_errors():
    rng = random.Random(SEED)
    failures = []
    for number in range(CONFIGS):
        task, records, shots = config(rng)
        try:
            run(task, records, shots)
        except Exception as exc:  # anything but a typed error is a bug
            failures.append(
                f"#{number} {type(exc).__name__}: {str(exc)[:200]}\n  task={task!r:.500}\n  records={records!r:.300}"
            )
    assert not failures, f"{len(failures)} untyped errors:\n" + "\n".join(failures[:10])


VALID = """\
task: fuzz
data:
  test: [{q: "What?", c: [a, b], a: 1}, {q: "Why?", c: [x, y], a: 0}]
doc_to_text: "Q: {{ q }}"
doc_to_choice: c
doc_to_target: a
description: "About {{ q|upper }}.\\n"
template: {template_type: mcq, suffix: "A:", choice_labels: [yes, no]}
metadata: {anchor: &x [1, 2], again: *x, merged: {<<: {k: v}}}
"""
NOISE = [
    "\n",
    " ",
    "  ",
    "\t",
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "&a ",
    "*a",
    "*x",
    "!!",
    "!!python/name:x ",
    "'",
    '"',
    "#",
    "---\n",
    "%YAML 1.1\n",
    "<<: ",
    "? ",
    "|",
    ">",
    "\x00",
    "\ud800",
    "\u2028",
    "\ufeff",
    "{{",
    "}}",
    "9" * 50,
]


def test_fuzzed_task_files_give_typed_errors():
    rng = random.Random(SEED + 1)
    failures = []
    for number in range(YAML_MUTANTS):
        text = VALID
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(text))
            roll = rng.random()
            if roll < 0.5:
                text = text[:at] + rng.choice(NOISE) + text[at:]
            elif roll < 0.8:
                text = text[:at] + text[at + rng.randint(1, 8) :]
            else:
                text = text[:at] + rng.choice(NOISE) + text[at + 1 :]
        try:
            document = load_yaml(f"fuzz{number}.yaml", text=text)
            if isinstance(document.data, dict):
                loaded = prompt_style.load_task(document.data, limits=LIMITS)
                for result in loaded.render():
                    dumps_line(result.to_json(), _not_json(result.index))
        except PromptStyleError as exc:
            message = str(exc)  # one printable line of at most 2,000 characters, whatever the file holds
            if len(message) > 2000 or not message.isprintable():
                failures.append(f"#{number} a message of {len(message):,} characters: {message[:200]!r}")
        except Exception as exc:
            failures.append(f"#{number} {type(exc).__name__}: {str(exc)[:200]}\n{json.dumps(text)[:600]}")
    assert not failures, f"{len(failures)} untyped errors or unbounded messages:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("seed", range(3))
def test_fuzzed_values_render_verbatim(seed):
    """Whatever a record holds, a plain field and a template print it as Python's str() does."""
    rng = random.Random(SEED + 100 + seed)
    records = [{"q": value(rng)} for _ in range(200)]
    records = [r for r in records if r["q"] is not None]
    plain = prompt_style.render_records(records, doc_to_text="q")
    jinja = prompt_style.render_records(records, doc_to_text="<{{ q }}>")
    fmt = prompt_style.render_records(records, doc_to_text="<{q}>")
    for record, a, b, c in zip(records, plain, jinja, fmt):
        assert a.text == str(record["q"])
        assert b.text == f"<{record['q']}>"
        assert c.text == f"<{record['q']}>"
