"""``doc_to_text``, ``doc_to_choice``, ``doc_to_target``, ``description`` and
``gen_prefix`` with lm-evaluation-harness's rules (``ConfigurableTask.doc_to_*``).

A string that is a column of the record is that column's value. Any other
string is a Jinja template rendered to text (``StrictUndefined``, trailing
newlines kept, the ``regex_replace`` filter), then read the way
lm-evaluation-harness reads it:

- ``doc_to_text``: digits become an int when the task has ``doc_to_choice``;
  a number is lm-evaluation-harness's multiple-input mode (winogrande), given as
  a :class:`~prompt_style.fields.multiple_input.ContextChoice`;
- ``doc_to_target``: digits become an int (a choice index) when the task has
  ``doc_to_choice``; text in ``[...]`` is read with ``ast.literal_eval`` (a list
  of targets), falling back to the text;
- ``doc_to_choice``: the text is read with ``ast.literal_eval`` (a list);
- ``description`` and ``gen_prefix``: the text.

Lists (``doc_to_choice``, ``doc_to_target``), a mapping (``doc_to_choice``: its
values) and integers (``doc_to_text``, ``doc_to_target``) are used as given;
``!function`` callables are called with the record.

These objects are the field specs the lm-eval reader puts into
``TaskConfig``; the core compiles them like any callable spec. They pickle
(the template source is kept; Jinja compiles once per process).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Mapping
from typing import Any

from ..._suggest import record_keys, undefined_name
from ...errors import FieldError
from ...fields.jinja_compiler import compile_simple, template_renderer
from ...fields.multiple_input import ContextChoice
from ...safe import jinja_env as _jinja
from ...safe.jinja_env import JinjaProfile, compile_template, regex_replace
from ...safe.limits import SIZE_FLOOR
from .code import TASK_CODE_PREFIX, load_function
from .stateless import stateless

__all__ = ["LM_EVAL_JINJA", "LmEvalField", "check_template"]


LM_EVAL_JINJA = JinjaProfile(
    "lm-eval",
    keep_trailing_newline=True,
    filters=(("regex_replace", regex_replace),),
)
"""lm-evaluation-harness's Jinja settings (``lm_eval.utils.env``), in the sandbox."""

KINDS = ("text", "choice", "target", "resolve")


# What makes Python's tokenizer warn: a backslash (an unknown escape), or a number run
# into a name (``1if``, ``0x1for``: "invalid decimal literal"). Other text parses silently,
# so it needs no catch_warnings (which costs more than the parse).
_MAY_WARN = re.compile(r"\\|[0-9](?:[A-Za-z_]|[^\x00-\x7f])")


def _literal(text: str) -> Any:
    """``ast.literal_eval`` as lm-evaluation-harness calls it, without the warning Python prints
    for an unknown escape (``"\\ "``) in record text (MultiRC answers hold backslashes)."""
    if not _MAY_WARN.search(text):
        return ast.literal_eval(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.literal_eval(text)


def _digits(text: str) -> Any:
    """``_literal(text)`` of a text of digits (``text.isdigit()``): ``int(text)`` where
    that is what Python's parser gives (ASCII digits, no leading zero, not too long);
    else ``_literal`` itself, with its error."""
    if text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) <= 4000:
        return int(text)
    return _literal(text)


# A template that is one output and nothing else: its value may be read before printing.
_ONE_OUTPUT = re.compile(r"\{\{(?!-)(.*)(?<!-)\}\}", re.DOTALL)


def check_template(source: str) -> str | None:
    """The syntax error of ``source`` as lm-evaluation-harness templates, or ``None``."""
    syntax_error = _jinja.errors()[0]
    try:
        compile_template(source, LM_EVAL_JINJA)
    except syntax_error as exc:
        return f"bad Jinja template (template line {exc.lineno}): {exc.message}"
    return None


def _keys(record: Mapping[str, Any], missing: object = None) -> str:
    return record_keys(record, missing)


