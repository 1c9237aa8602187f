"""prompt-style lint: each check on a task seeded with its problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_style import load_task
from prompt_style.cli import main
from prompt_style.lint import CHECKS, lint_task, named_counts

ROOT = Path(__file__).resolve().parents[1]

RECORDS = [
    {"q": "Which is a mammal?", "c": ["whale", "shark", "trout", "eel"], "a": 0},  # 0: clean
    {"q": "Pick the even number.", "c": ["3", "5", "8"], "a": 2},  # 1: 3 choices, "four options"
    {"q": "Which letter comes second?", "c": ["A", "C", "B", "D"], "a": 2},  # 2: choice text is a label
    {"q": "Which is a mammal?", "c": ["whale", "shark", "trout", "eel"], "a": 0},  # 3: duplicate of 0
    {"q": "Capital of Italy?", "c": ["Rome", "Rome ", "Milan", "Turin"], "a": 0},  # 4: whitespace; in dev too
    {"q": "Largest ocean? Answer: B", "c": ["Atlantic", "Pacific", "Indian", "Arctic"], "a": 1},  # 5: leak
    {
        "q": "What does the sentence say? The quick brown fox jumps over the lazy dog.",
        "c": ["The quick brown fox jumps over the lazy dog", "nothing", "a cat", "a bird"],
        "a": 0,
    },  # 6: the gold text in the question
    {"q": "Which planet is red?", "c": ["A. Mars", "B. Venus", "C. Earth", "D. Jupiter"], "a": 0},  # 7: labelled
]
DEV = [RECORDS[4], {"q": "2 + 2?", "c": ["4", "5", "6", "7"], "a": 0}]
EXPECTED = {
    (1, "choice-count"),
    (2, "label-collision"),
    (3, "duplicate-record"),
    (4, "whitespace-choices"),
    (4, "answer-leak"),
    (5, "answer-leak"),
    (6, "answer-leak"),
    (7, "label-collision"),
}


def seeded(tmp_path, records=RECORDS, **task):
    for name, lines in (("test", records), ("dev", DEV)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    config = {
        "task": "seeded",
        "data": {"test": "test.jsonl", "dev": "dev.jsonl"},
        "fewshot_split": "dev",
        "description": "Choose one of the four options.\n\n",
        "doc_to_text": "q",
        "doc_to_choice": "c",
        "doc_to_target": "a",
        "template": "mcq::mmlu",
        "num_fewshot": 1,
        **task,
    }
    path = tmp_path / "task.yaml"
    import yaml

    path.write_text(yaml.safe_dump(config))
    return path


def test_every_seeded_problem_is_found_and_nothing_else(tmp_path):
    findings = list(lint_task(load_task(seeded(tmp_path))))
    assert {(f.index, f.code) for f in findings} == EXPECTED
    assert all(f.fix for f in findings)


def test_few_shot_examples_from_the_evaluated_split(tmp_path):
    findings = list(lint_task(load_task(seeded(tmp_path, records=RECORDS[:1] + RECORDS[2:3], fewshot_split="test"))))
    task_level = [f for f in findings if f.index is None]
    assert [f.code for f in task_level] == ["fewshot-from-eval"]
    assert "drawn from the evaluated split 'test'" in task_level[0].message


def test_an_evaluated_record_in_the_pool(tmp_path):
    records = [RECORDS[0], DEV[1]]  # record 1 is dev example 1, which record 0 does not get
    findings = list(lint_task(load_task(seeded(tmp_path, records=records))))
    assert [(f.index, f.code) for f in findings] == [(1, "fewshot-from-eval")]


def test_doubled_delimiter(tmp_path):
    records = [{"q": "Primary color?", "c": [" red", " green"], "a": 0}, {"q": "Sky?", "c": ["blue", "green"], "a": 0}]
    findings = list(
        lint_task(load_task(seeded(tmp_path, records=records, template="cloze::qa", num_fewshot=0, description="")))
    )
    assert [(f.index, f.code) for f in findings] == [(0, "doubled-delimiter")]
    trailing = [{"q": "Sky? Answer: ", "c": ["blue", "green"], "a": 0}]
    findings = list(
        lint_task(load_task(seeded(tmp_path, records=trailing, template="passthrough", num_fewshot=0, description="")))
    )
    assert [(f.index, f.code) for f in findings] == [(0, "doubled-delimiter")]
    assert "prompt ends with ' '" in findings[0].message


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("Answer by replying A, B, C or D.", [4]),
        ("where LETTER is one of A,B,C,D,E.", [5]),
        ("Pick among the five options below", [5]),
        ("Choose from (A-J)", [10]),
        ("Reply with 1, 2 or 3", [3]),
        ("A, C or D", []),  # not a run from A
        ("a question with 2 parts", []),
    ],
)
def test_named_counts(text, counts):
    assert [count for count, _ in named_counts(text)] == counts


def test_the_bundled_examples_are_clean():
    for task in ("examples/mmlu/task.yaml", "examples/gpqa/task.yaml", "examples/arc/task.yaml"):
        assert list(lint_task(load_task(ROOT / task))) == [], task


def test_an_opencompass_instruction_is_checked_against_the_option_columns(tmp_path):
    config = ROOT / "tests/golden/opencompass/datasets/mmlu_gen_4d595a.yaml"
    record = {"input": "q", "A": "a", "B": "b", "C": "c", "D": "d", "target": "A"}
    (tmp_path / "test.jsonl").write_text(json.dumps(record) + "\n")
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps({**record, "input": f"d{i}"}) + "\n" for i in range(5)))
    task = load_task(config, data={"test": str(tmp_path / "test.jsonl"), "dev": str(tmp_path / "dev.jsonl")})
    assert list(lint_task(task)) == []
    three = {"input": "q", "A": "a", "B": "b", "C": "c", "target": "A"}
    config_three = {
        "reader_cfg": {"input_columns": ["input", "A", "B", "C"], "output_column": "target"},
        "infer_cfg": {
            "prompt_template": {
                "type": "PromptTemplate",
                "template": "Answer by replying A, B, C or D.\n{input}\nA. {A}\nB. {B}\nC. {C}\nAnswer:",
            },
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer"},
        },
    }
    (tmp_path / "three.jsonl").write_text(json.dumps(three) + "\n")
    findings = list(lint_task(load_task(config_three, data={"test": str(tmp_path / "three.jsonl")})))
    assert [(f.index, f.code) for f in findings] == [(0, "choice-count")]


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_lint_lines_and_exit_codes(tmp_path, capsys):
    path = seeded(tmp_path)
    code, out, err = run(capsys, "lint", str(path))
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == len(EXPECTED)
    assert lines[0] == (
        f"{path}: split 'test' record 1: choice-count: the prompt names 4 choices ('four options') but the record "
        "has 3 (fix: word the instruction for any number of choices, or build it from the record's choices)"
    )
    assert "8 findings (answer-leak 3, choice-count 1, duplicate-record 1" in err
    code, out, _ = run(capsys, "lint", str(path), "--select", "duplicate-record", "--format", "json")
    assert code == 1
    assert json.loads(out) == {
        "file": str(path),
        "code": "duplicate-record",
        "split": "test",
        "record": 3,
        "message": "the same question and choices as record 0",
        "fix": "drop one of the two records",
    }
    code, out, err = run(capsys, "lint", str(path), "--ignore", ",".join(CHECKS))
    assert code == 0 and out == "" and "no findings (0 checks)" in err
    code, _, _ = run(capsys, "lint", str(path), "--limit", "1")
    assert code == 0


def test_cli_lint_bad_input_is_exit_2(tmp_path, capsys):
    code, out, err = run(capsys, "lint", str(tmp_path / "missing.yaml"))
    assert code == 2 and out == "" and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:
        main(["lint", str(tmp_path / "x.yaml"), "--select", "nonsense"])
    assert exit_.value.code == 2 and "unknown check 'nonsense'" in capsys.readouterr().err


BAD = [
    RECORDS[0],
    {"q": "Null choice?", "c": ["x", None], "a": 0},  # 1: a choice that would read 'None'
    {"q": "Target past the end?", "c": ["x", "y"], "a": 5},  # 2
    {"c": ["x", "y"], "a": 0},  # 3: no question
    RECORDS[0],  # 4: a duplicate of 0, still checked after the bad records
]


def test_cli_lint_reports_every_record_it_cannot_render_naming_each(tmp_path, capsys):
    path = seeded(tmp_path, BAD)
    code, out, err = run(capsys, "lint", str(path))
    assert code == 2
    # the records that render are still checked
    assert out.splitlines() == [
        f"{path}: split 'test' record 4: duplicate-record: the same question and choices as record 0 "
        "(fix: drop one of the two records)"
    ]
    errors = [line for line in err.splitlines() if line.startswith("prompt-style: error: ")]
    assert len(errors) == 3
    for record, key in ((1, "doc_to_choice"), (2, "doc_to_target"), (3, "doc_to_text")):
        assert any("task.yaml:" in e and f"{key}: split 'test' record {record}: " in e for e in errors), (record, err)
    assert err.splitlines()[-1] == f"prompt-style: {path}: 3 records cannot be rendered, 1 finding in the others"


def test_lint_task_raises_the_first_bad_record_located_without_errors(tmp_path):
    task = load_task(seeded(tmp_path, BAD))
    with pytest.raises(Exception) as caught:
        list(lint_task(task))
    message = str(caught.value)
    assert "task.yaml:" in message and "doc_to_choice: split 'test' record 1: choice 1 is null" in message
    errors: list = []
    findings = list(lint_task(task, errors=errors))
    assert [e.index for e in errors] == [1, 2, 3] and [f.index for f in findings] == [4]


def test_renderer_sample_and_examples_name_the_record(tmp_path):
    renderer = load_task(seeded(tmp_path, BAD)).renderer
    with pytest.raises(Exception) as caught:
        renderer.sample(BAD[3], 3)
    assert "task.yaml:" in str(caught.value) and "doc_to_text: split 'test' record 3: field 'q' is missing" in str(
        caught.value
    )
