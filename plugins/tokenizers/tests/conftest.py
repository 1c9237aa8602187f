"""Real tokenizer folders (Mistral's, from the mistral-common wheel) and what
transformers and lm-evaluation-harness made of them (tests/golden/tokens)."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from pathlib import Path

import pytest

import prompt_style

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "tokens"


def load_expected() -> dict:
    return json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))


EXPECTED = load_expected()


def materialize(name: str, work: Path) -> Path:
    """The folder of a golden case: gunzipped, with its derivation applied
    (the same steps as tools/golden/make_tokens_golden.py)."""
    target = work / name
    if target.exists():
        return target
    spec = EXPECTED["derived"].get(name)
    source = GOLDEN / "folders" / (spec["from"] if spec else name)
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fin, (target / path.stem).open("wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(path, target / path.name)
    if spec:
        if spec.get("tokenizer_json"):
            data = json.loads((target / "tokenizer.json").read_text(encoding="utf-8"))
            data.update(copy.deepcopy(spec["tokenizer_json"]))
            (target / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        if spec.get("tokenizer_config") is not None:
            config = json.loads((target / "tokenizer_config.json").read_text(encoding="utf-8"))
            config.update(spec["tokenizer_config"])
            (target / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        if spec.get("bare"):
            for path in target.iterdir():
                if path.name != "tokenizer.json":
                    path.unlink()
    return target


@pytest.fixture(scope="session")
def folders(tmp_path_factory):
    """``folders(name)`` -> the materialized folder of a golden case (built once per session)."""
    work = tmp_path_factory.mktemp("tokenizers")
    return lambda name: materialize(name, work)


@pytest.fixture
def pm_all():
    return prompt_style.create_plugin_manager(environ={})


@pytest.fixture(scope="session")
def loaded(folders):
    """``loaded(name, path=None)`` -> (tokenizer, description), loaded once per session
    through the plugin manager (the bare case is its tokenizer.json file)."""
    from prompt_style.meta.tokens import resolve_tokenizer

    manager = prompt_style.create_plugin_manager(environ={})
    cache: dict = {}

    def load(name: str, path: Path | None = None):
        if path is None:
            path = folders(name)
            if EXPECTED["derived"].get(name, {}).get("bare"):
                path = path / "tokenizer.json"
        if path not in cache:
            cache[path] = resolve_tokenizer(manager, path)
        return cache[path]

    return load
