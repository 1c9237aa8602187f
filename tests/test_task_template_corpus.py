"""Corpus parity: SciRIFF's real task-template files render exactly as SciRIFF renders them.

tests/data/sciriff/ is a copy of the shared corpus (see its NOTICE.md): 57 task files,
``expected.jsonl`` (what SciRIFF's own Template.apply renders on each file's instance, per
template) and ``validation.jsonl`` (SciRIFF's verdict on each file).
tests/golden/sciriff/awkward.jsonl (tools/golden/make_sciriff_golden.py) holds what
SciRIFF's code renders -- or raises -- on awkward variants of the same instances.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from prompt_style import PromptStyleError, load_task
from prompt_style.cli import main
from prompt_style.formats.task_template.reader import read_spec

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "sciriff"
AWKWARD = ROOT / "tests" / "golden" / "sciriff" / "awkward.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    # split on newlines only: JSON strings may hold U+2028, which str.splitlines() also splits on
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


EXPECTED = read_jsonl(CORPUS / "expected.jsonl")
VALIDATION = read_jsonl(CORPUS / "validation.jsonl")
FILES = sorted({row["file"] for row in EXPECTED})
_SPECS: dict[str, object] = {}


def spec_of(file: str):
    if file not in _SPECS:
        _SPECS[file] = read_spec(CORPUS / file)
    return _SPECS[file]


def test_the_corpus_is_complete():
    files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("templates*/*.yaml"))
    assert len(files) == 57
    assert FILES == files
    assert sorted(row["file"] for row in VALIDATION) == files


@pytest.mark.parametrize("file", FILES)
def test_every_template_renders_as_sciriff_does(file):
    rows = [row for row in EXPECTED if row["file"] == file]
    spec = spec_of(file)
    assert sorted(t.id for t in spec.templates) == sorted(row["template_id"] for row in rows)
    for row in rows:
        template = spec.template(row["template_id"])
        applied = template.apply(copy.deepcopy(row["instance"]))
        assert applied.input == row["input"], (file, row["template_id"])
        assert applied.output == row["output"], (file, row["template_id"])
        assert applied.answer_choices == row["answer_choices"], (file, row["template_id"])
        assert (template.evaluate is True) == row["template_evaluate"]


@pytest.mark.parametrize("file", FILES)
def test_render_pipeline_gives_text_target_and_answer_choices(file, pm):
    """Through load_task (the reader, the task_template style, the plain meta template)."""
    for row in (r for r in EXPECTED if r["file"] == file):
        task = load_task(CORPUS / file, plugins=pm, template=row["template_id"], data={"test": [row["instance"]]})
        (prompt,) = task.render()
        assert prompt.to_json() == {
            "index": 0,
            "text": row["input"],
            "messages": None,
            "continuations": [],
            "target": row["output"],
            "answer_choices": row["answer_choices"],
        }


def _reference_valid(row) -> bool:
    return (
        row["schema_valid"]
        and row["task_load_error"] is None
        and row["name_matches_file"]
        and row["template_ids_are_0..n-1"]
        and row["n_evaluate_true"] <= 1
    )


@pytest.mark.parametrize("row", VALIDATION, ids=[row["file"] for row in VALIDATION])
def test_validation_agrees_with_sciriff(row):
    spec = spec_of(row["file"])
    errors = [p.format(row["file"]) for p in spec.problems if p.level == "error"]
    assert (not errors) == _reference_valid(row), errors
    assert len(spec.eval_templates()) == row["n_evaluate_true"]


def test_validate_command_passes_the_corpus(capsys):
    code = main(["validate", str(CORPUS / "templates"), str(CORPUS / "templates_retrieval")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.splitlines()[-1].startswith("57 files checked, 57 ok, 0 failed")


AWKWARD_CASES = read_jsonl(AWKWARD)[1:]


@pytest.mark.parametrize("file", FILES)
def test_awkward_values_render_as_sciriff_does(file):
    cases = [case for case in AWKWARD_CASES if case["file"] == file]
    assert cases
    spec = spec_of(file)
    for case in cases:
        template = spec.template(case["template_id"])
        where = (file, case["template_id"], case["variant"])
        if "error" in case:
            with pytest.raises(PromptStyleError):
                template.apply(copy.deepcopy(case["instance"]))
            continue
        applied = template.apply(copy.deepcopy(case["instance"]))
        assert (applied.input, applied.output) == (case["input"], case["output"]), where
        assert applied.answer_choices == case["answer_choices"], where


def test_awkward_golden_covers_errors_and_successes():
    assert len(AWKWARD_CASES) == 6 * len(EXPECTED)
    raised = sum("error" in case for case in AWKWARD_CASES)
    assert 0 < raised < len(AWKWARD_CASES) // 2


# allenai/SciRIFF's public release: its own 54 task files (another YAML layout, no template
# metadata, no evaluate), rendered by SciRIFF's Template on synthesised records.
RELEASE = ROOT / "tests" / "golden" / "sciriff" / "release"
RELEASE_CASES = read_jsonl(RELEASE / "cases.jsonl")[1:]
RELEASE_FILES = sorted({case["file"] for case in RELEASE_CASES})


def test_the_release_files_validate(capsys):
    assert len(RELEASE_FILES) == 54
    code = main(["validate", str(RELEASE / "templates")])
    out = capsys.readouterr().out
    assert code == 0, out
    # Every warning says that the task's formatter (SciRIFF's own code) is not installed.
    lines = out.splitlines()
    warnings = [line for line in lines if ": warning: " in line]
    assert warnings and all(": warning: formatter.name: the formatter " in line for line in warnings)
    assert lines[-1].startswith(f"54 files checked, 54 ok, 0 failed (0 errors, {len(warnings)} warnings)")


@pytest.mark.parametrize("file", RELEASE_FILES)
def test_release_files_render_as_sciriff_does(file, pm):
    spec = read_spec(RELEASE / "templates" / file)
    cases = [case for case in RELEASE_CASES if case["file"] == file]
    assert {t.id for t in spec.templates} == {case["template_id"] for case in cases}
    for case in cases:
        template = spec.template(case["template_id"])
        where = (file, case["template_id"], case["variant"])
        if "answer_choices" in case:
            assert template.answer_choices_list(copy.deepcopy(case["instance"])) == case["answer_choices"], where
        else:
            with pytest.raises(PromptStyleError):
                template.answer_choices_list(copy.deepcopy(case["instance"]))
        if "error" in case:
            with pytest.raises(PromptStyleError):
                template.apply(copy.deepcopy(case["instance"]))
            continue
        task = load_task(
            RELEASE / "templates" / file, plugins=pm, template=case["template_id"], data={"test": [case["instance"]]}
        )
        (prompt,) = task.render()
        rendered = prompt.to_json()
        assert (rendered["text"], rendered["target"]) == (case["input"], case["output"]), where
        assert rendered["answer_choices"] == case["answer_choices"], where
