"""Regenerate tests/golden/opencompass/inferencers/ from the real OpenCompass inferencers.

Run with the Python of the venv of ``make_opencompass_golden.py`` (versions this
script was run with: opencompass 0.5.4, mmengine 0.10.7, torch 2.13.0+cpu,
datasets 3.6.0, numpy 1.26, Python 3.11), after that script (it reads the meta
templates it wrote):

    PYTHONHASHSEED=0 /tmp/venvs/opencompass/bin/python tools/golden/make_opencompass_inferencer_golden.py

What it does, all with OpenCompass's own code:

1. loads dataset configs shipped in ``opencompass/configs/datasets`` that name
   ``ChatInferencer`` (T-Eval, HealthBench, MT-Bench, MT-Bench-101, CompassArena
   multi-turn, WildBench, SciCode), ``LLInferencer`` (WinoGrande) and
   ``PPLOnlyInferencer`` / ``InferencePPLOnlyInferencer`` (contamination,
   wikitext, inference-ppl) with ``mmengine.Config.fromfile``, and the synthetic
   configs of ``opencompass_inferencer_synthetic.yaml``, and writes them as YAML
   task files (``datasets/*.yaml``);
2. writes records (``records/``): text with awkward values, chats as lists of
   ``{role, content}`` (the shapes of MT-Bench's ``dialogue`` and HealthBench's
   ``prompt_trans``), list columns (SciCode), WinoGrande's ``opt1``/``opt2``/``cont``;
3. runs the real inferencer (``ChatInferencer.inference``, ``LLInferencer.inference``,
   ``PPLOnlyInferencer.inference``, ...) with a real ``DatasetReader`` and retriever
   and a recording model — a ``BaseModel`` whose template parser is OpenCompass's
   ``LMTemplateParser`` or ``APITemplateParser`` for the meta template, and which
   records every input it is given (the string, or the ``PromptList`` and the
   OpenAI messages OpenCompass's ``OpenAI`` model makes of it) and answers with a
   fixed reply — through every meta template of ``tests/golden/opencompass/metas/``,
   no meta template, and ``opencompass_inferencer_metas.yaml``. ChatInferencer
   configs run in each ``infer_mode`` (``last``, ``every``, ``every_with_gt``), one
   record at a time so that an error belongs to its record;
4. records what ``LMTemplateParser`` does with a meta template whose ``begin``/``end``
   are lists of strings (``list_begin_end.json``).

Output: ``outputs/<dataset>.jsonl.gz`` (a header line, then one line per record
and meta template (and infer_mode): ``requests`` with the model's ``replies``
and the ``golds``, or ``candidates``, or ``error``).
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_opencompass_golden as base  # noqa: E402  (stubs opencompass.datasets, imports OpenCompass)
import torch  # noqa: E402
import yaml  # noqa: E402
from datasets import Dataset, DatasetDict  # noqa: E402
from opencompass.models.base import BaseModel, LMTemplateParser  # noqa: E402
from opencompass.models.base_api import APITemplateParser  # noqa: E402
from opencompass.openicl.icl_dataset_reader import DatasetReader  # noqa: E402
from opencompass.openicl.icl_inferencer import (  # noqa: E402
    ChatInferencer,
    InferencePPLOnlyInferencer,
    LLInferencer,
    PPLInferencer,
    PPLOnlyInferencer,
)
from opencompass.openicl.icl_prompt_template import PromptTemplate  # noqa: E402
from opencompass.openicl.icl_retriever import FixKRetriever, ZeroRetriever  # noqa: E402


class _SummarizersFinder(base._DatasetsFinder):
    """opencompass.summarizers.* as empty stubs too: subjective configs name summarizer classes."""

    def find_spec(self, name, path, target=None):
        if name == "opencompass.summarizers" or name.startswith("opencompass.summarizers."):
            return base.importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None


sys.meta_path.insert(0, _SummarizersFinder())
for _name in [m for m in sys.modules if m.startswith("opencompass.summarizers")]:
    del sys.modules[_name]

ROOT = base.ROOT
OUT = ROOT / "tests" / "golden" / "opencompass" / "inferencers"
METAS = ROOT / "tests" / "golden" / "opencompass" / "metas"
EXTRA_METAS = ROOT / "tools" / "golden" / "opencompass_inferencer_metas.yaml"
SYNTHETIC = ROOT / "tools" / "golden" / "opencompass_inferencer_synthetic.yaml"
VERSION = base.VERSION
INFER_MODES = ("last", "every", "every_with_gt")

# name -> (config file under configs/datasets, dataset abbr or None for the first, record kind)
SHIPPED = {
    # ChatInferencer
    "teval_en_gen_1ac254_text": ("teval/teval_en_gen_1ac254.py", None, "text"),
    "teval_en_gen_1ac254_chat": ("teval/teval_en_gen_1ac254.py", None, "chat"),
    "teval_en_gen_1ac254_lists": ("teval/teval_en_gen_1ac254.py", None, "lists"),
    "mus_teval_gen_105c48": ("compassbench_20_v1_1/agent/mus_teval_gen_105c48.py", None, "chat"),
    "healthbench_gen_831613": ("HealthBench/healthbench_gen_831613.py", None, "chat"),
    "mtbench_single_judge_diff_temp": ("subjective/multiround/mtbench_single_judge_diff_temp.py", None, "dialogue"),
    "mtbench101_judge": ("subjective/multiround/mtbench101_judge.py", None, "dialogue"),
    "compassarena_multiturn_pointwise_judge": (
        "subjective/compass_arena_subjective_bench/multiturn/pointwise_judge.py",
        None,
        "dialogue",
    ),
    "wildbench_pair_judge": ("subjective/wildbench/wildbench_pair_judge.py", None, "dialogue"),
    "scicode_gen_085b98": ("scicode/scicode_gen_085b98.py", None, "lists"),
    # LLInferencer
    "winogrande_ll_c5cf57": ("winogrande/winogrande_ll_c5cf57.py", None, "winogrande"),
    "winogrande_5shot_ll_252f01": ("winogrande/winogrande_5shot_ll_252f01.py", None, "winogrande"),
    # PPLOnlyInferencer / InferencePPLOnlyInferencer
    "ceval_contamination_ppl_810ec6": ("contamination/ceval_contamination_ppl_810ec6.py", None, "text"),
    "mbpp_contamination_ppl_f01cb6": ("contamination/mbpp_contamination_ppl_f01cb6.py", None, "text"),
    "gsm8k_contamination_ppl_ecdd22": ("gsm8k_contamination/gsm8k_contamination_ppl_ecdd22.py", None, "text"),
    "wikitext_2_raw_ppl_05247d": ("wikitext/wikitext_2_raw_ppl_05247d.py", None, "text"),
    "inference_ppl": ("inference_ppl/inference_ppl.py", None, "text_label"),
}

AWKWARD = base.AWKWARD
ANSWERS = base.ANSWERS

# Chats as datasets hold them: MT-Bench's dialogue (user questions, empty assistant turns),
# HealthBench's prompt_trans (ends with an empty assistant turn), chats with system messages
# and filled-in assistant turns, awkward contents.
CHATS = [
    [
        {"role": "user", "content": "Write a haiku about {topic}."},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Now in French, with </E> kept."},
        {"role": "assistant", "content": ""},
    ],
    [
        {"role": "system", "content": "You are a careful doctor. Text with </E> inside."},
        {"role": "user", "content": "Ünïcödé — 中文 — 😀 I have a headache."},
        {"role": "assistant", "content": "multi-line\nanswer\n"},
        {"role": "user", "content": "And {x}?"},
        {"role": "assistant", "content": ""},
    ],
    [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "  leading and trailing spaces  "},
        {"role": "user", "content": "tab\tseparated, \"double\" and 'single' quotes"},
        {"role": "assistant", "content": "42"},
    ],
    [
        {"role": "system", "content": ""},
        {"role": "user", "content": "line one\nline two\n\nline four"},
        {"role": "assistant", "content": ""},
    ],
]
LISTS = [
    ["Step 1: define {f}.", "Step 2: test it.", "Step 3: </E>"],
    ["Ünïcödé — 中文", ""],
    ["only one step\nwith two lines"],
]
WINOGRANDE = [
    ("The trophy did not fit in the suitcase because _ was too big.", "the trophy", "the suitcase", 1),
    ("Sarah was a much better surgeon than Maria so _ always got the harder cases.", "Sarah", "Maria", 1),
    ("Ünïcödé {x}: _ ends here, with </E>.", "one", "two", 2),
    ("The cat chased the dog but _ was too slow.", "the cat", "the dog", 2),
    ("Ask about {braces} because _ knew.", "Ann", "Bo", 1),
    ('Tabs\tand _ quotes "here".', "single", "double", 2),
]


def reply_text(index: int, turn: int) -> str:
    """The recording model's reply to request ``turn`` of record ``index``."""
    return f"reply {index}.{turn}: {{answer}} </E> ✓"


