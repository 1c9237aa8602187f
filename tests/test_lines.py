"""JSON lines of rendered prompts: PromptEncoder and LineWriter write exactly
``dumps_line(prompt.to_json()) + "\\n"`` per prompt, whatever the prompt holds."""

from __future__ import annotations

import io
import json
import sys

import pytest

from prompt_style import RenderedPrompt, render_records
from prompt_style.errors import RenderError
from prompt_style.lines import PromptEncoder
from prompt_style.safe import json_lines
from prompt_style.safe.json_lines import LineWriter, dumps_line, encode_str, escape_unsafe, json_utf8, safe_utf8
from prompt_style.types import Turn

AWKWARD = [
    "plain ascii",
    "",
    'quotes " and \\ backslash \n newline \t tab \x00 nul \x1f',
    "Ünïcødé — 你好 😀",
    "line\u2028separator and paragraph\u2029end and next line\x85",
    "lone \ud800 surrogate and \udfff",
    "mixed \u2028 with \ud83d",
]


def prompts() -> list[RenderedPrompt]:
    out = []
    for i, text in enumerate(AWKWARD):
        out.append(RenderedPrompt(i, text, None, (" A", " B"), 1, {}))
        out.append(RenderedPrompt(i, text, None, (), text, {}, until=("\n\n", text)))
        out.append(RenderedPrompt(i, None, [{"role": "user", "content": text}], (text,), None, {}))
        out.append(RenderedPrompt(i, text, None, [text, "x"], [1, 2], {}, extra={"answer_choices": [text]}))
        out.append(RenderedPrompt(i, text, None, (), 1.5, {}, token_ids=[1, 2, 3]))
        out.append(RenderedPrompt(i, text, None, (), True, {}, turn=2))
        out.append(RenderedPrompt(i, text, None, (), {"k": text}, {}, mode="gen"))
        # the common keys then mode, dialogue and extra fields: encoded member by member
        dialogue = (Turn("user", text, fallback_role="HUMAN"), Turn("assistant", "x", section="ice"))
        extra = {"answer_choices": None, f"key {text}": [text, 1], "nan": float("nan"), "big": [[text], {"k": 1.5}]}
        out.append(RenderedPrompt(i, text, None, (" A",), 0, {}, dialogue=dialogue, mode="gen", extra=extra))
        # OpenCompass dialogues: turns every prompt shares (their JSON kept), raw items,
        # multimodal parts and extra keys (written by json.dumps)
        shared = (
            Turn("SYSTEM", "Shared ü \u2028", section="begin", fallback_role="HUMAN"),
            Turn("", "raw\n", "\n", section="ice"),
        )
        out.append(
            RenderedPrompt(i, text, None, (), "A", {}, dialogue=(*shared, Turn("HUMAN", text, "\n")), mode="gen")
        )
        parts = (Turn("user", ({"type": "text", "text": text},)),)
        out.append(RenderedPrompt(i, None, None, (), None, {}, dialogue=parts, mode="gen"))
        named = (*shared, Turn("user", text, extra={"name": text}))
        out.append(RenderedPrompt(i, text, None, (), None, {}, dialogue=named, mode="gen"))
        out.append(RenderedPrompt(i, text, None, (), text, {}, until=(text,), extra={"target": "a clash", "x": 1}))
        out.append(RenderedPrompt(i, None, [{"role": "user", "content": text}], (), None, {}, extra={"c": [text]}))
    return out


def expected_lines(items) -> str:
    return "".join(dumps_line(p.to_json()) + "\n" for p in items)


def reference_provenance_line(provenance, prompt) -> str:
    """A line with provenance as it was made before PromptEncoder: to_json(),
    json.dumps, the per-record keys, the task's fragment, the SHA-256 of the rest."""
    import hashlib

    from prompt_style.provenance import _doc_id

    value = prompt.to_json()
    index = value.pop("index")
    body = dumps_line(value)
    ids = prompt.fewshot_indices
    shown = "null" if ids is None else "[" + ", ".join(map(str, ids)) + "]"
    after = f', "fewshot_indices": {shown}, {provenance._tail}}}'
    rest = (f', "doc_id": {index}' if prompt.doc_id is None else f", {_doc_id(prompt.doc_id, index)}") + after
    digest = hashlib.sha256(body[:-1].encode("utf-8", "surrogatepass") + rest.encode("utf-8", "surrogatepass"))
    return f'{{"index": {index}, {body[1:-1]}{rest[:-1]}, "fingerprint": "sha256:{digest.hexdigest()}"}}'


