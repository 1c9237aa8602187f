"""The gold answer of a record, resolved once from the task's own fields.

A record's gold answer depends on ``doc_to_target`` and ``doc_to_choice`` only,
never on how a style labels the choices on screen: ``answer: "3"`` with choices
``["3", "4", "5"]`` is choice 0 under ``mcq``, ``mcq::numbered`` and ``cloze``
alike. The renderer resolves it before the style runs (:attr:`Sample.gold
<prompt_style.Sample.gold>`); styles only display it.

The rules are lm-evaluation-harness 0.4.13's (``ConfigurableTask.doc_to_target``
and ``process_results`` for ``multiple_choice``):

* an integer is the index of the gold choice (a bool counts as 0 or 1, as
  ``isinstance(True, int)`` does there; a numpy integer, which task code such
  as toxigen's returns, is one too: lm-eval indexes with it);
* a string is the index of the choice with that text (``choices.index(gold)``);
* a string of digits that a **template** gives (``"{{answer}}"``, anything but a
  plain field name) is an index: lm-eval renders the template and reads a digit
  string with ``ast.literal_eval``. A plain field name (``doc_to_target:
  answer``) gives the field's value as it is, so a digit string from it is
  matched against the choice texts;
* a list is several gold answers, each resolved by these rules.

Where lm-eval would find no gold choice (it logs a warning and scores the record
as wrong) or where a target could mean two different choices, this raises
:class:`~prompt_style.TargetError` naming the record instead of guessing:

* an index out of range, or negative (lm-eval's ``gold < len(choices)`` lets
  ``-1`` through and then never matches it);
* a string that is no choice's text (a label such as ``"B"`` or ``"(B)"`` is a
  label of the *style*, not of the task: give the index instead);
* a string that is the text of two choices;
* a digit string that is the text of one choice and, read as an index, points
  at another (``"3"`` with choices ``["3", "4", "5", "6"]``: choice 0 or 3?).
  lm-eval would pick the index (from a template) or the text (from a field).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TargetError, cut

__all__ = ["GoldResolver", "gold_resolver", "resolve_gold", "plain_integers", "explain_label", "RENDERED_KINDS"]

RENDERED_KINDS = frozenset({"expression", "template", "format"})
"""Extractor kinds whose specs lm-evaluation-harness renders to text (anything
but a plain field name, a callable or a constant)."""

_SHOWN = 8  # choices listed in a message

_INDEX_HINT = (
    "make doc_to_target give the index of the correct choice, e.g. "
    "\"{{ ['A', 'B', 'C', 'D'].index(answer) }}\" for a letter or "
    '"{{ choices.label.index(answerKey) }}" for ARC-style records'
)


def _shown(choices: Sequence[Any]) -> str:
    listed = ", ".join(repr(c) for c in choices[:_SHOWN])
    more = len(choices) - _SHOWN
    return listed + (f", ... ({more} more)" if more > 0 else "")


def _error(message: str, hint: str | None = None) -> TargetError:
    return TargetError(message, key="doc_to_target", hint=hint)


def plain_integers(value: Any) -> Any:
    """``value`` with integers that are not ``int`` (numpy's ``int32``, ``int64``, ...:
    any ``numbers.Integral`` but a bool) turned into ``int``, in a list too; anything
    else as it is. Task code returns them (toxigen's ``doc_to_target``), lm-eval uses
    them as indices, and JSON cannot hold them."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, list) and any(isinstance(v, numbers.Integral) and type(v) is not int for v in value):
        return [plain_integers(v) for v in value]
    return value


def _is_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _one(target: Any, choices: Sequence[Any], rendered: bool, exact: bool = False) -> int:
    n = len(choices)
    if exact and isinstance(target, str):
        # lm-evaluation-harness task files: choices.index(target), nothing else.
        for i, choice in enumerate(choices):
            if choice == target:
                return i
        raise _error(f"{target!r} is not one of the choices ({_shown(choices)})", _INDEX_HINT)
    if target is None:
        raise _error("gave null", "fix the record, or point doc_to_target at the field that holds the answer")
    target = plain_integers(target)
    if rendered and not isinstance(target, (str, int, list, tuple)) or (rendered and isinstance(target, bool)):
        target = str(target)  # what the template renders (Jinja prints True, 1.5, ...)
    if isinstance(target, bool):
        target = int(target)
    if isinstance(target, int):
        if 0 <= target < n:
            return target
        raise _error(
            f"index {target} is out of range for {n} choices ({_shown(choices)})",
            "indices start at 0" if target == n else None,
        )
    if not isinstance(target, str):
        raise _error(
            f"gave {type(target).__name__} {cut(target)}; "
            "a target is the index of a choice, its text, or a list of them",
            "give an integer index" if isinstance(target, float) else None,
        )
    texts = [i for i, c in enumerate(choices) if c == target or (not isinstance(c, str) and str(c) == target)]
    digits = _is_digits(target)
    if rendered and digits:
        # lm-eval: a template's digit string is read as an index (ast.literal_eval).
        index = int(target)
        if index >= n:
            also = f"; it is also the text of choice {texts[0]}" if len(texts) == 1 else ""
            raise _error(
                f"{cut(target)} is read as index {index} (a template's digit string is an index, as in "
                f"lm-evaluation-harness), which is out of range for {n} choices ({_shown(choices)}){also}",
                "to match the choice text instead, name the field (doc_to_target: answer) rather than a template"
                if texts
                else None,
            )
        if texts and texts != [index]:
            raise _ambiguous(target, index, texts, choices)
        return index
    if len(texts) == 1:
        i = texts[0]
        if digits and int(target) < n and int(target) != i:
            raise _ambiguous(target, int(target), texts, choices)
        return i
    if len(texts) > 1:
        where = ", ".join(str(i) for i in texts)
        raise _error(
            f"{cut(target)} is the text of several choices ({where}), so the gold choice is ambiguous",
            "give the index of the correct choice instead",
        )
    if digits:
        raise _error(
            f"{cut(target)} is not one of the choices ({_shown(choices)})",
            "a plain field's value is matched against the choice texts; to read a digit string as a "
            "0-based index, as lm-evaluation-harness does for templates, write the field as a template: "
            'doc_to_target: "{{answer}}"',
        )
    raise _error(f"{cut(target)} is not one of the choices ({_shown(choices)})", _INDEX_HINT)


def _ambiguous(target: str, index: int, texts: list[int], choices: Sequence[Any]) -> TargetError:
    text_at = texts[0]
    return _error(
        f"{cut(target)} is ambiguous: it is the text of choice {text_at} ({cut(choices[text_at])}), "
        f"and read as an index it is choice {index} ({choices[index]!r})",
        "make doc_to_target give an integer: {{ answer | int }} for the index, "
        "or {{ choices.index(answer) }} for the choice with that text (use your field names)",
    )


def resolve_gold(
    target: Any, choices: Sequence[Any], *, rendered: bool = False, exact: bool = False
) -> int | list[int]:
    """The index of the gold choice of one record, by lm-evaluation-harness's rules.

    :param target: what ``doc_to_target`` gave.
    :param choices: what ``doc_to_choice`` gave (the task's choices, not a style's labels).
    :param rendered: ``doc_to_target`` is a template (lm-eval renders it to text,
        so a digit string is an index); ``False`` for a plain field name, a
        callable or a constant.
    :param exact: a string is the index of the first choice equal to it, and
        nothing else (``choices.index``): for targets that already follow
        lm-evaluation-harness's reading (the ``lm-eval`` task-file format turns a
        template's digit string into an int itself).
    :returns: the index; a list of indices when ``target`` is a list.
    :raises TargetError: when the target names no choice, or could name two.
    """
    if not len(choices):
        raise TargetError(
            "gave no choices, so the target points at nothing",
            key="doc_to_choice",
            hint="set doc_to_choice to the record's list of choices",
        )
    if isinstance(target, (list, tuple)):
        if not target:
            raise _error("gave an empty list of gold answers")
        return [_one(t, choices, rendered, exact) for t in target]
    return _one(target, choices, rendered, exact)


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LABEL_DECORATIONS = "()[]. :"


def _bare_label(text: str) -> str:
    """``"(B)"``, ``"B."``, ``" B"`` -> ``"B"``: a label as answers often write it."""
    return text.strip().strip(_LABEL_DECORATIONS).strip()


def explain_label(
    error: TargetError, target: Any, choices: Sequence[Any], labels: Sequence[Any], style: str | None
) -> TargetError:
    """``error`` (a target that names no choice) told exactly, when the target is a label.

    A target is matched against the task's choices, never against labels, so that
    changing the style never changes the gold answer. When the target is the label
    the style shows for a choice (``"II"`` under roman numerals, ``"2."``) or a
    letter (``"B"``, ``"(b)"``: told the same under every style), the message
    says which choice it looks like, why it is not read so, and the
    ``doc_to_target`` that reads it. Otherwise ``error`` is returned as it is.

    :param labels: how the style labels these choices: its answers for them (``A``,
        ``(A)``, ``1``, ``II``; empty when it has none).
    :param style: the style's name, for the message.
    """
    if not isinstance(target, str) or not choices or _is_digits(target.strip()):
        return error  # a digit string has its own rules (an index or a text), told already
    if any(c == target or str(c) == target for c in choices):
        return error  # a choice's text, ambiguous or repeated: not about labels
    bare = _bare_label(target)
    if not bare:
        return error
    n = len(choices)
    why = (
        "but a target is matched against the choices (doc_to_choice), never against labels, so that "
        "changing the style never changes the gold answer"
    )
    letter = bare.upper()
    if len(letter) == 1 and letter in _LETTERS[:n]:
        # told word for word the same under every style: the letter is no style's business
        i = _LETTERS.index(letter)
        letters = list(_LETTERS[:n])
        answer = _unwrapped(target) + (".upper()" if letter != bare else "")
        return _error(
            f"{cut(target)} is not one of the choices ({_shown(choices)}); it reads as the letter of choice {i} "
            f"({cut(choices[i])}), {why}",
            "to read letters as answers, make doc_to_target give the index (with your field's name): "
            f'"{{{{ {letters!r}.index({answer}) }}}}"; every style then shows its own label for that choice',
        )
    shown = [str(label) for label in labels][:n]
    bare_shown = [_bare_label(label) for label in shown]
    if target.strip() in shown or bare in bare_shown:
        listed, answer = (shown, "answer") if target.strip() in shown else (bare_shown, _unwrapped(target))
        i = listed.index(target.strip() if listed is shown else bare)
        named = f"style {style!r}" if style else "the style"
        return _error(
            f"{cut(target)} is not one of the choices ({_shown(choices)}); it is how {named} labels "
            f"choice {i} ({cut(choices[i])}), {why}",
            "to read it as that label, make doc_to_target give the index (with your field's name): "
            f'"{{{{ {listed!r}.index({answer}) }}}}"',
        )
    return error


def _unwrapped(target: str) -> str:
    """The Jinja expression that reads ``target`` (a field ``answer``) as its bare label."""
    return "answer" if _bare_label(target) == target else f"answer.strip({_LABEL_DECORATIONS!r})"


@dataclass(frozen=True)
class GoldResolver:
    """:func:`resolve_gold` for one task, set up once from its ``doc_to_target``."""

    rendered: bool = False
    exact: bool = False

    def __call__(self, target: Any, choices: Sequence[Any]) -> int | list[int]:
        return resolve_gold(target, choices, rendered=self.rendered, exact=self.exact)


def gold_resolver(extractor: Callable[..., Any] | None) -> GoldResolver:
    """The resolver for a task whose ``doc_to_target`` compiled into ``extractor``.

    Built-in extractors say what they are (``kind``); a plugin's extractor without
    a ``kind`` is taken to give values as they are, like a callable. A field spec
    (or extractor) with ``gold_rule = "exact"`` gets :func:`resolve_gold`'s
    ``exact`` reading (lm-evaluation-harness task files).
    """
    rule = getattr(extractor, "gold_rule", None) or getattr(getattr(extractor, "spec", None), "gold_rule", None)
    if rule == "exact":
        return GoldResolver(exact=True)
    return GoldResolver(rendered=getattr(extractor, "kind", None) in RENDERED_KINDS)
