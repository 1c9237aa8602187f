"""Parity with transformers on conversations and templates beyond the corpus.

tools/golden/make_chat_golden.py rendered, with the real transformers (version in
the golden file's ``meta``): every corpus template on conversations with unicode,
empty and whitespace-only contents, template syntax inside contents, consecutive
turns, ``continue_final_message`` edge cases, extra variables, tools, documents,
multimodal parts and reasoning; templates written to exercise the Jinja features
chat templates use (loops, macros, namespace, filters, tests, ``{% generation %}``
spans, ``strftime_now``, scoping, whitespace control) on every conversation; model
folders loaded with ``AutoTokenizer.from_pretrained``; and ``get_json_schema`` of
Python functions passed as tools.
"""

from __future__ import annotations

import importlib.util

import pytest
from _hf_test_support import (
    FROZEN_NOW,
    GOLDEN,
    PUBLISHED,
    all_conversations,
    conversations,
    golden,
    golden_results,
    load_json,
    render_case,
    same,
    template,
    template_path,
)
from prompt_style_hf.meta import hf_meta
from prompt_style_hf.tool_schema import get_json_schema

import prompt_style
from prompt_style import ChatTemplateError

GOLDEN_DATA = golden()
ALL_CONVS = all_conversations()


PUBLISHED_DATA = load_json(PUBLISHED / "expected.json")


def render_cases():
    """Every template with transformers' renders (golden_results; data-driven: a template
    added to published/index.json and rendered by make_chat_golden.py is tested)."""
    return [pytest.param(name, entry, id=name) for name, entry in sorted(golden_results().items())]


@pytest.mark.parametrize("engine", ["auto", "jinja"])
@pytest.mark.parametrize("name, entry", render_cases())
def test_renders_match_transformers(name, entry, engine):
    tpl = template(template_path(name, entry["origin"]), engine)
    wrong = []
    for conv, expected in sorted(entry["renders"].items()):
        ours = render_case(tpl, entry["bos_token"], entry["eos_token"], ALL_CONVS[conv], FROZEN_NOW)
        if not same(ours, expected):
            wrong.append(f"{conv}:\n  ours: {ours!r}\n  transformers: {expected!r}")
    assert not wrong, f"{name} ({engine}): " + "\n".join(wrong)


def test_goldens_cover_the_hard_cases():
    names = set(conversations())
    for needed in (
        "unicode_gen",
        "empty_contents_gen",
        "whitespace_gen",
        "template_syntax_gen",
        "consecutive_user_gen",
        "continue_trailing_space",
        "extra_variables_gen",
    ):
        assert needed in names
    assert GOLDEN_DATA["meta"]["transformers"].startswith("5.")
    assert PUBLISHED_DATA["meta"]["transformers"] == GOLDEN_DATA["meta"]["transformers"]


def test_published_templates_are_recorded():
    """Every published template has its source, licences and hash recorded, and
    transformers' renders of every conversation."""
    import hashlib

    index = load_json(PUBLISHED / "index.json")
    names = {name for name in index if not name.startswith("_")}
    assert names == set(PUBLISHED_DATA["results"])
    assert {p.name for p in (PUBLISHED / "templates").glob("*.jinja")} == {index[n]["file"] for n in names}
    notice = (PUBLISHED / "NOTICE.md").read_text(encoding="utf-8")
    for name in names:
        info = index[name]
        data = (PUBLISHED / "templates" / info["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest()[:16] == info["sha256_16"], name
        assert info["package_licence"] and info["model_licence"] and info["file"] in notice, name
        assert set(PUBLISHED_DATA["results"][name]["renders"]) == set(ALL_CONVS), name


# -- model folders -------------------------------------------------------------------

FOLDER_CASES = {
    "plain": {},
    "with_tools": {"tools": "TOOLS"},
    "named_tool_use": {"chat_template": "tool_use"},
    "named_rag": {"chat_template": "rag"},
    "named_chat": {"chat_template": "chat"},
}


def folder_cases():
    out = []
    for folder, data in sorted(GOLDEN_DATA["folders"].items()):
        for case, expected in sorted(data["cases"].items()):
            out.append(pytest.param(folder, case, expected, id=f"{folder}:{case}"))
    return out


@pytest.mark.parametrize("folder, case, expected", folder_cases())
def test_model_folder_matches_transformers(folder, case, expected):
    messages = ALL_CONVS["multi_turn_gen"]["messages"]
    tools = ALL_CONVS["tools_user_only_gen"]["tools"]
    options = {"template": str(GOLDEN / "models" / folder)}
    kwargs = {k: (tools if v == "TOOLS" else v) for k, v in FOLDER_CASES[case].items()}
    if "chat_template" in kwargs:
        options["chat_template"] = kwargs.pop("chat_template")
    templates = hf_meta_templates(folder)
    try:
        meta = hf_meta(options)
        ours = {"ok": True, "text": meta.apply_messages(messages, **kwargs).text}
    except prompt_style.PromptStyleError as exc:
        ours = {"ok": False, "error": getattr(exc, "template_message", exc.message)}
    wanted = options.get("chat_template")
    if wanted is not None and wanted not in templates:
        # transformers renders an unknown name as a one-word template ("rag"); we refuse it.
        assert expected == {"ok": True, "text": wanted}
        assert not ours["ok"] and "no chat template named" in ours["error"]
        return
    assert ours == {k: expected[k] for k in ours}, f"ours: {ours!r}\ntransformers: {expected!r}"


def hf_meta_templates(folder):
    from prompt_style_hf.sources import load_source

    return set(load_source(GOLDEN / "models" / folder).templates)


@pytest.mark.parametrize("folder", sorted(GOLDEN_DATA["folders"]))
def test_special_tokens_match_transformers(folder):
    from prompt_style_hf.sources import load_source

    assert (
        dict(load_source(GOLDEN / "models" / folder).special_tokens)
        == GOLDEN_DATA["folders"][folder]["special_tokens_map"]
    )


# -- tools given as Python functions -------------------------------------------------


def tool_functions():
    spec = importlib.util.spec_from_file_location("hf_golden_tool_functions", GOLDEN / "tool_functions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TOOLS


@pytest.mark.parametrize("name", sorted(GOLDEN_DATA["tool_schemas"]))
def test_tool_schema_matches_transformers(name):
    expected = GOLDEN_DATA["tool_schemas"][name]
    try:
        ours = {"ok": True, "text": get_json_schema(tool_functions()[name])}
    except ChatTemplateError as exc:
        ours = {"ok": False, "error": exc.template_message}
    assert ours["ok"] == expected["ok"]
    if ours["ok"]:
        assert ours["text"] == expected["text"]
