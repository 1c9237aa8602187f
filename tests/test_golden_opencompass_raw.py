"""Parity with the real OpenCompass 0.5.4 for RawPromptTemplate (tests/golden/opencompass/raw/,
made by tools/golden/make_opencompass_raw_golden.py).

Shipped dataset configs that use RawPromptTemplate (and synthetic ones for the
corners) are rendered through every meta template of the main OpenCompass
goldens and through meta templates that are lists of messages, and compared
with what OpenCompass built: API meta templates byte for byte (OpenCompass's
APITemplateParser passes the messages through, or merges a list meta
template). OpenCompass's LMTemplateParser fails on a message list; prompt-style
renders it as the equivalent PromptTemplate dialogue, compared with what
LMTemplateParser makes of that dialogue. GenInferencer(multiround=True) is
compared request by request with OpenCompass's own _generate_multiround.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from prompt_style import PromptStyleError, load_task

GOLDEN = Path(__file__).parent / "golden" / "opencompass" / "raw"
METAS = Path(__file__).parent / "golden" / "opencompass" / "metas"
OUTPUTS = sorted((GOLDEN / "outputs").glob("*.jsonl"))

# Where OpenCompass renders and prompt-style deliberately differs (docs/opencompass.md): dataset -> why.
# (Checked against the sensible output in tests/test_opencompass_raw.py; here: some output differs.)
DIFFERS = {
    "synthetic_ice_only_answer_leak": "the output column is masked in generation prompts",
    "synthetic_rescan": "record values are never re-scanned for placeholders",
}


@functools.lru_cache(maxsize=None)
def _yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _meta(name: str):
    if name == "none":
        return "plain"
    path = GOLDEN / "metas" / f"{name}.yaml"
    return _yaml(path if path.is_file() else METAS / f"{name}.yaml")


def _data(dataset: str) -> dict[str, Path]:
    return {p.stem: p for p in (GOLDEN / "records" / dataset).glob("*.jsonl")}


def _task(pm, dataset: str, meta: str, **options):
    return load_task(
        GOLDEN / "datasets" / f"{dataset}.yaml",
        plugins=pm,
        data=_data(dataset),
        meta=_meta(meta),
        meta_options=options or None,
    )


def _cases():
    for path in OUTPUTS:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        grouped = defaultdict(list)
        for line in lines[1:]:
            item = json.loads(line)
            grouped[item["meta"]].append(item)
        yield pytest.param(header["dataset"], dict(grouped), id=header["dataset"])


def _has_parts(result) -> bool:
    return any(not isinstance(turn.content, str) for turn in result.dialogue)


def _check(item, result, api_format: str = "openai") -> bool:
    """Whether our rendering is OpenCompass's (or its LM equivalent); raises for what must hold."""
    if "messages" in item:
        assert not isinstance(result, Exception), f"record {item['index']}: {result}"
        key = "oc_messages" if api_format == "opencompass" else "messages"
        return result.messages == item[key]
    if "text" in item:
        assert not isinstance(result, Exception), f"record {item['index']}: {result}"
        return result.text == item["text"]
    error = item["error"]
    if error.startswith("TypeError: can only concatenate"):
        # A list meta template meeting content parts: OpenCompass fails; we put its text first.
        assert not isinstance(result, Exception), f"record {item['index']}: {result}"
        return any(isinstance(m["content"], list) and m["content"][0]["type"] == "text" for m in result.messages)
    assert error.startswith("AssertionError"), error  # LMTemplateParser on a message list
    if "equivalent" in item:
        assert not isinstance(result, Exception), f"record {item['index']}: {result}"
        return result.text == item["equivalent"]
    # No PromptTemplate equivalent (content parts, or a system message after the first turn).
    if isinstance(result, Exception):
        assert isinstance(result, PromptStyleError) and "multimodal" in str(result), result
        return True
    assert not _has_parts(result) and isinstance(result.text, str)
    return True


def _multiround(pm, dataset, meta, items):
    task = _task(pm, dataset, meta)
    replies = [item["replies"] for item in items]
    got = defaultdict(list)
    for request in task.render(replies=replies):
        got[request.index].append(request)
    for item in items:
        ours = got[item["index"]]
        assert len(ours) == len(item["requests"]), f"record {item['index']}: {len(ours)} requests"
        for n, (theirs, request) in enumerate(zip(item["requests"], ours)):
            assert request.turn == n
            assert _check({"index": item["index"], **theirs}, request), f"record {item['index']} request {n}"


@pytest.mark.parametrize("dataset, cases", list(_cases()))
def test_matches_opencompass(pm, dataset, cases):
    problems = []
    differing = 0
    for meta, items in cases.items():
        try:
            if "requests" in items[0]:
                _multiround(pm, dataset, meta, items)
                continue
            task = _task(pm, dataset, meta)
            ours = []
            for index, record in enumerate(task.records()):
                try:
                    ours.append(task.renderer.render(record, index))
                except PromptStyleError as exc:
                    ours.append(exc)
            assert len(ours) == len(items)
            same = [_check(item, result) for item, result in zip(items, ours)]
            if dataset in DIFFERS:
                differing += not all(same)
            else:
                bad = [item["index"] for item, ok in zip(items, same) if not ok]
                assert not bad, f"records {bad} differ from OpenCompass"
        except AssertionError as exc:
            problems.append(f"{meta}: {str(exc).splitlines()[0]}")
    if dataset in DIFFERS:
        assert differing, "listed as differing from OpenCompass, but every output is the same"
    assert not problems, f"{len(problems)} of {len(cases)} meta templates differ:\n" + "\n".join(problems)


