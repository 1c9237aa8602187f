"""docs/writing-a-plugin.md: every Python block runs as it is (each in a fresh namespace,
from a temporary folder), and the guide covers every hook, the scaffold, the kit and
the stability policy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prompt_style.plugins import HOOK_NOUNS

DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-plugin.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = [
    (TEXT[: match.start()].count("\n") + 2, match.group(1))
    for match in re.finditer(r"^```python\n(.*?)^```$", TEXT, re.M | re.S)
]


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_every_python_block_runs(line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{DOC}:{line}", "exec", dont_inherit=True), {"__name__": f"writing_a_plugin_{line}"})


def test_every_hook_has_a_worked_example():
    for hook in HOOK_NOUNS:
        assert re.search(rf"^## .*`{hook}`", TEXT, re.M), f"no section for {hook}"
        assert re.search(rf"@hookimpl\n    def {hook}\(self", TEXT) or f"def {hook}():" in TEXT, hook


def test_the_guide_covers_the_scaffold_the_kit_and_the_policy():
    for heading in (
        "## Start from the scaffold",
        "## Testing a plugin",
        "## API stability",
        "## A plugin without packaging",
        "## Labels, answers and targets",
    ):
        assert f"\n{heading}\n" in TEXT
    for name in ("StyleConformance", "MetaTemplateConformance", "RetrieverConformance", "TaskFormatConformance"):
        assert name in TEXT
    for fixture in (
        "prompt_style_manager",
        "prompt_style_render",
        "prompt_style_golden",
        "--prompt-style-update-goldens",
    ):
        assert fixture in TEXT
