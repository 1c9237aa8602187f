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
from collections.abc import Callable, Mapping
from typing import Any

from .._suggest import record_keys
from ..errors import FieldError, PromptStyleError, cut
from ..safe import jinja_env as _jinja
from ..safe.plain import plain_value
from .jinja_compiler import SLOW, compile_simple, template_renderer

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
# Jinja's messages for a missing attribute or item of a value: "'dict object' has no
# attribute 'zz'", "list object has no element 7" (jinja2.runtime.Undefined).
_NO_ATTRIBUTE = re.compile(r"'(\w+) object' has no attribute ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")", re.S)
_NO_ELEMENT = re.compile(r"(\w+) object has no element (-?\d+)")
_UNSET: Any = object()


def _keys(record: Any, missing: object = None) -> str:
    return record_keys(record, missing)


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

    def _hint(self, record: Mapping[str, Any], step: str | int) -> str | None:
        """What the value that lacks ``step`` holds, when the spec is one simple path
        that leads to it (else ``None``)."""
        steps = getattr(self, "steps", None)
        if not steps:
            return None
        value: Any = record
        for here in steps:
            if here == step and type(here) is type(step):
                if isinstance(value, Mapping) and isinstance(step, str) and step not in value:
                    return _keys(value, step)
                if isinstance(value, (list, tuple, str)) and isinstance(step, int):
                    return f"the sequence has {len(value)} items"
            try:
                value = value[here]
            except Exception:
                return None
        return None

    def _jinja_error(self, exc: Exception, record: Mapping[str, Any]) -> PromptStyleError:
        _, undefined_error, security_error = _jinja.errors()
        if isinstance(exc, PromptStyleError):
            return exc.locate(key=self.key)
        if isinstance(exc, undefined_error):
            message = exc.message or ""
            missing = _UNDEFINED_NAME.fullmatch(message)
            if missing:
                return self._error(
                    f"field {missing.group(1)!r} is missing ({cut(self.spec)})", _keys(record, missing.group(1))
                )
            attribute = _NO_ATTRIBUTE.fullmatch(message)
            if attribute:
                import ast

                kind, name = attribute.group(1), ast.literal_eval(attribute.group(2))
                if kind == "dict":
                    return self._error(f"field {cut(name)} is missing ({cut(self.spec)})", self._hint(record, name))
                return self._error(
                    f"{cut(self.spec)}: a {kind} has no field {cut(name)}",
                    "only mappings have named fields; use [index] for lists",
                )
            element = _NO_ELEMENT.fullmatch(message)
            if element and element.group(1) in ("list", "tuple", "str"):
                return self._error(
                    f"index {element.group(2)} is out of range in {cut(self.spec)}",
                    self._hint(record, int(element.group(2))),
                )
            return self._error(f"{cut(self.spec)}: {cut(message, 300)[1:-1]}", _keys(record))
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
            raise self._error(f"field {cut(self.spec)} is missing", _keys(record, self.spec)) from None
        except TypeError:
            raise self._error(f"the record is a {type(record).__name__}, not a mapping") from None


class Expression(FieldExtractorBase):
    """A single ``{{ expression }}``: the value keeps its type (a list stays a list)."""

    __slots__ = ("source", "steps", "methods", "_fast", "_pending")
    kind = "expression"

    def __init__(self, spec: Any, key: str, source: str) -> None:
        super().__init__(spec, key)
        self.source = source
        self.steps, self.methods = _parsed_expression(source)
        """The path of a simple ``a.b[0]`` expression and its trailing str methods
        (``None`` for anything else): the renderer's fast path reads them."""
        self._fast: Any = _UNSET
        self._pending: tuple[Any, Any] | None = None
        """``(record, value)`` that :meth:`remembering` gave the fast path and that the
        general path, which renders that record next, takes instead of evaluating again."""

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
        pending = self._pending
        if pending is not None:
            self._pending = None  # taken by the next call, whichever record it is for
            if pending[0] is record:
                return pending[1]
        # A simple expression (a path, str methods, constants, lists of these) runs as
        # plain Python (fields/jinja_compiler.py), which gives the sandbox's value or
        # hands the record to it: then the sandbox gives the value, or the error.
        fast = self._fast
        if fast is _UNSET:
            compiled = compile_simple(self.source, _jinja.FIELDS, "expression")
            fast = self._fast = None if compiled is None else compiled.function
        if fast is not None:
            value = fast(record)
            if value is not SLOW:
                return value
        return self._evaluate(record)

    def fast_function(self) -> Callable[[Any], Any] | None:
        """For the renderer's fast path: the compiled function of a simple expression
        (``fields/jinja_compiler.py``), which gives this extractor's value or
        :data:`~prompt_style.fields.jinja_compiler.SLOW` where the sandbox must
        decide (then call the extractor itself); ``None`` when it does not compile."""
        fast = self._fast
        if fast is _UNSET:
            compiled = compile_simple(self.source, _jinja.FIELDS, "expression")
            fast = self._fast = None if compiled is None else compiled.function
        return fast

    def remembering(self, record: Mapping[str, Any]) -> Any:
        """This extractor's value, for the renderer's fast path when the expression does
        not compile: a value that is not text sends the record to the general path, which
        calls this extractor next, for the same record; the value is kept for that call, so
        that an expression (bounded, but perhaps costly) is not evaluated twice."""
        value = self(record)
        if type(value) is not str:
            self._pending = (record, value)
        return value

    def _evaluate(self, record: Mapping[str, Any]) -> Any:
        # evaluate() raises for a missing name anywhere in the value ("[q, zz]"),
        # and for a function or template object in it.
        value = self._in_jinja(record, lambda: _jinja.evaluate(_jinja.expression(self.source), record, record=True))
        undefined = _jinja.undefined(value)
        if undefined is not None:  # only a profile with lenient undefined gets here
            name, hint = undefined
            if hint:
                raise self._error(f"{cut(self.spec)}: {hint}")
            raise self._error(f"field {name!r} is missing ({cut(self.spec)})", _keys(record, name))
        return value

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "key": self.key, "source": self.source}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["spec"], state["key"], state["source"])


