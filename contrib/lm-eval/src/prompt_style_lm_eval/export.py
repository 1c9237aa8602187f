"""``prompt-style export lm-eval TASK --out DIR``: a task directory lm-evaluation-harness runs.

``DIR`` is what ``lm-eval run --include_path DIR`` reads; the export is one
folder in it, ``DIR/NAME/``:

* ``NAME.yaml`` — an lm-evaluation-harness 0.4.13 task whose ``class`` is
  :class:`prompt_style_lm_eval.task.PromptStyleTask`, with ``dataset_path:
  json`` and ``data_files`` naming the copied records, the output type, the
  number of shots, the stop sequences and (for an lm-eval task file) its
  metrics and filters; ``metadata.prompt_style_export`` names the task file and
  the ``load_task`` options the prompts are rendered with;
* ``data/SPLIT.jsonl`` — the records of the evaluated split and of the few-shot
  split, copied (``--export-option data=reference`` refers to the original
  files instead);
* ``.prompt-style-export`` — marks the folder as an export, so that exporting
  again replaces it.

This module does not import lm_eval: exporting works without it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from prompt_style import (
    ExportRequest,
    ExportResult,
    OptionError,
    PromptStyleError,
    RecordErrors,
    RenderedPrompt,
    Task,
    TaskFileError,
    check_options,
)

from .source import EXPORT_KEY

__all__ = ["LmEvalExporter", "ExportOptions", "task_name", "MARKER", "TASK_CLASS"]

TASK_CLASS = "prompt_style_lm_eval.task.PromptStyleTask"
"""What the exported task file's ``class: !function`` names."""
MARKER = ".prompt-style-export"
"""The file marking a folder as written by this exporter."""

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_SCORING_KEYS = ("task_alias", "metric_list", "filter_list", "repeats", "unsafe_code")
"""Keys of an lm-eval task file carried over as they are (they do not change prompts)."""
_DATA_MODES = ("copy", "reference")


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """``--export-option KEY=VALUE`` of the ``lm-eval`` exporter."""

    data: str = "copy"
    """``copy``: the records are copied into the task folder (it runs anywhere);
    ``reference``: the task refers to the data files where they are (records given
    in memory are written all the same)."""


class LmEvalExporter:
    """Writes a task as an lm-evaluation-harness 0.4.13 task folder (``--include_path DIR``)."""

    description = "an lm-evaluation-harness task folder: lm-eval run --include_path DIR --tasks NAME"

    def export(self, request: ExportRequest) -> ExportResult:
        options = check_options(ExportOptions, dict(request.options), what="exporter 'lm-eval'")
        if options.data not in _DATA_MODES:
            raise OptionError(f"exporter 'lm-eval': data must be one of {', '.join(_DATA_MODES)}", key="data")
        task = request.task
        name = task_name(request.name, task.name)
        if request.source is None:
            raise TaskFileError(
                "lm-evaluation-harness loads the task from its file at run time",
                hint="export a task file, not a task given in memory",
            )
        first = _check_expressible(task)
        out = Path(request.out)
        _check_out(out, name)
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out))
        try:
            data_files, written = _write_data(task, staging, options.data == "reference")
            config = _task_yaml(request, task, name, first, data_files)
            yaml_path = staging / f"{name}.yaml"
            yaml_path.write_text(config, encoding="utf-8")
            (staging / MARKER).write_text(
                json.dumps({"task": name, "source": str(request.source), "versions": _versions()}, indent=1) + "\n",
                encoding="utf-8",
            )
            final = out / name
            if final.exists():
                shutil.rmtree(final)
            staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        files = (final / f"{name}.yaml", *(final / rel for rel in written))
        usage = f"lm-eval run --model hf --model_args pretrained=MODEL --include_path {out} --tasks {name}"
        return ExportResult(files=files, usage=usage)


def task_name(given: str | None, default: str) -> str:
    """The task's name in lm-eval: ``--name`` as given (checked), else the task's own
    name with what lm-eval's ``--tasks`` cannot take replaced by ``_``."""
    if given is not None:
        if not _NAME.match(given):
            raise OptionError(
                f"{given!r} is not a name lm-evaluation-harness can run with --tasks",
                key="--name",
                hint="use letters, digits, _, - and . (starting with a letter, a digit or _), "
                f"e.g. {_safe_name(given)}",
            )
        return given
    return _safe_name(default)


def _safe_name(name: str) -> str:
    safe = _UNSAFE.sub("_", name).strip(".-")
    return safe if safe and _NAME.match(safe) else f"task_{safe}".rstrip("_") or "task"


