"""The options of :func:`~prompt_style.load_task` as another tool hands them over.

A harness's command line (inspect_ai's ``-T key=value``), an environment
variable or a generated file give the task-loading options as loosely typed
values: ``"5"`` for a number, ``"test=data.jsonl"`` for a split's data.
:func:`task_options` checks and converts them once, into the keyword arguments
:func:`~prompt_style.load_task` takes, with errors naming the option, so every
bridge reads the options ``prompt-style render`` takes the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._suggest import suggest
from .errors import OptionError, cut

__all__ = ["TASK_OPTIONS", "task_options"]

TASK_OPTIONS: dict[str, str] = {
    "style": "a style replacing the task's template (render --style)",
    "style_options": "options of the style, over the task's template options, a mapping (render --style-option)",
    "meta": "the meta template: a name or a meta template file (render --meta; default plain)",
    "meta_options": "options of the meta template, a mapping (render --meta-option)",
    "model_args": "lm-evaluation-harness's model args, 'key=value,...' or a mapping (render --model-args)",
    "shots": "the number of few-shot examples, replacing num_fewshot (render --shots)",
    "seed": "the seed of random few-shot retrieval (render --seed)",
    "data": "a split's records: 'SPLIT=PATH', several joined by ',', a list of them, or a mapping (render --data)",
    "trust_code": "allow the task file to run code (render --trust-code)",
    "template": "which of a task file's templates to render: a number or a name (render --template)",
    "task_format": "the task file's format, when detection should not decide (render --task-format)",
    "system_instruction": "text starting the system message (render --system-instruction)",
    "fewshot_as_multiturn": "with a chat meta template, few-shot examples as turns (render --fewshot-as-multiturn)",
    "mode": "gen or ppl, for tasks with modes (render --mode)",
    "data_root": "where task-template files find their data_dir (render --data-root)",
}
"""The accepted option names, each with one line saying what it is."""

_TEXT = ("style", "task_format", "system_instruction")
_BOOL_WORDS = {"true": True, "false": False}


def _error(name: str, message: str, where: str | None, hint: str | None = None) -> OptionError:
    return OptionError(message, key=name, file=where, hint=hint)


def _count(name: str, value: Any, where: str | None, *, minimum: int | None) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(name, f"must be a whole number, not {cut(value)}", where)
    if minimum is not None and value < minimum:
        raise _error(name, f"must be {minimum} or more, not {value}", where)
    return value


def _flag(name: str, value: Any, where: str | None) -> bool:
    if isinstance(value, str) and value.strip().lower() in _BOOL_WORDS:
        return _BOOL_WORDS[value.strip().lower()]
    if not isinstance(value, bool):
        raise _error(name, f"must be true or false, not {cut(value)}", where)
    return value


def _path(value: Any, base: Path | None) -> str:
    path = Path(value)
    if base is not None and not path.is_absolute():
        path = base / path
    return str(path)


def _data(value: Any, where: str | None, base: Path | None) -> dict[str, str]:
    """``{split: path}`` from a mapping, ``"split=path[,split=path]"`` or a list of ``"split=path"``."""
    hint = "give SPLIT=PATH, e.g. test=records.jsonl (several joined by ',')"
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)):
        pairs: dict[str, Any] = {}
        for item in value:
            split, sep, path = str(item).partition("=") if isinstance(item, str) else ("", "", "")
            if not sep or not split.strip() or not path.strip():
                raise _error("data", f"expected SPLIT=PATH, got {cut(item)}", where, hint)
            pairs[split.strip()] = path.strip()
        value = pairs
    if not isinstance(value, Mapping) or not value:
        raise _error("data", f"must name a split's data, not {cut(value)}", where, hint)
    out = {}
    for split, path in value.items():
        if not isinstance(split, str) or not isinstance(path, (str, Path)) or not str(path):
            raise _error("data", f"split {cut(split)}: the path must be text, not {cut(path)}", where, hint)
        out[split] = _path(path, base)
    return out


def task_options(
    values: Mapping[str, Any],
    *,
    where: str | None = None,
    base: str | Path | None = None,
) -> dict[str, Any]:
    """The :func:`~prompt_style.load_task` keyword arguments for options given as text or values.

    The names are those of :data:`TASK_OPTIONS` (``render``'s options with
    underscores). A number may be given as digits, a flag as ``true``/``false``,
    ``data`` as ``"test=a.jsonl,dev=b.jsonl"``; ``None`` means "not given" and is
    left out, so the task file decides.

    :param values: the options, e.g. a harness's task arguments.
    :param where: what to name as the file in errors (a task list, an environment
        variable, ``"-T"``).
    :param base: the directory relative data paths and ``data_root`` resolve
        against (a task list's directory); default: left as given (the current
        directory).
    :returns: keyword arguments for :func:`~prompt_style.load_task`.
    :raises OptionError: naming the option, for an unknown name (with a
        did-you-mean) or a value of the wrong kind.
    """
    base_dir = Path(base) if base is not None else None
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name not in TASK_OPTIONS:
            raise _error(
                str(name),
                f"unknown option {cut(name)}",
                where,
                suggest(str(name), TASK_OPTIONS, listing="the options are"),
            )
        if value is None:
            continue
        if name in _TEXT:
            if not isinstance(value, str) or not value:
                raise _error(name, f"must be text, not {cut(value)}", where)
            out[name] = value
        elif name == "meta":
            if isinstance(value, Mapping):
                out[name] = dict(value)
            elif isinstance(value, (str, Path)) and str(value):
                out[name] = str(value)
            else:
                raise _error(name, f"must be a meta template name or file, not {cut(value)}", where)
        elif name in ("meta_options", "style_options"):
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                raise _error(name, f"must be a mapping of option names to values, not {cut(value)}", where)
            out[name] = dict(value)
        elif name == "model_args":
            if not isinstance(value, (str, Mapping)):
                raise _error(name, f"must be 'key=value,...' or a mapping, not {cut(value)}", where)
            out[name] = dict(value) if isinstance(value, Mapping) else value
        elif name == "shots":
            out[name] = _count(name, value, where, minimum=0)
        elif name == "seed":
            out[name] = _count(name, value, where, minimum=None)
        elif name == "data":
            out[name] = _data(value, where, base_dir)
        elif name in ("trust_code", "fewshot_as_multiturn"):
            out[name] = _flag(name, value, where)
        elif name == "template":
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise _error(name, f"must be a number or a name, not {cut(value)}", where)
            out[name] = int(value) if isinstance(value, str) and value.isdigit() else value
        elif name == "mode":
            if value not in ("gen", "ppl"):
                raise _error(name, f"must be gen or ppl, not {cut(value)}", where)
            out[name] = value
        elif name == "data_root":
            if not isinstance(value, (str, Path)) or not str(value):
                raise _error(name, f"must be a directory, not {cut(value)}", where)
            out["read_options"] = {"data_root": _path(value, base_dir)}
    return out
