"""Every hook is specified, documented in docs/hooks.md with its exact signature,
and its docstring says what it takes, what it returns and whether it is firstresult."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from prompt_style import hookspecs

DOCS = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"
EXPECTED_HOOKS = {
    "read_task",
    "extract_field",
    "format_prompt",
    "apply_meta_template",
    "retrieve_examples",
    "format_instances",
    "load_tokenizer",
    "declare_axes",
    "parse_answer",
    "export_task",
    "task_examples",
}


def hookspec_functions():
    return {
        name: fn for name, fn in vars(hookspecs).items() if inspect.isfunction(fn) and hasattr(fn, "prompt_style_spec")
    }


HOOKS = hookspec_functions()


def signature_line(name, fn) -> str:
    annotations = dict(fn.__annotations__)
    ret = annotations.pop("return")
    args = ", ".join(f"{p}: {ann}" for p, ann in annotations.items())
    return f"def {name}({args}) -> {ret}"


def test_the_hooks_are_specified():
    assert set(HOOKS) == EXPECTED_HOOKS


def test_signature_rule_examples():
    assert signature_line("extract_field", HOOKS["extract_field"]) == (
        "def extract_field(spec: Any, key: str) -> FieldExtractor | None"
    )
    assert signature_line("format_prompt", HOOKS["format_prompt"]) == (
        "def format_prompt() -> Mapping[str, StyleFactory]"
    )


def test_annotations_are_strings_and_complete():
    for name, fn in HOOKS.items():
        params = list(inspect.signature(fn, eval_str=False).parameters)
        assert all(isinstance(a, str) for a in fn.__annotations__.values()), name
        assert set(fn.__annotations__) == set(params) | {"return"}, name


def test_firstresult_flags():
    assert HOOKS["extract_field"].prompt_style_spec["firstresult"] is True
    for name in EXPECTED_HOOKS - {"extract_field"}:
        assert HOOKS[name].prompt_style_spec["firstresult"] is False, name


@pytest.mark.parametrize("name", sorted(EXPECTED_HOOKS))
def test_hookspec_docstring(name):
    fn = HOOKS[name]
    doc = inspect.getdoc(fn)
    assert doc, f"{name} has no docstring"
    assert ":returns:" in doc, f"{name}: no :returns:"
    for param in inspect.signature(fn).parameters:
        assert f":param {param}:" in doc, f"{name}: no :param {param}:"
    assert "firstresult" in doc, f"{name}: does not say whether it is firstresult"
    if fn.prompt_style_spec["firstresult"]:
        assert "not firstresult" not in doc
    else:
        assert "not firstresult" in doc, f"{name}: should say it is not firstresult"


@pytest.fixture(scope="module")
def hooks_md():
    if not DOCS.is_file():
        pytest.fail(f"{DOCS} does not exist: every hook must be documented there")
    return DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED_HOOKS))
def test_hook_documented_with_exact_signature(hooks_md, name):
    lines = hooks_md.splitlines()
    heading = f"## `{name}`"
    assert heading in lines, f"docs/hooks.md has no heading line {heading!r}"
    expected = signature_line(name, HOOKS[name])
    assert expected in lines, f"docs/hooks.md lacks the exact line {expected!r}"


@pytest.mark.parametrize("name", sorted(EXPECTED_HOOKS))
def test_signature_is_inside_the_hook_section(hooks_md, name):
    """The signature line appears after the hook's heading and before the next ``## `` heading."""
    lines = hooks_md.splitlines()
    heading = f"## `{name}`"
    if heading not in lines:
        pytest.fail(f"no heading {heading!r}")
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"## ", lines[i])), len(lines))
    assert signature_line(name, HOOKS[name]) in lines[start:end]


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_has_tests_implementing_it(name):
    """Some test module outside this one implements the hook with @hookimpl."""
    here = Path(__file__).resolve()
    pattern = re.compile(rf"@(?:prompt_style\.)?hookimpl(?:\([^)]*\))?\s*\n\s*def {name}\(")
    implementing = [
        path.name
        for path in here.parent.glob("test_*.py")
        if path != here and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert implementing, f"no test module implements the {name} hook"


@pytest.mark.parametrize("page", ["hooks.md", "index.md"])
def test_every_hook_is_in_the_overview_tables(page):
    # docs/hooks.md's overview and docs/index.md's "How it is put together" each have a row per hook
    rows = [line for line in (DOCS.parent / page).read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert set(HOOKS) <= listed, f"docs/{page} has no row for {sorted(set(HOOKS) - listed)}"


def test_task_files_page_lists_every_task_key():
    from prompt_style.task import TASK_KEYS

    text = (DOCS.parent / "task-files.md").read_text(encoding="utf-8")
    table = text.split("## Keys", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M)
    assert documented == list(TASK_KEYS), "docs/task-files.md's key table differs from TASK_KEYS (same order)"