def _check_expressible(task: Task) -> RenderedPrompt:
    """The first record's prompt, after checking that lm-eval can send it."""
    config = task.config
    where = {"file": str(config.path) if config.path else None}
    if task.multiturn:
        raise PromptStyleError(
            "a multi-turn task (one request per model reply) cannot be expressed in lm-evaluation-harness, "
            "which sends one context per record",
            key="template",
            hint="render it with prompt-style render --replies, or export a single-turn task",
            **where,
        )
    first = _check_records(task)
    if first.candidates is not None:
        raise PromptStyleError(
            "OpenCompass perplexity mode (one whole prompt per label, scored by perplexity) cannot be expressed "
            "in lm-evaluation-harness's requests",
            key="mode",
            hint="export it with --mode gen, or run it in OpenCompass",
            **where,
        )
    if first.text is None:
        raise PromptStyleError(
            "the meta template gives messages but no text; lm-evaluation-harness sends text to its models",
            key="meta",
            hint="export with a meta template that gives text (plain, chatml, hf, ...); "
            "for messages run lm-eval with --apply_chat_template",
            **where,
        )
    return first


def _check_records(task: Task) -> RenderedPrompt:
    """The first record's prompt, every record rendered once, as lm-eval will ask for it:
    the records that cannot be rendered are reported now, all of them, rather than the
    first when lm-eval builds its requests. (Fast: the task's compiled fast path,
    microseconds a record.)"""
    config = task.config
    errors: list[PromptStyleError] = []
    first = None
    count = 0
    for prompt in task.render(errors=errors):
        if first is None:
            first = prompt
        count += 1
    count += len(errors)
    if errors:
        raise RecordErrors(
            errors,
            total=count,
            consequence=", so lm-eval would stop at the first",
            key=f"data.{config.test_split}",
            hint="fix the records (prompt-style lint TASK names every one) and export again",
            file=str(config.path) if config.path else None,
        )
    if first is None:
        where = str(config.path) if config.path else None
        raise PromptStyleError("the evaluated split has no records", key=f"data.{config.test_split}", file=where)
    return first