def expected_provenance_lines(task, items) -> str:
    return "".join(reference_provenance_line(task.provenance, p) + "\n" for p in items)


def test_encoder_gives_dumps_line_bytes():
    encoder = PromptEncoder()
    for p in prompts():
        assert encoder.line(p) == (dumps_line(p.to_json()) + "\n").encode("utf-8")
        body = p.to_json()
        del body["index"]
        assert encoder.members(p) == dumps_line(body)[1:-1].encode("utf-8")


def test_safe_utf8_is_escape_unsafe_encoded():
    for text in AWKWARD:
        for piece in (text, json.dumps(text, ensure_ascii=False)):
            assert safe_utf8(piece) == escape_unsafe(piece).encode("utf-8")
    # pieces made safe one by one join to the whole made safe
    whole = "".join(AWKWARD)
    assert b"".join(safe_utf8(t) for t in AWKWARD) == safe_utf8(whole)


@pytest.mark.parametrize("fast", [True, False], ids=["msgspec", "stdlib"])
def test_json_utf8_is_the_safe_json_string_whoever_makes_it(fast, monkeypatch):
    if fast:
        msgspec_json = pytest.importorskip("msgspec.json")
        monkeypatch.setattr(json_lines, "_ENCODE", [msgspec_json.Encoder().encode])
    else:
        monkeypatch.setattr(json_lines, "_ENCODE", [None])
        monkeypatch.setattr(json_lines, "_WAIT", [0])

    class Text(str):
        pass

    texts = [*AWKWARD, Text("a subclass\n"), "\x7f DEL", "/ slash"]
    # every code point, a block at a time (a lone surrogate among them: its own text)
    for start in range(0, 0x110000, 0x2000):
        texts.append("".join(chr(c) for c in range(start, min(start + 0x2000, 0x110000)) if not 0xD800 <= c < 0xE000))
    texts += [chr(c) for c in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x10FFFF)]
    for text in texts:
        assert json_utf8(text) == safe_utf8(encode_str(text)), repr(text[:20])
    for value in (1, None, ["a"], b"x"):
        with pytest.raises(TypeError):
            json_utf8(value)


def test_msgspec_is_looked_up_once_enough_text_was_encoded(monkeypatch):
    pytest.importorskip("msgspec")
    monkeypatch.setattr(json_lines, "_ENCODE", [None])
    monkeypatch.setattr(json_lines, "_WAIT", [10])
    assert json_utf8("12345") == b'"12345"' and json_lines._ENCODE == [None]
    assert json_utf8("678901\u2028") == b'"678901\\u2028"' and json_lines._ENCODE[0] is not None
    assert json_utf8("é\n") == '"é\\n"'.encode()


def test_encoder_shared_tuples_are_reused_but_never_confused():
    encoder = PromptEncoder()
    conts = (" A", " B")
    first = encoder.line(RenderedPrompt(0, "q", None, conts, 0, {}))
    again = encoder.line(RenderedPrompt(1, "q", None, conts, 0, {}))
    other = encoder.line(RenderedPrompt(2, "q", None, (" C",), 0, {}))
    assert json.loads(first)["continuations"] == json.loads(again)["continuations"] == [" A", " B"]
    assert json.loads(other)["continuations"] == [" C"]


@pytest.mark.parametrize("batch", [1, 2, 256])
def test_line_writer_text_stream(batch):
    items = prompts()
    encoder = PromptEncoder()
    out = io.StringIO()
    assert LineWriter(out, batch=batch).write_all(encoder.line(p) for p in items) == len(items)
    assert out.getvalue() == expected_lines(items)


@pytest.mark.parametrize("batch", [1, 3, 256])
def test_line_writer_binary_stream(batch):
    items = prompts()
    encoder = PromptEncoder()
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=False)
    out.write("before\n")  # text written before comes first
    LineWriter(out, batch=batch).write_all(encoder.line(p) for p in items)
    data = raw.getvalue().decode("utf-8")  # valid UTF-8: every lone surrogate escaped
    assert data == "before\n" + expected_lines(items)
    assert len(data.splitlines()) == len(items) + 1  # U+2028 and friends escaped: one line per prompt


