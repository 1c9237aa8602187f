"""``render --jobs N`` and :func:`prompt_style.parallel.map_rendered`: worker processes
give the serial output, byte for byte and in order, errors included."""

from __future__ import annotations

import json
import operator
from pathlib import Path

import pytest

import prompt_style
from prompt_style import DataError, OptionError
from prompt_style.cli import main
from prompt_style.parallel import map_rendered

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
RECORDS = [json.loads(line) for line in (ROOT / "examples" / "mmlu" / "data" / "test.jsonl").open(encoding="utf-8")]


# a function the spawned workers can import by name (test modules are not importable there)
_text = operator.attrgetter("index", "text", "target")


def _task_file(tmp_path: Path, lines: list[str], **keys) -> Path:
    data = tmp_path / "test.jsonl"
    data.write_text("".join(lines), encoding="utf-8")
    dev = ROOT / "examples" / "mmlu" / "data" / "dev.jsonl"
    task = {
        "task": "t",
        "data": {"test": str(data), "dev": str(dev)},
        "doc_to_text": "question",
        "doc_to_choice": "choices",
        "doc_to_target": "answer",
        "template": "mcq",
        "num_fewshot": 2,
        "fewshot_split": "dev",
        "retriever": "random",
        **keys,
    }
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task), encoding="utf-8")
    return path


def test_workers_give_the_serial_output_in_order(tmp_path):
    # blank lines, a BOM and uneven chunks: indices and examples as in the serial render
    lines = ["\ufeff" + json.dumps(RECORDS[0]) + "\n", "\n", "  \n"]
    lines += [json.dumps(RECORDS[i % len(RECORDS)]) + "\n" for i in range(1, 60)]
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    serial = [_text(r) for r in task.render()]
    assert list(map_rendered(task, _text, jobs=2, chunk_size=7)) == serial
    assert list(map_rendered(task, _text, jobs=2, chunk_size=7, limit=10)) == serial[:10]


def test_a_bad_line_is_the_serial_error_after_the_records_before_it(tmp_path):
    lines = [json.dumps(RECORDS[i]) + "\n" for i in range(12)] + ["{not json\n"] + [json.dumps(RECORDS[0]) + "\n"]
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    with pytest.raises(DataError) as serial:
        list(task.render())
    got = []
    with pytest.raises(DataError) as parallel:
        for piece in map_rendered(task, _text, jobs=2, chunk_size=5):
            got.append(piece)
    assert str(parallel.value) == str(serial.value)
    assert "test.jsonl:13:" in str(parallel.value)
    assert got == [_text(r) for r in prompt_style.load_task(task.config).render(limit=12)]  # as the serial render


def test_records_in_memory_and_json_arrays(tmp_path):
    json_file = tmp_path / "test.json"
    json_file.write_text(json.dumps(RECORDS), encoding="utf-8")
    task = prompt_style.load_task(MMLU, data={"test": str(json_file)}, shots=1)
    serial = [_text(r) for r in task.render()]
    assert list(map_rendered(task, _text, jobs=2, chunk_size=4)) == serial


def test_jobs_must_be_positive():
    task = prompt_style.load_task(MMLU)
    with pytest.raises(OptionError, match="jobs"):
        list(map_rendered(task, _text, jobs=0))


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_cli_jobs_gives_the_same_bytes(fmt, capsys):
    assert main(["render", str(MMLU), "--format", fmt, "--shots", "3"]) == 0
    serial = capsys.readouterr().out
    assert main(["render", str(MMLU), "--format", fmt, "--shots", "3", "--jobs", "2"]) == 0
    assert capsys.readouterr().out == serial


