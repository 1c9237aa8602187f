"""Translating a read lm-evaluation-harness task file into a ``TaskConfig``,
collecting every problem of the file before raising."""

from __future__ import annotations

import glob
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._suggest import did_you_mean, suggest
from ...errors import PromptStyleError
from ...safe.files import read_bytes
from ...task import OUTPUT_TYPES, TaskConfig
from ...types import ReadOptions
from .block import BLOCK, BLOCK_KEYS, read_block
from .code import CodeError, FunctionRef, import_function, seed_like_lm_eval
from .docs import ProcessDocs, as_records
from .fields import LmEvalField, check_template
from .files import LmEvalFile, Problems
from .keys import FEWSHOT_KEYS, KEPT_KEYS, PROMPT_KEYS, REFUSED_KEYS, SAMPLERS

__all__ = ["Translation", "FEWSHOT_SAMPLES_SPLIT"]

FEWSHOT_SAMPLES_SPLIT = "fewshot_config.samples"
"""The split name under which ``fewshot_config.samples`` are the few-shot pool."""

_FIELD_KINDS = {"doc_to_text": "text", "doc_to_choice": "choice", "doc_to_target": "target", "gen_prefix": "resolve"}
_STRING_KEYS = ("task", "dataset_path", "dataset_name", "description", "target_delimiter", "fewshot_delimiter")
_SPLIT_KEYS = ("training_split", "validation_split", "test_split", "fewshot_split")


