"""OpenCompass dataset configs as task files (the ``opencompass`` format).

A dataset config — as YAML, JSON, a Python mapping given to ``load_task``, or
OpenCompass's own ``.py`` file (with ``trust_code``) — holds ``reader_cfg``
(``input_columns``, ``output_column``, ``train_split``, ``test_split``) and
``infer_cfg`` (``ice_template``, ``prompt_template``, ``retriever``,
``inferencer``), each ``type`` an OpenCompass class name. It is read into a
:class:`~prompt_style.TaskConfig` whose style is ``opencompass`` (the
templates, the retriever's ``ice_separator``/``ice_eos_token``, the mode of
the inferencer) and whose retriever comes from the retriever config. A file
may hold several datasets (``datasets: [...]``, ``mmlu_datasets = [...]``);
``--template NAME|N`` chooses one by ``abbr`` or position.

OpenCompass configs name their data by dataset loaders; here the splits the
``reader_cfg`` names get their records from ``--data SPLIT=PATH`` (or a
``data`` mapping in the config, prompt-style's own addition).
"""

from __future__ import annotations

import random
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._suggest import did_you_mean, suggest
from .._where import nearest_line
from ..errors import TaskFileError
from ..task import TaskConfig
from ..types import ReadOptions, TaskSource

__all__ = [
    "OpenCompassReader",
    "OutputColumn",
    "PartialSplit",
    "whole_record",
    "plain_config",
    "INFERENCER_MODES",
]

# OpenCompass 0.5.4's inferencers (openicl/icl_inferencer) and AISBench's multi-turn one: the mode
# each parses prompts in (the default of --mode).
INFERENCER_MODES: dict[str, str] = {
    "GenInferencer": "gen",
    "PPLInferencer": "ppl",
    "MultiTurnGenInferencer": "gen",
    "ChatInferencer": "gen",
    "SCInferencer": "gen",
    "AgentInferencer": "gen",
    "AttackInferencer": "gen",
    "CLPInferencer": "gen",
    "LLInferencer": "ppl",
    "PPLOnlyInferencer": "ppl",
    "InferencePPLOnlyInferencer": "ppl",
    "MinKPercentInferencer": "gen",
    "SWCELossInferencer": "gen",
    "ToTInferencer": "gen",
    "GLMChoiceInferencer": "gen",
    "ChatMLInferencer": "gen",
    "ParallelGenInferencer": "gen",
    "ParallelChatInferencer": "gen",
    "ParallelChatMLInferencer": "gen",
}

# The inferencers whose prompts are not GenInferencer's or PPLInferencer's: the style's `inferencer`.
_OWN_PROMPTS = {
    "ChatInferencer": "chat",
    "LLInferencer": "ll",
    "PPLOnlyInferencer": "ppl_only",
    "InferencePPLOnlyInferencer": "ppl_only",
}
_LABELLED = ("PPLInferencer", "LLInferencer")
"""Inferencers that take ``labels`` (the perplexity candidates to score)."""

_IGNORED_RETRIEVER_OPTIONS = ("index_split", "test_split")
"""Retriever options OpenCompass's own tooling adds (get_prompt_hash); they name splits, which reader_cfg does."""
_READER_KEYS = (
    "input_columns",
    "output_column",
    "train_split",
    "test_split",
    "train_range",
    "test_range",
    "input_template",
    "output_template",
)
_INFER_KEYS = ("ice_template", "prompt_template", "retriever", "inferencer", "reader_cfg")


