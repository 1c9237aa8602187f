"""Golden files from the REAL lm-evaluation-harness on its own task files, as shipped.

For tests/test_golden_lm_eval_tasks.py. Run it with the throwaway venv's python (see
tools/golden/README.md: torch CPU wheel first, then ``lm-eval==0.4.13``; ``transformers``
for the chat cases)::

    /tmp/venvs/lmeval/bin/python tools/golden/make_lm_eval_tasks_golden.py            # all cases
    /tmp/venvs/lmeval/bin/python tools/golden/make_lm_eval_tasks_golden.py --case arc_easy_2shot

The task files are tests/lm_eval_tasks/ (copied unchanged from lm-eval 0.4.13); the records
are tests/golden/lm_eval_tasks/inputs/ (written by lm_eval_tasks_inputs.py). For each case
this script does what ``lm_eval.evaluator.simple_evaluate`` does, offline:

* ``random.seed(0)`` and ``numpy.random.seed(1234)``;
* ``TaskManager(include_path=<the task file's folder>).load([task])`` — lm-eval parses the
  YAML, follows ``include``, imports ``!function`` task code and runs ``process_docs``;
  the only change is ``ConfigurableTask.download``, patched to read the case's local JSON
  Lines with ``datasets.load_dataset("json", data_files=...)`` instead of the Hub;
* ``num_fewshot`` set to the case's shots (``task.set_config``), ``set_fewshot_seed(1234)``;
* ``task.build_all_requests(...)`` with ``system_instruction``, ``apply_chat_template``,
  ``fewshot_as_multiturn`` and a ``chat_template`` function equal to lm-eval's
  ``HFLM.apply_chat_template`` on a tokenizer built offline with a ChatML chat template
  (a one-token ``tokenizers`` WordLevel ``PreTrainedTokenizerFast``; the template is the
  OpenHermes-2.5 ChatML template from /work/shared/corpora/chat_templates).

Each case runs twice in this process, with the same datasets cache and the task code
re-imported each time, and the second run is recorded: lm-eval with a warm datasets cache
(any run after the first), which is where lm-eval's several ``process_docs`` calls all
give the first call's records. tools/golden/README.md explains why that matters (GPQA).

Per evaluated document it writes the context (first argument of the requests; for a
multiple-input task such as winogrande, ``contexts``: every request's, one per choice,
``context`` being the first, and for chat ``contexts_messages``), the
continuations (multiple choice: one per choice; loglikelihood: the target), the stop
sequences (generate_until), ``gold`` (``task.doc_to_target(doc)``), ``gold_index`` (the
choice lm-eval's ``process_results`` scores as correct) and, for the chat cases, the
``messages`` lm-eval passed to the chat template. The test never imports lm_eval.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tests" / "lm_eval_tasks"
GOLDEN = ROOT / "tests" / "golden" / "lm_eval_tasks"
INPUTS = GOLDEN / "inputs"
CHATML_TEMPLATE = Path(
    "/work/shared/corpora/chat_templates/templates/llamacpp-test-teknium-openhermes-2.5-mistral-7b.jinja"
)
SYSTEM = "You are a careful expert. Answer with the letter only."


@dataclass
class Case:
    name: str
    task_file: str
    """Relative to tests/lm_eval_tasks/."""
    task: str
    """The lm-eval task name in that file."""
    data: dict[str, str]
    """split -> input file relative to tests/golden/lm_eval_tasks/inputs/."""
    shots: int | None = None
    """``num_fewshot`` (``--shots``); ``None``: what the task file says."""
    trust_code: bool = False
    chat: bool = False
    fewshot_as_multiturn: bool = True
    system_instruction: str | None = None
    notes: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)
    """Modules the task code imports (the test skips without them)."""
    stubs: list[str] = field(default_factory=list)
    """Modules that only lm-eval's metric code imports, replaced by empty modules for the anchor run."""


def _arc(name: str, file: str, task: str, shots: int | None, **kw: Any) -> Case:
    return Case(name, file, task, {"test": "arc/test.jsonl", "train": "arc/train.jsonl"}, shots, **kw)


def _mmlu(subject: str, shots: int, **kw: Any) -> Case:
    data = {"test": f"mmlu/{subject}_test.jsonl", "dev": f"mmlu/{subject}_dev.jsonl"}
    suffix = kw.pop("suffix", "")
    return Case(
        f"mmlu_{subject}_{shots}shot{suffix}", f"mmlu/default/mmlu_{subject}.yaml", f"mmlu_{subject}", data, shots, **kw
    )


def _gpqa(kind: str, shots: int) -> Case:
    file = f"gpqa/{kind}/gpqa_main_{kind}.yaml"
    return Case(
        f"gpqa_main_{kind}_{shots}shot",
        file,
        f"gpqa_main_{kind}",
        {"train": "gpqa/train.jsonl"},
        shots,
        trust_code=True,
    )


HELLASWAG = {"validation": "hellaswag/validation.jsonl", "train": "hellaswag/train.jsonl"}
GSM8K = {"test": "gsm8k/test.jsonl", "train": "gsm8k/train.jsonl"}

TOXIGEN = {"test": "toxigen/test.jsonl", "train": "toxigen/train.jsonl"}

