"""Parity with transformers on the corpus of real chat templates.

For every template of the corpus and every conversation of its ``expected.json``,
prompt-style renders exactly what transformers' ``apply_chat_template(tokenize=False)``
rendered, and raises where transformers raised (with the same message). The test
is data-driven: a template dropped into the corpus with its expected renders is
tested. It runs on the corpus directory next to this checkout when there is one
(``PROMPT_STYLE_CHAT_CORPUS`` or ``shared/corpora/chat_templates`` in a parent
directory) and always on the copy committed in tests/golden/transformers_chat/corpus.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _hf_test_support import CORPUS_COPY, FROZEN_NOW, live_corpus, load_json, render_case, same, template

# The corpus renders two conversations with a tool that transformers made from
# a Python function (get_weather(city: str) -> List[Dict], docstring "Get the
# weather for a city", argument "city: City name"); expected.json does not record
# it, so it is written out here.
CORPUS_TOOLS = {
    "with_tools_user_only_gen": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City name"}},
                    "required": ["city"],
                },
            },
        }
    ]
}


def cases(corpus: Path | None, label: str):
    """One case per template: its conversations, each with what transformers gave."""
    if corpus is None:
        return [pytest.param(None, None, None, marks=pytest.mark.skip(reason="no corpus directory"), id=label)]
    expected = load_json(corpus / "expected.json")
    index = load_json(corpus / "index.json")
    convs = expected["meta"]["conversations"]
    out = []
    for name in sorted(expected["results"]):
        assert (corpus / "templates" / index[name]["file"]).is_file(), f"{name}: template file missing"
        checks = []
        for key, result in sorted(expected["results"][name].items()):
            if key == "renders":
                checks.extend((conv, convs[conv], result[conv]) for conv in sorted(result))
            elif key in CORPUS_TOOLS:
                checks.append((key, {**convs[key.removeprefix("with_tools_")], "tools": CORPUS_TOOLS[key]}, result))
        out.append(pytest.param(corpus, name, checks, id=f"{label}:{name}"))
    return out


def check(corpus, name, checks, engine):
    info = load_json(corpus / "index.json")[name]
    tpl = template(corpus / "templates" / info["file"], engine)
    wrong = []
    for conv, conversation, expected in checks:
        ours = render_case(tpl, info.get("bos_token"), info.get("eos_token"), conversation, FROZEN_NOW)
        # The corpus stores transformers' error messages cut to a prefix.
        if not same(ours, expected, prefix_errors=True):
            wrong.append(f"{conv}:\n  ours: {ours!r}\n  transformers: {expected!r}")
    assert not wrong, f"{name} ({engine}): " + "\n".join(wrong)
    assert checks


@pytest.mark.parametrize("corpus, name, checks", cases(live_corpus(), "live"))
def test_live_corpus(corpus, name, checks):
    check(corpus, name, checks, "auto")


@pytest.mark.parametrize("engine", ["auto", "jinja"])
@pytest.mark.parametrize("corpus, name, checks", cases(CORPUS_COPY, "copy"))
def test_committed_corpus(corpus, name, checks, engine):
    check(corpus, name, checks, engine)


def test_every_corpus_template_has_renders():
    expected = load_json(CORPUS_COPY / "expected.json")
    files = {p.name for p in (CORPUS_COPY / "templates").glob("*.jinja")}
    index = load_json(CORPUS_COPY / "index.json")
    assert {index[name]["file"] for name in expected["results"]} == files
