"""``tokenize=turns``: a prompt's token ids as each turn's text tokenized on its own.

A toy tokenizer that prepends a space to a text's first piece, as SentencePiece
models converted by transformers do (``"A"`` alone is ``"▁A"``), shows where the
two tokenizations differ; the real tokenizers are checked against transformers and
openchat's ``ochat`` in plugins/tokenizers/tests/test_turns_golden.py.
"""

from __future__ import annotations

import json
import pickle
import re
import zlib
from pathlib import Path

import pytest

import prompt_style
from prompt_style import ModelInput, Turn, hookimpl
from prompt_style.cli import main
from prompt_style.meta.pieces import message_pieces
from prompt_style.meta.tokens import TokenizedMeta

ADDED = {"<s>": 1, "</s>": 2, "<|im_start|>": 3, "<|im_end|>": 4}
_ADDED_RE = re.compile("|".join(re.escape(t) for t in sorted(ADDED, key=len, reverse=True)))
_WORDS = re.compile(r" ?\w+| ?[^\w\s]+|\s+")


class SpaceTokenizer:
    """Added tokens matched first; words with their leading space; a text that does not
    start with a space or an added token gets one prepended (its offsets stay in the text)."""

    bos_token, bos_token_id, eos_token, eos_token_id = "<s>", 1, "</s>", 2
    added_tokens = ADDED
    special_tokens = frozenset(ADDED)

    def __init__(self, name: str = "space") -> None:
        self.name = name

    @staticmethod
    def piece_id(piece: str) -> int:
        return 1000 + zlib.crc32(piece.encode()) % 100_000

    def _tokens(self, text: str) -> list[tuple[int, int, int]]:
        shift = 0
        if text and not text.startswith(" ") and not _ADDED_RE.match(text):
            text, shift = " " + text, 1
        out = []
        pos = 0
        for match in [*_ADDED_RE.finditer(text), None]:
            end = match.start() if match else len(text)
            for m in _WORDS.finditer(text, pos, end):
                out.append((self.piece_id(m.group()), max(m.start() - shift, 0), m.end() - shift))
            if match:
                out.append((ADDED[match.group()], match.start() - shift, match.end() - shift))
                pos = match.end()
        return out

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        return ([1] if add_special_tokens else []) + [i for i, _, _ in self._tokens(text)]

    def token_offsets(self, text: str, *, add_special_tokens: bool = False) -> list[tuple[int, int]]:
        return ([(0, 0)] if add_special_tokens else []) + [(a, b) for _, a, b in self._tokens(text)]


def enc(text: str) -> list[int]:
    return SpaceTokenizer().encode(text)


class SpaceLoader:
    def detect(self, path: Path) -> bool:
        return path.suffix == ".space"

    def load(self, path: Path, options):
        return SpaceTokenizer(str(path))


class NoPieces:
    """A third-party meta template that gives text but not its pieces."""

    def apply(self, dialogue):
        return ModelInput(text="".join(t.sep + t.content for t in dialogue))


class BadPieces(NoPieces):
    def pieces(self, dialogue, *, full=False):
        return [((0,), "not the text")]


class BosText(NoPieces):
    def apply(self, dialogue):
        return ModelInput(text="<s>" + super().apply(dialogue).text)

    def pieces(self, dialogue, *, full=False):
        return [((), "<s>")] + [((i,), t.sep + t.content) for i, t in enumerate(dialogue)]


class Plugin:
    @hookimpl
    def load_tokenizer(self):
        return {"space": SpaceLoader()}

    @hookimpl
    def apply_meta_template(self):
        return {
            "no_pieces": lambda *, options: NoPieces(),
            "bad_pieces": lambda *, options: BadPieces(),
            "bos_pieces": lambda *, options: BosText(),
        }


@pytest.fixture
def manager():
    return prompt_style.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": "tokenizers"}, plugins=[("t", Plugin())])


@pytest.fixture
def vocab(tmp_path) -> Path:
    path = tmp_path / "toy.space"
    path.write_text("toy", encoding="utf-8")
    return path


