"""Regenerate tests/golden/opencompass/raw/ from the real OpenCompass: RawPromptTemplate.

Run with the Python of the venv of ``make_opencompass_golden.py`` (versions this
script was run with: opencompass 0.5.4, mmengine 0.10.7, torch 2.13.0+cpu,
datasets 5.2.0, Python 3.11):

    PYTHONHASHSEED=0 /tmp/venvs/opencompass/bin/python tools/golden/make_opencompass_raw_golden.py

What it does, all with OpenCompass's own code:

1. loads dataset configs shipped in ``opencompass/configs/datasets`` that use
   ``RawPromptTemplate`` (few-shot with ``FixKRetriever``, ``expand_column``,
   ``format_variables=False``, ``GenInferencer(multiround=True)``, system
   messages, multimodal content parts) with ``mmengine.Config.fromfile`` and
   writes their ``reader_cfg``/``infer_cfg`` as YAML task files
   (``datasets/*.yaml``), plus synthetic configs for the corners
   (``opencompass_raw_synthetic.yaml``);
2. writes records with awkward values (``{braces}``, ``</E>``, unicode, empty
   strings) and message lists for the ``expand_column`` fields (``records/``);
3. renders every dataset through every meta template of
   ``tests/golden/opencompass/metas/`` (those the main golden script wrote) and
   through meta templates that are lists of messages (``metas/``), as
   OpenCompass does — ``RawPromptTemplate`` + ``FixKRetriever``/``ZeroRetriever``
   (``generate_ice``, ``generate_prompt_for_generate_task``) +
   ``APITemplateParser`` and the OpenAI model's message conversion, or
   ``LMTemplateParser`` — into ``outputs/<dataset>.jsonl``. OpenCompass's
   ``LMTemplateParser`` fails on a message list (``AssertionError``): the error is
   recorded, and beside it ``equivalent``: what ``LMTemplateParser`` makes of the
   equivalent ``PromptList`` (system messages as ``SYSTEM`` items with
   ``fallback_role='HUMAN'`` in ``begin``, user and assistant messages as
   ``HUMAN`` and ``BOT`` items of the ``round``) — the rendering prompt-style gives
   language models — when the system messages all come first;
4. for ``GenInferencer(multiround=True)``, runs OpenCompass's own
   ``GenInferencer._generate_multiround`` with a stand-in model that records each
   request it is sent and answers with a fixed reply;
5. copies the ``.py`` configs verbatim (``py/``) with what mmengine reads from
   them (``py/*.expected.json``), for the ``--trust-code`` loader;
6. tries ``PPLInferencer`` and ``get_labels`` on a RawPromptTemplate and records
   OpenCompass's error (``ppl.json``).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_opencompass_golden as base  # noqa: E402  (stubs opencompass.datasets, imports OpenCompass)
import yaml  # noqa: E402
from datasets import Dataset  # noqa: E402
from mmengine.config import Config  # noqa: E402
from opencompass.models.base import LMTemplateParser  # noqa: E402
from opencompass.models.base_api import APITemplateParser  # noqa: E402
from opencompass.openicl.icl_inferencer import GenInferencer  # noqa: E402
from opencompass.openicl.icl_raw_prompt_template import RawPromptTemplate  # noqa: E402
from opencompass.openicl.icl_retriever import FixKRetriever, ZeroRetriever  # noqa: E402
from opencompass.utils.prompt import PromptList  # noqa: E402

ROOT = base.ROOT
OUT = ROOT / "tests" / "golden" / "opencompass" / "raw"
METAS = ROOT / "tests" / "golden" / "opencompass" / "metas"
SYNTHETIC = ROOT / "tools" / "golden" / "opencompass_raw_synthetic.yaml"
VERSION = base.VERSION

# name -> (config file under configs/datasets, dataset abbr or None for the first, lazy_import)
DATASETS = {
    "BuySideFinBench_gen_ca1704_en": (
        "BuySideFinBench/BuySideFinBench_gen_ca1704.py",
        "BuySideFinBench-three_statements_en",
        True,
    ),
    "BuySideFinBench_gen_ca1704_zh": (
        "BuySideFinBench/BuySideFinBench_gen_ca1704.py",
        "BuySideFinBench-dcf_valuation_zh",
        True,
    ),
    "mol_biotext_rawprompt_gen_CER": (
        "SciReasoner/mol_biotext_rawprompt_gen.py",
        "SciReasoner-mol_instruction_chemical_entity_recognition",
        True,
    ),
    "clbench_llmjudge_rawprompt_gen_84a8f0": ("CLBench/clbench_llmjudge_rawprompt_gen_84a8f0.py", None, True),
    "advancedIF_rawprompt_gen": ("advancedIF/advancedIF_rawprompt_gen.py", None, True),
    "MultiIF_gen": ("MultiIF/MultiIF_gen.py", None, True),
    "mtbench101_judge_new_rawprompt": ("subjective/multiround/mtbench101_judge_new_rawprompt.py", None, True),
    "MMBench_DEV_EN_vlmevalkit_gen": ("MMBench/MMBench_DEV_EN_vlmevalkit_gen.py", None, False),
    "MedXpertQA_llmjudge_rawprompt_gen": ("MedXpertQA/MedXpertQA_llmjudge_rawprompt_gen.py", None, True),
    "mmlu_llmjudge_rawprompt_gen_af67f0": (
        "mmlu/mmlu_llmjudge_rawprompt_gen_af67f0.py",
        "lukaemon_mmlu_college_biology",
        True,
    ),
    "smolinstruct_fts_0shot_rawprompt_instruct": (
        "SmolInstruct/smolinstruct_fts_0shot_rawprompt_instruct.py",
        "MG-0shot-instruct",
        True,
    ),
    "babilong_2k_rawprompt_gen": ("babilong/babilong_2k_rawprompt_gen.py", None, True),
    "livecodebench_rawprompt_gen_c09673": ("livecodebench/livecodebench_rawprompt_gen_c09673.py", None, True),
}

# Meta templates that are lists of messages (APITemplateParser merges them into message lists).
LIST_METAS = {
    "list_system": [{"role": "system", "content": "You are a careful assistant. "}],
    "list_system_user": [
        {"role": "system", "content": "SYS: "},
        {"role": "user", "content": "USER: "},
    ],
    "list_user_assistant": [
        {"role": "user", "content": "U> "},
        {"role": "assistant", "content": "A> "},
        {"role": "system", "content": "late system "},
    ],
}

AWKWARD = base.AWKWARD
ANSWERS = base.ANSWERS

# Message lists for expand_column fields: awkward contents, system messages first or not.
CONVERSATIONS = [
    [
        {"role": "system", "content": "You are {role}. Text with </E> inside."},
        {"role": "user", "content": "Ünïcödé — 中文 — 😀 {question}"},
        {"role": "assistant", "content": "multi-line\nanswer\n"},
        {"role": "user", "content": "And {x}?"},
    ],
    [{"role": "user", "content": "Compute \\frac{1}{2} of {{4}} and {}"}],
    [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "  leading and trailing spaces  "},
        {"role": "user", "content": "tab\tseparated, \"double\" and 'single' quotes"},
    ],
    [
        {"role": "system", "content": ""},
        {"role": "user", "content": "line one\nline two\n\nline four"},
    ],
]
MULTIROUND_DIALOGUES = [
    [
        {"role": "user", "content": "Write a haiku about {topic}."},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Now in French, with </E> kept."},
        {"role": "assistant", "content": ""},
    ],
    [
        {"role": "user", "content": "Ünïcödé — 中文 — 😀"},
        {"role": "assistant", "content": ""},
    ],
    [
        {"role": "user", "content": "Count to three."},
        {"role": "assistant", "content": "1, 2, 3"},
        {"role": "user", "content": "Again, backwards {n}."},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
    ],
]
MM_CONTENT = [
    [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "text", "text": "Question: what is {x}?\nA. a cat\nB. </E>"},
            ],
        }
    ],
    [{"role": "user", "content": [{"type": "text", "text": "Ünïcödé — 中文 — 😀"}]}],
]


# -- configs ------------------------------------------------------------------------------------


def load_dataset(rel: str, abbr: str | None, lazy: bool):
    path = base.CONFIGS / "datasets" / rel
    if lazy:
        items = base.load_config(path)
    else:
        # Configs that call os.getenv at load time cannot be read lazily by mmengine.
        cfg = Config.fromfile(str(path), lazy_import=False)
        items = {k: v for k, v in cfg.items()}
    dataset = base.plain(base.to_dict(base.find_dataset(items, abbr)))
    return {"abbr": dataset.get("abbr"), "reader_cfg": dataset["reader_cfg"], "infer_cfg": dataset["infer_cfg"]}


def raw_templates(infer):
    return [infer[k] for k in ("ice_template", "prompt_template") if infer.get(k)]


def expand_columns(infer):
    return [
        m["expand_column"]
        for t in raw_templates(infer)
        for m in t["messages"]
        if isinstance(m, dict) and "expand_column" in m
    ]


def placeholders(infer):
    names = []
    for template in raw_templates(infer):
        for message in template["messages"]:
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                for match in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", message["content"]):
                    names.append(match.group(1))
    return names


def make_records(dataset, n_train, n_test):
    """Records with awkward values for the input and output columns, and message lists
    for the expand_column fields. Placeholders naming no column stay unfilled."""
    reader, infer = dataset["reader_cfg"], dataset["infer_cfg"]
    columns = list(reader.get("input_columns") or [])
    output = reader.get("output_column")
    expand = expand_columns(infer)
    multiround = bool((infer.get("inferencer") or {}).get("multiround"))
    records = []
    for i in range(n_train + n_test):
        record = {}
        for j, column in enumerate(columns):
            if column in expand:
                if "MMBench" in (dataset.get("abbr") or ""):
                    record[column] = copy.deepcopy(MM_CONTENT[i % len(MM_CONTENT)])
                elif multiround:
                    record[column] = copy.deepcopy(MULTIROUND_DIALOGUES[i % len(MULTIROUND_DIALOGUES)])
                else:
                    record[column] = copy.deepcopy(CONVERSATIONS[(i + j) % len(CONVERSATIONS)])
                continue
            value = AWKWARD[(i + j) % len(AWKWARD)]
            record[column] = value.replace("{n}", str(i)) if "{n}" in value else value
        if output and output not in record:
            record[output] = ANSWERS[i % len(ANSWERS)]
        records.append(record)
    return records[:n_train], records[n_train:]


# -- rendering as OpenCompass does ----------------------------------------------------------------

RETRIEVERS = {"FixKRetriever": FixKRetriever, "ZeroRetriever": ZeroRetriever}


def build_template(cfg):
    if cfg is None:
        return None
    cfg = dict(cfg)
    assert cfg.pop("type") == "RawPromptTemplate", cfg
    return RawPromptTemplate(**copy.deepcopy(cfg))


def is_api(meta):
    return isinstance(meta, list) or base.is_api(meta)


def equivalent_prompt_list(messages):
    """The PromptList a PromptTemplate would give for these messages (system messages
    first only): SYSTEM items with fallback_role HUMAN in begin, HUMAN/BOT in the round."""
    roles = [m["role"] for m in messages]
    head = 0
    while head < len(roles) and roles[head] == "system":
        head += 1
    if "system" in roles[head:]:
        return None
    if any(not isinstance(m["content"], str) for m in messages):
        return None
    prompt = PromptList()
    if head:
        prompt.append({"section": "begin", "pos": "begin"})
        for m in messages[:head]:
            prompt.append({"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": m["content"]})
        prompt.append({"section": "begin", "pos": "end"})
    prompt.append({"section": "round", "pos": "begin"})
    for m in messages[head:]:
        prompt.append({"role": "HUMAN" if m["role"] == "user" else "BOT", "prompt": m["content"]})
    prompt.append({"section": "round", "pos": "end"})
    return prompt


def parse(meta, prompt):
    """What the model receives (generation), OpenCompass's way."""
    if meta is not None and is_api(meta):
        parsed = APITemplateParser(meta).parse_template(prompt, mode="gen")
        return {"oc_messages": base.jsonable_prompt(parsed), "messages": base.openai_messages(parsed)}
    try:
        return {"text": LMTemplateParser(meta).parse_template(prompt, mode="gen")}
    except Exception as exc:
        out = base.error(exc)
        equivalent = equivalent_prompt_list(prompt) if isinstance(prompt, list) else None
        if equivalent is not None:
            try:
                out["equivalent"] = LMTemplateParser(meta).parse_template(equivalent, mode="gen")
            except Exception as inner:
                out["equivalent_error"] = f"{type(inner).__name__}: {inner}"
        return out


