"""What the compiled fast path (:mod:`prompt_style.fastpath`) asks of a task's style
and fields: whether the style formats as the built-in ones do (so that the generated
code may stand in for it), whether a field is pure (or user code, called once a
record), and the quicker getters that stand in for the built-in extractors."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from .fields.extractors import CallableField, Expression, RecordField, Template
from .fields.jinja_compiler import budget_threshold
from .fields.jinja_parse import _SPECIAL_NAMES
from .safe.limits import SIZE_FLOOR
from .styles.base import ChoiceStyle, PassthroughStyle, QAStyle, _format_fields

__all__ = [
    "_plain_choice_style",
    "_plain_generation",
    "_plain_passthrough_style",
    "_pure",
    "_once",
    "_one_key",
    "_getter",
    "_constant",
    "_column",
    "_offer",
    "_getters",
    "_key_of",
]

# The methods of ChoiceStyle the fast path stands in for: a subclass overriding any
# of them formats differently, so it takes the general path.
_CHOICE_METHODS = ("format", "question_and_answers", "_question", "_answers", "_answers_of", "_labels_for", "target")


_PLAIN_CLASSES: dict[type, bool] = {}


def _plain_choice_style(style: Any) -> bool:
    cls = type(style)
    plain = _PLAIN_CLASSES.get(cls)
    if plain is None:
        plain = _PLAIN_CLASSES[cls] = (
            issubclass(cls, ChoiceStyle)
            and all(getattr(cls, name) is getattr(ChoiceStyle, name) for name in _CHOICE_METHODS)
            and cls.format is QAStyle.format
        )
    return plain


def _plain_generation(style: Any) -> bool:
    """A plain choice style's ``generation`` variant whose record text and target the
    fast path makes as the style does: its labels and answer instruction are
    :class:`ChoiceStyle`'s, and its answers (made, as the general path makes them, to
    meet a format error) are the same for every record of a number of choices, or the
    choices' texts."""
    cls = type(style)
    if not _plain_choice_style(style) or cls.labels is not ChoiceStyle.labels:
        return False
    if cls._instruction is not ChoiceStyle._instruction or cls.example_answer is not ChoiceStyle.example_answer:
        return False
    answer_format = style.answer_format
    return answer_format == "{choice}" or "choice" not in _format_fields(answer_format)


_PASSTHROUGH_METHODS = ("format", "question_and_answers", "target")


def _plain_passthrough_style(style: Any) -> bool:
    """A :class:`PassthroughStyle` that formats as it does (its question is the
    ``doc_to_text`` text, its answers the choices)."""
    cls = type(style)
    plain = _PLAIN_PASSTHROUGH.get(cls)
    if plain is None:
        plain = _PLAIN_PASSTHROUGH[cls] = (
            issubclass(cls, PassthroughStyle)
            and all(getattr(cls, name) is getattr(QAStyle, name) for name in _PASSTHROUGH_METHODS)
            and cls.question_text is PassthroughStyle.question_text
            and cls.answers is PassthroughStyle.answers
        )
    return plain


_PLAIN_PASSTHROUGH: dict[type, bool] = {}


def _pure(extractor: Any) -> bool:
    return extractor is None or getattr(extractor, "pure", False) is True


def _once(extractor: Any) -> bool:
    """A field the fast path may read: a pure one, or user code (a callable,
    lm-evaluation-harness's ``!function``), read through ``remembering``: called once a
    record, its value kept for the general path should it render the record."""
    return _pure(extractor) or type(extractor) is CallableField


def _one_key(extractor: Any) -> bool:
    """An expression that reads one key of the record: ``{{question}}``, not a name Jinja
    gives a meaning of its own (``{{ self }}`` is the template, whatever the record holds)."""
    if type(extractor) is not Expression:
        return False
    steps = extractor.steps
    return steps is not None and len(steps) == 1 and steps[0] not in _SPECIAL_NAMES