MCQ = {"doc_to_text": "q", "doc_to_choice": "{{choices}}", "doc_to_target": "a", "template": "mcq"}
RECORDS = [
    {"q": "What is 2 + 2?", "choices": ["3", "4"], "a": 1},
    {"q": "What is 3 + 3?", "choices": ["6", "5"], "a": 0},
]


def render(manager, meta="plain", records=RECORDS[1:], shots=0, **options):
    data = {"test": list(records), "train": RECORDS[:1]}
    task = prompt_style.load_task(
        {"data": data, "num_fewshot": shots, **MCQ}, plugins=manager, meta=meta, meta_options=options
    )
    return list(task.render())


def kinds(out) -> list[str]:
    return [r["kind"] for r in out.token_report]


# -- plain text ----------------------------------------------------------------------


def test_plain_turns_are_each_turns_separator_and_content(manager, vocab):
    [whole] = render(manager, shots=1, tokenizer=str(vocab))
    [turns] = render(manager, shots=1, tokenizer=str(vocab), tokenize="turns")
    assert turns.text == whole.text
    pieces = [t.sep + t.content for t in turns.dialogue]
    assert "".join(pieces) == turns.text
    # plain text adds the tokenizer's BOS (tokenizer(text)), once, before the turns
    assert turns.token_ids == [1] + [i for p in pieces for i in enc(p)]
    assert whole.token_ids == [1, *enc(whole.text)]
    assert turns.token_ids != whole.token_ids
    assert turns.plugins["apply_meta_template"]["tokenizer"]["tokenize"] == "turns"
    assert "tokenize" not in whole.plugins["apply_meta_template"]["tokenizer"]


def test_where_the_two_differ_is_reported(manager, vocab):
    [out] = render(manager, shots=1, tokenizer=str(vocab), tokenize="turns")
    summary = next(r for r in out.token_report if r["kind"] == "turns_differ")
    whole = [1, *enc(out.text)]
    first = next(i for i, (a, b) in enumerate(zip(whole, out.token_ids)) if a != b)
    assert summary["first_difference"] == first
    assert (summary["token_count"], summary["whole_token_count"]) == (len(out.token_ids), len(whole))
    pieces = [r for r in out.token_report if r["kind"] == "turn_tokens"]
    assert pieces, out.token_report
    for entry in pieces:
        start, end = entry["chars"]
        turn = entry["turns"][0]
        text = out.dialogue[turn].sep + out.dialogue[turn].content
        assert out.text[start:end] == text
        assert entry["token_ids"] == enc(text)
        assert out.token_ids[entry["start"] : entry["start"] + len(entry["token_ids"])] == entry["token_ids"]
        assert entry["roles"] == [prompt_style.api_role(out.dialogue[turn].role)]
        assert entry["token_ids"] != entry["whole"]
    # the answer " 4" of the example starts with a space: alone and in the whole text it is the same token
    assert all(out.dialogue[r["turns"][0]].role != "assistant" for r in pieces)


def test_no_report_when_turn_by_turn_is_the_same(manager, vocab):
    # Every turn starts with a space: prepending none, the toy tokenizer gives the same ids.
    records = [{"q": " What?", "choices": ["a", "b"], "a": 0}]
    [out] = render(manager, records=records, tokenizer=str(vocab), tokenize="turns", add_special_tokens=False)
    assert out.token_ids == enc(out.text)
    assert "turns_differ" not in kinds(out)


# -- chat formats --------------------------------------------------------------------


def test_chatml_pieces_are_messages_and_the_generation_prompt(manager, vocab):
    [out] = render(manager, meta="chatml", shots=1, tokenizer=str(vocab), tokenize="turns")
    blocks = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in out.messages]
    assert out.text == "".join(blocks) + "<|im_start|>assistant\n"
    expected = [i for b in [*blocks, "<|im_start|>assistant\n"] for i in enc(b)]
    assert out.token_ids == expected
    # each piece starts with <|im_start|>: no space prepended, the same ids as the whole text
    assert out.token_ids == enc(out.text)
    assert "turns_differ" not in kinds(out)