CASES: list[Case] = [
    # ARC: 0, 2 and 25 shots with lm-eval's default sampler (Random(1234) shared by the task).
    _arc("arc_easy_0shot", "arc/arc_easy.yaml", "arc_easy", 0),
    _arc("arc_easy_2shot", "arc/arc_easy.yaml", "arc_easy", 2),
    _arc("arc_easy_25shot", "arc/arc_easy.yaml", "arc_easy", 25),
    _arc("arc_challenge_0shot", "arc/arc_challenge.yaml", "arc_challenge", 0),
    _arc("arc_challenge_2shot", "arc/arc_challenge.yaml", "arc_challenge", 2),
    _arc("arc_challenge_25shot", "arc/arc_challenge.yaml", "arc_challenge", 25),
    # MMLU subjects: first_n from dev.
    _mmlu("anatomy", 0),
    _mmlu("anatomy", 5),
    _mmlu("abstract_algebra", 0),
    _mmlu("abstract_algebra", 5),
    _mmlu("high_school_world_history", 0),
    _mmlu("high_school_world_history", 5),
    # HellaSwag: process_docs (preprocess) on validation and train; the sampler gets the
    # evaluated doc (fewshot split None == test split None) and draws n + 1.
    Case("hellaswag_0shot", "hellaswag/hellaswag.yaml", "hellaswag", HELLASWAG, 0, trust_code=True),
    Case("hellaswag_2shot", "hellaswag/hellaswag.yaml", "hellaswag", HELLASWAG, 2, trust_code=True),
    # GPQA: process_docs shuffles the choices (global random / Random(42)).
    _gpqa("zeroshot", 0),
    _gpqa("zeroshot", 2),
    _gpqa("zeroshot", 5),
    _gpqa("n_shot", 0),
    _gpqa("n_shot", 2),
    _gpqa("n_shot", 5),
    # generate_until.
    Case("gsm8k_0shot", "gsm8k/gsm8k.yaml", "gsm8k", GSM8K, 0),
    Case("gsm8k_5shot", "gsm8k/gsm8k.yaml", "gsm8k", GSM8K, None),
    _arc("arc_challenge_chat_0shot", "arc/arc_challenge_chat.yaml", "arc_challenge_chat", 0),
    _arc("arc_challenge_chat_2shot", "arc/arc_challenge_chat.yaml", "arc_challenge_chat", 2),
    Case(
        "bbh_web_of_lies_3shot",
        "bbh/fewshot/web_of_lies.yaml",
        "bbh_fewshot_web_of_lies",
        {"test": "bbh/test.jsonl"},
        None,
    ),
    Case(
        "kormedmcqa_doctor_2shot",
        "kormedmcqa/doctor.yaml",
        "kormedmcqa_doctor",
        {"test": "kormedmcqa/test.jsonl", "fewshot": "kormedmcqa/fewshot.jsonl"},
        2,
    ),
    # loglikelihood and loglikelihood_rolling.
    Case("lambada_openai_0shot", "lambada/lambada_openai.yaml", "lambada_openai", {"test": "lambada/test.jsonl"}, 0),
    Case(
        "wikitext_0shot",
        "wikitext/wikitext.yaml",
        "wikitext",
        {"test": "wikitext/test.jsonl", "train": "wikitext/train.jsonl"},
        0,
        trust_code=True,
    ),
    # The chat path (ChatML tokenizer template).
    _mmlu("anatomy", 5, chat=True, suffix="_chat_multiturn"),
    _mmlu(
        "anatomy", 5, chat=True, fewshot_as_multiturn=False, system_instruction=SYSTEM, suffix="_chat_singleturn_system"
    ),
    _mmlu("anatomy", 0, chat=True, system_instruction=SYSTEM, suffix="_chat_system"),
    _arc("arc_easy_0shot_chat", "arc/arc_easy.yaml", "arc_easy", 0, chat=True),
    _arc(
        "arc_easy_2shot_chat_singleturn_system",
        "arc/arc_easy.yaml",
        "arc_easy",
        2,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    _arc("arc_easy_2shot_chat_multiturn", "arc/arc_easy.yaml", "arc_easy", 2, chat=True),
    _arc("arc_challenge_chat_2shot_chat_multiturn", "arc/arc_challenge_chat.yaml", "arc_challenge_chat", 2, chat=True),
    _arc(
        "arc_challenge_chat_2shot_chat_singleturn",
        "arc/arc_challenge_chat.yaml",
        "arc_challenge_chat",
        2,
        chat=True,
        fewshot_as_multiturn=False,
    ),
    Case("gsm8k_0shot_chat", "gsm8k/gsm8k.yaml", "gsm8k", GSM8K, 0, chat=True),
    Case("gsm8k_2shot_chat_system", "gsm8k/gsm8k.yaml", "gsm8k", GSM8K, 2, chat=True, system_instruction=SYSTEM),
    Case("hellaswag_0shot_chat", "hellaswag/hellaswag.yaml", "hellaswag", HELLASWAG, 0, trust_code=True, chat=True),
    Case(
        "gpqa_main_n_shot_2shot_chat",
        "gpqa/n_shot/gpqa_main_n_shot.yaml",
        "gpqa_main_n_shot",
        {"train": "gpqa/train.jsonl"},
        2,
        trust_code=True,
        chat=True,
    ),
    Case(
        "kormedmcqa_doctor_2shot_chat_singleturn",
        "kormedmcqa/doctor.yaml",
        "kormedmcqa_doctor",
        {"test": "kormedmcqa/test.jsonl", "fewshot": "kormedmcqa/fewshot.jsonl"},
        2,
        chat=True,
        fewshot_as_multiturn=False,
    ),
    # doc_to_target is task code returning a numpy.int32 (a gold index for lm-eval).
    Case("toxigen_0shot", "toxigen/toxigen.yaml", "toxigen", TOXIGEN, 0, trust_code=True, requires=["numpy"]),
    Case(
        "toxigen_0shot_chat",
        "toxigen/toxigen.yaml",
        "toxigen",
        TOXIGEN,
        0,
        trust_code=True,
        chat=True,
        requires=["numpy"],
    ),
]


def _split(name: str, *splits: str) -> dict[str, str]:
    return {split: f"{name}/{split}.jsonl" for split in splits}


PIQA = _split("piqa", "validation", "train")
SIQA = _split("siqa", "validation", "train")
BOOLQ = _split("boolq", "validation", "train")
COPA = _split("copa", "validation", "train")
WINOGRANDE = _split("winogrande", "validation", "train")
OBQA = _split("openbookqa", "test", "validation", "train")
SCIQ = _split("sciq", "test", "validation", "train")
CSQA = _split("commonsense_qa", "validation", "train")
LOGIQA = _split("logiqa", "test", "validation", "train")
MATHQA = _split("mathqa", "test", "validation", "train")
XNLI = _split("xnli", "validation", "train")
MMLU_PRO = _split("mmlu_pro", "test", "validation")
MATH = _split("math", "test", "train")
MEDMCQA = _split("medmcqa", "validation", "train")

CASES += [
    # Jinja-list doc_to_choice, int label.
    Case("piqa_0shot", "piqa/piqa.yaml", "piqa", PIQA, 0),
    Case("piqa_3shot", "piqa/piqa.yaml", "piqa", PIQA, 3),
    Case("piqa_1shot_chat", "piqa/piqa.yaml", "piqa", PIQA, 1, chat=True),
    # target_delimiter override and a Jinja arithmetic target ("{{ (label|int) - 1 }}").
    Case("social_iqa_0shot", "siqa/siqa.yaml", "social_iqa", SIQA, 0),
    Case("social_iqa_3shot", "siqa/siqa.yaml", "social_iqa", SIQA, 3),
    # doc_to_choice a literal list.
    Case("boolq_1shot", "super_glue/boolq/default.yaml", "boolq", BOOLQ, 1),
    Case(
        "boolq_3shot_chat_system",
        "super_glue/boolq/default.yaml",
        "boolq",
        BOOLQ,
        3,
        chat=True,
        system_instruction=SYSTEM,
    ),
    # !function doc_to_text / doc_to_target / doc_to_choice (continuations with their own leading space).
    Case("copa_0shot", "super_glue/copa/default.yaml", "copa", COPA, 0, trust_code=True),
    Case("copa_3shot", "super_glue/copa/default.yaml", "copa", COPA, 3, trust_code=True),
    Case("copa_1shot_chat", "super_glue/copa/default.yaml", "copa", COPA, 1, trust_code=True, chat=True),
    # Test split from three; lstrip in the target.
    Case("openbookqa_0shot", "openbookqa/openbookqa.yaml", "openbookqa", OBQA, 0),
    Case("openbookqa_3shot", "openbookqa/openbookqa.yaml", "openbookqa", OBQA, 3),
    # doc_to_target an int (3).
    Case("sciq_0shot", "sciq/sciq.yaml", "sciq", SCIQ, 0),
    Case("sciq_1shot", "sciq/sciq.yaml", "sciq", SCIQ, 1),
    # 5 letter choices, target a letter.
    Case("commonsense_qa_0shot", "commonsense_qa/default.yaml", "commonsense_qa", CSQA, 0),
    Case("commonsense_qa_3shot_chat", "commonsense_qa/default.yaml", "commonsense_qa", CSQA, 3, chat=True),
    # {% set %} in doc_to_text, num_fewshot 0 in the file, 2 to 5 choices.
    Case(
        "truthfulqa_mc1_0shot",
        "truthfulqa/truthfulqa_mc1.yaml",
        "truthfulqa_mc1",
        _split("truthfulqa", "validation"),
        None,
    ),
    Case(
        "truthfulqa_mc1_0shot_chat_system",
        "truthfulqa/truthfulqa_mc1.yaml",
        "truthfulqa_mc1",
        _split("truthfulqa", "validation"),
        None,
        chat=True,
        system_instruction=SYSTEM,
    ),
    Case(
        "truthfulqa_mc2_0shot",
        "truthfulqa/truthfulqa_mc2.yaml",
        "truthfulqa_mc2",
        _split("truthfulqa", "validation"),
        None,
        stubs=["sacrebleu", "rouge_score"],
    ),
    Case("logiqa_0shot", "logiqa/logiqa.yaml", "logiqa", LOGIQA, 0, trust_code=True),
    Case("logiqa_1shot", "logiqa/logiqa.yaml", "logiqa", LOGIQA, 1, trust_code=True),
    Case("mathqa_0shot", "mathqa/mathqa.yaml", "mathqa", MATHQA, 0, trust_code=True),
    Case("mathqa_1shot", "mathqa/mathqa.yaml", "mathqa", MATHQA, 1, trust_code=True),
    Case("race_0shot", "race/race.yaml", "race", _split("race", "test"), 0, trust_code=True),
    # functools.partial task code.
    Case(
        "xcopa_et_0shot", "xcopa/default_et.yaml", "xcopa_et", _split("xcopa", "test", "validation"), 0, trust_code=True
    ),
    Case(
        "xcopa_et_1shot", "xcopa/default_et.yaml", "xcopa_et", _split("xcopa", "test", "validation"), 1, trust_code=True
    ),
    # include, doc_to_text '' and choices that hold the whole text.
    Case("xnli_en_0shot", "xnli/xnli_en.yaml", "xnli_en", XNLI, 0),
    Case("xnli_de_3shot", "xnli/xnli_de.yaml", "xnli_de", XNLI, 3),
    # include _default_template_yaml, first_n from the test split itself.
    Case(
        "belebele_eng_Latn_0shot", "belebele/belebele_eng_Latn.yaml", "belebele_eng_Latn", _split("belebele", "test"), 0
    ),
    Case(
        "belebele_eng_Latn_1shot", "belebele/belebele_eng_Latn.yaml", "belebele_eng_Latn", _split("belebele", "test"), 1
    ),
    Case(
        "belebele_eng_Latn_3shot_chat",
        "belebele/belebele_eng_Latn.yaml",
        "belebele_eng_Latn",
        _split("belebele", "test"),
        3,
        chat=True,
    ),
    # process_docs filter, fewshot_config doc_to_* overrides, description, generate_until.
    Case("mmlu_pro_math_0shot", "mmlu_pro/mmlu_pro_math.yaml", "mmlu_pro_math", MMLU_PRO, 0, trust_code=True),
    Case("mmlu_pro_math_3shot", "mmlu_pro/mmlu_pro_math.yaml", "mmlu_pro_math", MMLU_PRO, 3, trust_code=True),
    Case("mmlu_pro_math_5shot", "mmlu_pro/mmlu_pro_math.yaml", "mmlu_pro_math", MMLU_PRO, None, trust_code=True),
    Case(
        "mmlu_pro_math_3shot_chat_multiturn",
        "mmlu_pro/mmlu_pro_math.yaml",
        "mmlu_pro_math",
        MMLU_PRO,
        3,
        trust_code=True,
        chat=True,
    ),
    Case(
        "mmlu_pro_math_3shot_chat_singleturn_system",
        "mmlu_pro/mmlu_pro_math.yaml",
        "mmlu_pro_math",
        MMLU_PRO,
        3,
        trust_code=True,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    Case(
        "hendrycks_math_algebra_0shot",
        "hendrycks_math/hendrycks_math_algebra.yaml",
        "hendrycks_math_algebra",
        MATH,
        0,
        trust_code=True,
    ),
    Case(
        "hendrycks_math_algebra_3shot",
        "hendrycks_math/hendrycks_math_algebra.yaml",
        "hendrycks_math_algebra",
        MATH,
        3,
        trust_code=True,
    ),
    # fewshot_config samples from a function; a target template testing ``few_shot is undefined``.
    Case(
        "minerva_math_algebra_4shot",
        "minerva_math/minerva_math_algebra.yaml",
        "minerva_math_algebra",
        MATH,
        None,
        trust_code=True,
        requires=["sympy", "math_verify", "antlr4"],
    ),
    Case(
        "minerva_math_algebra_1shot_chat",
        "minerva_math/minerva_math_algebra.yaml",
        "minerva_math_algebra",
        MATH,
        1,
        trust_code=True,
        chat=True,
        requires=["sympy", "math_verify", "antlr4"],
    ),
    # fixed samples, description, target_delimiter "".
    Case(
        "bbh_cot_fewshot_boolean_expressions_3shot",
        "bbh/cot_fewshot/boolean_expressions.yaml",
        "bbh_cot_fewshot_boolean_expressions",
        _split("bbh_cot", "test"),
        None,
    ),
    Case(
        "bbh_cot_fewshot_boolean_expressions_1shot",
        "bbh/cot_fewshot/boolean_expressions.yaml",
        "bbh_cot_fewshot_boolean_expressions",
        _split("bbh_cot", "test"),
        1,
    ),
    Case(
        "bbh_cot_fewshot_boolean_expressions_3shot_chat_multiturn",
        "bbh/cot_fewshot/boolean_expressions.yaml",
        "bbh_cot_fewshot_boolean_expressions",
        _split("bbh_cot", "test"),
        None,
        chat=True,
    ),
    Case("gsm8k_cot_8shot", "gsm8k/gsm8k-cot.yaml", "gsm8k_cot", _split("gsm8k_cot", "test"), None),
    Case("gsm8k_cot_3shot_chat", "gsm8k/gsm8k-cot.yaml", "gsm8k_cot", _split("gsm8k_cot", "test"), 3, chat=True),
    Case("gsm8k_cot_llama_3shot", "gsm8k/gsm8k-cot-llama.yaml", "gsm8k_cot_llama", _split("gsm8k_cot", "test"), 3),
    Case(
        "gsm8k_cot_llama_3shot_chat_multiturn",
        "gsm8k/gsm8k-cot-llama.yaml",
        "gsm8k_cot_llama",
        _split("gsm8k_cot", "test"),
        3,
        chat=True,
    ),
    Case(
        "gsm8k_cot_zeroshot_0shot",
        "gsm8k/gsm8k-cot-zeroshot.yaml",
        "gsm8k_cot_zeroshot",
        {"test": "gsm8k_cot/test.jsonl", "train": "gsm8k/train.jsonl"},
        None,
    ),
    Case("medmcqa_0shot", "medmcqa/medmcqa.yaml", "medmcqa", MEDMCQA, 0, trust_code=True),
    Case("medmcqa_3shot", "medmcqa/medmcqa.yaml", "medmcqa", MEDMCQA, 3, trust_code=True),
    # tinyGSM8k writes num_fewshot twice (PyYAML keeps the last); aggregation !function is never run.
    Case("tinyGSM8k_5shot", "tinyBenchmarks/tinyGSM8k.yaml", "tinyGSM8k", GSM8K, None, stubs=["tinyBenchmarks"]),
    Case(
        "tinyGSM8k_2shot_chat",
        "tinyBenchmarks/tinyGSM8k.yaml",
        "tinyGSM8k",
        GSM8K,
        2,
        chat=True,
        stubs=["tinyBenchmarks"],
    ),
    _arc("tinyArc_3shot", "tinyBenchmarks/tinyArc.yaml", "tinyArc", 3, stubs=["tinyBenchmarks"]),
    # gen_prefix: Jinja with a record field (humaneval_instruct), on a multiple-choice task with
    # target_delimiter "" (discrim_eval), with few-shot examples (llama3 mmlu), generate_until.
    Case(
        "humaneval_0shot",
        "humaneval/humaneval.yaml",
        "humaneval",
        {"test": "humaneval/test.jsonl"},
        None,
        stubs=["evaluate"],
    ),
    Case(
        "humaneval_instruct_0shot",
        "humaneval/humaneval_instruct.yaml",
        "humaneval_instruct",
        {"test": "humaneval/test.jsonl"},
        None,
        stubs=["evaluate"],
    ),
    Case(
        "humaneval_instruct_0shot_chat",
        "humaneval/humaneval_instruct.yaml",
        "humaneval_instruct",
        {"test": "humaneval/test.jsonl"},
        None,
        chat=True,
        stubs=["evaluate"],
    ),
    Case(
        "discrim_eval_explicit_0shot",
        "discrim_eval/discrim_eval_explicit.yaml",
        "discrim_eval_explicit",
        {"train": "discrim/train.jsonl"},
        None,
        stubs=["statsmodels", "statsmodels.formula", "statsmodels.formula.api"],
    ),
    Case(
        "discrim_eval_explicit_0shot_chat_system",
        "discrim_eval/discrim_eval_explicit.yaml",
        "discrim_eval_explicit",
        {"train": "discrim/train.jsonl"},
        None,
        chat=True,
        system_instruction=SYSTEM,
        stubs=["statsmodels", "statsmodels.formula", "statsmodels.formula.api"],
    ),
    _arc(
        "arc_challenge_llama_0shot",
        "llama3/instruct/arc_challenge/arc_challenge_llama.yaml",
        "arc_challenge_llama",
        None,
        trust_code=True,
    ),
    _arc(
        "arc_challenge_llama_0shot_chat",
        "llama3/instruct/arc_challenge/arc_challenge_llama.yaml",
        "arc_challenge_llama",
        None,
        trust_code=True,
        chat=True,
    ),
    _arc(
        "arc_challenge_llama_2shot",
        "llama3/instruct/arc_challenge/arc_challenge_llama.yaml",
        "arc_challenge_llama",
        2,
        trust_code=True,
    ),
    Case(
        "mmlu_llama_anatomy_5shot",
        "llama3/instruct/mmlu/mmlu_anatomy.yaml",
        "mmlu_llama_anatomy",
        {"test": "mmlu/anatomy_test.jsonl", "dev": "mmlu/anatomy_dev.jsonl"},
        None,
    ),
    Case(
        "mmlu_llama_anatomy_5shot_chat_multiturn",
        "llama3/instruct/mmlu/mmlu_anatomy.yaml",
        "mmlu_llama_anatomy",
        {"test": "mmlu/anatomy_test.jsonl", "dev": "mmlu/anatomy_dev.jsonl"},
        None,
        chat=True,
    ),
    Case(
        "mmlu_llama_anatomy_3shot_chat_singleturn_system",
        "llama3/instruct/mmlu/mmlu_anatomy.yaml",
        "mmlu_llama_anatomy",
        {"test": "mmlu/anatomy_test.jsonl", "dev": "mmlu/anatomy_dev.jsonl"},
        3,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    # Several golds (a list target; the examples show the first), description, fewshot_delimiter "\n".
    *(
        Case(f"{task}_{shots}shot{suffix}", file, task, data, shots, chat=bool(suffix))
        for task, file, data in [
            (
                "triviaqa",
                "triviaqa/default.yaml",
                {"validation": "open_qa/trivia_validation.jsonl", "train": "open_qa/trivia_train.jsonl"},
            ),
            (
                "nq_open",
                "nq_open/nq_open.yaml",
                {"validation": "open_qa/nq_validation.jsonl", "train": "open_qa/nq_train.jsonl"},
            ),
        ]
        for shots, suffix in [(0, ""), (2, ""), (2, "_chat")]
    ),
    # Task files we wrote (tests/lm_eval_tasks/written/): description template, delimiters,
    # first_n and the default sampler on a pool holding copies of the evaluated record,
    # fewshot_config overrides, fewshot_indices (lm-eval 0.4.13 never uses them), a mapping
    # doc_to_choice.
    Case("written_first_n_2shot", "written/dup_first.yaml", "dup_first", {"test": "written/test.jsonl"}, 2),
    Case(
        "written_first_n_2shot_chat",
        "written/dup_first.yaml",
        "dup_first",
        {"test": "written/test.jsonl"},
        2,
        chat=True,
    ),
    Case("written_default_2shot", "written/dup_rand.yaml", "dup_rand", {"test": "written/test.jsonl"}, 2),
    Case("written_default_3shot", "written/dup_rand.yaml", "dup_rand", {"test": "written/test.jsonl"}, 3),
    Case("written_indices_2shot", "written/idx.yaml", "idx", _split("written", "test", "train"), 2),
    Case("written_indices_2shot_chat", "written/idx.yaml", "idx", _split("written", "test", "train"), 2, chat=True),
    Case(
        "written_indices_3shot_chat_singleturn_system",
        "written/idx.yaml",
        "idx",
        _split("written", "test", "train"),
        3,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    # GLUE, SuperGLUE, ANLI, SWAG, LAMBADA cloze, MGSM, PAWS-X, ASDiv, PubMedQA: one records file
    # is every split the task names.
    *(
        Case(name, file, task, {split: f"more/{data}.jsonl" for split in splits}, shots, trust_code=trust, chat=chat)
        for name, file, task, data, splits, shots, trust, chat in [
            ("cola_2shot", "glue/cola/default.yaml", "cola", "cola", ("validation", "train"), 2, False, False),
            ("mnli_2shot", "glue/mnli/default.yaml", "mnli", "mnli", ("validation_matched", "train"), 2, True, False),
            ("wic_2shot", "super_glue/wic/default.yaml", "wic", "wic", ("validation", "train"), 2, False, False),
            (
                "multirc_1shot",
                "super_glue/multirc/default.yaml",
                "multirc",
                "multirc",
                ("validation", "train"),
                1,
                False,
                False,
            ),
            (
                "multirc_1shot_chat",
                "super_glue/multirc/default.yaml",
                "multirc",
                "multirc",
                ("validation", "train"),
                1,
                False,
                True,
            ),
            ("cb_2shot_chat", "super_glue/cb/default.yaml", "cb", "cb", ("validation", "train"), 2, False, True),
            (
                "anli_r1_1shot",
                "anli/anli_r1.yaml",
                "anli_r1",
                "anli",
                ("test_r1", "train_r1", "dev_r1"),
                1,
                False,
                False,
            ),
            ("swag_1shot", "swag/swag.yaml", "swag", "swag", ("validation", "train"), 1, False, False),
            (
                "lambada_openai_cloze_0shot",
                "lambada_cloze/lambada_openai_cloze.yaml",
                "lambada_openai_cloze_yaml",
                "lambada_cloze",
                ("test",),
                0,
                False,
                False,
            ),
            (
                "lambada_openai_cloze_0shot_chat",
                "lambada_cloze/lambada_openai_cloze.yaml",
                "lambada_openai_cloze_yaml",
                "lambada_cloze",
                ("test",),
                0,
                False,
                True,
            ),
            (
                "paws_en_1shot",
                "paws-x/paws_en.yaml",
                "paws_en",
                "paws",
                ("test", "train", "validation"),
                1,
                True,
                False,
            ),
            ("asdiv_0shot", "asdiv/default.yaml", "asdiv", "asdiv", ("validation",), 0, False, False),
            (
                "blimp_adjunct_island_0shot",
                "blimp/adjunct_island.yaml",
                "blimp_adjunct_island",
                "blimp",
                ("train",),
                None,
                False,
                False,
            ),
            (
                "blimp_adjunct_island_0shot_chat",
                "blimp/adjunct_island.yaml",
                "blimp_adjunct_island",
                "blimp",
                ("train",),
                None,
                False,
                True,
            ),
            (
                "blimp_adjunct_island_1shot",
                "blimp/adjunct_island.yaml",
                "blimp_adjunct_island",
                "blimp",
                ("train",),
                1,
                False,
                False,
            ),
            (
                "bigbench_abstract_narrative_understanding_1shot_chat",
                "bigbench/multiple_choice/abstract_narrative_understanding.yaml",
                "bigbench_abstract_narrative_understanding_multiple_choice",
                "bigbench",
                ("default",),
                1,
                True,
                True,
            ),
            (
                "arithmetic_2da_0shot",
                "arithmetic/arithmetic_2da.yaml",
                "arithmetic_2da",
                "arithmetic",
                ("validation",),
                0,
                True,
                False,
            ),
            (
                "pubmedqa_1shot",
                "pubmedqa/pubmedqa.yaml",
                "pubmedqa",
                "pubmedqa",
                ("test", "train", "validation"),
                1,
                True,
                False,
            ),
        ]
    ),
    *(
        Case(
            f"mgsm_direct_en_2shot{suffix}",
            "mgsm/direct/mgsm_direct_en.yaml",
            "mgsm_direct_en",
            {"test": "more/mgsm_test.jsonl", "train": "more/mgsm_train.jsonl"},
            2,
            chat=bool(suffix),
        )
        for suffix in ("", "_chat")
    ),
    Case(
        "bbh_zeroshot_boolean_expressions_0shot_chat_system",
        "bbh/zeroshot/boolean_expressions.yaml",
        "bbh_zeroshot_boolean_expressions",
        _split("bbh_cot", "test"),
        None,
        chat=True,
        system_instruction=SYSTEM,
    ),
    Case(
        "gpqa_main_generative_n_shot_2shot_chat_singleturn_system",
        "gpqa/generative/gpqa_main_generative_n_shot.yaml",
        "gpqa_main_generative_n_shot",
        {"train": "gpqa/train.jsonl"},
        2,
        trust_code=True,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    *(
        Case(
            f"mmlu_flan_n_shot_generative_anatomy_2shot{suffix}",
            "mmlu/flan_n_shot/generative/mmlu_anatomy.yaml",
            "mmlu_flan_n_shot_generative_anatomy",
            {"test": "mmlu/anatomy_test.jsonl", "dev": "mmlu/anatomy_dev.jsonl"},
            2,
            chat=bool(suffix),
        )
        for suffix in ("", "_chat")
    ),
    # kmmlu's CoT files write filter_list's regex_pattern twice (PyYAML keeps the last).
    *(
        Case(
            f"kmmlu_cot_hard_accounting_{shots}shot{suffix}",
            "kmmlu/cot_hard/kmmlu_cot_hard_accounting.yaml",
            "kmmlu_cot_hard_accounting",
            {"test": "more/kmmlu.jsonl", "dev": "more/kmmlu.jsonl"},
            None if shots == 5 else shots,
            chat=bool(suffix),
        )
        for shots, suffix in ((5, ""), (2, "_chat"))
    ),
    # Open LLM Leaderboard v2 task files.
    Case(
        "leaderboard_bbh_navigate_3shot",
        "leaderboard/bbh_mc/navigate.yaml",
        "leaderboard_bbh_navigate",
        {"test": "leaderboard/bbh.jsonl"},
        None,
    ),
    Case(
        "leaderboard_bbh_navigate_3shot_chat_singleturn_system",
        "leaderboard/bbh_mc/navigate.yaml",
        "leaderboard_bbh_navigate",
        {"test": "leaderboard/bbh.jsonl"},
        None,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    Case(
        "leaderboard_musr_team_allocation_0shot",
        "leaderboard/musr/musr_team_allocation.yaml",
        "leaderboard_musr_team_allocation",
        {"team_allocation": "leaderboard/team_allocation.jsonl"},
        None,
        trust_code=True,
    ),
    Case(
        "leaderboard_gpqa_main_0shot",
        "leaderboard/gpqa/gpqa_main_zeroshot.yaml",
        "leaderboard_gpqa_main",
        {"train": "gpqa/train.jsonl"},
        None,
        trust_code=True,
    ),
    Case(
        "leaderboard_mmlu_pro_5shot",
        "leaderboard/mmlu_pro/mmlu_pro.yaml",
        "leaderboard_mmlu_pro",
        MMLU_PRO,
        None,
        trust_code=True,
    ),
    Case(
        "leaderboard_mmlu_pro_1shot_chat",
        "leaderboard/mmlu_pro/mmlu_pro.yaml",
        "leaderboard_mmlu_pro",
        MMLU_PRO,
        1,
        trust_code=True,
        chat=True,
    ),
]


XWINOGRAD = _split("xwinograd", "test")
WSC273 = _split("wsc273", "test")

CASES += [
    # Multiple input (doc_to_text gives the index of the choice that is the context): one
    # request per choice, each with its own context and the one doc_to_target continuation.
    Case("winogrande_0shot", "winogrande/default.yaml", "winogrande", WINOGRANDE, 0, trust_code=True),
    Case("winogrande_1shot", "winogrande/default.yaml", "winogrande", WINOGRANDE, 1, trust_code=True),
    Case("winogrande_5shot", "winogrande/default.yaml", "winogrande", WINOGRANDE, 5, trust_code=True),
    Case("winogrande_1shot_chat", "winogrande/default.yaml", "winogrande", WINOGRANDE, 1, trust_code=True, chat=True),
    Case(
        "winogrande_2shot_chat_singleturn_system",
        "winogrande/default.yaml",
        "winogrande",
        WINOGRANDE,
        2,
        trust_code=True,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    Case(
        "tinyWinogrande_5shot",
        "tinyBenchmarks/tinyWinogrande.yaml",
        "tinyWinogrande",
        WINOGRANDE,
        None,
        trust_code=True,
        stubs=["tinyBenchmarks"],
    ),
    Case("xwinograd_en_0shot", "xwinograd/xwinograd_en.yaml", "xwinograd_en", XWINOGRAD, 0, trust_code=True),
    Case("xwinograd_en_2shot", "xwinograd/xwinograd_en.yaml", "xwinograd_en", XWINOGRAD, 2, trust_code=True),
    Case("wsc273_0shot", "wsc273/default.yaml", "wsc273", WSC273, 0, trust_code=True),
    Case("wsc273_2shot", "wsc273/default.yaml", "wsc273", WSC273, 2, trust_code=True),
    Case("wsc273_0shot_chat", "wsc273/default.yaml", "wsc273", WSC273, 0, trust_code=True, chat=True),
    Case(
        "wsc273_2shot_chat_singleturn_system",
        "wsc273/default.yaml",
        "wsc273",
        WSC273,
        2,
        trust_code=True,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
    Case(
        "xwinograd_en_2shot_chat",
        "xwinograd/xwinograd_en.yaml",
        "xwinograd_en",
        XWINOGRAD,
        2,
        trust_code=True,
        chat=True,
    ),
    # Written (tests/lm_eval_tasks/written/multi_input.yaml): a Jinja index, a description
    # template, gen_prefix after each context, custom delimiters.
    Case("written_multi_input_2shot", "written/multi_input.yaml", "multi_input", WINOGRANDE, 2),
    Case("written_multi_input_2shot_chat", "written/multi_input.yaml", "multi_input", WINOGRANDE, 2, chat=True),
    Case(
        "written_multi_input_1shot_chat_singleturn_system",
        "written/multi_input.yaml",
        "multi_input",
        WINOGRANDE,
        1,
        chat=True,
        fewshot_as_multiturn=False,
        system_instruction=SYSTEM,
    ),
]


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {
        "lm_eval": version("lm_eval"),
        "python": platform.python_version(),
        "torch": version("torch"),
        "datasets": version("datasets"),
        "transformers": version("transformers"),
        "tokenizers": version("tokenizers"),
        "jinja2": version("jinja2"),
        "numpy": version("numpy"),
    }


def _chat_template():
    """lm-eval's HFLM.apply_chat_template on an offline ChatML tokenizer; records the messages."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")),
        eos_token="<|im_end|>",
        chat_template=CHATML_TEMPLATE.read_text(encoding="utf-8"),
    )
    seen: list[list[dict[str, str]]] = []

    def apply_chat_template(chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        seen.append(copy.deepcopy(chat_history))
        return tokenizer.apply_chat_template(
            chat_history,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=not add_generation_prompt,
        )

    return apply_chat_template, seen


def _purge_task_modules() -> None:
    """Forget task code imported by an earlier run, as a new lm-eval process would."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if file.startswith(str(TASKS)):
            del sys.modules[name]


def _gold_index(task, doc, n: int):
    if task.config.process_results is not None or not {"acc", "acc_norm"} & set(task._metric_fn_list):
        # custom process_results (discrim_eval, truthfulqa_mc2) or no accuracy metric (cola's
        # mcc): the gold is lm-eval's own doc_to_target -> choice rule
        gold = task.doc_to_target(doc)
        return gold if isinstance(gold, int) else task.doc_to_choice(doc).index(gold)
    hits = []
    for i in range(n):
        results = [(0.0 if j == i else -100.0, j == i) for j in range(n)]
        scores = task.process_results(doc, results)
        if scores.get("acc", scores.get("acc_norm")) == 1.0:
            hits.append(i)
    return hits[0] if len(hits) == 1 else None


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def run_case(case: Case, cache: Path) -> dict[str, Any]:
    import datasets
    import numpy as np
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks import TaskManager

    files = {split: str(INPUTS / path) for split, path in case.data.items()}

    def download(self, dataset_kwargs=None, **kwargs):  # the Hub replaced by the case's files
        self.dataset = datasets.load_dataset("json", data_files=files, cache_dir=str(cache))

    ConfigurableTask.download = download
    _purge_task_modules()
    for name in case.stubs:  # metric-only dependencies: never reached while building prompts
        sys.modules.setdefault(name, mock.MagicMock(name=name))
    random.seed(0)  # simple_evaluate's random_seed
    np.random.seed(1234)  # its numpy_random_seed
    manager = TaskManager(include_path=str((TASKS / case.task_file).parent), include_defaults=False)
    task = manager.load([case.task])["tasks"][case.task]
    if case.shots is not None:
        task.set_config(key="num_fewshot", value=case.shots)
    elif task.get_config("num_fewshot") is None:
        task.set_config(key="num_fewshot", value=0)
    task.set_fewshot_seed(seed=1234)
    chat_template, seen = _chat_template() if case.chat else (None, [])
    task.build_all_requests(
        rank=0,
        world_size=1,
        system_instruction=case.system_instruction,
        apply_chat_template=case.chat,
        fewshot_as_multiturn=case.fewshot_as_multiturn,
        chat_template=chat_template,
    )
    by_doc: dict[int, list] = {}
    for inst in task.instances:
        by_doc.setdefault(inst.doc_id, []).append(inst)
    output_type = task.config.output_type
    multiple_input = bool(task.multiple_input)
    records = []
    calls = 0  # chat template calls read so far (one per context)
    for doc_id in sorted(by_doc):
        insts = sorted(by_doc[doc_id], key=lambda inst: inst.idx)
        doc = insts[0].doc
        record: dict[str, Any] = {"index": doc_id}
        if multiple_input:
            # one context per choice, each scored with the one continuation
            record["contexts"] = [inst.arguments[0] for inst in insts]
            record["context"] = record["contexts"][0]
            record["continuations"] = [inst.arguments[1] for inst in insts]
            record["gold_index"] = _gold_index(task, doc, len(insts))
            record["doc_to_text"] = task.doc_to_text(doc)
        elif output_type == "multiple_choice":
            assert len({inst.arguments[0] for inst in insts}) == 1
            record["context"] = insts[0].arguments[0]
            record["continuations"] = [inst.arguments[1] for inst in insts]
            record["gold_index"] = _gold_index(task, doc, len(insts))
        elif output_type == "loglikelihood":
            record["context"] = insts[0].arguments[0]
            record["continuations"] = [insts[0].arguments[1]]
        elif output_type == "loglikelihood_rolling":
            record["context"] = insts[0].arguments[0]
            record["continuations"] = []
        else:
            record["context"] = insts[0].arguments[0]
            record["continuations"] = []
            until = insts[0].arguments[1]["until"]
            record["until"] = [until] if isinstance(until, str) else list(until)
        record["gold"] = _jsonable(task.doc_to_target(doc))
        if case.chat:
            made = len(insts) if multiple_input else 1
            record["messages"] = seen[calls]
            if multiple_input:
                record["contexts_messages"] = seen[calls : calls + made]
            calls += made
        records.append(record)
    if case.chat:
        assert len(seen) == calls, "one chat template call per context"
    return {
        "output_type": output_type,
        "num_fewshot": task.get_config("num_fewshot"),
        "records": records,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="only this case (repeatable)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lmeval-tasks-golden-") as tmp:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
        os.environ["HF_HOME"] = str(Path(tmp) / "hf-home")
        versions = _versions()
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for case in CASES:
            if args.case and case.name not in args.case:
                continue
            cache = Path(tmp) / "datasets" / case.name
            try:
                run_case(case, cache)  # warms the datasets cache
                result = run_case(case, cache)
            except Exception as error:  # lm-eval refuses the case: the test expects a typed error
                result = {"error": f"{type(error).__name__}: {error}"}
            out = GOLDEN / f"{case.name}.json"
            payload = {"generator": versions, "case": asdict(case), **result}
            out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"wrote {out.relative_to(ROOT)} ({len(result.get('records', []))} records {result.get('error', '')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
