"""A generation reply against its references, and the package without inspect_ai."""

from __future__ import annotations

import re
from pathlib import Path

import prompt_style_inspect
from prompt_style_inspect.answers import final_answer, matches_reference

HERE = Path(__file__).resolve().parent


def test_generation_references():
    assert final_answer("work...\nANSWER: 144") == "144"
    assert final_answer("  The Sun ") == "The Sun"
    assert matches_reference("The Sun", ["The Sun"])
    assert matches_reference("the sun", ["The Sun"])
    assert matches_reference("Reasoning.\nANSWER: 144", ["144"])
    assert not matches_reference("145", ["144"])


def test_the_package_imports_without_inspect_ai():
    # The plain-Python parts are importable where inspect_ai is not (the dev environment).
    assert prompt_style_inspect.final_answer is final_answer
    assert set(prompt_style_inspect.__all__) <= set(dir(prompt_style_inspect))


def test_entry_point_name_is_the_module_name():
    # inspect_ai loads only the entry point whose name is the package prefix (prompt_style_inspect/task).
    project = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    group = project.split("[project.entry-points.inspect_ai]", 1)[1].split("[", 1)[0]
    assert group.strip() == 'prompt_style_inspect = "prompt_style_inspect._registry"'
    assert 'dependencies = ["prompt-style>=0.1.0"]' in project


def test_sources_use_the_public_api_only():
    for path in (HERE.parent / "src" / "prompt_style_inspect").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"from prompt_style\.|import prompt_style\.", text), path.name
