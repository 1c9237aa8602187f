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


def _lines(count: int, start: int = 0) -> list[str]:
    return [json.dumps(RECORDS[i % len(RECORDS)]) + "\n" for i in range(start, start + count)]


@pytest.mark.parametrize("block_size", [1, 37, 300, 1 << 18])
def test_blocks_of_any_size_give_the_serial_output(tmp_path, block_size):
    # blocks cut mid-line, lines longer than a block, blank and padded lines (one of
    # Unicode spaces), CRLF and lone CR line ends, a BOM, no newline at the end
    lines = ["\ufeff" + _lines(1)[0], "\n", "  \t\n", "\u00a0\u3000\n"] + _lines(5, 1)
    lines += [_lines(1, 6)[0].replace("\n", "\r\n"), _lines(1, 7)[0].replace("\n", "\r")]
    lines += [" " + _lines(1, 8)[0]] + _lines(4, 9) + [_lines(1, 13)[0].rstrip("\n")]
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    serial = [_text(r) for r in task.render()]
    assert len(serial) == 14
    assert list(map_rendered(task, _text, jobs=2, block_size=block_size)) == serial
    for limit in (1, 5, 14, 20):
        assert list(map_rendered(task, _text, jobs=2, block_size=block_size, limit=limit)) == serial[:limit]


@pytest.mark.parametrize(
    ("bad", "message"),
    [("{not json\n", "not valid JSON"), ("[1, 2]\n", "not an object"), ('{"a": 1} x\n', "not valid JSON")],
)
def test_a_bad_line_in_a_later_block_has_its_line_number(tmp_path, bad, message):
    lines = _lines(30) + ["\n", "\r\n"] + _lines(7, 30) + [bad] + _lines(3)
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    with pytest.raises(DataError) as serial:
        list(task.render())
    expected = [_text(r) for r in prompt_style.load_task(task.config).render(limit=37)]
    for block_size in (200, 4000, 1 << 18):
        got = []
        with pytest.raises(DataError) as parallel:
            for piece in map_rendered(task, _text, jobs=2, block_size=block_size):
                got.append(piece)
        assert str(parallel.value) == str(serial.value)
        assert "test.jsonl:40:" in str(parallel.value) and message in str(parallel.value)
        assert parallel.value.key == "data.test"
        assert got == expected
    # a bad line past --limit is never read, as in the serial render
    assert list(map_rendered(task, _text, jobs=2, block_size=300, limit=37)) == expected


def test_bytes_that_are_not_utf8_are_the_serial_error(tmp_path):
    task_file = _task_file(tmp_path, _lines(20))
    data = tmp_path / "test.jsonl"
    data.write_bytes(data.read_bytes() + b'{"question": "\xff"}\n' + "".join(_lines(2)).encode())
    task = prompt_style.load_task(task_file)
    (tmp_path / "good").mkdir()
    expected = [_text(r) for r in prompt_style.load_task(_task_file(tmp_path / "good", _lines(20))).render()]
    with pytest.raises(DataError) as serial:
        list(task.render())
    for block_size in (100, 1 << 18):
        got = []
        with pytest.raises(DataError) as parallel:
            for piece in map_rendered(task, _text, jobs=2, block_size=block_size):
                got.append(piece)
        assert str(parallel.value) == str(serial.value)
        assert "not UTF-8" in str(parallel.value)
        assert got == expected  # the records before it (the serial reader stops a block earlier)


@pytest.mark.parametrize("where", ["first", "later"])
def test_a_line_over_max_line_length_is_the_serial_error(tmp_path, where):
    from prompt_style.safe.limits import configured, parse_assignments

    long = json.dumps({**RECORDS[0], "question": "x" * 3000}) + "\n"
    lines = [long] + _lines(10) if where == "first" else _lines(10) + ["\n", long] + _lines(2)
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    with configured(parse_assignments(["max_line_length=2000"], what="--budget")):
        with pytest.raises(DataError) as serial:
            list(task.render())
        for block_size in (100, 1 << 18):  # the line spans blocks, or sits inside one
            got = []
            with pytest.raises(DataError) as parallel:
                for piece in map_rendered(task, _text, jobs=2, block_size=block_size):
                    got.append(piece)
            assert str(parallel.value) == str(serial.value)
            assert f"test.jsonl:{1 if where == 'first' else 12}:" in str(parallel.value)
            assert len(got) == (0 if where == "first" else 10)
        # a line of exactly the limit (its newline aside) is read
        exact = json.dumps({**RECORDS[0], "question": "y" * 10})
        exact = exact.replace("y" * 10, "y" * (10 + 2000 - len(exact))) + "\n"
        task = prompt_style.load_task(_task_file(tmp_path, _lines(3) + [exact]))
        serial_ok = [_text(r) for r in task.render()]
        assert list(map_rendered(task, _text, jobs=2, block_size=100)) == serial_ok


def test_a_file_of_blank_lines_has_no_records(tmp_path):
    data = tmp_path / "blank.jsonl"
    data.write_text("\n  \n\r\n", encoding="utf-8")
    task = prompt_style.load_task(MMLU, data={"test": str(data)}, shots=0)
    with pytest.raises(DataError) as serial:
        list(task.render())
    with pytest.raises(DataError) as parallel:
        list(map_rendered(task, _text, jobs=2))
    assert str(parallel.value) == str(serial.value)
    assert "no records" in str(parallel.value)


def test_cli_jobs_progress_and_output_file(tmp_path, capsys):
    out1, out2 = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["render", str(MMLU), "--format", "jsonl", "--output", str(out1)]) == 0
    assert main(["render", str(MMLU), "--format", "jsonl", "--output", str(out2), "--jobs", "2"]) == 0
    assert out1.read_bytes() == out2.read_bytes()


def test_blocks_in_one_process_give_the_outputs_before_an_error(tmp_path):
    from prompt_style.parallel import map_rendered_blocks

    lines = _lines(12) + ["{not json\n"]
    task = prompt_style.load_task(_task_file(tmp_path, lines))
    got = []
    with pytest.raises(DataError, match="test.jsonl:13"):
        for piece, _count in map_rendered_blocks(task, _text, list, jobs=1, chunk_size=5):
            got.extend(piece)
    assert got == [_text(r) for r in prompt_style.load_task(task.config).render(limit=12)]
