"""``tokenize=turns`` against the real systems (tests/golden/tokens/turns.json.gz, made by
tools/golden/make_turns_golden.py):

- openchat's own reference tokens: the tokens ochat 3.6.1's test expects from openchat
  3.5's real tokenizer, and ochat's ``ConversationTemplate`` run on the rebuilt openchat
  tokenizer folder through transformers 5.23.0;
- transformers 5.23.0 tokenizing each piece of every chat-template corpus render on its
  own, with two real tokenizers (a ``tokenizer.json`` and a SentencePiece model).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("prompt_style_hf")

import prompt_style  # noqa: E402
from prompt_style.meta.tokens import TokenizedMeta  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "tokens"
TURNS = json.loads(gzip.decompress((GOLDEN / "turns.json.gz").read_bytes()).decode("utf-8"))
CORPUS = Path(__file__).resolve().parents[3] / "tests" / "golden" / "transformers_chat" / "corpus"
OPENCHAT = list(TURNS["derived"])
NOW = "2025-07-10T12:00:00"

# Where ochat's finer cut (role prefix | content | end of turn, each tokenized alone) differs
# from a message's text tokenized alone: a content starting with whitespace (ochat's content
# " Hello" alone is "▁Hello"; in the message "...User:  Hello" it is "▁▁Hello").
OCHAT_DIFFERS = {"leading_space"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory, folders):
    """``folder(name)``: a golden tokenizer folder, openchat's included (mistral-v1 + its config)."""
    work = tmp_path_factory.mktemp("turns")

    def get(name: str) -> Path:
        spec = TURNS["derived"].get(name)
        if spec is None:
            return folders(name)
        target = work / name
        if not target.exists():
            shutil.copytree(folders(spec["from"]), target)
            config = json.loads((target / "tokenizer_config.json").read_text(encoding="utf-8"))
            config.update(spec["tokenizer_config"])
            (target / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        return target

    return get


def _metas(path: Path, loaded) -> dict:
    """``hf`` on the folder's template, tokenized turn by turn and whole (the tokenizer loaded once)."""
    tokenizer, _ = loaded(path.name, path)
    meta = prompt_style.chat_meta("hf", {"template": str(path)})
    return {mode: TokenizedMeta(meta, tokenizer, tokenize=mode, name="hf") for mode in ("turns", "whole")}


@pytest.mark.parametrize("name", OPENCHAT)
def test_openchat_published_tokens(name, folder):
    """ochat's own expected tokens for openchat 3.5 (its test, inference mode), turn by turn,
    through the options as a user gives them."""
    path = folder(name)
    options = {"template": str(path), "tokenizer": str(path), "tokenize": "turns"}
    meta = prompt_style.chat_meta("hf", options)
    for case in TURNS["ochat"]["published"]:
        # The folder rebuilt here gives ochat's published tokens through ochat's own code too.
        assert case["ochat_on_folder"][name]
        made = prompt_style.render_chat(case["messages"], meta=meta, **case["kwargs"])
        assert made.token_ids == case["expected_tokens"]


@pytest.mark.parametrize("name", OPENCHAT)
def test_openchat_runs(name, folder, loaded):
    """ochat's ConversationTemplate on more conversations: equal to the turns' ids except
    where its finer cut differs (documented); transformers' per-piece and whole ids."""
    metas = _metas(folder(name), loaded)
    differs = set()
    for conversation, entry in TURNS["ochat"]["runs"][name].items():
        turns = prompt_style.render_chat(entry["messages"], meta=metas["turns"], **entry["kwargs"])
        whole = prompt_style.render_chat(entry["messages"], meta=metas["whole"], **entry["kwargs"])
        assert turns.text == whole.text
        assert turns.token_ids == entry["ids"], conversation
        assert whole.token_ids == entry.get("whole", entry["ids"]), conversation
        kinds = {r["kind"] for r in turns.token_report or ()}
        assert ("turns_differ" in kinds) == ("whole" in entry), conversation
        if entry["ochat"] != turns.token_ids:
            differs.add(conversation)
    assert differs == OCHAT_DIFFERS


@pytest.mark.parametrize("tokenizer", TURNS["corpus"]["tokenizers"])
def test_corpus_templates_turn_by_turn(tokenizer, folder, loaded):
    """Every corpus template on its six conversations: each piece tokenized on its own as
    transformers tokenizes it; the whole-string ids as apply_chat_template(tokenize=True)."""
    loaded_tokenizer, _ = loaded(tokenizer, folder(tokenizer))  # loaded once, wrapped per template
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    conversations = TURNS["corpus"]["conversations"]
    checked = differ = 0
    for template, cases in TURNS["corpus"]["results"][tokenizer].items():
        options = {"template": str(CORPUS / "templates" / index[template]["file"])}
        options.update({"bos_token": "<s>", "eos_token": "</s>", "now": NOW})
        meta = prompt_style.chat_meta("hf", options)
        turns_meta = TokenizedMeta(meta, loaded_tokenizer, tokenize="turns", name=template)
        whole_meta = TokenizedMeta(meta, loaded_tokenizer, name=template)
        for name, entry in cases.items():
            if "error" in entry:
                continue
            conversation = conversations[name]
            turns = prompt_style.render_chat(conversation["messages"], meta=turns_meta, **conversation["kwargs"])
            whole = prompt_style.render_chat(conversation["messages"], meta=whole_meta, **conversation["kwargs"])
            assert turns.token_ids == entry["ids"], (template, name)
            assert whole.token_ids == entry.get("whole", entry["ids"]), (template, name)
            kinds = [r["kind"] for r in turns.token_report]
            assert ("turns_differ" in kinds) == ("whole" in entry), (template, name)
            checked += 1
            differ += "whole" in entry
    assert checked > 300 and differ > 100


ROOT = Path(__file__).resolve().parents[3]
TASKS = [
    (ROOT / "examples" / "mmlu" / "task.yaml", "plain", {}),
    (ROOT / "examples" / "mmlu" / "task.yaml", "chatml", {}),
    (
        ROOT / "examples" / "mmlu" / "task.yaml",
        "hf",
        {"template": str(ROOT / "examples" / "chat" / "qwen2.5-7b-instruct")},
    ),
    (ROOT / "examples" / "mmlu" / "task.yaml", "opencompass::internlm2-chat", {}),
    (ROOT / "examples" / "mmlu" / "task.yaml", "opencompass::vicuna", {}),
]


@pytest.mark.parametrize("tokenizer", ["mistral-v1", "mistral-v3-json"])
@pytest.mark.parametrize(("task", "meta", "options"), TASKS, ids=[t[1] for t in TASKS])
def test_example_tasks_in_both_modes(task, meta, options, tokenizer, folder, loaded):
    """The bundled MMLU task, five-shot, through text meta templates of every kind, with real
    tokenizers: whole is the text encoded at once; turns is the meta template's pieces, each
    encoded on its own, the BOS once; the report says where they differ."""
    path = folder(tokenizer)
    real, _ = loaded(tokenizer, path)
    rendered = {}
    for mode in ("whole", "turns"):
        loaded_task = prompt_style.load_task(
            str(task), meta=meta, meta_options={**options, "tokenizer": str(path), "tokenize": mode}, shots=5
        )
        rendered[mode] = list(loaded_task.render(limit=3))
    built = loaded_task.renderer.meta.meta
    add = not getattr(built, "chat", False)
    for whole, turns in zip(rendered["whole"], rendered["turns"]):
        assert whole.text == turns.text
        assert whole.token_ids == real.encode(whole.text, add_special_tokens=add)
        pieces = built.pieces(turns.dialogue)
        assert "".join(p for _, p in pieces) == turns.text
        ids = [real.bos_token_id] if add else []
        for i, (_, piece) in enumerate(pieces):
            if i == 0 and piece.startswith("<s>"):
                ids += [real.bos_token_id]
                piece = piece[3:]
            ids += real.encode(piece)
        assert turns.token_ids == ids
        assert ("turns_differ" in [r["kind"] for r in turns.token_report]) == (turns.token_ids != whole.token_ids)
        assert turns.context_token_ids == turns.token_ids
        assert turns.continuation_token_ids == [real.encode(c) for c in turns.continuations]
