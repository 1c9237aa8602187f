"""More workloads of ``cli_jsonl_bench.py`` (the sixteenth session's): a choice style's
chain-of-thought variant, and OpenCompass dataset configs under a meta template, a
chat format and in perplexity mode. Each is ``(task, script, options, files)``; the
records are ``cli_jsonl_records``' (``mmlu_record``, ``oc_record``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

COT_INSTRUCTION = (
    "Answer the following multiple choice question. The last line of your response should be of the "
    "following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of A,B,C,D. "
    "Think step by step before answering."
)

# MMLU 5-shot with ``--style-option generation=cot``: the examples as the style shows
# them, then the instruction, a blank line and the question without "Answer:"; the
# target is the letter, no continuations
COT_SCRIPT = f"""\
import json, sys
test, dev, out = sys.argv[1:4]
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
prefix = "The following are multiple choice questions (with answers) about anatomy.\\n\\n"
for s in shots:
    c = s["choices"]
    prefix += f"{{s['question'].strip()}}\\nA. {{c[0]}}\\nB. {{c[1]}}\\nC. {{c[2]}}\\nD. {{c[3]}}\\nAnswer: {{'ABCD'[s['answer']]}}\\n\\n"
prefix += {COT_INSTRUCTION!r} + "\\n\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        c = doc["choices"]
        text = f"{{prefix}}{{doc['question'].strip()}}\\nA. {{c[0]}}\\nB. {{c[1]}}\\nC. {{c[2]}}\\nD. {{c[3]}}"
        o.write(json.dumps({{"index": i, "text": text, "continuations": [], "target": "ABCD"[doc["answer"]]}}) + "\\n")
"""

OC_TASK = (ROOT / "examples/opencompass/task.yaml").read_text(encoding="utf-8")
OC_META = (ROOT / "examples/opencompass/meta.yaml").read_text(encoding="utf-8")

# the OpenCompass config (system prompt, 3 examples as rounds) under a ChatML-like meta
# template (examples/opencompass/meta.yaml) or ChatML: the same text
OC_CHAT_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
def question(d):
    return f"Question: {d['input']}\\nA. {d['A']}\\nB. {d['B']}\\nC. {d['C']}\\nD. {d['D']}\\nAnswer: "
def turn(role, text):
    return f"<|im_start|>{role}\\n{text}<|im_end|>\\n"
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:3]
prefix = turn("system", "There is a single choice question. Answer the question by replying A, B, C or D.")
prefix += "".join(turn("user", question(s)) + turn("assistant", s["target"] + "\\n") for s in shots)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = prefix + turn("user", question(doc)) + "<|im_start|>assistant\\n"
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": doc["target"]}) + "\\n")
"""

# C-Eval's shape: the round ends with the answer's item (BOT '{target}', masked in
# generation), under the meta template file; the same text as oc_meta's
_QUESTION_ITEM = '          prompt: "Question: {input}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\nAnswer: "\n    ice_token'
OC_ANSWER_TASK = OC_TASK.replace(
    _QUESTION_ITEM,
    _QUESTION_ITEM.replace("\n    ice_token", '\n        - role: BOT\n          prompt: "{target}"\n    ice_token'),
)
assert OC_ANSWER_TASK != OC_TASK

OC_PPL_TASK = (ROOT / "examples/opencompass/task_ppl.yaml").read_text(encoding="utf-8")

# the perplexity config: one candidate per label, each the two examples, the question
# and the label; the script writes each candidate's label and text
OC_PPL_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
def question(d):
    return f"Question: {d['input']}\\nA. {d['A']}\\nB. {d['B']}\\nC. {d['C']}\\nD. {d['D']}\\nAnswer: "
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:2]
prefix = "".join(f"{question(s)}\\n{s['target']}\\n\\n\\n" for s in shots) + "\\n\\n"
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = prefix + question(doc) + "\\n"
        candidates = [{"label": label, "text": text + label} for label in "ABCD"]
        o.write(json.dumps({"index": i, "text": None, "continuations": [], "target": doc["target"], "candidates": candidates}) + "\\n")
