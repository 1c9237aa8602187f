"""lm-evaluation-harness's multiple-input multiple-choice tasks (winogrande, xwinograd,
wsc273): ``doc_to_text`` gives the index of the choice that is the context.

One request per choice: ``contexts`` (the first is ``text``), the same continuation
for each, the gold the ``doc_to_text`` index. The byte-for-byte comparison with the
real lm-eval is tests/test_golden_lm_eval_tasks.py (winogrande_*, xwinograd_*, wsc273_*).
"""

from __future__ import annotations

import json
import pickle
import textwrap
from pathlib import Path
from typing import Any

import pytest

import prompt_style
from prompt_style import load_task
from prompt_style.cli import main

HERE = Path(__file__).resolve().parent
TASKS = HERE / "lm_eval_tasks"
INPUTS = HERE / "golden" / "lm_eval_tasks" / "inputs"

TASK = """\
task: blanks
dataset_path: some/dataset
output_type: multiple_choice
test_split: test
training_split: train
fewshot_config:
  sampler: first_n
doc_to_text: "{{ {'1': 0, '2': 1}[answer] }}"
doc_to_choice: "{% set i = sentence.index('_') %}{{ [sentence[:i] + option1, sentence[:i] + option2] }}"
doc_to_target: "{% set i = sentence.index('_') + 1 %}{{ sentence[i:].strip() }}"
"""


def rec(sentence: str, o1: str, o2: str, answer: str) -> dict[str, Any]:
    return {"sentence": sentence, "option1": o1, "option2": o2, "answer": answer}


TEST = [
    rec("Ann beat Bo so _ was happy.", "Ann", "Bo", "1"),
    rec("The cup fell off the shelf because the _ was tilted.", "cup", "shelf", "2"),
]
TRAIN = [
    rec("Cy called Di because _ was bored.", "Cy", "Di", "1"),
    rec("Ed thanked Flo since _ helped.", "Ed", "Flo", "2"),
]


def task(tmp_path: Path, pm, text: str = TASK, **kw: Any) -> prompt_style.Task:
    path = tmp_path / "blanks.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    data = kw.pop("data", {"test": TEST, "train": TRAIN})
    return load_task(path, plugins=pm, data=data, **kw)


def test_one_context_per_choice_the_same_continuation_and_the_text_index_as_gold(tmp_path, pm):
    first, second = task(tmp_path, pm).render()
    assert first.contexts == ("Ann beat Bo so Ann", "Ann beat Bo so Bo")
    assert first.text == first.contexts[0]
    assert first.continuations == (" was happy.", " was happy.")
    assert first.target == 0
    assert second.contexts == (
        "The cup fell off the shelf because the cup",
        "The cup fell off the shelf because the shelf",
    )
    assert second.target == 1


def test_a_few_shot_example_shows_its_own_correct_choice_and_its_target(tmp_path, pm):
    first = next(iter(task(tmp_path, pm, shots=2).render()))
    shots = "Cy called Di because Cy was bored.\n\nEd thanked Flo since Flo helped.\n\n"
    assert first.contexts == (shots + "Ann beat Bo so Ann", shots + "Ann beat Bo so Bo")
    assert first.continuations == (" was happy.", " was happy.")


def test_json_has_contexts_only_for_multiple_input(tmp_path, pm):
    made = next(iter(task(tmp_path, pm).render()))
    out = made.to_json()
    assert out["contexts"] == list(made.contexts) and out["text"] == made.contexts[0]
    ordinary = load_task(
        TASKS / "piqa" / "piqa.yaml",
        plugins=pm,
        data={"validation": str(INPUTS / "piqa" / "validation.jsonl"), "train": str(INPUTS / "piqa" / "train.jsonl")},
    )
    plain = next(iter(ordinary.render()))
    assert plain.contexts is None and "contexts" not in plain.to_json()


def test_gen_prefix_follows_each_context_without_a_delimiter(tmp_path, pm):
    first = next(iter(task(tmp_path, pm, TASK + 'gen_prefix: "So:"\n').render()))
    # lm-eval's multiple_input_context: build_qa_turn(q=context, gen_prefix, tgt_delim="")
    assert first.contexts == ("Ann beat Bo so AnnSo:", "Ann beat Bo so BoSo:")
    assert first.continuations == (" was happy.", " was happy.")


def test_chat_gives_messages_of_the_first_request_and_each_context(tmp_path, pm_all):
    made = next(iter(task(tmp_path, pm_all, meta="messages", system_instruction="Be brief.").render()))
    assert made.text is None
    assert made.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Ann beat Bo so Ann"},
    ]
    assert made.contexts[1] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Ann beat Bo so Bo"},
    ]
    assert made.continuations == ("was happy.", "was happy.")  # lm-eval's chat rule: no delimiter
    chatml = next(iter(task(tmp_path, pm_all, meta="chatml").render()))
    assert chatml.text == chatml.contexts[0] and all(c.endswith("<|im_start|>assistant\n") for c in chatml.contexts)


def test_a_column_index_and_the_fast_path(tmp_path, pm):
    """wsc273's doc_to_text is a column holding the index: the fast path leaves such a
    record to the general path, which builds the contexts."""
    text = TASK.replace(
        "doc_to_text: \"{{ {'1': 0, '2': 1}[answer] }}\"",
        "doc_to_text: label",
    ).replace("fewshot_config:\n  sampler: first_n\n", "")
    records = [{**r, "label": int(r["answer"]) - 1} for r in TEST]
    loaded = task(tmp_path, pm, text, data={"test": records})
    renderer = loaded.renderer
    fast = renderer.fast_render()
    assert fast is None or fast(records[0], 0) is None
    assert [r.contexts for r in loaded.render()] == [r.contexts for r in task(tmp_path, pm).render()]