class Translation:
    """One task file being translated; collects every problem before raising."""

    def __init__(self, task: LmEvalFile, options: ReadOptions, problems: Problems) -> None:
        self.task = task
        self.values = task.values
        self.options = options
        self.problems = problems
        self.functions: dict[str, FunctionRef] = {}
        """Code the prompt needs, by dotted key."""
        self.block: dict[str, Any] = {}
        """The checked ``metadata.prompt_style`` block (block.py)."""

    # -- problems ------------------------------------------------------------------

    def problem(self, key: str, message: str, hint: str | None = None) -> None:
        self.problems.add(message, file=self.task.file_of(key), key=key, line=self.task.line_of(key), hint=hint)

    # -- checks ----------------------------------------------------------------------

    def check_keys(self) -> None:
        values = self.values
        task = values.get("task")
        if isinstance(task, list):
            # A group is several tasks; nothing else in the file is worth reporting.
            self.problems.items.clear()
            self.problem("task", *_group_message(values, self.task.file_of("task")))
            self.problems.raise_if_any()
        has_block = isinstance(values.get("metadata"), Mapping) and "prompt_style" in values["metadata"]
        if values.get("class") is not None and not has_block:
            # A Python task class builds the whole task in code: the keys it leaves out
            # (doc_to_text, ...) are not the file's problems. (With a prompt_style block the
            # class is the bridge's, rendering the file's own keys with prompt-style.)
            self.problems.items.clear()
            self.problem(
                "class", f"not supported: {REFUSED_KEYS['class']} (this task is the class {_shown(values['class'])})"
            )
            self.problems.raise_if_any()
        known = {**PROMPT_KEYS, **KEPT_KEYS, **REFUSED_KEYS}
        self.block = read_block(
            values.get("metadata"),
            lambda key, message, hint: self.problem(key, message, hint),
            lambda key: did_you_mean(key, BLOCK_KEYS),
        )
        for key, value in values.items():
            if key == "class" and has_block:
                continue  # the bridge's task class: it renders with prompt-style, as the block says
            if key in REFUSED_KEYS:
                if value is not None:
                    self.problem(key, f"not supported: {REFUSED_KEYS[key]}")
            elif key not in known:
                self.problem(
                    key,
                    f"unknown key {key!r} (lm-evaluation-harness would reject it too)",
                    did_you_mean(key, known) or "see docs/lm-eval.md for the keys prompt-style reads",
                )
        for key in _STRING_KEYS:
            if values.get(key) is not None and not isinstance(values[key], str) and key != "task":
                self.problem(key, f"must be a string, not {type(values[key]).__name__} {values[key]!r}")
        for key in _SPLIT_KEYS:
            if values.get(key) is not None and not isinstance(values[key], str):
                self.problem(key, f"must be a split name, not {values[key]!r}")
        shots = values.get("num_fewshot")
        if shots is not None and (not isinstance(shots, int) or isinstance(shots, bool) or shots < 0):
            self.problem("num_fewshot", f"must be a whole number 0 or more, not {shots!r}")
        output_type = values.get("output_type", "generate_until")
        if output_type not in OUTPUT_TYPES:
            self.problem(
                "output_type",
                f"unknown output type {output_type!r}",
                suggest(output_type, OUTPUT_TYPES, listing="use one of"),
            )
        for key in ("dataset_kwargs", "generation_kwargs", "metadata"):
            if values.get(key) is not None and not isinstance(values[key], Mapping):
                self.problem(key, f"must be a mapping, not {type(values[key]).__name__}")
        kwargs = values.get("generation_kwargs")
        until = kwargs.get("until") if isinstance(kwargs, Mapping) else None
        if until is not None and not (
            isinstance(until, str) or (isinstance(until, list) and all(isinstance(u, str) for u in until))
        ):
            self.problem("generation_kwargs.until", f"must be a string or a list of strings, not {until!r}")
        if values.get("doc_to_text") is None and output_type != "loglikelihood_rolling":
            self.problem("doc_to_text", "the task has no doc_to_text")
        if values.get("doc_to_target") is None:
            self.problem("doc_to_target", "the task has no doc_to_target")
        if output_type == "multiple_choice" and values.get("doc_to_choice") is None:
            self.problem("doc_to_choice", "a multiple_choice task needs doc_to_choice")
        template = values.get("template")
        if template is not None and not isinstance(template, (str, Mapping)):
            self.problem("template", f"must be a style name or a mapping, not {template!r}")
        if template is not None and "style" in self.block:
            self.problem(
                f"{BLOCK}.style", "the task file names a style twice (template: and the prompt_style block)", None
            )
        self.check_fields("", values)
        self.check_fewshot_config()
        if values.get("process_docs") is not None:
            if isinstance(values["process_docs"], FunctionRef):
                self.functions["process_docs"] = values["process_docs"]
            else:
                self.problem("process_docs", "must be a !function (lm-evaluation-harness calls it on each split)")

    def check_fields(self, prefix: str, values: Mapping[str, Any]) -> None:
        for key in ("doc_to_text", "doc_to_choice", "doc_to_target", "description", "gen_prefix"):
            spec = values.get(key)
            dotted = prefix + key
            if spec is None:
                continue
            if isinstance(spec, FunctionRef):
                if key in ("description", "gen_prefix"):
                    self.problem(dotted, "must be text or a column name (lm-evaluation-harness renders it with Jinja)")
                else:
                    self.functions[dotted] = spec
                continue
            if isinstance(spec, str):
                error = check_template(spec)
                if error:
                    self.problem(dotted, error)
                continue
            allowed = {
                "doc_to_text": (int,),
                "doc_to_choice": (list, Mapping),
                "doc_to_target": (int, list),
            }.get(key, ())
            if not isinstance(spec, allowed) or isinstance(spec, bool):
                self.problem(dotted, f"must be text, a column name or a !function, not {type(spec).__name__} {spec!r}")

    def check_fewshot_config(self) -> None:
        config = self.values.get("fewshot_config")
        if config is None:
            return
        if not isinstance(config, Mapping):
            self.problem("fewshot_config", f"must be a mapping, not {type(config).__name__}")
            return
        for key in config:
            if key not in FEWSHOT_KEYS:
                self.problem(
                    f"fewshot_config.{key}",
                    f"unknown fewshot_config key {key!r}",
                    suggest(key, FEWSHOT_KEYS, listing="its keys are"),
                )
        sampler = config.get("sampler", "default")
        if sampler not in SAMPLERS:
            self.problem(
                "fewshot_config.sampler",
                f"unknown sampler {sampler!r}",
                f"lm-evaluation-harness has: {', '.join(SAMPLERS)}",
            )
        self.check_fields("fewshot_config.", config)
        for key in ("fewshot_delimiter", "target_delimiter", "split"):
            if config.get(key) is not None and not isinstance(config[key], str):
                self.problem(f"fewshot_config.{key}", f"must be a string, not {config[key]!r}")
        indices = config.get("fewshot_indices")
        if indices is not None and not (
            isinstance(indices, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in indices)
        ):
            self.problem("fewshot_config.fewshot_indices", f"must be a list of record numbers, not {indices!r}")
        samples = config.get("samples")
        if isinstance(samples, FunctionRef):
            self.functions["fewshot_config.samples"] = samples
        elif samples is not None and not (isinstance(samples, list) and all(isinstance(s, Mapping) for s in samples)):
            self.problem("fewshot_config.samples", "must be a list of records or a !function giving one")
        process = config.get("process_docs")
        if isinstance(process, FunctionRef):
            self.functions["fewshot_config.process_docs"] = process
        elif process is not None:
            self.problem("fewshot_config.process_docs", "must be a !function")

    def check_code(self) -> None:
        if not self.functions or self.options.trust_code:
            return
        for key, ref in self.functions.items():
            module = ref.module_file
            beside = f" ({module.name} next to {ref.file.name})" if module is not None and ref.file else ""
            self.problems.add(
                f"!function {ref.name} would run Python code{beside}, which prompt-style does not do unless allowed",
                file=ref.file or self.task.file_of(key),
                key=key,
                line=ref.line or self.task.line_of(key),
                hint="allow it with --trust-code (trust_code=True in Python) if you trust the task's code",
            )

    # -- code ------------------------------------------------------------------------

    def import_code(self) -> dict[str, Any]:
        """Import every function the prompt needs (after seeding, as lm-evaluation-harness)."""
        if not self.functions:
            return {}
        seed_like_lm_eval()
        modules: dict[Path, Any] = {}
        imported: dict[str, Any] = {}
        failed: dict[str, list[tuple[str, Any]]] = {}  # one report per failure (a module that will not import)
        for key, ref in self.functions.items():
            try:
                imported[key] = import_function(ref, modules)
            except CodeError as exc:
                failed.setdefault(str(exc), []).append((key, ref))
        for message, uses in failed.items():
            key, ref = uses[0]
            also = [other for other, _ in uses[1:]]
            self.problems.add(
                f"!function {ref.name}: {message}" + (f" (also needed by {', '.join(also)})" if also else ""),
                file=ref.file or self.task.file_of(key),
                key=key,
                line=ref.line or self.task.line_of(key),
            )
        self.problems.raise_if_any()
        return imported

    # -- the TaskConfig --------------------------------------------------------------

    def config(self) -> TaskConfig:
        self.check_keys()
        self.check_code()
        self.problems.raise_if_any()
        code = self.import_code()
        values = self.values
        task = self.task

        output_type = values.get("output_type", "generate_until")
        has_choice = values.get("doc_to_choice") is not None
        template = values.get("template")

        def field(key: str, spec: Any, prefix: str = "") -> Any:
            if spec is None:
                return None
            function = code.get(prefix + key)
            if function is not None:
                return LmEvalField(function, key, _FIELD_KINDS.get(key, "resolve"), name=spec.name)
            if template is not None and key in ("doc_to_text", "doc_to_choice"):
                return spec  # the template system's own field specs (process_field)
            if key == "description":
                return LmEvalField(spec, key, "resolve") if spec else None
            digits = has_choice and key in ("doc_to_text", "doc_to_target")
            return LmEvalField(spec, key, _FIELD_KINDS[key], digits)

        fewshot = values.get("fewshot_config") or {}
        overrides: dict[str, Any] = {}
        for key in ("doc_to_text", "doc_to_choice", "doc_to_target", "gen_prefix"):
            if fewshot.get(key) is not None and fewshot[key] != values.get(key):
                overrides[key] = field(key, fewshot[key], "fewshot_config.")
        for key in ("target_delimiter", "fewshot_delimiter"):
            if fewshot.get(key) is not None:
                overrides[key] = fewshot[key]

        data, data_source = self.data()
        # lm-evaluation-harness evaluates test_split, else validation_split (and fails
        # with neither; prompt-style then evaluates "test", its own default).
        eval_split = values.get("test_split") or values.get("validation_split") or "test"
        fewshot_split, fewshot_process = self.fewshot_source(fewshot, data, code)
        process = code.get("process_docs")
        name = values.get("process_docs").name if process is not None else None

        sampler = fewshot.get("sampler", "default")
        exclude = fewshot.get("split", values.get("fewshot_split")) == values.get("test_split")
        retriever: Any = {"name": "first_n" if sampler == "first_n" else "shared_random"}
        retriever["exclude_record"] = exclude
        block = self.block
        retriever = block.get("retriever", retriever)
        # fewshot_config.fewshot_indices: lm-evaluation-harness 0.4.13 reads it into its config but
        # builds the sampler without it (ConfigurableTask: sampler_cls(docs, rnd=None)), so it never
        # changes which examples are drawn; neither does it here.

        until = None
        if output_type == "generate_until":
            kwargs = values.get("generation_kwargs")
            delimiter = values.get("fewshot_delimiter", "\n\n")
            stops = kwargs.get("until", [delimiter]) if isinstance(kwargs, Mapping) else [delimiter]
            until = (stops,) if isinstance(stops, str) else tuple(stops)

        kept = {key: values[key] for key in values if key in KEPT_KEYS or key in ("generation_kwargs", "dataset_path")}
        for key in ("dataset_name", "dataset_kwargs", "custom_dataset", "training_split", "validation_split"):
            if key in values:
                kept[key] = values[key]
        origins = {key: path for key, path in task.origins.items() if path != task.path}
        return TaskConfig(
            task=str(values.get("task") or (task.path.stem if task.path else "task")),
            data=data,
            doc_to_text=field("doc_to_text", values.get("doc_to_text")),
            doc_to_choice=field("doc_to_choice", values.get("doc_to_choice")),
            doc_to_target=field("doc_to_target", values.get("doc_to_target")),
            template=block.get("style", template),
            description=field("description", values.get("description")),
            test_split=eval_split,
            fewshot_split=fewshot_split,
            num_fewshot=block["shots"] if "shots" in block else values.get("num_fewshot") or 0,
            fewshot_delimiter=values.get("fewshot_delimiter", "\n\n"),
            target_delimiter=values.get("target_delimiter", " "),
            retriever=retriever,
            seed=block.get("seed", 1234),  # lm-evaluation-harness's fewshot_random_seed
            metadata=dict(values.get("metadata") or {}),
            path=task.path,
            lines=dict(task.lines),
            output_type=output_type,
            until=until,
            gen_prefix=field("gen_prefix", values.get("gen_prefix")),
            fewshot_overrides=overrides,
            process_docs=ProcessDocs(process, name) if process is not None else None,
            fewshot_process_docs=fewshot_process,
            before_code=seed_like_lm_eval if code else None,
            origins=origins,
            extras=kept,
            data_source=data_source,
        )

    def fewshot_source(
        self, fewshot: Mapping[str, Any], data: dict[str, Any], code: Mapping[str, Any]
    ) -> tuple[str | None, Any]:
        """The few-shot split and how it is processed, by lm-evaluation-harness's rule:
        ``fewshot_config.split`` or ``fewshot_split`` (processed with
        ``fewshot_config.process_docs``, which defaults to ``process_docs``), else
        ``fewshot_config.samples``, else the training, validation or test split."""
        values = self.values
        process_ref = values.get("process_docs")
        split = fewshot.get("split", values.get("fewshot_split"))
        if split is not None:
            if "process_docs" in fewshot:
                ref = fewshot["process_docs"]
                function = code.get("fewshot_config.process_docs")
            else:
                ref, function = process_ref, code.get("process_docs")
            return split, ProcessDocs(function, ref.name) if function is not None else None
        samples = fewshot.get("samples")
        if samples is not None:
            function = code.get("fewshot_config.samples")
            if function is not None:
                try:
                    samples = as_records(function())
                except Exception as exc:
                    self.problem(
                        "fewshot_config.samples", f"!function {samples.name} raised {type(exc).__name__}: {exc}"
                    )
                    self.problems.raise_if_any()
            data[FEWSHOT_SAMPLES_SPLIT] = [dict(s) for s in samples]
            return FEWSHOT_SAMPLES_SPLIT, None
        split = values.get("training_split") or values.get("validation_split") or values.get("test_split")
        function = code.get("process_docs")
        return split, ProcessDocs(function, process_ref.name) if function is not None else None

    def data(self) -> tuple[dict[str, Any], str | None]:
        """Local ``data_files`` of a ``dataset_path: json`` task, else where the data lives."""
        values = self.values
        path = values.get("dataset_path")
        kwargs = values.get("dataset_kwargs") if isinstance(values.get("dataset_kwargs"), Mapping) else {}
        files = kwargs.get("data_files")
        if path == "json" and files is not None:
            if isinstance(files, (str, list)):
                files = {"train": files}
            data: dict[str, Any] = {}
            base = self.task.file_of("dataset_kwargs")
            for split, names in dict(files).items():
                names = [names] if isinstance(names, str) else list(names)
                found = [p for name in names for p in _data_files(str(name), base)]
                data[str(split)] = found[0] if len(found) == 1 else tuple(found)
            return data, None
        if values.get("custom_dataset") is not None:
            return {}, "built by custom_dataset (Python code)"
        if path is None:
            return {}, None
        name = values.get("dataset_name")
        shown = f"the Hugging Face dataset {path}" + (f" ({name})" if name else "")
        return {}, shown