def retriever_for(dataset, train, test):
    reader, infer = dataset["reader_cfg"], dataset["infer_cfg"]
    rcfg = dict(infer.get("retriever") or {"type": "ZeroRetriever"})
    rtype = RETRIEVERS[rcfg.pop("type")]
    # The records as plain dicts (the retrievers only index and measure them): a
    # datasets.Dataset would unify the keys of the message dicts across records
    # (adding "text": None to image parts), which prompt-style does not do.
    fake = SimpleNamespace(
        reader=SimpleNamespace(output_column=reader.get("output_column")),
        train=copy.deepcopy(train) if train else copy.deepcopy(test),
        test=copy.deepcopy(test),
    )
    return rtype(fake, **rcfg)


def prompts(dataset, train, test):
    """The generation prompts (OpenCompass's GenInferencer steps 2 and 3), or the error per record."""
    infer = dataset["infer_cfg"]
    ice_template = build_template(infer.get("ice_template"))
    prompt_template = build_template(infer.get("prompt_template"))
    retriever = retriever_for(dataset, train, test)
    token = (infer.get("inferencer") or {}).get("gen_field_replace_token", "")
    out = []
    for idx, ice_idx in enumerate(retriever.retrieve()):
        try:
            ice = retriever.generate_ice(ice_idx, ice_template=ice_template)
            prompt = retriever.generate_prompt_for_generate_task(
                idx, ice, gen_field_replace_token=token, ice_template=ice_template, prompt_template=prompt_template
            )
            out.append(prompt)
        except Exception as exc:
            out.append(exc)
    return out


