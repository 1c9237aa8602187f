"""Provenance in every output line: the record's own id, the few-shot examples, the
task, style, meta template, retriever, seed and distributions, and a fingerprint that
is the same in every process and checks the line it is on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_style import RenderError, load_task, render_records
from prompt_style.cli import main
from prompt_style.provenance import PROVENANCE_KEYS, Provenance, fingerprint, verify_fingerprint
from prompt_style.safe.json_lines import dumps_line

ROOT = Path(__file__).resolve().parents[1]
MMLU = str(ROOT / "examples" / "mmlu" / "task.yaml")
ARC = str(ROOT / "examples" / "arc" / "task.yaml")
RECORDS = [
    {"id": "q-1", "q": "1 + 1 = ?", "c": ["1", "2"], "a": 1},
    {"id": "q-2", "q": "2 + 2 = ?", "c": ["4", "5"], "a": 0},
    {"id": "q-3", "q": "3 + 3 = ?", "c": ["5", "6", "7"], "a": 1},
]
SHOTS = [
    {"id": "d-1", "q": "0 + 1 = ?", "c": ["1", "2"], "a": 0},
    {"id": "d-2", "q": "0 + 2 = ?", "c": ["2", "3"], "a": 0},
]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_every_line_ends_with_the_provenance_keys(capsys):
    code, out, err = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "3")
    assert code == 0, err
    for i, row in enumerate(lines(out)):
        assert list(row)[-len(PROVENANCE_KEYS) :] == list(PROVENANCE_KEYS)
        assert row["doc_id"] == i  # no doc_id: the record's position
        assert row["fewshot_indices"] == [0, 1, 2, 3, 4]
        assert row["task"] == "mmlu_example" and row["style"] == "mcq::mmlu" and row["meta"] == "plain"
        assert row["retriever"] == "first_n" and row["seed"] == 1234 and row["fewshot_split"] == "dev"
        assert row["distributions"] == {"prompt-style": "0.1.0", "prompt-style-mmlu": "0.1.0"}
        assert row["fingerprint"].startswith("sha256:") and len(row["fingerprint"]) == 71
    for line in out.splitlines():
        assert verify_fingerprint(line)


def test_existing_keys_are_byte_identical(capsys, pm_all):
    # each line starts with exactly what RenderedPrompt.to_json() gave before provenance
    code, out, _ = run(capsys, "render", ARC, "--format", "jsonl")
    prompts = list(load_task(ARC, plugins=pm_all).render())
    for line, prompt in zip(out.splitlines(), prompts, strict=True):
        before = dumps_line(prompt.to_json())
        assert line.startswith(before[:-1] + ', "doc_id": ')


def test_python_api_gives_the_same_lines(capsys, pm_all):
    code, out, _ = run(capsys, "render", ARC, "--format", "jsonl", "--doc-id", "id")
    task = load_task(ARC, plugins=pm_all, doc_id="id")
    assert [task.provenance.line(p) for p in task.render()] == out.splitlines()
    first = next(iter(task.render()))
    fields = task.provenance.fields_of(first)
    assert fields["doc_id"] == first.doc_id == json.loads(out.splitlines()[0])["doc_id"] == "Mercury_7082915"
    assert task.provenance.fingerprint(first) == json.loads(out.splitlines()[0])["fingerprint"]


def test_doc_id_from_the_task_file_and_the_command_line(capsys, make_task):
    task = make_task(
        {"test": RECORDS}, doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq", doc_id="id"
    )
    code, out, err = run(capsys, "render", task, "--format", "jsonl")
    assert code == 0, err
    assert [r["doc_id"] for r in lines(out)] == ["q-1", "q-2", "q-3"]
    code, out, err = run(capsys, "render", task, "--format", "jsonl", "--doc-id", "q")
    assert [r["doc_id"] for r in lines(out)] == ["1 + 1 = ?", "2 + 2 = ?", "3 + 3 = ?"]


def test_doc_id_missing_or_null_is_an_error_naming_the_record(capsys, make_task):
    records = [RECORDS[0], {**RECORDS[1], "id": None}]
    task = make_task({"test": records}, doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq")
    code, out, err = run(capsys, "render", task, "--doc-id", "idd")
    assert code == 2
    assert "--doc-id: split 'test' record 0: field 'idd' is missing (did you mean 'id'?" in err
    code, out, err = run(capsys, "render", task, "--doc-id", "id", "--format", "jsonl")
    assert code == 2 and "record 1" in err and "null" in err


def test_few_shot_indices_per_record_with_a_random_retriever(capsys):
    code, out, err = run(capsys, "render", ARC, "--format", "jsonl", "--doc-id", "id")
    rows = lines(out)
    assert all(len(r["fewshot_indices"]) == 3 for r in rows)
    assert len({tuple(r["fewshot_indices"]) for r in rows}) > 1  # drawn per record
    assert rows[0]["retriever"] == "random" and rows[0]["style"] == "cloze::qa" and rows[0]["fewshot_split"] == "train"
    # the indices name the examples shown: their questions are in the prompt, in order
    train = [json.loads(line) for line in (ROOT / "examples/arc/data/train.jsonl").read_text().splitlines()]
    for row in rows[:5]:
        positions = [row["text"].index(train[i]["question"]) for i in row["fewshot_indices"]]
        assert positions == sorted(positions)


def test_fast_and_general_paths_agree(pm_all):
    # the same task rendered by the compiled fast path and by the general path
    task = load_task(
        {"data": {"test": RECORDS, "dev": SHOTS}, "doc_to_text": "q", "doc_to_choice": "c", "doc_to_target": "a"},
        plugins=pm_all,
        style="mcq::mmlu",
        shots=2,
        fewshot_split="dev",
        doc_id="id",
    )
    renderer = task.renderer
    for i, record in enumerate(RECORDS):
        fast, general = renderer.render(record, i), renderer._render(record, i)
        general.doc_id = renderer.doc_id(record, i)
        assert fast == general
        assert fast.fewshot_indices == general.fewshot_indices == (0, 1)
        assert task.provenance.line(fast) == task.provenance.line(general)


def test_the_fingerprint_ignores_the_position_and_follows_the_prompt(pm_all):
    def prompts(records, **keys):
        return render_records(
            records,
            plugins=pm_all,
            doc_to_text="q",
            doc_to_choice="c",
            doc_to_target="a",
            template=keys.pop("template", "mcq"),
            doc_id="id",
            **keys,
        )

    def prints(records, **keys):
        task = load_task(
            {"data": {"test": records}, "doc_to_text": "q", "doc_to_choice": "c", "doc_to_target": "a"},
            plugins=pm_all,
            doc_id="id",
            **keys,
        )
        return {p.doc_id: task.provenance.fingerprint(p) for p in task.render()}

    base = prints(RECORDS, style="mcq")
    assert prints(list(reversed(RECORDS)), style="mcq") == base  # same record, another position
    assert len(set(base.values())) == 3
    other = prints(RECORDS, style="cloze")
    assert not set(other.values()) & set(base.values())
    assert prompts(RECORDS)[0].doc_id == "q-1"


def test_provenance_names_a_changed_version():
    plugins = {"format_prompt": {"name": "mcq", "distribution": "prompt-style", "version": "0.1.0"}}
    newer = {"format_prompt": {"name": "mcq", "distribution": "prompt-style", "version": "0.2.0"}}
    prompt = render_records([RECORDS[0]], doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq")[0]
    one = Provenance(task="t", plugins=plugins, seed=1, fewshot_split="dev").line(prompt)
    two = Provenance(task="t", plugins=newer, seed=1, fewshot_split="dev").line(prompt)
    assert json.loads(one)["distributions"] == {"prompt-style": "0.1.0"}
    assert json.loads(one)["fingerprint"] != json.loads(two)["fingerprint"]


def test_a_changed_line_no_longer_verifies(capsys):
    code, out, _ = run(capsys, "render", MMLU, "--format", "jsonl", "--limit", "1")
    row = json.loads(out)
    assert verify_fingerprint(row)
    assert verify_fingerprint({**row, "index": 99})  # the position is not part of it
    assert not verify_fingerprint({**row, "text": row["text"] + " "})
    assert not verify_fingerprint({**row, "distributions": {"prompt-style": "9"}})
    assert not verify_fingerprint({k: v for k, v in row.items() if k != "fingerprint"})
    body = {k: v for k, v in row.items() if k not in ("index", "fingerprint")}
    assert row["fingerprint"] == fingerprint(dumps_line(body))  # the documented rule


def test_a_style_field_named_like_a_provenance_key_is_an_error(pm_all):
    class Prompt:
        extra = {"task": "mine"}
        fewshot_indices = ()
        doc_id = None

        def to_json(self):
            return {"index": 3, "text": "x", "task": "mine"}

    provenance = Provenance(task="t", plugins={}, seed=1, fewshot_split=None)
    with pytest.raises(RenderError, match="'task'"):
        provenance.line(Prompt())


def test_multi_turn_requests_carry_the_record_id(capsys):
    task = ROOT / "examples" / "opencompass_multiturn" / "task.yaml"
    code, out, err = run(capsys, "render", task, "--format", "jsonl", "--limit", "2")
    assert code == 0, err
    rows = lines(out)
    assert len(rows) > 2 and {r["doc_id"] for r in rows} == {0, 1}
    assert all(verify_fingerprint(line) for line in out.splitlines())


def test_odd_ids_are_escaped_as_the_rest_of_the_line(make_task, capsys):
    records = [{**RECORDS[0], "id": "a\u2028b"}, {**RECORDS[1], "id": "\ud800"}, {**RECORDS[2], "id": [1, "x"]}]
    task = make_task({"test": RECORDS}, doc_to_text="q", doc_to_choice="c", doc_to_target="a", template="mcq")
    data = task.parent / "data" / "test.jsonl"  # ASCII escapes: a lone surrogate cannot be written as UTF-8
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = run(capsys, "render", task, "--format", "jsonl", "--doc-id", "id")
    assert code == 0, err
    assert len(out.splitlines()) == 3 and "\u2028" not in out
    assert [r["doc_id"] for r in lines(out)] == ["a\u2028b", "\ud800", [1, "x"]]
    assert all(verify_fingerprint(line) for line in out.splitlines())


def _render_in_a_process(seed: str, *argv: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPT_STYLE_")}
    env["PYTHONHASHSEED"] = seed
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_style", "render", *argv],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fingerprints_are_the_same_in_every_process_whatever_pythonhashseed(tmp_path):
    # the random retriever and a set-like field: anything hash-ordered would show
    argv = [ARC, "--format", "jsonl", "--doc-id", "id"]
    first = _render_in_a_process("0", *argv)
    assert _render_in_a_process("4242", *argv) == first
    assert _render_in_a_process("random", MMLU, "--format", "jsonl") == _render_in_a_process(
        "1", MMLU, "--format", "jsonl"
    )


# -- chat --format json agrees with render --format jsonl --------------------------------


def test_chat_json_uses_the_render_names(capsys, tmp_path):
    conversation = tmp_path / "c.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    code, out, err = run(capsys, "chat", conversation, "--meta", "chatml", "--format", "json")
    assert code == 0, err
    chat = json.loads(out)
    assert list(chat) == ["text", "token_ids", "messages", "meta", "distributions", "fingerprint"]
    assert verify_fingerprint(out)
    code, out, err = run(capsys, "render", MMLU, "--meta", "chatml", "--format", "jsonl", "--limit", "1")
    render = json.loads(out)
    # every name chat gives is one render gives for the same thing (token_ids and
    # assistant_spans when the meta template makes them)
    assert set(chat) <= set(render) | {"token_ids", "assistant_spans"}
    assert chat["meta"] == render["meta"] == "chatml"
    assert set(chat["distributions"]) <= set(render["distributions"])
