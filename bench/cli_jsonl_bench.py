"""``prompt-style render TASK --format jsonl`` against a hand-written script, in CPU time.

What a user runs is the command line, not the API. Each workload is a task file
and its JSON Lines (a test split and a few-shot split), rendered

- by the CLI: ``prompt-style render task.yaml --format jsonl [--meta ...]``, its
  standard output sent to a file (``> out.jsonl``), the console script next to
  ``sys.executable``;
- by a hand-written script doing the same job the obvious way, in the same
  interpreter: ``json.loads`` per line, the few-shot prefix built once, one
  f-string per record, ``json.dumps`` of ``{"index", "text", "continuations",
  "target"}`` per record, written to a file.

Both are fresh processes (start-up, imports and task loading are in the CLI's
time, as a user pays them), timed in **CPU time** (user + system of the child, from
``os.wait4``), not wall time: the machine is shared and its load moves wall time
by tens of percent. One untimed warm-up each (page cache, ``.pyc``), then
``--rounds`` rounds; in each round the two run back to back, in alternating order,
and the ratio is taken within the round. Reported: min/median/max of the ratio
over rounds, the medians of the times, and the load average before and after.

Outputs are compared after the warm-up: every line of both parsed, ``text``,
``continuations`` and ``target`` equal record by record (a difference exits 1).

Workloads (``--workload``, repeatable; default all):

``mmlu``   MMLU-shaped records, ``mcq::mmlu``, 5-shot from ``dev``, ``{{question.strip()}}``
``arc``    ARC-shaped records (nested ``choices.text``/``choices.label``, 3-5 choices,
           ``answerKey``), ``cloze::qa``, 3-shot from ``train``, Jinja field specs
``gen``    a generation task (GSM8K-shaped question/answer, ``output_type: generate_until``,
           ``until``), ``passthrough``, 4-shot
``chat``   the MMLU workload with ``--meta chatml`` (few-shot examples as turns;
           the line holds the API messages too)
``shuffle`` the MMLU workload with ``--shuffle-choices 7`` (each record's choices in a seeded
           order, the line holding its ``permutation``); the script draws the same orders
           (the documented SHA-256 Fisher-Yates) and writes the permutation too
``qwen``   the MMLU workload with ``--meta qwen``: Qwen2.5's own chat template (a Hugging Face
           ``chat_template``, Jinja) rather than prompt-style's ChatML code; with a system
           turn it writes ChatML, so the script is the ``chat`` one
``llama3`` the same with ``--meta llama-3``: Llama 3's chat template, which trims each
           message's content (the script writes its text by hand)
``piqa``   PIQA-shaped records (``goal``, ``sol1``, ``sol2``, ``label``), lm-evaluation-harness's
           layout: ``passthrough``, ``Question: {{goal}}\\nAnswer:``, the choices a Jinja list
           ``{{[sol1, sol2]}}``, 2-shot
``boolq``  BoolQ-shaped records (a passage with non-ASCII text and braces, a question, ``label``),
           zero-shot, the choices a constant list ``["no", "yes"]``: short prompts, so the
           line's own cost (its fingerprint) weighs most
``hellaswag`` HellaSwag-shaped records, zero-shot: ``{{ctx_b|capitalize}}`` in the text, the
           choices a field ``{{endings}}`` with non-ASCII, the target ``{{label|int}}`` of a
           text label (compiled filters)
``loop``   MMLU-shaped records, zero-shot, the choices listed by a Jinja loop
           (``{% for c in choices %}{{ 'ABCD'[loop.index0] }}. {{ c }}``), constant letters
``squad``  SQuAD-shaped generation, zero-shot: ``{% if context %}Context: ...{% endif %}``,
           the target ``{{answers.text[0]}}``, ``until: ["\\n"]``
``wino``   Winogrande-shaped records, ``mcq::mmlu`` zero-shot: the text a field name, the
           choices ``{{[option1, option2]}}``, the target ``{{answer|int - 1}}``
``race``   RACE-shaped records: a passage of about 1,400 characters with non-ASCII
           punctuation, ``passthrough`` zero-shot, the target ``{{['A','B','C','D'].index(answer)}}``
           (long text: the line's JSON encoding weighs most)
``filters`` ``{{ question | replace('\\n', ' ') | trim }}`` and ``{{ choices | join(', ') }}`` in the text
``set``    a generation task whose text sets a variable (``{% set q = question.strip() %}``) and
           whose target is ``{{ answer.split('####')[-1].strip() }}``
``concat`` a generation task whose text is one ``~`` expression
``pro``    MMLU-Pro-shaped records: ten options listed by a Jinja loop, constant letters
``messages`` the MMLU workload for an API model (``--meta messages``): ``"text": null`` and the
           system message, ten few-shot messages and the question's in every line
``rolling`` WikiText-shaped pages (about 900 characters, paragraphs, `` @-@ ``), scored whole
           (``output_type: loglikelihood_rolling``, ``doc_to_target: page``)
``opencompass`` an OpenCompass dataset config (the bundled ``examples/opencompass`` task, as
           YAML: a system prompt, three fixed in-context examples, ``GenInferencer``);
           each line also holds ``mode`` and the prompt's ``dialogue`` (OpenCompass's
           ``PromptList``), which the script does not write
``subjects`` the MMLU workload with a description per record (``about {{ subject.replace('_', ' ') }}``:
           every subject in one file, as the bundled MMLU example) and the same five
           examples for every record; the script writes each record's description
``subjects_chat`` the same as ChatML (``--meta chatml``): each record's description is its
           system turn; the script builds the ChatML text by hand
``sampler`` the MMLU workload with lm-evaluation-harness's default few-shot sampler
           (``retriever: shared_random``: one ``random.Random(1234)`` for the task, five
           examples drawn per record from a pool of 100): every record its own examples
``random`` the same with ``retriever: random`` (each record's examples drawn from
           ``random.Random(f"1234:{index}")``)
``random_subject`` the same with a description per record (``about {{ subject.replace('_', ' ') }}``,
           as the bundled MMLU example; six subjects)
``random_chat`` the same as ChatML (``--meta chatml``): each record's examples as
           user/assistant turns; the script builds the ChatML text by hand
``random_one_turn`` the ``random_chat`` workload with the examples and the question in one user
           message (``--no-fewshot-as-multiturn``, lm-evaluation-harness's chat rules)
``random_llama3`` the same with ``--meta llama-3`` (Llama 3's own chat template, through
           ``hf``): the script writes its text by hand
``random_messages`` the same as API messages (``--meta messages``, no text); the script
           builds the message list and writes it with ``json.dumps``
``arc_lm_eval`` an lm-evaluation-harness task file (``dataset_path: json`` with local
           ``data_files``, ARC-shaped records, lm-eval's ARC ``doc_to_*`` Jinja), 5-shot with
           lm-eval's default sampler (no ``fewshot_config``: one ``random.Random(1234)``
           for the task, five of a 50-record train split drawn per record)
``process_docs`` lm-evaluation-harness's HellaSwag task file and ``utils.py`` as it ships them
           (``tests/lm_eval_tasks``; the split given with ``--data``), its
           ``process_docs: !function utils.process_docs`` (a
           ``dataset.map`` cleaning each record with regular expressions) and ``utils.py``,
           zero-shot, ``--trust-code``; the script calls the same ``utils.preprocess``
``winogrande`` lm-evaluation-harness's Winogrande task file as it ships (``tests/lm_eval_tasks``), its three
           ``!function preprocess_winogrande.*`` fields (multiple input: ``doc_to_text`` the
           index of the context, ``doc_to_choice`` the contexts), zero-shot,
           ``--trust-code``; the script calls the same functions (each line also holds
           the ``contexts``)
``sciq``   a task-template file (SciRIFF's format, the bundled ``examples/sciq`` task): the
           ``map_fields`` formatter, answer choices ``{{ [...] | sort | join(' ||| ') }}``, a
           loop over them, ``input ||| output``
``cot``    the MMLU workload with ``--style-option generation=cot``: the examples as the style
           shows them, then the answer instruction, a blank line and the question without
           ``Answer:``; the target the letter (``cli_jsonl_more.py`` holds this one and the next three)
``oc_meta`` the ``opencompass`` config under its meta template (``examples/opencompass/meta.yaml``,
           ChatML-like, with a reserved SYSTEM role); the script writes the text by hand
``oc_answer`` ``oc_meta`` with the round ending in the answer's item (``BOT: '{target}'``, masked in
           generation: C-Eval's shape, an ice template serving as the prompt)
``oc_chatml`` the same with ``--meta chatml`` (the line holds the messages too)
``gen_prefix`` lm-evaluation-harness's Llama 3 instruct MMLU task file shape: a generation task
           with ``gen_prefix: "The best answer is"`` (after each example and the question),
           5-shot, ``until: ["."]``
``gen_prefix_llama3`` the same with ``--meta llama-3`` (Llama 3's own template; the prefill
           left open after the question); the script writes its text by hand
``oc_string`` an OpenCompass config with string templates (most base-model configs): three
           examples where the ice token stands, then the question
``sciq_shots`` the ``sciq`` workload with ``--shots 3`` (the first three of the train split before
           every record's input)
``promptsource`` promptsource's super_glue/rte "GPT-3 style" template as ``convert promptsource``
           writes it (promptsource's semantics: every ``}}`` truncating to 2048 characters,
           ``{% if label != -1 %}{{ answer_choices[label] }}{% endif %}``), zero-shot
``oc_ppl`` OpenCompass's perplexity config (``examples/opencompass/task_ppl.yaml``: a label-keyed
           template, two fixed examples): one candidate per label, each with its text and
           dialogue in the line; the script writes each candidate's label and text

Run: ``uv run python bench/cli_jsonl_bench.py [--records N ...] [--rounds N] [--workload NAME ...]``
(default 200,000 records, 5 rounds).

``--memory [N ...]`` measures instead the peak resident memory (``ru_maxrss``) of
``render --format jsonl > /dev/null`` on the MMLU workload (``--memory-workload NAME``: another) at each size (default
100,000, 1M and 10M records; the file repeats 10,000 distinct records): flat means the
peak does not grow with the input.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_jsonl_more import MORE, rte_record  # (this folder is on the path: the script's own)
from cli_jsonl_records import (  # noqa: E402  (this folder is on the path: the script's own)
    arc_record,
    boolq_record,
    filters_record,
    gen_record,
    hellaswag_record,
    mmlu_record,
    oc_record,
    page_record,
    piqa_record,
    pro_record,
    race_record,
    sciq_record,
    set_record,
    squad_record,
    subject_record,
    wino_record,
    write,
)

ROOT = Path(__file__).resolve().parents[1]
N_RECORDS = 200_000
ROUNDS = 5
TARGET = 1.2
SEED = 20240519


# ---------------------------------------------------------------------------
# Workloads: a task file, its data, the CLI's options and the hand-written script
# ---------------------------------------------------------------------------

MMLU_TASK = """\
task: mmlu_anatomy
data:
  test: test.jsonl
  dev: dev.jsonl
