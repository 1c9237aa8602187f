"""One numbered template of a task-template file, rendered exactly as the reference does.

The reference is SciRIFF's ``Template.apply`` (itself adapted from promptsource):

1. every top-level *string* field of the record has ``|||`` replaced by a
   protector string, so that data cannot split the prompt;
2. ``answer_choices`` (a Jinja template) is rendered on the protected record,
   split on ``|||``, each part stripped and un-protected: a list, or ``None``
   when the template has no ``answer_choices``; it is given to the main
   template as the variable ``answer_choices``;
3. the main template is rendered, split on ``|||``, and each part is
   un-protected and stripped. Exactly two parts are required: the input and
   the output.

Two Jinja semantics exist (:data:`SEMANTICS`): ``sciriff`` (``StrictUndefined``,
``zip``) for task-template files, and ``promptsource`` for templates converted
from promptsource 0.2.3, which renders as promptsource's own ``Template.apply``
with its defaults: lenient undefined values, the ``choice``,
``most_frequent`` and ``highlight`` filters, and every ``}}`` rewritten to
``| string | truncate(2048) }}`` (``truncate=True``).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..._suggest import record_keys, undefined_name
from ...errors import FieldError, PromptStyleError, TaskFileError
from ...fields.jinja_compiler import SLOW, compile_simple
from ...safe import jinja_env

__all__ = [
    "PIPE",
    "PIPE_PROTECTOR",
    "TEXT_VAR_LENGTH",
    "SEMANTICS",
    "SCIRIFF",
    "PROMPTSOURCE",
    "Applied",
    "TaskTemplate",
    "record_seed",
]

PIPE = "|||"
"""Separates the input from the output (and the answer choices from each other)."""
PIPE_PROTECTOR = "3ed2dface8203c4c9dfb1a5dc58e41e0"
"""What ``|||`` inside a record's string fields becomes while rendering (the reference's value)."""
TEXT_VAR_LENGTH = 2048
"""promptsource's truncation length for every ``{{ ... }}`` (``truncate=True``)."""

# The random generator the promptsource ``choice`` filter draws from, set for
# the duration of one record's render (answer choices first, then the template,
# as promptsource draws from one global generator in that order).
_RNG: ContextVar[random.Random | None] = ContextVar("prompt_style_task_template_rng", default=None)


def _highlight(input):  # noqa: A002 - promptsource's signature
    return "<span style='color: #F08080'>" + input + "</span>"


def _choice(choices):
    rng = _RNG.get()
    return (rng if rng is not None else random).choice(choices)


def _random(context, seq):
    """Jinja's own ``random`` filter, drawing from the record's generator (promptsource
    runs it on Python's global generator, which it seeds)."""
    rng = _RNG.get()
    try:
        return (rng if rng is not None else random).choice(seq)
    except IndexError:
        return context.environment.undefined("No random item, sequence was empty.")


def _most_frequent(items):
    """promptsource's ``most_frequent``: the items that appear most often, in first-seen order."""
    if not items:
        return
    item_counts = Counter(items).most_common()
    max_freq = item_counts[0][1]
    return [c[0] for c in item_counts if c[1] == max_freq]


SCIRIFF = jinja_env.JinjaProfile(
    "task-template",
    strict_undefined=True,
    mutable=True,
    globals=(("zip", zip),),
)
"""SciRIFF's environment: ``Environment(loader=BaseLoader, undefined=StrictUndefined)``
with ``zip``; mutating list and dict methods work as in plain Jinja."""

PROMPTSOURCE = jinja_env.JinjaProfile(
    "promptsource",
    strict_undefined=False,
    mutable=True,
    globals=(("zip", zip),),
    filters=(
        ("highlight", _highlight),
        ("choice", _choice),
        ("most_frequent", _most_frequent),
        ("random", _random),
    ),
    context_filters=("random",),  # as Jinja's own random filter
)
"""promptsource 0.2.3's environment: ``Environment(loader=BaseLoader)`` (default
``Undefined``) with ``zip`` and the ``highlight``, ``choice`` and ``most_frequent`` filters."""

SEMANTICS: Mapping[str, jinja_env.JinjaProfile] = {"sciriff": SCIRIFF, "promptsource": PROMPTSOURCE}
"""Values of a template's ``metadata.render_as``."""


def _names_read(profile: jinja_env.JinjaProfile, sources: Sequence[str | None]) -> tuple[str, ...]:
    """The top-level names ``sources`` read (the record's fields), ``answer_choices`` aside."""
    from jinja2 import meta

    environment = jinja_env.environment(profile)
    names: set[str] = set()
    for source in sources:
        if source is not None:
            names |= meta.find_undeclared_variables(environment.parse(source))
    names.discard("answer_choices")
    return tuple(sorted(names))