# -- records ------------------------------------------------------------------------------------


def columns_of(reader):
    columns = reader.get("input_columns") or []
    return columns.split() if isinstance(columns, str) else list(columns)


def make_records(dataset, kind, n_train, n_test):
    reader = dataset["reader_cfg"]
    columns = columns_of(reader)
    output = reader.get("output_column")
    labels = base.labels_of(dataset["infer_cfg"])
    records = []
    for i in range(n_train + n_test):
        record = {}
        if kind == "winogrande":
            sentence, one, two, answer = WINOGRANDE[i % len(WINOGRANDE)]
            record = {
                "opt1": sentence.replace("_", one),
                "opt2": sentence.replace("_", two),
                "answer": labels[answer - 1] if labels else answer,
                "cont": sentence.split("_")[1],
            }
            records.append(record)
            continue
        for j, column in enumerate(columns):
            if kind == "chat" and j == 0:
                record[column] = copy.deepcopy(CHATS[i % len(CHATS)])
            elif kind == "dialogue" and column == "dialogue":
                record[column] = copy.deepcopy(CHATS[i % len(CHATS)])
            elif kind == "lists":
                record[column] = list(LISTS[(i + j) % len(LISTS)])
            else:
                value = AWKWARD[(i + j) % len(AWKWARD)]
                record[column] = value.replace("{n}", str(i)) if "{n}" in value else value
        if output:
            if kind == "lists":
                record[output] = [ANSWERS[(i + k) % len(ANSWERS)] for k in range(len(record[columns[0]]))]
            else:
                record[output] = ANSWERS[i % len(ANSWERS)]
        if kind == "text_label":
            record["label"] = [[0, 1]]
        records.append(record)
    return records[:n_train], records[n_train:]