fewshot_split: dev
description: "The following are multiple choice questions (with answers) about anatomy.\\n\\n"
doc_to_text: "{{question.strip()}}"
doc_to_choice: choices
doc_to_target: answer
template: mcq::mmlu
num_fewshot: 5
retriever: first_n
"""

MMLU_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
prefix = "The following are multiple choice questions (with answers) about anatomy.\\n\\n"
for s in shots:
    c = s["choices"]
    prefix += f"{s['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer: {'ABCD'[s['answer']]}\\n\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        c = doc["choices"]
        text = f"{prefix}{doc['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"
        o.write(json.dumps({"index": i, "text": text, "continuations": [" A", " B", " C", " D"], "target": doc["answer"]}) + "\\n")
"""
SHUFFLE_SCRIPT = """\
import hashlib, json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
prefix = "The following are multiple choice questions (with answers) about anatomy.\\n\\n"
for s in shots:
    c = s["choices"]
    prefix += f"{s['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer: {'ABCD'[s['answer']]}\\n\\n"
def order(i):  # prompt-style's documented shuffle:SEED (Fisher-Yates, SHA-256 of "SEED:INDEX:0")
    digest = hashlib.sha256(f"7:{i}:0".encode()).digest()
    p = [0, 1, 2, 3]
    for k, n in enumerate((3, 2, 1)):
        j = int.from_bytes(digest[8 * k : 8 * k + 8], "big") % (n + 1)
        p[n], p[j] = p[j], p[n]
    return p
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        p = order(i)
        c = [doc["choices"][k] for k in p]
        text = f"{prefix}{doc['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"
        o.write(json.dumps({"index": i, "text": text, "continuations": [" A", " B", " C", " D"], "target": p.index(doc["answer"]), "permutation": p}) + "\\n")
"""

