"""The renderer's compiled fast path (prompt_style.fastpath) against the general path.

Every task here is rendered twice, record by record: with the fast path (the default)
and with it switched off (``renderer._fast = None``). The two must give equal prompts
(text, continuations, target, dialogue, JSON view) or the same error (type, message,
key, record), for records chosen to be awkward: braces, unicode, whitespace, null
fields, 3/5/26/27 choices, non-string values, targets that need resolving. No timings.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import pickle
import random
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from _fastpath_support import AWKWARD, DESCRIPTIONS, POOL, STYLES, assert_same, outcome, renderers, task_of

import prompt_style
from prompt_style import JinjaLimits, RenderedPrompt, load_task
from prompt_style.data import _json_lines
from prompt_style.errors import DataError, OptionError
from prompt_style.fastpath import LazyDialoguePrompt
from prompt_style.retrievers.builtin import FirstN, Fixed, Random, Zero
from prompt_style.retrievers.opencompass import FixK
from prompt_style.safe.limits import limits_scope
from prompt_style.styles.base import ChoiceStyle
from prompt_style.styles.compiled import MAX_CHOICES, question_function
from prompt_style.types import Sample, StyleSettings, Turn

# -- equivalence ---------------------------------------------------------------------


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("description", list(DESCRIPTIONS))
def test_fast_path_equals_general_path(pm, style, description):
    task = task_of(style, DESCRIPTIONS[description])
    outcomes = assert_same(task, pm, AWKWARD)
    fast = load_task(task, plugins=pm).renderer
    assert fast.fast_render() is not None  # the common case takes the fast path
    assert any(o[0] == "ok" for o in outcomes) and any(o[0] == "error" for o in outcomes)
    # the records it can take are rendered by it
    first = fast.render(AWKWARD[27 if style == "cloze_inline" else 0], 0)
    assert type(first) is (LazyDialoguePrompt if description in ("none", "literal") else RenderedPrompt)


@pytest.mark.parametrize("shots", [0, 1, 3])
@pytest.mark.parametrize("delimiters", [{}, {"fewshot_delimiter": "\n###\n", "target_delimiter": ""}])
def test_shots_and_delimiters(pm, shots, delimiters):
    assert_same(task_of("mcq", DESCRIPTIONS["literal"], shots=shots, **delimiters), pm, AWKWARD)


@pytest.mark.parametrize(
    "doc_to_text", ["q", "{{q}}", "{{q.strip()}}", "{{ q.strip().upper() }}", "{{ q | trim }}", "Question: {q}"]
)
def test_field_spec_kinds(pm, doc_to_text):
    assert_same(task_of("mcq", DESCRIPTIONS["jinja"], doc_to_text=doc_to_text), pm, AWKWARD)


def test_records_that_are_mappings_but_not_dicts(pm):
    records = [MappingProxyType(r) for r in AWKWARD]
    for doc_to_text in ("q", "{{q.strip()}}"):
        assert_same(task_of("mcq", doc_to_text=doc_to_text), pm, records)


def test_in_memory_tuples_and_odd_values(pm):
    records = [
        {"q": "tuple choices", "c": ("a", "b"), "a": 1, "s": "t"},
        {"q": "str subclass", "c": [type("S", (str,), {"__str__": lambda self: "S!"})("x"), "y"], "a": 0, "s": "t"},
        {"q": type("Q", (str,), {})("question subclass"), "c": ["a", "b"], "a": 0, "s": "t"},
        {"q": "bad format", "c": [object(), "y"], "a": 0, "s": "t"},
    ]
    for style in ("mcq", "conversion_spec", "numbers", "cloze_qa", "answer_with_choice"):
        assert_same(task_of(style), pm, records)
    assert_same({**task_of("mcq"), "template": "passthrough"}, pm, records)


def test_few_shot_example_with_bad_data_reports_as_before(pm):
    pool = [*POOL, {"q": None, "c": ["a"], "a": 0}]
    task = task_of("mcq", retriever={"name": "fixed", "ids": [0, 3]}, shots=2)
    task["data"] = {**task["data"], "dev": pool}
    fast, general = renderers(task, pm)
    assert fast.fast_render() is None  # the general path reports the example, for every record
    outcomes = assert_same(task, pm, AWKWARD[:3])
    assert all(o[0] == "error" and "few-shot example" in o[2] for o in outcomes)


def test_task_render_uses_the_fast_path_and_equals_general(pm):
    records = [r for r in AWKWARD if isinstance(r.get("q"), str) and isinstance(r.get("c"), list)]
    records = [r for r in records if type(r["a"]) is int and 0 <= r["a"] < min(26, len(r["c"]))]
    records = [r for r in records if None not in r["c"] and len(r["c"]) <= 26 and r["c"]]
    task = {**task_of("mcq", DESCRIPTIONS["literal"]), "data": {"test": records, "dev": POOL}}
    fast = list(load_task(task, plugins=pm).render())
    loaded = load_task(task, plugins=pm)
    loaded.renderer._fast = None
    general = list(loaded.render())
    assert fast == general and general == fast
    assert [r.to_json() for r in fast] == [r.to_json() for r in general]
    assert all(type(r) is LazyDialoguePrompt for r in fast)
    assert all(type(r) is RenderedPrompt for r in general)


def test_jsonl_task_file_through_both_paths(make_task, pm):
    good = [r for r in AWKWARD[:7] if None not in r["c"]]
    path = make_task({"test": good, "dev": POOL}, **{k: v for k, v in task_of("mcq").items() if k != "data"})
    fast = list(load_task(path, plugins=pm).render())
    loaded = load_task(path, plugins=pm)
    loaded.renderer._fast = None
    assert fast == list(loaded.render())


# -- what does not take the fast path --------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"gen_prefix": "The answer is"},
        {"output_type": "generate_until"},
    ],
    ids=lambda c: next(iter(c)) + ("" if not isinstance(next(iter(c.values())), str) else "=" + next(iter(c.values()))),
)
def test_not_in_the_common_case(pm, change):
    task = task_of("mcq", DESCRIPTIONS["jinja"])
    kwargs = {}
    for key in ("meta", "system_instruction"):
        if key in change:
            kwargs[key] = change[key]
    task.update({k: v for k, v in change.items() if k not in kwargs})
    fast = load_task(task, plugins=pm, **kwargs).renderer
    assert fast.fast_render() is None
    records = AWKWARD if "output_type" not in change else AWKWARD[:1]
    assert_same(task, pm, records, **kwargs)


@pytest.mark.parametrize(
    "retriever", ["random", {"name": "first_n", "exclude_record": True}], ids=["random", "first_n"]
)
def test_examples_chosen_per_record_with_a_description_per_record(pm, retriever):
    """Examples chosen per record and a description of the record's own (tests/test_fast_examples.py
    has the rest): the fast path, equal to the general path on awkward records."""
    task = task_of("mcq", DESCRIPTIONS["jinja"])
    task["retriever"] = retriever
    assert load_task(task, plugins=pm).renderer.fast_render() is not None
    assert_same(task, pm, AWKWARD)


# -- PassthroughStyle: lm-evaluation-harness's task files ------------------------------

PASSTHROUGH_DESCRIPTIONS: dict[str, Any] = {
    **DESCRIPTIONS,
    "jinja_without_fields": "{{ 'Fixed' }} text\n\n",
    "default_filter": "{{ s | default('no subject') }}\n\n",  # record-free text, but not every record's
}


@pytest.mark.parametrize("description", list(PASSTHROUGH_DESCRIPTIONS))
@pytest.mark.parametrize(
    "choices",
    ["c", ["A", "B", "C", "D"], "{{c}}", "{{ ['w', 'x', 'y', 'z'] }}"],
    ids=["field", "constant", "expr", "list"],
)
@pytest.mark.parametrize(
    "doc_to_text",
    ["q", "{{q.strip()}}\nA. {{c[0]}}\nB. {{c[1]}}\nAnswer:", "Q: {{ q }} {{ c }}", "{{ q | trim }}?"],
)
def test_passthrough_fast_path_equals_general_path(pm, description, choices, doc_to_text):
    task = task_of("mcq", PASSTHROUGH_DESCRIPTIONS[description], doc_to_text=doc_to_text, doc_to_choice=choices)
    task["template"] = "passthrough"
    assert load_task(task, plugins=pm).renderer.fast_render() is not None
    outcomes = assert_same(task, pm, AWKWARD)
    assert any(o[0] == "ok" for o in outcomes) and any(o[0] == "error" for o in outcomes)


# -- generation: lm-evaluation-harness's generate_until ----------------------------------

GENERATION_RECORDS: list[Any] = [
    *AWKWARD,
    {"q": "What is 2+2?", "a": "4", "s": "m"},
    {"q": "  spaced  {0} {{x}}", "a": "Ünïcødé \u2028 answer\n#### 7", "s": "m"},
    {"q": "int target", "a": 7, "s": "m"},
    {"q": "list of references", "a": ["4", "four"], "s": "m"},
    {"q": "null target", "a": None, "s": "m"},
    {"q": "empty target", "a": "", "s": "m"},
    {"q": "bool target", "a": False, "s": "m"},
    {"q": 3, "a": "3", "s": "m"},
    {"a": "missing question", "s": "m"},
    ["not", "a", "dict"],
]
GENERATION_POOL: list[dict[str, Any]] = [
    {"q": "Shot {0} one?", "a": "one", "s": "dev"},
    {"q": "  shot two  ", "a": 2, "s": "dev"},
    {"q": "shot three", "a": "", "s": "dev"},
]


@pytest.mark.parametrize("description", list(DESCRIPTIONS))
@pytest.mark.parametrize("doc_to_text", ["q", "{{q.strip()}}", "Question: {{q}}\nAnswer:", "{{ q | trim }}"])
@pytest.mark.parametrize("doc_to_target", ["a", "{{a}}", " {{a}}", None])
@pytest.mark.parametrize("output_type", [None, "generate_until"])
def test_generation_fast_path_equals_general_path(pm, description, doc_to_text, doc_to_target, output_type):
    task: dict[str, Any] = {
        "data": {"test": [{"q": "unused", "a": "x"}], "train": GENERATION_POOL},
        "fewshot_split": "train",
        "doc_to_text": doc_to_text,
        "template": "passthrough",
        "num_fewshot": 0 if doc_to_target is None else 3,
        "until": ["\n\n", "Question:"],
    }
    if doc_to_target is not None:
        task["doc_to_target"] = doc_to_target
    if output_type is not None:
        task["output_type"] = output_type
    if DESCRIPTIONS[description] is not None:
        task["description"] = DESCRIPTIONS[description]
    assert load_task(task, plugins=pm).renderer.fast_render() is not None
    outcomes = assert_same(task, pm, GENERATION_RECORDS)
    assert any(o[0] == "ok" for o in outcomes) and any(o[0] == "error" for o in outcomes)
    made = [o for o in outcomes if o[0] == "ok"]
    assert all(o[1]["continuations"] == [] and o[1]["until"] == ["\n\n", "Question:"] for o in made)
    if description in ("none", "literal"):
        assert any(type(o[-1]) is LazyDialoguePrompt for o in made)
    with_null = {**task, "allow_null_target": True}
    assert_same(with_null, pm, GENERATION_RECORDS)


@pytest.mark.parametrize("doc_to_text", [None, "q", "{{q.strip()}}", "{{ q | trim }}"])
@pytest.mark.parametrize("doc_to_target", ["a", "{{a}}", "{{q}} {{a}}"])
@pytest.mark.parametrize("description", ["none", "literal", "jinja"])
def test_rolling_fast_path_equals_general_path(pm, doc_to_text, doc_to_target, description):
    """loglikelihood_rolling: the document is the text and the target; a record whose
    fields the general path reads with an error, or whose document is not text, is the
    general path's, with its error."""
    task: dict[str, Any] = {
        "data": {"test": [{"q": "unused", "a": "x"}], "train": GENERATION_POOL},
        "fewshot_split": "train",
        "doc_to_target": doc_to_target,
        "template": "passthrough",
        "output_type": "loglikelihood_rolling",
        "num_fewshot": 2,
    }
    if doc_to_text is not None:
        task["doc_to_text"] = doc_to_text
    if DESCRIPTIONS[description] is not None:
        task["description"] = DESCRIPTIONS[description]
    # (a description per record: compiled once per description, fast_descriptions)
    taken = load_task(task, plugins=pm).renderer.fast_render() is not None
    assert taken
    outcomes = assert_same(task, pm, GENERATION_RECORDS)
    assert any(o[0] == "ok" for o in outcomes) and any(o[0] == "error" for o in outcomes)
    made = [o for o in outcomes if o[0] == "ok"]
    assert all(o[1]["continuations"] == [] and o[2] == () and o[-1].fewshot_indices == () for o in made)
    if taken:
        assert any(type(o[-1]) is LazyDialoguePrompt for o in made)
        copied = pickle.loads(pickle.dumps(made[0][-1]))
        assert copied == made[0][-1] and type(copied) is RenderedPrompt and copied.dialogue == ()
    assert_same(task, pm, GENERATION_RECORDS[:12], limits=JinjaLimits(max_output=40))


