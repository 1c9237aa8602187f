"""The plugin itself: discovery, detection, options, errors, pickling, the
SentencePiece model reader (checked against the sentencepiece library), and
token-level prompts end to end through load_task and the command line."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("prompt_style_tokenizers")

from prompt_style_tokenizers import SentencePieceLoader, TokenizerJsonLoader, read_model  # noqa: E402
from prompt_style_tokenizers.spm import generate_merges  # noqa: E402

import prompt_style  # noqa: E402
from prompt_style.cli import main  # noqa: E402
from prompt_style.meta.tokens import resolve_tokenizer, with_tokenizer  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "tokens"
ROOT = GOLDEN.parents[2]


def test_discovered_through_the_entry_point(pm_all):
    assert {"tokenizers", "sentencepiece"} <= set(pm_all.names("load_tokenizer"))
    provider = pm_all.resolve("load_tokenizer", "tokenizers")
    assert provider.plugin.distribution == "prompt-style-tokenizers"
    row = next(r for r in pm_all.describe() if r["name"] == "tokenizers")
    assert row["hooks"] == {"load_tokenizer": ["sentencepiece", "tokenizers"]}


def test_detect_rules(folders, tmp_path):
    json_loader, sp_loader = TokenizerJsonLoader(), SentencePieceLoader()
    assert json_loader.detect(folders("mistral-v3-json"))
    assert not sp_loader.detect(folders("mistral-v3-json"))
    assert sp_loader.detect(folders("mistral-v3"))
    assert not json_loader.detect(folders("mistral-v3"))
    assert json_loader.detect(Path("any/name.json")) and sp_loader.detect(Path("any/name.model"))
    assert not json_loader.detect(tmp_path) and not sp_loader.detect(tmp_path)


# -- the SentencePiece model reader ------------------------------------------------


@pytest.mark.parametrize("name", ["mistral-v1", "mistral-v3", "mistral-v7"])
def test_model_reader_agrees_with_sentencepiece(folders, name):
    spm = pytest.importorskip("sentencepiece")
    path = folders(name) / "tokenizer.model"
    model = read_model(path.read_bytes())
    processor = spm.SentencePieceProcessor(model_file=str(path))
    assert len(model.pieces) == processor.get_piece_size()
    for index, (piece, score, kind) in enumerate(model.pieces):
        assert piece == processor.id_to_piece(index)
        assert score == pytest.approx(processor.get_score(index))
        assert (kind == 3) == processor.is_control(index)
        assert (kind == 2) == processor.is_unknown(index)
        assert (kind == 6) == processor.is_byte(index)
    assert (model.bos_id, model.eos_id, model.unk_id) == (processor.bos_id(), processor.eos_id(), processor.unk_id())
    assert model.model_type == 2  # BPE


def test_generate_merges_orders_by_the_merged_piece():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    assert generate_merges(vocab) == [("a", "b"), ("b", "c"), ("a", "bc"), ("ab", "c")]


def test_a_unigram_model_is_refused(folders, tmp_path):
    data = (folders("mistral-v1") / "tokenizer.model").read_bytes()
    # A second TrainerSpec field merges into the first: model_type (field 3) = UNIGRAM (1).
    path = tmp_path / "unigram.model"
    path.write_bytes(data + bytes([0x12, 0x02, 0x18, 0x01]))
    with pytest.raises(prompt_style.TokenizerError, match="unigram model; LlamaTokenizer converts BPE models only"):
        SentencePieceLoader().load(path, {})


def test_a_corrupt_model(tmp_path):
    path = tmp_path / "bad.model"
    path.write_bytes(b"\x0a\xff\xff\xff")
    with pytest.raises(prompt_style.TokenizerError, match="is not a SentencePiece model"):
        SentencePieceLoader().load(path, {})


def test_another_class_is_refused_for_sentencepiece(folders):
    with pytest.raises(prompt_style.TokenizerError, match="not supported .only LlamaTokenizer"):
        SentencePieceLoader().load(folders("mistral-v3"), {"tokenizer_class": "T5Tokenizer"})


# -- tokenizer.json errors and options ------------------------------------------


def test_not_json(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(prompt_style.TokenizerError, match=r"tokenizer.json:1: not valid JSON"):
        TokenizerJsonLoader().load(path, {})


def test_not_a_tokenizer(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"vocab_size": 3}', encoding="utf-8")
    with pytest.raises(prompt_style.TokenizerError, match="is not a tokenizers file"):
        TokenizerJsonLoader().load(path, {})


def test_unknown_loader_option(folders):
    manager = prompt_style.create_plugin_manager(environ={})
    with pytest.raises(prompt_style.OptionError, match="has no option 'tokenizer_legacyy'") as caught:
        resolve_tokenizer(manager, folders("mistral-v3-json"), options={"tokenizer_legacyy": True})
    assert "tokenizer_legacy" in caught.value.hint
    assert caught.value.key == "meta.tokenizer_legacyy"


def test_loader_options_override_the_config(folders, loaded):
    manager = prompt_style.create_plugin_manager(environ={})
    legacy, _ = resolve_tokenizer(manager, folders("mistral-v3"), options={"tokenizer_legacy": True})
    first, _ = loaded("mistral-v3")
    # legacy: a "▁" is prepended after special tokens too.
    assert legacy.encode("<s>[INST]x") != first.encode("<s>[INST]x")
    with_bos, _ = resolve_tokenizer(manager, folders("mistral-v7"), options={"tokenizer_add_bos_token": True})
    assert with_bos.encode("Hi", add_special_tokens=True)[0] == 1


def test_the_tokenizer_pickles(loaded):
    for name in ("mistral-v3", "mistral-v3-json"):
        tokenizer, _ = loaded(name)
        again = pickle.loads(pickle.dumps(tokenizer))
        text = "<s>[INST] Grüße [/INST] </s>"
        assert again.encode(text, add_special_tokens=True) == tokenizer.encode(text, add_special_tokens=True)
        assert again.added_tokens == tokenizer.added_tokens


# -- end to end ----------------------------------------------------------------------

RECORDS = [{"question": "What is 2 + 2?", "choices": ["3", "4"], "answer": 1}]
MCQ = {"doc_to_text": "question", "doc_to_choice": "{{choices}}", "doc_to_target": "answer", "template": "mcq"}


def test_plain_prompt_with_a_sentencepiece_model(folders, pm_all, loaded):
    path = folders("mistral-v3")
    [out] = prompt_style.render_records(RECORDS, plugins=pm_all, meta_options={"tokenizer": str(path)}, **MCQ)
    tokenizer, _ = loaded("mistral-v3")
    assert out.token_ids == tokenizer.encode(out.text, add_special_tokens=True)
    assert out.token_ids[0] == 1 and out.token_ids[1] != 1
    assert out.context_token_ids == out.token_ids  # the prompt ends in "Answer:", nothing moves
    assert out.continuation_token_ids == [
        tokenizer.encode(out.text + c, add_special_tokens=True)[len(out.token_ids) :] for c in (" A", " B")
    ]
    assert out.plugins["apply_meta_template"]["tokenizer"]["name"] == "sentencepiece"


def test_chatml_with_a_tokenizer_json(folders, pm_all, loaded):
    path = folders("mistral-v3-json")
    [out] = prompt_style.render_records(
        RECORDS, plugins=pm_all, meta="chatml", meta_options={"tokenizer": str(path)}, **MCQ
    )
    tokenizer, _ = loaded("mistral-v3-json")
    assert out.token_ids == tokenizer.encode(out.text)  # chat formats: no added BOS
    # The prompt ends in "<|im_start|>assistant\n": lm-eval's rule moves the "\n" into each
    # continuation, and "\nA" alone (with a SentencePiece-style prefix "▁") is not "\nA" after a token.
    assert out.context_token_ids == tokenizer.encode(out.text.rstrip())
    reports = out.token_report
    assert [(r["kind"], r["continuation"], r["moved_from_context"]) for r in reports] == [
        ("continuation_boundary", 0, "\n"),
        ("continuation_boundary", 1, "\n"),
    ]
    assert all(r["context_unchanged"] and r["alone"] != r["token_ids"] for r in reports)
    assert out.continuation_token_ids == [r["token_ids"] for r in reports]


def test_the_example_task_from_the_command_line(folders, capsys):
    path = folders("mistral-v7")
    task = ROOT / "examples" / "mmlu" / "task.yaml"
    assert main(["render", str(task), "--limit", "2", "--format", "jsonl", "--meta-option", f"tokenizer={path}"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert line["token_ids"] and line["continuation_token_ids"]
        assert len(line["continuation_token_ids"]) == len(line["continuations"])


def _hf_available() -> bool:
    manager = prompt_style.create_plugin_manager(environ={})
    return "hf" in manager.names("apply_meta_template")


@pytest.mark.skipif(not _hf_available(), reason="the 'hf' meta template (prompt-style-hf) is not installed")
@pytest.mark.parametrize("name", ["mistral-v1", "mistral-v3", "mistral-v7", "mistral-v3-json"])
def test_a_models_own_chat_template_tokenized_as_transformers_does(folders, pm_all, name):
    """The hf meta template renders the folder's chat_template; the same folder's tokenizer encodes it."""
    expected = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))
    path = folders(name)
    for conversation, render in expected["cases"][name]["chat"].items():
        spec = expected["conversations"][conversation]
        dialogue = tuple(prompt_style.Turn(m["role"], m["content"]) for m in spec["messages"])
        options = {"template": str(path), "tokenizer": str(path), **spec["kwargs"]}
        options.setdefault("add_generation_prompt", False)
        own = {k: v for k, v in options.items() if k != "tokenizer"}
        meta = pm_all.resolve("apply_meta_template", "hf").factory(options=own)
        wrapped, _ = with_tokenizer(pm_all, meta, {"tokenizer": str(path)}, name="hf")
        made = wrapped.apply(dialogue)
        assert made.text == render["text"], conversation
        assert made.token_ids == render["ids"], conversation


def test_gzipped_test_data_is_small():
    """The committed tokenizer files stay small (a few hundred KB each)."""
    sizes = {p.relative_to(GOLDEN).as_posix(): p.stat().st_size for p in GOLDEN.rglob("*") if p.is_file()}
    assert sum(sizes.values()) < 2_500_000, sizes
    for path in GOLDEN.rglob("*.gz"):
        with gzip.open(path) as handle:
            assert handle.read(2)


def test_a_model_type_that_is_not_llama_is_refused(folders, tmp_path):
    import shutil as sh

    gemma = tmp_path / "gemma"
    sh.copytree(folders("mistral-v3"), gemma)
    config = json.loads((gemma / "tokenizer_config.json").read_text(encoding="utf-8"))
    del config["tokenizer_class"]
    (gemma / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    (gemma / "config.json").write_text('{"model_type": "gemma2"}', encoding="utf-8")
    with pytest.raises(prompt_style.TokenizerError, match="model type 'gemma2' is not supported"):
        SentencePieceLoader().load(gemma, {})
    (gemma / "config.json").write_text('{"model_type": "mistral"}', encoding="utf-8")
    assert SentencePieceLoader().load(gemma, {}).encode("Hi") == [16127]


def test_a_tekken_file_gets_a_hint(tmp_path):
    path = tmp_path / "tekken.json"
    path.write_text('{"config": {}, "vocab": []}', encoding="utf-8")
    with pytest.raises(prompt_style.TokenizerError, match="save_pretrained"):
        TokenizerJsonLoader().load(path, {})
