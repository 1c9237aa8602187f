"""``mcq::mmlu``: the MMLU layout of lm-evaluation-harness.

    {question}
    A. {choice 0}
    B. {choice 1}
    ...
    Answer:

continuations `` A``, `` B``, ...
"""

from prompt_style import choice_style, hookimpl

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
