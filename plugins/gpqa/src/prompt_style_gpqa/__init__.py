"""``mcq::gpqa``: the GPQA layout of lm-evaluation-harness.

    What is the correct answer to this question:{question}
    Choices:
    (A) {choice 0}
    (B) {choice 1}
    ...
    Answer:

continuations `` (A)``, `` (B)``, ...
"""

import os

from prompt_style import choice_answer_parser, choice_axes, choice_style, hookimpl

GPQA = {
    "prefix": "What is the correct answer to this question:",
    "question_choice_delimiter": "\n",
    "choices_header": "Choices:\n",
    "choice_delimiter": "\n",
    "choice_format": "({label}) {choice}",
    "answer_format": "({label})",
    "suffix": "Answer:",
}


@hookimpl
def format_prompt():
    return {"mcq::gpqa": choice_style("mcq::gpqa", **GPQA)}


@hookimpl
def declare_axes():
    # labels, wrapper, separator, spacing, casing, answer prefix, instruction, choice order
    return {"mcq::gpqa": choice_axes("mcq::gpqa", **GPQA)}


@hookimpl
def parse_answer():
    # its generation variants' answers: ANSWER: X, (B), **B**, B., the choice text, ...
    return {"mcq::gpqa": choice_answer_parser}


@hookimpl
def task_examples():
    # GPQA-shaped questions, zero-shot with mcq::gpqa: prompt-style render --example gpqa
    return {"gpqa": os.path.join(os.path.dirname(__file__), "example", "task.yaml")}
