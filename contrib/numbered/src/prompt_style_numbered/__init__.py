"""``mcq::numbered``: choices numbered 1, 2, 3, ...; the answer is the number.

An example of a third-party style plugin: it uses prompt-style's public API
only, and is discovered through its ``prompt_style`` entry point.

    {question}
    1. {choice 0}
    2. {choice 1}
    ...
    Answer:

continuations `` 1``, `` 2``, ...
"""

import prompt_style

NUMBERED = {
    "choice_format": "{number}. {choice}",
    "answer_format": "{number}",
    "suffix": "Answer:",
}


@prompt_style.hookimpl
def format_prompt():
    return {"mcq::numbered": prompt_style.choice_style("mcq::numbered", **NUMBERED)}


@prompt_style.hookimpl
def declare_axes():
    # the format axes every ChoiceStyle preset has: its grid cells (prompt-style grid)
    return {"mcq::numbered": prompt_style.choice_axes("mcq::numbered", **NUMBERED)}


@prompt_style.hookimpl
def parse_answer():
    # how its generation variants' answers are read (prompt-style score): "ANSWER: 2", "(2)", ...
    return {"mcq::numbered": prompt_style.choice_answer_parser}