def _getter(extractor: Any, choice: bool = False, text: bool = False) -> Any:
    """A quicker stand-in for a built-in extractor, giving the same value wherever the
    extractor gives one (it may raise other exceptions where the extractor raises a
    FieldError, or give compiled Jinja's ``SLOW``, which no type check of the fast
    path lets through: the fast path then hands the record to the general path).
    ``choice``: the task's choices (a list, not a text, is the value expected);
    ``text``: the question (any value but a ``str`` sends the record to the general path)."""
    if type(extractor) is RecordField:
        return itemgetter(extractor.spec)
    if type(extractor) is CallableField and not extractor.pure:
        return extractor.remembering  # user code: called once a record (see _once)
    if type(extractor) is CallableField and extractor.pure:
        # what CallableField calls, without the call around it; or the quicker stand-in a
        # reader's field spec offers (lm-evaluation-harness's doc_to_*: fast_getter())
        quick = getattr(extractor.spec, "fast_getter", None)
        getter = quick() if quick is not None else None
        return getter if getter is not None else extractor.spec
    if _one_key(extractor):
        # ``{{question}}``, ``{{question.strip()}}``: one key, then zero-argument str methods
        key = extractor.steps[0]
        methods = tuple(getattr(str, name) for name in extractor.methods)
        if type(key) is not str:
            return extractor
        if not methods:
            compiled = extractor.fast_function()
            if choice and compiled is not None:
                return compiled  # ({{endings}}: a list, which the compiled code measures)
            other = extractor if compiled is None else compiled

            def get(record: Any) -> Any:
                if type(record) is dict:
                    value = record[key]
                    if type(value) is str:  # the sandbox checks a value that is not text (its size as printed)
                        return value
                return other(record)

            return get
        if len(methods) == 1:
            method = methods[0]

            def get_one(record: Any) -> Any:
                if type(record) is dict:
                    value = record[key]
                    if type(value) is str:
                        value = method(value)
                        if len(value) <= SIZE_FLOOR[0] or len(value) <= budget_threshold():
                            # else the sandbox's budgets decide
                            return value
                return extractor(record)  # Jinja decides what a method of a non-str does

            return get_one

        def get_many(record: Any) -> Any:
            if type(record) is not dict:
                return extractor(record)
            value = record[key]
            work = 0
            for method in methods:
                if type(value) is not str:
                    return extractor(record)
                value = method(value)
                work += len(value)
            return value if work <= SIZE_FLOOR[0] or work <= budget_threshold() else extractor(record)

        return get_many
    if type(extractor) is Expression or type(extractor) is Template:
        # the compiled Jinja itself, without the call around it: where it gives SLOW
        # (the sandbox decides) the fast path's type checks fail, and the general path
        # calls the extractor
        function = extractor.fast_function()
        if function is not None:
            return function
        if type(extractor) is Expression and text:
            # the sandbox's value: one that is not text (the question, a target) sends the
            # record to the general path, which then takes it rather than evaluating again
            return extractor.remembering
    return extractor


def _constant(extractor: Any) -> tuple[Any, str | None] | None:
    """``(value, key)`` when ``extractor`` gives ``value`` for every record without the
    key ``key`` (for every record: ``key`` ``None``): what a reader's field spec says of
    itself (lm-evaluation-harness's description without Jinja syntax, its list of
    choices: ``fast_constant()``); else ``None``."""
    return _offer(extractor, "fast_constant")


def _column(extractor: Any) -> tuple[str, Any] | None:
    """``(key, default)`` when ``extractor`` gives ``record[key]`` for a record with the
    key and ``default`` for one without (lm-evaluation-harness's ``doc_to_target:
    answer``: ``fast_column()``); else ``None``."""
    return _offer(extractor, "fast_column")


def _offer(extractor: Any, name: str) -> Any:
    """What a pure reader field's spec answers to ``name()``, if it has that method."""
    if type(extractor) is CallableField and extractor.pure:
        offer = getattr(extractor.spec, name, None)
        if offer is not None:
            return offer()
    return None


def _getters(extractor: Any, choice: bool = False, text: bool = False) -> tuple[Any, Any]:
    """``(getter, fallback)``: :func:`_getter`'s, or where a reader's field spec offers a
    quicker getter that gives ``SLOW`` for what it leaves to a fallback
    (lm-evaluation-harness's ``doc_to_*``: ``fast_getters()``), that getter and its
    fallback, which the fast path calls for a record given ``SLOW`` (``None``: none)."""
    offered = _offer(extractor, "fast_getters")
    if offered is not None and offered[0] is not None:
        return offered
    return _getter(extractor, choice, text), None


def _key_of(extractor: Any, text: bool = False) -> tuple[str, tuple[Any, ...]] | None:
    """``(key, str methods)`` when ``extractor`` reads one key of a dict record and
    calls zero-argument ``str`` methods on a ``str`` value (``question``,
    ``{{question.strip()}}``), else ``None``. A Jinja expression qualifies only for
    the ``text`` (whose value must be a ``str``): the sandbox checks any other value
    it gives (a list of choices, a target) against the budgets, which a plain read
    would not."""
    if type(extractor) is RecordField and type(extractor.spec) is str:
        return extractor.spec, ()
    if text and _one_key(extractor):
        key = extractor.steps[0]
        if type(key) is str:
            return key, tuple(getattr(str, name) for name in extractor.methods)
    return None
