"""``hf`` with a tokenizer (the core's ``tokenizer=`` option, prompt-style-tokenizers):
a real model folder's own chat template and tokenizer give exactly the ids of
transformers' ``apply_chat_template(tokenize=True)`` (goldens in tests/golden/tokens,
made by tools/golden/make_tokens_golden.py), through ``prompt-style chat``.

Skipped when prompt-style-tokenizers is not installed."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from prompt_style.cli import main

pytest.importorskip("prompt_style_tokenizers")

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "tokens"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))
MODELS = [
    name
    for name in ("mistral-v1", "mistral-v3", "mistral-v7", "mistral-v3-json")
    if (GOLDEN / "folders" / name).is_dir()
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    work = tmp_path_factory.mktemp("hf_tokens")

    def folder(name: str) -> Path:
        target = work / name
        if not target.exists():
            target.mkdir()
            for path in (GOLDEN / "folders" / name).iterdir():
                if path.suffix == ".gz":
                    with gzip.open(path, "rb") as fin, (target / path.stem).open("wb") as fout:
                        shutil.copyfileobj(fin, fout)
                else:
                    shutil.copy(path, target / path.name)
        return target

    return folder


@pytest.mark.parametrize("model", MODELS)
def test_chat_token_ids_equal_transformers(model, folders, tmp_path, capsys):
    folder = folders(model)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    if not config.get("chat_template"):
        pytest.skip("no chat template in this folder")
    for name, conversation in EXPECTED["conversations"].items():
        expected = EXPECTED["cases"][model]["chat"].get(name)
        if expected is None or "ids" not in expected:
            continue
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(conversation), encoding="utf-8")
        code = main(
            [
                "chat",
                str(path),
                "--meta-option",
                f"template={folder}",
                "--meta-option",
                f"tokenizer={folder}",
                "--format",
                "json",
            ]
        )
        out = json.loads(capsys.readouterr().out)
        assert code == 0
        assert out["text"] == expected["text"], name
        assert out["token_ids"] == expected["ids"], name
