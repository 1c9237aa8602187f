"""prompt-style spread: per-cell accuracy of a results file and its spread."""

from __future__ import annotations

import builtins
import json

import pytest

from prompt_style.cli import main
from prompt_style.spread import read_results, spread_of

LINES = [
    # cell a: 3 of 4; cell b: 1 of 4; cell c: 2 of 4 (score counts as given)
    *({"cell": "a", "record": i, "correct": i != 3, "settings": {"labels": "A", "sep": ". "}} for i in range(4)),
    *({"cell": "b", "record": i, "correct": i == 0, "settings": {"labels": "1", "sep": ". "}} for i in range(4)),
    *({"cell": "c", "index": i, "score": 0.5, "settings": {"labels": "1", "sep": ") "}} for i in range(4)),
]


def write(tmp_path, lines, name="results.jsonl"):
    path = tmp_path / name
    path.write_text("".join((json.dumps(line) if not isinstance(line, str) else line) + "\n" for line in lines))
    return path


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_statistics(tmp_path):
    result = spread_of(read_results(write(tmp_path, LINES)))
    assert [(c.cell, c.accuracy, c.records) for c in result.cells] == [("a", 0.75, 4), ("c", 0.5, 4), ("b", 0.25, 4)]
    assert (result.minimum, result.median, result.maximum, result.spread) == (0.25, 0.5, 0.75, 0.5)
    assert result.mean == pytest.approx(0.5)
    assert result.std == pytest.approx(0.25)  # sample standard deviation of 0.75, 0.5, 0.25
    assert not result.uneven
    assert result.by_axis["labels"] == [
        {"value": "A", "cells": 1, "mean": 0.75, "min": 0.75, "max": 0.75},
        {"value": "1", "cells": 2, "mean": 0.375, "min": 0.25, "max": 0.5},
    ]


def test_circular_records_count_only_when_every_rotation_is_right(tmp_path):
    lines = [
        {"cell": "x", "record": 0, "rotation": 0, "correct": True},
        {"cell": "x", "record": 0, "rotation": 1, "correct": False},
        {"cell": "x", "record": 1, "rotation": 0, "correct": True},
        {"cell": "x", "record": 1, "rotation": 1, "correct": True},
    ]
    result = spread_of(read_results(write(tmp_path, lines)))
    assert result.cells[0].accuracy == 0.5 and result.cells[0].records == 2
    assert result.std == 0.0


def test_uneven_records_are_noted(tmp_path):
    lines = [{"cell": "x", "record": 0, "correct": True}, {"cell": "y", "record": 1, "correct": True}]
    assert spread_of(read_results(write(tmp_path, lines))).uneven


def test_cli_table_and_json(tmp_path, capsys):
    path = write(tmp_path, LINES)
    code, out, err = run(capsys, "spread", str(path))
    assert code == 0, err
    assert out.splitlines()[1].split() == ["1", "a", "75.0%", "4", 'labels="A"', 'sep=".', '"']
    assert (
        "3 cells: accuracy min 25.0%, median 50.0%, max 75.0%; spread 50.0 points; mean 50.0%, standard deviation 25.0 points"
        in out
    )
    assert "by labels:" in out
    code, out, _ = run(capsys, "spread", str(path), "--format", "json")
    data = json.loads(out)
    assert data["overall"] == {
        "cells": 3,
        "min": 0.25,
        "median": 0.5,
        "max": 0.75,
        "spread": 0.5,
        "mean": 0.5,
        "std": 0.25,
        "same_records": True,
    }
    assert data["cells"][0] == {"cell": "a", "settings": {"labels": "A", "sep": ". "}, "records": 4, "accuracy": 0.75}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["not json"], "results.jsonl:1: not JSON"),
        ([{"record": 0, "correct": True}], "results.jsonl:1: cell: the line has no 'cell'"),
        ([{"cell": "a", "correct": True}], "results.jsonl:1: record: the line has no 'record'"),
        ([{"cell": "a", "record": 0, "correct": "yes"}], "results.jsonl:1: correct: 'correct' must be true or false"),
        ([{"cell": "a", "record": 0, "score": 2}], "score: 'score' must be a number from 0 to 1"),
        ([{"cell": "a", "record": 0}], "the line has neither 'correct' nor 'score'"),
        (
            [{"cell": "a", "record": 0, "correct": True}] * 2,
            "results.jsonl:2: record: record 0 of cell a is scored twice",
        ),
        (
            [
                {"cell": "a", "record": 0, "correct": True, "settings": {"x": 1}},
                {"cell": "a", "record": 1, "correct": True, "settings": {"x": 2}},
            ],
            "results.jsonl:2: settings: cell a has two different settings",
        ),
        ([], "the results file has no lines"),
    ],
)
def test_bad_results_are_one_line_exit_2(tmp_path, capsys, lines, message):
    path = write(tmp_path, lines)
    code, out, err = run(capsys, "spread", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "spread", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "nope.jsonl" in err and "results not found" in err


@pytest.mark.slow  # importing matplotlib takes seconds
def test_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "spread.png"
    code, _, err = run(capsys, "spread", str(write(tmp_path, LINES)), "--plot", str(png), "--title", "demo")
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install(tmp_path, capsys, monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    code, out, err = run(capsys, "spread", str(write(tmp_path, LINES)), "--plot", str(tmp_path / "x.png"))
    assert code == 2 and out == ""
    assert "needs matplotlib" in err and "pip install 'prompt-style[plot]'" in err
