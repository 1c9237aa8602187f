"""Field specs: what to pull out of a record (the ``process_field`` semantics of seed 000).

A spec is compiled once per task into an extractor; applying the extractor to a
record is plain Python. Extractors pickle: they keep the spec source and compile
Jinja lazily in each process.

Record values are data: they are substituted into templates, never rendered as
templates themselves.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import FieldError, PromptStyleError, cut
from ..safe import jinja_env as _jinja

__all__ = ["compile_field", "FieldExtractorBase"]

_FORMAT_FIELD = re.compile(r"\{([^{}]+)\}")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_SIMPLE_PATH = re.compile(rf"{_NAME}(?:\.{_NAME}|\[-?\d+\]|\['[^'\\]*'\]|\[\"[^\"\\]*\"\])*")
# Zero-argument str methods that the sandbox calls as they are; a path ending in
# them (`question.strip()`, as lm-evaluation-harness's MMLU writes) skips Jinja.
_STR_METHODS = ("strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "casefold")
_METHOD_TAIL = re.compile(rf"((?:\.(?:{'|'.join(_STR_METHODS)})\(\s*\))+)$")
_PATH_STEP = re.compile(rf"\.({_NAME})|\[(-?\d+)\]|\['([^'\\]*)'\]|\[\"([^\"\\]*)\"\]")
_UNDEFINED_NAME = re.compile(r"'([^']*)' is undefined")


def _keys(record: Any) -> str:
    if isinstance(record, Mapping):
        keys = ", ".join(map(str, list(record)[:12]))
        return f"the record has: {keys}" if keys else "the record is empty"
    return f"the value is a {type(record).__name__}"


class FieldExtractorBase:
    """Base of the built-in extractors: a picklable callable ``extractor(record)``."""

    __slots__ = ("spec", "key")
    kind = "field"
    pure = True
    """The value depends on the record only, and computing it has no side effects
    (so the renderer's fast path may compute it again for a record it hands to the
    general path). False for user callables."""

    def __init__(self, spec: Any, key: str) -> None:
        self.spec = spec
        self.key = key

    def __call__(self, record: Mapping[str, Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "key": self.key}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["spec"], state["key"])

    def __repr__(self) -> str:
        return f"<{self.kind} extractor {self.spec!r} for {self.key}>"

    def _error(self, message: str, hint: str | None = None) -> FieldError:
        return FieldError(message, key=self.key, hint=hint)

    def _in_jinja(self, record: Mapping[str, Any], run: Callable[[], Any]) -> Any:
        """``run()``, with Jinja's errors turned into :class:`FieldError` naming the spec
        (budget stops and sandbox violations are typed already: they get the key)."""
        if not isinstance(record, Mapping):
            raise self._error(f"the record is a {type(record).__name__}, not a mapping")
        try:
            return run()
        except Exception as exc:
            raise self._jinja_error(exc, record) from None

    def _jinja_error(self, exc: Exception, record: Mapping[str, Any]) -> PromptStyleError:
        _, undefined_error, security_error = _jinja.errors()
        if isinstance(exc, PromptStyleError):
            return exc.locate(key=self.key)
        if isinstance(exc, undefined_error):
            missing = _UNDEFINED_NAME.fullmatch(exc.message or "")
            if missing:
                return self._error(f"field {missing.group(1)!r} is missing ({cut(self.spec)})", _keys(record))
            return self._error(f"{cut(self.spec)}: {cut(exc.message, 300)[1:-1]}", _keys(record))
        if isinstance(exc, security_error):
            return self._error(f"{cut(self.spec)} is not allowed in the sandbox: {exc}")
        # the expression itself failed, e.g. 1 / 0
        line = getattr(exc, "ps_template_line", None)
        where = f" (template line {line})" if line and "\n" in str(self.spec) else ""
        return self._error(f"{cut(self.spec)} raised {type(exc).__name__}{where}: {cut(str(exc), 300)[1:-1]}")


class Constant(FieldExtractorBase):
    """A value given literally in the task (for example a list of choices)."""

    kind = "constant"

    def __call__(self, record: Mapping[str, Any]) -> Any:
        return self.spec


class Literal(FieldExtractorBase):
    """Literal text (a ``description`` without Jinja)."""

    kind = "literal"

    def __call__(self, record: Mapping[str, Any]) -> Any:
        return self.spec


class RecordField(FieldExtractorBase):
    """A plain field name: ``"question"`` gives ``record["question"]``."""

    kind = "field"

    def __call__(self, record: Mapping[str, Any]) -> Any:
        try:
            return record[self.spec]
        except KeyError:
            raise self._error(f"field {cut(self.spec)} is missing", _keys(record)) from None
        except TypeError:
            raise self._error(f"the record is a {type(record).__name__}, not a mapping") from None


class Expression(FieldExtractorBase):
    """A single ``{{ expression }}``: the value keeps its type (a list stays a list)."""

    __slots__ = ("source", "steps", "methods")
    kind = "expression"

    def __init__(self, spec: Any, key: str, source: str) -> None:
        super().__init__(spec, key)
        self.source = source
        self.steps, self.methods = _parsed_expression(source)

    @staticmethod
    def _parse_path(source: str) -> tuple[str | int, ...] | None:
        """Steps of a simple path like ``choices.text`` or ``a['b'][0]``, else ``None``."""
        if not _SIMPLE_PATH.fullmatch(source):
            return None
        head = re.match(_NAME, source).group(0)
        steps: list[str | int] = [head]
        for name, number, single, double in _PATH_STEP.findall(source[len(head) :]):
            if name or single or double:
                steps.append(name or single or double)
            else:
                steps.append(int(number))
        return tuple(steps)

    def compile(self) -> None:
        """Compile now, so that a syntax error surfaces at task load."""
        syntax_error = _jinja.errors()[0]
        try:
            _jinja.expression(self.source)
        except syntax_error as exc:
            raise self._error(f"bad Jinja expression {cut(self.spec)}: {exc.message}") from None
        except PromptStyleError as exc:
            raise exc.locate(key=self.key) from None

    def __call__(self, record: Mapping[str, Any]) -> Any:
        steps = self.steps
        if steps is not None:
            # The fast path: plain navigation through mappings and sequences.
            value: Any = record
            for step in steps:
                if (type(value) is dict or isinstance(value, Mapping)) and isinstance(step, str):
                    try:
                        value = value[step]
                    except KeyError:
                        raise self._missing(step, value) from None
                elif (type(value) is list or isinstance(value, Sequence)) and isinstance(step, int):
                    try:
                        value = value[step]
                    except IndexError:
                        raise self._error(
                            f"index {step} is out of range in {cut(self.spec)}",
                            f"the sequence has {len(value)} items",
                        ) from None
                elif isinstance(step, str) and not hasattr(value, step):
                    raise self._error(
                        f"{cut(self.spec)}: a {type(value).__name__} has no field {cut(step)}",
                        "only mappings have named fields; use [index] for lists",
                    )
                else:
                    return self._evaluate(record)
            for method in self.methods:
                if type(value) is not str:
                    return self._evaluate(record)
                value = getattr(value, method)()
            return value
        return self._evaluate(record)

    def _missing(self, step: str, where: Any) -> FieldError:
        return self._error(f"field {cut(step)} is missing ({cut(self.source)})", _keys(where))

    def _evaluate(self, record: Mapping[str, Any]) -> Any:
        # evaluate() raises for a missing name anywhere in the value ("[q, zz]"),
        # and for a function or template object in it.
        value = self._in_jinja(record, lambda: _jinja.evaluate(_jinja.expression(self.source), record))
        undefined = _jinja.undefined(value)
        if undefined is not None:  # only a profile with lenient undefined gets here
            name, hint = undefined
            if hint:
                raise self._error(f"{cut(self.spec)}: {hint}")
            raise self._error(f"field {name!r} is missing ({cut(self.spec)})", _keys(record))
        return value

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "key": self.key, "source": self.source}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["spec"], state["key"], state["source"])


class Template(FieldExtractorBase):
    """Any other Jinja template: renders to a string."""

    kind = "template"

    def compile(self) -> None:
        syntax_error = _jinja.errors()[0]
        try:
            _jinja.template(self.spec)
        except syntax_error as exc:
            raise self._error(f"bad Jinja template (template line {exc.lineno}): {exc.message}") from None
        except PromptStyleError as exc:
            raise exc.locate(key=self.key) from None

    def __call__(self, record: Mapping[str, Any]) -> str:
        try:  # the common case without a closure
            return _jinja.render(_jinja.template(self.spec), record)
        except Exception as exc:
            if not isinstance(record, Mapping):
                raise self._error(f"the record is a {type(record).__name__}, not a mapping") from None
            raise self._jinja_error(exc, record) from None


class FormatTemplate(FieldExtractorBase):
    """A ``{field}`` string template (seed 002): known fields are substituted,
    unknown placeholders stay as written, as OpenCompass's ``safe_format`` does."""

    __slots__ = ("parts",)
    kind = "format"

    def __init__(self, spec: Any, key: str) -> None:
        super().__init__(spec, key)
        # Even positions are literal text, odd positions are field names.
        self.parts = tuple(_FORMAT_FIELD.split(spec))

    def __call__(self, record: Mapping[str, Any]) -> str:
        parts = self.parts
        out = []
        for i, part in enumerate(parts):
            if i % 2 == 0:
                out.append(part)
            elif part in record:
                out.append(str(record[part]))
            else:
                out.append("{" + part + "}")
        return "".join(out)

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["spec"], state["key"])


