"""A :class:`~prompt_style.ChoiceStyle`'s question text, compiled per number of choices.

:meth:`ChoiceStyle._question <prompt_style.ChoiceStyle>` formats every choice with
``str.format`` and joins the blocks, for every record. For a given number of
choices everything but the question and the choices is fixed: the labels, the
numbers, the delimiters, the header and the suffix. :func:`question_function`
renders those once and returns a function of ``(question, choices)`` that is one
f-string, giving exactly the text ``_question`` gives:

- a choice is formatted by the f-string as ``str.format`` formats it
  (``format(choice, spec)`` after the same ``!r``/``!s``/``!a`` conversion);
  ``{label}`` and ``{number}`` fields are formatted with ``str.format`` itself, once;
- literal text is passed to the f-string as values, never written into its source:
  the generated source holds only names, indices and conversion letters.

The fast path of the renderer (:mod:`prompt_style.fastpath`) uses it for records
whose question is a ``str`` and whose choices are a ``list``; anything else takes
the general path, which raises the usual errors.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable, Sequence
from typing import Any

from ..types import Sample
from .base import ChoiceStyle

__all__ = ["question_function", "MAX_CHOICES"]

MAX_CHOICES = 64
"""Records with more choices than this take the general path (each count compiles a function)."""

_CONVERSIONS = ("r", "s", "a")
_PARSE = string.Formatter().parse


def style_labels(style: ChoiceStyle, n: int) -> Sequence[str] | None:
    """The labels ``style`` gives a record with ``n`` choices (``_labels_for``), or
    ``None`` when such a record is an error (no choices, too few labels)."""
    from ..errors import StyleError

    try:
        return style._labels_for(Sample(0, {}, None, [None] * n))
    except StyleError:
        return None


def _field(value: Any, spec: str, conversion: str | None) -> str:
    """``str.format``'s rendering of one replacement field holding ``value``."""
    return ("{0" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}").format(value)


def question_function(
    style: ChoiceStyle, n: int, head: str = "", tail: str = ""
) -> Callable[[str, Sequence[Any]], str | None] | None:
    """``fn(question, choices)``: ``head``, then ``style``'s question text for a record
    with ``n`` choices (``question`` a ``str``), then ``tail``; ``None`` from ``fn``
    when the record needs the general path (an inline blank marker missing from the
    question).

    :returns: ``None`` when records with ``n`` choices are errors under this style, or
        when the choice format has nested fields in a format spec.
    """
    if not 0 < n <= MAX_CHOICES:
        return None
    labels = style_labels(style, n)
    if labels is None:
        return None
    # pieces: literal text (str), the question (None), or a choice slot (index, conversion, spec)
    pieces: list[Any] = [head + style.prefix, None]
    marker = style.blank_marker
    inline = None
    if marker:
        if style.blank_position == "end":
            pieces.append(" " + marker)
        else:
            inline = marker
    if style.show_choices:
        pieces.append(style.question_choice_delimiter + style.choices_header)
        parsed = list(_PARSE(style.choice_format))
        for i in range(n):
            if i:
                pieces.append(style.choice_delimiter)
            for literal, name, spec, conversion in parsed:
                pieces.append(literal)
                if name is None:
                    continue
                if "{" in spec or (conversion is not None and conversion not in _CONVERSIONS):
                    return None
                if name == "choice":
                    pieces.append((i, conversion, spec))
                elif name == "label":
                    pieces.append(_field(labels[i], spec, conversion))
                elif name == "number":
                    pieces.append(_field(i + 1, spec, conversion))
                else:  # ChoiceStyle refuses other fields when it is built
                    return None
    if style.suffix:
        pieces.append(style.question_choice_delimiter + style.suffix)
    pieces.append(tail)
    return _generate(pieces, inline)


def _generate(pieces: list[Any], inline: str | None) -> Callable[[str, Sequence[Any]], str | None]:
    values: list[Any] = []
    names: list[str] = []
    source: list[str] = []
    text = ""

    def flush() -> None:
        nonlocal text
        if text:
            names.append(f"L{len(names)}")
            values.append(text)
            source.append("{" + names[-1] + "}")
            text = ""

    for piece in pieces:
        if isinstance(piece, str):
            text += piece
            continue
        flush()
        if piece is None:
            source.append("{q}")
            continue
        index, conversion, spec = piece
        field = f"c[{int(index)}]"
        if conversion:
            field += "!" + conversion
        if spec:
            names.append(f"L{len(names)}")
            values.append(spec)
            field += ":{" + names[-1] + "}"
        source.append("{" + field + "}")
    flush()
    if inline is not None:
        names.append("M")
        values.append(inline)
        guard = "        if M not in q:\n            return None\n"
    else:
        guard = ""
    code = (
        f"def make({', '.join(names)}):\n"
        "    def question(q, c):\n"
        f"{guard}"
        f"        return f'{''.join(source)}'\n"
        "    return question\n"
    )
    return _maker(code)(*values)


@functools.lru_cache(maxsize=256)
def _maker(code: str) -> Callable[..., Any]:
    """The ``make`` function of generated ``code``, compiled once per process: tasks
    that share a layout (every MMLU subject) share it, with their own literal values."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<prompt_style.styles.compiled>", "exec"), namespace)  # names and indices only
    return namespace["make"]
