"""OpenCompass dataset configs on the fast path (``fastpath._dialogue_round``): the
generation dialogue's head rendered once, each record's round item filled as
OpenCompass fills it; the same prompts, lines and errors as the general path."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

from prompt_style import RenderedPrompt, load_task
from prompt_style.fast_prompts import LazyDialoguePrompt
from prompt_style.lines import PromptEncoder
from prompt_style.safe.json_lines import dumps_line

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "examples" / "opencompass" / "task.yaml").read_text(encoding="utf-8"))
DEV = [json.loads(line) for line in (ROOT / "examples/opencompass/data/dev.jsonl").read_text().splitlines()]


def record(question: Any, target: Any = "A", **more: Any) -> dict[str, Any]:
    return {"input": question, "A": "a", "B": "b ü", "C": "{target}", "D": "d", "target": target, **more}


RECORDS: list[Any] = [
    record("Plain question?"),
    record("Ünïcødé — 你好 \u2028 {input} {B}", "B"),
    record("  padded  \n", None),
    record(7, 3),
    record(None),
    record("a list target", ["A", "B"]),
    record("a float target", 1.5),
    {k: v for k, v in record("no column D").items() if k != "D"},
    {"input": "", "A": "", "B": "", "C": "", "D": "", "target": "A"},
    record("text ||| and \x00 nul"),
    record(["a", "list"], "C"),
    ["not", "a", "record"],
]


def write(folder: Path, config: dict[str, Any], records: list[Any]) -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "data/dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DEV), encoding="utf-8")
    (folder / "data/test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def variants() -> dict[str, dict[str, Any]]:
    plain = copy.deepcopy(CONFIG)
    zero = copy.deepcopy(CONFIG)
    zero["infer_cfg"]["retriever"] = {"type": "ZeroRetriever"}
    no_system = copy.deepcopy(CONFIG)
    no_system["infer_cfg"]["prompt_template"]["template"]["begin"] = ["</E>"]
    target_in_round = copy.deepcopy(CONFIG)
    target_in_round["infer_cfg"]["prompt_template"]["template"]["round"][0]["prompt"] += "{target}"
    # string templates (most of OpenCompass's base-model configs): the examples where the ice
    # token stands, then the record's fields
    string = copy.deepcopy(CONFIG)
    string["infer_cfg"]["ice_template"] = {"type": "PromptTemplate", "template": "Q: {input}\nA: {target}\n"}
    string["infer_cfg"]["prompt_template"] = {
        "type": "PromptTemplate",
        "template": "Examples:\n</E>Q: {input} ({A}/{B}) {missing}\nA:",
        "ice_token": "</E>",
    }
    string_alone = copy.deepcopy(string)
    string_alone["infer_cfg"]["prompt_template"] = {"type": "PromptTemplate", "template": "{input} {target}"}
    string_alone["infer_cfg"]["retriever"] = {"type": "ZeroRetriever"}
    # the answer's item after the question (an ice_template serving as the prompt, C-Eval's
    # shape): its field masked in generation, the same for every record
    answer_item = copy.deepcopy(CONFIG)
    answer_item["infer_cfg"]["prompt_template"]["template"]["round"].append({"role": "BOT", "prompt": "{target}"})
    return {
        "answer_item": answer_item,
        "fixk": plain,
        "zero": zero,
        "no_system": no_system,
        "target_in_round": target_in_round,
        "string": string,
        "string_alone": string_alone,
    }


@pytest.mark.parametrize("name", sorted(variants()))
def test_the_fast_path_equals_the_general_path(tmp_path, pm_all, both_paths, name):
    path = write(tmp_path, variants()[name], RECORDS[:1])
    outcomes = both_paths(path, RECORDS, plugins=pm_all)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(o[0] == "error" for o in outcomes) and any(type(p) is LazyDialoguePrompt for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
        copied = pickle.loads(pickle.dumps(prompt))
        assert copied == prompt and type(copied) is RenderedPrompt and copied.dialogue == prompt.dialogue


@pytest.mark.parametrize("name", sorted(variants()))
def test_lines_are_the_general_path_s(tmp_path, pm_all, name):
    good = [r for r in RECORDS if isinstance(r, dict) and r.get("input") is not None][:6] * 60
    path = write(tmp_path, variants()[name], good)
    task = load_task(path, plugins=pm_all)
    got = list(task.json_lines())
    general = load_task(path, plugins=pm_all)
    general.renderer._fast = None
    encoder = PromptEncoder()
    assert got == [general.provenance.line_bytes(p, encoder) for p in general.render()]
    assert len(got) == len(good) and task.renderer.fast_render() is not None


def test_other_shapes_stay_on_the_general_path(tmp_path, pm_all):
    begin_field = copy.deepcopy(CONFIG)
    begin_field["infer_cfg"]["prompt_template"]["template"]["begin"][0]["prompt"] = "About {input}."
    two_items = copy.deepcopy(CONFIG)
    two_items["infer_cfg"]["prompt_template"]["template"]["round"].append({"role": "BOT", "prompt": "{A}"})
    for config in (begin_field, two_items):
        path = write(tmp_path, config, RECORDS[:2])
        assert load_task(path, plugins=pm_all).renderer.fast_render() is None


META = str(ROOT / "examples" / "opencompass" / "meta.yaml")
"""An OpenCompass meta template file (ChatML-like, with a reserved SYSTEM role)."""


@pytest.mark.parametrize("meta", [META, "opencompass::internlm2-chat", "chatml", "qwen", "messages"])
@pytest.mark.parametrize("name", sorted(variants()))
def test_meta_templates_and_chat_formats_take_it(tmp_path, pm_all, both_paths, meta, name):
    """A meta template that says where its text stands around the last turn's content
    (``last_turn_affixes``): the text around the record's content made once; messages
    (a chat format's, or API messages with no text) written around it too."""
    path = write(tmp_path, variants()[name], RECORDS[:1])
    assert load_task(path, plugins=pm_all, meta=meta).renderer.fast_render() is not None
    outcomes = both_paths(path, RECORDS, plugins=pm_all, meta=meta)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(o[0] == "error" for o in outcomes) and any(isinstance(p, LazyDialoguePrompt) for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
    good = [r for r in RECORDS if isinstance(r, dict) and r.get("input") is not None][:6] * 20
    path = write(tmp_path, variants()[name], good)
    got = list(load_task(path, plugins=pm_all, meta=meta).json_lines())
    general = load_task(path, plugins=pm_all, meta=meta)
    general.renderer._fast = None
    assert got == [general.provenance.line_bytes(p, encoder) for p in general.render()]


def test_a_chat_format_whose_round_asks_for_the_answer_stays_on_the_general_path(tmp_path, pm_all, both_paths):
    """With a chat format, OpenCompass's dialogue stops at the round's answer (the BOT
    item): a round of one BOT item is not the shape of one content after a shared head."""
    config = copy.deepcopy(CONFIG)
    config["infer_cfg"]["prompt_template"]["template"]["round"] = [{"role": "BOT", "prompt": "{input}"}]
    path = write(tmp_path, config, RECORDS[:2])
    assert load_task(path, plugins=pm_all, meta="chatml").renderer.fast_render() is None
    assert load_task(path, plugins=pm_all).renderer.fast_render() is not None
    both_paths(path, RECORDS, plugins=pm_all)
    prompt = load_task(path, plugins=pm_all, meta="chatml").renderer.render(RECORDS[0], 0)
    assert RECORDS[0]["input"] not in json.dumps(prompt.messages)  # (the answer's place and all after it left out)


# -- perplexity mode: one candidate per label ----------------------------------------------

PPL = yaml.safe_load((ROOT / "examples" / "opencompass" / "task_ppl.yaml").read_text(encoding="utf-8"))


def ppl_variants() -> dict[str, dict[str, Any]]:
    dialogue = copy.deepcopy(PPL)
    zero = copy.deepcopy(PPL)
    zero["infer_cfg"]["retriever"] = {"type": "ZeroRetriever"}
    strings = copy.deepcopy(PPL)
    strings["infer_cfg"]["ice_template"]["template"] = {
        label: "</E>Q: {input}\n(A) {A} (B) {B} (C) {C} (D) {D}\nA: " + "{" + label + "}" for label in "ABCD"
    }
    # a field turn with no text of its own (the BOT item is the choice itself), labels as numbers
    bare = copy.deepcopy(PPL)
    bare["infer_cfg"]["ice_template"]["template"] = {
        i: {
            "begin": "</E>",
            "round": [{"role": "HUMAN", "prompt": "{input}"}, {"role": "BOT", "prompt": "{" + c + "}"}],
        }
        for i, c in enumerate("ABCD")
    }
    bare["reader_cfg"]["output_column"] = "number"
    bare["infer_cfg"]["retriever"] = {"type": "ZeroRetriever"}  # (the examples have no number)
    # the inferencer's own labels, over a template that is not label-keyed
    labelled = copy.deepcopy(PPL)
    labelled["infer_cfg"]["ice_template"]["template"] = {
        "begin": "</E>",
        "round": [{"role": "HUMAN", "prompt": "{input} ({target})"}, {"role": "BOT", "prompt": "{A}"}],
    }
    labelled["infer_cfg"]["inferencer"] = {"type": "PPLInferencer", "labels": ["B", "A"]}
    return {"dialogue": dialogue, "zero": zero, "strings": strings, "bare": bare, "labelled": labelled}


def ppl_record(question: Any, target: Any = "A", **more: Any) -> dict[str, Any]:
    return {
        "input": question,
        "A": "a",
        "B": "b ü",
        "C": "{target}",
        "D": "d \u2028",
        "target": target,
        "number": 1,
        **more,
    }


PPL_RECORDS: list[Any] = [
    ppl_record("Plain question?"),
    ppl_record("Ünïcødé — 你好 \u2028 {input} {B} \\u0000 \x00", "B"),
    ppl_record("  padded  \n", None),
    ppl_record(7, 3),
    ppl_record(None),
    ppl_record("a list target", ["A", "B"]),
    ppl_record("a float value", "A", A=1.5, B=True, C=None, D=[1, "x"]),
    {k: v for k, v in ppl_record("no column D").items() if k != "D"},
    {"input": "", "A": "", "B": "", "C": "", "D": "", "target": "A", "number": 0},
    ppl_record("", "A", A=""),
    ppl_record(["a", "list"], "C"),
    ["not", "a", "record"],
]


def write_ppl(folder: Path, config: dict[str, Any], records: list[Any]) -> Path:
    path = write(folder, config, records)
    return path


@pytest.mark.parametrize("name", sorted(ppl_variants()))
def test_perplexity_candidates_equal_the_general_path(tmp_path, pm_all, both_paths, name):
    path = write_ppl(tmp_path, ppl_variants()[name], PPL_RECORDS[:1])
    outcomes = both_paths(path, PPL_RECORDS, plugins=pm_all)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(o[0] == "error" for o in outcomes) and len(made) >= 6
    assert all(p.mode == "ppl" and p.candidates for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
    good = [r for r in PPL_RECORDS if isinstance(r, dict) and isinstance(r.get("input"), str)] * 10
    path = write_ppl(tmp_path, ppl_variants()[name], good)
    task = load_task(path, plugins=pm_all)
    assert task.renderer.fast_render() is not None
    taken = [task.renderer._fast_path.render(r, 0) is not None for r in good[:8]]
    # the general path's: a list of targets; a record missing a column the templates read;
    # with a turn of a field alone, the records whose choice is empty
    expected = {
        "bare": [True] * 5 + [False] * 3,
        "labelled": [True, True, True, False, True, True, False, False],
    }.get(name, [True, True, True, False, True, False, True, True])
    assert taken == expected
    general = load_task(path, plugins=pm_all)
    general.renderer._fast = None
    assert list(task.json_lines()) == [general.provenance.line_bytes(p, encoder) for p in general.render()]


def test_perplexity_candidates_under_other_meta_templates_stay_on_the_general_path(tmp_path, pm_all):
    path = write_ppl(tmp_path, PPL, PPL_RECORDS[:2])
    for meta in (META, "chatml", "messages"):
        assert load_task(path, plugins=pm_all, meta=meta).renderer.fast_render() is None
    ll = copy.deepcopy(PPL)
    ll["infer_cfg"]["inferencer"] = {"type": "LLInferencer"}
    assert load_task(write_ppl(tmp_path, ll, PPL_RECORDS[:2]), plugins=pm_all).renderer.fast_render() is None