class _Model:
    """A stand-in model for GenInferencer._generate_multiround: records each request
    (as the model's template parser gives it) and answers with a fixed reply."""

    def __init__(self, meta, chat_index):
        self.meta = meta
        self.chat_index = chat_index
        self.requests = {}
        self.lock = threading.Lock()

    def generate_from_template(self, templates, max_out_len, **kwargs):
        history = copy.deepcopy(templates[0])
        with self.lock:
            chat = self.chat_index[id(templates[0][0])] if templates[0] else -1
            turn = len(self.requests.setdefault(chat, []))
            self.requests[chat].append(parse(self.meta, history))
        return [reply_text(chat, turn)]


def reply_text(chat, turn):
    return f"reply {chat}.{turn}: {{answer}} </E> ✓"


def multiround(meta, raw_prompts):
    entry = [copy.deepcopy(p) for p in raw_prompts]
    chat_index = {id(chat[0]): i for i, chat in enumerate(entry) if chat}
    model = _Model(meta, chat_index)
    fake = SimpleNamespace(batch_size=1, max_out_len=16, model=model)
    GenInferencer._generate_multiround(fake, entry, {})
    return model.requests


def render_all(name, dataset, train, test, metas):
    lines = [json.dumps({"opencompass": VERSION, "dataset": name}, ensure_ascii=False)]
    raw_prompts = prompts(dataset, train, test)
    is_multiround = bool((dataset["infer_cfg"].get("inferencer") or {}).get("multiround"))
    for meta_name, meta in metas.items():
        if is_multiround:
            good = [p for p in raw_prompts if not isinstance(p, Exception)]
            assert len(good) == len(raw_prompts), raw_prompts
            requests = multiround(meta, good)
            for index in range(len(good)):
                made = requests.get(index, [])
                item = {
                    "meta": meta_name,
                    "mode": "gen",
                    "index": index,
                    "requests": made,
                    "replies": [reply_text(index, t) for t in range(len(made))],
                }
                lines.append(json.dumps(item, ensure_ascii=False))
            continue
        for index, prompt in enumerate(raw_prompts):
            if isinstance(prompt, Exception):
                item = base.error(prompt)
            else:
                try:
                    item = parse(meta, prompt)
                except Exception as exc:
                    item = base.error(exc)
            lines.append(json.dumps({"meta": meta_name, "mode": "gen", "index": index, **item}, ensure_ascii=False))
    return lines