class Template(FieldExtractorBase):
    """Any other Jinja template: renders to a string (a simple one as plain Python,
    with the sandbox's result: fields/jinja_compiler.py)."""

    __slots__ = ("_render",)
    kind = "template"

    def __init__(self, spec: Any, key: str) -> None:
        super().__init__(spec, key)
        self._render: Any = None

    def compile(self) -> None:
        syntax_error = _jinja.errors()[0]
        try:
            _jinja.template(self.spec)
        except syntax_error as exc:
            raise self._error(f"bad Jinja template (template line {exc.lineno}): {exc.message}") from None
        except PromptStyleError as exc:
            raise exc.locate(key=self.key) from None

    def fast_function(self) -> Callable[[Any], Any] | None:
        """For the renderer's fast path: the compiled function of a simple template,
        which gives the text or :data:`~prompt_style.fields.jinja_compiler.SLOW` (then
        call the extractor itself); ``None`` when the template does not compile."""
        compiled = compile_simple(self.spec, _jinja.FIELDS) if type(self.spec) is str else None
        return None if compiled is None else compiled.function

    def __call__(self, record: Mapping[str, Any]) -> str:
        render = self._render
        if render is None:
            render = self._render = template_renderer(self.spec, _jinja.FIELDS)
        try:  # the common case without a closure
            return render(record)
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
                value = record[part]
                if type(value) is not str:
                    try:
                        value = str(plain_value(value, part))
                    except PromptStyleError as exc:
                        raise exc.locate(key=self.key) from None
                out.append(value)
            else:
                out.append("{" + part + "}")
        return "".join(out)

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(state["spec"], state["key"])


class CallableField(FieldExtractorBase):
    """A Python callable, called with the record."""

    kind = "callable"

    _pending: tuple[Any, Any, BaseException | None] | None = None
    """``(record, value, error)`` that :meth:`remembering` gave the fast path, which the
    general path, rendering that record next, takes instead of calling again."""

    @property
    def pure(self) -> bool:  # type: ignore[override]
        """False for user code (it may keep state or draw random numbers), unless the
        callable says it is pure (a reader's field spec such as lm-evaluation-harness's
        ``doc_to_text``, which renders a template: ``spec.pure is True``)."""
        return getattr(self.spec, "pure", False) is True

    def __call__(self, record: Mapping[str, Any]) -> Any:
        pending = self._pending
        if pending is not None:
            self._pending = None  # taken by the next call, whichever record it is for
            if pending[0] is record:
                if pending[2] is not None:
                    raise pending[2]
                return pending[1]
        return self.spec(record)

    def remembering(self, record: Mapping[str, Any]) -> Any:
        """This field's value (or error), for the renderer's fast path, kept for the
        next call if it is for the same record: the general path, to which the fast path
        hands a record it does not render, calls the field next for that record, and
        user code (which may keep state) is then called once a record, as without the
        fast path."""
        try:
            value = self.spec(record)
        except Exception as exc:
            self._pending = (record, None, exc)
            raise
        self._pending = (record, value, None)
        return value

    def kept(self, record: Mapping[str, Any]) -> Any:
        """:meth:`remembering`, but what it kept for this very record, if anything, is
        given (and kept) rather than the callable called again: a second reader on the
        fast path's way to the general path (lm-evaluation-harness's multiple-input
        records). Such a reader calls :meth:`forget` once it has rendered the record."""
        pending = self._pending
        if pending is not None and pending[0] is record:
            if pending[2] is not None:
                raise pending[2]
            return pending[1]
        return self.remembering(record)

    def forget(self) -> None:
        """Drop what :meth:`remembering` kept (the record was rendered without the
        general path)."""
        self._pending = None


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
