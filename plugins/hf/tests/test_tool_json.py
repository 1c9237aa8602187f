"""tojson of tools: the indented encoder gives json.dumps's text, and the tools cache
never serves a stale schema."""

from __future__ import annotations

import json
import random

import pytest
from _hf_test_support import CORPUS_COPY
from markupsafe import Markup
from prompt_style_hf import tool_cache
from prompt_style_hf.json_indent import dumps
from prompt_style_hf.meta import hf_meta

LLAMA31 = CORPUS_COPY / "templates" / "hfjs-meta-llama-llama-3.1-8b-instruct.jinja"
HERMES = CORPUS_COPY / "templates" / "llamacpp-nousresearch-hermes-2-pro-llama-3-8b-tool_use.jinja"
SCALARS = [None, True, False, 0, -3, 10**20, 1.5, -0.0, 1e300, float("nan"), float("inf"), -float("inf")]
SCALARS += ["x", 'é\u2028"\\\n', "東京", "", Markup("<b>"), "\ud800"]


def _value(rng: random.Random, depth: int):
    r = rng.random()
    if depth > 4 or r < 0.5:
        return rng.choice(SCALARS)
    if r < 0.75:
        return {
            rng.choice(["a", "é", "z", "", "type"]) + str(rng.randint(0, 3)): _value(rng, depth + 1) for _ in range(4)
        }
    if r < 0.9:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return tuple(_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))


ARGUMENTS = [
    {"indent": 4},
    {"indent": 2, "ensure_ascii": True},
    {"indent": 0},
    {"indent": "\t", "sort_keys": True},
    {"indent": 1, "separators": (", ", " = ")},
    {"indent": 3, "separators": [",", ":"]},
    {},
    {"separators": (",", ":")},
]


@pytest.mark.parametrize("seed", range(4))
def test_indented_json_is_json_dumps(seed):
    rng = random.Random(seed)
    for _ in range(1000):
        value = _value(rng, 0)
        for arguments in ARGUMENTS:
            arguments = {"ensure_ascii": False, **arguments}
            assert dumps(value, **arguments) == json.dumps(value, **arguments)


@pytest.mark.parametrize(
    "value", [{1: 2}, {(1, 2): 3}, {"a": object()}, [set()], {"a": 10**5000}, {"a": {"b": [1, {2: 3}]}}, {"a": 4.0}]
)
@pytest.mark.parametrize("arguments", [{"indent": 4}, {"indent": 4, "sort_keys": True}, {"indent": 4.0}])
def test_what_is_not_plain_is_json_dumps_itself(value, arguments):
    def outcome(encode):
        try:
            return "ok", encode(value, **arguments)
        except Exception as exc:  # the same error, message included
            return type(exc).__name__, str(exc)

    assert outcome(dumps) == outcome(json.dumps)


def _tools(n: int) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": f"Tool {i}.",
                "parameters": {
                    "type": "object",
                    "properties": {"x": {"type": "integer", "description": "An x"}},
                    "required": ["x"],
                },
            },
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("template", [LLAMA31, HERMES])
def test_tools_changed_in_place_are_seen(template):
    """The cached copy is reused only while the caller's list has the same JSON text."""
    tool_cache.clear()
    meta = hf_meta({"template": str(template), "bos_token": "<s>", "eos_token": "</s>"})
    fresh = hf_meta({"template": str(template), "bos_token": "<s>", "eos_token": "</s>"})
    messages = [{"role": "user", "content": "hi"}]
    tools = _tools(3)

    def check():
        got = meta.apply_messages(messages, tools=tools, add_generation_prompt=True).text
        tool_cache.clear()  # the reference: no cache at all
        assert (
            got == fresh.apply_messages(messages, tools=json.loads(json.dumps(tools)), add_generation_prompt=True).text
        )
        meta.apply_messages(messages, tools=tools, add_generation_prompt=True)  # cached again
        return got

    first = check()
    assert check() == first
    tools[1]["function"]["description"] = "Changed."
    assert "Changed." in check()
    tools[0]["function"]["parameters"]["properties"]["x"]["type"] = "number"
    assert '"number"' in check()
    default = tools[2]["function"]["parameters"]["properties"]["x"]
    default["default"] = 1
    one = check()
    default["default"] = True  # == 1, but another JSON value
    assert check() != one
    default["default"] = 1.0
    assert check() != one
    tools.append(_tools(5)[4])
    assert "tool_4" in check()
    before = check()
    parameters = tools[1]["function"]["parameters"]
    parameters["type"] = parameters.pop("type")  # the same keys and values, in another order
    assert check() != before


