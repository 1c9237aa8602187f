"""``prompt-style view``: prompts with whitespace and special tokens visible, the
differences between two variants, and the HTML page (opened in headless Chromium)."""

from __future__ import annotations

import gzip
import html.parser
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import prompt_style
from prompt_style.cli import main
from prompt_style.cli._visible import Painter, segments, special_pattern, token_pieces

ROOT = Path(__file__).resolve().parents[1]
MMLU = str(ROOT / "examples" / "mmlu" / "task.yaml")
OC = str(ROOT / "examples" / "opencompass" / "task.yaml")
OC_DATA = ["--data", f"test={ROOT / 'examples/opencompass/data/test.jsonl'}"]
OC_DATA += ["--data", f"dev={ROOT / 'examples/opencompass/data/dev.jsonl'}"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# An lm-evaluation-harness task over the OpenCompass example's columns, as an export of
# the OpenCompass config would read them.
LM_EVAL_TASK = """\
task: demo_mmlu_lm_eval
dataset_path: demo
test_split: test
fewshot_split: dev
output_type: multiple_choice
doc_to_text: "Question: {{input}}\\nA. {{A}}\\nB. {{B}}\\nC. {{C}}\\nD. {{D}}\\nAnswer:"
doc_to_choice: ["A", "B", "C", "D"]
doc_to_target: target
"""


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- what is invisible, made visible ------------------------------------------------------


def test_segments_keep_every_character():
    text = "a b\tc\n\r\u00a0d\u200b<|im_start|>e</s>"
    pieces = segments(text, special_pattern())
    assert "".join(p for _, p in pieces) == text
    kinds = [k for k, _ in pieces]
    assert kinds == ["text", "space", "text", "tab", "text", "newline", "cr", "nbsp", "text", "odd", "special"] + [
        "text",
        "special",
    ]


def test_plain_painter_draws_markers_and_keeps_lines():
    plain = Painter(False)
    assert plain.visible("Answer: C\n\nQ", special_pattern()) == "Answer:·C↵\n↵\nQ"
    assert plain.visible("x\u200by", None) == "x⟨U+200B⟩y"
    colour = Painter(True).visible("a b<|im_end|>", special_pattern())
    assert "\x1b[" in colour and ANSI.sub("", colour) == "a·b<|im_end|>"


def test_a_tokenizers_own_special_tokens_are_special():
    pattern = special_pattern(["<extra_id_0>"])
    assert ("special", "<extra_id_0>") in segments("x<extra_id_0>y", pattern)


def test_token_pieces_cover_the_text():
    text = "<s> Hello world"
    assert token_pieces(text, [(0, 0), (0, 3), (4, 9), (9, 15)]) == ["<s>", " Hello", " world"]
    assert token_pieces("ab", [(0, 1), (0, 1), (1, 2)]) == ["a", "b"]  # bytes of one character


# -- the terminal view ----------------------------------------------------------------------


def test_view_shows_the_prompt_turns_continuations_and_target(capsys):
    code, out, err = run(capsys, "view", MMLU, "--shots", "1")
    assert code == 0, err
    assert not ANSI.search(out)  # piped: plain text
    assert out.startswith('=== record 0 · target 1 → "·B"')
    assert "mmlu_example · style mcq::mmlu · meta plain · 1-shot [0]" in out
    assert "--- dialogue: 4 turn(s), before the meta template" in out
    assert '[assistant · ice · sep "·"] C' in out
    assert "--- the prompt: text, 204 characters" in out
    assert "Answer:·C↵\n↵\nWhat·is·the·value·of·7·×·8?↵\n" in out
    assert '✓ 1 "·B"' in out and '  0 "·A"' in out


def test_view_colour_and_special_tokens(capsys):
    code, out, err = run(capsys, "view", MMLU, "--meta", "chatml", "--shots", "0", "--color", "always")
    assert code == 0, err
    assert "\x1b[1;35m<|im_start|>\x1b[0m" in out
    plain = ANSI.sub("", out)
    assert "<|im_start|>assistant↵" in plain


def test_view_records_and_no_dialogue(capsys):
    code, out, err = run(capsys, "view", MMLU, "--record", "3", "--record", "5", "--no-dialogue")
    assert code == 0, err
    assert [line[:14] for line in out.splitlines() if line.startswith("===")] == ["=== record 3 ·", "=== record 5 ·"]
    assert "--- dialogue" not in out
    code, out, err = run(capsys, "view", MMLU, "--record", "99")
    assert code == 2 and "--record: there is no record 99: the split has 24 records" in err


def test_view_messages_and_perplexity_candidates(capsys):
    code, out, err = run(capsys, "view", MMLU, "--meta", "messages", "--shots", "0")
    assert code == 0, err
    assert "--- the prompt: 2 message(s)" in out and "[user] What·is·the·value" in out
    ppl = ROOT / "examples" / "opencompass" / "task_ppl.yaml"
    code, out, err = run(capsys, "view", ppl)
    assert code == 0, err
    assert out.count("--- candidate ") == 4


def test_view_every_variant(capsys):
    code, out, err = run(capsys, "view", MMLU, "--style", "mcq", "--style", "cloze", "--shots", "0")
    assert code == 0, err
    assert "##### style mcq\n" in out and "##### style cloze\n" in out


# -- --diff -------------------------------------------------------------------------------------


def test_diff_between_two_styles(capsys):
    code, out, err = run(capsys, "view", MMLU, "--diff", "--style", "mcq", "--style", "cloze", "--shots", "0")
    assert code == 0, err
    assert "--- style mcq\n+++ style cloze\n" in out
    assert "-A.·54↵" in out and "+What·is·the·value·of·7·×·8?·______↵" in out
    assert '-  0 "·A"' in out and '+  0 "·54"' in out


def test_diff_between_shot_counts_and_meta_templates(capsys):
    code, out, err = run(capsys, "view", MMLU, "--diff", "--shots", "0", "--shots", "1")
    assert code == 0 and "--- 0-shot\n+++ 1-shot\n" in out and "+Answer:·C↵" in out
    code, out, err = run(capsys, "view", MMLU, "--diff", "--meta", "plain", "--meta", "chatml", "--color", "always")
    assert code == 0 and "\x1b[32m+<|im_start|>user↵" in out


def test_diff_between_an_lm_eval_task_and_an_opencompass_config(capsys, tmp_path):
    task = tmp_path / "lm_eval_task.yaml"
    task.write_text(LM_EVAL_TASK, encoding="utf-8")
    code, out, err = run(capsys, "view", task, OC, "--diff", "--shots", "0", *OC_DATA)
    assert code == 0, err
    assert "--- lm_eval_task.yaml\n+++ task.yaml\n" in out
    assert "+There·is·a·single·choice·question." in out
    assert "-Answer:\n" in out and "+Answer:·\n" in out  # the trailing space OpenCompass's template has


def test_diff_of_identical_prompts_says_so(capsys):
    code, out, err = run(capsys, "view", MMLU, "--diff", "--style", "mcq::mmlu", "--style", "mcq::mmlu")
    assert code == 0 and out == "=== record 0: the same in style mcq::mmlu and style mcq::mmlu\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["view", MMLU, "--diff"],
        ["view", MMLU, "--diff", "--style", "a", "--style", "b", "--meta", "c", "--meta", "d"],
        ["view"],
        ["view", MMLU, "--diff", "--shots", "0", "--shots", "1", "--html", "x.html"],
    ],
)
def test_view_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("prompt-style: error: ")


