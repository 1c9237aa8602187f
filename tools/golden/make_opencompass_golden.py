"""Regenerate tests/golden/opencompass/ from the real OpenCompass.

Run with the Python of a throwaway venv OUTSIDE the repo that has OpenCompass
0.5.4 (versions this script was run with: opencompass 0.5.4, mmengine 0.10.7,
torch 2.13.0+cpu, datasets 5.2.0, Python 3.11):

    python3 -m venv /tmp/venvs/opencompass
    /tmp/venvs/opencompass/bin/pip install torch==2.13.0   # the local CPU wheel
    /tmp/venvs/opencompass/bin/pip install --no-deps opencompass==0.5.4 mmengine==0.10.7
    /tmp/venvs/opencompass/bin/pip install addict yapf termcolor rich numpy tqdm pyyaml packaging \
        importlib_metadata requests datasets transformers httpx jieba scipy scikit-learn evaluate \
        rouge_chinese nltk rank_bm25
    PYTHONHASHSEED=0 /tmp/venvs/opencompass/bin/python tools/golden/make_opencompass_golden.py

What it does, all with OpenCompass's own code:

1. loads real dataset configs shipped in ``opencompass/configs/datasets`` with
   ``mmengine.Config.fromfile`` (dataset loader classes stubbed: no data is
   downloaded) and writes their ``reader_cfg``/``infer_cfg`` as YAML task files
   (``datasets/*.yaml``, types as class names), plus synthetic configs for the
   corners OpenCompass's shipped configs do not reach (``synthetic_*``);
2. loads real model configs from ``opencompass/configs/models`` and writes their
   meta templates (``metas/*.yaml``);
3. writes records with awkward values (``{braces}``, ``</E>``, unicode, empty
   strings, multi-line answers) for every split (``records/<dataset>/``);
4. renders every dataset x meta template x mode as OpenCompass does —
   ``PromptTemplate`` + ``FixKRetriever``/``ZeroRetriever`` (``generate_ice``,
   ``generate_prompt_for_generate_task``, ``get_labels``,
   ``generate_label_prompt``) + ``LMTemplateParser`` / ``APITemplateParser``
   and the OpenAI model's message conversion — into ``outputs/<dataset>.jsonl.gz``;
   where OpenCompass raises, the error is recorded instead;
5. copies a few ``.py`` configs verbatim (``py/``) with the mapping mmengine
   reads from them (``py/*.expected.json``), for the ``--trust-code`` loader.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.abc
import importlib.machinery
import io
import json
import re
import shutil
import sys
import types
import warnings
from pathlib import Path
from types import SimpleNamespace

import yaml

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "golden" / "opencompass"


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


class _DatasetsFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """opencompass.datasets.* as empty stubs: configs name loader classes we never call."""

    def find_spec(self, name, path, target=None):
        if name == "opencompass.datasets" or name.startswith("opencompass.datasets."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Stub(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _DatasetsFinder())

import opencompass  # noqa: E402
from datasets import Dataset  # noqa: E402
from mmengine.config import Config  # noqa: E402
from opencompass.models.base import LMTemplateParser  # noqa: E402
from opencompass.models.base_api import APITemplateParser  # noqa: E402
from opencompass.models.openai_api import OpenAI  # noqa: E402
from opencompass.openicl.icl_dataset_reader import load_partial_dataset  # noqa: E402
from opencompass.openicl.icl_prompt_template import PromptTemplate  # noqa: E402
from opencompass.openicl.icl_retriever import FixKRetriever, ZeroRetriever  # noqa: E402

CONFIGS = Path(opencompass.__file__).parent / "configs"
VERSION = opencompass.__version__

# name -> (config file under configs/datasets, dataset abbr or None for the first)
DATASETS = {
    "mmlu_gen_4d595a": ("mmlu/mmlu_gen_4d595a.py", "lukaemon_mmlu_college_biology"),
    "mmlu_gen_79e572": ("mmlu/mmlu_gen_79e572.py", "lukaemon_mmlu_college_biology"),
    "ceval_ppl_578f8d": ("ceval/ceval_ppl_578f8d.py", "ceval-computer_network"),
    "ceval_ppl_1cd8bf": ("ceval/ceval_ppl_1cd8bf.py", "ceval-computer_network"),
    "ARC_c_few_shot_ppl": ("ARC_c/ARC_c_few_shot_ppl.py", None),
    "ARC_c_few_shot_gen_e9b043": ("ARC_c/ARC_c_few_shot_gen_e9b043.py", None),
    "ARC_c_ppl_d52a21": ("ARC_c/ARC_c_ppl_d52a21.py", None),
    "GLUE_CoLA_ppl_77d0df": ("GLUE_CoLA/GLUE_CoLA_ppl_77d0df.py", None),
    "FewCLUE_bustm_ppl_4b16c0": ("FewCLUE_bustm/FewCLUE_bustm_ppl_4b16c0.py", None),
    "MMLUArabic_gen_326684": ("MMLUArabic/MMLUArabic_gen_326684.py", None),
    "gsm8k_gen_1d7fe4": ("gsm8k/gsm8k_gen_1d7fe4.py", None),
    "medbullets_gen_60c8f5": ("Medbullets/medbullets_gen_60c8f5.py", None),
    "mol_instructions_chem_gen": ("MolInstructions_chem/mol_instructions_chem_gen.py", None),
    "SciEval_5shot_gen_4043d4": ("SciEval/SciEval_5shot_gen_4043d4.py", None),
    "GaokaoBench_gen_5cfe9e": ("GaokaoBench/GaokaoBench_gen_5cfe9e.py", None),
    "CLUE_CMRC_gen_8484b9": ("CLUE_CMRC/CLUE_CMRC_gen_8484b9.py", None),
    "SuperGLUE_BoolQ_few_shot_ppl": ("SuperGLUE_BoolQ/SuperGLUE_BoolQ_few_shot_ppl.py", None),
    # Added by a second probe: label-keyed ppl templates (string and dialogue), FixK few-shot with
    # dialogue and string examples, ice_template alone, SYSTEM items, plain string templates, LLInferencer.
    "hellaswag_ppl_47bff9": ("hellaswag/hellaswag_ppl_47bff9.py", None),
    "hellaswag_10shot_gen_e42710": ("hellaswag/hellaswag_10shot_gen_e42710.py", None),
    "piqa_ppl_1cf9f0": ("piqa/piqa_ppl_1cf9f0.py", None),
    "piqa_ppl_0cfff2": ("piqa/piqa_ppl_0cfff2.py", None),
    "siqa_ppl_ced5f6": ("siqa/siqa_ppl_ced5f6.py", None),
    "siqa_gen_e78df3": ("siqa/siqa_gen_e78df3.py", None),
    "winogrande_ppl_55a66e": ("winogrande/winogrande_ppl_55a66e.py", None),
    "winogrande_5shot_gen_6447e6": ("winogrande/winogrande_5shot_gen_6447e6.py", None),
    "winogrande_5shot_ll_252f01": ("winogrande/winogrande_5shot_ll_252f01.py", None),
    "race_ppl_a138cd": ("race/race_ppl_a138cd.py", None),
    "race_few_shot_ppl": ("race/race_few_shot_ppl.py", None),
    "race_few_shot_gen_a498ed": ("race/race_few_shot_gen_a498ed.py", None),
    "mmlu_ppl_ac766d": ("mmlu/mmlu_ppl_ac766d.py", None),
    "mmlu_gen_a484b3": ("mmlu/mmlu_gen_a484b3.py", None),
    "ceval_gen_5f30c7": ("ceval/ceval_gen_5f30c7.py", None),
    "cmmlu_ppl_8b9c76": ("cmmlu/cmmlu_ppl_8b9c76.py", None),
    "cmmlu_gen_c13365": ("cmmlu/cmmlu_gen_c13365.py", None),
    "agieval_mixed_e33d83": ("agieval/agieval_mixed_e33d83.py", None),
    "bbh_0shot_nocot_gen_925fc4": ("bbh/bbh_0shot_nocot_gen_925fc4.py", None),
    "gsm8k_0shot_v2_gen_a58960": ("gsm8k/gsm8k_0shot_v2_gen_a58960.py", None),
    "math_4shot_base_gen_db136b": ("math/math_4shot_base_gen_db136b.py", None),
    "humaneval_gen_66a7f4": ("humaneval/humaneval_gen_66a7f4.py", None),
    "triviaqa_wiki_1shot_gen_20a989": ("triviaqa/triviaqa_wiki_1shot_gen_20a989.py", None),
    "triviaqa_wiki_1shot_gen_bc5f21": ("triviaqa/triviaqa_wiki_1shot_gen_bc5f21.py", None),
    "nq_open_1shot_gen_20a989": ("nq/nq_open_1shot_gen_20a989.py", None),
    "nq_open_1shot_gen_01cf41": ("nq/nq_open_1shot_gen_01cf41.py", None),
    "deprecated_drop_gen_8a9ed9": ("drop/deprecated_drop_gen_8a9ed9.py", None),
    "ARC_e_ppl_a450bd": ("ARC_e/ARC_e_ppl_a450bd.py", None),
    "commonsenseqa_gen_1da2d0": ("commonsenseqa/commonsenseqa_gen_1da2d0.py", None),
    "commonsenseqa_ppl_c49e77": ("commonsenseqa/commonsenseqa_ppl_c49e77.py", None),
    "storycloze_ppl_496661": ("storycloze/storycloze_ppl_496661.py", None),
    "lambada_gen_217e11": ("lambada/lambada_gen_217e11.py", None),
    "obqa_ppl_c7c154": ("obqa/obqa_ppl_c7c154.py", None),
    "SuperGLUE_BoolQ_few_shot_gen_ba58ea": ("SuperGLUE_BoolQ/SuperGLUE_BoolQ_few_shot_gen_ba58ea.py", None),
    "mmlu_pro_gen_cdbebf": ("mmlu_pro/mmlu_pro_gen_cdbebf.py", None),
    "strategyqa_gen_934441": ("strategyqa/strategyqa_gen_934441.py", None),
    "summedits_ppl_3c30d0": ("summedits/summedits_ppl_3c30d0.py", None),
    "GLUE_MRPC_ppl_96564c": ("GLUE_MRPC/GLUE_MRPC_ppl_96564c.py", None),
    "Xsum_gen_31397e": ("Xsum/Xsum_gen_31397e.py", None),
    "crowspairs_gen_381af0": ("crowspairs/crowspairs_gen_381af0.py", None),
    "FewCLUE_csl_ppl_769f8d": ("FewCLUE_csl/FewCLUE_csl_ppl_769f8d.py", None),
    "arc_prize_public_evaluation_gen_872059": (
        "ARC_Prize_Public_Evaluation/arc_prize_public_evaluation_gen_872059.py",
        None,
    ),
}

# name -> config file under configs/models (its models[0].meta_template)
METAS = {
    "internlm2_chat_7b_with_system": "hf_internlm/hf_internlm2_chat_7b_with_system.py",
    "internlm_chat_7b": "hf_internlm/hf_internlm_chat_7b.py",
    "qwen_7b_chat": "qwen/ms_qwen_7b_chat.py",
    "baichuan2_7b_chat": "baichuan/hf_baichuan2_7b_chat.py",
    "chatglm2_6b": "chatglm/hf_chatglm2_6b.py",
    "moss_moon_003_sft": "moss/hf_moss_moon_003_sft.py",
    "vicuna_7b_v15_16k": "vicuna/vllm_vicuna_7b_v15_16k.py",
    "zephyr_7b_beta": "zephyr/vllm_zephyr_7b_beta.py",
    "orionstar_yi_34b_chat": "others/hf_orionstar_yi_34b_chat.py",
    "telechat_7b": "others/hf_telechat_7b.py",
    "gpt_4": "openai/gpt_4.py",
    "llama3_1_8b_instruct": "hf_llama/hf_llama3_1_8b_instruct.py",
    "bailing_pro_1120": "bailing_api/bailing-pro-1120.py",
    # Added by a second probe.
    "aquilachat2_34b": "aquila/hf_aquilachat2_34b.py",
    "aquilachat2_34b_16k": "aquila/hf_aquilachat2_34b_16k.py",
    "aquilachat2_7b": "aquila/hf_aquilachat2_7b.py",
    "bluelm_7b_chat": "bluelm/hf_bluelm_7b_chat.py",
    "gemini_pro": "gemini/gemini_pro.py",
    "internlm2_chat_math_7b_with_system": "hf_internlm/hf_internlm2_chat_math_7b_with_system.py",
    "ms_internlm_chat_7b_8k": "ms_internlm/ms_internlm_chat_7b_8k.py",
    "nanbeige_16b_chat": "nanbeige/hf_nanbeige_16b_chat.py",
    "arithmo_mistral_7b": "others/hf_arithmo_mistral_7b.py",
    "dolphin_21_mistral_7b": "others/hf_dolphin_21_mistral_7b.py",
    "fashiongpt_70b_v11": "others/hf_fashiongpt_70b_v11.py",
    "gsm8k_rft_llama7b2_u13b": "others/hf_gsm8k_rft_llama7b2_u13b.py",
    "openchat_35_0106": "others/hf_openchat_35_0106.py",
    "orionstar_14b_longchat": "others/vllm_orionstar_14b_longchat.py",
    "tigerbot_7b_sft": "tigerbot/hf_tigerbot_7b_sft.py",
    "wizardlm_13b_v1_2": "wizardlm/hf_wizardlm_13b_v1_2.py",
    "wizardmath_7b_v1_1": "wizardlm/hf_wizardmath_7b_v1_1.py",
}

# Meta templates written here, from OpenCompass's meta template documentation.
EXTRA_METAS = {
    # docs: reserved SYSTEM role, begin and end strings, generate=True
    "doc_full": {
        "begin": "Meta instruction: You are now a helpful and harmless AI assistant.",
        "round": [
            {"role": "HUMAN", "begin": "HUMAN: ", "end": "<eoh>\n"},
            {"role": "THOUGHTS", "begin": "THOUGHTS: ", "end": "<eot>\n", "prompt": "None"},
            {"role": "BOT", "begin": "BOT: ", "generate": True, "end": "<eob>\n"},
        ],
        "end": "end of conversion",
        "reserved_roles": [{"role": "SYSTEM", "begin": "SYSTEM: ", "end": "\n"}],
        "eos_token_id": 10000,
    },
    # docs: without generate=True
    "doc_no_generate": {
        "round": [
            {"role": "HUMAN", "begin": "<HUMAN>: ", "end": "<eoh>\n"},
            {"role": "BOT", "begin": "<BOT>: ", "end": "<eob>\n"},
        ],
        "end": "end of conversation",
    },
}

# Meta templates written here in the shape of model configs that older OpenCompass releases
# shipped (Llama 2/3, Mistral, DeepSeek, Qwen1.5, ChatGLM3 API) and for the corners of the meta
# template (strings in the round, default prompts, end without generate, a role-less model).
EXTRA_METAS_FILE = ROOT / "tools" / "golden" / "opencompass_metas.yaml"

# Perplexity prompts are rendered through these (generation through all).
PPL_METAS = (
    "none",
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

SYNTHETIC_DIR = ROOT / "tools" / "golden" / "opencompass_synthetic.yaml"

AWKWARD = [
    "What is {x} + 1?",
    "Compute \\frac{1}{2} of {{4}} and {}",
    "Text with </E> inside",
    "Ünïcödé — 中文 — 😀 — العربية",
    "",
    "line one\nline two\n\nline four",
    "  leading and trailing spaces  ",
    "tab\tseparated, \"double\" and 'single' quotes",
    "Plain question number {n}",
]
ANSWERS = ["42", "multi-line\nanswer\n", "", "{braces} stay", "Ünïcödé ✓", "</E>", "7\n\nThe answer is 7"]


# -- configs as plain data -------------------------------------------------------------


def plain(value):
    """A config value as YAML-able data: classes and functions by name."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, type) or callable(value):
        return getattr(value, "__name__", str(value))
    return value