def whole_record(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``doc_to_text`` of an OpenCompass task: templates see the whole record."""
    return record


whole_record.pure = True  # type: ignore[attr-defined]  # a function of the record (the fast path may call it)


@dataclass(frozen=True)
class OutputColumn:
    """The ``doc_to_target`` of an OpenCompass task: the output column (``None`` when absent)."""

    name: str | None
    pure = True  # a function of the record (the fast path may call it)

    def __call__(self, record: Mapping[str, Any]) -> Any:
        return record.get(self.name) if self.name is not None else None


_SLICE = re.compile(r"\s*\[\s*(-?\d+)?\s*:\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?\]\s*")


@dataclass(frozen=True)
class PartialSplit:
    """``reader_cfg.train_range``/``test_range`` as a task's ``process_docs``: the
    part of a split's records OpenCompass's ``load_partial_dataset`` keeps.

    A number ``n`` (or a fraction of the records) keeps ``n`` records in the order
    ``random.Random(n)`` shuffles their indices (all of them when ``n`` is 0 or
    less, or not less than their number); a slice ``"[a:b:c]"`` keeps those
    indices."""

    size: int | float | str
    key: str

    @property
    def name(self) -> str:
        return self.key

    def __call__(self, records: Sequence[Any]) -> list[Any]:
        from ..errors import TaskFileError

        total = len(records)
        indices = list(range(total))
        size = self.size
        if isinstance(size, str):
            match = _SLICE.fullmatch(size)
            assert match is not None  # checked when read
            start, stop, step = (int(g) if g is not None else None for g in match.groups())
            if step == 0:
                raise TaskFileError(f"{size!r} has a step of 0", key=self.key)
            return [records[i] for i in indices[start:stop:step]]
        if size >= total or size <= 0:
            return list(records)
        if 0 < size < 1:
            size = int(size * total)
        if not isinstance(size, int):
            raise TaskFileError(
                f"{self.size!r} is neither a whole number of records nor a fraction below 1",
                key=self.key,
                hint="write a whole number such as 100, a fraction such as 0.5, or a slice such as '[0:100]'",
            )
        random.Random(size).shuffle(indices)
        return [records[i] for i in indices[:size]]


_PLAIN = (str, int, float, bool, type(None))


def plain_config(value: Any) -> Any:
    """``value`` as plain data (mappings, lists, strings, numbers, booleans, ``None``):
    a class or function a ``.py`` config imported becomes its dotted path, which
    OpenCompass's registries import; ``None`` when something else is inside."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            converted = plain_config(item)
            if converted is None and item is not None:
                return None
            out[key] = converted
        return out
    if isinstance(value, (list, tuple)):
        items = [plain_config(item) for item in value]
        if any(c is None and i is not None for c, i in zip(items, value)):
            return None
        return items
    module = getattr(value, "__module_name__", None) or getattr(value, "__module__", None)
    name = getattr(value, "__opencompass_name__", None) or getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(name, str) and "<" not in name:
        return f"{module}.{name}"
    return None


def _type_name(value: Any) -> str | None:
    from ..styles.opencompass.template import template_type_name

    return template_type_name(value)


class _Where:
    """Error locations in the source file for dotted keys."""

    def __init__(self, source: TaskSource, prefix: str) -> None:
        self.source = source
        self.prefix = prefix

    def key(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def error(self, key: str, message: str, hint: str | None = None) -> TaskFileError:
        full = self.key(key)
        return TaskFileError(
            message,
            file=str(self.source.path) if self.source.path else None,
            line=nearest_line(self.source.lines, full),
            key=full,
            hint=hint,
        )


def _datasets(data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]] | None:
    """The dataset configs in a parsed file, with their dotted key; ``None`` when
    the file holds none."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[int] = set()
    names = ["datasets"] if isinstance(data.get("datasets"), list) else [k for k in data if str(k).endswith("datasets")]
    for name in names:
        value = data.get(name)
        if not isinstance(value, list):
            continue
        for i, item in enumerate(value):
            if isinstance(item, Mapping) and "infer_cfg" in item and id(item) not in seen:
                seen.add(id(item))
                found.append((f"{name}.{i}.", item))
    if found:
        # A Python config's *datasets lists win over its helper variables (a module-level
        # `infer_cfg = dict(...)` that the datasets use).
        return found
    if "infer_cfg" in data:
        return [("", data)]
    return None


def _label(dataset: Mapping[str, Any], index: int) -> str:
    abbr = dataset.get("abbr")
    return str(abbr) if abbr is not None else f"#{index}"


def _choose(
    datasets: list[tuple[str, Mapping[str, Any]]], template: str | int | None, source: TaskSource
) -> tuple[str, Mapping[str, Any]]:
    file = str(source.path) if source.path else None
    labels = [_label(d, i) for i, (_, d) in enumerate(datasets)]
    if template is None:
        if len(datasets) == 1:
            return datasets[0]
        shown = ", ".join(labels[:8]) + (f", ... ({len(labels)} in all)" if len(labels) > 8 else "")
        raise TaskFileError(
            f"the config holds {len(datasets)} datasets: {shown}",
            file=file,
            hint="choose one with --template ABBR or --template N (template= in Python)",
        )
    if isinstance(template, int) or (isinstance(template, str) and template.isdigit()):
        index = int(template)
        if 0 <= index < len(datasets):
            return datasets[index]
        raise TaskFileError(f"there is no dataset {index}: the config holds {len(datasets)}", file=file, key="template")
    for i, label in enumerate(labels):
        if label == template:
            return datasets[i]
    raise TaskFileError(
        f"no dataset has the abbr {template!r}",
        file=file,
        key="template",
        hint=suggest(template, labels, listing="its datasets", shown=labels[:8]),
    )


def _string(value: Any, where: _Where, key: str, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise where.error(key, f"must be a string, not {type(value).__name__} {value!r}")
    return value


def _typed(cfg: Any, where: _Where, key: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(cfg, Mapping):
        raise where.error(key, f"must be a mapping with a type, not {type(cfg).__name__} {cfg!r}")
    options = dict(cfg)
    value = options.pop("type", None)
    name = _type_name(value)
    if not name:
        raise where.error(f"{key}.type", f"needs a type (an OpenCompass class name), not {value!r}")
    return name, options


def _dataset_type(dataset: Mapping[str, Any]) -> str | None:
    """The dataset loader's class name (``MMLUDataset``, ``CircularMMLUDataset``), when the config names it."""
    value = dataset.get("type")
    return (_type_name(value) or None) if value is not None else None


class _Reading:
    """Reading one dataset config."""

    def __init__(self, source: TaskSource, prefix: str, dataset: Mapping[str, Any], options: ReadOptions) -> None:
        self.source = source
        self.where = _Where(source, prefix)
        self.dataset = dataset
        self.options = options

    def error(self, key: str, message: str, hint: str | None = None) -> TaskFileError:
        return self.where.error(key, message, hint)

    def read(self) -> TaskConfig:
        dataset = self.dataset
        infer = dataset.get("infer_cfg")
        if not isinstance(infer, Mapping):
            raise self.error("infer_cfg", f"must be a mapping, not {type(infer).__name__}")
        self._check_keys(infer, _INFER_KEYS, "infer_cfg", "infer_cfg")
        reader = dataset.get("reader_cfg", infer.get("reader_cfg"))
        reader_key = "reader_cfg" if "reader_cfg" in dataset else "infer_cfg.reader_cfg"
        if reader is None:
            raise self.error(
                "reader_cfg",
                "the dataset config has no reader_cfg",
                "add reader_cfg: {input_columns: [question], output_column: answer}",
            )
        if not isinstance(reader, Mapping):
            raise self.error(reader_key, f"must be a mapping, not {type(reader).__name__}")
        self._check_keys(reader, _READER_KEYS, reader_key, "reader_cfg")
        ranges = {
            key: self._range(reader.get(key), f"{reader_key}.{key}")
            for key in ("train_range", "test_range")
            if reader.get(key) is not None
        }
        input_columns = reader.get("input_columns")
        if isinstance(input_columns, str):
            input_columns = input_columns.split()
        if input_columns is not None and (
            not isinstance(input_columns, list) or not all(isinstance(c, str) for c in input_columns)
        ):
            raise self.error(f"{reader_key}.input_columns", f"must be a list of column names, not {input_columns!r}")
        output_column = _string(reader.get("output_column"), self.where, f"{reader_key}.output_column") or None
        train_split = _string(reader.get("train_split", "train"), self.where, f"{reader_key}.train_split")
        test_split = _string(reader.get("test_split", "test"), self.where, f"{reader_key}.test_split")

        mode, inferencer = self._inferencer(infer.get("inferencer"))
        retriever, separator, eos, num_fewshot = self._retriever(infer.get("retriever"), input_columns)
        if inferencer.get("inferencer") == "chat" and retriever is not None:
            # ChatInferencer retrieves and then uses no example ("The in-context examples won't be used by now").
            where = f"{self.source.path}: " if self.source.path else ""
            warnings.warn(
                f"prompt-style: {where}OpenCompass's ChatInferencer uses no in-context examples, so the "
                f"{retriever['name']} retriever's are left out, as OpenCompass leaves them out",
                UserWarning,
                stacklevel=2,
            )
            retriever, num_fewshot = None, None
        template = self._template(infer, inferencer, mode, input_columns, output_column, separator, eos)
        name = dataset.get("abbr")
        if not isinstance(name, str) or not name:
            name = self.source.path.stem if self.source.path else "opencompass"
        train_range, test_range = ranges.get("train_range"), ranges.get("test_range")
        return TaskConfig(
            task=name,
            data=self._data(),
            process_docs=test_range,
            fewshot_process_docs=train_range if retriever is not None else None,
            doc_to_text=whole_record,
            doc_to_target=OutputColumn(output_column),
            allow_null_target=True,  # OpenCompass renders records without an output column (inference sets)
            template=template,
            test_split=test_split,
            fewshot_split=train_split if retriever is not None else None,
            num_fewshot=num_fewshot,
            retriever=retriever,
            metadata={"opencompass": self._metadata(infer, reader, mode)},
            path=self.source.path,
            format="opencompass",
            lines=self._lines(reader_key),
        )

    def _metadata(self, infer: Mapping[str, Any], reader: Mapping[str, Any], mode: str) -> dict[str, Any]:
        """What the config says beyond the prompts, for tools that write it again (the
        OpenCompass exporter): class names, ``reader_cfg``, the inferencer's options and
        ``eval_cfg``, as plain data (a class imported by a ``.py`` config as its dotted path)."""
        types: dict[str, str | None] = {}
        for key in ("prompt_template", "ice_template", "retriever", "inferencer"):
            cfg = infer.get(key)
            types[key] = _type_name(cfg.get("type")) if isinstance(cfg, Mapping) else None
        inferencer = infer.get("inferencer")
        options = {k: v for k, v in inferencer.items() if k != "type"} if isinstance(inferencer, Mapping) else {}
        dataset = self.dataset
        return {
            "abbr": dataset.get("abbr"),
            "mode": mode,
            "type": _dataset_type(dataset),
            # a CircularEval dataset's load() arguments (opencompass/datasets/circular.py)
            **{k: dataset[k] for k in ("circular_patterns", "option_keys", "answer_key") if k in dataset},
            "types": types,
            "reader_cfg": plain_config(reader),
            "inferencer": plain_config(options),
            "eval_cfg": plain_config(self.dataset.get("eval_cfg")),
        }

    def _range(self, value: Any, key: str) -> PartialSplit:
        """``train_range``/``test_range``: a whole number or fraction of the split's
        records (drawn at random, as OpenCompass's ``load_partial_dataset`` draws
        them) or an index slice such as ``"[0:100]"``."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise self.error(key, f"must be a number or a slice such as '[0:100]', not {value!r}")
        if isinstance(value, str) and _SLICE.fullmatch(value) is None:
            raise self.error(
                key,
                f"{value!r} is not an index slice",
                "write a slice of the split's records, such as '[0:100]', '[:50]' or '[100:200:2]'",
            )
        return PartialSplit(value, key)

    def _check_keys(self, cfg: Mapping[str, Any], known: Sequence[str], key: str, what: str) -> None:
        """Every key of ``cfg`` (at ``key``) is one of ``known``; the hint lists the first four."""
        for name in cfg:
            if name not in known:
                hint = suggest(name, known, listing=f"{what} keys", shown=known[:4])
                raise self.error(f"{key}.{name}", f"unknown {what} key {name!r}", hint)

    def _inferencer(self, cfg: Any) -> tuple[str, dict[str, Any]]:
        """The mode the inferencer implies, and its options."""
        if cfg is None:
            return "gen", {}
        name, options = _typed(cfg, self.where, "infer_cfg.inferencer")
        if name not in INFERENCER_MODES:
            hint = did_you_mean(name, INFERENCER_MODES)
            raise self.error(
                "infer_cfg.inferencer.type",
                f"unknown inferencer type {name!r}",
                (f"{hint} " if hint else "") + "known inferencers: " + ", ".join(INFERENCER_MODES),
            )
        token = options.get("gen_field_replace_token", "")
        if not isinstance(token, str):
            raise self.error("infer_cfg.inferencer.gen_field_replace_token", f"must be a string, not {token!r}")
        labels = options.pop("labels", None)
        if labels is not None and name in _LABELLED:
            if not isinstance(labels, (list, tuple)) or not labels:
                raise self.error("infer_cfg.inferencer.labels", f"must be a non-empty list of labels, not {labels!r}")
            options["labels"] = list(labels)
        if name in _OWN_PROMPTS:
            options["inferencer"] = _OWN_PROMPTS[name]
        if name == "MultiTurnGenInferencer":  # AISBench: one request per model reply, "every" by default
            from ..styles.opencompass.multiturn import INFER_MODES

            options.setdefault("infer_mode", "every")
            if options["infer_mode"] not in INFER_MODES:
                raise self.error(
                    "infer_cfg.inferencer.infer_mode",
                    f"must be one of {', '.join(INFER_MODES)}, not {options['infer_mode']!r}",
                )
        elif name == "ChatInferencer":  # one request per assistant message, "last" by default
            from ..styles.opencompass.chat import CHAT_INFER_MODES

            options.setdefault("infer_mode", "last")
            if options["infer_mode"] not in CHAT_INFER_MODES:
                raise self.error(
                    "infer_cfg.inferencer.infer_mode",
                    f"must be one of {', '.join(CHAT_INFER_MODES)}, not {options['infer_mode']!r}",
                )
        else:
            options.pop("infer_mode", None)
            multiround = options.pop("multiround", False)
            if multiround not in (True, False):
                raise self.error("infer_cfg.inferencer.multiround", f"must be true or false, not {multiround!r}")
            if multiround and name == "GenInferencer":
                # Every empty assistant message of a RawPromptTemplate is generated, turn by turn.
                options["infer_mode"] = "multiround"
        return INFERENCER_MODES[name], options

    def _template(
        self,
        infer: Mapping[str, Any],
        inferencer: Mapping[str, Any],
        mode: str,
        input_columns: list[str] | None,
        output_column: str | None,
        separator: str,
        eos: str,
    ) -> dict[str, Any]:
        """The style and its options, by the prompt template's type."""
        prompt = infer.get("prompt_template")
        main = prompt if prompt is not None else infer.get("ice_template")
        kind = _type_name(main.get("type", "PromptTemplate")) if isinstance(main, Mapping) else None
        key = "infer_cfg.prompt_template" if prompt is not None else "infer_cfg.ice_template"
        if kind == "RawPromptTemplate" and mode == "ppl":
            raise self.error(
                "infer_cfg.inferencer.type",
                "a RawPromptTemplate has no perplexity mode: OpenCompass's PPLInferencer cannot score its "
                "messages (they do not depend on the label; OpenCompass fails with an AttributeError)",
                "use GenInferencer, or a label-keyed PromptTemplate for perplexity",
            )
        if inferencer.get("infer_mode") == "multiround" and kind != "RawPromptTemplate":
            raise self.error(
                "infer_cfg.inferencer.multiround",
                f"multiround generation fills the empty assistant messages of a RawPromptTemplate, not a {kind}",
                "use a RawPromptTemplate, or drop multiround",
            )
        if inferencer.get("inferencer") == "chat" and kind not in (None, "PromptTemplate"):
            raise self.error(
                f"{key}.type",
                f"OpenCompass's ChatInferencer makes its chat from a PromptTemplate, not a {kind}",
                "use a PromptTemplate (or GenInferencer with this template)",
            )
        if kind in ("MultiTurnPromptTemplate", "MMPromptTemplate"):
            # AISBench's template types (styles/opencompass/multiturn.py, multimodal.py) on this engine.
            if not isinstance(main.get("template"), Mapping):
                raise self.error(f"{key}.template", f"a {kind} needs a dialogue template (begin/round/end)")
            if prompt is not None and infer.get("ice_template") is not None:
                raise self.error("infer_cfg.ice_template", f"a {kind} takes no in-context examples")
        template = {
            "template_type": "opencompass",
            "ice_template": infer.get("ice_template"),
            "prompt_template": prompt,
            "output_column": output_column,
            "input_columns": input_columns,
            "mode": mode,
            "ice_separator": separator,
            "ice_eos_token": eos,
            "gen_field_replace_token": inferencer.get("gen_field_replace_token", ""),
        }
        for option in ("infer_mode", "inferencer", "labels"):
            if inferencer.get(option) is not None:
                template[option] = inferencer[option]
        self._check_templates(template)
        return template

    def _retriever(
        self, cfg: Any, input_columns: list[str] | None
    ) -> tuple[dict[str, Any] | None, str, str, int | None]:
        """The retriever of the task (``None`` for ZeroRetriever: no pool is read),
        the style's ``ice_separator`` and ``ice_eos_token``, and ``num_fewshot``."""
        from ..errors import OptionError
        from ..retrievers.opencompass_names import translate_retriever

        key = "infer_cfg.retriever"
        if cfg is None:
            return None, "", "", None
        if not isinstance(cfg, Mapping):
            raise self.error(key, f"must be a mapping with a type, not {type(cfg).__name__} {cfg!r}")
        cfg = {k: v for k, v in cfg.items() if k not in _IGNORED_RETRIEVER_OPTIONS}
        if "type" in cfg:
            cfg["type"] = _type_name(cfg["type"]) or cfg["type"]
        name = cfg.get("type")
        try:
            translated = translate_retriever(cfg, input_columns=input_columns)
        except OptionError as exc:
            hint = exc.hint
            if exc.message.startswith("unknown retriever type"):
                from ..retrievers.opencompass_names import OPENCOMPASS_RETRIEVERS

                known = "known retrievers: " + ", ".join(OPENCOMPASS_RETRIEVERS)
                hint = f"{hint}; {known}" if hint and hint.startswith("did you mean") else known
            raise self.error(f"{key}.{exc.key}" if exc.key else key, exc.message, hint) from None
        separator = translated.style.get("ice_separator", "\n")
        eos = translated.style.get("ice_eos_token", "\n")
        for option, value in (("ice_separator", separator), ("ice_eos_token", eos)):
            if not isinstance(value, str):
                raise self.error(f"{key}.{option}", f"must be a string, not {value!r}")
        num_fewshot = translated.task.get("num_fewshot")
        if num_fewshot is not None and (not isinstance(num_fewshot, int) or isinstance(num_fewshot, bool)):
            raise self.error(
                f"{key}.{'k' if name == 'SlidingWindowRetriever' else 'ice_num'}",
                f"must be a whole number, not {num_fewshot!r}",
            )
        if translated.name == "zero":
            return None, separator, eos, None
        return {"name": translated.name, **translated.options}, separator, eos, num_fewshot

    def _check_templates(self, template: Mapping[str, Any]) -> None:
        """Compile the templates now, so that a mistake names the config's key and line."""
        from ..styles.opencompass.infer import InferPrompts
        from ..styles.opencompass.template import TemplateConfigError, compile_template

        try:
            InferPrompts(
                ice_template=compile_template(template["ice_template"], "ice_template"),
                prompt_template=compile_template(template["prompt_template"], "prompt_template"),
                output_column=template["output_column"],
            )
        except TemplateConfigError as exc:
            raise self.error(f"infer_cfg.{exc.key}", exc.message, exc.hint) from None

    def _data(self) -> dict[str, Any]:
        data = self.dataset.get("data")
        if data is None and self.source.data is not None and self.source.data is not self.dataset:
            data = self.source.data.get("data")
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            raise self.error("data", "must be a mapping of split: file", "for example data: {test: test.jsonl}")
        out: dict[str, Any] = {}
        for split, file in data.items():
            if isinstance(file, (list, tuple)):
                out[str(split)] = list(file)
                continue
            if not isinstance(file, (str, Path)) or not str(file):
                raise self.error(f"data.{split}", f"must be a file path or a list of records, not {file!r}")
            path = Path(file).expanduser()
            out[str(split)] = path if path.is_absolute() else self.source.base / path
        return out

    def _lines(self, reader_key: str) -> dict[str, int]:
        """The file's lines, with the task keys the rest of prompt-style uses
        (``template.prompt_template...``, ``retriever.ids``) pointing at the config's."""
        lines = dict(self.source.lines)
        prefix = self.where.prefix
        aliases = {
            f"{prefix}infer_cfg.ice_template": "template.ice_template",
            f"{prefix}infer_cfg.prompt_template": "template.prompt_template",
            f"{prefix}infer_cfg.retriever": "retriever",
            f"{prefix}infer_cfg.inferencer": "template.mode",
            f"{prefix}{reader_key}": "template.output_column",
        }
        for key, line in self.source.lines.items():
            for source_key, alias in aliases.items():
                if key == source_key or key.startswith(source_key + "."):
                    lines.setdefault(alias + key[len(source_key) :], line)
        if f"{prefix}infer_cfg" in self.source.lines:
            lines.setdefault("template", self.source.lines[f"{prefix}infer_cfg"])
        if f"{prefix}infer_cfg.retriever.fix_id_list" in self.source.lines:
            lines.setdefault("retriever.ids", self.source.lines[f"{prefix}infer_cfg.retriever.fix_id_list"])
        for option in ("ice_num", "k"):  # read into num_fewshot
            if f"{prefix}infer_cfg.retriever.{option}" in self.source.lines:
                lines.setdefault("num_fewshot", self.source.lines[f"{prefix}infer_cfg.retriever.{option}"])
        return lines


def _looks_like_python_config(path: Path) -> bool:
    from ..errors import PromptStyleError
    from ..safe.files import read_bytes

    try:
        text = read_bytes(path, what="task file").decode("utf-8", "replace")  # never a FIFO
    except PromptStyleError:
        return False
    # A config that only re-exports others (``with read_base(): from .x import x_datasets``)
    # names neither infer_cfg nor opencompass: mmengine's read_base marks it.
    return any(mark in text for mark in ("infer_cfg", "opencompass", "read_base", "_datasets"))


@dataclass(frozen=True)
class OpenCompassReader:
    """Reads OpenCompass dataset configs (YAML, JSON, mappings, ``.py`` with trust_code)."""

    suffixes: tuple[str, ...] = (".yaml", ".yml", ".json", ".py")

    def detect(self, source: TaskSource) -> bool:
        if source.data is None:
            return source.path is not None and source.path.suffix == ".py" and _looks_like_python_config(source.path)
        return _datasets(source.data) is not None

    def read(self, source: TaskSource, options: ReadOptions) -> TaskConfig:
        if source.data is None:
            source = self._run_python(source, options)
        datasets = _datasets(source.data)
        if datasets is None:
            raise TaskFileError(
                "this is not an OpenCompass dataset config: it has no infer_cfg",
                file=str(source.path) if source.path else None,
                hint="a dataset config has reader_cfg and infer_cfg (or a datasets list of them)",
            )
        prefix, dataset = _choose(datasets, options.template, source)
        return _Reading(source, prefix, dataset, options).read()

    @staticmethod
    def _run_python(source: TaskSource, options: ReadOptions) -> TaskSource:
        from ..safe.oc_python import exec_config, refuse_untrusted

        assert source.path is not None
        if not options.trust_code:
            raise refuse_untrusted(source.path, "OpenCompass dataset config")
        namespace = exec_config(source.path)
        return TaskSource(path=source.path, data=namespace, lines={}, base=source.base)