def test_generation_with_choices_or_a_prefix_is_not_taken(pm):
    base = {
        "data": {"test": [{"q": "unused", "a": "x"}]},
        "doc_to_text": "q",
        "doc_to_target": "a",
        "template": "passthrough",
        "output_type": "generate_until",
    }
    for change in ({"doc_to_choice": ["x", "y"]}, {"gen_prefix": "The answer is"}, {"template": "mcq"}):
        task = {**base, **change}
        assert load_task(task, plugins=pm).renderer.fast_render() is None
        assert_same(task, pm, GENERATION_RECORDS[-10:])


# -- a choice style's generation variants (generation: answer / cot) ----------------------


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("generation", ["answer", "cot"])
@pytest.mark.parametrize("description", ["none", "literal", "jinja"])
@pytest.mark.parametrize("output_type", [None, "multiple_choice", "generate_until"])
def test_choice_generation_fast_path_equals_general_path(pm, style, generation, description, output_type):
    """The answer instruction, then the question without its suffix; the gold's label as
    the target, no continuations. A record with several gold answers (another
    instruction) and a style whose answers name a choice in a format of their own (which
    may fail per record) are the general path's."""
    task = task_of(style, DESCRIPTIONS[description])
    task["template"] = {**task["template"], "generation": generation}
    if output_type is not None:
        task["output_type"] = output_type
    taken = load_task(task, plugins=pm).renderer.fast_render() is not None
    assert taken == (style != "answer_with_choice")
    outcomes = assert_same(task, pm, AWKWARD)
    made = [o for o in outcomes if o[0] == "ok"]
    assert made and all(o[1]["continuations"] == [] and type(o[1]["target"]) in (str, list) for o in made)
    assert any(o[0] == "error" for o in outcomes)
    if taken and description != "jinja":
        assert type(made[0][-1]) is LazyDialoguePrompt