def test_chatml_prefill_is_the_open_last_message(manager):
    meta = prompt_style.chat_meta("chatml", plugins=manager)
    dialogue = (Turn("user", "Hi"), Turn("assistant", "Sure"))
    assert meta.pieces(dialogue) == [
        ((0,), "<|im_start|>user\nHi<|im_end|>\n"),
        ((1,), "<|im_start|>assistant\nSure"),
    ]
    assert meta.pieces(dialogue[:1]) == [((0,), "<|im_start|>user\nHi<|im_end|>\n"), ((), "<|im_start|>assistant\n")]


def test_a_conversation_is_cut_by_rendering_prefixes(manager, vocab):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    meta = prompt_style.chat_meta("chatml", plugins=manager)
    made, pieces = message_pieces(meta.apply_messages, messages, add_generation_prompt=True)
    assert [turns for turns, _ in pieces] == [(0,), (1,), (2,), (3,), ()]
    assert "".join(p for _, p in pieces) == made.text
    assert pieces[-1][1] == "<|im_start|>assistant\n"
    tokenized = prompt_style.chat_meta("chatml", {"tokenizer": str(vocab), "tokenize": "turns"}, plugins=manager)
    out = prompt_style.render_chat(messages, meta=tokenized, add_generation_prompt=True)
    assert out.token_ids == [i for _, p in pieces for i in enc(p)]
    # continue_final_message: the last prefix (closed) is not the start of the text; the open message is its piece
    made, pieces = message_pieces(meta.apply_messages, messages[:3], continue_final_message=True)
    assert pieces[-1] == ((2,), "<|im_start|>assistant\nHello")


HF = pytest.importorskip("prompt_style_hf", reason="the hf meta template (prompt-style-hf)")

# A template that shows only the answer of past assistant turns (as reasoning templates drop
# the reasoning of earlier turns): an assistant message renders differently once a user follows.
DROPS = (
    "{% for m in messages %}{% if m.role == 'assistant' and not loop.last %}A: {{ m.content.split('|')[-1] }}\n"
    "{% else %}{{ m.role[0]|upper }}: {{ m.content }}\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}A:{% endif %}"
)


def test_a_message_rendered_differently_later_is_joined_with_the_next(manager, vocab):
    messages = [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "think|A1"},
        {"role": "user", "content": "Q2"},
    ]
    meta = prompt_style.chat_meta("hf", {"chat_template": DROPS}, plugins=manager)
    made, pieces = message_pieces(meta.apply_messages, messages, add_generation_prompt=True)
    assert made.text == "U: Q1\nA: A1\nU: Q2\nA:"
    assert pieces == [((0,), "U: Q1\n"), ((1, 2), "A: A1\nU: Q2\n"), ((), "A:")]
    tokenized = prompt_style.chat_meta(
        "hf", {"chat_template": DROPS, "tokenizer": str(vocab), "tokenize": "turns"}, plugins=manager
    )
    out = prompt_style.render_chat(messages, meta=tokenized, add_generation_prompt=True)
    joined = [r for r in out.token_report if r["kind"] == "turns_joined"]
    assert [(r["turns"], r["roles"]) for r in joined] == [([1, 2], ["assistant", "user"])]


def test_hf_task_pieces_and_a_template_written_bos(manager, vocab):
    template = "{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    template += "{% if add_generation_prompt %}assistant:{% endif %}"
    options = {"chat_template": template, "bos_token": "<s>", "tokenizer": str(vocab), "tokenize": "turns"}
    [out] = render(manager, meta="hf", shots=1, **options)
    meta = prompt_style.chat_meta("hf", {"chat_template": template, "bos_token": "<s>"}, plugins=manager)
    pieces = meta.pieces(out.dialogue)
    assert [turns for turns, _ in pieces] == [(0,), (1,), (2,), ()]
    assert pieces[0][1].startswith("<s>user: ")
    # the BOS the template writes is a piece of its own: the first turn is tokenized alone
    expected = [1] + enc(pieces[0][1][3:]) + [i for _, p in pieces[1:] for i in enc(p)]
    assert out.token_ids == expected
    assert expected[1] != enc(out.text)[1]  # " user" alone, "user" after <s> in the whole text