def load_config(path: Path):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cfg = Config.fromfile(str(path))
        return {k: v for k, v in cfg.items()}


def find_dataset(items, abbr):
    for key, value in items.items():
        if key.endswith("datasets") and isinstance(value, list):
            for dataset in value:
                if isinstance(dataset, dict) and "infer_cfg" in dataset:
                    if abbr is None or dataset.get("abbr") == abbr:
                        return dataset
    raise SystemExit(f"no dataset {abbr!r}")


def to_dict(value):
    if isinstance(value, dict):
        return {k: to_dict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_dict(v) for v in value]
    return value


# -- OpenCompass objects from plain data -----------------------------------------------

RETRIEVERS = {"FixKRetriever": FixKRetriever, "ZeroRetriever": ZeroRetriever}


def build_template(cfg):
    if cfg is None:
        return None
    cfg = dict(cfg)
    assert cfg.pop("type") == "PromptTemplate", cfg
    return PromptTemplate(**cfg)


def fields_of(infer_cfg):
    names = set()
    for match in re.finditer(r"\{([^{}]*)\}", json.dumps(infer_cfg, ensure_ascii=False)):
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", match.group(1)):
            names.add(match.group(1))
    return names


def labels_of(infer_cfg):
    for key in ("prompt_template", "ice_template"):
        cfg = infer_cfg.get(key)
        if (
            cfg
            and isinstance(cfg["template"], dict)
            and not all(k in ("begin", "round", "end") for k in cfg["template"])
        ):
            return list(cfg["template"])
    return None