@pytest.mark.parametrize("meta", ["plain", "chatml", "messages", "llama-3"])
@pytest.mark.parametrize("retriever", ["first_n", "random"])
@pytest.mark.parametrize(
    "options",
    [{"generation": "cot"}, {"generation": "answer", "generation_instruction": "Pick one of {letters}."}],
    ids=["cot", "own_instruction"],
)
def test_choice_generation_formats_and_retrievers(pm_all, meta, retriever, options):
    task = task_of("numbers", DESCRIPTIONS["literal"], shots=2, retriever=retriever)
    task["template"] = {**task["template"], **options}
    assert load_task(task, plugins=pm_all, meta=meta).renderer.fast_render() is not None
    outcomes = assert_same(task, pm_all, AWKWARD, meta=meta)
    assert any(o[0] == "ok" and o[1]["target"] == "2" for o in outcomes)  # a numbered style's label


def test_choice_generation_jsonl_lines_equal_the_general_path(pm):
    from prompt_style.jsonl import json_lines

    task = task_of("mcq", DESCRIPTIONS["literal"])
    task["template"] = {**task["template"], "generation": "cot"}
    records = [r for r in AWKWARD if r.get("q") != "27 choices" and r.get("q") != "70 choices"]
    task["data"] = {**task["data"], "test": records}
    fast = load_task(task, plugins=pm)
    general = load_task(task, plugins=pm)
    general.renderer._fast = None
    assert fast.renderer.fast_render() is not None

    def lines(loaded: Any) -> list[Any]:
        try:
            return list(json_lines(loaded))
        except prompt_style.PromptStyleError as exc:
            return [str(exc)]

    assert lines(fast) == lines(general)


LM_EVAL_MMLU = Path(__file__).parent / "lm_eval_tasks/mmlu/default/mmlu_anatomy.yaml"


def _lm_eval_records(records: list[Any]) -> list[Any]:
    names = {"q": "question", "c": "choices", "a": "answer", "s": "subject"}
    return [{names.get(k, k): v for k, v in r.items()} if isinstance(r, dict) else r for r in records]


@pytest.mark.parametrize("shots", [0, 2, 5])
def test_lm_eval_task_files_take_the_fast_path(pm, shots):
    """lm-evaluation-harness's own MMLU task file (Jinja doc_to_text, constant
    doc_to_choice, literal description): the fast path, with the general path's prompts
    and errors for every awkward record."""
    pool = _lm_eval_records([{**r, "c": [*r["c"], "x", "y", "z"][:4]} for r in POOL] * 2)
    records = _lm_eval_records(AWKWARD) + [{"question": "q", "choices": ["a", "b", "c", "d"], "answer": 3}]
    data = {"test": records, "dev": pool}
    assert load_task(LM_EVAL_MMLU, plugins=pm, data=data, shots=shots).renderer.fast_render() is not None
    outcomes = assert_same(LM_EVAL_MMLU, pm, records, data=data, shots=shots)
    assert outcomes[-1][0] == "ok" and type(outcomes[-1][-1]) is LazyDialoguePrompt
    assert outcomes[-1][5].endswith("q\nA. a\nB. b\nC. c\nD. d\nAnswer:")
    assert any(o[0] == "error" for o in outcomes)


GEN_PREFIX_TASK = """\
task: gen_prefix_task
dataset_path: json
output_type: OUTPUT
test_split: test
fewshot_split: dev
fewshot_config:
  sampler: first_n
doc_to_text: TEXT
doc_to_choice: "{{choices}}"
doc_to_target: answer
gen_prefix: PREFIX
description: "Answer these.\\n\\n"
"""


@pytest.mark.parametrize("prefix", ['"The best answer is"', '" leading space"', '"{{ subject }} says"', '""'])
@pytest.mark.parametrize("output_type", ["multiple_choice", "generate_until"])
@pytest.mark.parametrize("text", ['"{{question}}"', '"Q: {{question}}\\nA:"'])
@pytest.mark.parametrize("shots", [0, 2])
def test_lm_eval_gen_prefix(tmp_path, pm, prefix, output_type, text, shots):
    """lm-evaluation-harness's ``gen_prefix`` (an assistant turn after the question, delimited
    from it unless either side has white space at the join): the same for every record,
    the fast path's tail ends with it; a question text that is empty or ends with white
    space (no delimiter), and a record with a column named like the prefix (lm-eval reads
    that column), are the general path's. A prefix that reads fields is the general path's."""
    source = GEN_PREFIX_TASK.replace("OUTPUT", output_type).replace("TEXT", text).replace("PREFIX", prefix)
    if output_type == "generate_until":  # (the reference answer: no choices)
        source = source.replace('doc_to_choice: "{{choices}}"\n', "")
    path = tmp_path / "task.yaml"
    path.write_text(source, encoding="utf-8")
    pool = _lm_eval_records([{**r, "c": [*r["c"], "x", "y", "z"][:4]} for r in POOL] * 2)
    records = _lm_eval_records(AWKWARD) + [
        {"question": "ends with space ", "choices": ["a", "b"], "answer": 1, "subject": "s"},
        {"question": "", "choices": ["a", "b"], "answer": 0, "subject": "s"},
        {"question": "q", "choices": ["a", "b"], "answer": 0, "subject": "s", "The best answer is": "own"},
        {"question": "q", "choices": ["a", "b"], "answer": 1, "subject": "s"},
    ]
    data = {"test": records, "dev": pool}
    taken = load_task(path, plugins=pm, data=data, shots=shots).renderer.fast_render() is not None
    assert taken == ("subject" not in prefix)
    outcomes = assert_same(path, pm, records, data=data, shots=shots)
    assert outcomes[-1][0] == "ok"
    if taken:
        assert type(outcomes[-1][-1]) is LazyDialoguePrompt
        if prefix != '""':
            assert outcomes[-1][2][-1].role == "assistant"  # (its dialogue: the prefill last)
    with_lines = load_task(path, plugins=pm, data={"test": records[-4:], "dev": pool}, shots=shots)
    general = load_task(path, plugins=pm, data={"test": records[-4:], "dev": pool}, shots=shots)
    general.renderer._fast = None
    from prompt_style.lines import PromptEncoder

    encoder = PromptEncoder()
    assert list(with_lines.json_lines()) == [general.provenance.line_bytes(p, encoder) for p in general.render()]


