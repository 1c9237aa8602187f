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
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import StyleError
from ..types import Sample

if TYPE_CHECKING:
    from .base import ChoiceStyle

__all__ = ["question_function", "layout", "Layout", "MAX_CHOICES", "MAX_FORMAT_WIDTH", "format_problem"]

MAX_CHOICES = 64
"""Records with more choices than this take the general path (each count compiles a function)."""

MAX_FORMAT_WIDTH = 10_000
"""The largest width or precision a style's ``choice_format``/``answer_format`` may
give a field (``{label:>3}``, ``{number:02d}``): a task file's ``{choice:>999999999}``
would build a gigabyte per choice, with no Jinja budget to stop it."""

_DIGITS = re.compile(r"\d+")

_CONVERSIONS = ("r", "s", "a")
_PARSE = string.Formatter().parse


def format_problem(fmt: str) -> str | None:
    """What is wrong with a style's format string (``choice_format``,
    ``answer_format``) beyond its field names, or ``None``: a field inside a format
    spec (``{choice:{choice.__class__}}`` reads attributes of the data and shows
    them), a conversion other than ``!r``, ``!s``, ``!a``, or a width or precision
    above :data:`MAX_FORMAT_WIDTH`."""
    try:
        parsed = list(_PARSE(fmt))
    except ValueError as exc:
        return str(exc)
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if conversion is not None and conversion not in _CONVERSIONS:
            return f"unknown conversion !{conversion} (use !r, !s or !a)"
        if spec and ("{" in spec or "}" in spec):
            return f"a field inside the format spec {spec!r} (format specs are literal: {{choice:>20}})"
        for digits in _DIGITS.findall(spec or ""):
            if int(digits) > MAX_FORMAT_WIDTH:
                return f"width or precision {int(digits):,} in {spec!r} is above {MAX_FORMAT_WIDTH:,}"
    return None


def style_labels(style: ChoiceStyle, n: int) -> Sequence[str] | None:
    """The labels ``style`` gives a record with ``n`` choices (``_labels_for``), or
    ``None`` when such a record is an error (no choices, too few labels)."""
    # asked several times per number of choices when a task's fast path is built (the
    # examples, the layout, the continuations): worked out once per style
    cache = _cache(style, "_labels_n")
    if n in cache:
        return cache[n]
    try:
        labels = style._labels_for(Sample(0, {}, None, [None] * n))
    except StyleError:
        labels = None
    cache[n] = labels
    return labels


def _cache(style: ChoiceStyle, name: str) -> dict[int, Any]:
    """The per-style dict ``name`` (a style is not changed once it renders)."""
    cache = style.__dict__.get(name)
    if cache is None:
        cache = style.__dict__[name] = {}
    return cache


def _field(value: Any, spec: str, conversion: str | None) -> str:
    """``str.format``'s rendering of one replacement field holding ``value``."""
    return ("{0" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}").format(value)


@dataclass(frozen=True)
class Layout:
    """A style's question text for one number of choices, as an f-string.

    ``source`` is the f-string's body (``{H}{q}{L2}{c[0]}...{T}``): ``q`` is the
    question, ``c`` the choices, and every other name is one of ``names``, whose
    ``values`` are the literal text, format specs and blank marker. ``H`` and ``T``
    (the first two names) are the text before and after everything else. With
    ``marker`` (``M``, an inline blank marker), a question without it is not
    rendered by the layout.
    """

    source: str
    names: tuple[str, ...]
    values: tuple[Any, ...]
    marker: bool

    def code(self) -> str:
        """``make(H, T, ...)`` returning ``question(q, c)`` (``None`` when the marker is missing)."""
        guard = "        if M not in q:\n            return None\n" if self.marker else ""
        return (
            f"def make({', '.join(self.names)}):\n"
            "    def question(q, c):\n"
            f"{guard}"
            f"        return f'{self.source}'\n"
            "    return question\n"
        )

    @functools.cached_property
    def maker(self) -> Callable[..., Callable[[str, Sequence[Any]], str | None]]:
        """``make`` of :meth:`code`, looked up once per layout (the tasks sharing it)."""
        return _maker(self.code())

    @functools.cached_property
    def question(self) -> Callable[[str, Sequence[Any]], str | None]:
        """``question(q, c)`` of this layout alone (no text around it): made once, shared
        by the styles that have this layout (every task of one format)."""
        return self.maker(*self.values)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("maker", None)  # generated functions: compiled again where they are needed
        state.pop("question", None)
        return state