def _check_out(out: Path, name: str) -> None:
    """``--out`` is lm-eval's include path: it must be a new or empty folder, or one
    holding only earlier exports (the export named ``name`` is replaced)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise OptionError(f"{out} is a file; --out names the folder lm-eval reads with --include_path", key="--out")
    for entry in sorted(out.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and (entry / MARKER).is_file():
            continue
        raise OptionError(
            f"{out} is not empty and {entry.name!r} is not a prompt-style export; lm-eval reads every task file "
            "under --include_path",
            key="--out",
            hint="choose a new or empty folder (exports of several tasks may share one)",
        )


def _versions() -> dict[str, str]:
    found = {}
    for dist in ("prompt-style", "prompt-style-lm-eval"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "unknown"
    return found


# -- data ------------------------------------------------------------------------------


def _write_data(task: Task, folder: Path, reference: bool) -> tuple[dict[str, Any], list[str]]:
    """Copy (or refer to) each split the task reads; ``data_files`` and the files written."""
    data_files: dict[str, Any] = {}
    written: list[str] = []
    used: set[str] = set()
    (folder / "data").mkdir()
    for split, value in task.source_data().items():
        stem = _UNSAFE.sub("_", split).strip("._") or "split"
        while stem in used:
            stem += "_"
        used.add(stem)
        files = _files(value)
        if files is not None and reference:
            paths = [str(path.resolve()) for path in files]
            data_files[split] = paths[0] if len(paths) == 1 else paths
            continue
        if files is not None:
            names = []
            for position, path in enumerate(files):
                suffix = path.suffix.lower() or ".jsonl"
                rel = f"data/{stem}{suffix}" if len(files) == 1 else f"data/{stem}-{position}{suffix}"
                shutil.copyfile(path, folder / rel)
                names.append(rel)
            written.extend(names)
            data_files[split] = names[0] if len(names) == 1 else names
            continue
        rel = f"data/{stem}.jsonl"
        with open(folder / rel, "w", encoding="utf-8") as handle:
            for record in value:
                handle.write(json.dumps(dict(record)) + "\n")
        written.append(rel)
        data_files[split] = rel
    return data_files, written


def _files(value: Any) -> list[Path] | None:
    if isinstance(value, (str, Path)):
        return [Path(value)]
    if isinstance(value, tuple) and value and all(isinstance(v, Path) for v in value):
        return list(value)
    return None


# -- the task file ---------------------------------------------------------------------


def _task_yaml(
    request: ExportRequest, task: Task, name: str, first: RenderedPrompt, data_files: Mapping[str, Any]
) -> str:
    config = task.config
    output_type = config.output_type or ("multiple_choice" if first.continuations else "generate_until")
    if first.contexts is not None and output_type != "multiple_choice":
        output_type = "multiple_choice"
    body: dict[str, Any] = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": dict(data_files)},
        "test_split": task.renderer.split,
        "output_type": output_type,
    }
    if config.num_fewshot:
        body["num_fewshot"] = config.num_fewshot
    skipped: list[str] = []
    if config.format == "lm-eval":
        for key in _SCORING_KEYS:
            if key in config.extras:
                if _plain(config.extras[key]):
                    body[key] = config.extras[key]
                else:
                    skipped.append(key)
        if "process_results" in config.extras:
            skipped.append("process_results")
    if output_type == "generate_until":
        kwargs = config.extras.get("generation_kwargs") if config.format == "lm-eval" else None
        kwargs = dict(kwargs) if isinstance(kwargs, Mapping) and _plain(kwargs) else {}
        until = first.until if first.until is not None else config.until
        kwargs["until"] = list(until or [])
        body["generation_kwargs"] = kwargs
    version_of = config.metadata.get("version") if config.format == "lm-eval" else None
    load_options = _load_options(request.load_options)
    body["metadata"] = {
        "version": version_of if isinstance(version_of, (int, float, str)) else 1.0,
        EXPORT_KEY: {
            "task": str(request.source),
            "sha256": hashlib.sha256(Path(request.source).read_bytes()).hexdigest(),
            "options": load_options,
            "versions": _versions(),
        },
    }
    dumped = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=1000)
    # `class:` is a tag PyYAML's safe dumper does not write: it goes after `task:`.
    head, sep, rest = dumped.partition("\n")
    lines = [
        f"# Written by prompt-style export lm-eval ({_versions()['prompt-style']}) from {_quote(str(request.source))}.",
        "# Run it:  lm-eval run --model ... --include_path <this folder's parent> --tasks " + name,
        "# Its prompts are prompt-style's; from this folder, see them with:",
        "#   prompt-style render " + _render_command(request.source, load_options, data_files),
    ]
    if skipped:
        lines.append(
            f"# Not carried over (they name the task file's Python code): {', '.join(skipped)}; add them by hand."
        )
    return "\n".join(lines) + "\n" + head + "\nclass: !function " + TASK_CLASS + sep + rest


def _load_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``load_task`` options worth writing (``data`` goes to ``data_files``)."""
    kept: dict[str, Any] = {}
    for key, value in options.items():
        if key == "data" or value is None or value is False or value == {}:
            continue
        if isinstance(value, Path):
            value = str(value)
        if not _plain(value):
            raise OptionError(
                f"option {key}={value!r} cannot be written to an lm-evaluation-harness task file",
                key=key,
                hint="give it as text, a number or a mapping",
            )
        kept[key] = value
    return kept


def _render_command(source: Any, options: Mapping[str, Any], data_files: Mapping[str, Any]) -> str:
    flags = {
        "style": "--style",
        "meta": "--meta",
        "shots": "--shots",
        "seed": "--seed",
        "template": "--template",
        "task_format": "--task-format",
        "system_instruction": "--system-instruction",
        "mode": "--mode",
        "model_args": "--model-args",
    }
    parts = [_quote(str(source))]
    for key, flag in flags.items():
        if key in options:
            parts.append(f"{flag} {_quote(str(options[key]))}")
    for key, value in (options.get("meta_options") or {}).items():
        parts.append(f"--meta-option {_quote(f'{key}={value}')}")
    if options.get("trust_code"):
        parts.append("--trust-code")
    if "fewshot_as_multiturn" in options:
        parts.append("--fewshot-as-multiturn" if options["fewshot_as_multiturn"] else "--no-fewshot-as-multiturn")
    for split, files in data_files.items():
        if isinstance(files, str):
            parts.append(f"--data {_quote(f'{split}={files}')}")
    return " ".join(parts)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Characters a word of the header's one-line command cannot hold as they are (YAML and the
shell would break the line): written as bash's ANSI-C escapes, ``$'...'``."""


def _quote(text: str) -> str:
    """``text`` as one shell word of one line."""
    if re.fullmatch(r"[A-Za-z0-9_.:/=@+\-]+", text):
        return text
    if _CONTROL.search(text) is None:
        return "'" + text.replace("'", "'\\''") + "'"
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    escaped = _CONTROL.sub(
        lambda m: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m.group(), f"\\u{ord(m.group()):04x}"), escaped
    )
    return "$'" + escaped + "'"


def _plain(value: Any) -> bool:
    """Whether ``value`` is plain data (no task code) that YAML writes and reads back as it is."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, Sequence):
        return all(_plain(v) for v in value)
    return False