@pytest.mark.parametrize("meta", ["chatml", "messages", "qwen", "llama-3", "mistral"])
@pytest.mark.parametrize("output_type", ["multiple_choice", "generate_until"])
@pytest.mark.parametrize("shots", [0, 2])
def test_lm_eval_gen_prefix_in_chat_formats(tmp_path, pm_all, meta, output_type, shots):
    """A chat format's prefill (``prefilled_turn_affixes``): the text and messages around
    the question before it made once; Llama 3's template trims the question, so a record
    whose question has white space at either end is the general path's there."""
    source = GEN_PREFIX_TASK.replace("OUTPUT", output_type).replace("TEXT", '"{{question}}"')
    source = source.replace("PREFIX", '"The best answer is"')
    if output_type == "generate_until":
        source = source.replace('doc_to_choice: "{{choices}}"\n', "")
    path = tmp_path / "task.yaml"
    path.write_text(source, encoding="utf-8")
    pool = _lm_eval_records([{**r, "c": [*r["c"], "x", "y", "z"][:4]} for r in POOL] * 2)
    records = _lm_eval_records(AWKWARD) + [
        {"question": " starts with space", "choices": ["a", "b"], "answer": 1},
        {"question": "ends with space ", "choices": ["a", "b"], "answer": 1},
        {"question": "", "choices": ["a", "b"], "answer": 0},
        {"question": "q", "choices": ["a", "b"], "answer": 1},
    ]
    data = {"test": records, "dev": pool}
    assert load_task(path, plugins=pm_all, data=data, shots=shots, meta=meta).renderer.fast_render() is not None
    outcomes = assert_same(path, pm_all, records, data=data, shots=shots, meta=meta)
    assert outcomes[-1][0] == "ok" and isinstance(outcomes[-1][-1], LazyDialoguePrompt)
    assert outcomes[-1][2][-1] == Turn("assistant", "The best answer is", " ")
    with_lines = load_task(path, plugins=pm_all, data={"test": records[-4:], "dev": pool}, shots=shots, meta=meta)
    general = load_task(path, plugins=pm_all, data={"test": records[-4:], "dev": pool}, shots=shots, meta=meta)
    general.renderer._fast = None
    from prompt_style.lines import PromptEncoder

    encoder = PromptEncoder()
    assert list(with_lines.json_lines()) == [general.provenance.line_bytes(p, encoder) for p in general.render()]


def test_lm_eval_description_read_from_a_column_of_its_name(pm):
    """lm-evaluation-harness reads a record's column named like the description text
    instead of the text (``resolve_field``): the fast path checks for that key per
    record (rather than calling the field) and leaves such a record to the general path."""
    pool = _lm_eval_records([{**r, "c": [*r["c"], "x", "y", "z"][:4]} for r in POOL] * 2)
    plain = {"question": "q", "choices": ["a", "b", "c", "d"], "answer": 3}
    probe = load_task(LM_EVAL_MMLU, plugins=pm, data={"test": [plain], "dev": pool}, shots=2)
    description = probe.renderer._description.spec.source
    assert probe.renderer._description.spec.fast_constant() == (description, description)
    records = [plain, {**plain, description: "Its own description. "}, {**plain, description: 7}, plain]
    # doc_to_target: answer, read in the loop (the column, or the text 'answer' without it)
    records += [{"question": "q", "choices": ["a"]}, {**plain, "answer": "B"}, {**plain, "answer": True}]
    records += [{**plain, "answer": None}, {**plain, "answer": 1.0}, {**plain, "answer": "answer"}]
    data = {"test": records, "dev": pool}
    fast = load_task(LM_EVAL_MMLU, plugins=pm, data=data, shots=2)
    assert fast.renderer.fast_render() is not None
    general = load_task(LM_EVAL_MMLU, plugins=pm, data=data, shots=2).renderer
    general._fast = None
    texts = [outcome(functools.partial(general.render, r, i)) for i, r in enumerate(records)]
    assert [outcome(functools.partial(fast.renderer.render, r, i)) for i, r in enumerate(records)] == texts
    good = [r for r, t in zip(records, texts) if t[0] == "ok"]
    assert len(good) >= 6 and any(t[0] == "error" for t in texts)
    loop = load_task(LM_EVAL_MMLU, plugins=pm, data={"test": good, "dev": pool}, shots=2)
    assert [p.text for p in loop.render()] == [t[5] for t in texts if t[0] == "ok"]  # the loop over many records
    assert texts[0][5].startswith(description) and texts[1][5].startswith("Its own description. ")
    assert type(fast.renderer.render(records[0], 0)) is LazyDialoguePrompt
    assert type(fast.renderer.render(records[1], 1)) is not LazyDialoguePrompt
    code = fast.renderer._fast_path.code  # the constant choices and the target column: no calls
    assert "c = C_CONST" in code and "target = record[T_KEY] if T_KEY in record else T_DEFAULT" in code


def test_first_party_presets_take_it(pm_all):
    for style in ("mcq::mmlu", "mcq::gpqa", "cloze", "cloze::qa", "cloze::options", "cloze::pure", "mcq::numbered"):
        task = {**task_of("mcq"), "template": style}
        assert load_task(task, plugins=pm_all).renderer.fast_render() is not None, style
        assert_same(task, pm_all, AWKWARD)


def test_a_subclass_that_formats_differently_is_not_taken(pm):
    class Shouting(ChoiceStyle):
        def _question(self, sample, labels):
            return super()._question(sample, labels).upper()

    from prompt_style import hookimpl

    class Plugin:
        @hookimpl
        def format_prompt(self):
            return {"shout": lambda *, options, settings: Shouting(settings=settings, **options)}

    manager = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("shout", Plugin())])
    task = {**task_of("mcq"), "template": "shout"}
    assert load_task(task, plugins=manager).renderer.fast_render() is None
    assert load_task(task, plugins=manager).renderer.render(AWKWARD[0], 0).text.endswith("ANSWER:")


def test_task_budgets_apply_on_the_fast_path(pm):
    task = task_of("mcq", "Subject: {{ s * 50 }}\n")
    records = [{"q": "q", "c": ["a", "b"], "a": 0, "s": "ab"}, {"q": "q", "c": ["a", "b"], "a": 0, "s": "x" * 400}]
    outcomes = assert_same(task, pm, records, limits=JinjaLimits(max_output=1000))
    assert outcomes[0][0] == "ok" and outcomes[1][0] == "error" and outcomes[1][1] == "LimitError"


@pytest.mark.parametrize("doc_to_text", ["{{q.strip()}}", "{{ q.strip().lower() }}", "Q: {{q.strip()}} {{c}}"])
@pytest.mark.parametrize("style", ["mcq", "passthrough"])
def test_budgets_on_record_values_are_the_sandboxs(pm, doc_to_text, style):
    """A long value through a str method (or printed) is charged to the render's budget
    by the sandbox: the fast path gives the general path's prompt or LimitError."""
    task = task_of("mcq", doc_to_text=doc_to_text)
    if style == "passthrough":
        task["template"] = "passthrough"
    records = [
        {"q": "  short  ", "c": ["a", "b"], "a": 0},
        {"q": "  " + "x" * 60 + "  ", "c": ["a", "b"], "a": 1},
        {"q": "y" * 200, "c": ["a", "b" * 100], "a": 1},
    ]
    for limits in (JinjaLimits(max_string=50), JinjaLimits(max_work=70), JinjaLimits(max_output=150)):
        outcomes = assert_same(task, pm, records, limits=limits)
        assert outcomes[0][0] == "ok"
        if limits.max_output == JinjaLimits.max_output or "Q:" in doc_to_text:  # an expression's text is not output
            assert any(o[0] == "error" and o[1] == "LimitError" for o in outcomes)
        with limits_scope(limits):  # the process's budgets instead of the task's
            assert assert_same(task, pm, records) == outcomes


