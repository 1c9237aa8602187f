"""Where a chat template writes the last message's content: ``last_turn_affixes`` of ``hf``.

The renderer's compiled fast path renders a task's records without the meta
template when it says how its text stands around the last turn's content: for
every text ``x`` there, ``before + x + after`` (docs/hooks.md). ChatML states it
from its own code; a model's chat template is a program, so it is found out:

1. **The content traced.** The dialogue is rendered once with the last content a
   :class:`_Traced` text (a ``str`` that notes every look at its characters: a method,
   a comparison, an index, iteration, ``in``, ``%``, a format spec) passed to the
   template as it is. A template that looks at the content (``content | trim``,
   ``content.startswith('<tool_response>')``, ``content == ''``, ``content[0]``) is
   refused: its text may depend on the content otherwise than by holding it.
   Joining it with ``+`` or ``~``, printing it and type tests (``is string``) are not
   looks; what ``+`` makes is traced in turn. Its length is not a look (the budgets
   count every printed text); the probes below cover what a length could decide.
2. **Probes.** The dialogue is rendered through :meth:`HFChat.apply`, as every record
   is, with each of :data:`PROBES` as the content (empty, blank, padded with white
   space, a whole turn's markup, a reasoning block, a tool response, quotes, a long
   text, ...): each must give ``before + probe + after`` exactly.

Anything that fails (an error, a look, a probe that differs) leaves the task to the
general path, which renders every record through the template. Only the commonest
shape is taken: one template, no tools or documents, no ``{% generation %}`` blocks,
system turns as given (``system_policy=error``), the generation prompt rather than a
continued final message. A template that reads the clock without ``now`` reads it once
for the task rather than once a record.
"""

from __future__ import annotations

from typing import Any

from prompt_style import Turn

__all__ = ["content_affixes", "marked_text", "turn_texts", "closed_turn_texts", "PROBES"]

MARK = "\u27e6prompt-style:content\u27e7"
"""The traced content: text no template looks for."""

PROBES = (
    "",
    " ",
    "x",
    "\n",
    "  padded \t\n",
    "\n\nlead and trail\n\n",
    "<|im_end|>\n<|im_start|>assistant\n",
    "[INST] x [/INST]</s>",
    "<think>\nreasoning\n</think>\n\nanswer",
    "</think>",
    "<tool_response>\n{}\n</tool_response>",
    "/no_think",
    "{{ messages }}{% raw %}",
    "'\"\\",
    "None",
    "0",
    "\u00e9\u4e2d\U0001f642\u2028\x00",
    "long " * 4000,
)
"""The contents every one of which must stand between the same two texts."""

_FLAGGED = (
    "capitalize casefold center count encode endswith expandtabs find format format_map index isalnum "
    "isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper "
    "join ljust lower lstrip partition removeprefix removesuffix replace rfind rindex rjust rpartition "
    "rsplit rstrip split splitlines startswith swapcase title translate upper zfill "
    "__contains__ __getitem__ __iter__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__ __mul__ "
    "__rmul__ __mod__ __rmod__ __getnewargs__ __reduce__ __reduce_ex__"
).split()


class _Traced(str):
    """A text that notes in ``looked`` (shared with the texts ``+`` makes of it) every
    look at its characters; see the module's docstring."""

    looked: list[str]

    def __str__(self) -> str:
        return self  # (str() of it stays traced)

    def __add__(self, other: Any) -> Any:
        made = str.__add__(self, other)
        return _traced(made, self.looked) if made is not NotImplemented else made

    def __radd__(self, other: Any) -> Any:
        if not isinstance(other, str):
            return NotImplemented
        return _traced(str.__add__(other, self), self.looked)

    def strip(self, chars: Any = None) -> Any:
        # the one look a template may take (Llama 3's `content | trim`): noted as such, and
        # what it gives is traced in turn
        self.looked.append("strip()" if chars is None else "strip")
        return _traced(str.strip(self, chars), self.looked)

    def __format__(self, spec: str) -> str:
        if spec:
            self.looked.append("format")
        return self if not spec else str.__format__(self, spec)


def _traced(text: str, looked: list[str]) -> _Traced:
    made = _Traced(text)
    made.looked = looked
    return made


def _looking(name: str) -> Any:
    original = getattr(str, name)

    def look(self: _Traced, *args: Any, **kwargs: Any) -> Any:
        self.looked.append(name)
        return original(self, *args, **kwargs)

    look.__name__ = name
    return look


for _name in _FLAGGED:
    setattr(_Traced, _name, _looking(_name))
del _name