class CallableField(FieldExtractorBase):
    """A Python callable, called with the record."""

    kind = "callable"
    pure = False  # user code: may keep state or draw random numbers

    def __call__(self, record: Mapping[str, Any]) -> Any:
        return self.spec(record)


@functools.lru_cache(maxsize=512)
def _parsed_expression(source: str) -> tuple[tuple[str | int, ...] | None, tuple[str, ...]]:
    """The path steps and trailing str methods of an expression (once per source)."""
    path, methods = source, ()
    tail = _METHOD_TAIL.search(source)
    if tail:
        path = source[: tail.start()]
        methods = tuple(re.findall(r"\.(\w+)\(", tail.group(1)))
    return Expression._parse_path(path), methods


def is_jinja(spec: str) -> bool:
    return "{{" in spec or "{%" in spec


def compile_field(spec: Any, key: str) -> FieldExtractorBase:
    """Compile a spec with the built-in semantics (see :func:`~prompt_style.hookspecs.extract_field`).

    :param spec: the field spec.
    :param key: the task key it belongs to (``description`` is literal text unless Jinja).
    :returns: a picklable extractor.
    :raises FieldError: for a Jinja syntax error, naming the key.
    """
    if callable(spec):
        return CallableField(spec, key)
    if not isinstance(spec, str):
        if key == "doc_to_text":  # a question is never the same for every record
            raise FieldError(
                f"must be a field spec (a string), not {type(spec).__name__} {cut(spec)}",
                key=key,
                hint="name the field that holds the question, or write a Jinja template",
            )
        return Constant(spec, key)
    if is_jinja(spec):
        # Seed 000: one `{{ expression }}` and nothing else keeps the value's type.
        source = _jinja.single_expression(spec)
        if source is not None:
            extractor: Any = Expression(spec, key, source)
        else:
            extractor = Template(spec, key)
        extractor.compile()
        return extractor
    if key == "description":
        return Literal(spec, key)
    if _FORMAT_FIELD.search(spec):
        return FormatTemplate(spec, key)
    if not spec:
        raise FieldError("an empty string is not a field name", key=key)
    return RecordField(spec, key)