"""

# an OpenCompass config with string templates (most base-model configs): the examples
# where the ice token stands, then the question
OC_STRING_TASK = """\
abbr: demo-mmlu-string
reader_cfg:
  input_columns: [input, A, B, C, D]
  output_column: target
  train_split: dev
infer_cfg:
  ice_template:
    type: PromptTemplate
    template: "Question: {input}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\nAnswer: {target}\\n"
  prompt_template:
    type: PromptTemplate
    template: "</E>Question: {input}\\nA. {A}\\nB. {B}\\nC. {C}\\nD. {D}\\nAnswer:"
    ice_token: "</E>"
  retriever:
    type: FixKRetriever
    fix_id_list: [0, 1, 2]
  inferencer:
    type: GenInferencer
data:
  dev: data/dev.jsonl
  test: data/test.jsonl
"""
OC_STRING_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
def question(d):
    return f"Question: {d['input']}\\nA. {d['A']}\\nB. {d['B']}\\nC. {d['C']}\\nD. {d['D']}\\nAnswer:"
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:3]
prefix = "".join(f"{question(s)} {s['target']}\\n\\n" for s in shots)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        o.write(json.dumps({"index": i, "text": prefix + question(doc), "continuations": [], "target": doc["target"]}) + "\\n")
"""

# lm-evaluation-harness's Llama 3 instruct MMLU (llama3/instruct/mmlu): a generation task
# with gen_prefix, 5-shot, the examples' answers after the prefix
GEN_PREFIX_TASK = """\
task: mmlu_llama_like
dataset_path: json
dataset_kwargs:
  data_files:
    test: test.jsonl
    dev: dev.jsonl
output_type: generate_until
test_split: test
fewshot_split: dev
fewshot_config:
  sampler: first_n
doc_to_text: "Given the following question and four candidate answers (A, B, C and D), choose the best answer.\\nQuestion: {{question.strip()}}\\nA. {{choices[0]}}\\nB. {{choices[1]}}\\nC. {{choices[2]}}\\nD. {{choices[3]}}\\nYour response should end with \\"The best answer is [the_answer_letter]\\" where the [the_answer_letter] is one of A, B, C or D."
gen_prefix: "The best answer is"
doc_to_target: "{{['A.','B.','C.','D.'][answer]}}"
num_fewshot: 5
generation_kwargs:
  do_sample: false
  until:
    - "."
  max_gen_toks: 10
metadata:
  version: 1.0
"""
GEN_PREFIX_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
def question(d):
    c = d["choices"]
    return (
        "Given the following question and four candidate answers (A, B, C and D), choose the best answer.\\n"
        f"Question: {d['question'].strip()}\\nA. {c[0]}\\nB. {c[1]}\\nC. {c[2]}\\nD. {c[3]}\\n"
        'Your response should end with "The best answer is [the_answer_letter]" where the '
        "[the_answer_letter] is one of A, B, C or D."
    )
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:5]
prefix = "".join(f"{question(s)} The best answer is {'ABCD'[s['answer']]}.\\n\\n" for s in shots)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = prefix + question(doc) + " The best answer is"
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": "ABCD"[doc["answer"]] + "."}) + "\\n")
"""

# the same with --meta llama-3 (Llama 3's own chat template, which trims each content):
# the examples as turns, the question, then the open prefill
GEN_PREFIX_LLAMA3_SCRIPT = GEN_PREFIX_SCRIPT.replace(
    """prefix = "".join(f"{question(s)} The best answer is {'ABCD'[s['answer']]}.\\n\\n" for s in shots)""",
    """def turn(role, text):
    return f"<|start_header_id|>{role}<|end_header_id|>\\n\\n{text.strip()}<|eot_id|>"
prefix = "<|begin_of_text|>" + "".join(
    turn("user", question(s)) + turn("assistant", f"The best answer is {'ABCD'[s['answer']]}.") for s in shots
)""",
).replace(
    'text = prefix + question(doc) + " The best answer is"',
    'text = prefix + turn("user", question(doc)) + "<|start_header_id|>assistant<|end_header_id|>\\n\\nThe best answer is"',
)

# promptsource's super_glue/rte "GPT-3 style" template, as `prompt-style convert promptsource`
# writes it (promptsource 0.2.3's semantics: every }} truncating to 2048 characters)
PROMPTSOURCE_TASK = """\
name: super_glue_rte
dataset: super_glue
subset: rte
metadata:
  contributor: promptsource
