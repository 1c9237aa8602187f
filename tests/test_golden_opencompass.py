"""Parity with the real OpenCompass 0.5.4 (tests/golden/opencompass/, made by
tools/golden/make_opencompass_golden.py).

Every dataset config (shipped with OpenCompass, plus synthetic ones for its
corners) is rendered through every meta template (shipped model configs, plus
two from OpenCompass's documentation) in generation and perplexity mode, and
compared with what OpenCompass's PromptTemplate + retriever + LMTemplateParser
/ APITemplateParser (+ the OpenAI model's message conversion) built. Where
OpenCompass raises, prompt-style raises a PromptStyleError too, except for the
documented cases (docs/opencompass.md, "Differences") where it renders sensibly.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from prompt_style import PromptStyleError, load_task
from prompt_style.formats import load_task_config

GOLDEN = Path(__file__).parent / "golden" / "opencompass"
OUTPUTS = sorted((GOLDEN / "outputs").glob("*.jsonl.gz"))


def _lines(path: Path) -> list[str]:
    """A golden output file's lines (gzipped JSON Lines: one header, then one line per record)."""
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


# Where OpenCompass fails and prompt-style renders sensibly instead: (dataset, meta, mode) -> why.
# (Cases found from the dataset and meta template themselves are in _rendered_where_opencompass_fails.)
RENDERED_WHERE_OPENCOMPASS_FAILS = {
    # An `end` section: OpenCompass's parser opens it with pos='end' and fails on the
    # section stack whenever it gets that far (perplexity, or no generate role).
    **{
        ("synthetic_end_section", m, "ppl"): "end section"
        for m in (
            "internlm2_chat_7b_with_system",
            "qwen_7b_chat",
            "doc_full",
            "doc_no_generate",
            "gpt_4",
            "llama3_1_8b_instruct",
            "bailing_pro_1120",
            "llama3_instruct",
            "no_generate_end",
            "strings_in_round",
            "default_prompts",
            "gemini_pro",
            "internlm2_chat_math_7b_with_system",
        )
    },
    **{
        ("synthetic_end_section", m, "gen"): "end section"
        for m in ("doc_no_generate", "bailing_pro_1120", "no_generate_end")
    },
}


def _dialogue_items(dataset: str):
    """(section, item) for every role item of the dataset's templates (every label's)."""
    infer = _yaml(GOLDEN / "datasets" / f"{dataset}.yaml")["infer_cfg"]
    for key in ("ice_template", "prompt_template"):
        cfg = infer.get(key)
        if not cfg or not isinstance(cfg.get("template"), dict):
            continue
        template = cfg["template"]
        dialogues = [template] if set(template) <= {"begin", "round", "end"} else list(template.values())
        for dialogue in dialogues:
            if not isinstance(dialogue, dict):
                continue
            for section in ("begin", "round", "end"):
                items = dialogue.get(section) or []
                for item in items if isinstance(items, list) else [items]:
                    if isinstance(item, dict):
                        yield section, item


def _meta_roles(meta: str):
    """(round role names, reserved role names, generate role names, API?) of a golden meta template."""
    spec = _meta(meta)
    if not isinstance(spec, dict):
        return None
    round_roles = [r for r in spec.get("round", []) if isinstance(r, dict)]
    reserved = [r for r in spec.get("reserved_roles", []) if isinstance(r, dict)]
    api = any("api_role" in r for r in round_roles + reserved)
    generate = {r["role"] for r in round_roles + reserved if r.get("generate")}
    return {r["role"] for r in round_roles}, {r["role"] for r in reserved}, generate, api


def _rendered_where_opencompass_fails(dataset: str, meta: str, mode: str) -> str | None:
    """Why OpenCompass fails where prompt-style renders, from the dataset and meta template
    (docs/opencompass.md, "Differences"), or None."""
    roles = _meta_roles(meta)
    if roles is None:
        return None
    in_round, reserved, generate, api = roles
    known = in_round | reserved
    items = list(_dialogue_items(dataset))
    if any(i.get("role") not in known and i.get("fallback_role") not in known for _, i in items):
        return None  # a role the meta template lacks: both fail
    for section, item in items:
        role, fallback = item.get("role"), item.get("fallback_role")
        if section == "round" and role not in in_round:
            if role in reserved and (not api or fallback is None):
                return "a reserved role inside a round is shown in place (OpenCompass: KeyError)"
            if fallback is not None and role not in reserved and fallback in in_round | reserved and not api:
                return "a fallback_role inside a round works (OpenCompass's LM parser: KeyError)"
        if section in ("begin", "end") and api and mode == "gen":
            own = role if role in in_round | reserved else fallback
            if own in generate:
                return "a generate role in begin/end is sent (OpenCompass's API parser: TypeError)"
    return None