def layout(style: ChoiceStyle, n: int, generation: bool = False) -> Layout | None:
    """``style``'s layout for records with ``n`` choices; ``None`` when such records
    are errors under the style, or the choice format has nested fields in a spec.

    With ``generation``, the layout of the record asked of the model under the style's
    ``generation`` variants (``question_and_answers``): the answer instruction, a blank
    line, then the question text without the suffix, for a record with one gold answer
    (the instruction for several is another text)."""
    if not 0 < n <= MAX_CHOICES:
        return None
    cache = _cache(style, "_generation_layouts" if generation else "_layouts")
    if n in cache:
        return cache[n]
    labels = style_labels(style, n)
    if labels is None:
        return None
    prefix, suffix = style.prefix, style.suffix
    if generation:
        try:  # (a gold of None: not several, the instruction of one gold answer)
            instruction = style._instruction(Sample(0, {}, None, [None] * n), labels)
        except Exception:  # the general path gives the error, for each such record
            cache[n] = None
            return None
        prefix, suffix = instruction + "\n\n" + prefix, ""
    key = (
        prefix,
        style.blank_marker,
        style.blank_position,
        style.show_choices,
        style.question_choice_delimiter,
        style.choices_header,
        style.choice_format,
        style.choice_delimiter,
        suffix,
    )
    made = cache[n] = _layout(key, tuple(labels[:n]))
    return made


def question_function(
    style: ChoiceStyle, n: int, head: str = "", tail: str = "", generation: bool = False
) -> Callable[[str, Sequence[Any]], str | None] | None:
    """``fn(question, choices)``: ``head``, then ``style``'s question text for a record
    with ``n`` choices (``question`` a ``str``), then ``tail``; ``None`` from ``fn``
    when the record needs the general path (an inline blank marker missing from the
    question). With ``generation``, the text the style's ``generation`` variants ask
    (see :func:`layout`).

    :returns: ``None`` when records with ``n`` choices are errors under this style, or
        when the choice format has nested fields in a format spec.
    """
    made = layout(style, n, generation)
    if made is None:
        return None
    if not head and not tail:
        return made.question  # the style's own text: one function for every style sharing the layout
    values = list(made.values)
    values[0] = head + values[0]  # the first and last names are always literal text
    values[1] = values[1] + tail
    return made.maker(*values)


@functools.lru_cache(maxsize=256)
def _layout(key: tuple[Any, ...], labels: tuple[str, ...]) -> Layout | None:
    """The layout of a style (``key``) with these labels: worked out once for all the
    tasks that share them."""
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


def _generate(pieces: list[Any], inline: str | None) -> Layout:
    """The f-string of ``pieces``: literal text becomes names (``H`` before the
    question, ``T`` after the last slot, ``L2``... between), choice slots ``{c[i]}``
    with their conversion and spec (a spec is a name too), the question ``{q}``."""
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
    return Layout("".join(source), tuple(names), tuple(values), inline is not None)


@functools.lru_cache(maxsize=256)
def _maker(code: str) -> Callable[..., Any]:
    """The ``make`` function of generated ``code``, compiled once per process: tasks
    that share a layout (every MMLU subject) share it, with their own literal values."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<prompt_style.styles.compiled>", "exec"), namespace)  # names and indices only
    return namespace["make"]
