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
    key = (
        style.prefix,
        style.blank_marker,
        style.blank_position,
        style.show_choices,
        style.question_choice_delimiter,
        style.choices_header,
        style.choice_format,
        style.choice_delimiter,
        style.suffix,
    )
    layout = _layout(key, tuple(labels[:n]))
    if layout is None:
        return None
    code, values = layout
    values = list(values)
    values[0] = head + values[0]  # the first and last names are always literal text
    values[1] = values[1] + tail
    return _maker(code)(*values)


@functools.lru_cache(maxsize=256)
def _layout(key: tuple[Any, ...], labels: tuple[str, ...]) -> tuple[str, tuple[Any, ...]] | None:
    """The generated code and its values for a style's layout (``key``) with these
    labels: worked out once for all the tasks that share them."""
    (prefix, marker, position, show_choices, qc_delimiter, header, choice_format, delimiter, suffix) = key
    # pieces: literal text (str), the question (None), or a choice slot (index, conversion, spec)
    pieces: list[Any] = [prefix, None]
    inline = None
    if marker:
        if position == "end":
            pieces.append(" " + marker)
        else:
            inline = marker
    if show_choices:
        pieces.append(qc_delimiter + header)
        parsed = list(_PARSE(choice_format))
        for i in range(len(labels)):
            if i:
                pieces.append(delimiter)
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
    if suffix:
        pieces.append(qc_delimiter + suffix)
    return _generate(pieces, inline)


def _generate(pieces: list[Any], inline: str | None) -> tuple[str, tuple[Any, ...]]:
    """Code of ``make(H, T, ...)`` returning ``question(q, c)``, and the values of its
    arguments: ``H`` and ``T`` are the literal text before and after everything else
    (the caller adds its head and tail to them), the others literal text between the
    question and choice slots, format specs and the inline blank marker."""
    values: list[Any] = ["", ""]
    names: list[str] = ["H", "T"]
    source: list[str] = ["{H}"]
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
        if piece is None and not source[1:]:
            values[0] = text  # the text before the question opens the string
            text = ""
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
    values[1] = text  # the text after the last slot closes it
    source.append("{T}")
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
    return code, tuple(values)


@functools.lru_cache(maxsize=256)
def _maker(code: str) -> Callable[..., Any]:
    """The ``make`` function of generated ``code``, compiled once per process: tasks
    that share a layout (every MMLU subject) share it, with their own literal values."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<prompt_style.styles.compiled>", "exec"), namespace)  # names and indices only
    return namespace["make"]