def make_records(dataset, n_train, n_test):
    reader = dataset["reader_cfg"]
    infer = dataset["infer_cfg"]
    columns = list(reader.get("input_columns") or [])
    if isinstance(columns, str):
        columns = columns.split()
    output = reader.get("output_column")
    for name in sorted(fields_of(infer)):
        if name not in columns and name != output:
            columns.append(name)
    labels = labels_of(infer)
    records = []
    for i in range(n_train + n_test):
        record = {}
        for j, column in enumerate(columns):
            value = AWKWARD[(i + j) % len(AWKWARD)]
            record[column] = value.replace("{n}", str(i)) if "{n}" in value else value
        if output:
            if labels:
                record[output] = labels[i % len(labels)]
            else:
                record[output] = ANSWERS[i % len(ANSWERS)]
        records.append(record)
    return records[:n_train], records[n_train:]


# -- rendering as OpenCompass does ------------------------------------------------------


def jsonable_prompt(prompt):
    if isinstance(prompt, str):
        return prompt
    return [dict(item) if isinstance(item, dict) else item for item in prompt]


def openai_messages(api_prompt):
    fake = SimpleNamespace(_content_token_len=OpenAI._content_token_len, logger=None)
    messages, _ = OpenAI._preprocess_messages(fake, api_prompt, None, 10**9, "none", len)
    return messages