def test_a_bad_variant_is_named(capsys):
    code, out, err = run(capsys, "view", MMLU, "--style", "mcq", "--style", "nope")
    assert code == 2 and "style nope: unknown style 'nope'" in err and len(err.splitlines()) == 1


# -- --html ---------------------------------------------------------------------------------------


class _Prompts(html.parser.HTMLParser):
    """The text of every ``<pre class="prompt">``, in order, with its cell's variant."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[tuple[str, str]] = []
        self.variant = ""
        self.depth = 0
        self.text: list[str] = []
        self.scripts = 0
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if attrs.get(name):
                self.external.append(attrs[name])
        if tag == "script":
            self.scripts += 1
        if "data-variant" in attrs:
            self.variant = attrs["data-variant"]
        if self.depth:
            self.depth += 1
        elif tag == "pre" and attrs.get("class") == "prompt":
            self.depth = 1
            self.text = []

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if not self.depth:
                self.prompts.append((self.variant, "".join(self.text)))

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless browser: Debian's chromium is not installed (apt-get install -y chromium; .ci/run does)")


def _browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    # Chromium starts helper processes that hold its output open: on a timeout the whole
    # process group goes, so that the wait ends (subprocess.run would kill the parent only).
    with subprocess.Popen(
        [_chromium(), *flags, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as browser:
        try:
            out, err = browser.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.communicate()
            pytest.fail(f"headless Chromium did not finish in 180 s: {' '.join(args)}")
        finally:
            try:  # helpers left behind by a browser that exited
                os.killpg(browser.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return subprocess.CompletedProcess(browser.args, browser.returncode, out, err)


def _png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the decompressed image data of a PNG (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, width, height, idat = 8, 0, 0, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        chunk = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        position += 12 + length
    return width, height, zlib.decompress(idat)


def _expected(variants: list[dict]) -> list[str]:
    texts = []
    for keys in variants:
        task = prompt_style.load_task(MMLU, shots=1, **keys)
        texts.append(next(iter(task.render())).text)
    return texts


def test_html_page_is_self_contained(capsys, tmp_path):
    page = tmp_path / "view.html"
    code, out, err = run(capsys, "view", MMLU, "--meta", "plain", "--meta", "chatml", "--shots", "1", "--html", page)
    assert code == 0, err
    assert out == f"wrote {page}: 1 record(s) × 2 variant(s)\n"
    text = page.read_text(encoding="utf-8")
    parser = _Prompts()
    parser.feed(text)
    assert parser.external == []  # nothing fetched: no src, no href
    assert "http://" not in text and "https://" not in text
    assert "<style>" in text and parser.scripts == 1
    # the document holds each prompt's exact characters (markers are drawn by CSS)
    assert [t for _, t in parser.prompts] == _expected([{"meta": "plain"}, {"meta": "chatml"}])


@pytest.mark.slow
def test_html_page_in_headless_chromium(capsys, tmp_path):
    page = tmp_path / "view.html"
    argv = ["view", MMLU, "--style", "mcq::mmlu", "--style", "cloze", "--meta", "plain", "--meta", "chatml"]
    code, out, err = run(capsys, *argv, "--shots", "1", "--html", page)
    assert code == 0, err
    dom = _browser(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parser = _Prompts()
    parser.feed(dom.stdout)
    expected = _expected(
        [
            {"style": "mcq::mmlu", "meta": "plain"},
            {"style": "mcq::mmlu", "meta": "chatml"},
            {"style": "cloze", "meta": "plain"},
            {"style": "cloze", "meta": "chatml"},
        ]
    )
    assert [t for _, t in parser.prompts] == expected  # the rendered text, exactly, after the page's script ran
    assert [v for v, _ in parser.prompts] == [
        "style mcq::mmlu · meta plain",
        "style mcq::mmlu · meta chatml",
        "style cloze · meta plain",
        "style cloze · meta chatml",
    ]
    assert 'class="marks tokens"' in dom.stdout  # the switches' script ran and kept both on
    shot = tmp_path / "view.png"
    screenshot = _browser(tmp_path, "--window-size=1400,1000", f"--screenshot={shot}", page.as_uri())
    assert screenshot.returncode == 0 and shot.is_file(), screenshot.stderr[-2000:]
    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (1400, 1000)
    assert len(set(pixels)) > 64  # not blank: text, colours, borders


@pytest.fixture
def tokenizer_folder(tmp_path):
    pytest.importorskip("prompt_style_tokenizers")
    pytest.importorskip("tokenizers")
    source = ROOT / "tests" / "golden" / "tokens" / "folders" / "mistral-v3-json"
    folder = tmp_path / "tokenizer"
    folder.mkdir()
    for path in source.iterdir():
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fin, (folder / path.stem).open("wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(path, folder / path.name)
    return folder


def test_token_boundaries_on_the_terminal_and_in_the_page(capsys, tmp_path, tokenizer_folder):
    argv = ["view", MMLU, "--meta", "mistral", "--meta-option", f"tokenizer={tokenizer_folder}", "--shots", "0"]
    code, out, err = run(capsys, *argv, "--no-dialogue")
    assert code == 0, err
    assert "--- tokens: " in out
    tokens = out.split("--- tokens: ", 1)[1]
    assert "<s>│The│·following│" in tokens  # plain text: │ between tokens
    page = tmp_path / "tokens.html"
    code, out, err = run(capsys, *argv, "--html", page)
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert 'id="tokens"' in text and text.count('class="tok t') > 20
    task = prompt_style.load_task(MMLU, meta="mistral", meta_options={"tokenizer": str(tokenizer_folder)}, shots=0)
    prompt = next(iter(task.render()))
    assert f'title="token 1: id {prompt.token_ids[1]}"' in text
    parser = _Prompts()
    parser.feed(text)
    assert [t for _, t in parser.prompts] == [prompt.text]


def test_view_json_of_nothing_else(capsys):
    # view is for people; its plain output is stable enough to grep, but JSON is render's
    code, out, err = run(capsys, "view", MMLU)
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