# -- a recording model --------------------------------------------------------------------------


def jsonable(prompt):
    if isinstance(prompt, str):
        return prompt
    return [dict(item) if isinstance(item, dict) else item for item in prompt]


def view(prompt, api):
    """What the model was given: the string, or OpenCompass's message list and OpenAI's messages."""
    if api:
        if isinstance(prompt, str):
            return {"oc_messages": prompt, "messages": base.openai_messages(prompt)}
        return {"oc_messages": jsonable(prompt), "messages": base.openai_messages(copy.deepcopy(prompt))}
    return {"text": prompt}


class Recorder(BaseModel):
    """A model that records every input it is given and answers with :func:`reply_text`."""

    def __init__(self, meta, api):
        super().__init__(path="recorder", meta_template=None if api else meta)
        self.api = api
        self.is_api = api
        if api:
            self.template_parser = APITemplateParser(meta)
        self.index = 0
        self.requests = []
        self.scored = []

    def generate(self, inputs, max_out_len, **kwargs):
        out = []
        for item in inputs:
            self.requests.append(view(item, self.api))
            out.append(reply_text(self.index, len(self.requests) - 1))
        return out

    def get_ppl(self, inputs, mask_length=None):
        self.scored.extend(view(item, self.api) for item in inputs)
        return torch.zeros(len(inputs))

    def get_ppl_tokenwise(self, inputs, label, mask_length=None):
        self.scored.extend(view(item, self.api) for item in inputs)
        return [0.0] * len(inputs), [1] * len(inputs)

    def get_loglikelihood(self, inputs, conts, mask_length=None):
        for item, cont in zip(inputs, conts):
            self.scored.append({**view(item, self.api), "cont": cont})
        return torch.zeros(len(inputs))

    def get_token_len(self, prompt):
        return len(prompt) if isinstance(prompt, str) else sum(len(str(p)) for p in prompt)


