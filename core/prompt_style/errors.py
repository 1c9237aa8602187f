"""Typed errors: every message says where (file, line, key, record) and what to do."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "PromptStyleError",
    "TaskFileError",
    "DataError",
    "FieldError",
    "StyleError",
    "TargetError",
    "OptionError",
    "RenderError",
    "RecordErrors",
    "ChatTemplateError",
    "PluginError",
    "PluginNotFoundError",
    "PluginConflictError",
    "PluginLoadWarning",
    "LimitError",
    "SandboxError",
    "YamlLimitError",
    "cut",
    "one_line",
    "TaskFileWarning",
    "TokenizerError",
]

MESSAGE_LIMIT = 2_000
"""The most characters an error's text has (``str(error)``, and the command line's
``prompt-style: error: ...`` line): a longer one is cut in the middle, saying how
long it was (a safety net: the code quotes values through :func:`cut` already)."""

# Python's text for functions, methods, classes and objects names their addresses and
# modules: messages quoting one (an exception raised on a template's behalf) say what it
# is instead. (Patterns, compiled by ``re`` when an error is shown: start-up skips them.)
_INTERNALS = (
    r"<(?:built-in (?P<bkind>method|function) (?P<bname>[\w.]+)[^<>]*"
    r"|bound method (?P<mname>[\w.<>]+)[^<>]*"
    r"|(?P<fkind>function|method|coroutine|generator) (?P<fname>[\w.<>]+)(?: at 0x[0-9a-fA-F]+)?[^<>]*"
    r"|(?P<ckind>class|module|enum) '(?P<cname>[^'<>]*)'[^<>]*"
    r"|(?:method-wrapper|slot wrapper|wrapper_descriptor) '(?P<wname>\w+)'[^<>]*"
    r"|(?P<oname>[\w.]+) object at 0x[0-9a-fA-F]+)>"
)
_ADDRESS = r" at 0x[0-9a-fA-F]{4,}"


def _name(dotted: str) -> str:
    name = dotted.rsplit(".", 1)[-1]
    return "range" if name == "_range" else name


def _internal(match: re.Match) -> str:
    found = match.groupdict()
    if found["bname"]:
        return f"the {found['bkind']} {_name(found['bname'])!r}"
    if found["mname"]:
        return f"the method {_name(found['mname'])!r}"
    if found["fname"]:
        return f"the {found['fkind']} {_name(found['fname'])!r}"
    if found["cname"] is not None:
        return f"the {found['ckind']} {_name(found['cname'])!r}"
    if found["wname"]:
        return f"the method {found['wname']!r}"
    return f"a {_name(found['oname'])} object"


def _escape(char: str) -> str:
    if char in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _middle(text: str, limit: int, total: int) -> str:
    marker = f" […{total - limit:,} of {total:,} characters cut…] "
    keep = max(limit - len(marker), 2)
    return text[: keep // 2] + marker + text[len(text) - (keep - keep // 2) :]


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` as one printable line of at most ``limit`` characters: every character
    that is not printable escaped (``\\n``, ``\\r``, ``\\x1b``, ``\\u2028``...), Python's
    text for functions, classes and objects (``<function f at 0x7f...>``) replaced by what
    they are, and a longer text cut in the middle, saying how long it was."""
    if "<" in text or " at 0x" in text:
        text = re.sub(_ADDRESS, "", re.sub(_INTERNALS, _internal, text))
    total = len(text)
    if total > 4 * limit:  # only what is kept gets escaped (escaping can only lengthen it)
        text = text[: 2 * limit] + text[-2 * limit :]
    if not text.isprintable():
        text = "".join(char if char.isprintable() else _escape(char) for char in text)
        if total <= 4 * limit:
            total = len(text)
    if len(text) > limit or total > len(text):
        text = _middle(text, limit, max(total, len(text)))
    return text


