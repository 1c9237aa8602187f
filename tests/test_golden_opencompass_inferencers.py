"""Parity with the real OpenCompass 0.5.4 inferencers (tests/golden/opencompass/inferencers/,
made by tools/golden/make_opencompass_inferencer_golden.py).

Dataset configs shipped with OpenCompass that name ``ChatInferencer``, ``LLInferencer``,
``PPLOnlyInferencer`` and ``InferencePPLOnlyInferencer`` (and synthetic ones for the
corners) are rendered through every meta template of the main OpenCompass goldens, and
compared with what the real inferencer sent a recording model: every request of a
ChatInferencer chat in each ``infer_mode`` (with the model's replies for ``every``), every
label's prompt and the scored ``cont`` of LLInferencer, the prompt PPLOnlyInferencer
scores. Where OpenCompass fails and prompt-style renders (or the other way round), the
case is listed with the reason (docs/opencompass.md, "Differences").
"""

from __future__ import annotations

import copy
import functools
import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from prompt_style import PromptStyleError, load_task

GOLDEN = Path(__file__).parent / "golden" / "opencompass" / "inferencers"
METAS = Path(__file__).parent / "golden" / "opencompass" / "metas"
OUTPUTS = sorted((GOLDEN / "outputs").glob("*.jsonl.gz"))

# OpenCompass fails, prompt-style renders: (dataset, start of OpenCompass's error) -> why.
RENDERED_WHERE_OPENCOMPASS_FAILS = {
    ("synthetic_chat_fixk_examples_unused", "TypeError: string indices"): (
        "an empty plain string of the template (the ice token with no examples) is no message "
        "(OpenCompass's promptlist_to_openai fails on it)"
    ),
    ("synthetic_ppl_only_fixk", "KeyError: None"): (
        "in-context examples without an output column (OpenCompass's generate_ice looks up the label None)"
    ),
    ("synthetic_ppl_only_output_column", "AssertionError"): (
        "an output column (OpenCompass's PPLOnlyInferencer asserts there is none); it is masked as in generation"
    ),
    ("synthetic_ppl_labels_option", "AttributeError: 'PromptList' object has no attribute 'encode'"): (
        "perplexity prompts through an API meta template are messages (OpenCompass's API models cannot score them)"
    ),
}

# Our errors for a meta template that cannot show the prompt at all (a role it lacks, a
# plain string in ChatInferencer's round): OpenCompass fails on those too, whatever else it fails on first.
META_CANNOT_SHOW = ("the meta template has no role", "and the meta template has none", "holds the plain string")


def _rendered_or_meta_error(result, where):
    """Where OpenCompass fails on a listed bug, we render, unless the meta template cannot show
    the prompt (then OpenCompass fails for that reason too)."""
    if isinstance(result, Exception):
        assert isinstance(result, PromptStyleError) and any(m in str(result) for m in META_CANNOT_SHOW), (
            f"{where}: {result}"
        )


# OpenCompass renders (or sends nothing), prompt-style raises: dataset -> why.
RAISED_WHERE_OPENCOMPASS_RENDERS = {
    "synthetic_chat_list_columns_uneven": "list columns of different lengths (OpenCompass's zip drops rounds)",
    "synthetic_chat_other_role": "a template role ChatInferencer cannot place (OpenCompass drops the message)",
    "synthetic_chat_dialogue_without_assistant": "a chat without an assistant turn (OpenCompass sends nothing)",
}


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


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


def _config(dataset: str, infer_mode: str | None = None):
    config = copy.deepcopy(_yaml(GOLDEN / "datasets" / f"{dataset}.yaml"))
    if infer_mode is not None:
        config["infer_cfg"]["inferencer"]["infer_mode"] = infer_mode
    return config


def _task(pm, dataset, meta, infer_mode=None, **options):
    return load_task(
        _config(dataset, infer_mode), plugins=pm, data=_data(dataset), meta=_meta(meta), meta_options=options or None
    )


def _cases():
    for path in OUTPUTS:
        lines = _lines(path)
        header = json.loads(lines[0])
        grouped = defaultdict(list)
        for line in lines[1:]:
            item = json.loads(line)
            grouped[(item["meta"], item.get("infer_mode"))].append(item)
        yield pytest.param(header["dataset"], dict(grouped), id=header["dataset"])


def _well_formed(messages) -> bool:
    """OpenCompass's OpenAI model sends a message without a role for a role it does not map,
    and the list as it is (``prompt`` keys) when no role was mapped."""
    return isinstance(messages, list) and all(set(m) == {"role", "content"} for m in messages)


