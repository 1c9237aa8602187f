"""Cloze styles: the model is scored on the choice texts themselves.

``cloze``::

    Question: {question}
    Answer:

continuations `` {choice 0}``, `` {choice 1}``, ...

``cloze::options`` lists the options first (labelled, but still scored on the texts)::

    Question: {question}
    Options:
    A. {choice 0}
    B. {choice 1}
    Answer:
"""

from prompt_style import choice_style, hookimpl

CLOZE = {
    "prefix": "Question: ",
    "question_choice_delimiter": "\n",
    "show_choices": False,
    "answer_format": "{choice}",
    "suffix": "Answer:",
}

CLOZE_OPTIONS = {
    **CLOZE,
    "show_choices": True,
    "choices_header": "Options:\n",
    "choice_delimiter": "\n",
    "choice_format": "{label}. {choice}",
}


@hookimpl
def format_prompt():
    return {
        "cloze": choice_style("cloze", **CLOZE),
        "cloze::options": choice_style("cloze::options", **CLOZE_OPTIONS),
    }
