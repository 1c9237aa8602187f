"""promptsource conversion, checked against the REAL promptsource 0.2.3.

tests/golden/promptsource/ holds, per dataset, promptsource's own ``templates.yaml`` (copied
from its sdist; Apache-2.0) and what promptsource's ``Template.apply`` (defaults:
``truncate=True``, ``highlight_variables=False``) and ``get_answer_choices_list`` give on
awkward records (tools/golden/make_promptsource_golden.py; promptsource is never imported
here). Each file is converted with prompt-style's converter, written to YAML and read back,
and every template must render every record exactly as promptsource did -- or fail where
promptsource failed or did not give exactly two parts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from prompt_style import PromptStyleError
from prompt_style.formats.task_template.promptsource import convert, dump_task_template, load_promptsource
from prompt_style.formats.task_template.reader import read_spec
from prompt_style.safe.yaml_loader import load_yaml

GOLDEN = Path(__file__).resolve().parent / "golden" / "promptsource"
FILES = sorted(GOLDEN.glob("*.json"))
SYNTHESISED = sorted((GOLDEN / "synthesised").glob("*.json"))


def test_golden_set_is_large():
    goldens = [json.loads(path.read_text(encoding="utf-8")) for path in FILES]
    templates = {(g["dataset"], g["subset"], c["template_id"]) for g in goldens for c in g["cases"]}
    assert len(templates) >= 300
    assert all(g["generator"]["promptsource"] == "0.2.3" for g in goldens)
    used_choice = [g for g in goldens if any("choice" in t for t in _sources(g))]
    assert used_choice, "the goldens must exercise the choice filter"


def _sources(golden) -> list[str]:
    document = load_promptsource(GOLDEN / golden["source"])
    return [t["jinja"] + (t.get("answer_choices") or "") for t in document.data["templates"].values()]


def _converted(golden):
    document = load_promptsource(GOLDEN / golden["source"])
    text = dump_task_template(convert(document))
    back = load_yaml("converted.yaml", text=text)
    return document, read_spec(back.data)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_converted_templates_render_as_promptsource(path):
    _check_golden(path)


@pytest.mark.parametrize("path", SYNTHESISED, ids=[p.stem for p in SYNTHESISED])
def test_every_promptsource_template_renders_as_promptsource_on_synthesised_records(path):
    """All of promptsource's templates, each on records made for the fields it reads."""
    golden, spec = _check_golden(path)
    for template in spec.templates:
        want = golden["fixed_answer_choices"][template.metadata["promptsource_id"]]
        if isinstance(want, dict):  # promptsource raised
            with pytest.raises(PromptStyleError):
                template.fixed_answer_choices()
        else:
            assert template.fixed_answer_choices() == want, (path.stem, template.name)


def test_synthesised_goldens_cover_every_template_file():
    assert len(SYNTHESISED) == 279
    templates = sum(len(json.loads(p.read_text(encoding="utf-8"))["fixed_answer_choices"]) for p in SYNTHESISED)
    assert templates >= 2000


def _check_golden(path):
    golden = json.loads(path.read_text(encoding="utf-8"))
    document, spec = _converted(golden)
    by_id = {t.metadata["promptsource_id"]: t for t in spec.templates}
    originals = document.data["templates"]
    assert list(by_id) == [t["id"] for t in originals.values()]
    for case in golden["cases"]:
        template = by_id[case["template_id"]]
        assert template.name == case["template_name"]
        assert template.jinja == originals[case["template_id"]]["jinja"]
        record = golden["records"][case["record"]]
        where = (path.stem, case["template_name"], case["record"])
        parts = case.get("parts")
        if parts is not None and len(parts) == 2:
            applied = template.apply(copy.deepcopy(record))
            assert [applied.input, applied.output] == parts, where
            if "answer_choices" in case:
                assert applied.answer_choices == case["answer_choices"], where
        else:
            # promptsource raised, or did not give input ||| output: an error naming the template
            with pytest.raises(PromptStyleError, match=r"template \d+"):
                template.apply(copy.deepcopy(record))
        if "answer_choices" in case:
            assert template.answer_choices_list(copy.deepcopy(record)) == case["answer_choices"], where
        else:
            with pytest.raises(PromptStyleError):
                template.answer_choices_list(copy.deepcopy(record))
    return golden, spec


def test_promptsource_semantics_are_marked_and_ids_kept():
    golden = json.loads((GOLDEN / "super_glue__rte.json").read_text(encoding="utf-8"))
    _, spec = _converted(golden)
    for template in spec.templates:
        assert template.semantics == "promptsource"
        assert template.metadata["render_as"] == "promptsource"
    first = spec.templates[0]
    assert spec.template(first.metadata["promptsource_id"]) is first
    assert spec.template(first.name) is first
    assert spec.template(0) is first


def test_truncation_is_promptsource_s():
    golden = json.loads((GOLDEN / "imdb.json").read_text(encoding="utf-8"))
    long_cases = [c for c in golden["cases"] if len(golden["records"][c["record"]]["text"]) > 2048 and "parts" in c]
    assert long_cases
    assert all("..." in case["parts"][0] for case in long_cases if "{{text}}" in case["parts"][0] or True)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_promptsource_files_render_directly_as_promptsource(path, pm):
    """The templates.yaml itself (converted in memory), through load_task: text, target and
    answer_choices as promptsource gave them, for one record per template."""
    from prompt_style import load_task

    golden = json.loads(path.read_text(encoding="utf-8"))
    seen = set()
    for case in golden["cases"]:
        parts = case.get("parts")
        if case["template_id"] in seen or parts is None or len(parts) != 2 or "answer_choices" not in case:
            continue
        seen.add(case["template_id"])
        record = golden["records"][case["record"]]
        task = load_task(GOLDEN / golden["source"], plugins=pm, template=case["template_id"], data={"test": [record]})
        (prompt,) = task.render()
        rendered = prompt.to_json()
        where = (path.stem, case["template_name"], case["record"])
        assert [rendered["text"], rendered["target"]] == parts, where
        assert rendered["answer_choices"] == case["answer_choices"], where
    assert seen