def _same(theirs: dict, ours, api_opencompass=None) -> bool:
    """Our rendering (a RenderedPrompt or Candidate) against what the model was given."""
    if "text" in theirs:
        return ours.text == theirs["text"]
    if isinstance(theirs["oc_messages"], str):  # a string prompt: OpenCompass hands the API model the string
        return ours.messages == [{"role": "user", "content": theirs["oc_messages"]}]
    if api_opencompass is not None and api_opencompass.messages != theirs["oc_messages"]:
        return False
    if _well_formed(theirs["messages"]):
        return ours.messages == theirs["messages"]
    # Where OpenCompass's message is malformed, ours keeps the chat's own role.
    return [m["content"] for m in ours.messages] == [m["prompt"] for m in theirs["oc_messages"]]


def _render_chat(pm, dataset, meta, mode, items, api):
    """Per record: the list of requests, or the error."""
    task = _task(pm, dataset, meta, mode)
    task_oc = _task(pm, dataset, meta, mode, api_format="opencompass") if api else None
    out = []
    for index, record in enumerate(task.records()):
        replies = items[index].get("replies") or [f"reply {index}.{t}: {{answer}} </E> ✓" for t in range(20)]
        try:
            answer = replies.__getitem__
            requests = list(task.renderer.converse(record, index, lambda r, answer=answer: answer(r.turn)))
            oc = (
                list(task_oc.renderer.converse(record, index, lambda r, answer=answer: answer(r.turn))) if api else None
            )
            out.append((requests, oc))
        except PromptStyleError as exc:
            out.append((exc, None))
    return out


def _check_chat(pm, dataset, meta, mode, items):
    api = any("messages" in r for item in items for r in item.get("requests", []))
    ours = _render_chat(pm, dataset, meta, mode, items, api)
    assert len(ours) == len(items)
    for item, (result, oc) in zip(items, ours):
        where = f"record {item['index']}"
        if "error" in item:
            error = item["error"]
            reason = next(
                (r for (d, e), r in RENDERED_WHERE_OPENCOMPASS_FAILS.items() if d == dataset and error.startswith(e)),
                None,
            )
            sent = item.get("requests_before_error")
            if error.startswith("AssertionError") and sent:
                # ChatInferencer (dialogue mode, every) sends every request, then asserts the chat alternates.
                theirs = sent
            elif reason is not None:
                _rendered_or_meta_error(result, where)
                continue
            else:
                assert isinstance(result, PromptStyleError), f"{where}: OpenCompass raised {error}, we rendered"
                continue
        elif dataset in RAISED_WHERE_OPENCOMPASS_RENDERS:
            assert isinstance(result, PromptStyleError), f"{where}: rendered"
            continue
        else:
            theirs = item["requests"]
        assert not isinstance(result, Exception), f"{where}: {result}"
        assert len(result) == len(theirs), f"{where}: {len(result)} requests, OpenCompass sent {len(theirs)}"
        first = len(item["golds"]) - len(theirs) if "golds" in item else 0
        for n, (request, sent_item) in enumerate(zip(result, theirs)):
            assert request.turn == first + n
            assert _same(sent_item, request, oc[n] if oc else None), f"{where} request {n} differs"
            if "golds" in item:
                assert request.target == item["golds"][first + n], f"{where} request {n}: target"


def _check_scored(pm, dataset, meta, items):
    task = _task(pm, dataset, meta)
    ours = []
    for index, record in enumerate(task.records()):
        try:
            ours.append(task.renderer.render(record, index))
        except PromptStyleError as exc:
            ours.append(exc)
    assert len(ours) == len(items)
    for item, result in zip(items, ours):
        where = f"record {item['index']}"
        if "error" in item:
            reason = next(
                (
                    r
                    for (d, e), r in RENDERED_WHERE_OPENCOMPASS_FAILS.items()
                    if d == dataset and item["error"].startswith(e)
                ),
                None,
            )
            if reason is not None:
                _rendered_or_meta_error(result, where)
            else:
                assert isinstance(result, PromptStyleError), f"{where}: OpenCompass raised {item['error']}, we rendered"
            continue
        assert not isinstance(result, Exception), f"{where}: {result}"
        if "candidates" in item:
            theirs = item["candidates"]
            assert [c.label for c in result.candidates] == [c["label"] for c in theirs], where
            for mine, their in zip(result.candidates, theirs):
                assert _same(their, mine), f"{where} label {their['label']!r} differs"
            conts = {c["cont"] for c in theirs if "cont" in c}
            assert list(result.continuations) == sorted(conts), f"{where}: continuations"
        else:
            assert result.mode == "ppl" and result.candidates is None
            assert _same(item, result), f"{where} differs"


