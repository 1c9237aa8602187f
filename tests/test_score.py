"""prompt-style score: generated answers read by the style's answer parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_style import load_task, score_predictions
from prompt_style.cli import main
from prompt_style.scoring import Prediction

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
RECORDS = [
    {"q": "Capital of France?", "c": ["Lyon", "Paris", "Nice", "Lille"], "a": 1},
    {"q": "2 + 2 = ?", "c": ["four", "three", "five"], "a": 0},
    {"q": "Pick two", "c": ["x", "y", "z"], "a": [0, 2]},
]


def task(style="mcq::mmlu", **more):
    return load_task(
        {
            "data": {"test": RECORDS},
            "doc_to_text": "q",
            "doc_to_choice": "c",
            "doc_to_target": "a",
            "template": {"template_type": style, "generation": "cot"},
        },
        **more,
    )


def test_accuracy_and_unparsable_rate():
    score = score_predictions(
        task(),
        [
            Prediction(0, "Thinking.\nANSWER: B"),
            Prediction(1, "The answer is (B)."),  # wrong
            Prediction(2, "ANSWER: A, C"),  # both gold answers
        ],
    )
    assert (score.predictions, score.correct, score.unparsable) == (3, 2, 0)
    assert score.rules == {"answer line": 2, "answer phrase": 1}
    unreadable = score_predictions(task(), [Prediction(0, "no idea"), Prediction(1, "four")])
    assert (unreadable.correct, unreadable.unparsable, unreadable.unparsable_rate) == (1, 1, 0.5)


def test_the_labels_and_order_of_the_prompt_are_used():
    numbered = score_predictions(task("mcq::numbered"), [Prediction(0, "ANSWER: 2")])
    assert numbered.correct == 1
    roman = score_predictions(
        task(style_options={"choice_labels": ["i", "ii", "iii", "iv"]}), [Prediction(0, "ANSWER: ii")]
    )
    assert roman.correct == 1
    # reversed choices: Paris is shown third, as C
    shown = score_predictions(task(choice_order="reversed"), [Prediction(0, "ANSWER: C"), Prediction(1, "Paris")])
    assert shown.correct == 1 and shown.results[0]["parsed"] == ["C"]


def test_circular_predictions_need_their_rotation_and_count_all_rotations():
    circular = task(choice_order="circular")
    golds = ["B", "C", "D", "A"]  # where Paris is shown in each rotation
    predictions = [Prediction(0, f"ANSWER: {g}", rotation=r) for r, g in enumerate(golds)]
    predictions += [Prediction(1, "ANSWER: A", rotation=0), Prediction(1, "ANSWER: A", rotation=1)]
    score = score_predictions(circular, predictions)
    assert score.correct == 5 and score.circular_records == 2 and score.circular_correct == 1
    with pytest.raises(Exception, match="needs its 'rotation'"):
        score_predictions(circular, [Prediction(0, "ANSWER: B")])


def write(tmp_path, lines):
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join((json.dumps(line) if not isinstance(line, str) else line) + "\n" for line in lines))
    return path


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_score(tmp_path, capsys):
    path = write(tmp_path, [{"index": 0, "completion": "ANSWER: B"}, {"index": 1, "completion": "hmm"}])
    code, out, err = run(capsys, "score", str(MMLU), str(path))
    assert code == 0, err
    assert out.splitlines()[0] == "accuracy 50.0% (1 of 2); unparsable 50.0% (1)"
    code, out, _ = run(
        capsys, "score", str(MMLU), str(path), "--format", "json", "--results", str(tmp_path / "r.jsonl")
    )
    data = json.loads(out)
    assert data["accuracy"] == 0.5 and data["unparsable_rate"] == 0.5 and data["rules"] == {"answer line": 1}
    results = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert results[0] == {"cell": "c575fcb5f320", "record": 0, "correct": True, "parsed": ["B"], "rule": "answer line"}


def test_grid_predictions_are_scored_in_their_cells(tmp_path, capsys):
    code, out, _ = run(capsys, "grid", str(MMLU), "--axis", "labels=A,i", "--limit", "2", "--shots", "0")
    lines = [json.loads(line) for line in out.splitlines()]
    predictions = [
        {
            "cell": line["cell"],
            "settings": line["settings"],
            "index": line["index"],
            "completion": f"ANSWER: {line['continuations'][line['target']].strip()}",
        }
        for line in lines
    ]
    code, out, err = run(
        capsys, "score", str(MMLU), str(write(tmp_path, predictions)), "--results", str(tmp_path / "r.jsonl")
    )
    assert code == 0, err
    assert out.startswith("accuracy 100.0% (4 of 4)")
    code, out, err = run(capsys, "spread", str(tmp_path / "r.jsonl"))
    assert code == 0 and "2 cells: accuracy min 100.0%" in out


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{"], "predictions.jsonl:1: not JSON"),
        ([{"completion": "A"}], "predictions.jsonl:1: index: 'index' must be the record's position"),
        ([{"index": 0}], "predictions.jsonl:1: completion: 'completion' must be the model's text"),
        (
            [{"index": 99, "completion": "A"}],
            "predictions.jsonl:1: index: index 99 is past the evaluated split (24 records)",
        ),
        (
            [{"index": 0, "completion": "A"}, {"index": 0, "completion": "B"}],
            "predictions.jsonl:2: index: record 0 is predicted twice",
        ),
        (
            [{"index": 0, "completion": "A", "rotation": 1}],
            "predictions.jsonl:1: rotation: the prediction has rotation 1",
        ),
        ([{"index": 0, "completion": "A", "cell": "abc"}], "names cell abc but not its settings"),
        ([{"index": 0, "completion": "A", "cell": "abc", "settings": {"labels": "i"}}], "cell abc's settings"),
    ],
)
def test_bad_predictions_are_one_line_exit_2(tmp_path, capsys, lines, message):
    code, out, err = run(capsys, "score", str(MMLU), str(write(tmp_path, lines)))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_a_style_without_a_parser(tmp_path, capsys):
    path = write(tmp_path, [{"index": 0, "completion": "A"}])
    code, _, err = run(
        capsys,
        "score",
        str(ROOT / "examples/lm_eval/arc/arc_easy.yaml"),
        str(path),
        "--data",
        f"test={ROOT / 'examples/arc/data/test.jsonl'}",
    )
    assert code == 2 and "style 'passthrough' has no answer parser" in err