def parse(meta, prompt, mode):
    """What the model receives: text (LM), or messages (API) plus OpenCompass's own list."""
    if meta is not None and is_api(meta):
        parsed = APITemplateParser(meta).parse_template(prompt, mode=mode)
        out = {"oc_messages": jsonable_prompt(parsed)}
        out["messages"] = openai_messages(parsed)
        return out
    return {"text": LMTemplateParser(meta).parse_template(prompt, mode=mode)}


def is_api(meta):
    return any(
        "api_role" in r for r in [*meta.get("round", []), *meta.get("reserved_roles", [])] if isinstance(r, dict)
    )


def error(exc):
    return {"error": f"{type(exc).__name__}: {exc}"}


def render(dataset, train, test, meta, mode):
    reader = dataset["reader_cfg"]
    infer = dataset["infer_cfg"]
    out_col = reader.get("output_column")
    ice_template = build_template(infer.get("ice_template"))
    prompt_template = build_template(infer.get("prompt_template"))
    rcfg = dict(infer.get("retriever") or {"type": "ZeroRetriever"})
    rtype = RETRIEVERS[rcfg.pop("type")]
    # reader_cfg's train_range/test_range, as OpenCompass's DatasetReader applies them.
    fake = SimpleNamespace(
        reader=SimpleNamespace(output_column=out_col),
        train=load_partial_dataset(
            Dataset.from_list(train) if train else Dataset.from_list(test), reader.get("train_range")
        ),
        test=load_partial_dataset(Dataset.from_list(test), reader.get("test_range")),
    )
    retriever = rtype(fake, **rcfg)
    gen_token = (infer.get("inferencer") or {}).get("gen_field_replace_token", "")
    results = []
    with contextlib.redirect_stderr(io.StringIO()):
        ice_idx_list = retriever.retrieve()
    for idx, ice_idx in enumerate(ice_idx_list):
        try:
            ice = retriever.generate_ice(ice_idx, ice_template=ice_template)
            if mode == "gen":
                prompt = retriever.generate_prompt_for_generate_task(
                    idx,
                    ice,
                    gen_field_replace_token=gen_token,
                    ice_template=ice_template,
                    prompt_template=prompt_template,
                )
                item = {"index": idx, **parse(meta, prompt, "gen")}
            else:
                labels = retriever.get_labels(ice_template=ice_template, prompt_template=prompt_template)
                candidates = []
                for label in labels:
                    prompt = retriever.generate_label_prompt(
                        idx, ice, label, ice_template=ice_template, prompt_template=prompt_template, remain_sep=False
                    )
                    candidates.append({"label": label, **parse(meta, prompt, "ppl")})
                item = {"index": idx, "candidates": candidates}
        except Exception as exc:  # OpenCompass fails on this input: record how
            item = {"index": idx, **error(exc)}
        results.append(item)
    return results