def _data_files(name: str, task_file: Path | None) -> list[Path]:
    """A ``data_files`` entry: relative to the current directory, as ``datasets``
    resolves it, else to the task file; glob patterns expand."""
    candidate = Path(name).expanduser()
    bases = [Path(".")]
    if task_file is not None:
        bases.append(task_file.parent)
    for base in [Path("")] if candidate.is_absolute() else bases:
        full = base / candidate
        if glob.has_magic(str(full)):
            matches = sorted(Path(p) for p in glob.glob(str(full)))
            if matches:
                return matches
        elif full.exists():
            return [full]
    return [candidate if candidate.is_absolute() else bases[0] / candidate]


def _shown(value: Any) -> str:
    """A key's value as the task file writes it (``!function task.SQuAD2``)."""
    name = getattr(value, "name", None)
    return f"!function {name}" if isinstance(name, str) else repr(value)


def _group_message(values: Mapping[str, Any], file: Path | None) -> tuple[str, str]:
    """What a group file lists, and where the task files of its tasks are (next to it)."""
    names: list[str] = []
    for entry in values["task"]:
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, Mapping) and isinstance(entry.get("task") or entry.get("group"), str):
            names.append(entry.get("task") or entry.get("group"))
    group = values.get("group")
    shown = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
    what = f"group {group!r}" if isinstance(group, str) else "a group"
    message = (
        f"this is an lm-evaluation-harness group file ({what} of {shown or 'no tasks'}); "
        "prompt-style renders one task file at a time"
    )
    found = _task_files(names[:3], file.parent if file is not None else None)
    hint = "render the task file of one of its tasks"
    if found:
        hint += ", e.g. " + " or ".join(str(path) for path in found)
    return message, hint


def _task_files(names: list[str], folder: Path | None, limit: int = 2000) -> list[Path]:
    """Task files under ``folder`` whose ``task:`` is one of ``names`` (a text scan, no YAML)."""
    import re

    if folder is None or not names:
        return []
    wanted = {name: re.compile(rf"(?m)^task:\s*[\"']?{re.escape(name)}[\"']?\s*(#.*)?$") for name in names}
    found: dict[str, Path] = {}
    for seen, path in enumerate(sorted(folder.rglob("*.yaml"))):
        if seen >= limit or len(found) == len(wanted):
            break
        try:
            text = read_bytes(path, what="task file").decode("utf-8", "replace")  # never a FIFO
        except PromptStyleError:
            continue
        for name, pattern in wanted.items():
            if name not in found and pattern.search(text):
                found[name] = path
    return [found[name] for name in names if name in found][:2]