def test_a_multiple_input_task_pickles(tmp_path, pm):
    loaded = task(tmp_path, pm, shots=1)
    renderer = pickle.loads(pickle.dumps(loaded.renderer))
    assert renderer.render(TEST[0], 0).contexts == loaded.renderer.render(TEST[0], 0).contexts


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (("answer", "3"), "doc_to_text", "has 2 choices"),
        (("sentence", "Ann beat Bo so _ was [1, 2]"), "doc_to_target", "one continuation"),
    ],
)
def test_bad_records_are_typed_errors_naming_the_record(tmp_path, pm, change, key, words):
    field, value = change
    text = TASK
    if key == "doc_to_text":  # digits, read as the index (lm-eval's rule for doc_to_text with doc_to_choice)
        text = TASK.replace("\"{{ {'1': 0, '2': 1}[answer] }}\"", '"{{ (answer|int) - 1 }}"')
    if key == "doc_to_target":
        text = TASK.replace(
            "doc_to_target: \"{% set i = sentence.index('_') + 1 %}{{ sentence[i:].strip() }}\"",
            'doc_to_target: "{{ [1, 2] }}"',
        )
    records = [TEST[0], {**TEST[1], field: value}]
    with pytest.raises(prompt_style.FieldError) as caught:
        list(task(tmp_path, pm, text, data={"test": records}).render())
    err = caught.value
    assert err.key == key and words in str(err) and err.index == (1 if key == "doc_to_text" else 0)


def test_a_number_without_choices_is_a_typed_error(tmp_path, pm):
    text = "task: t\ndataset_path: x\noutput_type: generate_until\ntest_split: test\ndoc_to_text: n\ndoc_to_target: a\n"
    with pytest.raises(prompt_style.FieldError) as caught:
        list(task(tmp_path, pm, text, data={"test": [{"n": 1, "a": "x"}]}).render())
    assert caught.value.key == "doc_to_text" and "no doc_to_choice" in str(caught.value)


def test_only_multiple_choice_scores_several_contexts(tmp_path, pm):
    text = TASK.replace("output_type: multiple_choice", "output_type: generate_until")
    with pytest.raises(prompt_style.StyleError) as caught:
        list(task(tmp_path, pm, text).render())
    assert "output_type multiple_choice" in str(caught.value) and "record 0" in str(caught.value)


def test_the_shipped_winogrande_from_the_command_line(capsys):
    data = INPUTS / "winogrande"
    argv = ["render", str(TASKS / "winogrande" / "default.yaml"), "--trust-code", "--shots", "1", "--format", "jsonl"]
    argv += ["--data", f"validation={data / 'validation.jsonl'}", "--data", f"train={data / 'train.jsonl'}"]
    assert main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 8
    for line in lines:
        assert len(line["contexts"]) == len(line["continuations"]) == 2
        assert line["text"] == line["contexts"][0] and line["target"] in (0, 1)


def test_the_text_format_shows_every_context(capsys):
    data = INPUTS / "winogrande"
    argv = ["render", str(TASKS / "winogrande" / "default.yaml"), "--trust-code", "--limit", "1"]
    assert main(argv + ["--data", f"validation={data / 'validation.jsonl'}"]) == 0
    out = capsys.readouterr().out
    assert out == (
        '=== record 0 · target: 0 · continuations: [" always got the harder cases.", " always got the harder cases."]\n'
        "--- context 0\nSarah was a much better surgeon than Maria so Sarah\n"
        "--- context 1\nSarah was a much better surgeon than Maria so Maria\n"
    )


def test_a_token_level_meta_template_is_a_typed_error(tmp_path, pm):
    """Token-level meta templates split one context from its continuations; several
    contexts are not split (yet): a clear error, not a wrong split."""
    loaded = task(tmp_path, pm)
    renderer = loaded.renderer
    renderer._meta_scored = lambda dialogue, continuations: None  # what a tokenizer meta template sets
    renderer._fast = None
    with pytest.raises(prompt_style.RenderError) as caught:
        renderer.render(TEST[0], 0)
    assert "token level" in str(caught.value) and "record 0" in str(caught.value)


class Scorer:
    """A chat model that prefers the context naming Bo / shelf (the second choice)."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, Any]], list[str]]] = []

    def chat(self, messages: list[dict[str, Any]]) -> str:
        return "?"

    def loglikelihood(self, messages: list[dict[str, Any]], continuations: list[str]) -> list[float]:
        self.calls.append((messages, list(continuations)))
        last = messages[-1]["content"]
        return [0.0 if last.endswith(("Bo", "shelf")) else -1.0 for _ in continuations]


def test_a_chat_model_scores_each_context(tmp_path, pm_all):
    model = Scorer()
    results = list(prompt_style.run_chat_model(model, task(tmp_path, pm_all, meta="messages")))
    assert [r.prediction for r in results] == [1, 1]
    assert [r.correct for r in results] == [False, True]
    assert len(model.calls) == 4 and model.calls[1] == (
        [{"role": "user", "content": "Ann beat Bo so Bo"}],
        ["was happy."],
    )
    with pytest.raises(prompt_style.OptionError):
        list(prompt_style.run_chat_model(model, task(tmp_path, pm_all, meta="messages"), mode="generate"))
    with pytest.raises(prompt_style.RenderError):
        list(prompt_style.run_chat_model(model, task(tmp_path, pm_all, meta="chatml")))