# -- main -----------------------------------------------------------------------------


def dump_yaml(path: Path, data, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"# {source} (OpenCompass {VERSION}); written by tools/golden/make_opencompass_golden.py\n"
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8")


def write_jsonl(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    # Only this script's folders: the retriever goldens live beside them.
    for folder in ("datasets", "metas", "outputs", "records", "py"):
        if (OUT / folder).exists():
            shutil.rmtree(OUT / folder)
    metas = {"none": None}
    for name, rel in METAS.items():
        items = load_config(CONFIGS / "models" / rel)
        meta = to_dict(items["models"][0]["meta_template"])
        metas[name] = meta
        dump_yaml(OUT / "metas" / f"{name}.yaml", meta, f"configs/models/{rel}")
    for name, meta in EXTRA_METAS.items():
        metas[name] = meta
        dump_yaml(OUT / "metas" / f"{name}.yaml", meta, "from OpenCompass's meta template documentation")
    for name, meta in yaml.safe_load(EXTRA_METAS_FILE.read_text(encoding="utf-8")).items():
        metas[name] = meta
        dump_yaml(OUT / "metas" / f"{name}.yaml", meta, "tools/golden/opencompass_metas.yaml")
    example_meta = yaml.safe_load((ROOT / "examples" / "opencompass" / "meta.yaml").read_text(encoding="utf-8"))
    metas["example_chatml"] = example_meta
    dump_yaml(OUT / "metas" / "example_chatml.yaml", example_meta, "examples/opencompass/meta.yaml")

    datasets = {}
    for name, (rel, abbr) in DATASETS.items():
        dataset = plain(to_dict(find_dataset(load_config(CONFIGS / "datasets" / rel), abbr)))
        datasets[name] = (
            {"abbr": dataset.get("abbr"), "reader_cfg": dataset["reader_cfg"], "infer_cfg": dataset["infer_cfg"]},
            f"configs/datasets/{rel}",
        )
    # The bundled examples (examples/opencompass/), with their own records.
    for stem in ("task", "task_ppl"):
        example = yaml.safe_load((ROOT / "examples" / "opencompass" / f"{stem}.yaml").read_text(encoding="utf-8"))
        files = example.pop("data")
        example["records"] = {
            split: [json.loads(line) for line in (ROOT / "examples" / "opencompass" / path).open(encoding="utf-8")][:12]
            for split, path in files.items()
        }
        datasets[f"example_{stem}"] = (example, f"examples/opencompass/{stem}.yaml")
    synthetic = yaml.safe_load(SYNTHETIC_DIR.read_text(encoding="utf-8"))
    for name, dataset in synthetic.items():
        datasets[f"synthetic_{name}"] = (dataset, "synthetic")

    for name, (dataset, source) in datasets.items():
        records = dataset.pop("records", None)
        # Write the task file; OpenCompass renders from the same data.
        dump_yaml(OUT / "datasets" / f"{name}.yaml", dataset, source)
        reader = dataset["reader_cfg"]
        train_split = reader.get("train_split", "train")
        test_split = reader.get("test_split", "test")
        if records is not None:
            train, test = records.get(train_split, []), records[test_split]
        elif train_split == test_split:
            # The pool is the evaluated split: enough records for the fixed examples.
            ids = (dataset["infer_cfg"].get("retriever") or {}).get("fix_id_list") or [0]
            train, test = make_records(dataset, 0, max(3, max(ids) + 1))
        else:
            train, test = make_records(dataset, 24, 2)
        if train_split != test_split:
            write_jsonl(OUT / "records" / name / f"{train_split}.jsonl", train)
        write_jsonl(OUT / "records" / name / f"{test_split}.jsonl", test)
        dataset = {k: v for k, v in dataset.items() if k != "source"}
        build = {"reader_cfg": dataset["reader_cfg"], "infer_cfg": to_dict(dataset["infer_cfg"])}
        lines = [json.dumps({"opencompass": VERSION, "dataset": name, "source": source}, ensure_ascii=False)]
        for meta_name, meta in metas.items():
            for mode in ("gen", "ppl"):
                if mode == "ppl" and meta_name not in PPL_METAS:
                    continue
                pool = train if train_split != test_split else test
                for item in render(build, pool, test, meta, mode):
                    lines.append(json.dumps({"meta": meta_name, "mode": mode, **item}, ensure_ascii=False))
        # Gzipped (mtime 0, so a rerun writes the same bytes): 59 shipped configs x 46 meta templates of
        # few-shot prompts are ~14 MB of text, ~1 MB compressed.
        path = OUT / "outputs" / f"{name}.jsonl.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as handle:
            handle.write(("\n".join(lines) + "\n").encode("utf-8"))
        print(name, "ok", file=sys.stderr)

    # .py configs verbatim, and what mmengine reads from them.
    for rel in (
        "datasets/ARC_c/ARC_c_few_shot_ppl.py",
        "datasets/gsm8k/gsm8k_gen_1d7fe4.py",
        "datasets/mmlu/mmlu_gen_4d595a.py",
        "models/hf_internlm/hf_internlm2_chat_7b_with_system.py",
        "models/openai/gpt_4.py",
        # Added by a second probe (self-contained files: no imports of other configs).
        "datasets/hellaswag/hellaswag_ppl_47bff9.py",
        "datasets/winogrande/winogrande_5shot_ll_252f01.py",
        "datasets/triviaqa/triviaqa_wiki_1shot_gen_20a989.py",
        "datasets/summedits/summedits_ppl_3c30d0.py",
        "datasets/race/race_few_shot_ppl.py",
        "datasets/cmmlu/cmmlu_ppl_8b9c76.py",
        "datasets/commonsenseqa/commonsenseqa_gen_1da2d0.py",
        "models/hf_internlm/hf_internlm2_chat_math_7b_with_system.py",
        "models/gemini/gemini_pro.py",
    ):
        src = CONFIGS / rel
        dest = OUT / "py" / Path(rel).name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        items = load_config(src)
        expected = {}
        for key, value in items.items():
            if key.endswith("datasets") or key == "models":
                expected[key] = [
                    {
                        k: plain(to_dict(v))
                        for k, v in d.items()
                        if k in ("abbr", "reader_cfg", "infer_cfg", "meta_template")
                    }
                    for d in value
                ]
        dest.with_suffix(".expected.json").write_text(
            json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    (OUT / "VERSIONS").write_text(f"opencompass {VERSION}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
