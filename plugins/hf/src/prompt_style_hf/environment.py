"""The sandbox a Hugging Face chat template renders in.

transformers renders ``chat_template`` in an ``ImmutableSandboxedEnvironment``
with ``trim_blocks``, ``lstrip_blocks``, loop controls, Jinja's lenient
``Undefined``, a ``tojson`` filter that does not escape HTML, the globals
``raise_exception`` and ``strftime_now``, a restricted ``dict`` and
``namespace``, and a ``{% generation %}`` tag that marks what the assistant
says (``transformers/utils/chat_template_utils.py``). :data:`HF_CHAT` is that
environment described as a profile of prompt-style's one sandbox
(:mod:`prompt_style.safe.jinja_env`), so the sandbox's budgets apply to chat
templates too.

This module imports jinja2; the plugin imports it only when a template is used.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.ext import Extension
from jinja2.utils import Namespace

from prompt_style import JinjaProfile
from prompt_style.safe import budget_getter, check_method_call, current_budget

from . import tool_cache
from .json_indent import dumps

__all__ = [
    "HF_CHAT",
    "GENERATION_MARK",
    "GENERATION_START",
    "GENERATION_END",
    "TRACK_GENERATION",
    "raise_exception",
    "tojson",
    "strftime_now",
    "fixed_strftime_now",
    "TemplateDict",
    "TemplateNamespace",
    "NAMESPACE_ATTRIBUTES",
    "GenerationBlocks",
]

# Around the output of a {% generation %} block while spans are tracked: a
# Unicode noncharacter and a random token of this process (so no input can hold
# one), then ">" (start) or "<" (end). The renderer removes them and records
# where they were.
GENERATION_MARK = "\ufdd0" + secrets.token_hex(8)
GENERATION_START = GENERATION_MARK + ">"
GENERATION_END = GENERATION_MARK + "<"
TRACK_GENERATION = "_prompt_style_track_generation"
"""The context variable that switches span tracking on for one render."""


def raise_exception(message: Any) -> None:
    """``{{ raise_exception('...') }}``: the template refuses the conversation."""
    raise TemplateError(message)


def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False):
    """transformers' ``tojson``: ``json.dumps`` without Jinja's HTML escaping (indented
    JSON of plain data by :func:`~prompt_style_hf.json_indent.dumps`, the same text faster)."""
    key, text = _cached(x, ensure_ascii, indent, separators, sort_keys)
    if text is None:
        text = dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
        if key is not None:
            tool_cache.remember_json(x, key, text)
    return text


def _cached(x: Any, ensure_ascii: Any, indent: Any, separators: Any, sort_keys: Any) -> tuple[Any, str | None]:
    """``(key, text)``: the tools cache's key for these ``tojson`` arguments and the text
    made before for ``x`` with them (``None``); ``(None, None)`` for an argument that is
    not hashable (nothing cached)."""
    try:
        # (types too: indent=4.0 fails in json.dumps where indent=4 does not, yet 4.0 == 4)
        seps = tuple(separators) if type(separators) is list else separators
        key = (ensure_ascii, type(ensure_ascii), indent, type(indent), seps, sort_keys, type(sort_keys))
        return key, tool_cache.cached_json(x, key)
    except TypeError:
        return None, None


_TOJSON = "ps-hf-tojson"  # the guarded json.dumps (a name no template can write)


@jinja2.pass_environment
def tojson_filter(environment: Any, x: Any, *args: Any, **kwargs: Any) -> str:
    """``tojson`` as templates call it: a lazy sequence (``tools|map(...)|tojson``)
    fails as ``json.dumps`` fails on it in transformers ("Object of type generator is
    not JSON serializable"), not as printing one fails in the sandbox; anything else
    goes to :func:`tojson` through the sandbox's budget checks."""
    kind = type(x)
    if (kind is dict or kind is list) and not args and not kwargs:
        # The commonest call, {{ tool.parameters|tojson }} of a tool made before:
        # _cached_tojson's steps for the default arguments, in one function (it runs once
        # per tool and render). Anything else takes the general path below.
        found = _JSON_TEXTS_GET(id(x))
        if found is not None and found[0] is x:
            text = found[1].get(_DEFAULT_KEY)
            if text is not None:
                budget = _active() or current_budget()
                if budget.due:
                    budget.tick()
                size = len(text)
                if size <= budget.limits.max_string:
                    budget.work += size  # budget.charge(size), inline
                    if budget.work > budget.work_check:
                        budget.over()
                    return text
        return environment.filters[_TOJSON](x)
    if hasattr(x, "__next__") and not isinstance(x, (str, bytes, list, tuple, dict)):
        # The sandbox may wrap the lazy result of a filter to count its items; its
        # type is the wrapped iterator's.
        inner = getattr(x, "_it", x) if type(x).__module__.startswith("prompt_style.") else x
        raise TypeError(f"Object of type {type(inner).__name__} is not JSON serializable")
    if (type(x) is dict or type(x) is list) and len(args) + len(kwargs) <= 4:
        text = _cached_tojson(x, args, kwargs)
        if text is not None:
            return text
    return environment.filters[_TOJSON](x, *args, **kwargs)


_TOJSON_PARAMS = ("ensure_ascii", "indent", "separators", "sort_keys")
_TOJSON_DEFAULTS = (False, None, None, False)
_DEFAULT_KEY = (False, bool, None, type(None), None, False, bool)
"""_cached's key for tojson's default arguments."""
_JSON_TEXTS_GET = tool_cache.JSON_TEXTS.get
_active = budget_getter()


def _cached_tojson(x: Any, args: tuple, kwargs: dict) -> str | None:
    """The text ``tojson`` made before for ``x`` (a container of a cached copy of the
    tools, see tool_cache) with the same arguments, charged as the text it is: the
    sandbox's checks before ``json.dumps`` walk the whole value (its shape and size), which
    for a text already made costs more than the text itself (a hundred tools, each
    ``tojson(indent=4)``, every render). ``None`` when there is none, or when the text is
    past the per-operation size (then the guarded filter says so)."""
    if kwargs and not set(kwargs) <= set(_TOJSON_PARAMS[len(args) :]):
        return None
    values = [*args, *_TOJSON_DEFAULTS[len(args) :]]
    for name, value in kwargs.items():
        values[_TOJSON_PARAMS.index(name)] = value
    text = _cached(x, *values)[1]
    if text is None:
        return None
    budget = _active() or current_budget()
    if budget.due:
        budget.tick()
    if len(text) > budget.limits.max_string:
        return None
    budget.charge(len(text))
    return text


tojson_filter.ps_guarded = True  # type: ignore[attr-defined]  # it calls the guarded filter


def strftime_now(format: str) -> str:
    """The real clock, as transformers reads it (local time)."""
    return datetime.now().strftime(format)


@lru_cache(maxsize=64)
def fixed_strftime_now(now: datetime) -> Callable[[str], str]:
    """A ``strftime_now`` that reads a fixed clock (the ``now`` option)."""

    def strftime_now(format: str) -> str:
        return now.strftime(format)

    return strftime_now


class TemplateDict:
    """transformers' ``dict`` global: calling it and ``dict.fromkeys`` only, so a
    template cannot reach the type's other attributes."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        # Sized as the sandbox sizes {}.fromkeys (its items against max_items and max_op_cost).
        args = check_method_call({}, "fromkeys", args, kwargs)
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(Namespace):
    """transformers' ``namespace``: no underscore-prefixed attributes.

    Its attributes live in a slot named as Jinja's ``Namespace`` names them, so
    that code generators read them with the slot's descriptor
    (:data:`NAMESPACE_ATTRIBUTES`) instead of ``Namespace.__getattribute__``."""

    __slots__ = ("_Namespace__attrs",)  # a plain string: not mangled

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - Jinja's signature trick: namespace(self=...)
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            if type(name) is not str or name[:1] == "_":
                TemplateNamespace._check_name(name)
        # Namespace.__init__(self, attrs), without copying attrs again.
        object.__setattr__(self, "_Namespace__attrs", attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        TemplateNamespace._check_name(name)
        Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
                "Please rename the attribute."
            )


# Jinja names an object's class by module and name in its messages ("'...TemplateDict
# object' has no attribute 'from_keys'"); these two are transformers' classes, so a
# template's error reads as it does under transformers.
TemplateDict.__module__ = TemplateNamespace.__module__ = "transformers.utils.chat_template_utils"

NAMESPACE_ATTRIBUTES = TemplateNamespace.__dict__["_Namespace__attrs"]
"""The slot holding a :class:`TemplateNamespace`'s attributes (a dict):
``NAMESPACE_ATTRIBUTES.__get__(ns)``, ``NAMESPACE_ATTRIBUTES.__set__(ns, attrs)``."""


class GenerationBlocks(Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body; while spans are
    tracked (the context variable :data:`TRACK_GENERATION` is true) the body's
    output is wrapped in :data:`GENERATION_START` / :data:`GENERATION_END`."""

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        track = nodes.Name(TRACK_GENERATION, "load")
        return nodes.CallBlock(self.call_method("_generation", [track]), [], [], body).set_lineno(lineno)

    def _generation(self, track: Any, caller: Callable[[], str]) -> str:
        output = caller()
        if track is True:
            return f"{GENERATION_START}{output}{GENERATION_END}"
        return output


SHARED_CLOCK = "strftime_now" in {f.name for f in dataclasses.fields(JinjaProfile)}
"""Whether the sandbox itself offers transformers' ``strftime_now`` on the render's
clock (``JinjaProfile(strftime_now=True)``: ``render(now=...)``, ``fixed_clock``,
``PROMPT_STYLE_NOW``); if not, this module's real-clock ``strftime_now`` is used."""

HF_CHAT = JinjaProfile(
    "hf-chat",
    trim_blocks=True,
    lstrip_blocks=True,
    strict_undefined=False,
    loop_controls=True,
    filters=(("tojson", tojson_filter), (_TOJSON, tojson)),
    globals=(
        ("raise_exception", raise_exception),
        *(() if SHARED_CLOCK else (("strftime_now", strftime_now),)),
        ("dict", TemplateDict()),
        ("namespace", TemplateNamespace),
    ),
    extensions=(GenerationBlocks,),
    **({"strftime_now": True} if SHARED_CLOCK else {}),
)
"""transformers' chat-template environment, as a profile of prompt-style's sandbox.
The ``now`` option of ``hf`` fixes the clock by passing its own ``strftime_now``
with the render's variables (which shadow the globals)."""