def test_size_floor_is_below_every_budget_made():
    """The fast path skips reading the budgets in effect for strings no longer than
    SIZE_FLOOR: every JinjaLimits made lowers it to its least size budget."""
    from prompt_style.fields.jinja_compiler import budget_threshold
    from prompt_style.safe.limits import CLOCK_CAP, SIZE_FLOOR

    assert SIZE_FLOOR[0] <= min(CLOCK_CAP, budget_threshold())
    small = JinjaLimits(max_items=max(SIZE_FLOOR[0] - 1, 1))  # earlier tests may have made smaller
    assert SIZE_FLOOR[0] == small.max_items
    with limits_scope(small):
        assert budget_threshold() == small.max_items
    with pytest.raises(OptionError):
        JinjaLimits(max_output=-5).replace()  # a refused budget does not count
    assert SIZE_FLOOR[0] == small.max_items


@pytest.mark.parametrize(
    "keys",
    [
        {"doc_to_choice": "{{ c }}"},
        {"doc_to_target": "{{ a }}"},
        {"doc_to_text": "{{ q.strip() }}", "doc_to_choice": "{{ c }}", "doc_to_target": "{{ a }}"},
    ],
)
@pytest.mark.parametrize("style", ["mcq", "passthrough"])
def test_expression_values_that_are_not_text_get_the_sandboxs_check(pm, keys, style):
    """``{{ c }}`` giving a list (or ``{{ a }}`` a number) is checked by the sandbox as if
    printed: too large a value is a LimitError on the fast path too, not a prompt."""
    task = task_of("mcq", **keys)
    if style == "passthrough":
        task["template"] = "passthrough"
    records = [
        {"q": "q", "c": ["a", "b"], "a": 0},
        {"q": "q", "c": ["a" * 3000, "b"], "a": 1},
        {"q": "q", "c": ["a", "b"], "a": int("1" * 200)},
    ]
    outcomes = assert_same(task, pm, records, limits=JinjaLimits(max_output=2000))
    assert outcomes[0][0] == "ok"
    if "c" in keys.get("doc_to_choice", ""):
        assert outcomes[1][:2] == ("error", "LimitError")
    outcomes = assert_same(task, pm, records, limits=JinjaLimits(max_output=50))
    if "a" in keys.get("doc_to_target", ""):
        assert outcomes[2][:2] == ("error", "LimitError")


def test_budgets_survive_pickling_into_a_worker(pm):
    """A worker process gets the task's JinjaLimits by pickle: unpickled, they still
    lower SIZE_FLOOR, so that the fast path checks the task's budgets there too."""
    from prompt_style.safe import limits as limits_module

    task = task_of("mcq", doc_to_text="{{ q.strip() }}")
    limits = JinjaLimits(max_string=100)
    renderer = load_task(task, plugins=pm, limits=limits).renderer
    record = {"q": "  " + "x" * 500 + "  ", "c": ["a", "b"], "a": 0}
    blob = pickle.dumps(renderer)
    saved = limits_module.SIZE_FLOOR[0]
    limits_module.SIZE_FLOOR[0] = limits_module.CLOCK_CAP  # what a fresh process knows
    try:
        again = pickle.loads(blob)
        assert limits_module.SIZE_FLOOR[0] <= 100
        assert outcome(lambda: again.render(record, 0))[:2] == ("error", "LimitError")
        limits_module.SIZE_FLOOR[0] = limits_module.CLOCK_CAP
        assert copy.deepcopy(limits) == limits and limits_module.SIZE_FLOOR[0] <= 100
    finally:
        limits_module.SIZE_FLOOR[0] = min(saved, limits_module.SIZE_FLOOR[0])


def test_process_budgets_hold_in_a_fresh_worker(pm, monkeypatch):
    """A worker process with PROMPT_STYLE_LIMITS may reach its first record before
    anything read them: the fast path reads them first (they lower SIZE_FLOOR)."""
    from prompt_style.safe import limits as limits_module

    task = task_of("mcq", doc_to_text="{{ q.strip() }}", shots=0)  # no example reads them
    blob = pickle.dumps(load_task(task, plugins=pm).renderer)
    record = {"q": "  " + "x" * 500 + "  ", "c": ["a", "b"], "a": 0}
    saved = limits_module.SIZE_FLOOR[0]
    monkeypatch.setenv(limits_module.ENV_LIMITS, "max_string=100")
    limits_module._cache.clear()  # what a fresh process knows: nothing read yet
    limits_module.SIZE_FLOOR[0] = limits_module.CLOCK_CAP
    try:
        renderer = pickle.loads(blob)
        assert outcome(lambda: renderer.render(record, 0))[:2] == ("error", "LimitError")
    finally:
        monkeypatch.delenv(limits_module.ENV_LIMITS)
        limits_module.reload()
        limits_module.SIZE_FLOOR[0] = min(saved, limits_module.SIZE_FLOOR[0])


@pytest.mark.parametrize(
    "choice_format",
    [
        "{label}. {choice:>900000000}",
        "{label}. {choice!r:_<20000000}",
        "{label}. {choice:.999999999}",
        "{label}. {choice:{choice.__class__}}",
        "{label:{label.__class__.__mro__}}. {choice}",
        "{label}. {choice:>{number}}",
        "{label}. {choice!x}",
    ],
)
def test_style_format_strings_cannot_amplify_or_read_attributes(pm, choice_format):
    """A task file's choice_format is refused at load (naming the key) when a width
    would build gigabytes or a nested field would read the data's attributes."""
    task = task_of("mcq")
    task["template"]["choice_format"] = choice_format
    with pytest.raises(OptionError) as info:
        load_task(task, plugins=pm)
    assert info.value.key.endswith("choice_format")
    task["template"]["choice_format"] = "{label:>3}. {choice!r:.5}"
    assert load_task(task, plugins=pm).renderer.render({"q": "q", "c": ["abcdefgh"], "a": 0}, 0).text


@pytest.mark.parametrize("spec", ["{{ self }}", "{{ self.strip() }}", "{{ loop }}", "{{ caller.strip() }}"])
@pytest.mark.parametrize("style", ["mcq", "passthrough"])
def test_names_jinja_gives_a_meaning_are_not_record_keys(pm, spec, style):
    """``{{ self }}`` is the template reference in Jinja even when the record has a field
    ``self``: the fast path does not read the field (the sandbox refuses to print it)."""
    record = {name: f"value of {name}" for name in ("self", "loop", "caller")}
    task = task_of("mcq", doc_to_text=spec, shots=0)
    if style == "passthrough":
        task["template"] = "passthrough"
    outcomes = assert_same(task, pm, [{**record, "c": ["a", "b"], "a": 0}])
    if "self" in spec:
        assert outcomes[0][0] == "error"