def _differs_by_template(dataset: str, meta: str) -> bool:
    """An API meta template and a reserved role inside a round: OpenCompass files it under
    the fallback's position and drops its text; prompt-style sends it."""
    roles = _meta_roles(meta)
    if roles is None or not roles[3]:
        return False
    in_round, reserved = roles[0], roles[1]
    return any(
        section == "round" and item.get("role") in reserved - in_round and item.get("fallback_role") is not None
        for section, item in _dialogue_items(dataset)
    )


# Where OpenCompass renders and prompt-style deliberately differs: (dataset, meta or "*", mode or "*") -> why.
DIFFERS_FROM_OPENCOMPASS = {
    ("synthetic_rescan", "*", "*"): "record values are never re-scanned for placeholders",
    ("synthetic_sep_token", "*", "ppl"): "sep_token is removed from in-context examples too",
}


# Where OpenCompass renders and prompt-style raises: dataset -> why.
RAISED_WHERE_OPENCOMPASS_RENDERS = {
    # The shipped few-shot config's ice_token appears nowhere: OpenCompass silently renders zero-shot.
    "SuperGLUE_BoolQ_few_shot_ppl": "in-context examples with nowhere to go",
}


def _differs(dataset: str, meta: str, mode: str) -> bool:
    if _differs_by_template(dataset, meta):
        return True
    return any((dataset, m, md) in DIFFERS_FROM_OPENCOMPASS for m in (meta, "*") for md in (mode, "*"))


