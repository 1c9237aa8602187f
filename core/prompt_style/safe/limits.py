"""Budgets for untrusted templates and files, and where their settings come from.

Two frozen dataclasses hold them: :class:`JinjaLimits` (one render) and
:class:`YamlLimits` (one YAML file). Every budget has a default generous enough
for every real template and task file we know of (docs/security.md lists them
and how they were checked); a trusted input that needs more raises it:

- in Python, per call: ``load_task(..., limits=JinjaLimits(deadline=5))``,
  ``jinja_env.render(compiled, context, JinjaLimits(...))``,
  ``load_yaml(path, limits=YamlLimits(...))``;
- per process: ``PROMPT_STYLE_LIMITS="deadline=5,max_output=50000000"`` in the
  environment, ``prompt-style render --budget deadline=5``, or
  :func:`configure`;
- in a block of code: ``with limits_scope(JinjaLimits(...)):``.

Budget names are unique across both classes, so one ``NAME=VALUE`` list sets
either. A task file cannot raise its own budgets: they protect the user from
the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..errors import OptionError

__all__ = [
    "JinjaLimits",
    "YamlLimits",
    "ENV_LIMITS",
    "configure",
    "parse_assignments",
    "jinja_limits",
    "yaml_limits",
    "limits_scope",
    "reload",
    "configured",
]

ENV_LIMITS = "PROMPT_STYLE_LIMITS"


CLOCK_CAP = 1 << 20
"""The most characters compiled Jinja code handles in one render (see
``fields/jinja_compiler``'s module doc): no render's size threshold is above it."""

SIZE_FLOOR: list[int] = [CLOCK_CAP]
"""``[n]``: no render's size threshold (``jinja_compiler.budget_threshold()``) is below
``n``, the least size budget of every :class:`JinjaLimits` made in this process and
:data:`CLOCK_CAP`. A fast path that builds a string of at most ``n`` characters
needs no budget read (one list lookup per record instead of a context lookup)."""

INT_BITS_FLOOR: list[int] = [14_000]
"""``[n]``: no :class:`JinjaLimits` made in this process has ``max_int_bits`` below ``n``
(the default, or the least one made): compiled code turns a text of at most ``n // 5``
characters into a number (the ``int`` filter) where the sandbox checks nothing either."""


ITER_FLOOR: list[int] = [10_000_000]
"""``[n]``: no :class:`JinjaLimits` made in this process has ``max_loop_iterations`` below
``n`` (the default, or the least one made): compiled code runs a ``{% for %}`` loop of at
most ``n`` iterations in all where the sandbox would not stop it either."""


RANGE_FLOOR: list[int] = [100_000]
"""``[n]``: no :class:`JinjaLimits` made in this process has ``max_range`` below ``n``:
compiled code makes a ``range()`` of at most ``n`` items where the sandbox would not stop."""


SECONDS_PER_STEP = 3e-7
"""The wall-clock time a scaled deadline allows per loop iteration and macro call: about
three times what one iteration of a real chat template's loop costs in ``hf``'s code
generator (Gemma 4 on 4,000 messages: about 8 million iterations in 0.9 s), so a render
within the counted budgets ends before the deadline even with every core busy, and a
template that only the clock stops (a bomb in Jinja's own renderer, ten times slower per
iteration) stops within seconds."""
MIN_DEADLINE = 3.0
"""The least scaled deadline, in seconds."""


@dataclass(frozen=True)
class JinjaLimits:
    """Budgets on one render of one template. Every stop is a
    :class:`~prompt_style.LimitError` naming the budget, the template and the
    record. Sizes count characters (strings) or items (lists)."""

    max_source: int = 100_000
    """Characters of template source (checked when compiling; Jinja compiles
    about 200,000 characters a second, so this also bounds load time)."""
    max_tokens: int = 15_000
    """Jinja tokens in a template source (names, operators, literals, runs of
    text): parsing an expression-heavy source costs up to ~20 µs a token. The
    largest chat template we know has about 3,000."""
    max_output: int = 10_000_000
    """Characters a render may return, and that one printed value may have."""
    max_string: int = 10_000_000
    """Characters one operation may build: ``'a' * n``, ``center(n)``,
    ``indent``, ``format``, ``replace``, ``join``, ``~``, ``%``, ``str.format``..."""
    max_items: int = 1_000_000
    """Items one operation may build: ``[x] * n``, ``list + list``, ``batch``, ``sum``..."""
    max_range: int = 100_000
    """Items one ``range()`` may produce."""
    max_loop_iterations: int = 10_000_000
    """Loop iterations in one render, all ``{% for %}`` loops together. Sized for
    templates whose loops grow with the square of the conversation (Gemma 4 looks ahead
    from every message: about 4,400 messages)."""
    max_macro_calls: int = 1_000_000
    """Calls of the template's own macros (and ``caller()``) in one render: with loop
    iterations, what bounds the code a render runs (a macro that calls itself twice
    stops here, not on the clock)."""
    max_work: int = 100_000_000
    """Characters and items built in one render, all operations together (printed
    values, macro results, literal text repeated by loops, concatenations):
    bounds memory and time where each single operation is within budget."""
    max_filter_input: int = 1_000_000
    """Characters given to the filters that work character by character in
    Python (``wordwrap``, ``urlize``, ``pprint``, ``title``, ``striptags``,
    ``regex_replace``), so that each call ends in well under a second."""
    max_int_bits: int = 14_000
    """Bits of an integer that an operator, filter or method may build (``2 ** 10 **
    9``, ``'f' * 10**6 | int(base=16)``, ``5 | round(-10**9)``); the default is about
    the 4,300 digits Python agrees to print."""
    deadline: float | None = None
    """Seconds of wall-clock time one render may take (watched by a timer thread,
    checked at every loop iteration, call, macro call and filter; a regular
    expression is interrupted); a render stops at most about 60 ms after it. A last
    resort: the budgets above decide whether a render succeeds, the same on a busy
    machine as on an idle one. ``None`` (the default, ``deadline=auto``) scales it to
    them (:attr:`seconds`)."""

    @property
    def seconds(self) -> float:
        """The deadline in force: :attr:`deadline`, else :data:`SECONDS_PER_STEP` per loop
        iteration and macro call the budgets allow, at least :data:`MIN_DEADLINE` (3.3 s
        with the defaults)."""
        if self.deadline is not None:
            return self.deadline
        return max(MIN_DEADLINE, SECONDS_PER_STEP * (self.max_loop_iterations + self.max_macro_calls))

    max_op_cost: int = 50_000_000
    """The cost one operation may have (a filter, a method, an operator, printing a
    value), estimated from its operands before it runs, in steps: about one per
    character a C loop copies or compares, more per character looked up in a table,
    per object created, per comparison of a sort, per item handled by Python code
    (docs/security.md lists them). The default is about 50 ms of work: budgets are
    counted between operations, so no single one may run long."""

    def __post_init__(self) -> None:
        sizes = (self.max_work, self.max_string, self.max_output, self.max_items, self.max_op_cost)
        if all(type(size) is int for size in sizes):  # other values: _checked says what is wrong
            least = self.size_threshold()
            if 0 <= least < SIZE_FLOOR[0]:  # (0: max_op_cost under 40 leaves no room)
                SIZE_FLOOR[0] = least
        bits = self.max_int_bits
        if type(bits) is int and bits < INT_BITS_FLOOR[0]:
            INT_BITS_FLOOR[0] = max(bits, 0)
        iterations = self.max_loop_iterations
        if type(iterations) is int and iterations < ITER_FLOOR[0]:
            ITER_FLOOR[0] = max(iterations, 0)
        items = self.max_range
        if type(items) is int and items < RANGE_FLOOR[0]:
            RANGE_FLOOR[0] = max(items, 0)

    def size_threshold(self) -> int:
        """The characters a render may build without any of these budgets being able to
        stop it (at most :data:`CLOCK_CAP`): fast paths that build strings themselves
        hand longer ones to the sandbox. ``max_op_cost // 40``: no text method of a
        string that long, and no printing of a value whose text is that long, costs
        more than ``max_op_cost`` (see ``_sandbox/costs.py``)."""
        return min(self.max_work, self.max_string, self.max_output, self.max_items, self.max_op_cost // 40, CLOCK_CAP)

    def __reduce__(self) -> tuple[Any, ...]:
        # Made again through __init__ when unpickled (a worker process) or copied, so
        # that __post_init__ lowers SIZE_FLOOR there too: pickle's default would set the
        # fields without it, and fast paths would skip budgets they must check.
        return (JinjaLimits, tuple([getattr(self, f.name) for f in dataclasses.fields(self)]))

    def replace(self, **changes: Any) -> "JinjaLimits":
        """A copy with ``changes`` (checked like every other setting)."""
        return _checked(dataclasses.replace(self, **changes))


@dataclass(frozen=True)
class YamlLimits:
    """Budgets on the files a task reads: each YAML file (task files, includes, meta
    templates, promptsource files), every other file named by a task or a command
    (templates, conversations), the files one task reads in all, and the lines of
    JSON Lines data. Every stop is a :class:`~prompt_style.YamlLimitError` (a
    :class:`~prompt_style.DataError` for data) naming the file."""

    max_file_bytes: int = 16_000_000
    """Bytes of the file (or characters of YAML text); of a template, meta template,
    conversation or replies file too."""
    max_nodes: int = 100_000
    """Scalars, lists and mappings in the document, counting every alias as
    the nodes it stands for: a "billion laughs" stops at once."""
    max_depth: int = 100
    """Lists and mappings nested in one another."""
    max_task_files: int = 1_000
    """Files read to load one task: its file and every file it includes, counted each
    time it is included (six files each including the next 40 times would read 10**8)."""
    max_task_bytes: int = 64_000_000
    """Bytes of those files, all together."""
    max_line_length: int = 16_000_000
    """Characters of one line of a JSON Lines data file (one record), read in linear time."""

    def replace(self, **changes: Any) -> "YamlLimits":
        return _checked(dataclasses.replace(self, **changes))


_FIELDS: dict[str, type] = {f.name: JinjaLimits for f in dataclasses.fields(JinjaLimits)}
_FIELDS.update({f.name: YamlLimits for f in dataclasses.fields(YamlLimits)})


def _checked(limits: Any) -> Any:
    for f in dataclasses.fields(limits):
        value = getattr(limits, f.name)
        if value is None and f.name == "deadline":
            continue  # scaled to the other budgets
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:  # nan too
            raise OptionError(f"budget {f.name} must be a positive number, not {value!r}", key=f.name)
        if f.name != "deadline" and not isinstance(value, int):
            raise OptionError(f"budget {f.name} must be a whole number, not {value!r}", key=f.name)
    return limits


def _number(name: str, text: str) -> int | float | None:
    text = text.strip().replace("_", "")
    if name == "deadline" and text.lower() == "auto":
        return None  # type: ignore[return-value]
    try:
        value = float(text) if name == "deadline" else int(float(text)) if "e" in text.lower() else int(text)
    except (ValueError, OverflowError):  # OverflowError: int(float("1e400"))
        raise OptionError(f"budget {name} must be a number, not {text!r}", key=name) from None
    return value


def parse_assignments(items: str | list[str] | tuple[str, ...], *, what: str = ENV_LIMITS) -> dict[str, Any]:
    """``{"deadline": 2.0, ...}`` from ``"deadline=2,max_output=5e7"`` (or a list of
    ``NAME=VALUE``); unknown names are errors with a did-you-mean."""
    from .._suggest import did_you_mean

    if isinstance(items, str):
        items = [part for part in items.split(",") if part.strip()]
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise OptionError(f"{what}: expected NAME=VALUE, not {item!r}", key=what)
        if name not in _FIELDS:
            hint = did_you_mean(name, _FIELDS) or f"budgets: {', '.join(_FIELDS)}"
            raise OptionError(f"{what}: unknown budget {name!r}", key=what, hint=hint)
        out[name] = _number(name, value)
    return out


_configured: dict[str, Any] = {}
_cache: dict[type, Any] = {}


def _defaults(cls: type) -> Any:
    cached = _cache.get(cls)
    if cached is None:
        env = os.environ.get(ENV_LIMITS, "")
        settings = {**parse_assignments(env), **_configured} if env.strip() else dict(_configured)
        mine = {name: value for name, value in settings.items() if _FIELDS[name] is cls}
        cached = _cache[cls] = _checked(cls(**mine))
    return cached


def reload() -> None:
    """Forget the cached process defaults, so that ``PROMPT_STYLE_LIMITS`` is read again
    (now: the new budgets lower :data:`SIZE_FLOOR` at once; a bad setting is reported
    where budgets are next needed)."""
    _cache.clear()
    try:
        _defaults(JinjaLimits)
    except OptionError:
        _cache.clear()


_SCOPE: ContextVar[JinjaLimits | None] = ContextVar("prompt_style_jinja_limits", default=None)


def jinja_limits() -> JinjaLimits:
    """The budgets a render gets when its caller names none: the innermost
    :func:`limits_scope`, else the process defaults (``PROMPT_STYLE_LIMITS``,
    :func:`configure`), else the class defaults."""
    scoped = _SCOPE.get()
    return scoped if scoped is not None else _defaults(JinjaLimits)


def yaml_limits() -> YamlLimits:
    """The process-wide YAML budgets (``PROMPT_STYLE_LIMITS``, read when first
    needed, and :func:`configure`)."""
    return _defaults(YamlLimits)


def configure(settings: Mapping[str, Any] | None = None, **more: Any) -> None:
    """Set process-wide budgets by name (``configure(deadline=2)``), over
    ``PROMPT_STYLE_LIMITS``; ``configure(None)`` with no names clears them."""
    changes = {**dict(settings or {}), **more}
    _cache.clear()
    if not changes:
        _configured.clear()
        return
    for name, value in changes.items():
        if name not in _FIELDS:
            parse_assignments([f"{name}=0"], what="configure")  # raises with did-you-mean
        _checked(_FIELDS[name](**{name: value}))
    _configured.update(changes)


@contextlib.contextmanager
def configured(settings: Mapping[str, Any]) -> Iterator[None]:
    """:func:`configure` for the duration of a block (the CLI's ``--budget``)."""
    saved = dict(_configured)
    configure(settings)
    try:
        yield
    finally:
        _configured.clear()
        _configured.update(saved)
        _cache.clear()


@contextlib.contextmanager
def limits_scope(limits: JinjaLimits | None) -> Iterator[None]:
    """Renders inside the block that name no budgets get ``limits``."""
    if limits is None:
        yield
        return
    token = _SCOPE.set(_checked(limits))
    try:
        yield
    finally:
        _SCOPE.reset(token)