@pytest.mark.parametrize("dataset, cases", list(_cases()))
def test_matches_opencompass(pm, dataset, cases):
    problems = []
    for (meta, mode), items in cases.items():
        try:
            if mode is not None:
                _check_chat(pm, dataset, meta, mode, items)
            else:
                _check_scored(pm, dataset, meta, items)
        except AssertionError as exc:
            problems.append(f"{meta} {mode or ''}: {str(exc).splitlines()[0]}")
    assert not problems, f"{len(problems)} of {len(cases)} cases differ:\n" + "\n".join(problems)


def test_goldens_cover_the_inferencers():
    """Shipped configs of each inferencer, in several real meta templates, all three chat modes."""
    shipped = [p.name.removesuffix(".jsonl.gz") for p in OUTPUTS if not p.name.startswith("synthetic_")]
    kinds = defaultdict(list)
    for name in shipped:
        kinds[_yaml(GOLDEN / "datasets" / f"{name}.yaml")["infer_cfg"]["inferencer"]["type"]].append(name)
    assert len(kinds["ChatInferencer"]) >= 6
    assert len(kinds["LLInferencer"]) >= 2
    assert len(kinds["PPLOnlyInferencer"]) >= 3
    assert (GOLDEN / "VERSIONS").read_text().strip() == "opencompass 0.5.4"


def test_list_begin_end_render_joined(pm):
    """Meta templates whose begin/end are lists of strings: OpenCompass's LMTemplateParser
    fails on them (NotImplementedError for a role's, TypeError for the meta template's);
    prompt-style joins the strings, which is what OpenCompass's unreachable
    ``_encode_speical_tokens`` does with strings."""
    recorded = json.loads((GOLDEN / "list_begin_end.json").read_text(encoding="utf-8"))
    assert recorded["role_begin_end_lists"]["error"].startswith("NotImplementedError")
    assert recorded["meta_begin_end_lists"]["error"].startswith("TypeError")
    task = {
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {
                "type": "PromptTemplate",
                "template": {"round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}]},
            },
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer"},
        },
        "data": {"test": [{"q": "Hi", "a": "x"}]},
    }

    def joined(meta):
        out = copy.deepcopy(meta)
        for holder in [out, *out["round"]]:
            for key in ("begin", "end"):
                if isinstance(holder.get(key), list):
                    holder[key] = "".join(holder[key])
        return out

    for case in recorded.values():
        [ours] = load_task(task, plugins=pm, meta=case["meta"]).render()
        [same] = load_task(task, plugins=pm, meta=joined(case["meta"])).render()
        assert ours.text == same.text
    [ours] = load_task(task, plugins=pm, meta=recorded["role_begin_end_lists"]["meta"]).render()
    assert ours.text == "<|user|>\nHi<|end|>\n<|assistant|>\n"


@pytest.mark.parametrize(
    "dataset, py",
    [
        ("teval_en_gen_1ac254_chat", "teval_en_gen_1ac254.py"),
        ("healthbench_gen_831613", "healthbench_gen_831613.py"),
        ("mtbench101_judge", "mtbench101_judge.py"),
        ("scicode_gen_085b98", "scicode_gen_085b98.py"),
        ("winogrande_ll_c5cf57", "winogrande_ll_c5cf57.py"),
        ("wikitext_2_raw_ppl_05247d", "wikitext_2_raw_ppl_05247d.py"),
    ],
)
def test_python_config_renders_like_its_yaml(pm, dataset, py):
    """The shipped .py file (--trust-code) renders as the YAML the golden script wrote from it."""
    abbr = _yaml(GOLDEN / "datasets" / f"{dataset}.yaml")["abbr"]
    for meta in ("internlm2_chat_7b_with_system", "gpt_4"):
        options = {"plugins": pm, "data": _data(dataset), "meta": _meta(meta)}
        from_yaml = load_task(GOLDEN / "datasets" / f"{dataset}.yaml", **options)
        from_py = load_task(GOLDEN / "py" / py, trust_code=True, template=abbr, **options)
        replies = [[f"r{i}" for i in range(8)]] * 8
        views = [
            [
                (r.index, r.turn, r.text, r.messages, [(c.label, c.text) for c in r.candidates or ()])
                for r in t.render(replies=replies)
            ]
            for t in (from_yaml, from_py)
        ]
        assert views[0] == views[1] and views[0], meta