class OneRecordChat(ChatInferencer):
    """ChatInferencer with the record's index handed to the recording model (no other change)."""

    def __init__(self, *args, record_index=0, **kwargs):
        super().__init__(*args, **kwargs)
        self.record_index = record_index

    def infer_last(self, chat, index, output_handler):
        self.model.index = self.record_index
        return super().infer_last(chat, index, output_handler)

    def infer_every(self, chat, index, output_handler):
        self.model.index = self.record_index
        return super().infer_every(chat, index, output_handler)

    def infer_every_with_gt(self, chat, index, output_handler):
        self.model.index = self.record_index
        return super().infer_every_with_gt(chat, index, output_handler)


# -- running the inferencers ----------------------------------------------------------------------

RETRIEVERS = {"FixKRetriever": FixKRetriever, "ZeroRetriever": ZeroRetriever}
INFERENCERS = {
    "LLInferencer": LLInferencer,
    "PPLOnlyInferencer": PPLOnlyInferencer,
    "InferencePPLOnlyInferencer": InferencePPLOnlyInferencer,
    "PPLInferencer": PPLInferencer,
}


def build_template(cfg):
    if cfg is None:
        return None
    cfg = copy.deepcopy(dict(cfg))
    assert cfg.pop("type") == "PromptTemplate", cfg
    return PromptTemplate(**cfg)


class _Dataset:
    """What a retriever takes: a reader, and its train and test splits (OpenCompass's BaseDataset)."""

    def __init__(self, reader_cfg, train, test):
        cfg = dict(reader_cfg)
        cfg.setdefault("train_split", "train")
        cfg.setdefault("test_split", "test")
        splits = {cfg["test_split"]: Dataset.from_list(copy.deepcopy(test))}
        if cfg["train_split"] != cfg["test_split"]:
            splits[cfg["train_split"]] = Dataset.from_list(copy.deepcopy(train or test))
        self.reader = DatasetReader(DatasetDict(splits), **cfg)

    @property
    def train(self):
        return self.reader.dataset["train"]

    @property
    def test(self):
        return self.reader.dataset["test"]


def retriever_for(dataset, train, test):
    rcfg = dict(dataset["infer_cfg"].get("retriever") or {"type": "ZeroRetriever"})
    return RETRIEVERS[rcfg.pop("type")](_Dataset(dataset["reader_cfg"], train, test), **rcfg)


def options_of(infer):
    options = dict(infer.get("inferencer") or {})
    name = options.pop("type")
    # Options that change the model's sampling or lengths, not the prompt.
    for key in ("max_out_len", "max_seq_len", "temperature", "do_sample", "batch_size"):
        options.pop(key, None)
    return name, options


def is_api(meta):
    return meta is not None and base.is_api(meta)