@pytest.mark.parametrize("first", ["fast", "general"])
def test_shared_examples_are_built_within_the_task_budgets(pm, first):
    """The fast path builds the shared few-shot block once, before any record: within
    the task's budgets, so an example over them is the same LimitError whichever path
    renders first (not a prompt when the fast path comes first)."""
    task = task_of("mcq", doc_to_text="{{ q.strip() }}", shots=1)
    task["data"]["dev"] = [{"q": "  " + "y" * 500 + "  ", "c": ["a", "b"], "a": 1}]
    renderer = load_task(task, plugins=pm, limits=JinjaLimits(max_string=100)).renderer
    record = {"q": "  x  ", "c": ["a", "b"], "a": 0}
    calls = [renderer.render, renderer._render] if first == "fast" else [renderer._render, renderer.render]
    for call in calls * 2:
        result = outcome(functools.partial(call, record, 0))
        assert result[:2] == ("error", "LimitError"), result
        assert "few-shot example" in result[2]


@pytest.mark.parametrize("option,fmt", [("choice_format", "{label}. {choice:>5}"), ("answer_format", "{choice:d}")])
def test_a_format_spec_the_choices_do_not_take_is_the_users_error(pm, option, fmt):
    """``{choice:d}`` on a record whose choice is a mapping is a StyleError naming the
    option and the record (through both paths), not a bug of the style plugin."""
    task = task_of("mcq", shots=0)
    task["template"][option] = fmt
    records = [{"q": "q", "c": [1, 2], "a": 0}, {"q": "q", "c": [{"k": 1}, 2], "a": 0}]
    outcomes = assert_same(task, pm, records)
    assert outcomes[0][0] == "ok"
    assert outcomes[1][:2] == ("error", "StyleError") and outcomes[1][3] == f"template.{option}"
    assert "plugin" not in outcomes[1][2]


# -- the prompt objects ----------------------------------------------------------------


def test_lazy_prompt_behaves_as_a_rendered_prompt(pm):
    task = task_of("mcq", DESCRIPTIONS["literal"])
    fast, general = renderers(task, pm)
    a, b = fast.render(AWKWARD[1], 1), general.render(AWKWARD[1], 1)
    assert type(a) is LazyDialoguePrompt and isinstance(a, RenderedPrompt)
    assert a == b and b == a and not (a != b)
    assert repr(a) == repr(b)
    assert a.dialogue == b.dialogue and a.dialogue[-1].content == b.dialogue[-1].content
    assert a.messages is None and a.token_ids is None and a.mode is None and a.candidates is None
    assert a.extra is None and a.turn is None and a.token_report is None
    for copied in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert type(copied) is RenderedPrompt and copied == b
    assert dataclasses.replace(a, index=7) == dataclasses.replace(b, index=7)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert a.to_json() == b.to_json()
    with pytest.raises(AttributeError):
        a.no_such_field  # noqa: B018
    with pytest.raises(TypeError):
        hash(a)
    c = fast.render(AWKWARD[0], 0)
    assert c != a


def test_renderer_pickles_with_its_fast_path(pm):
    renderer = load_task(task_of("mcq", DESCRIPTIONS["jinja"]), plugins=pm).renderer
    before = [renderer.render(r, i) for i, r in enumerate(AWKWARD[:4])]
    copied = pickle.loads(pickle.dumps(renderer))
    assert [copied.render(r, i) for i, r in enumerate(AWKWARD[:4])] == before
    assert copied.fast_render() is not None


# -- the parts ---------------------------------------------------------------------------


def test_retrievers_declare_shared_selections():
    pool = [{"x": i} for i in range(5)]
    assert tuple(FirstN(k=3).shared_selection()) == (0, 1, 2)
    assert FirstN(k=3, pool=pool, same_split=True).shared_selection() is None
    assert Fixed((4, 1)).shared_selection() == (4, 1)
    assert tuple(Zero().shared_selection()) == ()
    assert FixK((2, 0)).shared_selection() == (2, 0)
    assert not hasattr(Random(k=2, size=5), "shared_selection")


def test_shared_examples_build_their_block_once(pm):
    renderer = load_task(task_of("mcq", shots=3), plugins=pm).renderer
    renderer._fast = None
    style = renderer.style
    calls = []
    original = style.shot_block

    def counting(shots):
        calls.append(shots)
        return original(shots)

    style.shot_block = counting
    for i, record in enumerate(AWKWARD[:5]):
        renderer.render(record, i)
    assert len(calls) == 1 and type(calls[0]) is tuple


def choice_styles():
    for name, options in STYLES.items():
        yield name, ChoiceStyle(settings=StyleSettings(), name=name, **options)


@pytest.mark.parametrize("name,style", list(choice_styles()))
def test_compiled_question_equals_the_style(name, style):
    for record in AWKWARD + POOL:
        choices = record.get("c")
        question = record.get("q")
        if not isinstance(choices, list) or not isinstance(question, str) or None in choices:
            continue
        fn = question_function(style, len(choices), "HEAD{", "}TAIL")
        sample = Sample(0, record, question, choices)
        try:
            expected = style._question(sample, style._labels_for(sample))
        except prompt_style.PromptStyleError:
            assert fn is None or fn(question, choices) is None
            continue
        except (ValueError, TypeError):
            with pytest.raises((ValueError, TypeError)):
                fn(question, choices)
            continue
        if len(choices) > MAX_CHOICES:
            assert fn is None  # many choices: the general path
            continue
        assert fn is not None
        assert fn(question, choices) == "HEAD{" + expected + "}TAIL"


def test_pure_extractors():
    from prompt_style.fields.extractors import compile_field
    from prompt_style.formats.lm_eval.fields import LmEvalField

    assert compile_field("q", "doc_to_text").pure
    assert compile_field("{{q.strip()}}", "doc_to_text").pure
    assert not compile_field(lambda r: r["q"], "doc_to_text").pure
    assert LmEvalField("question", "doc_to_text", "text").pure
    # task code is pure when its code shows it computes from the record alone
    assert LmEvalField(len, "doc_to_text", "text").pure
    assert LmEvalField(lambda doc: doc["q"].strip(), "doc_to_text", "text").pure
    seen: list = []
    assert not LmEvalField(lambda doc: seen.append(doc) or "x", "doc_to_text", "text").pure
    assert not LmEvalField(random.Random(0).choice, "doc_to_text", "text").pure


# -- JSON Lines, read in blocks with json's scanner ---------------------------------------


def reference_json_lines(path, split):
    """The reader before the scanner: json.loads, line by line (same errors; a leading BOM dropped, as datasets does)."""
    count = 0
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"split '{split}': line is not valid JSON ({exc.msg} at column {exc.colno})",
                    file=str(path),
                    line=number,
                ) from None
            if not isinstance(record, dict):
                raise DataError(
                    f"split '{split}': record {count} is a JSON {type(record).__name__}, not an object",
                    file=str(path),
                    line=number,
                )
            count += 1
            yield record
    if count == 0:
        raise DataError(f"split '{split}': the data file has no records", file=str(path))


