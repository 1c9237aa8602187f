"""Seeded differential fuzzing of the Jinja compiler: templates made at random from
what it compiles (paths, methods, filters, ``~``, ``+``, ``-``, conditions, loops,
``{% set %}``), rendered on awkward records by the compiled function (which hands the
sandbox what it is not sure of) and by the sandbox alone, in every profile that uses
the compiler. The same text, or the same exception (type and message), every time.
No timings.
"""

from __future__ import annotations

import random

import pytest

from prompt_style import JinjaLimits
from prompt_style.fields import jinja_compiler as jc
from prompt_style.formats.lm_eval.fields import LM_EVAL_JINJA
from prompt_style.formats.task_template.template import PROMPTSOURCE, SCIRIFF
from prompt_style.safe import jinja_env as J
from prompt_style.safe.limits import limits_scope

SEED = 20261129
TEMPLATES = 500
PROFILES = {"fields": J.FIELDS, "lm-eval": LM_EVAL_JINJA, "sciriff": SCIRIFF, "promptsource": PROMPTSOURCE}
FIELDS = ["q", "c", "d", "n", "e"]
TEXTS = ["", " a ", "Ab\nc", "x|||y", "ß ﬃ", "{{ q }}", "\u2028", "-3", "12", "B"]
FILTERS = ["trim", "lower", "upper", "capitalize", "string", "int", "length", "first", "last", "sort"]
LIMITS = [JinjaLimits(max_output=30), JinjaLimits(max_work=40), JinjaLimits(max_items=2)]


def text(rng: random.Random) -> str:
    return repr(rng.choice(TEXTS))


def path(rng: random.Random) -> str:
    made = rng.choice(FIELDS + ["missing"])
    for _ in range(rng.randrange(3)):
        made += rng.choice([".0", "[-1]", "[1]", ".text", "['k']", "[n]"])
    return made


def expr(rng: random.Random, depth: int = 0) -> str:
    if depth > 1 or rng.random() < 0.3:
        return rng.choice([path(rng), path(rng), text(rng), str(rng.randrange(-2, 5))])
    kind = rng.randrange(13)
    inner = expr(rng, depth + 1)
    if kind == 0:
        return f"{inner}.{rng.choice(['strip', 'lower', 'upper', 'title'])}()"
    if kind == 1:
        return f"{inner} | {rng.choice(FILTERS)}"
    if kind == 2:
        return f"{inner} ~ {expr(rng, depth + 1)}"
    if kind == 3:
        return f"{inner} + {expr(rng, depth + 1)}"
    if kind == 4:
        return f"({inner} | int) - {rng.randrange(3)}"
    if kind == 5:
        return f"{inner} | replace({text(rng)}, {text(rng)})"
    if kind == 6:
        return f"{inner}.split({text(rng) if rng.random() < 0.8 else repr('|||')})[{rng.randrange(-1, 2)}]"
    if kind == 7:
        return f"{inner} | join({text(rng)})"
    if kind == 8:
        return f"{rng.choice(FIELDS + ['missing'])} | default({text(rng)})"
    if kind == 9:
        if rng.random() < 0.5:
            return f"{inner}[{rng.choice(['1', '-2', 'n', ''])}:{rng.choice(['', '-1', '3', 'n'])}]"
        return f"[{inner}, {expr(rng, depth + 1)}]"
    if kind == 10:
        return f"{inner} if {rng.choice(FIELDS + ['missing'])} is defined else {expr(rng, depth + 1)}"
    if kind == 11:  # promptsource's rewrite of every }}, with lengths around the texts'
        return f"{inner} | string | truncate({rng.choice([3, 4, 8, 2048])})"
    return path(rng)


def template(rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.4:
        parts.append(f"{{% set v = {expr(rng)} %}}")
    for _ in range(rng.randrange(1, 4)):
        kind = rng.randrange(5)
        if kind == 0:
            test = expr(rng, 2)
            if rng.random() < 0.5:
                test = f"{test} {rng.choice(['and', 'or', 'and not'])} {expr(rng, 2)}"
            elif rng.random() < 0.3:
                test = f"{test} {rng.choice(['!=', '=='])} {rng.choice(['-1', '1', repr('B')])}"
            parts.append(f"{{% if {test} %}}[{{{{ {expr(rng)} }}}}]{{% else %}}-{{% endif %}}")
        elif kind == 1:
            parts.append(f"{{% for i in {path(rng)} %}}{{{{ loop.index }}}}:{{{{ i }}}},{{% endfor %}}")
        else:
            parts.append(f"<{{{{ {expr(rng)} }}}}>")
        if "set v" in parts[0] and rng.random() < 0.5:
            parts.append("{{ v }}")
    return "".join(parts)


def records(rng: random.Random) -> list[dict]:
    def value() -> object:
        pick = rng.randrange(7)
        if pick == 0:
            return [rng.choice(TEXTS) for _ in range(rng.randrange(4))]
        if pick == 1:
            return {"text": rng.choice(TEXTS), "k": rng.choice(TEXTS), "0": "zero"}
        if pick == 2:
            return rng.randrange(-3, 4)
        if pick == 3:
            return None
        return rng.choice(TEXTS)

    plain = {  # one record of the shapes the templates expect, where compiled code runs
        "q": rng.choice(TEXTS),
        "c": [rng.choice(TEXTS) for _ in range(3)],
        "d": {"text": rng.choice(TEXTS), "k": "k", "0": "zero"},
        "n": rng.randrange(3),
        "e": rng.choice(TEXTS),
    }
    made = [plain]
    for _ in range(2):
        record = {name: value() for name in FIELDS if rng.random() < 0.85}
        record["n"] = rng.randrange(3) if rng.random() < 0.7 else record.get("n")
        made.append(record)
    return made


def sandbox(source: str, profile: J.JinjaProfile, record: dict) -> str:
    return J.render(J.compile_template(source, profile), record, record=True)


def outcome(call, *args):
    try:
        return ("ok", call(*args))
    except Exception as exc:  # the exact exception is what is compared
        return ("error", type(exc), str(exc))


@pytest.mark.parametrize("profile", PROFILES.values(), ids=PROFILES.keys())
def test_random_templates_render_as_the_sandbox_renders_them(profile):
    rng = random.Random(SEED)
    compiled = taken = 0
    for _ in range(TEMPLATES):
        source = template(rng)
        rows = records(rng)
        limits = rng.choice(LIMITS) if rng.random() < 0.3 else None  # tight budgets now and then
        fast = jc.template_renderer(source, profile)
        compiled += jc.compile_simple(source, profile) is not None
        with limits_scope(limits) if limits is not None else _nothing():
            for record in rows:
                got = outcome(fast, record)
                want = outcome(sandbox, source, profile, record)
                assert got == want, f"{source!r} on {record!r} under {limits!r}"
                function = getattr(fast, "compiled", None)
                taken += function is not None and function.function(record) is not jc.SLOW
    # the fuzz reaches the compiled code, not only the sandbox
    assert compiled > TEMPLATES // 3 and taken > TEMPLATES // 10, (compiled, taken)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