@pytest.mark.parametrize("binary", [False, True])
def test_line_writer_batches(binary):
    """write_batches writes each list of lines joined, to the text or the binary layer,
    and what came before an error is written before the error propagates."""
    items = prompts()
    encoder = PromptEncoder()
    lines = [encoder.line(p) for p in items]
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=False) if binary else io.StringIO()
    out.write("before\n")
    assert LineWriter(out).write_batches([lines[:2], lines[2:]]) == len(items)
    got = raw.getvalue().decode("utf-8") if binary else out.getvalue()
    assert got == "before\n" + expected_lines(items)

    def failing():
        yield lines[:2]
        raise ValueError("stop")

    out = io.StringIO()
    with pytest.raises(ValueError, match="stop"):
        LineWriter(out).write_batches(failing())
    assert out.getvalue() == "".join(line.decode("utf-8") for line in lines[:2])


def test_escape_unsafe_leaves_safe_text_alone():
    text = json.dumps("Ünïcødé", ensure_ascii=False)
    assert escape_unsafe(text) is text
    assert escape_unsafe('"\u2028"') == '"\\u2028"'


def test_encoder_default_names_the_record():
    def default_for(index):
        def default(value):
            raise RenderError(f"cannot hold {type(value).__name__}", index=index)

        return default

    encoder = PromptEncoder(default_for)
    with pytest.raises(RenderError):
        encoder.line(RenderedPrompt(7, "q", None, (), {1, 2}, {}))
    with pytest.raises(RenderError):
        encoder.line(RenderedPrompt(7, "q", [{"x": object()}], (), 1, {}))


def test_fast_path_prompts_encode_as_general_ones():
    records = [{"q": t, "c": ["x", t or "y"], "a": 1} for t in AWKWARD]
    for shots in (0, 3):  # the shared head holds them too
        for description in (None, "About \u2028 \ud800 things:\n"):
            keys = {"description": description} if description else {}
            rendered = render_records(
                records,
                fewshot=list(reversed(records)),
                num_fewshot=shots,
                doc_to_text="q",
                doc_to_choice="c",
                doc_to_target="a",
                template="mcq",
                **keys,
            )
            assert type(rendered[0]).__name__ == "LazyDialoguePrompt"  # the fast path made them
            encoder = PromptEncoder()
            for p in rendered:
                plain = RenderedPrompt(p.index, p.text, p.messages, p.continuations, p.target, p.plugins, until=p.until)
                assert p.to_json() == plain.to_json()
                assert encoder.line(p) == (dumps_line(plain.to_json()) + "\n").encode("utf-8")
                assert encoder.members(p) == encoder.line(p)[len(b'{"index": %d, ' % p.index) : -2]


def test_cli_jsonl_lines_are_dumps_line(tmp_path, capsys):
    from prompt_style.cli import main

    data = tmp_path / "test.jsonl"
    data.write_text(
        "".join(json.dumps({"q": t, "c": ["x", "y\u2028"], "a": 0}) + "\n" for t in AWKWARD), encoding="utf-8"
    )
    task = tmp_path / "task.yaml"
    task.write_text("data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: a\ntemplate: mcq\n")
    assert main(["render", str(task), "--format", "jsonl"]) == 0
    out = capsys.readouterr().out
    from prompt_style import load_task

    loaded = load_task(task)
    assert out == expected_provenance_lines(loaded, loaded.render())
    assert sys.stdout is not None


