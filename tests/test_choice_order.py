"""Choice orders: seeded shuffles, rotations and circular evaluation, the gold choice
at a position; the gold answer follows, and each prompt records its permutation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_style import OptionError, PromptStyleError, load_task
from prompt_style.choice_order import ChoiceOrder, circular_pattern, option_keys_for, permute_record, rotation
from prompt_style.cli import main

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
LM_EVAL_MMLU = ROOT / "examples" / "lm_eval" / "mmlu" / "mmlu_elementary_mathematics.yaml"
OC = ROOT / "tests" / "golden" / "opencompass"

RECORDS = [
    {"q": "Capital of France?", "c": ["Lyon", "Paris", "Nice", "Lille"], "a": 1},
    {"q": "2 + 2 = ?", "c": ["four", "three", "five"], "a": 0},
    {"q": "Pick two", "c": ["x", "y", "z"], "a": [0, 2]},
]


def task(order, records=RECORDS, **more):
    return load_task(
        {
            "data": {"test": records},
            "doc_to_text": "q",
            "doc_to_choice": "c",
            "doc_to_target": "a",
            "template": "mcq::mmlu",
        },
        choice_order=order,
        **more,
    )


def test_rotations_are_opencompass_circular_patterns():
    assert rotation(4, 0) == (0, 1, 2, 3)
    assert rotation(4, 1) == (3, 0, 1, 2)  # OpenCompass's pattern BCDA: option A is shown as B
    assert circular_pattern(rotation(4, 1), "ABCD") == ["B", "C", "D", "A"]
    assert [circular_pattern(rotation(4, k), "ABCD") for k in range(4)] == [
        list("ABCD"),
        list("BCDA"),
        list("CDAB"),
        list("DABC"),
    ]


def test_shuffle_is_seeded_per_record_and_the_gold_follows():
    first = list(task("shuffle:1").render())
    again = list(task("shuffle:1").render())
    other = list(task("shuffle:2").render())
    assert [p.permutation for p in first] == [p.permutation for p in again]
    assert [p.permutation for p in first] != [p.permutation for p in other]
    for record, prompt in zip(RECORDS, first):
        gold = record["a"]
        target = prompt.target
        if isinstance(gold, list):
            assert sorted(prompt.permutation[t] for t in target) == gold
        else:
            assert prompt.permutation[target] == gold
        shown = [record["c"][p] for p in prompt.permutation]
        assert "\n".join(f"{'ABCDE'[i]}. {c}" for i, c in enumerate(shown)) in prompt.text
    # the same record gets the same order alone, in another process or position
    assert ChoiceOrder.parse("shuffle:1").permutations(0, 4, 1)[0] == first[0].permutation


def test_circular_gives_one_prompt_per_rotation():
    prompts = list(task("circular", records=RECORDS[:1]).render())
    assert [p.rotation for p in prompts] == [0, 1, 2, 3]
    assert [p.target for p in prompts] == [1, 2, 3, 0]
    assert all(p.index == 0 for p in prompts)
    assert prompts[1].to_json()["circular_pattern"] == ["B", "C", "D", "A"]
    assert prompts[1].text.endswith("A. Lille\nB. Lyon\nC. Paris\nD. Nice\nAnswer:")


def test_all_possible_is_every_permutation_in_opencompass_order():
    prompts = list(task("all_possible", records=RECORDS[1:2]).render())
    assert len(prompts) == 6 and [p.rotation for p in prompts] == list(range(6))
    # itertools.permutations of the option keys, as OpenCompass's get_all_possible_patterns
    assert [p.circular_pattern for p in prompts] == [list(t) for t in __import__("itertools").permutations("ABC")]
    assert all(p.permutation[p.target] == 0 for p in prompts)


def test_correct_position():
    prompts = list(task("correct:2", records=RECORDS[:2]).render())
    assert [p.target for p in prompts] == [2, 2]
    assert prompts[0].permutation == (0, 2, 1, 3)  # the others keep their order
    with pytest.raises(
        PromptStyleError, match="record 1: correct:3 places the gold choice at position 3, but the record has 3"
    ):
        list(task("correct:3", records=RECORDS[:2]).render())
    with pytest.raises(PromptStyleError, match="places one gold choice, but the record has 2"):
        list(task("correct:0", records=RECORDS[2:]).render())


def test_json_lines_add_keys_and_keep_the_others():
    plain = next(task(None).render()).to_json()
    shuffled = next(task("reversed").render()).to_json()
    assert list(shuffled)[: len(plain)] == list(plain)
    assert shuffled["permutation"] == [3, 2, 1, 0]
    assert "rotation" not in shuffled


@pytest.mark.parametrize("text", ["sideways", "shuffle", "correct:-1", "rotate:x"])
def test_bad_orders(text):
    with pytest.raises(OptionError):
        ChoiceOrder.parse(text)


def test_choices_that_are_labels_need_option_keys():
    with pytest.raises(PromptStyleError, match="the choices are the labels A, B, C, D.*--option-keys"):
        list(
            load_task(
                LM_EVAL_MMLU, data={"test": str(ROOT / "examples/mmlu/data/test.jsonl")}, choice_order="circular"
            ).render(limit=1)
        )
    made = list(
        load_task(
            LM_EVAL_MMLU,
            data={"test": str(ROOT / "examples/mmlu/data/test.jsonl")},
            choice_order="circular",
            option_keys=["choices"],
        ).render(limit=1)
    )
    assert [p.target for p in made] == [1, 2, 3, 0]
    assert "A. 64\nB. 54\nC. 56\nD. 48\nAnswer:" in made[1].text


def test_a_wrong_answer_key_is_caught():
    with pytest.raises(PromptStyleError, match="the gold answer did not follow the choices"):
        list(
            load_task(
                LM_EVAL_MMLU,
                data={"test": str(ROOT / "examples/mmlu/data/test.jsonl")},
                choice_order="rotate:1",
                option_keys=["choices"],
                answer_key="subject",
            ).render(limit=1)
        )


def test_option_keys_of_opencompass_datasets():
    assert option_keys_for("CircularMMLUDataset", None, None) == (tuple("ABCD"), "target")
    assert option_keys_for("opencompass.datasets.ARCDataset", None, None)[0][0] == "textA"
    assert option_keys_for(None, ["input", "A", "B", "C", "D"], "target") == (tuple("ABCD"), "target")
    assert option_keys_for(None, ["goal", "sol1", "sol2"], "answer") == (("sol1", "sol2"), "answer")
    assert option_keys_for(None, ["question"], "answer") is None


def test_permute_record_rewrites_as_opencompass():
    record = {"q": "?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}
    assert permute_record(record, rotation(4, 1), "ABCD", "answer") == {
        "q": "?",
        "A": "d",
        "B": "a",
        "C": "b",
        "D": "c",
        "answer": "B",
    }
    arc = {"textA": "a", "textB": "b", "answerKey": "B"}
    assert permute_record(arc, (1, 0), ("textA", "textB"), "answerKey") == {
        "textA": "b",
        "textB": "a",
        "answerKey": "A",
    }
    text_answer = {"A": "a", "B": "b", "target": "b"}  # not an option key: stays (OpenCompass's rule)
    assert permute_record(text_answer, (1, 0), "AB", "target")["target"] == "b"


def test_opencompass_task_is_rotated_through_its_columns():
    config = OC / "datasets" / "mmlu_gen_4d595a.yaml"
    records = OC / "records" / "mmlu_gen_4d595a"
    prompts = list(
        load_task(
            config,
            data={"test": str(records / "test.jsonl"), "dev": str(records / "dev.jsonl")},
            choice_order="circular",
        ).render(limit=1)
    )
    assert len(prompts) == 4
    assert [p.circular_pattern for p in prompts][1] == ["B", "C", "D", "A"]


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_flags(capsys):
    code, out, err = run(capsys, "render", str(MMLU), "--limit", "1", "--shuffle-choices", "3", "--format", "jsonl")
    assert code == 0, err
    assert json.loads(out)["permutation"] == [3, 2, 1, 0]
    code, out, _ = run(capsys, "render", str(MMLU), "--limit", "1", "--circular", "--shots", "0")
    assert code == 0 and out.count("=== record 0") == 4 and "rotation 3" in out
    code, out, _ = run(
        capsys, "render", str(MMLU), "--limit", "1", "--place-correct-choice-position", "0", "--format", "jsonl"
    )
    assert code == 0 and json.loads(out)["target"] == 0
    code, out, _ = run(capsys, "render", str(MMLU), "--limit", "1", "--choice-order", "rotate:2", "--format", "jsonl")
    assert code == 0 and json.loads(out)["permutation"] == [2, 3, 0, 1]


def test_cli_errors(capsys):
    code, _, err = run(capsys, "render", str(MMLU), "--place-correct-choice-position", "9")
    assert code == 2 and err.count("\n") == 1 and "record 0: correct:9" in err
    code, _, err = run(capsys, "render", str(MMLU), "--option-keys", "choices")
    assert code == 2 and "no order is given" in err
    with pytest.raises(SystemExit) as exit_:
        main(["render", str(MMLU), "--circular", "--shuffle-choices", "1"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize("order", ["shuffle:5", "circular", "reversed", "correct:1"])
def test_reordered_record_copies_render_as_reordered_choices(order):
    # tasks whose choices and gold are plain fields render a reordered copy of the record
    # (through the fast path); the prompts are those of the general path's reordering
    records = [
        {"q": "  What? ", "c": ["a", "b {x}", "c", "d"], "a": 2},
        {"q": "Which?", "c": ["one", "two"], "a": 0},
        {"q": "Text gold", "c": ["p", "q", "r"], "a": "q"},  # a text target: the general path
    ]
    shots = [{"q": "Ex?", "c": ["y", "n"], "a": 0}]

    def made(swap):
        loaded = load_task(
            {
                "data": {"test": records, "dev": shots},
                "fewshot_split": "dev",
                "num_fewshot": 1,
                "doc_to_text": "{{q.strip()}}",
                "doc_to_choice": "c",
                "doc_to_target": "a",
                "template": "mcq::gpqa",
                "description": "Pick one.\n\n",
            },
            choice_order=order,
        )
        if not swap:
            loaded.renderer._order_fields = None
        else:
            assert loaded.renderer.render_ordered(records[0], 0) and loaded.renderer._order_fields == ("c", "a")
        return [
            (p.text, p.continuations, p.target, p.permutation, p.rotation, p.circular_pattern) for p in loaded.render()
        ]

    if order == "correct:1":
        records = records[:2] + [{"q": "Text gold", "c": ["p", "q", "r"], "a": "q"}]
    assert made(True) == made(False)


@pytest.mark.slow  # spawns worker processes
def test_worker_processes_render_the_same_orders(capsys):
    code, serial, _ = run(capsys, "render", str(MMLU), "--circular", "--format", "jsonl", "--limit", "3")
    assert code == 0
    code, parallel, err = run(
        capsys, "render", str(MMLU), "--circular", "--format", "jsonl", "--limit", "3", "--jobs", "2"
    )
    assert code == 0, err
    assert parallel == serial and serial.count("\n") == 12