templates:
  0:
    jinja: |-
      {{premise}}
      Question: {{hypothesis}} True or False? ||| {% if label != -1 %}{{ answer_choices[label] }}{% endif %}
    answer_choices: True ||| False
    name: GPT-3 style
    metadata:
      original_task: true
      choices_in_prompt: true
      metrics:
      - Accuracy
      promptsource_id: 8fb1c6aa-20e9-438c-bece-c6af1c746449
      render_as: promptsource
"""
PROMPTSOURCE_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        text = f"{doc['premise']}\\nQuestion: {doc['hypothesis']} True or False?"
        target = ["True", "False"][doc["label"]] if doc["label"] != -1 else ""
        o.write(json.dumps({"index": i, "text": text, "continuations": [], "target": target}) + "\\n")
"""

# the SciQ task-template file with --shots 3 (the first three of the train split, every
# record's): each example's input, a space and its output, then a blank line
SCIQ_SHOTS_SCRIPT = """\
import json, sys
test, dev, out = sys.argv[1:4]
def text(doc):
    c = doc["choices"]
    options = "".join(f"\\n- {x}" for x in sorted([c["correct"], *c["distractors"][:3]], key=str.lower))
    return (
        "Answer the following science question by choosing one of the options.\\n\\n"
        f"Question: {doc['question']}\\nOptions:{options}\\n\\nRespond with the option only."
    )
with open(dev, encoding="utf-8") as f:
    shots = [json.loads(line) for line in f][:3]
prefix = "".join(f"{text(s)} {s['choices']['correct']}\\n\\n" for s in shots)
with open(test, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for i, line in enumerate(f):
        doc = json.loads(line)
        o.write(json.dumps({"index": i, "text": prefix + text(doc), "continuations": [], "target": doc["choices"]["correct"]}) + "\\n")
"""

MORE = {
    "cot": ("mmlu", None, COT_SCRIPT, ("--style-option", "generation=cot"), ()),
    "oc_meta": ("oc", OC_TASK, OC_CHAT_SCRIPT, ("--meta", "meta.yaml"), (("meta.yaml", OC_META),)),
    "oc_chatml": ("oc", OC_TASK, OC_CHAT_SCRIPT, ("--meta", "chatml"), ()),
    "oc_ppl": ("oc", OC_PPL_TASK, OC_PPL_SCRIPT, (), ()),
    "oc_answer": ("oc", OC_ANSWER_TASK, OC_CHAT_SCRIPT, ("--meta", "meta.yaml"), (("meta.yaml", OC_META),)),
    "oc_string": ("oc", OC_STRING_TASK, OC_STRING_SCRIPT, (), ()),
    "gen_prefix": ("mmlu", GEN_PREFIX_TASK, GEN_PREFIX_SCRIPT, (), ()),
    "gen_prefix_llama3": ("mmlu", GEN_PREFIX_TASK, GEN_PREFIX_LLAMA3_SCRIPT, ("--meta", "llama-3"), ()),
    "sciq_shots": ("sciq", None, SCIQ_SHOTS_SCRIPT, ("--shots", "3"), ()),
    "promptsource": ("rte", PROMPTSOURCE_TASK, PROMPTSOURCE_SCRIPT, ("--data", "test=test.jsonl"), ()),
}
"""name -> (records: ``mmlu``, ``oc``, ``rte`` or ``sciq``, task (None: the records' own workload's), script,
CLI options, files)."""


def rte_record(i: int, rng: Any) -> dict[str, Any]:
    """An RTE-shaped record: a premise (non-ASCII, braces, a trailing space now and then), a
    hypothesis, a label (0 or 1)."""
    a, b = rng.randrange(1000), rng.randrange(100)
    return {
        "premise": f"The company reported {a} new hires {{in}} quarter {i % 4 + 1} — Zürich office.{' ' if i % 5 == 0 else ''}",
        "hypothesis": f"The company hired {a + b} people ({i}).",
        "idx": i,
        "label": rng.randrange(2),
    }