class LmEvalField:
    """One field spec with lm-evaluation-harness's semantics; ``field(record)``."""

    __slots__ = ("source", "key", "kind", "digits", "name", "literal", "_pure")
    gold_rule = "exact"
    """Targets are read here as lm-evaluation-harness reads them, so the gold is
    ``choices.index(target)`` for a string (see ``prompt_style.resolve_gold``)."""

    def __init__(self, source: Any, key: str, kind: str, digits: bool = False, name: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        self.source = source
        """The spec as the task file writes it (a callable for ``!function``)."""
        self.key = key
        self.kind = kind
        self.digits = digits
        """Digit strings become ints (``doc_to_text`` and ``doc_to_target`` of a task with ``doc_to_choice``)."""
        self.name = name
        """The ``!function`` name, for messages."""
        self._pure: bool | None = None
        self.literal = isinstance(source, str) and not any(mark in source for mark in ("{{", "{%", "{#", "\r"))
        """Text without Jinja syntax (or carriage returns, which Jinja turns into
        newlines) renders to itself: skip Jinja for it."""

    @property
    def pure(self) -> bool:
        """Whether the value depends on the record only, with no side effects: true
        unless the spec is task code (``!function``) that may keep state or draw random
        numbers, as far as its code shows (:func:`~.stateless.stateless`: winogrande's
        ``doc_to_text``, which reads the record alone, is pure)."""
        pure = self._pure
        if pure is None:  # (read once: the code does not change)
            pure = self._pure = not callable(self.source) or stateless(self.source)
        return pure

    def __reduce__(self) -> tuple[Any, ...]:
        source = self.source
        module = getattr(source, "__module__", "") or ""
        if callable(source) and module.startswith(TASK_CODE_PREFIX):
            # Task code imported from a file is not importable by name in another
            # process: pickle where it comes from, and import it again there.
            import sys

            path = getattr(sys.modules.get(module), "__file__", None)
            if path:
                return (_reloaded, (path, source.__qualname__, self.key, self.kind, self.digits, self.name))
        return (LmEvalField, (source, self.key, self.kind, self.digits, self.name))

    def __repr__(self) -> str:
        shown = f"!function {self.name}" if self.name else repr(self.source)
        return f"<lm-eval {self.key} {shown}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LmEvalField) and self.__reduce__() == other.__reduce__()

    def __hash__(self) -> int:
        return hash((self.key, self.kind, repr(self.source)))

    def __call__(self, record: Mapping[str, Any]) -> Any:
        source = self.source
        if isinstance(source, str):
            if source in record:
                return self._checked(record[source])
            return self._read(source if self.literal else self._render(source, record))
        if callable(source):
            return self._checked(source(record))
        if isinstance(source, Mapping) and self.kind == "choice":
            return list(source.values())
        return self._checked(source)

    def fast_constant(self) -> tuple[Any, str | None] | None:
        """For the renderer's fast path: ``(value, key)`` when this field gives ``value``
        for every record that has no key ``key`` (text without Jinja syntax:
        lm-evaluation-harness reads a column of that name instead), or for every record
        (``key`` ``None``: a list of choices); else ``None``. A task's description then
        costs each record one key lookup, and its choices none, rather than a call."""
        source = self.source
        if type(source) is list and self.kind == "choice":
            return source, None  # what _checked gives: the list itself
        if not self.literal:
            return None
        try:
            value = self._read(source)
        except Exception:
            return None
        return value, source

    def fast_column(self) -> tuple[str, Any] | None:
        """For the renderer's fast path: ``(key, default)`` when this field gives
        ``record[key]`` for a record with that key and ``default`` for one without (a
        target without Jinja syntax, ``answer``: the column, as lm-evaluation-harness
        reads it), else ``None``: read in the fast path's loop, without a call."""
        if self.kind not in ("target", "resolve"):
            return None  # (a text or a choice read from a column is checked)
        constant = self.fast_constant()
        return None if constant is None else (self.source, constant[0])

    def fast_getters(self) -> tuple[Any, Any]:
        """``(getter, fallback)`` for the renderer's fast path: ``getter`` is
        :meth:`fast_getter`'s function, or quicker still for ``{{ expression }}`` choices
        and targets, where it is the compiled expression itself, without a call around
        it: it gives the value lm-evaluation-harness reads back from its printed text
        where that is the value itself (a list of texts; a text; a number, for a target
        read as digits), else compiled Jinja's ``SLOW``, and then ``fallback`` (the
        function :meth:`fast_getter` gives) is called. ``fallback`` is ``None`` when
        ``getter`` has no such case; both are ``None`` when there is no getter."""
        getter = self.fast_getter()
        inside = self._one_expression() if getter is not None else None
        if inside is None:
            return getter, None
        compiled = compile_simple(
            inside,
            LM_EVAL_JINJA,
            "expression",
            absent=self.source,
            digits=self.digits,
            result="texts" if self.kind == "choice" else "scalar",
        )
        return (getter, None) if compiled is None else (compiled.function, getter)

    def _one_expression(self) -> str | None:
        """The inside of a choice's or target's ``{{ expression }}`` template that
        compiles to plain Python (``"choices.text"``), else ``None``."""
        source = self.source
        if type(source) is not str or self.literal or self.kind not in ("choice", "target"):
            return None
        if compile_simple(source, LM_EVAL_JINJA) is None:
            return None
        one = _ONE_OUTPUT.fullmatch(source)
        return None if one is None else one.group(1)

    def fast_getter(self) -> Any:
        """For the renderer's fast path: a quicker function of the record that gives
        the same value wherever this field gives one, and raises (anything) or gives
        compiled Jinja's ``SLOW`` where in doubt, the renderer then calling the field
        itself; ``None`` if there is none."""
        source, kind = self.source, self.kind
        constant = self.fast_constant()
        if constant is not None and constant[1] is None:
            return lambda record: source  # what _checked returns: the list itself
        if callable(source) and type(source) is not str:
            return self._fast_call() if self.pure else None
        if type(source) is not str:
            return None
        checked = self._checked if kind in ("text", "choice") else None
        read, digits = self._read, self.digits
        if self.literal:
            value = None if constant is None else constant[0]
            if type(value) is not str:
                return None

            def literal(record: Mapping[str, Any]) -> Any:
                if source in record:  # a column (raises for a record that is not a mapping)
                    return record[source] if checked is None else checked(record[source])
                return value

            return literal
        if kind in ("text", "resolve"):
            # the compiled text itself, without a call around it: it gives SLOW (which the
            # renderer's type checks hand back to the field) for a record with a column named
            # like the template, and for a text of digits lm-evaluation-harness reads as a number
            guarded = compile_simple(source, LM_EVAL_JINJA, absent=source, digits=digits)
            if guarded is not None:
                return guarded.function
        compiled = compile_simple(source, LM_EVAL_JINJA)
        render = template_renderer(source, LM_EVAL_JINJA) if compiled is None else compiled.function
        plain = kind == "resolve" or (kind == "text" and not digits)
        inside = self._one_expression()
        value_of = compile_simple(inside, LM_EVAL_JINJA, "expression") if inside is not None else None
        if value_of is not None:
            # "{{choices.text}}", "{{label}}": lm-evaluation-harness prints the value and reads
            # the text back (ast.literal_eval for a list, or digits; a target text as it is).
            # Where that gives back the value itself it is taken as it is, without printing:
            # a list of texts (each text's repr reads back as itself; copied, as the printed
            # route makes a new list), a number of digits, a text that reads as itself.
            # Anything else (SLOW, another type) takes the printed route below.
            value_fn = value_of.function
            choice = kind == "choice"

            def quick(record: Mapping[str, Any]) -> Any:
                if type(record) is not dict or source in record:
                    raise LookupError(source)  # the field itself decides
                value = value_fn(record)
                of = type(value)
                if choice:
                    if of is list:
                        for item in value:
                            if type(item) is not str:
                                break
                        else:
                            return list(value)
                elif of is int:
                    if digits and value >= 0 and value.bit_length() < 13_000:  # printed: under 4,000 digits
                        return value
                elif of is str:
                    # (printed, a text longer than the least size threshold may meet a budget)
                    if len(value) <= SIZE_FLOOR[0]:
                        if not (digits and value.isdigit()):
                            if not (value[:1] == "[" and value[-1:] == "]"):
                                return value
                        elif value.isascii() and (value[0] != "0" or len(value) == 1) and len(value) <= 4000:
                            # a text of digits is printed as itself and read back as its
                            # number (_read, _digits): HellaSwag's label "2"
                            return int(value)
                return rendered(record)

        else:
            quick = None

        def rendered(record: Mapping[str, Any]) -> Any:
            if type(record) is not dict or source in record:
                raise LookupError(source)  # the field itself decides
            text = render(record)
            if type(text) is not str:  # the compiled template hands the record to the sandbox
                raise LookupError(source)
            if plain or (kind == "text" and not text.isdigit()):
                return text
            return read(text)

        return rendered if quick is None else quick

    def _fast_call(self) -> Any:
        """Task code that computes from the record alone (:attr:`pure`), called without
        the checks around it where its value needs none: a text, a list of choices, any
        target (``_checked`` gives those unchanged); else through the checks."""
        source, checked = self.source, self._checked
        if self.kind == "text":

            def text(record: Mapping[str, Any]) -> Any:
                value = source(record)
                return value if type(value) is str else checked(value)

            return text
        if self.kind == "choice":

            def choices(record: Mapping[str, Any]) -> Any:
                value = source(record)
                return value if type(value) is list else checked(value)

            return choices
        return source

    def _render(self, source: str, record: Mapping[str, Any]) -> str:
        _, undefined_error, security_error = _jinja.errors()
        try:
            return template_renderer(source, LM_EVAL_JINJA)(record)  # simple templates as plain Python
        except undefined_error as exc:
            raise FieldError(
                f"{source!r}: {exc.message}", key=self.key, hint=_keys(record, undefined_name(exc.message))
            ) from None
        except security_error as exc:
            raise FieldError(f"{source!r} is not allowed in the sandbox: {exc}", key=self.key) from None
        except TypeError as exc:
            if not all(isinstance(k, str) for k in record):
                raise FieldError("the record has keys that are not strings", key=self.key) from None
            raise FieldError(f"{source!r} raised TypeError: {exc}", key=self.key) from None
        except Exception as exc:
            raise FieldError(f"{source!r} raised {type(exc).__name__}: {exc}", key=self.key) from None

    def _read(self, text: str) -> Any:
        kind = self.kind
        if kind == "choice":
            try:
                value = _literal(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise FieldError(
                    f"rendered {text!r}, which is not a Python list",
                    key=self.key,
                    hint="lm-evaluation-harness reads a rendered doc_to_choice with ast.literal_eval; "
                    "write e.g. \"{{choices}}\" or ['yes', 'no']",
                ) from None
            return self._checked(value)
        if self.digits and text.isdigit():
            try:
                value = _digits(text)
            except (ValueError, SyntaxError):
                raise FieldError(
                    f"rendered {text!r}, which lm-evaluation-harness would read as a number and cannot",
                    key=self.key,
                ) from None
            return self._checked(value)
        if kind == "target" and len(text) >= 2 and text[0] == "[" and text[-1] == "]":
            try:
                return _literal(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return text
        return text

    def _checked(self, value: Any) -> Any:
        kind = self.kind
        if kind == "text" and not isinstance(value, str):
            if isinstance(value, int) and not isinstance(value, bool):
                # lm-evaluation-harness's multiple-input mode: the index of the choice that is
                # the context (the renderer checks it against the choices)
                return ContextChoice(value)
            if value is None:
                return None  # reported by the renderer ("gave null")
            raise FieldError(
                f"gave {type(value).__name__} {value!r}, not text (lm-evaluation-harness requires a string)",
                key=self.key,
            )
        if kind == "choice" and not isinstance(value, list):
            if isinstance(value, tuple):
                return list(value)
            raise FieldError(
                f"gave {type(value).__name__} {value!r}, not a list of choices",
                key=self.key,
                hint="lm-evaluation-harness requires doc_to_choice to give a list",
            )
        return value


def _reloaded(path: str, qualname: str, key: str, kind: str, digits: bool, name: str | None) -> LmEvalField:
    """An :class:`LmEvalField` whose task code is imported again (unpickling in a worker)."""
    return LmEvalField(load_function(path, qualname), key, kind, digits, name)