ARC_TASK = """\
task: arc_like
data:
  test: test.jsonl
  train: train.jsonl
fewshot_split: train
doc_to_text: "{{question}}"
doc_to_choice: "{{choices.text}}"
doc_to_target: "{{choices.label.index(answerKey)}}"
template: cloze::qa
num_fewshot: 3
retriever: first_n
"""

ARC_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:3]
prefix = ""
for s in shots:
    gold = s["choices"]["text"][s["choices"]["label"].index(s["answerKey"])]
    prefix += f"Question: {s['question']}\\nAnswer: {gold}\\n\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        choices = doc["choices"]
        text = f"{prefix}Question: {doc['question']}\\nAnswer:"
        conts = [" " + t for t in choices["text"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": choices["label"].index(doc["answerKey"])}) + "\\n")
"""

GEN_TASK = """\
task: gsm_like
data:
  test: test.jsonl
  train: train.jsonl
fewshot_split: train
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
template: passthrough
until: ["Question:", "</s>", "<|im_end|>"]
num_fewshot: 4
retriever: first_n
"""

GEN_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:4]
prefix = ""
for s in shots:
    prefix += f"Question: {s['question']}\\nAnswer: {s['answer']}\\n\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"{prefix}Question: {doc['question']}\\nAnswer:"
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": doc["answer"]}) + "\\n")
"""

PIQA_TASK = """\
task: piqa_like
data:
  test: test.jsonl
  train: train.jsonl
fewshot_split: train
doc_to_text: "Question: {{goal}}\\nAnswer:"
doc_to_choice: "{{[sol1, sol2]}}"
doc_to_target: label
template: passthrough
num_fewshot: 2
retriever: first_n
"""

PIQA_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:2]
prefix = ""
for s in shots:
    prefix += f"Question: {s['goal']}\\nAnswer: {[s['sol1'], s['sol2']][s['label']]}\\n\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"{prefix}Question: {doc['goal']}\\nAnswer:"
        conts = [" " + doc["sol1"], " " + doc["sol2"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": doc["label"]}) + "\\n")
"""

BOOLQ_TASK = """\
task: boolq_like
data:
  test: test.jsonl
doc_to_text: "{{passage}}\\nQuestion: {{question}}?\\nAnswer:"
doc_to_choice: ["no", "yes"]
doc_to_target: label
template: passthrough
"""
BOOLQ_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"{doc['passage']}\\nQuestion: {doc['question']}?\\nAnswer:"
        o.write(json.dumps({"index": i, "text": text, "continuations": [" no", " yes"], "target": doc["label"]}) + "\\n")
"""
HELLASWAG_TASK = """\
task: hellaswag_like
data:
  test: test.jsonl
doc_to_text: "{{activity_label}}: {{ctx_a}} {{ctx_b|capitalize}}"
doc_to_choice: "{{endings}}"
doc_to_target: "{{label|int}}"
template: passthrough
"""
HELLASWAG_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"{doc['activity_label']}: {doc['ctx_a']} {doc['ctx_b'].capitalize()}"
        conts = [" " + e for e in doc["endings"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": int(doc["label"])}) + "\\n")
"""
LOOP_TASK = """\
task: loop_mcq
data:
  test: test.jsonl
  dev: dev.jsonl
doc_to_text: "{{question}}\\n{% for c in choices %}{{ 'ABCD'[loop.index0] }}. {{ c }}\\n{% endfor %}Answer:"
doc_to_choice: ["A", "B", "C", "D"]
doc_to_target: answer
template: passthrough
"""
LOOP_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        body = "".join(f"{'ABCD'[k]}. {c}\\n" for k, c in enumerate(doc["choices"]))
        text = f"{doc['question']}\\n{body}Answer:"
        conts = [" A", " B", " C", " D"]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": doc["answer"]}) + "\\n")
"""
SQUAD_TASK = """\
task: squad_like
data:
  test: test.jsonl
  dev: dev.jsonl
output_type: generate_until
doc_to_text: "{% if context %}Context: {{context}}\\n{% endif %}Question: {{question}}\\nAnswer:"
doc_to_target: "{{answers.text[0]}}"
template: passthrough
until: ["\\n"]
"""
SQUAD_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ctx = f"Context: {doc['context']}\\n" if doc["context"] else ""
        text = f"{ctx}Question: {doc['question']}\\nAnswer:"
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": doc["answers"]["text"][0]}) + "\\n")
"""
WINO_TASK = """\
task: wino_like
data:
  test: test.jsonl
  dev: dev.jsonl
doc_to_text: sentence
doc_to_choice: "{{[option1, option2]}}"
doc_to_target: "{{answer|int - 1}}"
template: mcq::mmlu
"""
WINO_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"{doc['sentence']}\\nA. {doc['option1']}\\nB. {doc['option2']}\\nAnswer:"
        target = int(doc["answer"]) - 1
        o.write(json.dumps({"index": i, "text": text, "continuations": [" A", " B"], "target": target}) + "\\n")
"""
RACE_TASK = """\
task: race_like
data:
  test: test.jsonl
doc_to_text: "Article: {{article}}\\n\\nQuestion: {{question}}\\nAnswer:"
doc_to_choice: "{{options}}"
doc_to_target: "{{['A','B','C','D'].index(answer)}}"
template: passthrough
"""
RACE_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"Article: {doc['article']}\\n\\nQuestion: {doc['question']}\\nAnswer:"
        conts = [" " + c for c in doc["options"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": "ABCD".index(doc["answer"])}) + "\\n")
"""
FILTERS_TASK = """\
task: filters_like
data:
  test: test.jsonl
doc_to_text: "{{ question | replace('\\\\n', ' ') | trim }}\\nOptions: {{ choices | join(', ') }}\\nAnswer:"
doc_to_choice: choices
doc_to_target: answer
template: passthrough
"""
FILTERS_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        question = doc["question"].replace("\\n", " ").strip()
        text = f"{question}\\nOptions: {', '.join(doc['choices'])}\\nAnswer:"
        conts = [" " + c for c in doc["choices"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": doc["answer"]}) + "\\n")
"""
SET_TASK = """\
task: set_like
data:
  test: test.jsonl
output_type: generate_until
doc_to_text: "{% set q = question.strip() %}Q: {{ q }}\\nA:"
doc_to_target: "{{ answer.split('####')[-1].strip() }}"
template: passthrough
until: ["Q:"]
"""
SET_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"Q: {doc['question'].strip()}\\nA:"
        target = doc["answer"].split("####")[-1].strip()
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": target}) + "\\n")
"""
CONCAT_TASK = """\
task: concat_like
data:
  test: test.jsonl
output_type: generate_until
doc_to_text: "{{ 'Q: ' ~ question|trim ~ '\\\\nA:' }}"
doc_to_target: answer
template: passthrough
until: ["Q:"]
"""
CONCAT_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = "Q: " + doc["question"].strip() + "\\nA:"
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": doc["answer"]}) + "\\n")
"""
PRO_TASK = """\
task: pro_like
data:
  test: test.jsonl
doc_to_text: "Question: {{question}}\\nOptions:\\n{% for c in options %}{{ 'ABCDEFGHIJ'[loop.index0] }}. {{ c }}\\n{% endfor %}Answer:"
doc_to_choice: ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"]
doc_to_target: answer_index
template: passthrough
"""
PRO_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
conts = [" " + x for x in "ABCDEFGHIJ"]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        body = "".join(f"{'ABCDEFGHIJ'[k]}. {c}\\n" for k, c in enumerate(doc["options"]))
        text = f"Question: {doc['question']}\\nOptions:\\n{body}Answer:"
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": doc["answer_index"]}) + "\\n")
"""
MESSAGES_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
prefix = [{"role": "system", "content": "The following are multiple choice questions (with answers) about anatomy.\\n\\n"}]
for s in shots:
    c = s["choices"]
    prefix.append({"role": "user", "content": f"{s['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"})
    prefix.append({"role": "assistant", "content": "ABCD"[s["answer"]]})
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        c = doc["choices"]
        q = f"{doc['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"
        messages = prefix + [{"role": "user", "content": q}]
        o.write(json.dumps({"index": i, "text": None, "messages": messages, "continuations": ["A", "B", "C", "D"], "target": doc["answer"]}) + "\\n")
"""
ROLLING_TASK = """\
task: wikitext_like
data:
  test: test.jsonl
output_type: loglikelihood_rolling
doc_to_target: page
template: passthrough
"""
ROLLING_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        page = json.loads(line)["page"]
        o.write(json.dumps({"index": i, "text": page, "continuations": [], "target": page}) + "\\n")
"""
OC_TASK = (ROOT / "examples/opencompass/task.yaml").read_text(encoding="utf-8")
OC_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
def question(d):
    return f"Question: {d['input']}\\nA. {d['A']}\\nB. {d['B']}\\nC. {d['C']}\\nD. {d['D']}\\nAnswer: "
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:3]
prefix = "There is a single choice question. Answer the question by replying A, B, C or D."
prefix += "".join(f"\\n{question(s)}\\n{s['target']}\\n" for s in shots) + "\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        o.write(json.dumps({"index": i, "text": prefix + question(doc), "continuations": [], "target": doc["target"]}) + "\\n")
"""
SCIQ_TASK = (ROOT / "examples/sciq/sciq_mcq.yaml").read_text(encoding="utf-8")
SCIQ_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        c = doc["choices"]
        options = "".join(f"\\n- {x}" for x in sorted([c["correct"], *c["distractors"][:3]], key=str.lower))
        text = (
            "Answer the following science question by choosing one of the options.\\n\\n"
            f"Question: {doc['question']}\\nOptions:{options}\\n\\nRespond with the option only."
        )
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": c["correct"]}) + "\\n")
"""
SAMPLER_TASK = MMLU_TASK.replace("retriever: first_n", "retriever: shared_random")
RANDOM_TASK = MMLU_TASK.replace("retriever: first_n", "retriever: random")
SAMPLER_SCRIPT = """\
import json, random, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    pool = [json.loads(line) for line in f]
def question(d):
    c = d["choices"]
    return f"{d['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"
shots = [question(s) + f" {'ABCD'[s['answer']]}\\n\\n" for s in pool]
description = "The following are multiple choice questions (with answers) about anatomy.\\n\\n"
n = len(pool)
rnd = random.Random(1234)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ids = DRAW
        text = description + "".join([shots[j] for j in ids]) + question(doc)
        o.write(json.dumps({"index": i, "text": text, "continuations": [" A", " B", " C", " D"], "target": doc["answer"]}) + "\\n")
"""
RANDOM_SCRIPT = SAMPLER_SCRIPT.replace("DRAW", 'random.Random(f"1234:{i}").sample(range(n), 5)')
SAMPLER_SCRIPT = SAMPLER_SCRIPT.replace("DRAW", "rnd.sample(range(n), 5)")
RANDOM_SUBJECT_TASK = RANDOM_TASK.replace("about anatomy.\\n\\n", "about {{ subject.replace('_', ' ') }}.\\n\\n")
RANDOM_SUBJECT_SCRIPT = RANDOM_SCRIPT.replace(
    "text = description + ",
    "text = description.replace('anatomy', doc['subject'].replace('_', ' ')) + ",
)
SUBJECTS_TASK = MMLU_TASK.replace("about anatomy.\\n\\n", "about {{ subject.replace('_', ' ') }}.\\n\\n")
SUBJECTS_SCRIPT = MMLU_SCRIPT.replace(
    'prefix = "The following are multiple choice questions (with answers) about anatomy.\\n\\n"', 'prefix = ""'
).replace(
    'text = f"{prefix}',
    "text = f\"The following are multiple choice questions (with answers) about {doc['subject'].replace('_', ' ')}.\\n\\n{prefix}",
)
RANDOM_MESSAGES_SCRIPT = """\
import json, random, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    pool = [json.loads(line) for line in f]
def question(d):
    c = d["choices"]
    return {"role": "user", "content": f"{d['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"}
shots = [[question(s), {"role": "assistant", "content": "ABCD"[s["answer"]]}] for s in pool]
system = {"role": "system", "content": "The following are multiple choice questions (with answers) about anatomy.\\n\\n"}
n = len(pool)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ids = random.Random(f"1234:{i}").sample(range(n), 5)
        messages = [system, *[m for j in ids for m in shots[j]], question(doc)]
        row = {"index": i, "text": None, "messages": messages, "continuations": ["A", "B", "C", "D"]}
        row["target"] = doc["answer"]
        o.write(json.dumps(row) + "\\n")
"""
RANDOM_CHAT_SCRIPT = """\
import json, random, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    pool = [json.loads(line) for line in f]
def question(d):
    c = d["choices"]
    return f"<|im_start|>user\\n{d['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:<|im_end|>\\n"
shots = [question(s) + f"<|im_start|>assistant\\n{'ABCD'[s['answer']]}<|im_end|>\\n" for s in pool]
system = "<|im_start|>system\\nThe following are multiple choice questions (with answers) about anatomy.\\n\\n<|im_end|>\\n"
n = len(pool)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ids = random.Random(f"1234:{i}").sample(range(n), 5)
        text = system + "".join([shots[j] for j in ids]) + question(doc) + "<|im_start|>assistant\\n"
        o.write(json.dumps({"index": i, "text": text, "continuations": ["A", "B", "C", "D"], "target": doc["answer"]}) + "\\n")
"""
RANDOM_LLAMA3_SCRIPT = """\
import json, random, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    pool = [json.loads(line) for line in f]
H = "<|start_header_id|>{}<|end_header_id|>\\n\\n"
def question(d):
    c = d["choices"]
    return H.format("user") + f"{d['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:<|eot_id|>"
shots = [question(s) + H.format("assistant") + "ABCD"[s["answer"]] + "<|eot_id|>" for s in pool]
system = "<|begin_of_text|>" + H.format("system") + "The following are multiple choice questions (with answers) about anatomy.<|eot_id|>"
n = len(pool)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ids = random.Random(f"1234:{i}").sample(range(n), 5)
        text = system + "".join([shots[j] for j in ids]) + question(doc) + H.format("assistant")
        o.write(json.dumps({"index": i, "text": text, "continuations": ["A", "B", "C", "D"], "target": doc["answer"]}) + "\\n")
"""
RANDOM_ONE_TURN_SCRIPT = """\
import json, random, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    pool = [json.loads(line) for line in f]
def question(d):
    c = d["choices"]
    return f"{d['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:"
shots = [question(s) + f" {'ABCD'[s['answer']]}\\n\\n" for s in pool]
system = "<|im_start|>system\\nThe following are multiple choice questions (with answers) about anatomy.\\n\\n<|im_end|>\\n"
n = len(pool)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ids = random.Random(f"1234:{i}").sample(range(n), 5)
        text = system + "<|im_start|>user\\n" + "".join([shots[j] for j in ids]) + question(doc) + "<|im_end|>\\n<|im_start|>assistant\\n"
        o.write(json.dumps({"index": i, "text": text, "continuations": ["A", "B", "C", "D"], "target": doc["answer"]}) + "\\n")
"""
ARC_LM_EVAL_TASK = """\
task: arc_like
dataset_path: json
dataset_kwargs:
  data_files:
    train: train.jsonl
    test: test.jsonl
output_type: multiple_choice
training_split: train
test_split: test
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{choices.label.index(answerKey)}}"
doc_to_choice: "{{choices.text}}"
num_fewshot: 5
should_decontaminate: true
doc_to_decontamination_query: "Question: {{question}}\\nAnswer:"
metric_list:
  - metric: acc
"""
ARC_LM_EVAL_SCRIPT = """\
import json, random, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    pool = [json.loads(line) for line in f]
def question(d):
    return f"Question: {d['question']}\\nAnswer:"
shots = [question(s) + " " + s["choices"]["text"][s["choices"]["label"].index(s["answerKey"])] + "\\n\\n" for s in pool]
rnd = random.Random(1234)
n = len(pool)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        choices = doc["choices"]
        text = "".join([shots[j] for j in rnd.sample(range(n), 5)]) + question(doc)
        conts = [" " + t for t in choices["text"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": choices["label"].index(doc["answerKey"])}) + "\\n")
"""
LM_EVAL_TASKS = ROOT / "tests" / "lm_eval_tasks"  # lm-evaluation-harness's task files, as it ships them
PROCESS_DOCS_TASK = (LM_EVAL_TASKS / "hellaswag" / "hellaswag.yaml").read_text(encoding="utf-8")
HELLASWAG_UTILS = (LM_EVAL_TASKS / "hellaswag" / "utils.py").read_text(encoding="utf-8")
PROCESS_DOCS_SCRIPT = """\
import json, sys, types
sys.modules.setdefault("datasets", types.SimpleNamespace(Dataset=object))  # (utils.py names its type)
from utils import preprocess
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        ctx = doc["ctx_a"] + " " + doc["ctx_b"].capitalize()
        text = preprocess(doc["activity_label"] + ": " + ctx)
        conts = [" " + preprocess(e) for e in doc["endings"]]
        o.write(json.dumps({"index": i, "text": text, "continuations": conts, "target": int(doc["label"])}) + "\\n")
"""
WINOGRANDE_TASK = (LM_EVAL_TASKS / "winogrande" / "default.yaml").read_text(encoding="utf-8")
WINOGRANDE_UTILS = (LM_EVAL_TASKS / "winogrande" / "preprocess_winogrande.py").read_text(encoding="utf-8")
WINOGRANDE_SCRIPT = """\
import json, sys
from preprocess_winogrande import doc_to_choice, doc_to_target, doc_to_text
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        gold = doc_to_text(doc)
        contexts = doc_to_choice(doc)
        conts = [" " + doc_to_target(doc)] * len(contexts)
        o.write(json.dumps({"index": i, "text": contexts[0], "continuations": conts, "target": gold, "contexts": contexts}) + "\\n")
"""
CHAT_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
prefix = "<|im_start|>system\\nThe following are multiple choice questions (with answers) about anatomy.\\n\\n<|im_end|>\\n"
for s in shots:
    c = s["choices"]
    prefix += (
        f"<|im_start|>user\\n{s['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:<|im_end|>\\n"
        f"<|im_start|>assistant\\n{'ABCD'[s['answer']]}<|im_end|>\\n"
    )
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        c = doc["choices"]
        text = f"{prefix}<|im_start|>user\\n{doc['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:<|im_end|>\\n<|im_start|>assistant\\n"
        o.write(json.dumps({"index": i, "text": text, "continuations": ["A", "B", "C", "D"], "target": doc["answer"]}) + "\\n")
"""
LLAMA3_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
H = "<|start_header_id|>{}<|end_header_id|>\\n\\n"
prefix = "<|begin_of_text|>" + H.format("system") + "The following are multiple choice questions (with answers) about anatomy.<|eot_id|>"
for s in shots:
    c = s["choices"]
    prefix += (
        H.format("user") + f"{s['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:<|eot_id|>"
        + H.format("assistant") + "ABCD"[s["answer"]] + "<|eot_id|>"
    )
prefix += H.format("user")
after = "<|eot_id|>" + H.format("assistant")
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        c = doc["choices"]
        text = f"{prefix}{doc['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\nAnswer:{after}"
        o.write(json.dumps({"index": i, "text": text, "continuations": ["A", "B", "C", "D"], "target": doc["answer"]}) + "\\n")
"""
SUBJECTS_CHAT_SCRIPT = CHAT_SCRIPT.replace(
    'prefix = "<|im_start|>system\\nThe following are multiple choice questions (with answers) about anatomy.\\n\\n<|im_end|>\\n"',
    'prefix = ""',
).replace(
    'text = f"{prefix}',
    "text = f\"<|im_start|>system\\nThe following are multiple choice questions (with answers) about {doc['subject'].replace('_', ' ')}.\\n\\n<|im_end|>\\n{prefix}",
)


@dataclass(frozen=True)
class Workload:
    name: str
    task: str
    script: str
    make: Any
    pool: str  # the few-shot split's file name (besides test.jsonl)
    pool_size: int
    cli_options: tuple[str, ...] = ()
    test: str = "test.jsonl"  # the evaluated split's file name (a task-template file's is under data/)
    files: tuple[tuple[str, str], ...] = ()  # more files next to the task file (task code)


WORKLOADS = {
    "mmlu": Workload("mmlu", MMLU_TASK, MMLU_SCRIPT, mmlu_record, "dev.jsonl", 5),
    "arc": Workload("arc", ARC_TASK, ARC_SCRIPT, arc_record, "train.jsonl", 20),
    "gen": Workload("gen", GEN_TASK, GEN_SCRIPT, gen_record, "train.jsonl", 20),
    "chat": Workload("chat", MMLU_TASK, CHAT_SCRIPT, mmlu_record, "dev.jsonl", 5, ("--meta", "chatml")),
    "shuffle": Workload("shuffle", MMLU_TASK, SHUFFLE_SCRIPT, mmlu_record, "dev.jsonl", 5, ("--shuffle-choices", "7")),
    "qwen": Workload("qwen", MMLU_TASK, CHAT_SCRIPT, mmlu_record, "dev.jsonl", 5, ("--meta", "qwen")),
    "llama3": Workload("llama3", MMLU_TASK, LLAMA3_SCRIPT, mmlu_record, "dev.jsonl", 5, ("--meta", "llama-3")),
    "piqa": Workload("piqa", PIQA_TASK, PIQA_SCRIPT, piqa_record, "train.jsonl", 10),
    "boolq": Workload("boolq", BOOLQ_TASK, BOOLQ_SCRIPT, boolq_record, "dev.jsonl", 3),
    "hellaswag": Workload("hellaswag", HELLASWAG_TASK, HELLASWAG_SCRIPT, hellaswag_record, "dev.jsonl", 3),
    "loop": Workload("loop", LOOP_TASK, LOOP_SCRIPT, mmlu_record, "dev.jsonl", 3),
    "squad": Workload("squad", SQUAD_TASK, SQUAD_SCRIPT, squad_record, "dev.jsonl", 3),
    "wino": Workload("wino", WINO_TASK, WINO_SCRIPT, wino_record, "dev.jsonl", 3),
    "race": Workload("race", RACE_TASK, RACE_SCRIPT, race_record, "dev.jsonl", 3),
    "filters": Workload("filters", FILTERS_TASK, FILTERS_SCRIPT, filters_record, "dev.jsonl", 3),
    "set": Workload("set", SET_TASK, SET_SCRIPT, set_record, "dev.jsonl", 3),
    "concat": Workload("concat", CONCAT_TASK, CONCAT_SCRIPT, set_record, "dev.jsonl", 3),
    "pro": Workload("pro", PRO_TASK, PRO_SCRIPT, pro_record, "dev.jsonl", 3),
    "messages": Workload("messages", MMLU_TASK, MESSAGES_SCRIPT, mmlu_record, "dev.jsonl", 5, ("--meta", "messages")),
    "rolling": Workload("rolling", ROLLING_TASK, ROLLING_SCRIPT, page_record, "dev.jsonl", 3),
    "opencompass": Workload("opencompass", OC_TASK, OC_SCRIPT, oc_record, "data/dev.jsonl", 3, test="data/test.jsonl"),
    "sampler": Workload("sampler", SAMPLER_TASK, SAMPLER_SCRIPT, mmlu_record, "dev.jsonl", 100),
    "random": Workload("random", RANDOM_TASK, RANDOM_SCRIPT, mmlu_record, "dev.jsonl", 100),
    "subjects": Workload("subjects", SUBJECTS_TASK, SUBJECTS_SCRIPT, subject_record, "dev.jsonl", 5),
    "subjects_chat": Workload(
        "subjects_chat", SUBJECTS_TASK, SUBJECTS_CHAT_SCRIPT, subject_record, "dev.jsonl", 5, ("--meta", "chatml")
    ),
    "random_subject": Workload(
        "random_subject", RANDOM_SUBJECT_TASK, RANDOM_SUBJECT_SCRIPT, subject_record, "dev.jsonl", 100
    ),
    "random_chat": Workload(
        "random_chat", RANDOM_TASK, RANDOM_CHAT_SCRIPT, mmlu_record, "dev.jsonl", 100, ("--meta", "chatml")
    ),
    "random_one_turn": Workload(
        "random_one_turn",
        RANDOM_TASK,
        RANDOM_ONE_TURN_SCRIPT,
        mmlu_record,
        "dev.jsonl",
        100,
        ("--meta", "chatml", "--no-fewshot-as-multiturn"),
    ),
    "random_llama3": Workload(
        "random_llama3", RANDOM_TASK, RANDOM_LLAMA3_SCRIPT, mmlu_record, "dev.jsonl", 100, ("--meta", "llama-3")
    ),
    "random_messages": Workload(
        "random_messages", RANDOM_TASK, RANDOM_MESSAGES_SCRIPT, mmlu_record, "dev.jsonl", 100, ("--meta", "messages")
    ),
    "arc_lm_eval": Workload("arc_lm_eval", ARC_LM_EVAL_TASK, ARC_LM_EVAL_SCRIPT, arc_record, "train.jsonl", 50),
    "process_docs": Workload(
        "process_docs",
        PROCESS_DOCS_TASK,
        PROCESS_DOCS_SCRIPT,
        hellaswag_record,
        "dev.jsonl",
        3,
        ("--trust-code", "--data", "validation=test.jsonl"),
        files=(("utils.py", HELLASWAG_UTILS),),
    ),
    "winogrande": Workload(
        "winogrande",
        WINOGRANDE_TASK,
        WINOGRANDE_SCRIPT,
        wino_record,
        "dev.jsonl",
        3,
        ("--trust-code", "--data", "validation=test.jsonl", "--data", "train=dev.jsonl"),
        files=(("preprocess_winogrande.py", WINOGRANDE_UTILS),),
    ),
    "sciq": Workload(
        "sciq",
        SCIQ_TASK,
        SCIQ_SCRIPT,
        sciq_record,
        "data/processed/sciq_mcq/train.jsonl",
        30,
        test="data/processed/sciq_mcq/test.jsonl",
    ),
}
_SCIQ_DATA = "data/processed/sciq_mcq/"
_RECORDS = {  # records, the few-shot split's file and size, the evaluated split's file, the task
    "mmlu": (mmlu_record, "dev.jsonl", 5, "test.jsonl", MMLU_TASK),
    "oc": (oc_record, "data/dev.jsonl", 3, "data/test.jsonl", OC_TASK),
    "rte": (rte_record, "train.jsonl", 3, "test.jsonl", None),
    "sciq": (sciq_record, _SCIQ_DATA + "train.jsonl", 30, _SCIQ_DATA + "test.jsonl", SCIQ_TASK),
}
for _name, (_records, _task, _script, _options, _files) in MORE.items():
    _make, _pool, _size, _test, _own = _RECORDS[_records]
    WORKLOADS[_name] = Workload(
        _name, _own if _task is None else _task, _script, _make, _pool, _size, _options, _test, _files
    )


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def console_script() -> Path:
    bindir = Path(sys.executable).parent
    for name in ("prompt-style", "prompt-style.exe"):
        if (bindir / name).exists():
            return bindir / name
    raise SystemExit(f"no prompt-style console script next to {sys.executable}: run `uv sync`")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PROMPT_STYLE_PLUGINS", "PROMPT_STYLE_DISABLE", "PROMPT_STYLE_PREFER", "PYTHONPROFILEIMPORTTIME"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cpu_run(cmd: list[str], stdout: Path | None, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Run ``cmd``; its (CPU seconds: user + system, wall seconds)."""
    out = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd)
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdout is not None:
            out.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.decode(errors='replace')[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def compare(ours: Path, theirs: Path) -> int:
    """Records compared; raises when text, continuations or target differ (or the
    messages, where the script writes them)."""
    n = 0
    with ours.open(encoding="utf-8") as a, theirs.open(encoding="utf-8") as b:
        for n, (la, lb) in enumerate(zip(a, b, strict=True), 1):
            x, y = json.loads(la), json.loads(lb)
            for key in ("text", "continuations", "target", *(("messages",) if "messages" in y else ())):
                if x[key] != y[key]:
                    raise AssertionError(f"record {n - 1}: {key} differs:\n  cli:    {x[key]!r}\n  script: {y[key]!r}")
            if "candidates" in y:  # (perplexity: each candidate's label and text)
                ours = [{"label": c["label"], "text": c["text"]} for c in x["candidates"]]
                if ours != y["candidates"]:
                    raise AssertionError(
                        f"record {n - 1}: candidates differ:\n  cli:    {ours!r}\n  script: {y['candidates']!r}"
                    )
    return n


def run_workload(w: Workload, n: int, rounds: int, root: Path) -> dict[str, Any]:
    folder = root / f"{w.name}-{n}"
    folder.mkdir()
    (folder / w.test).parent.mkdir(parents=True, exist_ok=True)
    test = write(folder / w.test, w.make, n, SEED)
    pool = write(folder / w.pool, w.make, w.pool_size, SEED + 1, start=3)
    (folder / "task.yaml").write_text(w.task, encoding="utf-8")
    (folder / "script.py").write_text(w.script, encoding="utf-8")
    for name, text in w.files:
        (folder / name).write_text(text, encoding="utf-8")
    env = _env()
    cli = [str(console_script()), "render", "task.yaml", "--format", "jsonl", *w.cli_options]
    script = [sys.executable, "script.py", str(test), str(pool), str(folder / "script.jsonl")]
    cli_out = folder / "cli.jsonl"
    # warm-up, then the outputs compared
    cpu_run(cli, cli_out, env, folder)
    cpu_run(script, None, env, folder)
    compared = compare(cli_out, folder / "script.jsonl")
    sizes = (cli_out.stat().st_size, (folder / "script.jsonl").stat().st_size)
    load_before = os.getloadavg()[0]
    cli_times, script_times, ratios, walls = [], [], [], []
    for r in range(rounds):
        runs = [("cli", cli, cli_out), ("script", script, None)]
        if r % 2:
            runs.reverse()
        this: dict[str, float] = {}
        for who, cmd, out in runs:
            this[who], wall = cpu_run(cmd, out, env, folder)
            walls.append(wall)
        cli_times.append(this["cli"])
        script_times.append(this["script"])
        ratios.append(this["cli"] / this["script"])
        print(
            f"    {w.name} {n:,} round {r + 1}/{rounds}: cli {this['cli']:.2f} s, script {this['script']:.2f} s "
            f"(CPU), ratio {ratios[-1]:.3f}x; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    shutil.rmtree(folder)
    return {
        "workload": w.name,
        "records": n,
        "compared": compared,
        "cli_bytes": sizes[0],
        "script_bytes": sizes[1],
        "cli_s": statistics.median(cli_times),
        "script_s": statistics.median(script_times),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "load": (load_before, os.getloadavg()[0]),
        "pass": statistics.median(ratios) <= TARGET,
    }


def write_repeated(path: Path, make: Any, n: int, seed: int, distinct: int = 10_000) -> Path:
    """``n`` records: ``distinct`` made ones, written again and again (a 10M-record file in
    seconds; the renderer's memory cannot tell)."""
    rng = random.Random(seed)
    block = "".join(json.dumps(make(i, rng), ensure_ascii=False) + "\n" for i in range(min(n, distinct))).encode()
    per_block = min(n, distinct)
    with path.open("wb") as handle:
        for _ in range(n // per_block):
            handle.write(block)
        rest = n % per_block
        if rest:
            handle.write(b"".join(block.splitlines(keepends=True)[:rest]))
    return path


def peak_memory(sizes: list[int], root: Path, workload: str = "mmlu") -> list[dict[str, Any]]:
    """Peak resident memory (``ru_maxrss``) of ``render --format jsonl`` over ``sizes``
    records, its output thrown away (``> /dev/null``); the file is made once, at the
    largest size, and cut for the smaller ones."""
    w = WORKLOADS[workload]
    folder = root / f"memory-{workload}"
    folder.mkdir()
    (folder / "task.yaml").write_text(w.task, encoding="utf-8")
    for name, text in w.files:  # (task code a workload's task file names)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / w.test).parent.mkdir(parents=True, exist_ok=True)
    (folder / w.pool).parent.mkdir(parents=True, exist_ok=True)
    write(folder / w.pool, w.make, w.pool_size, SEED + 1, start=3)
    env = _env()
    out = []
    for n in sizes:
        test = write_repeated(folder / w.test, w.make, n, SEED)
        cmd = [str(console_script()), "render", "task.yaml", "--format", "jsonl", *w.cli_options]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=folder)
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"render exited {status}: {err.decode(errors='replace')[-2000:]}")
        row = {
            "records": n,
            "file_bytes": test.stat().st_size,
            "peak_rss_mib": usage.ru_maxrss / 1024,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "wall_s": time.perf_counter() - start,
        }
        out.append(row)
        print(
            f"    {n:>11,} records ({row['file_bytes'] / 2**20:,.0f} MiB JSONL): peak RSS {row['peak_rss_mib']:.1f} MiB, "
            f"{row['cpu_s']:.1f} s CPU; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        test.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[N_RECORDS], help="records per run (default 200000)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"timed rounds (default {ROUNDS})")
    parser.add_argument("--workload", action="append", choices=tuple(WORKLOADS), help="default: all")
    parser.add_argument("--tmp", type=Path, default=None, help="folder for the files (default: a temporary one)")
    parser.add_argument(
        "--memory",
        type=int,
        nargs="*",
        metavar="N",
        help="instead: peak RSS of the CLI over N records each (default 100000 1000000 10000000)",
    )
    parser.add_argument(
        "--memory-workload",
        default="mmlu",
        choices=tuple(WORKLOADS),
        help="the workload --memory renders (default mmlu)",
    )
    args = parser.parse_args(argv)
    if args.memory is not None:
        sizes = args.memory or [100_000, 1_000_000, 10_000_000]
        print(
            f"== CLI --format jsonl > /dev/null, {args.memory_workload} workload, peak resident memory "
            f"(load {os.getloadavg()[0]:.1f})"
        )
        with tempfile.TemporaryDirectory(prefix="prompt-style-cli-mem-", dir=args.tmp) as tmp:
            rows = peak_memory(sizes, Path(tmp), args.memory_workload)
        low, high = rows[0]["peak_rss_mib"], rows[-1]["peak_rss_mib"]
        flat = high <= low * 1.1 + 2
        print(
            f"  peak {low:.1f} MiB at {rows[0]['records']:,} records, {high:.1f} MiB at {rows[-1]['records']:,}: "
            f"{'flat' if flat else 'GROWS'}"
        )
        return 0
    run(records=args.records, rounds=args.rounds, workloads=args.workload, tmp=args.tmp)
    return 0


def summary_line(res: dict[str, Any]) -> str:
    return (
        f"{res['workload']:<9} {res['records']:>9,} records: cli {res['cli_s']:.2f} s, script {res['script_s']:.2f} s "
        f"CPU, ratio {res['ratio_median']:.3f}x ({res['ratio_min']:.3f}-{res['ratio_max']:.3f}), "
        f"target <= {TARGET}x: {'PASS' if res['pass'] else 'FAIL'}; "
        f"outputs equal on {res['compared']:,} records; load {res['load'][0]:.1f} -> {res['load'][1]:.1f}; "
        f"{res['cli_bytes'] / 2**20:.0f} MiB vs {res['script_bytes'] / 2**20:.0f} MiB written"
    )


def run(
    *,
    records: list[int] | None = None,
    rounds: int = ROUNDS,
    workloads: list[str] | None = None,
    tmp: Path | None = None,
) -> dict[str, Any]:
    """Every workload at every size; the results, and whether every target is met."""
    names = workloads or list(WORKLOADS)
    print(
        f"== CLI --format jsonl against a hand-written script (Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}); CPU time, {rounds} rounds"
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="prompt-style-cli-bench-", dir=tmp) as folder:
        for n in records or [N_RECORDS]:
            for name in names:
                results.append(run_workload(WORKLOADS[name], n, max(1, rounds), Path(folder)))
    print("  summary (CPU time, ratio within each round: median (min-max)):")
    for res in results:
        print("    " + summary_line(res))
    return {"results": results, "pass": all(res["pass"] for res in results)}


if __name__ == "__main__":
    raise SystemExit(main())
