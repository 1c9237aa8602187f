"""The ``metadata.prompt_style`` block of an lm-evaluation-harness task file.

A user adds it (and ``class: !function prompt_style_lm_eval.task.PromptStyleTask``)
to a task file they run with lm-eval; prompt-style reads its task-side keys, so
``prompt-style render`` shows what the bridge sends.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from prompt_style import TaskFileError, load_task
from prompt_style.cli import main

ROOT = Path(__file__).resolve().parents[1]
ARC = ROOT / "examples" / "arc" / "data"

BASE = f"""\
task: arc_block
class: !function prompt_style_lm_eval.task.PromptStyleTask
dataset_path: json
dataset_kwargs:
  data_files:
    test: {ARC / "test.jsonl"}
    train: {ARC / "train.jsonl"}
output_type: multiple_choice
training_split: train
test_split: test
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{choices.label.index(answerKey)}}}}"
doc_to_choice: "{{{{choices.text}}}}"
num_fewshot: 1
metadata:
  version: 1.0
"""


def task_file(tmp_path: Path, block: str, base: str = BASE) -> Path:
    path = tmp_path / "arc_block.yaml"
    path.write_text(base + textwrap.indent(textwrap.dedent(block), "  "), encoding="utf-8")
    return path


def test_the_block_chooses_style_retriever_shots_and_seed(tmp_path, pm_all):
    path = task_file(
        tmp_path,
        """\
        prompt_style:
          style: mcq::mmlu
          retriever: {name: random, seed: 3}
          shots: 2
        """,
    )
    task = load_task(path, plugins=pm_all)
    assert task.config.num_fewshot == 2 and task.config.retriever == {"name": "random", "seed": 3}
    first = next(iter(task.render()))
    assert first.continuations == (" A", " B", " C", " D")
    assert first.text.count("Answer:") == 3  # two examples and the question


def test_the_block_seed_replaces_lm_evals(tmp_path, pm):
    path = task_file(tmp_path, "prompt_style: {seed: 7, shots: 2}\n")
    task = load_task(path, plugins=pm)
    assert task.config.seed == 7 and task.config.num_fewshot == 2


def test_model_side_keys_are_checked_and_kept(tmp_path, pm):
    path = task_file(
        tmp_path,
        """\
        prompt_style:
          meta: chatml
          meta_options: {add_generation_prompt: false}
          system_instruction: Be brief.
          fewshot_as_multiturn: false
        """,
    )
    task = load_task(path, plugins=pm)
    assert task.config.metadata["prompt_style"]["meta"] == "chatml"
    assert task.config.num_fewshot == 1  # the file's own


def test_class_without_a_block_is_refused(tmp_path, pm):
    path = tmp_path / "t.yaml"
    path.write_text(BASE, encoding="utf-8")
    with pytest.raises(TaskFileError, match="class: not supported.*metadata.prompt_style block"):
        load_task(path, plugins=pm)


def test_every_problem_of_the_block_at_once(tmp_path, capsys):
    path = task_file(
        tmp_path,
        """\
        prompt_style:
          stlye: mcq
          shots: -1
          seed: "x"
          fewshot_as_multiturn: 1
        """,
    )
    assert main(["render", str(path)]) == 2
    err = capsys.readouterr().err
    assert "4 problems" in err and "did you mean 'style'" in err
    assert "metadata.prompt_style.shots: must be 0 or more" in err
    assert "metadata.prompt_style.seed: must be a whole number" in err
    assert "fewshot_as_multiturn: must be true or false" in err
    assert f"{path}:" in err and len(err.strip().splitlines()) == 1


def test_a_block_that_is_not_a_mapping(tmp_path, pm):
    path = task_file(tmp_path, "prompt_style: mcq\n")
    with pytest.raises(TaskFileError, match="metadata.prompt_style: must be a mapping"):
        load_task(path, plugins=pm)


def test_a_style_named_twice(tmp_path, pm):
    path = task_file(
        tmp_path, "prompt_style: {style: cloze}\n", base=BASE.replace("metadata:", "template: mcq\nmetadata:")
    )
    with pytest.raises(TaskFileError, match="names a style twice"):
        load_task(path, plugins=pm)


def test_render_shows_what_the_block_asks_for(tmp_path, capsys):
    path = task_file(tmp_path, "prompt_style: {style: mcq::mmlu, shots: 0}\n")
    assert main(["render", str(path), "--limit", "1", "--format", "jsonl"]) == 0
    out = capsys.readouterr().out
    assert '"continuations": [" A", " B", " C", " D"]' in out