def run_chat(dataset, train, test, meta, mode):
    """ChatInferencer, one record at a time: per record its requests, replies and golds (or the error)."""
    infer = dataset["infer_cfg"]
    _, options = options_of(infer)
    options["infer_mode"] = mode
    out = []
    for index, record in enumerate(test):
        model = Recorder(meta, is_api(meta))
        item = {"index": index}
        with tempfile.TemporaryDirectory() as tmp:
            try:
                inferencer = OneRecordChat(model, output_json_filepath=tmp, record_index=index, **options)
                retriever = retriever_for(dataset, train, [record])
                prompt_template = build_template(infer.get("prompt_template"))
                chat = inferencer.get_chat_list(retriever.retrieve(), retriever, prompt_template=prompt_template)[0]
                item["golds"] = [m["content"] for m in chat if m["role"] == "assistant"]
                inferencer.dialogue_mode = False
                inferencer.inference(
                    retriever,
                    ice_template=build_template(infer.get("ice_template")),
                    prompt_template=build_template(infer.get("prompt_template")),
                )
                item["requests"] = model.requests
                item["replies"] = [reply_text(index, t) for t in range(len(model.requests))]
            except Exception as exc:
                item = {"index": index, **base.error(exc)}
                if model.requests:
                    item["requests_before_error"] = model.requests
        out.append(item)
    return out


def run_scoring(dataset, train, test, meta):
    """LLInferencer, PPLOnlyInferencer, InferencePPLOnlyInferencer or PPLInferencer over the
    whole split; per record what the model scored (or the error)."""
    infer = dataset["infer_cfg"]
    name, options = options_of(infer)
    model = Recorder(meta, is_api(meta))
    with tempfile.TemporaryDirectory() as tmp:
        try:
            inferencer = INFERENCERS[name](model, output_json_filepath=tmp, **options)
            retriever = retriever_for(dataset, train, test)
            inferencer.inference(
                retriever,
                ice_template=build_template(infer.get("ice_template")),
                prompt_template=build_template(infer.get("prompt_template")),
            )
        except Exception as exc:
            if len(test) > 1:  # which record fails: one at a time
                return [run_scoring(dataset, train, [record], meta)[0] | {"index": i} for i, record in enumerate(test)]
            return [{"index": 0, **base.error(exc)}]
    n = len(test)
    if name in ("LLInferencer", "PPLInferencer"):
        labels = inferencer.labels or retriever.get_labels(
            ice_template=build_template(infer.get("ice_template")),
            prompt_template=build_template(infer.get("prompt_template")),
        )
        # Scored label by label, record by record within a label.
        return [
            {"index": i, "candidates": [{"label": label, **model.scored[k * n + i]} for k, label in enumerate(labels)]}
            for i in range(n)
        ]
    return [{"index": i, **model.scored[i]} for i in range(n)]


def run(dataset, train, test, metas):
    name, _ = options_of(dataset["infer_cfg"])
    lines = []
    for meta_name, meta in metas.items():
        if name == "ChatInferencer":
            for mode in INFER_MODES:
                for item in run_chat(dataset, train, test, meta, mode):
                    lines.append({"meta": meta_name, "infer_mode": mode, **item})
        else:
            for item in run_scoring(dataset, train, test, meta):
                lines.append({"meta": meta_name, **item})
    return lines