def test_the_copy_of_unchanged_tools_is_reused():
    """The same tools, render after render: one copy (the first renders may make it
    again while the serialized bytes settle, never after)."""
    tool_cache.clear()
    tools = _tools(4)
    copies = [tool_cache.cached_tools(tools, _plain_copy) for _ in range(6)]
    assert copies[-1] == tools and copies[-1] is not tools
    assert all(copy is copies[-1] for copy in copies[2:])


def _plain_copy(value):
    from prompt_style_hf.conversation import plain_data

    return plain_data(value)


def test_tools_that_are_not_plain_json_are_prepared_each_time():
    class Text(str):
        pass

    tool_cache.clear()
    tools = _tools(1)
    tools[0]["function"]["description"] = Text("Special.")
    assert tool_cache.cached_tools(tools, lambda value: value) is None
    tools[0]["function"]["parameters"]["required"] = ("x",)
    assert tool_cache.cached_tools(tools, lambda value: value) is None


def test_a_tojson_text_made_before_is_served_within_the_budgets():
    """Every render after the first takes each tool's ``tojson`` text from the cache
    (without walking the tools again), charged as the text it is: the same text, and a
    per-operation size budget below it still stops the render."""
    from prompt_style import JinjaLimits, LimitError
    from prompt_style.safe.limits import limits_scope

    tools = [
        {"type": "function", "function": {"name": f"f{i}", "description": "d" * 50, "parameters": {"type": "object"}}}
        for i in range(5)
    ]
    messages = [{"role": "user", "content": "hi"}]
    meta = hf_meta({"template": str(LLAMA31)})
    first = meta.apply_messages(messages, tools=tools, add_generation_prompt=True).text
    for _ in range(2):
        assert meta.apply_messages(messages, tools=tools, add_generation_prompt=True).text == first
    for tool in tools:
        assert json.dumps(tool, indent=4) in first
    with limits_scope(JinjaLimits(max_string=60)), pytest.raises(LimitError) as info:
        meta.apply_messages(messages, tools=tools, add_generation_prompt=True)
    assert info.value.limit == "max_string"


@pytest.mark.parametrize(
    "limits, stopped",
    [
        ({"max_string": 400}, "max_string"),  # each text is past the per-operation size
        ({"max_work": 4000}, "max_work"),  # five texts charged (and printed): past the render's work
        ({}, None),
    ],
)
def test_tojson_with_no_arguments_is_served_from_the_cache_within_the_budgets(limits, stopped):
    """``{{ tool.parameters|tojson }}`` (no arguments) from the cache, in the filter's
    one-function path: the deadline's check point, ``max_string`` and the charge to the
    render as the general path makes them, render after render, as the Jinja engine."""
    from prompt_style import JinjaLimits, LimitError
    from prompt_style.safe.limits import limits_scope

    source = "{% for t in tools %}{{ t.function.parameters|tojson }}{% endfor %}"
    tools = [
        {"type": "function", "function": {"name": f"f{i}", "parameters": {"type": "object", "x": "p" * 450}}}
        for i in range(5)
    ]
    messages = [{"role": "user", "content": "hi"}]
    tool_cache.clear()
    fast, jinja = hf_meta({"chat_template": source}), hf_meta({"chat_template": source, "engine": "jinja"})
    expected = "".join(json.dumps(t["function"]["parameters"]) for t in tools)
    for _ in range(3):
        assert fast.apply_messages(messages, tools=tools).text == expected  # (made, then served)
    found = tool_cache.JSON_TEXTS.get(id(tool_cache.cached_tools(tools, _plain_copy)[0]["function"]["parameters"]))
    assert found is not None and list(found[1].values()) == [json.dumps(tools[0]["function"]["parameters"])]
    for meta in (fast, jinja, fast):
        with limits_scope(JinjaLimits(**limits)):
            if stopped is None:
                assert meta.apply_messages(messages, tools=tools).text == expected
                continue
            with pytest.raises(LimitError) as info:
                meta.apply_messages(messages, tools=tools)
        assert info.value.limit == stopped