def read_all(reader, path):
    out = []
    try:
        for record in reader(path, "test"):
            out.append(record)
    except DataError as exc:
        out.append(("error", str(exc), exc.line))
    return out


JSONL_CASES = {
    "plain": '{"a": 1}\n{"b": "x"}\n',
    "no final newline": '{"a": 1}\n{"b": 2}',
    "blank lines": '\n{"a": 1}\n   \n\t\n{"b": 2}\n\n',
    "crlf": '{"a": 1}\r\n{"b": 2}\r\n',
    "leading and trailing spaces": '  {"a": 1}  \n\t{"b": 2}\t\n',
    "bom": '\ufeff{"a": 1}\n',
    "bom later": '{"a": 1}\n\ufeff{"b": 2}\n',
    "two values on a line": '{"a": 1} {"b": 2}\n',
    "two values with a comma": '{"a": 1}, {"b": 2}\n',
    "pretty printed": '{\n  "a": 1\n}\n',
    "a list": '{"a": 1}\n[1, 2]\n',
    "a number": "3\n",
    "invalid": '{"a": 1}\n{"a": }\n',
    "unicode and escapes": '{"a": "é\\u00e9\\ud83d\\ude00 \\n {x}"}\n{"b": "你好"}\n',
    "only blank": "\n\n  \n",
    "empty": "",
    "nan and big ints": '{"a": NaN, "b": Infinity, "c": 12345678901234567890}\n',
    "duplicate keys": '{"a": 1, "a": 2}\n',
    "lone cr": '{"a": 1}\r{"b": 2}\r',
    "deep": "[" * 50 + "]" * 50 + "\n",
    "object over two lines after good ones": '{"a": 1}\n{"b": 2}\n{"c":\n 3}\n{"d": 4}\n',
    "only bom": "\ufeff",
    "bom and blank": "\ufeff\n",
    "string with line separators": '{"a": "x\u2028y\u0085z"}\n{"b": "\u2029"}\n',
    "raw line separator in a string": '{"a": "x\u2028y"}\n'.replace("\\u2028", "\u2028"),
    "nested objects": '{"a": {"b": [1, {"c": null}]}, "d": true}\n{"e": false}\n',
}


@pytest.mark.parametrize("name", list(JSONL_CASES))
def test_json_lines_reader_equals_line_by_line_json_loads(tmp_path, name):
    path = tmp_path / "data.jsonl"
    path.write_bytes(JSONL_CASES[name].encode("utf-8"))
    assert read_all(_json_lines, path) == read_all(reference_json_lines, path)


def test_json_lines_reader_across_block_boundaries(tmp_path, monkeypatch):
    import prompt_style.data as data

    lines = [json.dumps({"i": i, "t": "x" * (i % 37), "u": "é" * (i % 5)}, ensure_ascii=False) for i in range(400)]
    lines[123] = "  " + lines[123]
    lines[200] = ""
    lines[301] = lines[301] + " "
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = read_all(reference_json_lines, path)
    for block in (7, 64, 100, 1000, 1 << 16):
        monkeypatch.setattr(data, "_BLOCK", block)
        assert read_all(_json_lines, path) == expected, block
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:250] + ['{"not": json}'] + lines[250:]) + "\n", encoding="utf-8")
    for block in (7, 100, 1 << 16):
        monkeypatch.setattr(data, "_BLOCK", block)
        assert read_all(_json_lines, broken) == read_all(reference_json_lines, broken)
        assert read_all(_json_lines, broken)[-1][2] == 251
    # clean lines only (every block read whole), and one object over two lines at every place
    clean = [json.dumps({"i": i, "t": "x" * (i % 37), "u": "é" * (i % 5)}, ensure_ascii=False) for i in range(300)]
    path.write_text("\n".join(clean) + "\n", encoding="utf-8")
    expected = read_all(reference_json_lines, path)
    for block in (7, 64, 100, 1000, 1 << 16):
        monkeypatch.setattr(data, "_BLOCK", block)
        assert read_all(_json_lines, path) == expected, block
    for where in (0, 1, 17, 150, 299):
        split = [*clean[:where], clean[where].replace(", ", ",\n", 1), *clean[where + 1 :]]
        path.write_text("\n".join(split) + "\n", encoding="utf-8")
        expected = read_all(reference_json_lines, path)
        for block in (7, 50, 64, 100, 1000, 1 << 16):
            monkeypatch.setattr(data, "_BLOCK", block)
            assert read_all(_json_lines, path) == expected, (where, block)


# -- Task.render's loops (records in memory, JSON Lines) ----------------------------------


@pytest.mark.parametrize("style", ["mcq", "conversion_spec", "answer_with_choice", "cloze_inline", "numbers"])
@pytest.mark.parametrize("description", list(DESCRIPTIONS))
def test_task_render_in_memory_and_from_jsonl_equal_general(pm, make_task, style, description):
    # every record that renders (the others raise, and Task.render stops at the first error)
    task = task_of(style, DESCRIPTIONS[description])
    records = AWKWARD if style != "cloze_inline" else [{**r, "q": f"{r['q']} ___"} for r in AWKWARD if "q" in r]
    good = [r for r, o in zip(records, assert_same(task, pm, records)) if o[0] == "ok"]
    assert len(good) > 5
    in_memory = {**task, "data": {**task["data"], "test": good}}
    general = load_task(in_memory, plugins=pm)
    general.renderer._fast = None
    expected = list(general.render())
    assert list(load_task(in_memory, plugins=pm).render()) == expected
    keys = {k: v for k, v in task.items() if k != "data"}
    jsonable = [r for r in good if json.loads(json.dumps(r)) == r]
    path = make_task({"test": jsonable, "dev": task["data"]["dev"]}, **keys)
    from_file = load_task(path, plugins=pm)
    plain = load_task(path, plugins=pm)
    plain.renderer._fast = None
    assert list(from_file.render()) == list(plain.render())
    assert [r.index for r in from_file.render(limit=3)] == [0, 1, 2]


def test_task_render_stops_at_the_same_error(pm):
    task = task_of("mcq", DESCRIPTIONS["literal"])
    records = [AWKWARD[0], AWKWARD[3], AWKWARD[8], AWKWARD[1]]  # record 2 has a null question
    task["data"] = {**task["data"], "test": records}

    def run(fast: bool) -> tuple[list[Any], Any]:
        loaded = load_task(task, plugins=pm)
        if not fast:
            loaded.renderer._fast = None
        got = []
        try:
            for r in loaded.render():
                got.append(r)
        except prompt_style.PromptStyleError as exc:
            return got, (type(exc).__name__, str(exc))
        return got, None

    assert run(True) == run(False)
    assert run(True)[1] is not None and len(run(True)[0]) == 2


def test_generated_code_holds_no_text(pm):
    marker = "Q'\"{}\\n}} ''' \u2028"
    task = task_of("braces_everywhere", marker, shots=2)
    task["template"] = {**task["template"], "prefix": marker, "suffix": marker, "choice_delimiter": marker}
    renderer = load_task(task, plugins=pm).renderer
    assert renderer.fast_render() is not None
    code = renderer._fast_path.code
    assert marker not in code and "Answer" not in code and "Shot" not in code
    assert_same(task, pm, AWKWARD)