@pytest.mark.parametrize("dataset", ["BuySideFinBench_gen_ca1704_en", "clbench_llmjudge_rawprompt_gen_84a8f0"])
def test_opencompass_api_format(pm, dataset):
    """api_format=opencompass: OpenCompass hands its API model the message list itself."""
    lines = (GOLDEN / "outputs" / f"{dataset}.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    items = [json.loads(line) for line in lines]
    for meta in ("gpt_4", "llama3_1_8b_instruct", "bailing_pro_1120", "list_system_user"):
        task = _task(pm, dataset, meta, api_format="opencompass")
        theirs = [i for i in items if i["meta"] == meta]
        ours = [task.renderer.render(r, i) for i, r in enumerate(task.records())]
        assert all(_check(item, result, "opencompass") for item, result in zip(theirs, ours))


def test_goldens_cover_the_brief():
    """At least 8 shipped configs; few-shot, expand_column and multiround among them."""
    shipped = [p.stem for p in OUTPUTS if not p.stem.startswith(("synthetic_", "example_"))]
    assert len(shipped) >= 8
    infer = {name: _yaml(GOLDEN / "datasets" / f"{name}.yaml")["infer_cfg"] for name in shipped}
    assert any(cfg["retriever"]["type"] == "FixKRetriever" for cfg in infer.values())
    assert any("expand_column" in json.dumps(cfg) for cfg in infer.values())
    assert any(cfg["inferencer"].get("multiround") for cfg in infer.values())
    assert (GOLDEN / "VERSIONS").read_text().strip() == "opencompass 0.5.4"


def test_perplexity_is_refused_as_in_opencompass(pm, tmp_path):
    """OpenCompass's PPLInferencer fails on a RawPromptTemplate (no labels; the label prompt
    ignores the label); prompt-style refuses it with a clear error."""
    recorded = json.loads((GOLDEN / "ppl.json").read_text(encoding="utf-8"))
    assert recorded["prompt_template"].startswith("AttributeError")
    assert recorded["label_prompts"]["A"] == recorded["label_prompts"]["B"]
    config = _yaml(GOLDEN / "datasets" / "mmlu_llmjudge_rawprompt_gen_af67f0.yaml")
    with pytest.raises(PromptStyleError, match="no perplexity mode"):
        load_task(
            GOLDEN / "datasets" / "mmlu_llmjudge_rawprompt_gen_af67f0.yaml",
            plugins=pm,
            data=_data("mmlu_llmjudge_rawprompt_gen_af67f0"),
            mode="ppl",
        )
    config["infer_cfg"]["inferencer"] = {"type": "PPLInferencer"}
    path = tmp_path / "ppl.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(PromptStyleError, match="no perplexity mode") as info:
        load_task(path, plugins=pm, data=_data("mmlu_llmjudge_rawprompt_gen_af67f0"))
    assert "infer_cfg.inferencer.type" in str(info.value)


PY_CONFIGS = sorted((GOLDEN / "py").glob("*.py"))


@pytest.mark.parametrize("path", PY_CONFIGS, ids=[p.stem for p in PY_CONFIGS])
def test_python_configs_load_with_trust_code(pm, path):
    """OpenCompass's own .py configs using RawPromptTemplate load as mmengine reads them."""
    from prompt_style.safe.oc_python import exec_config

    expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
    namespace = exec_config(path)
    for key, datasets in expected.items():
        ours = namespace[key]
        assert len(ours) == len(datasets)
        for mine, theirs in zip(ours, datasets):
            assert _plain(mine["infer_cfg"]) == theirs["infer_cfg"]
            assert _plain(mine["reader_cfg"]) == theirs["reader_cfg"]
    # And each dataset of the file reads as a task.
    for index in range(sum(len(v) for v in expected.values())):
        pool = [{}] * 5
        load_task(path, plugins=pm, trust_code=True, template=index, data={"test": [{}], "dev": pool, "train": pool})


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    name = getattr(value, "__opencompass_name__", None)
    return name if name is not None else value


@pytest.mark.parametrize(
    "dataset, py",
    [
        ("BuySideFinBench_gen_ca1704_en", "BuySideFinBench_gen_ca1704.py"),
        ("MultiIF_gen", "MultiIF_gen.py"),
        ("mol_biotext_rawprompt_gen_CER", "mol_biotext_rawprompt_gen.py"),
    ],
)
def test_python_config_renders_like_its_yaml(pm, dataset, py):
    """The shipped .py file (--trust-code) renders as the YAML the golden script wrote from it."""
    abbr = _yaml(GOLDEN / "datasets" / f"{dataset}.yaml")["abbr"]
    meta = _meta("gpt_4")
    from_yaml = load_task(GOLDEN / "datasets" / f"{dataset}.yaml", plugins=pm, data=_data(dataset), meta=meta)
    from_py = load_task(GOLDEN / "py" / py, plugins=pm, data=_data(dataset), meta=meta, trust_code=True, template=abbr)
    replies = [["r1", "r2", "r3"]] * len(list(from_yaml.records()))
    a = [(r.index, r.messages) for r in from_yaml.render(replies=replies)]
    b = [(r.index, r.messages) for r in from_py.render(replies=replies)]
    assert a == b and a