def cut(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters, stating the full size:
    ``'aaaa…' (10,240 characters)``. For quoting user values in messages."""
    if isinstance(value, str):
        size = f"{len(value):,} characters"
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({size})"
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real error
        return f"<{type(value).__name__}>"
    if len(text) <= limit:
        return text
    count = ""
    try:
        count = f"{len(value):,} items, "  # type: ignore[arg-type]
    except Exception:
        pass
    return f"{text[:limit]}… ({type(value).__name__}, {count}{len(text):,} characters as text)"


class PromptStyleError(Exception):
    """Base class of every error prompt-style raises on bad input.

    The location (file, line, key, split, record index) is kept apart from the
    message so that outer layers can add what inner layers could not know: an
    extractor knows the field, the renderer knows the record index, the task
    loader knows the file.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        split: str | None = None,
        index: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.split = split
        self.index = index
        self.hint = hint

    def locate(self, **where: Any) -> "PromptStyleError":
        """Fill in location fields that are still unknown; returns ``self``. A ``line``
        given with a ``file`` other than the one the error already names is left out: it
        is a line of that other file."""
        other = where.get("file")
        elsewhere = other is not None and self.file is not None and str(other) != str(self.file)
        for name, value in where.items():
            if value is not None and getattr(self, name) is None and not (elsewhere and name == "line"):
                setattr(self, name, value)
        return self

    def __str__(self) -> str:
        parts = []
        if self.file is not None:
            parts.append(f"{self.file}:{self.line}" if self.line else str(self.file))
        if self.key is not None:
            parts.append(self.key)
        if self.index is not None:
            split = f"split '{self.split}' " if self.split else ""
            parts.append(f"{split}record {self.index}")
        text = ": ".join(parts + [self.message])
        if self.hint:
            text += f" ({self.hint})"
        return one_line(text)

    def __reduce__(self):  # keep locations across processes
        return (_rebuild, (type(self), self.message, self.__dict__))


def _rebuild(cls, message, state):
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class TaskFileError(PromptStyleError):
    """A task file is missing, unreadable, or has a bad key or value."""


class DataError(PromptStyleError):
    """A data file is missing or holds something that is not a record."""


class FieldError(PromptStyleError):
    """A field spec cannot be compiled, or cannot be applied to a record."""


class StyleError(PromptStyleError):
    """A style cannot format a record (for example: fewer labels than choices)."""


class TargetError(FieldError, StyleError):
    """``doc_to_target`` does not name exactly one of the record's choices: out of
    range, not a choice, or ambiguous. The gold answer comes from the task's own
    fields (never from how a style labels the choices), so this is a field error;
    it is also a :class:`StyleError`, which is what code written before targets
    were resolved by the renderer catches."""


class OptionError(PromptStyleError):
    """A plugin was given an unknown or ill-typed option."""


class RenderError(PromptStyleError):
    """User or plugin code raised while a record was rendered."""


class RecordErrors(RenderError):
    """Records of a split that cannot be rendered, reported together rather than one at
    a time: :attr:`errors` holds each record's own error (naming its key and record), in
    record order; the message quotes the first few and counts the rest.

    :param errors: the records' errors (at least one).
    :param total: how many records were rendered in all, when known.
    :param consequence: what the errors stop, after "cannot be rendered" (", so ... would stop").
    """

    SHOWN = 5
    """Records quoted in the message (an error's text stays within its 2,000 characters)."""

    def __init__(
        self, errors: Sequence[PromptStyleError], *, total: int | None = None, consequence: str = "", **where: Any
    ) -> None:
        self.errors = list(errors)
        count = len(self.errors)
        of = f" of {total:,}" if total is not None else ""
        shown = "; ".join(str(error) for error in self.errors[: self.SHOWN])
        more = f"; and {count - self.SHOWN:,} more" if count > self.SHOWN else ""
        noun = "record" if count == 1 and not of else "records"
        super().__init__(f"{count:,}{of} {noun} cannot be rendered{consequence}: {shown}{more}", **where)


class TokenizerError(PromptStyleError):
    """A tokenizer cannot be loaded, or cannot encode what a meta template gives."""


class ChatTemplateError(RenderError):
    """A chat template raised while rendering a conversation (its own
    ``raise_exception(...)``, a Jinja error, or a conversation that transformers'
    ``apply_chat_template`` rejects). ``template_message`` holds the template's
    own message, verbatim; the error's message is the same on one line."""

    def __init__(self, message: str, *, template_message: str | None = None, **where: Any) -> None:
        self.template_message = message if template_message is None else template_message
        super().__init__(message.replace("\r\n", "\n").replace("\n", "\\n"), **where)


class PluginError(PromptStyleError):
    """A plugin is broken, or returned something the core cannot use."""


class PluginNotFoundError(PluginError):
    """No plugin provides the requested name."""


class PluginConflictError(PluginError):
    """Two plugins provide the same name and nothing says which one to use."""


class PluginLoadWarning(UserWarning):
    """A plugin failed to load and was skipped; the others still work."""


class LimitError(PromptStyleError):
    """A safety budget stopped a template or a file (see docs/security.md).

    ``limit`` names the budget (``max_loop_iterations``, ``deadline``,
    ``max_nodes``, ...) and ``value`` its setting, so that a caller can tell
    which one to raise.
    """

    def __init__(self, message: str, *, limit: str, value: object = None, **where: Any) -> None:
        where.setdefault("hint", _raise_hint(limit, value))
        super().__init__(message, **where)
        self.limit = limit
        self.value = value


def _raise_hint(limit: str, value: object) -> str:
    shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
    return (
        f"limit {limit}={shown}; if the input is trusted, raise it with "
        f"PROMPT_STYLE_LIMITS={limit}=N, --budget {limit}=N or the Python API (docs/security.md)"
    )


class SandboxError(PromptStyleError):
    """A template did something the sandbox forbids: reading private
    attributes, changing data, or printing a function, class or internal object."""


class YamlLimitError(LimitError, TaskFileError):
    """A YAML file exceeded a loader budget (size, nesting, nodes, alias expansion)."""


class TaskFileWarning(UserWarning):
    """A task file has a problem that does not stop it from rendering (for
    example task-template metadata outside the allowed values); ``prompt-style
    validate`` reports it as an error or a warning."""