def test_cli_jobs_error_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(RECORDS[0]) + "\n[1, 2]\n", encoding="utf-8")
    assert main(["render", str(MMLU), "--data", f"test={bad}", "--jobs", "2", "--format", "jsonl"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "bad.jsonl:2" in captured.err and "not an object" in captured.err
    assert captured.out.count("\n") == 1  # the record before it


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_cli_bad_jobs(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["render", str(MMLU), "--jobs", value])
    assert exc.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def test_a_function_workers_cannot_import_is_an_error_not_a_hang():
    task = prompt_style.load_task(MMLU)

    def local(result):  # not importable by name
        return result.text

    with pytest.raises(prompt_style.RenderError, match="cannot be sent to worker processes"):
        list(map_rendered(task, local, jobs=2))


# -- render --format jsonl --jobs N: blocks of the data file, read by the workers --------

AWKWARD_LINES = [
    "\ufeff" + json.dumps(RECORDS[0]) + "\r\n",  # a BOM and CRLF
    "\n",
    "  \t\n",
    "\u3000\n",  # whitespace that str.strip() drops: a blank line to the readers
    json.dumps({**RECORDS[1], "question": 'ünïcødé — \u2028 line "sep"'}, ensure_ascii=False) + "\r",  # a lone CR
    "  " + json.dumps(RECORDS[2]) + "\n",  # not starting with {
]


def _blocks_output(task, **options) -> bytes:
    from prompt_style.cli.render import _not_json
    from prompt_style.parallel import json_line_blocks

    blocks = json_line_blocks(task, jobs=2, default_for=_not_json, **options)
    return b"".join(lines for lines, _ in blocks)


@pytest.mark.parametrize("block_size", [64, 1000, 1 << 20])
def test_blocks_give_the_serial_lines(tmp_path, block_size):
    from prompt_style.cli.render import _not_json

    lines = AWKWARD_LINES + [json.dumps(RECORDS[i % len(RECORDS)]) + "\n" for i in range(3, 50)]
    lines[-1] = lines[-1].rstrip("\n")  # no newline at the end
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    serial = b"".join(task.json_lines(default_for=_not_json))
    assert _blocks_output(task, block_size=block_size) == serial
    assert _blocks_output(task, block_size=block_size, limit=7) == b"".join(
        task.json_lines(limit=7, default_for=_not_json)
    )
    # spilled to files, the same lines
    from prompt_style.parallel import json_line_blocks

    spill = tmp_path / "spill"
    spill.mkdir()
    names = [
        n for n, _ in json_line_blocks(task, jobs=2, block_size=block_size, spill=str(spill), default_for=_not_json)
    ]
    assert b"".join(Path(n).read_bytes() for n in names) == serial


@pytest.mark.parametrize(
    ("bad", "message"),
    [("{not json\n", "not valid JSON"), ("[1, 2]\n", "not an object"), ("\xff\n", "not UTF-8")],
)
def test_a_bad_line_in_a_later_block_is_the_serial_error(tmp_path, bad, message):
    from prompt_style.cli.render import _not_json

    lines = [json.dumps(RECORDS[i % len(RECORDS)]) + "\n" for i in range(40)]
    lines.insert(30, bad)
    path = _task_file(tmp_path, lines)
    data = tmp_path / "test.jsonl"
    data.write_bytes(data.read_bytes().replace("\xff".encode(), b"\xff"))  # a byte that is not UTF-8
    task = prompt_style.load_task(path)
    serial_lines = []
    with pytest.raises(DataError) as serial:
        for line in task.json_lines(default_for=_not_json):
            serial_lines.append(line)
    got = []
    with pytest.raises(DataError) as parallel:
        for lines_, _ in __import__("prompt_style.parallel", fromlist=["x"]).json_line_blocks(
            task, jobs=2, block_size=500, default_for=_not_json
        ):
            got.append(lines_)
    assert message in str(parallel.value) and message in str(serial.value)
    assert parallel.value.line == serial.value.line or message == "not UTF-8"
    assert parallel.value.key == "data.test"
    if message != "not UTF-8":  # (the serial reader stops at its own block for that one)
        assert b"".join(got) == b"".join(serial_lines)


def test_cli_jobs_jsonl_to_a_file_is_the_serial_file(tmp_path, capsys):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["render", str(MMLU), "--format", "jsonl", "--output", str(one)]) == 0
    assert main(["render", str(MMLU), "--format", "jsonl", "--jobs", "2", "--output", str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