def ppl_errors():
    """What OpenCompass does with a RawPromptTemplate under PPLInferencer."""
    template = RawPromptTemplate(messages=[{"role": "user", "content": "{q}"}])
    fake = SimpleNamespace(
        reader=SimpleNamespace(output_column="a"),
        train=Dataset.from_list([{"q": "x", "a": "A"}]),
        test=Dataset.from_list([{"q": "x", "a": "A"}]),
    )
    retriever = ZeroRetriever(fake)
    out = {}
    for what, kwargs in (
        ("prompt_template", {"prompt_template": template}),
        ("ice_template", {"ice_template": template}),
    ):
        try:
            retriever.get_labels(**kwargs)
            out[what] = "no error"
        except Exception as exc:
            out[what] = f"{type(exc).__name__}: {exc}"
    # With labels given, every label gets the same prompt (the label and the examples are ignored).
    prompts_by_label = {
        label: retriever.generate_label_prompt(0, [{"role": "user", "content": "ICE"}], label, prompt_template=template)
        for label in ("A", "B")
    }
    out["label_prompts"] = prompts_by_label
    return out


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    metas = {"none": None}
    for path in sorted(METAS.glob("*.yaml")):
        metas[path.stem] = yaml.safe_load(path.read_text(encoding="utf-8"))
    for name, meta in LIST_METAS.items():
        metas[name] = meta
        base.dump_yaml(OUT / "metas" / f"{name}.yaml", meta, "a meta template that is a list of messages")

    datasets = {}
    for name, (rel, abbr, lazy) in DATASETS.items():
        datasets[name] = (load_dataset(rel, abbr, lazy), f"configs/datasets/{rel}")
    # The bundled examples (examples/opencompass_raw/), with their own records.
    for stem in ("task", "task_multiround"):
        folder = ROOT / "examples" / "opencompass_raw"
        example = yaml.safe_load((folder / f"{stem}.yaml").read_text(encoding="utf-8"))
        files = example.pop("data")
        example["records"] = {
            split: [json.loads(line) for line in (folder / path).open(encoding="utf-8")][:8]
            for split, path in files.items()
        }
        datasets[f"example_{stem}"] = (example, f"examples/opencompass_raw/{stem}.yaml")
    for name, dataset in yaml.safe_load(SYNTHETIC.read_text(encoding="utf-8")).items():
        datasets[f"synthetic_{name}"] = (dataset, "synthetic")

    for name, (dataset, source) in datasets.items():
        records = dataset.pop("records", None)
        base.dump_yaml(OUT / "datasets" / f"{name}.yaml", dataset, source)
        reader = dataset["reader_cfg"]
        train_split = reader.get("train_split", "train")
        test_split = reader.get("test_split", "test")
        if records is not None:
            train, test = records.get(train_split, []), records[test_split]
        else:
            ids = (dataset["infer_cfg"].get("retriever") or {}).get("fix_id_list") or []
            train, test = make_records(dataset, max(6, len(ids)), 4)
        needs_pool = (dataset["infer_cfg"].get("retriever") or {}).get("type") != "ZeroRetriever"
        if needs_pool and train_split != test_split:
            base.write_jsonl(OUT / "records" / name / f"{train_split}.jsonl", train)
        base.write_jsonl(OUT / "records" / name / f"{test_split}.jsonl", test)
        build = {"abbr": dataset.get("abbr"), "reader_cfg": reader, "infer_cfg": base.to_dict(dataset["infer_cfg"])}
        lines = render_all(name, build, train if needs_pool else [], test, metas)
        path = OUT / "outputs" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(name, "ok", file=sys.stderr)

    # .py configs verbatim, and what mmengine reads from them.
    for rel, lazy in (
        ("datasets/BuySideFinBench/BuySideFinBench_gen_ca1704.py", True),
        ("datasets/MultiIF/MultiIF_gen.py", True),
        ("datasets/CLBench/clbench_llmjudge_rawprompt_gen_84a8f0.py", True),
        ("datasets/SciReasoner/mol_biotext_rawprompt_gen.py", True),
        ("datasets/MMBench/MMBench_DEV_EN_vlmevalkit_gen.py", False),
    ):
        src = base.CONFIGS / rel
        dest = OUT / "py" / Path(rel).name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        if lazy:
            items = base.load_config(src)
        else:
            items = {k: v for k, v in Config.fromfile(str(src), lazy_import=False).items()}
        expected = {}
        for key, value in items.items():
            if key.endswith("datasets"):
                expected[key] = [
                    {k: base.plain(base.to_dict(v)) for k, v in d.items() if k in ("abbr", "reader_cfg", "infer_cfg")}
                    for d in value
                ]
        dest.with_suffix(".expected.json").write_text(
            json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    (OUT / "ppl.json").write_text(json.dumps(ppl_errors(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (OUT / "VERSIONS").write_text(f"opencompass {VERSION}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
