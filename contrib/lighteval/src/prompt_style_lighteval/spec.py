"""The tasks ``PROMPT_STYLE_LIGHTEVAL_TASKS`` names, read without lighteval.

The variable holds one or more entries, separated by ``;`` or new lines. An
entry is a task file followed by options, ``KEY=VALUE`` words as inspect_ai's
``-T`` takes them (a value is read as YAML: ``5`` is a number, ``false`` a
flag; quote words with spaces as a shell would)::

    PROMPT_STYLE_LIGHTEVAL_TASKS='examples/mmlu/task.yaml shots=1 name=mmlu_1shot; examples/arc/task.yaml meta=messages'

An entry ``@FILE`` reads entries from a file, one per line (``#`` starts a
comment); paths in it are relative to that file's directory, paths in the
variable to the current directory.

The options are ``prompt-style render``'s (``style``, ``style_options``, ``meta``,
``meta_options``, ``model_args``, ``shots``, ``seed``, ``data``,
``trust_code``, ``template``, ``task_format``, ``system_instruction``,
``fewshot_as_multiturn``, ``mode``, ``data_root``; see
:func:`prompt_style.task_options`) and the bridge's own (:data:`BRIDGE_OPTIONS`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_style import TASK_OPTIONS, OptionError, PromptStyleError, load_yaml, task_options

__all__ = ["ENV", "BRIDGE_OPTIONS", "TaskSpec", "read_specs", "bridge_options"]

ENV = "PROMPT_STYLE_LIGHTEVAL_TASKS"
"""The environment variable ``prompt_style_lighteval.tasks`` reads."""

BRIDGE_OPTIONS: dict[str, str] = {
    "name": "the task's name in lighteval (default: the task's own name)",
    "metrics": "lighteval metric names, e.g. loglikelihood_acc (default: by the task's kind)",
    "generation_size": "the most tokens a generation task generates (default: the model's)",
    "version": "the task's version in lighteval's results (default 0)",
}
"""The options of a lighteval task that are not prompt-style's render options."""


@dataclass(frozen=True)
class TaskSpec:
    """One task for lighteval: a task file and how to load and name it."""

    path: Path
    load_options: Mapping[str, Any] = field(default_factory=dict)
    """:func:`prompt_style.load_task` keyword arguments."""
    bridge: Mapping[str, Any] = field(default_factory=dict)
    """The :data:`BRIDGE_OPTIONS` given."""


def bridge_options(values: Mapping[str, Any], *, where: str | None = None) -> dict[str, Any]:
    """Check the bridge's own options (:data:`BRIDGE_OPTIONS`).

    :raises OptionError: naming the option.
    """
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if key == "name":
            ok = isinstance(value, str) and value and "|" not in value and "," not in value
            if not ok:
                raise OptionError(f"must be a name without '|' or ',', not {value!r}", key=key, file=where)
        elif key == "metrics":
            value = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
            if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
                raise OptionError("must be a metric name or a list of them", key=key, file=where)
            value = list(value)
        elif key in ("generation_size", "version"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise OptionError(f"must be a whole number, 0 or more, not {value!r}", key=key, file=where)
        else:
            raise OptionError(f"unknown option {key!r}", key=str(key), file=where)
        out[key] = value
    return out


def _value(text: str, where: str) -> Any:
    if not text:
        return ""
    try:
        return load_yaml(where, text=text, what="option value").data
    except PromptStyleError:
        return text


def _entry(words: list[str], where: str, base: Path | None) -> TaskSpec:
    path, *rest = words
    given: dict[str, Any] = {}
    for word in rest:
        key, sep, text = word.partition("=")
        if not sep or not key:
            raise OptionError(
                f"expected KEY=VALUE after the task file, got {word!r}",
                file=where,
                hint="e.g. task.yaml shots=5 meta=messages",
            )
        given[key] = _value(text, where)
    ours = {k: given.pop(k) for k in list(given) if k in BRIDGE_OPTIONS}
    unknown = [k for k in given if k not in TASK_OPTIONS]
    if unknown:  # one message for the two vocabularies, with a did-you-mean over both
        from difflib import get_close_matches

        close = get_close_matches(unknown[0], [*TASK_OPTIONS, *BRIDGE_OPTIONS], n=1)
        raise OptionError(
            f"unknown option {unknown[0]!r}",
            key=unknown[0],
            file=where,
            hint=f"did you mean {close[0]!r}?" if close else "see prompt_style.TASK_OPTIONS and BRIDGE_OPTIONS",
        )
    task_path = Path(path)
    if base is not None and not task_path.is_absolute():
        task_path = base / task_path
    return TaskSpec(task_path, task_options(given, where=where, base=base), bridge_options(ours, where=where))


def _split(text: str) -> list[tuple[int, list[str]]]:
    """Entries as ``(line number, words)``: lines, and ``;`` outside quotes."""
    entries: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in lexer:
            if set(token) == {";"}:
                if current:
                    entries.append((number, current))
                current = []
            else:
                current.append(token)
        if current:
            entries.append((number, current))
    return entries


def read_specs(
    text: str, *, source: Path | None = None, base: Path | None = None, _seen: tuple[Path, ...] = ()
) -> list[TaskSpec]:
    """The tasks an entry list names: the variable's value, or the text of an
    ``@FILE`` (``source``, whose directory relative paths resolve against).

    :raises OptionError: naming the entry (``PROMPT_STYLE_LIGHTEVAL_TASKS entry 2``,
        or the file and line) for an option that is unknown or of the wrong kind,
        or an ``@FILE`` that cannot be read.
    """
    specs: list[TaskSpec] = []
    try:
        entries = _split(text)
    except ValueError as exc:  # shlex: an unclosed quote
        raise OptionError(f"cannot read the entries: {exc}", file=str(source) if source else ENV) from None
    for count, (line, words) in enumerate(entries, 1):
        where = f"{source}:{line}" if source is not None else f"{ENV} entry {count}"
        try:
            if words[0].startswith("@"):
                specs += _include(words, base, _seen)
            else:
                specs.append(_entry(words, where, base))
        except OptionError as exc:
            raise exc.locate(file=where) from None
    return specs


def _include(words: list[str], base: Path | None, seen: tuple[Path, ...]) -> list[TaskSpec]:
    listed = Path(words[0][1:])
    if base is not None and not listed.is_absolute():
        listed = base / listed
    if len(words) > 1:
        raise OptionError(f"an @FILE entry takes no options, got {' '.join(words[1:])!r}")
    if listed.resolve() in seen:
        raise OptionError(f"{listed} includes itself")
    try:
        content = listed.read_text(encoding="utf-8")
    except OSError as exc:
        raise OptionError(f"cannot read the task list {listed}: {exc.strerror}") from None
    return read_specs(content, source=listed, base=listed.parent, _seen=(*seen, listed.resolve()))


def specs_from_environment(environ: Mapping[str, str] | None = None) -> list[TaskSpec]:
    """The tasks ``PROMPT_STYLE_LIGHTEVAL_TASKS`` names (none when it is unset or empty)."""
    value = (os.environ if environ is None else environ).get(ENV, "")
    return read_specs(value) if value.strip() else []
