"""Cloze styles: the model is scored on the choice texts themselves.

``cloze`` is the cloze template of lm-evaluation-harness's template system (its
``TemplateFactory.create_cloze_with_options``, what ``template: cloze`` means
there): the question with a blank, then the labelled options on one line::

    {question} ______

    Options: A. {choice 0} B. {choice 1} ...

``cloze::pure`` is the same without the options (``create_pure_cloze``)::

    {question} ______

``cloze::qa`` is the cloze layout lm-evaluation-harness evaluates (ARC,
``mmlu_continuation``, ...)::

    Question: {question}
    Answer:

``cloze::options`` is ``cloze::qa`` with the labelled options listed::

    Question: {question}
    Options:
    A. {choice 0}
    B. {choice 1}
    Answer:

All four are scored on the continuations `` {choice 0}``, `` {choice 1}``, ...
"""

import os

from prompt_style import choice_axes, choice_style, hookimpl

CLOZE_QA = {
    "prefix": "Question: ",
    "question_choice_delimiter": "\n",
    "show_choices": False,
    "answer_format": "{choice}",
    "suffix": "Answer:",
}

CLOZE_OPTIONS = {
    **CLOZE_QA,
    "show_choices": True,
    "choices_header": "Options:\n",
    "choice_delimiter": "\n",
    "choice_format": "{label}. {choice}",
}

# The seed's ClozeTemplateConfig defaults (blank "______" at the end, choices_prefix
# "\nOptions: ") with create_cloze_with_options's inline option list; no suffix: the
# blank is where the answer goes.
CLOZE = {
    "prefix": "",
    "suffix": "",
    "question_choice_delimiter": "\n",
    "blank_marker": "______",
    "blank_position": "end",
    "show_choices": True,
    "choices_header": "\nOptions: ",
    "choice_format": "{label}. {choice}",
    "choice_delimiter": " ",
    "answer_format": "{choice}",
}

CLOZE_PURE = {**CLOZE, "show_choices": False}


@hookimpl
def format_prompt():
    return {
        "cloze": choice_style("cloze", **CLOZE),
        "cloze::pure": choice_style("cloze::pure", **CLOZE_PURE),
        "cloze::qa": choice_style("cloze::qa", **CLOZE_QA),
        "cloze::options": choice_style("cloze::options", **CLOZE_OPTIONS),
    }


@hookimpl
def declare_axes():
    # the format axes of the two that show labelled options (labels, separators, spacing, ...);
    # cloze::qa and cloze::pure show only the question, and vary with their task's other axes
    return {
        "cloze": choice_axes("cloze", **CLOZE),
        "cloze::options": choice_axes("cloze::options", **CLOZE_OPTIONS),
    }


@hookimpl
def task_examples():
    # ARC-shaped questions, 3-shot with cloze::qa: prompt-style render --example arc
    return {"arc": os.path.join(os.path.dirname(__file__), "example", "task.yaml")}