def _uses_filter(profile: jinja_env.JinjaProfile, sources: Sequence[str | None], name: str) -> bool:
    """Whether any of ``sources`` applies the filter ``name`` (from the parsed template)."""
    from jinja2 import nodes

    environment = jinja_env.environment(profile)
    for source in sources:
        if source is None or name not in source:
            continue
        try:
            tree = environment.parse(source)
        except jinja_env.errors()[0]:
            continue
        for node in tree.find_all((nodes.Filter, nodes.FilterBlock)):
            names = (
                [node.name] if isinstance(node, nodes.Filter) else [f.name for f in node.filter.find_all(nodes.Filter)]
            )
            if name in names:
                return True
    return False


def _canonical(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def record_seed(seed: int | str, record: Mapping[str, Any]) -> str:
    """The text that seeds the ``choice`` filter for ``record``:
    ``f"{seed}:{json}"`` with the record as canonical JSON (sorted keys, no
    spaces, non-ASCII kept). ``random.Random`` hashes a text seed with SHA-512,
    so a record draws the same choices in every process, position and split."""
    return f"{seed}:{_canonical(record)}"


def _escape(record: Mapping[str, Any]) -> dict[str, Any]:
    # Only top-level strings, as the reference: a "|||" inside a list or a nested
    # mapping is not protected and does split the prompt.
    return {
        key: value.replace(PIPE, PIPE_PROTECTOR) if isinstance(value, str) else value for key, value in record.items()
    }


def _simple(source: str | None, profile: jinja_env.JinjaProfile) -> Any:
    """``source``'s plain-Python function (see :func:`~prompt_style.fields.jinja_compiler.compile_simple`),
    or ``None``."""
    compiled = None if source is None else compile_simple(source, profile)
    return None if compiled is None else compiled.function


def _unescape(text: str) -> str:
    return text.replace(PIPE_PROTECTOR, PIPE)


def _keys(record: Mapping[str, Any], missing: object = None) -> str:
    return record_keys(record, missing)


@dataclass(slots=True)
class Applied:
    """One record rendered with one template."""

    input: str
    output: str
    answer_choices: list[str] | None


@dataclass(eq=False)
class TaskTemplate:
    """A template of a task-template file, compiled once per process.

    Picklable: compiled Jinja is dropped and recompiled on first use.
    """

    id: Any
    """The template's number (its key in ``templates``)."""
    jinja: str
    answer_choices: str | None = None
    name: str | None = None
    evaluate: Any = False
    metadata: Mapping[str, Any] | None = None
    semantics: str = "sciriff"
    """``sciriff`` or ``promptsource`` (``metadata.render_as``)."""
    seed: int | str = 1234
    """Seeds the promptsource ``choice`` filter (with the record, see :func:`record_seed`)."""
    file: str | None = None
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Lines of this template's keys: ``jinja``, ``answer_choices``."""
    truncate: bool = True
    """promptsource semantics only: rewrite ``}}`` to truncate every variable to 2048 characters."""
    missing_hint: str | None = None
    """Added to the message of a missing field (the reader says why a field may be missing)."""
    _compiled: Any = field(default=None, init=False, repr=False)
    _choices: Any = field(default=None, init=False, repr=False)
    _fast: tuple[Any, Any] = field(default=(None, None), init=False, repr=False)
    _last_choices: tuple[Any, Any] = field(default=(None, None), init=False, repr=False)
    """The answer choices :meth:`fast_apply` last rendered, as text and as the list."""
    """The answer choices' and the template's plain-Python functions (``compile_simple``),
    where they are simple: each gives the sandbox's text, or ``SLOW`` for a record the
    sandbox must render."""
    _reads: tuple[str, ...] = field(default=(), init=False, repr=False)
    """The record's fields the compiled functions read (the only ones ``|||`` protection can matter for)."""

    # -- identity -------------------------------------------------------------

    @property
    def key(self) -> str:
        """``templates.N``, the key path of this template in its file."""
        return f"templates.{self.id}"

    @property
    def label(self) -> str:
        """``template 0 ('name')``, for messages."""
        return f"template {self.id}" + (f" ({self.name!r})" if self.name else "")

    @property
    def profile(self) -> jinja_env.JinjaProfile:
        return SEMANTICS[self.semantics]

    # -- compiling --------------------------------------------------------------

    def source(self) -> str:
        """The Jinja that is compiled: the template as written, or promptsource's
        truncating rewrite of it."""
        jinja = self.jinja
        if self.semantics == "promptsource" and self.truncate:
            # promptsource's own (textual) rewrite, applied to every "}}" alike.
            jinja = jinja.replace("}}", f" | string | truncate({TEXT_VAR_LENGTH}) }}}}")
        return jinja

    @property
    def draws_per_record(self) -> bool:
        """promptsource semantics with random filters: compiled for every record.

        Jinja folds a filter call on constants while compiling (``[0, 1] | choice``
        is drawn then), and promptsource compiles on every ``apply``, after its
        caller seeded the generator; compiling per record, inside the record's
        generator, draws the same values in the same order."""
        if self.semantics != "promptsource":
            return False
        found = self.__dict__.get("_draws")
        if found is None:
            found = self.__dict__["_draws"] = _uses_filter(self.profile, (self.jinja, self.answer_choices), "choice")
        return found

    @property
    def draws(self) -> bool:
        """promptsource semantics with a template that may draw from the record's generator
        (the ``choice`` or ``random`` filter, also by name: ``map('random')``): only then
        is the generator made for each record (seeding it hashes the record's JSON)."""
        if self.semantics != "promptsource":
            return False
        found = self.__dict__.get("_may_draw")
        if found is None:
            sources = [source for source in (self.jinja, self.answer_choices) if source is not None]
            found = self.__dict__["_may_draw"] = any("choice" in text or "random" in text for text in sources)
        return found

    def compile(self) -> None:
        """Compile now; a syntax error is a :class:`TaskFileError` naming the file, line and key."""
        if self._compiled is not None:
            return
        self._choices = self._compile("answer_choices", self.answer_choices)
        self._compiled = self._compile("jinja", self.source())
        if not self.draws_per_record:
            self._fast = (_simple(self.answer_choices, self.profile), _simple(self.source(), self.profile))
            if self._fast[1] is not None:
                self._reads = _names_read(self.profile, (self.answer_choices, self.source()))

    def syntax_errors(self) -> list[tuple[str, Any]]:
        """``(part, TemplateSyntaxError)`` for each of ``answer_choices`` and ``jinja`` that does not compile."""
        found = []
        for part, source in (("answer_choices", self.answer_choices), ("jinja", self.source())):
            if source is None:
                continue
            try:
                jinja_env.compile_template(source, self.profile)
            except jinja_env.errors()[0] as exc:
                found.append((part, exc))
        return found

    def _compile(self, part: str, source: str | None, cache: bool = True) -> Any:
        if source is None:
            return None
        try:
            return jinja_env.compile_template(source, self.profile, cache=cache)
        except jinja_env.errors()[0] as exc:
            raise self._syntax_error(part, exc) from None

    def _syntax_error(self, part: str, exc: Any) -> TaskFileError:
        return TaskFileError(
            f"{self.label}: bad Jinja in {part} (template line {exc.lineno}): {exc.message}",
            file=self.file,
            line=self.lines.get(part),
            key=f"{self.key}.{part}",
        )

    # -- rendering --------------------------------------------------------------

    def apply(self, record: Mapping[str, Any]) -> Applied:
        """Render ``record``: its input, output and answer choices.

        :raises FieldError: for a missing field, a Jinja error, or a render that
            does not split into exactly two parts; the message names the template.
        """
        if self._compiled is None:
            self.compile()
        if not isinstance(record, Mapping):
            raise FieldError(f"{self.label}: the record is a {type(record).__name__}, not a mapping", key=self.key)
        if "answer_choices" in record:
            raise FieldError(
                f"{self.label}: the record has a field named 'answer_choices', which templates reserve "
                "for the rendered answer choices",
                key=f"{self.key}.jinja",
                hint="rename the field (for example with the map_fields formatter)",
            )
        token = _RNG.set(random.Random(record_seed(self.seed, record))) if self.draws else None
        try:
            compiled, compiled_choices = self._compiled, self._choices
            fast_choices, fast = self._fast
            if self.draws_per_record:
                # promptsource's order: compile the template, then the answer choices.
                compiled = self._compile("jinja", self.source(), cache=False)
                compiled_choices = self._compile("answer_choices", self.answer_choices, cache=False)
            protected = _escape(record)
            choices = None
            if compiled_choices is not None:
                rendered = SLOW if fast_choices is None else fast_choices(protected)
                if rendered is SLOW:
                    rendered = self._render(compiled_choices, protected, "answer_choices", record)
                choices = [_unescape(choice.strip()) for choice in rendered.split(PIPE)]
            protected["answer_choices"] = choices
            text = SLOW if fast is None else fast(protected)
            if text is SLOW:
                text = self._render(compiled, protected, "jinja", record)
        finally:
            if token is not None:
                _RNG.reset(token)
        parts = [_unescape(part).strip() for part in text.split(PIPE)]
        if len(parts) != 2:
            raise self._parts_error(parts)
        return Applied(parts[0], parts[1], choices)

    def fast_apply(self, record: Any) -> tuple[str, str, list[str] | None] | None:
        """:meth:`apply`'s ``(input, output, answer_choices)`` for a record whose every
        part the compiled functions render (``_fast``) and that splits in two; ``None``
        for anything else (a record :meth:`apply` renders in the sandbox, or where it
        raises: it then says why). The renderer's fast path calls it. The answer choices
        are the same list as the record before's when they are equal (a caller handing
        them out copies them)."""
        fast_choices, fast = self._fast
        if fast is None or type(record) is not dict or "answer_choices" in record:
            return None
        try:
            get = record.get
            # only the fields the compiled functions read can carry a ||| into the output
            for key in self._reads:
                value = get(key)
                if (PIPE in value) if type(value) is str else isinstance(value, str):
                    protected = _escape(record)
                    break
            else:  # nothing _escape() would change that they read (the common case): a copy
                protected = record.copy()
            choices = None
            if self.answer_choices is not None:
                if fast_choices is None:
                    return None
                rendered = fast_choices(protected)
                if type(rendered) is not str:  # SLOW: the sandbox decides
                    return None
                last = self._last_choices
                if rendered == last[0]:  # (the same answer choices as the record before: most tasks')
                    choices = last[1]
                else:
                    if PIPE_PROTECTOR in rendered:
                        choices = [choice.strip().replace(PIPE_PROTECTOR, PIPE) for choice in rendered.split(PIPE)]
                    else:
                        choices = list(map(str.strip, rendered.split(PIPE)))
                    self._last_choices = (rendered, choices)
            protected["answer_choices"] = choices
            text = fast(protected)
            if type(text) is not str:
                return None
            parts = text.split(PIPE)
            if len(parts) != 2:
                return None
            first, second = parts
            if PIPE_PROTECTOR in text:
                return (
                    first.replace(PIPE_PROTECTOR, PIPE).strip(),
                    second.replace(PIPE_PROTECTOR, PIPE).strip(),
                    choices,
                )
            return first.strip(), second.strip(), choices
        except Exception:  # apply() says what went wrong
            return None

    def _parts_error(self, parts: Sequence[str]) -> FieldError:
        count = f"{len(parts)} part{'s' if len(parts) != 1 else ''}"
        if not any(parts):
            # promptsource templates wrap themselves in {% if ... %} to skip records
            # they do not apply to (copa's "why?" templates on "effect" questions, ...)
            return FieldError(
                f"{self.label} rendered nothing for this record ({count}, all blank): its conditions "
                "leave every part out, so the template does not apply to it",
                key=f"{self.key}.jinja",
                hint="render this template only on records it applies to, or choose another template "
                "(--template N|NAME|ID)",
            )
        if len(parts) == 1:
            return FieldError(
                f"{self.label} rendered 1 part with no '|||' in it, not 2 (input ||| output)",
                key=f"{self.key}.jinja",
                hint="the template needs exactly one ||| that renders for every record; one inside an "
                "{% if %} that is false for this record gives no output",
            )
        return FieldError(
            f"{self.label} rendered {count} separated by '|||', not 2 (input ||| output)",
            key=f"{self.key}.jinja",
            hint="the template needs exactly one ||| that renders; a ||| inside a list or nested "
            "field of the record is not protected (only top-level string fields are)",
        )

    def answer_choices_list(self, record: Mapping[str, Any]) -> list[str] | None:
        """The answer choices alone (promptsource's ``get_answer_choices_list``)."""
        if self._compiled is None:
            self.compile()
        if self._choices is None:
            return None
        token = _RNG.set(random.Random(record_seed(self.seed, record))) if self.draws else None
        try:
            compiled = self._choices
            if self.draws_per_record:
                compiled = self._compile("answer_choices", self.answer_choices, cache=False)
            rendered = self._render(compiled, _escape(record), "answer_choices", record)
        finally:
            if token is not None:
                _RNG.reset(token)
        return [_unescape(choice.strip()) for choice in rendered.split(PIPE)]

    def fixed_answer_choices(self) -> list[str] | None:
        """The answer choices when they are the same for every record (promptsource's
        ``get_fixed_answer_choices_list``): ``None`` without ``answer_choices`` or when
        they use any variable; otherwise rendered with no record, split on ``|||`` and
        stripped (no ``|||`` protection: there is no data to protect)."""
        if self.answer_choices is None:
            return None
        if self._compiled is None:
            self.compile()
        from jinja2 import meta

        environment = jinja_env.environment(self.profile)
        if meta.find_undeclared_variables(environment.parse(self.answer_choices)):
            return None
        token = _RNG.set(random.Random(f"{self.seed}:")) if self.semantics == "promptsource" else None
        try:
            compiled = self._choices
            if self.draws_per_record:
                compiled = self._compile("answer_choices", self.answer_choices, cache=False)
            rendered = self._render(compiled, {}, "answer_choices", {})
        finally:
            if token is not None:
                _RNG.reset(token)
        return [choice.strip() for choice in rendered.split(PIPE)]

    def _render(self, compiled: Any, context: dict[str, Any], part: str, record: Mapping[str, Any]) -> str:
        _, undefined_error, security_error = jinja_env.errors()
        key = f"{self.key}.{part}"
        try:
            return jinja_env.render(compiled, context, record=True)
        except undefined_error as exc:
            hint = _keys(record, undefined_name(exc.message)) + (f"; {self.missing_hint}" if self.missing_hint else "")
            raise FieldError(f"{self.label}: {exc.message}", key=key, hint=hint) from None
        except security_error as exc:
            raise FieldError(f"{self.label}: not allowed in the sandbox: {exc}", key=key) from None
        except PromptStyleError as exc:  # a sandbox budget
            raise exc.locate(key=key) from None
        except Exception as exc:  # the template itself failed, e.g. 1 / 0 or a bad index
            raise FieldError(f"{self.label} raised {type(exc).__name__}: {exc}", key=key) from None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_compiled"] = state["_choices"] = None
        state["_fast"] = state["_last_choices"] = (None, None)
        state.pop("_draws", None)
        return state


class _Cached:
    """Renders each record once for its three parts: ``doc_to_text``,
    ``doc_to_choice`` and ``doc_to_target`` ask in turn for the same record.

    The last record is kept with its result (one tuple, replaced atomically), so
    identity is a safe key: the record cannot be freed and its id reused.
    """

    __slots__ = ("template", "_last")

    def __init__(self, template: TaskTemplate) -> None:
        self.template = template
        self._last: tuple[Any, Applied] | None = None

    def get(self, record: Mapping[str, Any]) -> Applied:
        last = self._last
        if last is not None and last[0] is record:
            return last[1]
        applied = self.template.apply(record)
        self._last = (record, applied)
        return applied

    def __getstate__(self) -> dict[str, Any]:
        return {"template": self.template}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.template = state["template"]
        self._last = None


_PARTS = {"input": 0, "output": 1, "answer_choices": 2}


class TemplatePart:
    """A field extractor for one part of a rendered template: ``input``,
    ``output`` or ``answer_choices`` (the core wraps it like any callable spec)."""

    __slots__ = ("cache", "part")
    pure = True  # a function of the record (and the template's seed)

    def __init__(self, cache: _Cached, part: str) -> None:
        self.cache = cache
        self.part = part

    def __call__(self, record: Mapping[str, Any]) -> Any:
        return getattr(self.cache.get(record), self.part)

    def fast_parts(self) -> tuple[Any, Any, int] | None:
        """For the renderer's fast path: ``(key, apply, position)``, where ``apply(record)``
        gives ``(input, output, answer_choices)`` or ``None`` (:meth:`TaskTemplate.fast_apply`),
        ``position`` is this part's place in it, and the parts of one template share
        ``key``; ``None`` when the template renders in the sandbox only (promptsource's
        random draws, what the compiler does not take)."""
        template = self.cache.template
        if template._compiled is None:
            template.compile()
        if template.draws_per_record or template._fast[1] is None:
            return None
        return self.cache, template.fast_apply, _PARTS[self.part]

    def __getstate__(self) -> dict[str, Any]:
        return {"cache": self.cache, "part": self.part}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.cache = state["cache"]
        self.part = state["part"]

    def __repr__(self) -> str:
        return f"<{self.part} of {self.cache.template.label}>"


def template_parts(template: TaskTemplate) -> tuple[TemplatePart, TemplatePart, TemplatePart]:
    """Extractors for the input, output and answer choices of ``template``,
    sharing one render per record."""
    cache = _Cached(template)
    return TemplatePart(cache, "input"), TemplatePart(cache, "output"), TemplatePart(cache, "answer_choices")