def test_hf_system_policy_merge_pieces_name_both_turns(manager):
    template = "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}"
    template += "{{ m.role }}: {{ m.content }}\n{% endfor %}"
    meta = prompt_style.chat_meta("hf", {"chat_template": template, "system_policy": "merge"}, plugins=manager)
    dialogue = (Turn("system", "Be brief."), Turn("user", "Hi"), Turn("assistant", "Hello"), Turn("user", "Bye"))
    pieces = meta.pieces(dialogue)
    assert [turns for turns, _ in pieces] == [(0, 1), (2,), (3,)]
    assert "".join(p for _, p in pieces) == meta.apply(dialogue).text


# -- OpenCompass meta templates --------------------------------------------------------

OC = {
    "begin": "<s>",
    "round": [
        {"role": "HUMAN", "begin": "[INST] ", "end": " [/INST]"},
        "|",
        {"role": "BOT", "begin": " ", "end": "</s>", "generate": True},
    ],
    "end": "<END>",
}


def test_opencompass_pieces(manager):
    meta = prompt_style.chat_meta("opencompass", {"template": OC}, plugins=manager)
    dialogue = (
        Turn("HUMAN", "Q1", section="round"),
        Turn("BOT", "A1", section="round"),
        Turn("HUMAN", "Q2", section="round"),
        Turn("BOT", "", section="round"),
    )
    assert meta.apply(dialogue).text == "<s>[INST] Q1 [/INST]| A1</s>[INST] Q2 [/INST]| "
    assert meta.pieces(dialogue) == [
        ((), "<s>"),
        ((0,), "[INST] Q1 [/INST]"),
        ((), "|"),
        ((1,), " A1</s>"),
        ((2,), "[INST] Q2 [/INST]"),
        ((), "|"),
        ((), " "),
    ]
    # perplexity: the whole dialogue, the meta template's end a piece of no turn
    full = meta.pieces(dialogue, full=True)
    assert "".join(p for _, p in full) == meta.apply_full(dialogue).text
    assert full[-2:] == [((3,), " </s>"), ((), "<END>")]


def test_opencompass_ppl_candidates_tokenized_turn_by_turn(manager, vocab):
    meta = prompt_style.chat_meta("opencompass", {"template": OC}, plugins=manager)
    wrapped = TokenizedMeta(meta, SpaceTokenizer(), tokenize="turns", name="opencompass")
    dialogue = (Turn("HUMAN", "Q", section="round"), Turn("BOT", "A", section="round"))
    made = wrapped.apply_full(dialogue)
    assert made.token_ids == [i for _, p in meta.pieces(dialogue, full=True) for i in enc(p)]


# -- multiple choice -------------------------------------------------------------------


def test_continuations_are_one_more_piece(manager, vocab):
    [out] = render(manager, meta="chatml", tokenizer=str(vocab), tokenize="turns")
    assert list(out.continuations) == ["A", "B"]
    assert out.context_token_ids == out.token_ids
    assert out.continuation_token_ids == [enc("A"), enc("B")]
    # whole: "\nA" after "<|im_start|>assistant" (lm-evaluation-harness's split)
    entries = [r for r in out.token_report if r["kind"] == "continuation_piece"]
    assert [r["continuation"] for r in entries] == [0, 1]
    assert entries[0]["token_ids"] == enc("A") and entries[0]["whole"] != enc("A")


def test_empty_context_scores_after_the_prefix_token(manager):
    wrapped = TokenizedMeta(prompt_style.chat_meta("plain", plugins=manager), SpaceTokenizer(), tokenize="turns")
    made = wrapped.apply_with_continuations((Turn("user", ""),), ["A"])
    assert made.context_token_ids == [1]
    assert made.continuation_token_ids == [enc("A")]


# -- BOS, pickling, errors ---------------------------------------------------------------


