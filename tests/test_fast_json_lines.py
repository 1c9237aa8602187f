"""JSON Lines read with msgspec (the ``fast`` extra) give exactly what the standard library gives.

``data._whole_lines`` hands a large block to msgspec when it is installed; every record,
every error and every line number must be the same as without it, whatever the lines
hold. Each case is read three ways: with msgspec, with the scanner alone (msgspec made
absent) and with ``json.loads`` line by line, and all three must agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_style import DataError
from prompt_style import data as D

msgspec_json = pytest.importorskip("msgspec.json")
DECODE_LINES = msgspec_json.Decoder().decode_lines

FILLER = {"question": "Which of these is a fruit? " * 4, "choices": ["apple", "stone", "brick", "glass"], "answer": 0}


def _block(lines: list[str]) -> str:
    """Enough filler lines around ``lines`` that the block is large enough for msgspec."""
    filler = json.dumps(FILLER)
    pad = [filler] * (D._FAST_BLOCK // len(filler) + 2)
    return "\n".join([*pad, *lines, *pad]) + "\n"


def _stdlib(text: str) -> list[Any]:
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def _read(path: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> Any:
    try:
        return ("ok", list(D.iter_records(path, "test")))
    except DataError as exc:
        return ("error", str(exc))


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = _read(path)
    with monkeypatch.context() as m:
        m.setattr(D, "_FAST", [None])
        without = _read(path)
    return fast, without


def _same(got: Any, want: Any) -> bool:
    # repr: NaN is not equal to itself; types too (an int is not a float)
    return repr(got) == repr(want)


AGREEING = [
    '{"a": 1, "a": 2, "b": 3}',
    '{"x": "\\u2028 \\u2029 \\u0085 \\ud83d\\ude00 \\u0000"}',
    '{"x": "Ünïcødé — 你好 \x7f"}',
    '{"x": 0.1, "y": -0.0, "z": 1e5, "w": 5e-324, "v": 1.7976931348623157e308}',
    '{"x": 922337203685477580, "y": -922337203685477580}',
    '{"x": 9223372036854775807, "y": -9223372036854775809, "z": 123456789012345678901234567890}',
    '{"x": [], "y": {}, "z": [[[{"k": null}]]], "t": true, "f": false}',
    ' {"padded": "line"}  ',
    '{"x": "\\/\\b\\f\\n\\r\\t\\"\\\\"}',
]
DIFFERING = [  # msgspec does not read these (or might not): the scanner must read them
    '{"x": NaN, "y": Infinity, "z": -Infinity}',
    '{"x": 1e400}',
    '{"x": "\\ud800 lone"}',
    '{"deep": ' + "[" * 950 + "]" * 950 + "}",
]


@pytest.mark.parametrize("line", AGREEING + DIFFERING)
def test_records_are_json_loads_records(line, tmp_path, monkeypatch):
    path = tmp_path / "test.jsonl"
    text = _block([line])
    path.write_text(text, encoding="utf-8")
    fast, without = _both(path, monkeypatch)
    assert _same(fast, without)
    if line in AGREEING:
        assert _same(fast[1], _stdlib(text))


PADDED = ' {"padded": "line"}  '  # read by the scanner: a line break without } before it


@pytest.mark.parametrize("line", [line for line in AGREEING if line != PADDED])
def test_msgspec_reads_the_blocks_it_agrees_on(line, tmp_path):
    text = _block([line])
    records = D._fast_records(DECODE_LINES, text)
    assert records is not None and _same(records, _stdlib(text))


@pytest.mark.parametrize("line", DIFFERING)
def test_msgspec_gives_up_on_what_it_does_not_read(line, tmp_path):
    text = _block([line])
    assert D._fast_records(DECODE_LINES, text) is None


@pytest.mark.parametrize(
    "line",
    [
        "",  # a blank line in the middle
        "   ",
        "[1, 2]",
        '"a string"',
        "3",
        '{"a": 1} {"b": 2}',
        '{"a": 1},{"b": 2}',
        '{"a": "x',  # a string broken over two lines
        'y"}',
        '{"a": tru}',
        '{"a": "\x01"}',
    ],
)
def test_bad_or_odd_lines_give_the_same_records_or_error(line, tmp_path, monkeypatch):
    path = tmp_path / "test.jsonl"
    path.write_text(_block([line]), encoding="utf-8")
    fast, without = _both(path, monkeypatch)
    assert fast == without


@pytest.mark.parametrize(
    "lines",
    [
        # two records on one line, and one record over two lines: as many records as lines
        ['{"a": 1} {"b": 2}', '{"c":', "3}"],
        ['{"a": 1}{"b": 2}', '{"c": {}', "}"],
        # two on one line, and a blank line
        ['{"a": 1} {"b": 2}', ""],
        ["", '{"a": 1} {"b": 2}'],
        ['{"a": 1} {"b": 2}', "  "],
        # a string broken over two lines is not JSON; with a comma between two records
        ['{"a": "x}', '{"}', '{"b": 1}'],
    ],
)
def test_lines_that_cancel_out_are_not_counted_as_records(lines, tmp_path, monkeypatch):
    # the same number of records as line breaks, but not one record a line: the scanner
    # reads the block, and says which line is wrong
    text = _block(lines)
    assert D._fast_records(DECODE_LINES, text) is None
    assert D._fast_records(DECODE_LINES, text.encode()) is None
    path = tmp_path / "test.jsonl"
    path.write_text(text, encoding="utf-8")
    fast, without = _both(path, monkeypatch)
    assert fast == without and fast[0] == "error"


def test_random_blocks_give_json_loads_records_or_none():
    # blocks mixing good lines with every kind of line that is not one record: msgspec
    # gives exactly json.loads's records, line by line, or leaves the block to the scanner
    import random

    rng = random.Random(7)
    kinds = [
        '{"q": "a } { b", "n": [1, {"k": {}}]}',
        '{"q": "x"}',
        "{}",
        ' {"pad": 1}',
        '{"pad": 2} ',
        '{"a": 1} {"b": 2}',
        '{"a": 1}{"b": 2}',
        '{"a": 1},{"b": 2}',
        "",
        "   ",
        '{"c":',
        "3}",
        '{"d": {}',
        "}",
        '{"e": "x}',
        '{"}',
        "[1]",
        "7",
    ]
    filler = json.dumps(FILLER)
    seen = {"fast": 0, "none": 0}
    for _ in range(400):
        lines = [rng.choice(kinds) if rng.random() < 0.3 else filler for _ in range(rng.randint(1, 12))]
        text = "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")
        read = text.split("\n")
        if text.endswith("\n"):
            read.pop()  # the last line's line break
        try:
            want: Any = [json.loads(line) for line in read]
        except ValueError:
            want = None
        for body in (text, text.encode()):
            got = D._fast_records(DECODE_LINES, body)
            seen["none" if got is None else "fast"] += 1
            assert got is None or (want is not None and _same(got, want)), text
    assert min(seen.values()) > 100  # both outcomes were tried


def test_many_brackets_on_shallow_lines_stay_on_the_fast_path(tmp_path):
    text = _block(['{"m": [' + "[[1], [2]], " * 10 + "0]}"] * 100)
    assert D._fast_records(DECODE_LINES, text) is not None


@pytest.mark.parametrize("lines", [AGREEING, [*AGREEING, *DIFFERING], [*AGREEING, "", "[1]"]])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])  # CR LF kept as read in bytes
def test_byte_blocks_of_the_parallel_reader_agree(lines, newline, tmp_path, monkeypatch):
    block = _block(lines).replace("\n", newline).encode("utf-8")
    path = tmp_path / "test.jsonl"
    got = D.block_records(block, "test", path, 1, 0)
    with monkeypatch.context() as m:
        m.setattr(D, "_FAST", [None])
        want = D.block_records(block, "test", path, 1, 0)
    assert _same(got, want)


def test_small_files_do_not_import_msgspec(tmp_path, monkeypatch):
    monkeypatch.setattr(D, "_FAST", [])
    path = tmp_path / "test.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n', encoding="utf-8")
    assert list(D.iter_records(path, "test")) == [{"a": 1}, {"a": 2}]
    assert D._FAST == []  # not looked up for a block under _FAST_BLOCK


def _many_blocks(middle: bytes, tail: bytes = b"") -> bytes:
    """Several 64 KiB blocks of good lines, ``middle`` in the middle, ``tail`` at the end."""
    line = json.dumps(FILLER).encode() + b"\n"
    pad = line * (3 * D._BLOCK // len(line))
    return pad + middle + pad + tail


FILES = {
    "plain": _many_blocks(b""),
    "bom": D._BOM + _many_blocks(b""),
    "crlf": _many_blocks(b"").replace(b"\n", b"\r\n"),
    "one-crlf-line": _many_blocks(b'{"a": 1}\r\n'),
    "lone-cr": _many_blocks(b'{"a": 1}\r{"b": 2}\n'),
    "no-final-newline": _many_blocks(b"", b'{"last": "line"}'),
    "blank-lines": _many_blocks(b"\n\n   \n"),
    "bad-utf8": _many_blocks(b'{"a": "\xff"}\n'),
    "encoded-surrogate": _many_blocks(b'{"a": "\xed\xa0\x80"}\n'),
    "bad-json": _many_blocks(b'{"a": tru}\n'),
    "not-an-object": _many_blocks(b"[1, 2]\n"),
    "long-line": _many_blocks(b'{"long": "' + b"x" * (3 * D._BLOCK) + b'"}\n'),
    "long-non-ascii-line": _many_blocks(b'{"long": "' + "é".encode() * (2 * D._BLOCK) + b'"}\n'),
    "u2028": _many_blocks('{"a": "x\u2028y\x85z"}\n'.encode()),
    "bom-mid-file": _many_blocks(D._BOM + b'{"a": 1}\n'),
}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("max_line_length", [None, 100_000, 1000])
def test_byte_reader_gives_the_text_readers_records_and_errors(name, max_line_length, tmp_path, monkeypatch):
    from prompt_style.safe.limits import configured

    path = tmp_path / "test.jsonl"
    path.write_bytes(FILES[name])
    with configured({} if max_line_length is None else {"max_line_length": max_line_length}):
        fast, without = _both(path, monkeypatch)
    assert _same(fast, without), name


def test_byte_reader_maps_with_the_same_indices(tmp_path, monkeypatch):
    path = tmp_path / "test.jsonl"
    path.write_bytes(FILES["one-crlf-line"])  # the bytes, then the text reader from that block

    def fn(record, index):
        return (index, record.get("a"))

    fast = list(D.map_records(path, "test", fn, fn))
    with monkeypatch.context() as m:
        m.setattr(D, "_FAST", [None])
        without = list(D.map_records(path, "test", fn, fn))
    assert fast == without and [i for i, _ in fast] == list(range(len(fast)))