def list_begin_end():
    """LMTemplateParser with begin/end given as lists of strings (role and meta template level)."""
    prompt = [
        {"section": "round", "pos": "begin"},
        {"role": "HUMAN", "prompt": "Hi"},
        {"role": "BOT", "prompt": ""},
        {"section": "round", "pos": "end"},
    ]
    metas = {
        "role_begin_end_lists": {
            "round": [
                {"role": "HUMAN", "begin": ["<|user|>", "\n"], "end": ["<|end|>", "\n"]},
                {"role": "BOT", "begin": ["<|assistant|>", "\n"], "end": ["<|end|>"], "generate": True},
            ]
        },
        "meta_begin_end_lists": {
            "begin": ["<s>", "[SYS]"],
            "round": [
                {"role": "HUMAN", "begin": "U: ", "end": "\n"},
                {"role": "BOT", "begin": "A: ", "generate": True},
            ],
            "end": ["</s>"],
        },
    }
    out = {}
    for name, meta in metas.items():
        try:
            from opencompass.utils.prompt import PromptList

            out[name] = {"meta": meta, "text": LMTemplateParser(meta).parse_template(PromptList(prompt), mode="gen")}
        except Exception as exc:
            out[name] = {"meta": meta, **base.error(exc)}
    return out


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    metas = {"none": None}
    for path in sorted(METAS.glob("*.yaml")):
        metas[path.stem] = yaml.safe_load(path.read_text(encoding="utf-8"))
    for name, meta in yaml.safe_load(EXTRA_METAS.read_text(encoding="utf-8")).items():
        metas[name] = meta
        base.dump_yaml(OUT / "metas" / f"{name}.yaml", meta, "tools/golden/opencompass_inferencer_metas.yaml")

    datasets = {}
    for name, (rel, abbr, kind) in SHIPPED.items():
        dataset = base.plain(base.to_dict(base.find_dataset(base.load_config(base.CONFIGS / "datasets" / rel), abbr)))
        config = {"abbr": dataset.get("abbr"), "reader_cfg": dataset["reader_cfg"], "infer_cfg": dataset["infer_cfg"]}
        datasets[name] = (config, f"configs/datasets/{rel}", kind)
    for name, dataset in yaml.safe_load(SYNTHETIC.read_text(encoding="utf-8")).items():
        datasets[f"synthetic_{name}"] = (dataset, "synthetic", None)

    for name, (dataset, source, kind) in datasets.items():
        records = dataset.pop("records", None)
        base.dump_yaml(OUT / "datasets" / f"{name}.yaml", dataset, source)
        reader = dataset["reader_cfg"]
        train_split = reader.get("train_split", "train")
        test_split = reader.get("test_split", "test")
        retriever = (dataset["infer_cfg"].get("retriever") or {}).get("type", "ZeroRetriever")
        if records is not None:
            train, test = records.get(train_split, []), records[test_split]
        else:
            ids = (dataset["infer_cfg"].get("retriever") or {}).get("fix_id_list") or [0]
            train, test = make_records(dataset, kind, max(ids) + 1 if retriever != "ZeroRetriever" else 0, 4)
        if retriever != "ZeroRetriever" and train_split != test_split:
            base.write_jsonl(OUT / "records" / name / f"{train_split}.jsonl", train)
        base.write_jsonl(OUT / "records" / name / f"{test_split}.jsonl", test)
        build = {"reader_cfg": reader, "infer_cfg": base.to_dict(dataset["infer_cfg"])}
        lines = [json.dumps({"opencompass": VERSION, "dataset": name, "source": source}, ensure_ascii=False)]
        lines += [json.dumps(item, ensure_ascii=False) for item in run(build, train, test, metas)]
        path = OUT / "outputs" / f"{name}.jsonl.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as handle:
            handle.write(("\n".join(lines) + "\n").encode("utf-8"))
        print(name, "ok", file=sys.stderr)

    # .py configs verbatim (self-contained ones), for the --trust-code loader.
    for rel in (
        "datasets/teval/teval_en_gen_1ac254.py",
        "datasets/HealthBench/healthbench_gen_831613.py",
        "datasets/subjective/multiround/mtbench101_judge.py",
        "datasets/scicode/scicode_gen_085b98.py",
        "datasets/winogrande/winogrande_ll_c5cf57.py",
        "datasets/wikitext/wikitext_2_raw_ppl_05247d.py",
    ):
        dest = OUT / "py" / Path(rel).name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base.CONFIGS / rel, dest)
    (OUT / "list_begin_end.json").write_text(
        json.dumps(list_begin_end(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    (OUT / "VERSIONS").write_text(f"opencompass {VERSION}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
