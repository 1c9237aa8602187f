"""Format grids: the axes styles declare (``declare_axes``), cells and their ids,
sampling, constraints, and the gold target of every cell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from prompt_style import (
    DEFAULT_LABELS,
    Axis,
    Constraint,
    OptionError,
    QAStyle,
    Sample,
    StyleAxes,
    cell_id,
    check_options,
    create_plugin_manager,
    hookimpl,
    load_task,
)
from prompt_style.cli import main
from prompt_style.grid import make_grid, parse_axis_values

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"

RECORDS = [
    {"q": "Capital of France?", "c": ["Lyon", "Paris", "Nice", "Lille"], "a": 1},
    {"q": "2 + 2 = ?", "c": ["four", "three", "five"], "a": 0},
    {"q": "Largest planet?", "c": ["Mars", "Venus", "Earth", "Saturn", "Jupiter"], "a": 4},
]
DEV = [{"q": "1 + 1 = ?", "c": ["two", "one"], "a": 0}]


def task_of(style="mcq::mmlu", shots=0, **template):
    return load_task(
        {
            "data": {"test": RECORDS, "dev": DEV},
            "fewshot_split": "dev",
            "doc_to_text": "q",
            "doc_to_choice": "c",
            "doc_to_target": "a",
            "template": {"template_type": style, **template},
            "num_fewshot": shots,
        }
    )


def check_gold(cell, prompts):
    """The continuation at the target is the gold choice's answer, and the prompt shows
    the gold choice's text under that label (whatever the labels, wrapper, separator
    and order of the cell)."""
    options = cell.options
    labels = options.get("choice_labels") or DEFAULT_LABELS
    for record, prompt in zip(RECORDS, prompts):
        target = prompt.target
        original = prompt.permutation[target] if prompt.permutation is not None else target
        assert original == record["a"], (cell.settings, prompt.permutation)
        gold_text = record["c"][record["a"]]
        fields = {"label": labels[target], "choice": gold_text, "number": target + 1}
        line = options.get("choice_format", "{label}. {choice}").format(**fields)
        assert line in prompt.text, (cell.settings, line, prompt.text)
        answer = options.get("answer_format", "{label}").format(**fields)
        assert prompt.continuations[target] == " " + answer, cell.settings


@pytest.mark.parametrize("style", ["mcq", "mcq::mmlu", "mcq::gpqa", "mcq::numbered"])
def test_the_default_cell_renders_as_the_task(style):
    task = task_of(style, shots=1)
    grid = make_grid(task, {"labels": None})
    defaults = [cell for cell in grid.cells if cell.settings["labels"] == ("1" if style == "mcq::numbered" else "A")]
    assert len(defaults) == 1
    expected = [p.text for p in task.render()]
    assert [p.text for p in grid.variant(defaults[0]).render()] == expected
    assert defaults[0].id == cell_id(style, {})  # the task's own format: the id of no change


@pytest.mark.parametrize("style", ["mcq::mmlu", "mcq::gpqa", "mcq::numbered"])
def test_gold_target_is_right_in_every_cell_of_the_choice_line_axes(style):
    task = task_of(style, shots=1)
    grid = make_grid(task, {"labels": None, "wrapper": None, "separator": None, "choice_order": None})
    assert len(grid.cells) == grid.allowed > 150
    for cell in grid.cells:
        check_gold(cell, list(grid.variant(cell).render()))


def test_gold_target_is_right_in_every_cell_of_a_sample_of_the_whole_grid():
    task = task_of("mcq::gpqa", shots=1)
    grid = make_grid(task, None, sample=120, seed=7)
    assert len(grid.cells) == 120
    assert {a.name for a in grid.axes} >= {"labels", "casing", "answer_prefix", "instruction", "choice_order"}
    for cell in grid.cells:
        check_gold(cell, list(grid.variant(cell).render()))


def test_cell_ids_do_not_depend_on_the_order_of_axes_or_values():
    task = task_of()
    one = make_grid(task, {"labels": ["A", "1", "i"], "separator": [". ", ") "]})
    two = make_grid(task, [("separator", [") ", ". "]), ("labels", ["i", "A", "1"])])
    assert [c.id for c in one.cells] == [c.id for c in two.cells]
    assert [c.settings for c in one.cells] == [c.settings for c in two.cells]
    # a cell keeps its id when the grid varies another axis too
    wider = make_grid(task, {"labels": ["1"], "separator": [") "], "casing": None})
    same = [c for c in wider.cells if c.settings["casing"] == "default"]
    assert same[0].id == next(c.id for c in one.cells if c.settings == {"labels": "1", "separator": ") "})


def test_cell_ids_are_stable_across_processes():
    probe = (
        "from prompt_style import cell_id; "
        "print(cell_id('mcq::mmlu', {'labels': 'i', 'separator': ') ', 'shots': 5}, {'labels': 'A', 'shots': 0}))"
    )
    ids = {
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        ).stdout.strip()
        for seed in ("0", "1", "12345")
    }
    # sha256('["ps-cell-1","mcq::mmlu",{"labels":"i","separator":") ","shots":5}]')[:12]
    assert ids == {"a2381e5ae79c"}


def test_sample_is_seeded_and_independent_of_value_order():
    task = task_of()
    axes = {"labels": None, "separator": None, "spacing": None}
    first = make_grid(task, axes, sample=5, seed=3)
    again = make_grid(
        task,
        {"spacing": None, "separator": list(reversed([". ", ") ", ": ", " ", " - "])), "labels": None},
        sample=5,
        seed=3,
    )
    other = make_grid(task, axes, sample=5, seed=4)
    assert [c.id for c in first.cells] == [c.id for c in again.cells]
    assert [c.id for c in first.cells] != [c.id for c in other.cells]
    assert len(first.cells) == 5


def test_constraints_rule_out_cells():
    task = task_of()
    grid = make_grid(task, {"wrapper": ["(A)"], "separator": [". ", ") ", " "]})
    assert [c.settings["separator"] for c in grid.cells] == [" "]
    assert grid.combinations == 3 and grid.allowed == 1
    with pytest.raises(OptionError, match="no cell of the grid is allowed .*bracketed label"):
        make_grid(task, {"wrapper": ["[A]"], "separator": [") "]})
    # a newline between choices needs one before them (the example constraint)
    spaced = make_grid(task, {"spacing": [" "], "choice_spacing": ["\n", " "]})
    assert [c.settings["choice_spacing"] for c in spaced.cells] == [" "]


def test_values_of_the_users_own_and_escapes():
    assert parse_axis_values("separator=. ,) ") == ("separator", [". ", ") "])
    assert parse_axis_values("spacing=\\n,\\n\\n") == ("spacing", ["\n", "\n\n"])
    assert parse_axis_values("answer_prefix=Answer\\, please:") == ("answer_prefix", ["Answer, please:"])
    assert parse_axis_values("labels") == ("labels", None)
    task = task_of()
    grid = make_grid(task, {"separator": [" :: "]})
    assert " :: Paris" in next(iter(grid.variant(grid.cells[0]).render())).text


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ({"lables": None}, "has no axis 'lables'.*did you mean 'labels'"),
        ({"labels": ["Z"]}, 'axis \'labels\' has no value "Z".*its values: "A", "a", "1", "i", "I"'),
        ({"shots": ["-1"]}, "not a number of examples"),
        ({"choice_order": ["sideways"]}, "not a choice order"),
    ],
)
def test_bad_axes_are_errors(axes, message):
    with pytest.raises(OptionError, match=message):
        make_grid(task_of(), axes)


def test_task_axes_shots_and_meta():
    task = task_of()
    grid = make_grid(task, {"shots": ["0", "1"], "meta": ["plain", "chatml"]})
    assert [(c.settings["shots"], c.settings["meta"]) for c in grid.cells] == [
        (0, "plain"),
        (0, "chatml"),
        (1, "plain"),
        (1, "chatml"),
    ]
    texts = {(c.settings["shots"], c.settings["meta"]): next(iter(grid.variant(c).render())).text for c in grid.cells}
    assert texts[(1, "plain")].startswith("1 + 1 = ?\nA. two\nB. one\nAnswer: A\n\n")
    assert texts[(0, "chatml")].startswith("<|im_start|>user\nCapital of France?")


def test_a_choice_order_cell_records_its_permutation():
    task = task_of()
    grid = make_grid(task, {"choice_order": ["reversed"]})
    prompt = next(iter(grid.variant(grid.cells[0]).render()))
    assert prompt.permutation == (3, 2, 1, 0) and prompt.target == 2


# A third-party style with axes of its own, through the hooks.
@dataclass
class QA(QAStyle):
    question_prefix: str = "Q: "
    answer_prefix: str = "A:"

    def question_text(self, sample: Sample) -> str:
        return f"{self.question_prefix}{sample.question}\n{self.answer_prefix}"

    def answers(self, sample: Sample):
        return None if sample.choices is None else tuple(str(c) for c in sample.choices)


def qa(*, options, settings):
    return check_options(QA, options, what="style 'qa'", settings=settings)


def qa_axes(*, options):
    return StyleAxes(
        axes=(
            Axis("question_prefix", ("Q: ", "Question: "), options.get("question_prefix", "Q: "), parse=str),
            Axis("answer_prefix", ("A:", "Answer:"), options.get("answer_prefix", "A:")),
        ),
        options=lambda s: {"question_prefix": s["question_prefix"], "answer_prefix": s["answer_prefix"]},
        constraints=(
            Constraint(
                ("question_prefix", "answer_prefix"),
                lambda q, a: not (q == "Q: " and a == "Answer:"),
                "a short question prefix goes with a short answer prefix",
            ),
        ),
    )


class QAPlugin:
    @hookimpl
    def format_prompt(self):
        return {"qa": qa}

    @hookimpl
    def declare_axes(self):
        return {"qa": qa_axes}


def test_a_third_party_style_joins_the_grid_through_declare_axes():
    manager = create_plugin_manager(entry_points=False, plugins=[("qa", QAPlugin())])
    task = load_task(
        {
            "data": {"test": RECORDS[:1]},
            "doc_to_text": "q",
            "doc_to_choice": "c",
            "doc_to_target": "a",
            "template": "qa",
        },
        plugins=manager,
    )
    grid = make_grid(task)
    assert [c.settings for c in grid.cells] == [
        {"question_prefix": "Q: ", "answer_prefix": "A:"},
        {"question_prefix": "Question: ", "answer_prefix": "A:"},
        {"question_prefix": "Question: ", "answer_prefix": "Answer:"},
    ]
    texts = [next(iter(grid.variant(c).render())).text for c in grid.cells]
    assert texts == [
        "Q: Capital of France?\nA:",
        "Question: Capital of France?\nA:",
        "Question: Capital of France?\nAnswer:",
    ]


def test_a_style_without_axes_varies_only_the_task_axes():
    manager = create_plugin_manager(
        entry_points=False, plugins=[("qa", type("P", (), {"format_prompt": hookimpl(lambda self: {"qa": qa})})())]
    )
    task = load_task(
        {
            "data": {"test": RECORDS[:1]},
            "doc_to_text": "q",
            "doc_to_choice": "c",
            "doc_to_target": "a",
            "template": "qa",
        },
        plugins=manager,
    )
    with pytest.raises(OptionError, match="declares no format axes"):
        make_grid(task)
    assert len(make_grid(task, {"meta": ["plain", "messages"]}).cells) == 2


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_grid_writes_a_line_per_cell_and_record(capsys):
    code, out, err = run(
        capsys,
        "grid",
        str(MMLU),
        "--axis",
        "labels=A,1,i",
        "--axis",
        "separator=. ,) ",
        "--sample",
        "4",
        "--seed",
        "0",
        "--limit",
        "2",
    )
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 8
    first = lines[0]
    assert list(first)[:6] == ["cell", "index", "text", "messages", "continuations", "target"]
    assert list(first)[-1] == "settings" and set(first["settings"]) == {"labels", "separator"}
    assert len({line["cell"] for line in lines}) == 4
    assert "4 cells (6 allowed of 6 combinations of labels, separator)" in err


def test_cli_grid_list(capsys):
    code, out, _ = run(capsys, "grid", str(MMLU), "--axis", "labels=1", "--list")
    assert code == 0
    (cell,) = [json.loads(line) for line in out.splitlines()]
    assert cell["settings"] == {"labels": "1"} and cell["style"] == "mcq::mmlu"
    assert cell["options"]["choice_labels"][:3] == ["1", "2", "3"]


def test_cli_grid_bad_axis_is_one_line_exit_2(capsys):
    code, out, err = run(capsys, "grid", str(MMLU), "--axis", "labels=Q")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "axis 'labels' has no value \"Q\"" in err


@pytest.mark.parametrize("style", ["cloze", "cloze::options"])
def test_cloze_styles_with_options_have_axes_and_their_default_cell_is_the_task(style):
    task = task_of(style, shots=1)
    grid = make_grid(task, {"labels": None, "choice_order": None})
    default = next(c for c in grid.cells if c.settings == {"labels": "A", "choice_order": "original"})
    assert [p.text for p in grid.variant(default).render()] == [p.text for p in task.render()]
    for cell in grid.cells:  # scored on the choice texts: the gold continuation is the gold choice's
        for record, prompt in zip(RECORDS, grid.variant(cell).render()):
            assert prompt.continuations[prompt.target] == " " + record["c"][record["a"]]


def test_a_task_pickles_and_its_variants_stay_in_their_process():
    import pickle

    task = task_of()
    clone = pickle.loads(pickle.dumps(task))
    assert [p.text for p in clone.render()] == [p.text for p in task.render()]
    with pytest.raises(Exception, match="has no variants"):
        clone.variant(shots=1)


@pytest.mark.parametrize("meta", ["plain", "chatml", "messages"])
def test_a_variant_with_chat_rules_is_the_task_loaded_with_them(meta):
    """Task.variant(system_instruction=..., fewshot_as_multiturn=...) gives the prompts
    load_task gives with the same options (what the lm-eval bridge asks for a run)."""
    root = Path(__file__).resolve().parents[1] / "examples" / "mmlu" / "task.yaml"
    task = load_task(root)
    for rules in ({"system_instruction": "Be brief."}, {"fewshot_as_multiturn": False}, {}):
        if meta == "plain" and rules.get("fewshot_as_multiturn") is False:
            continue  # (an error with plain text, as load_task's)
        made = task.variant(meta=meta, **rules)
        expected = load_task(root, meta=meta, **rules)
        assert [(p.text, p.messages, p.dialogue) for p in made.render()] == [
            (p.text, p.messages, p.dialogue) for p in expected.render()
        ]
