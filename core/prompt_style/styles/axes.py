"""The format axes of a :class:`~prompt_style.ChoiceStyle` (what ``declare_axes`` gives
for ``mcq``, ``mcq::mmlu``, ``mcq::gpqa`` and any preset made with
:func:`~prompt_style.choice_style`).

A choice line is read as ``{open}{label}{close}{separator}{choice}`` (``A. x``:
no wrapper, separator ``". "``; ``(A) x``: wrapper ``(A)``, separator ``" "``);
the axes vary each part, the blocks around it and their descriptors:

========================  ============================================  ===================================
axis                      values                                        option(s) it sets
========================  ============================================  ===================================
``labels``                ``A`` ``a`` ``1`` ``i`` ``I``                 ``choice_labels`` (enumerator)
``wrapper``               ``A`` ``(A)`` ``[A]``                         ``choice_format`` (and a wrapped
                                                                        ``answer_format``, as GPQA's ``(A)``)
``separator``             ``". "`` ``") "`` ``": "`` ``" "`` ``" - "``  ``choice_format``
``spacing``               ``"\\n"`` ``"\\n\\n"`` ``" "``                 ``question_choice_delimiter``
``choice_spacing``        ``"\\n"`` ``" "`` ``"; "`` ``" | "``           ``choice_delimiter``
``casing``                ``default`` ``lower`` ``upper`` ``title``     descriptors: ``prefix``,
                                                                        ``choices_header``, ``suffix``
``answer_prefix``         ``Answer:`` ``A:`` ``Correct answer:`` ...    ``suffix``
``instruction``           ``default`` ``none`` ``question`` ``choose``  ``prefix``
``choice_order``          ``original`` ``reversed`` ``shuffle:0``       the order of the choices (the
                                                                        core permutes them; gold follows)
========================  ============================================  ===================================

Separators, spacings, answer prefixes and instructions also take any text of
your own; ``choice_order`` any ``shuffle:SEED``, ``rotate:K`` or ``correct:K``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from ..axes import Axis, Constraint, StyleAxes
from ..errors import OptionError

__all__ = ["choice_axes", "mcq_axes", "LABEL_SETS", "roman", "parse_choice_order", "CHOICE_ORDERS"]

MAX_LABELS = 64


def roman(number: int) -> str:
    """``number`` (1-3999) in upper-case Roman numerals."""
    out = []
    for value, numeral in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        while number >= value:
            out.append(numeral)
            number -= value
    return "".join(out)


LABEL_SETS: Mapping[str, tuple[str, ...]] = {
    "A": tuple(string.ascii_uppercase),
    "a": tuple(string.ascii_lowercase),
    "1": tuple(str(i) for i in range(1, MAX_LABELS + 1)),
    "i": tuple(roman(i).lower() for i in range(1, MAX_LABELS + 1)),
    "I": tuple(roman(i) for i in range(1, MAX_LABELS + 1)),
}
"""The enumerators of the ``labels`` axis: letters, lower-case letters, numbers, Roman numerals."""

WRAPPERS: Mapping[str, tuple[str, str]] = {"A": ("", ""), "(A)": ("(", ")"), "[A]": ("[", "]")}
SEPARATORS = (". ", ") ", ": ", " ", " - ")
SPACINGS = ("\n", "\n\n", " ")
CHOICE_SPACINGS = ("\n", " ", "; ", " | ")
CASINGS: Mapping[str, Callable[[str], str] | None] = {
    "default": None,
    "lower": str.lower,
    "upper": str.upper,
    "title": str.title,
}
ANSWER_PREFIXES = ("Answer:", "A:", "Correct answer:", "The answer is")
INSTRUCTIONS: Mapping[str, str] = {
    "none": "",
    "question": "Question: ",
    "choose": "Choose the correct answer to the following question.\n",
}
CHOICE_ORDERS = ("original", "reversed", "shuffle:0")

_CHOICE_LINE = re.compile(r"(?P<open>[(\[<]?)\{(?P<field>label|number)\}(?P<rest>[^{}]*)\{choice\}", re.S)
_CLOSING = {"(": ")", "[": "]", "<": ">", "": ""}
_ORDER = re.compile(r"(?:original|reversed|(?:shuffle|rotate|correct):-?\d+)")


def parse_choice_order(text: str) -> str:
    """A ``choice_order`` value: ``original``, ``reversed``, ``shuffle:SEED``,
    ``rotate:K`` or ``correct:K`` (the gold choice at position ``K``, 0-based).

    :raises OptionError: for anything else.
    """
    if _ORDER.fullmatch(text) is None:
        raise OptionError(
            f"{text!r} is not a choice order",
            key="axis.choice_order",
            hint="use original, reversed, shuffle:SEED, rotate:K or correct:K",
        )
    return text


def _text(axis: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        return text

    parse.__qualname__ = f"text value of {axis}"
    return parse


def _split_choice_format(fmt: str) -> tuple[str, str, str, str] | None:
    """``(open, field, close, separator)`` of a choice format ``{open}{label}{close}{sep}{choice}``;
    ``None`` when the format is not of that shape (the wrapper and separator axes then do not apply)."""
    match = _CHOICE_LINE.fullmatch(fmt)
    if match is None:
        return None
    opening, rest = match["open"], match["rest"]
    closing = _CLOSING[opening]
    if closing:
        if not rest.startswith(closing):
            return None
        rest = rest[len(closing) :]
    return opening, match["field"], closing, rest


def choice_axes(name: str, **preset: Any) -> Callable[..., StyleAxes]:
    """A ``declare_axes`` factory for a :class:`~prompt_style.ChoiceStyle` preset.

    Give it the same preset as :func:`~prompt_style.choice_style`::

        @hookimpl
        def declare_axes():
            return {"mcq::mine": choice_axes("mcq::mine", **MINE)}

    The factory is called with the task's ``template`` options (``options=``);
    the default of every axis is what the preset and those options give, so the
    cell with every axis at its default renders exactly as the task does.
    """

    def factory(*, options: Mapping[str, Any]) -> StyleAxes:
        from .base import ChoiceStyle, _canonical_options

        base = {**preset, **_canonical_options(dict(options), name)}
        defaults = {f: getattr(ChoiceStyle, f) for f in ChoiceStyle.__dataclass_fields__ if hasattr(ChoiceStyle, f)}
        merged = {**defaults, **base}
        return _choice_axes(merged)

    factory.__doc__ = f"The format axes of style {name!r} (a ChoiceStyle preset)."
    return factory


def _choice_axes(base: Mapping[str, Any]) -> StyleAxes:
    prefix = base.get("prefix") or ""
    suffix = base.get("suffix") or ""
    header = base.get("choices_header") or ""
    labels = base.get("choice_labels")
    split = _split_choice_format(base.get("choice_format", "{label}. {choice}"))
    answer_format = base.get("answer_format", "{label}")

    axes: list[Axis] = []
    constraints: list[Constraint] = []
    if labels is None:
        default_labels = "1" if split is not None and split[1] == "number" else "A"
    else:
        found = [key for key, value in LABEL_SETS.items() if list(value[: len(labels)]) == list(labels)]
        default_labels = found[0] if found else "custom"
    axes.append(Axis("labels", tuple(LABEL_SETS), default_labels, "the enumerator of the choices"))

    if split is not None:
        opening, _, closing, separator = split
        wrapper = next((key for key, value in WRAPPERS.items() if value == (opening, closing)), None)
        if wrapper is not None:
            axes.append(Axis("wrapper", tuple(WRAPPERS), wrapper, "the brackets around a choice's label"))
            axes.append(
                Axis(
                    "separator",
                    SEPARATORS,
                    separator,
                    "the text between a choice's label and its text",
                    _text("separator"),
                )
            )
            constraints.append(
                Constraint(
                    ("wrapper", "separator"),
                    lambda w, s: w == "A" or s[:1] not in (".", ")", "]"),
                    "a bracketed label takes a separator without a closing mark of its own: '(A) x', not '(A)) x'",
                )
            )
    axes.append(
        Axis(
            "spacing",
            SPACINGS,
            base.get("question_choice_delimiter", "\n"),
            "the text between the question, the choices and the answer prefix",
            _text("spacing"),
        )
    )
    axes.append(
        Axis(
            "choice_spacing",
            CHOICE_SPACINGS,
            base.get("choice_delimiter", "\n"),
            "the text between two choices",
            _text("choice_spacing"),
        )
    )
    constraints.append(
        Constraint(
            ("choice_spacing", "spacing"),
            lambda cs, sp: "\n" not in cs or "\n" in sp,
            "choices on lines of their own need a newline before them",
        )
    )
    if split is not None and any(axis.name == "separator" for axis in axes):
        constraints.append(
            Constraint(
                ("separator", "choice_spacing"),
                lambda s, cs: "\n" not in s or "\n" in cs,
                "a newline between a label and its choice needs newlines between the choices",
            )
        )
    axes.append(Axis("casing", tuple(CASINGS), "default", "the casing of the descriptors (prefix, header, suffix)"))
    prefixes = ANSWER_PREFIXES if suffix in ANSWER_PREFIXES else (suffix, *ANSWER_PREFIXES)
    axes.append(Axis("answer_prefix", prefixes, suffix, "the text before the answer", _text("answer_prefix")))
    instructions = {"default": prefix, **{k: v for k, v in INSTRUCTIONS.items() if v != prefix}}
    axes.append(
        Axis("instruction", tuple(instructions), "default", "the text before the question", _text("instruction"))
    )
    axes.append(Axis("choice_order", CHOICE_ORDERS, "original", "the order of the choices", parse_choice_order))

    def options(settings: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        enumerator = settings["labels"]
        if enumerator != "custom":
            out["choice_labels"] = None if enumerator == "A" else list(LABEL_SETS[enumerator])
        if split is not None and "wrapper" in settings:
            opening, natural, closing, _ = split
            field = "number" if natural == "number" and enumerator == "1" else "label"
            wrap_open, wrap_close = WRAPPERS[settings["wrapper"]]
            out["choice_format"] = f"{wrap_open}{{{field}}}{wrap_close}{settings['separator']}{{choice}}"
            if answer_format == f"{opening}{{{natural}}}{closing}" and opening:
                out["answer_format"] = f"{wrap_open}{{{field}}}{wrap_close}"  # the answer shows the wrapper (GPQA)
            elif answer_format in ("{label}", "{number}"):
                out["answer_format"] = f"{{{field}}}"
        elif enumerator != "custom" and split is not None and split[1] == "number" and enumerator != "1":
            out["choice_format"] = base["choice_format"].replace("{number}", "{label}")
        out["question_choice_delimiter"] = settings["spacing"]
        out["choice_delimiter"] = settings["choice_spacing"]
        chosen_prefix = settings["instruction"]
        chosen_prefix = instructions.get(chosen_prefix, chosen_prefix)
        case = CASINGS.get(settings["casing"])
        answer = settings["answer_prefix"]
        if case is not None:
            chosen_prefix, answer = case(chosen_prefix), case(answer)
            out["choices_header"] = case(header)
        out["prefix"] = chosen_prefix
        out["suffix"] = answer
        return out

    return StyleAxes(tuple(axes), options, tuple(constraints))


def mcq_axes(*, options: Mapping[str, Any]) -> StyleAxes:
    """The format axes of the built-in style ``mcq``."""
    return choice_axes("mcq")(options=options)
