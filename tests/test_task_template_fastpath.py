"""A task-template file's fast path (``fastpath._task_template``): each record rendered
once by the template's compiled functions, the same prompts, lines and errors as the
general path, whatever the record holds."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml

from prompt_style import PromptStyleError, RenderedPrompt, load_task
from prompt_style.fast_prompts import LazyDialoguePrompt, LazyMessagesPrompt
from prompt_style.formats.task_template.template import PIPE_PROTECTOR
from prompt_style.lines import PromptEncoder
from prompt_style.safe.json_lines import dumps_line
from prompt_style.safe.limits import ITER_FLOOR

METADATA = {
    "task": "qa.multiple_choice",
    "domains": ["misc"],
    "source_type": "single_source",
    "input_context": "paragraph",
    "output_context": "label",
    "contributor": "tests",
}

TEMPLATES: dict[str, dict[str, Any]] = {
    "choices": {
        "jinja": "Answer.\n\nQuestion: {{ question }}\nOptions:\n{%- for c in answer_choices %}\n- {{ c }}\n"
        "{%- endfor %}\n|||\n{{ answer }}",
        "answer_choices": "{{ [answer, d1, d2] | sort | join(' ||| ') }}",
    },
    "plain": {"jinja": "Q: {{ question }} ||| {{ answer }}"},
    "joined": {
        "jinja": "{{ support }}\n\n{{ question }}: {{ answer_choices | join(', ') }} ||| {{ answer }}",
        "answer_choices": "{{ answer }} ||| {{ d1 }}",
    },
}


class Text(str):
    """A ``str`` subclass (as numpy's ``str_``): protected and printed as the general path does."""

    def __str__(self) -> str:
        return "<" + super().__str__() + ">"


def record(question: Any, answer: Any = "yes", **more: Any) -> dict[str, Any]:
    return {"question": question, "answer": answer, "d1": "Δelta", "d2": "beta", "support": "Some text.", **more}


RECORDS: list[Any] = [
    record("Plain question?"),
    record("Ünïcødé — 你好 \u2028 tab\t", "ans\u2029wer"),
    record("a ||| inside is protected", "one ||| two"),
    record("a field no template reads holds |||", unread="x ||| y", also=Text("|||")),
    record(f"the protector {PIPE_PROTECTOR} itself"),
    record("  padded  \n", "  spaced answer \n"),
    record("{braces} {{x}} %s"),
    record(7, 8),  # numbers, printed
    record("nested pipes", "x", d1=["a ||| b"]),  # not protected: the template splits in three
    record("missing answer", answer=None) | {"answer": None},
    {k: v for k, v in record("no answer field").items() if k != "answer"},
    record("reserved", answer_choices=["x"]),
    record("", ""),
    record("same choices", "beta"),
    record("long " * 300),
    record(Text("a str subclass ||| with pipes"), Text("its answer")),
    record(Text("a str subclass")),
    ["not", "a", "mapping"],
]


def write(folder: Path, template: str, records: list[Any] | None = None, **keys: Any) -> Path:
    """A task-template file with one template (and its test split, when given)."""
    body: dict[str, Any] = {"name": "tt_task", "metadata": METADATA, **keys}
    if records is not None:
        body["data_dir"] = "tt_task"
        data = folder / "data" / "processed" / "tt_task"
        data.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(r) + "\n" for r in records)
        (data / "test.jsonl").write_text(lines, encoding="utf-8")
    body["templates"] = {0: {"name": template, "evaluate": True, **TEMPLATES[template]}}
    path = folder / "tt_task.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("meta", ["plain", "chatml", "messages"])
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_the_fast_path_equals_the_general_path(tmp_path, pm_all, both_paths, template, meta):
    path = write(tmp_path, template)
    outcomes = both_paths(path, RECORDS, data={"test": [record("unused")]}, meta=meta, plugins=pm_all)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(o[0] == "error" for o in outcomes) and made
    kind = LazyMessagesPrompt if meta == "messages" else LazyDialoguePrompt
    if template == "plain" or ITER_FLOOR[0] > 100:
        # (a small loop budget made earlier in this process sends every loop to the sandbox)
        assert any(type(p) is kind for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
        copied = pickle.loads(pickle.dumps(prompt))
        assert copied == prompt and type(copied) is RenderedPrompt and copied.extra == prompt.extra


@pytest.mark.parametrize("meta", [None, "chatml", "messages"])
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_lines_of_a_formatted_split_are_the_general_path_s(tmp_path, pm_all, template, meta):
    """The lines of a split a formatter makes (streamed, a block of records at a time)
    are those the general path makes, and a bad record stops them where it stands."""
    # (answer choices holding ||| split the template, a number among texts does not sort:
    # errors in both paths, not here)
    good = [r for r in RECORDS[:7] if type(r["answer"]) is str and "|||" not in r["answer"]] * 60
    flat = [{"q": r["question"], "nested": {"a": r["answer"], "d": [r["d1"], r["d2"]]}, "support": "S"} for r in good]
    formatter = {
        "name": "map_fields",
        "args": {"fields": {"question": "q", "answer": "nested.a", "d1": "nested.d.0", "d2": "nested.d.1"}},
    }
    path = write(tmp_path, template, flat, formatter=formatter)
    options = {"meta": meta} if meta else {}
    task = load_task(path, plugins=pm_all, **options)
    got = list(task.json_lines())
    general = load_task(path, plugins=pm_all, **options)
    general.renderer._fast = None
    encoder = PromptEncoder()
    assert got == [general.provenance.line_bytes(p, encoder) for p in general.render()]
    assert len(got) == len(flat) and task.renderer.fast_render() is not None
    # a record the formatter cannot take, after 300 good ones: their lines, then the error
    bad = write(tmp_path, template, [*flat[:300], {"q": "no nested"}], formatter=formatter)
    lines = load_task(bad, plugins=pm_all, **options).json_lines()
    made = []
    with pytest.raises(PromptStyleError, match="record 300") as caught:
        for line in lines:
            made.append(line)
    assert len(made) == 300 and "nested" in str(caught.value)


def test_promptsource_random_draws_stay_on_the_general_path(tmp_path, pm_all):
    path = write(tmp_path, "plain")
    body = yaml.safe_load(path.read_text(encoding="utf-8"))
    body["templates"][0]["jinja"] = "{{ ['A', 'B'] | choice }} {{ question }} ||| {{ answer }}"
    body["templates"][0]["metadata"] = {"render_as": "promptsource"}
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    task = load_task(path, data={"test": RECORDS[:3]}, plugins=pm_all)
    assert task.renderer.fast_render() is None
    texts = [p.text for p in task.render()]
    assert texts == [p.text for p in load_task(path, data={"test": RECORDS[:3]}, plugins=pm_all).render()]
    assert all(t.split(" ", 1)[0] in ("A", "B") for t in texts)


PROMPTSOURCE: dict[str, dict[str, Any]] = {
    # super_glue/rte's "GPT-3 style", as `convert promptsource` writes it
    "rte": {
        "jinja": "{{question}}\nQuestion: {{answer}} True or False? ||| {% if label != -1 %}"
        "{{ answer_choices[label] }}{% endif %}",
        "answer_choices": "True ||| False",
    },
    "choices_joined": {
        "jinja": "{{ question | lower }} {{ answer_choices | join(' or ') }}? ||| {{ answer_choices[label] }}",
        "answer_choices": "{{ d1 }} ||| {{ d2 }}",
    },
}


@pytest.mark.parametrize("meta", ["plain", "chatml"])
@pytest.mark.parametrize("template", sorted(PROMPTSOURCE))
def test_promptsource_templates_take_the_fast_path(tmp_path, pm_all, both_paths, template, meta):
    """promptsource's semantics (every }} truncating to 2048 characters, lenient undefined
    names): a text kept whole by the truncation on the compiled path, a longer one (cut),
    a missing field (printed as nothing) or a label of -1 (the output left out) as the
    general path renders them."""
    TEMPLATES[f"ps_{template}"] = PROMPTSOURCE[template]
    try:
        path = write(tmp_path, f"ps_{template}")
    finally:
        del TEMPLATES[f"ps_{template}"]
    body = yaml.safe_load(path.read_text(encoding="utf-8"))
    body["templates"][0]["metadata"] = {"render_as": "promptsource"}
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    records = [{**r, "label": i % 3 - 1} if isinstance(r, dict) else r for i, r in enumerate(RECORDS)]
    records += [record("long " * 500, label=1), record("x" * 2053, label=0), record("x" * 2054, label=0)]
    records += [{k: v for k, v in record("no d2", label=1).items() if k != "d2"}]
    outcomes = both_paths(path, records, data={"test": [record("unused", label=0)]}, meta=meta, plugins=pm_all)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(o[0] == "error" for o in outcomes)
    if template == "rte":  # (a join: small budgets made earlier in this process send it to the sandbox)
        assert sum(isinstance(p, LazyDialoguePrompt) for p in made) >= 5
    assert any("x" * 2040 in p.text and p.text.count("x") < 2054 for p in made)  # (cut by the sandbox)
    # each prompt's answer choices are a list of its own (the fast path shares equal ones)
    first, second = made[0], made[1]
    if first.extra["answer_choices"] == second.extra["answer_choices"]:
        first.extra["answer_choices"].append("changed")
        assert second.extra["answer_choices"][-1] != "changed"


@pytest.mark.parametrize("meta", ["plain", "chatml", "messages", "llama-3"])
@pytest.mark.parametrize("template", sorted(TEMPLATES))
@pytest.mark.parametrize("shots", [0, 1, 3])
def test_few_shot_examples_every_record_shares(tmp_path, pm_all, both_paths, template, meta, shots):
    """``--shots N`` with examples every record shares (first_n): their inputs and outputs
    rendered once, joined before each record's input as the general path joins them; a
    chat template that trims the content (Llama 3's) takes it too (the input is stripped)."""
    path = write(tmp_path, template)
    pool = [record(f"example {i} {{x}} ü", f"answer {i}") for i in range(4)]
    data = {"test": [record("unused")], "train": pool}
    outcomes = both_paths(path, RECORDS, data=data, meta=meta, plugins=pm_all, shots=shots)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert any(o[0] == "error" for o in outcomes) and made
    assert all(p.fewshot_indices == tuple(range(shots)) for p in made)
    if template == "plain":
        assert any(isinstance(p, LazyDialoguePrompt) for p in made)
        assert made[0].dialogue[-2].content == "answer 0" if shots == 1 else True
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