@pytest.mark.parametrize(
    "order, python",
    [
        (["--shuffle-choices", "7"], "shuffle:7"),
        (["--circular"], "circular"),
        (["--choice-order", "reversed"], "reversed"),
    ],
)
def test_cli_jsonl_with_choice_orders_is_dumps_line(tmp_path, capsys, order, python):
    from prompt_style import load_task
    from prompt_style.cli import main

    data = tmp_path / "test.jsonl"
    data.write_text(
        "".join(json.dumps({"q": f"q{i} \u2028", "c": ["w", "x", "y", "z"], "a": i % 4}) + "\n" for i in range(12)),
        encoding="utf-8",
    )
    task = tmp_path / "task.yaml"
    task.write_text("data: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_choice: c\ndoc_to_target: a\ntemplate: mcq\n")
    code = main(["render", str(task), "--format", "jsonl", *order])
    out = capsys.readouterr().out
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert all("permutation" in row for row in rows)
    loaded = load_task(task, choice_order=python)
    expected = []
    for index, record in enumerate(loaded.records()):
        expected.extend(loaded.renderer.render_ordered(record, index))
    assert [r["text"] for r in rows] == [p.text for p in expected]
    assert out == expected_provenance_lines(loaded, expected)


@pytest.mark.parametrize("doc_id", [None, "id", "{{q}}"])
def test_provenance_lines_are_the_reference_bytes(doc_id):
    """Provenance.line (and the CLI's line_bytes) give the bytes the line had before
    PromptEncoder, for every awkward prompt, fast path or not, chat or not."""
    from prompt_style import load_task
    from prompt_style.provenance import verify_fingerprint

    records = [{"q": t, "c": ["x", t or "y"], "a": 1, "id": f"r{i}\u2028"} for i, t in enumerate(AWKWARD)]
    for meta in ("plain", "chatml"):
        for template in ("mcq", "cloze::qa", "passthrough"):
            keys = {"doc_id": doc_id} if doc_id else {}
            task = load_task(
                {
                    "data": {"test": records, "dev": records[::-1]},
                    "fewshot_split": "dev",
                    "num_fewshot": 2,
                    "doc_to_text": "q",
                    "doc_to_choice": "c",
                    "doc_to_target": "a",
                    "template": template,
                    "description": "About \u2028 things\n",
                    **keys,
                },
                meta=meta,
            )
            encoder = PromptEncoder()
            for prompt in task.render():
                want = reference_provenance_line(task.provenance, prompt)
                assert task.provenance.line(prompt) == want
                got = task.provenance.line_bytes(prompt, encoder)
                assert got == (want + "\n").encode("utf-8")
                assert verify_fingerprint(want)


@pytest.mark.parametrize(
    "order", [{"choice_order": "shuffle:7"}, {"choice_order": "circular"}, {"choice_order": "reversed"}]
)
@pytest.mark.parametrize("meta", ["plain", "chatml", "messages"])
@pytest.mark.parametrize("retriever", ["first_n", "random"])
def test_lines_of_choice_orders_are_their_json(pm_all, order, meta, retriever):
    """A prompt under a choice order (its ``permutation``, in circular evaluation its
    ``rotation`` and ``circular_pattern``) is written by the encoder around the task's
    shared text, as ``to_json()`` and ``json.dumps`` write it; and its line with
    provenance holds a fingerprint that verifies."""
    from prompt_style import load_task
    from prompt_style.provenance import verify_fingerprint

    records = [
        {"q": "Plain question?", "c": ["a", "b", "c", "d"], "a": 1},
        {"q": 'Ünï \u2028 {x} "q"', "c": ["α", "β\n", " γ "], "a": 2},
        {"q": "two", "c": ["x", "y"], "a": 0},
    ] * 3
    pool = [{"q": f"Shot {i}?", "c": ["p", "q", "r"], "a": i % 3} for i in range(6)]
    task = {
        "data": {"test": records, "dev": pool},
        "fewshot_split": "dev",
        "doc_to_text": "q",
        "doc_to_choice": "c",
        "doc_to_target": "a",
        "template": "mcq::mmlu" if "mcq::mmlu" in pm_all.names("format_prompt") else "mcq",
        "num_fewshot": 2,
        "retriever": retriever,
        "description": "About things.\n\n",
    }
    loaded = load_task(task, plugins=pm_all, meta=meta, **order)
    encoder = PromptEncoder()
    made = list(loaded.render())
    assert made and all(p.permutation is not None for p in made)
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
    lines = list(loaded.json_lines())
    assert len(lines) == len(made)
    for line, prompt in zip(lines, made):
        value = json.loads(line)
        assert verify_fingerprint(line.decode("utf-8"))
        assert value["permutation"] == list(prompt.permutation) and value["text"] == prompt.text