def _cases():
    for path in OUTPUTS:
        lines = _lines(path)
        header = json.loads(lines[0])
        grouped = defaultdict(list)
        for line in lines[1:]:
            item = json.loads(line)
            grouped[(item["meta"], item["mode"])].append(item)
        yield pytest.param(header["dataset"], dict(grouped), id=header["dataset"])


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=None)
def _yaml(path: Path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


def _meta(name: str):
    if name == "none":
        return "plain"
    return _yaml(GOLDEN / "metas" / f"{name}.yaml")


def _data(dataset: str) -> dict[str, Path]:
    return {p.stem: p for p in (GOLDEN / "records" / dataset).glob("*.jsonl")}


def _is_label_keyed(dataset: str) -> bool:
    config = _yaml(GOLDEN / "datasets" / f"{dataset}.yaml")
    infer = config["infer_cfg"]
    template = (infer.get("prompt_template") or infer["ice_template"])["template"]
    return isinstance(template, dict) and not all(k in ("begin", "round", "end") for k in template)


@functools.lru_cache(maxsize=None)
def _config(dataset: str):
    """The task file read once (a TaskConfig), rendered through every meta template and mode."""
    return load_task_config(GOLDEN / "datasets" / f"{dataset}.yaml")


def _render(pm, dataset: str, meta: str, mode: str, **options):
    task = load_task(
        _config(dataset),
        plugins=pm,
        data=_data(dataset),
        meta=_meta(meta),
        mode=mode,
        meta_options=options or None,
    )
    out = []
    for index, record in enumerate(task.records()):
        try:
            out.append(task.renderer.render(record, index))
        except PromptStyleError as exc:
            out.append(exc)
    return out


def _view(result, api_format: str = "openai"):
    key = "oc_messages" if api_format == "opencompass" else "messages"
    if result.text is not None:
        return {"text": result.text}
    return {key: result.messages}


def _expected(item, api_format: str = "openai"):
    if "text" in item:
        return {"text": item["text"]}
    key = "oc_messages" if api_format == "opencompass" else "messages"
    if isinstance(item[key], str):  # a string prompt: OpenCompass hands its API model the string
        return {"text": item[key]}
    return {key: item[key]}


@pytest.mark.parametrize("dataset, cases", list(_cases()))
def test_matches_opencompass(pm, dataset, cases):
    problems = []
    for (meta, mode), items in cases.items():
        try:
            _check(pm, dataset, meta, mode, items)
        except AssertionError as exc:
            problems.append(f"{meta} {mode}: {str(exc).splitlines()[0]}")
    assert not problems, f"{len(problems)} of {len(cases)} cases differ:\n" + "\n".join(problems)


def _check(pm, dataset, meta, mode, items):
    ours = _render(pm, dataset, meta, mode)
    assert len(ours) == len(items)
    listed_failing = (dataset, meta, mode) in RENDERED_WHERE_OPENCOMPASS_FAILS
    failing_case = listed_failing or bool(_rendered_where_opencompass_fails(dataset, meta, mode))
    differs = _differs(dataset, meta, mode)
    label_keyed = _is_label_keyed(dataset)
    compared = []
    for item, result in zip(items, ours):
        if "error" in item:
            if failing_case:
                assert not isinstance(result, Exception), f"record {item['index']}: {result}"
            else:
                assert isinstance(result, PromptStyleError), f"OpenCompass raised {item['error']}, we rendered"
            continue
        if dataset in RAISED_WHERE_OPENCOMPASS_RENDERS:
            assert isinstance(result, PromptStyleError) and "nowhere to go" in str(result)
            continue
        assert not isinstance(result, Exception), f"record {item['index']}: {result}"
        assert not listed_failing, "listed as failing in OpenCompass, but OpenCompass rendered it"
        if mode == "gen":
            same = _view(result) == _expected(item)
        else:
            theirs = item["candidates"]
            if label_keyed:
                same = [c.label for c in result.candidates] == [c["label"] for c in theirs] and [
                    _view(c) for c in result.candidates
                ] == [_expected(c) for c in theirs]
            else:
                # Not label-keyed: every OpenCompass "label" gives the same prompt; we give one, labelled with the gold.
                assert len(result.candidates) == 1
                assert result.candidates[0].label == result.target
                same = all(_view(result.candidates[0]) == _expected(c) for c in theirs)
        compared.append(same)
        if differs:
            continue  # checked against the sensible output in tests/test_opencompass.py
        assert same, f"record {item['index']} differs from OpenCompass"
    if differs and compared:
        assert not all(compared), "listed as differing from OpenCompass, but every record is the same"


@pytest.mark.parametrize("dataset", ["mmlu_gen_4d595a", "FewCLUE_bustm_ppl_4b16c0", "CLUE_CMRC_gen_8484b9"])
def test_opencompass_api_format(pm, dataset):
    """api_format=opencompass gives the list OpenCompass hands its API models."""
    lines = _lines(GOLDEN / "outputs" / f"{dataset}.jsonl.gz")[1:]
    items = [json.loads(line) for line in lines]
    for meta in ("gpt_4", "llama3_1_8b_instruct", "bailing_pro_1120"):
        ours = _render(pm, dataset, meta, "gen", api_format="opencompass")
        theirs = [i for i in items if i["meta"] == meta and i["mode"] == "gen"]
        assert [_view(r, "opencompass") for r in ours] == [_expected(i, "opencompass") for i in theirs]


def test_goldens_cover_the_issue():
    """At least 10 shipped dataset configs and 12 shipped meta templates."""
    shipped = [p for p in OUTPUTS if not p.name.startswith("synthetic_")]
    assert len(shipped) >= 10
    metas = [p for p in (GOLDEN / "metas").glob("*.yaml") if not p.stem.startswith("doc_")]
    assert len(metas) >= 12
    assert (GOLDEN / "VERSIONS").read_text().strip() == "opencompass 0.5.4"


PY_DATASETS = sorted(p.stem for p in (GOLDEN / "py").glob("*.py") if (GOLDEN / "datasets" / f"{p.stem}.yaml").is_file())


@pytest.mark.parametrize("dataset", PY_DATASETS)
def test_python_config_renders_like_its_yaml(pm, dataset):
    """The shipped .py config as a user gives it (--trust-code) renders what the YAML the
    golden script wrote from it renders, so the goldens hold for the .py file too."""
    for meta in ("none", "qwen_7b_chat", "llama3_instruct", "gpt_4"):
        for mode in ("gen", "ppl"):
            options = {"plugins": pm, "data": _data(dataset), "meta": _meta(meta), "mode": mode}
            from_yaml = load_task(GOLDEN / "datasets" / f"{dataset}.yaml", **options)
            abbr = _yaml(GOLDEN / "datasets" / f"{dataset}.yaml").get("abbr")
            from_py = load_task(GOLDEN / "py" / f"{dataset}.py", trust_code=True, template=abbr, **options)
            ours = [
                (r.text, r.messages, [(c.label, c.text, c.messages) for c in r.candidates or ()])
                for r in from_py.render()
            ]
            theirs = [
                (r.text, r.messages, [(c.label, c.text, c.messages) for c in r.candidates or ()])
                for r in from_yaml.render()
            ]
            assert ours == theirs and ours, (meta, mode)