def test_records_with_another_number_of_choices_than_the_examples(pm):
    # the examples have 4, 2 and 3 choices; records with 3, 5 and 26 use the per-count functions
    task = task_of("mcq", DESCRIPTIONS["none"], shots=3)
    records = [AWKWARD[2], AWKWARD[3], AWKWARD[21], AWKWARD[0], AWKWARD[2]]
    assert all(o[0] == "ok" for o in assert_same(task, pm, records))
    task["data"] = {**task["data"], "test": records}
    loaded = load_task(task, plugins=pm)
    assert all(type(r) is LazyDialoguePrompt for r in loaded.render())


@pytest.mark.parametrize("name,style", list(choice_styles()))
def test_question_text_equals_the_reference(name, style):
    def reference(sample: Sample) -> tuple[Any, ...]:
        try:
            return ("ok", style._question(sample, style._labels_for(sample) if style.show_choices else ()))
        except Exception as exc:
            return ("error", type(exc).__name__, str(exc))

    def compiled(sample: Sample) -> tuple[Any, ...]:
        try:
            return ("ok", style.question_text(sample))
        except Exception as exc:
            return ("error", type(exc).__name__, str(exc))

    for record in AWKWARD + POOL + [{**r, "q": f"{r.get('q')} ___"} for r in AWKWARD]:
        sample = Sample(0, record, record.get("q"), record.get("c"))
        if isinstance(sample.choices, str):
            continue
        assert compiled(sample) == reference(sample), record


def test_errors_from_task_render_are_not_chained_to_the_fast_path(pm):
    task = task_of("mcq", DESCRIPTIONS["literal"])
    task["data"] = {**task["data"], "test": [AWKWARD[0], AWKWARD[8]]}
    with pytest.raises(prompt_style.PromptStyleError) as info:
        list(load_task(task, plugins=pm).render())
    assert info.value.__context__ is None or info.value.__suppress_context__


def test_text_targets_resolve_on_the_fast_path(pm):
    """A target naming a choice's text is resolved by the task's gold resolver there too."""
    task = task_of("mcq", DESCRIPTIONS["literal"])
    records = [
        {"q": "text", "c": ["a", "b"], "a": "b"},
        {"q": "digits", "c": ["3", "4", "5"], "a": "4"},
        {"q": "none", "c": ["a", "b"], "a": "z"},
        {"q": "twice", "c": ["a", "a"], "a": "a"},
    ]
    outcomes = assert_same(task, pm, records)
    assert [o[0] for o in outcomes] == ["ok", "ok", "error", "error"]
    assert [type(o[-1]) for o in outcomes[:2]] == [LazyDialoguePrompt, LazyDialoguePrompt]
    assert [o[4] for o in outcomes[:2]] == [1, 1]
    templated = {**task, "doc_to_target": "{{a}}"}  # a template's digit string: read as lm-eval reads it
    assert_same(templated, pm, records)


@pytest.mark.parametrize("max_output", [None, 30])
def test_a_one_key_choice_field_is_read_by_its_compiled_expression(max_output):
    """``{{endings}}`` as the choices: the compiled expression itself (a list measured
    inline), giving the extractor's value, or SLOW where the sandbox decides."""
    from prompt_style.fastpath import _getter
    from prompt_style.fields.extractors import Expression
    from prompt_style.fields.jinja_compiler import SLOW

    field = Expression("{{endings}}", "doc_to_choice", "endings")
    getter = _getter(field, choice=True)
    assert getter is field.fast_function()
    text = _getter(field)  # for a text: a str value read directly, anything else compiled
    values = [["a", "b"], [], ["x" * 40] * 3, ["a", 1], [["n"]], "plain", 7, ("t", "u")]
    with limits_scope(JinjaLimits(**({} if max_output is None else {"max_output": max_output}))):
        for value in values:
            record = {"endings": value}
            try:
                want = ("ok", field(record))
            except Exception as exc:
                want = ("error", type(exc))
            for get in (getter, text):
                got = get(record)
                assert got is SLOW or (want[0] == "ok" and got == want[1] and type(got) is type(want[1])), value
        if max_output is None:
            assert getter({"endings": ["a", "b"]}) == ["a", "b"]
        else:
            assert getter({"endings": ["x" * 40] * 3}) is SLOW


def _write_task(tmp_path, text_spec, records, **more):
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    lines = ["data: {test: test.jsonl}", f"doc_to_text: {json.dumps(text_spec)}", "doc_to_target: a"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in more.items()]
    path = tmp_path / "task.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_question_the_sandbox_gives_as_a_number_is_evaluated_once(tmp_path, monkeypatch):
    # An expression the compiler leaves to the sandbox (batch) giving a number: the fast path
    # hands the record to the general path, which takes the value rather than evaluating again.
    from prompt_style.fields.extractors import Expression

    records = [{"q": "abc", "a": "x"}, {"q": "de", "a": "y"}, {"q": "fghi", "a": "z"}]
    path = _write_task(tmp_path, "{{ q|batch(1)|list|length }}", records)
    calls: list[str] = []
    evaluate = Expression._evaluate

    def counted(self, record):
        calls.append(record.get("q"))
        return evaluate(self, record)

    monkeypatch.setattr(Expression, "_evaluate", counted)
    task = load_task(path)
    assert [r.text for r in task.render()] == ["3", "2", "4"]
    assert calls == ["abc", "de", "fghi"]
    # the same as the general path alone
    general = load_task(path)
    general.renderer._fast = None
    assert [r.text for r in general.render()] == ["3", "2", "4"]


def test_a_kept_question_value_is_never_taken_for_another_or_a_changed_record(tmp_path):
    records = [{"q": "abc", "a": "x"}]
    renderer = load_task(_write_task(tmp_path, "{{ q|batch(1)|list|length }}", records)).renderer
    record = {"q": "abc", "a": "x"}
    assert renderer.render(record, 0).text == "3"
    record["q"] = "abcdef"  # the same object, changed: evaluated afresh
    assert renderer.render(record, 0).text == "6"
    assert renderer.render({"q": "ab", "a": "x"}, 1).text == "2"
    # a value kept for one record and not taken is dropped by the next call, whatever its record
    text_of = renderer._text
    text_of.remembering(record)
    assert text_of({"q": "z", "a": "x"}) == 1 and text_of._pending is None
    # a text value is never kept: the fast path takes it
    assert load_task(_write_task(tmp_path, "{{ q|batch(1)|join }}", records)).renderer._text._pending is None


@pytest.mark.parametrize("system", [True, False])
def test_messages_keeps_the_fast_path_promise(system):
    """API messages promise (last_turn_affixes: ``(None, None)``) that their messages
    differ only in the last one's content: the conformance kit's check holds."""
    from prompt_style.meta.builtin import Messages
    from prompt_style.testing import MetaTemplateConformance

    class Kit(MetaTemplateConformance):
        def built(self, manager=None):
            return Messages(system=system)

    Kit().test_fast_path_promises_hold()
    assert Messages().last_turn_affixes((Turn("user", ({"type": "image_url"},)),)) is None