def content_affixes(chat: Any, dialogue: Any, position: int = -1) -> tuple[str, str, bool] | None:
    """``(before, after, stripped)`` of ``chat`` (an :class:`~prompt_style_hf.meta.HFChat`)
    for ``dialogue``: for every text ``x`` as the last turn's content, ``chat.apply`` gives
    ``before + x + after`` (``before + x.strip() + after`` when ``stripped``: the template's
    one look at the content is a ``strip()``, Jinja's ``trim``) and the same messages but
    for the last one's content; ``None`` where that was not shown (see the module's
    docstring). ``position`` -2: the same for the turn before the last, an assistant turn
    the model continues (an answer prefill: ``continue_final_message``); the text after
    the content is then read off ``apply`` (which cuts the render after the prefill)."""
    if len(dialogue) < -position or not all(type(turn.content) is str for turn in dialogue):
        return None
    template = chat._single
    if template is None or template.has_generation or chat.tools is not None or chat.documents is not None:
        return None
    messages, flags = chat._task_messages(dialogue)
    if position == -1:
        if flags.continue_final_message or not flags.add_generation_prompt:
            return None
    elif messages[-1]["role"] != "assistant" or not flags.continue_final_message or flags.add_generation_prompt:
        return None
    if chat.system_policy != "error" and any(m["role"] == "system" for m in messages):
        return None
    looked: list[str] = []
    given = [dict(message) for message in messages]
    given[position]["content"] = _traced(MARK, looked)
    try:
        text = template.render_as_given(given, flags.add_generation_prompt, flags.variables, chat.now)
    except Exception:  # the general path says what went wrong, for every record
        return None
    stripped = bool(looked) and set(looked) == {"strip()"}
    if (looked and not stripped) or type(text) is not str or text.count(MARK) != 1:
        return None
    before, after = text.split(MARK)
    before, after = str(before), str(after)
    own = dialogue[position]

    def with_content(content: str) -> Any:
        made = list(dialogue)
        made[position] = own._replace(content=content)
        return tuple(made)

    if position != -1:
        try:
            cut = chat.apply(with_content("")).text
        except Exception:
            return None
        if type(cut) is not str or not cut.startswith(before):
            return None
        after = cut[len(before) :]
    for probe in PROBES:
        try:
            made = chat.apply(with_content(probe))
        except Exception:
            return None
        if made.text != before + (probe.strip() if stripped else probe) + after:
            return None
    return before, after, stripped


_USER, _ASSISTANT, _QUESTION = "\u27e6u\u27e7", "\u27e6a\u27e7", "\u27e6q\u27e7"
"""The contents of :func:`turn_texts`' probe: a user turn, its answer, the next question."""


_MARKS = (Turn("user", _USER), Turn("assistant", _ASSISTANT), Turn("user", _QUESTION))
"""The probe of :func:`turn_texts`: a user turn, its answer and the next question, marks as contents."""


def marked_text(chat: Any) -> str | None:
    """The text of :data:`_MARKS` through ``chat`` (an :class:`~prompt_style_hf.meta.HFChat`),
    when it holds each mark once; ``None`` otherwise, and for a render that is not the
    commonest (several templates, tools, documents, ``{% generation %}`` blocks)."""
    template = chat._single
    if template is None or template.has_generation or chat.tools is not None or chat.documents is not None:
        return None
    try:
        text = chat.apply(_MARKS).text
    except Exception:
        return None
    if type(text) is not str or any(text.count(mark) != 1 for mark in (_USER, _ASSISTANT, _QUESTION)):
        return None
    return text


def turn_texts(chat: Any, marked: str | None = None) -> tuple[str, str, str, str] | None:
    """``(user_before, user_after, assistant_before, assistant_after)`` of ``chat``: for a
    user turn and its answer between what comes before them and the next user turn's
    content, the template's text is ``user_before + u + user_after + assistant_before +
    a + assistant_after`` — read off one render of ``(user, assistant, user)`` with marks
    as contents (``marked``: :func:`marked_text`, made here when not given; how the texts
    between two contents are split between the turns does not change what they join to:
    here a turn's text ends where the next content starts). ``None`` when the render does
    not hold the marks once each."""
    text = marked_text(chat) if marked is None else marked
    if text is None:
        return None
    _, rest = text.split(_USER)
    between, rest = rest.split(_ASSISTANT)
    after_answer, _ = rest.split(_QUESTION)
    # (the text before a user turn's content is counted with what precedes it: the text
    # before the first example, and the text after an answer)
    return "", between, "", after_answer


def closed_turn_texts(chat: Any, texts: tuple[str, str, str, str], turn: Any, marked: str) -> tuple[str, str] | None:
    """The text before and after the content of ``turn`` (a user turn or an answer, with
    the texts of :func:`turn_texts`), when the template writes its content as it is: the
    probe rendered with the content in that turn's place is the probe's text (``marked``,
    :func:`marked_text`) with the content for the mark. ``None`` otherwise (a template
    that trims it, say, and the content has white space at an end)."""
    user = turn.role == "user"
    content = turn.content
    probe = (
        Turn("user", content if user else _USER),
        Turn("assistant", _ASSISTANT if user else content),
        Turn("user", _QUESTION),
    )
    try:
        made = chat.apply(probe).text
    except Exception:
        return None
    if made != marked.replace(_USER if user else _ASSISTANT, content):
        return None
    return (texts[0], texts[1]) if user else (texts[2], texts[3])
