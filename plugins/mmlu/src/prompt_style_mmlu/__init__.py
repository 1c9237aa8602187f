"""``mcq::mmlu``: the MMLU layout of lm-evaluation-harness.

    {question}
    A. {choice 0}
    B. {choice 1}
    ...
    Answer:

continuations `` A``, `` B``, ...
"""

import os

from prompt_style import choice_answer_parser, choice_axes, choice_style, hookimpl

MMLU = {
    "prefix": "",
    "question_choice_delimiter": "\n",
    "choices_header": "",
    "choice_delimiter": "\n",
    "choice_format": "{label}. {choice}",
    "answer_format": "{label}",
    "suffix": "Answer:",
}


@hookimpl
def format_prompt():
    return {"mcq::mmlu": choice_style("mcq::mmlu", **MMLU)}


@hookimpl
def declare_axes():
    # labels, wrapper, separator, spacing, casing, answer prefix, instruction, choice order
    return {"mcq::mmlu": choice_axes("mcq::mmlu", **MMLU)}


@hookimpl
def parse_answer():
    # its generation variants' answers: ANSWER: X, (B), **B**, B., the choice text, ...
    return {"mcq::mmlu": choice_answer_parser}


@hookimpl
def task_examples():
    # MMLU-shaped questions, 5-shot with mcq::mmlu: prompt-style render --example mmlu
    return {"mmlu": os.path.join(os.path.dirname(__file__), "example", "task.yaml")}