def test_bos_once_and_never_twice(manager, vocab):
    [out] = render(manager, meta="bos_pieces", tokenizer=str(vocab), tokenize="turns")
    assert out.token_ids[:2] != [1, 1]
    assert out.token_ids[0] == 1 and out.token_ids.count(1) == 1
    assert "bos_not_added" in kinds(out)


def test_pickles(manager, vocab):
    task = prompt_style.load_task(
        {"data": {"test": RECORDS}, **MCQ},
        plugins=manager,
        meta="chatml",
        meta_options={"tokenizer": str(vocab), "tokenize": "turns"},
    )
    renderer = pickle.loads(pickle.dumps(task.renderer))
    assert renderer.meta.tokenize == "turns"
    assert renderer.render(RECORDS[0], 0) == task.renderer.render(RECORDS[0], 0)


def test_tokenize_without_a_tokenizer_is_an_error(manager):
    with pytest.raises(prompt_style.OptionError, match="meta option tokenize needs a tokenizer") as info:
        render(manager, tokenize="turns")
    assert "tokenizer=PATH" in info.value.hint


@pytest.mark.parametrize("value", ["pieces", True, False])
def test_tokenize_takes_whole_or_turns(manager, vocab, value):
    with pytest.raises(prompt_style.OptionError, match="option 'tokenize' must be whole or turns") as info:
        render(manager, tokenizer=str(vocab), tokenize=value)
    assert info.value.key == "meta.tokenize"
    if isinstance(value, bool):
        assert "already asks for token ids" in str(info.value)


def test_a_meta_template_without_pieces(manager, vocab):
    with pytest.raises(prompt_style.OptionError, match="cannot be tokenized turn by turn"):
        render(manager, meta="no_pieces", tokenizer=str(vocab), tokenize="turns")
    with pytest.raises(prompt_style.OptionError, match="cannot be tokenized turn by turn"):
        render(manager, meta="messages", tokenizer=str(vocab), tokenize="turns")


def test_pieces_that_do_not_join_into_the_text(manager, vocab):
    with pytest.raises(prompt_style.TokenizerError, match="do not join into the prompt"):
        render(manager, meta="bad_pieces", tokenizer=str(vocab), tokenize="turns")


# -- the command line ----------------------------------------------------------------------


def test_chat_json_carries_the_report(tmp_path, vocab, capsys, monkeypatch):
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "Hi"}]), encoding="utf-8")
    monkeypatch.setattr(prompt_style.plugins, "default_plugin_manager", lambda: _manager())
    code = main(
        [
            "chat",
            str(conversation),
            "--meta",
            "plain",
            "--meta-option",
            f"tokenizer={vocab}",
            "--meta-option",
            "tokenize=turns",
            "--format",
            "json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["token_ids"] == [1, *enc("Hi")]
    assert out["token_report"] == []


def _manager():
    return prompt_style.create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": "tokenizers"}, plugins=[("t", Plugin())])


def test_view_draws_no_whole_text_token_boundaries_on_turn_ids(manager, vocab):
    from prompt_style.cli._view_text import offsets_of

    for mode, drawn in (("whole", True), ("turns", False)):
        task = prompt_style.load_task(
            {"data": {"test": RECORDS}, **MCQ},
            plugins=manager,
            meta_options={"tokenizer": str(vocab), "tokenize": mode},
        )
        prompt = next(task.render())
        assert (offsets_of(task, prompt) is not None) is drawn


class BosEosTokenizer(SpaceTokenizer):
    """Adds a BOS and an EOS around a text, and knows no word "a" (its probe fails)."""

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        if text == "a":
            raise KeyError("a")
        ids = super().encode(text)
        return [1, *ids, 2] if add_special_tokens else ids


def test_the_tokenizers_additions_go_once_around_all_pieces(manager):
    plain = prompt_style.chat_meta("plain", plugins=manager)
    wrapped = TokenizedMeta(plain, BosEosTokenizer(), tokenize="turns")
    dialogue = (Turn("user", "Q1"), Turn("assistant", " A1", " "), Turn("user", "Q2", "\n"))
    made = wrapped.apply(dialogue)
    assert made.token_ids == [1, *enc("Q1"), *enc("  A1"), *enc("\nQ2"), 2]
