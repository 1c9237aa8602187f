"""The classes an exported config names by dotted path; OpenCompass imports them.

OpenCompass 0.5.4's mmengine registries import a ``type`` given as a full
dotted path (``type='prompt_style_opencompass.runtime.PromptStyleDataset'``)
without any registration, in its own process and in the worker processes its
runners start. This module imports OpenCompass, so only OpenCompass imports it.

:class:`PromptStyleDataset` and :class:`PromptStyleTemplate` (the render
route) load the task with prompt-style (``load_task(task, **load_options)``,
the options ``prompt-style export`` was given) and render every record once
per process; the dataset holds each record's index and target, the template
hands OpenCompass each record's prompt. :class:`PromptStyleRetriever` (the
retriever route) gives OpenCompass's own templates the examples a prompt-style
retriever chooses.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from typing import Any

from datasets import Dataset, DatasetDict, concatenate_datasets
from datasets.table import InMemoryTable
from opencompass.datasets.base import BaseDataset
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import BaseRetriever
from opencompass.utils.prompt import PromptList

import prompt_style

from .errors import OpenCompassExportError
from .rendering import Prompts, render_prompts

__all__ = ["PromptStyleDataset", "PromptStyleTemplate", "PromptStyleRetriever", "INDEX", "load", "prompts"]

INDEX = "ps_index"
"""The column holding each record's index in the task's evaluated split."""

_LOCK = threading.Lock()
_TASKS: dict[str, Any] = {}
_PROMPTS: dict[tuple[str, str], Prompts] = {}


def _plain(value: Any) -> Any:
    """mmengine's ``ConfigDict``s and lists as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _key(task: str, load_options: Mapping[str, Any] | None) -> str:
    return json.dumps([str(task), _plain(load_options or {})], sort_keys=True, default=str)


def load(task: str, load_options: Mapping[str, Any] | None = None) -> Any:
    """``prompt_style.load_task(task, **load_options)``, once per process."""
    key = _key(task, load_options)
    with _LOCK:
        loaded = _TASKS.get(key)
        if loaded is None:
            loaded = _TASKS[key] = prompt_style.load_task(task, **_plain(load_options or {}))
        return loaded


def prompts(task: str, load_options: Mapping[str, Any] | None = None, kind: str = "text") -> Prompts:
    """Every record's prompts (:func:`~prompt_style_opencompass.rendering.render_prompts`), once per process."""
    key = (_key(task, load_options), kind)
    with _LOCK:
        made = _PROMPTS.get(key)
    if made is None:
        plain = None
        if kind == "dialogue":  # OpenCompass applies the meta template: prompt-style renders without one
            plain = load(task, {**_plain(load_options or {}), "meta": "plain", "meta_options": {}})
        made = render_prompts(load(task, load_options), kind, plain)
        with _LOCK:
            _PROMPTS[key] = made
    return made


def _column(values: list[Any]) -> list[Any]:
    """Targets as one Arrow type: as they are when all are numbers or all text,
    otherwise as text (JSON for lists and mappings)."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int} or kinds <= {str} or kinds <= {float, int} or kinds <= {bool}:
        return values
    return [v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in values]


class PromptStyleDataset(BaseDataset):
    """The evaluated split of a prompt-style task: a ``test`` split (also served as
    ``train``; the render route retrieves no examples) with each record's index
    (column ``ps_index``), its target (the column ``reader_cfg.output_column``
    names) and the ``subdivision`` and ``idx`` columns of OpenCompass's datasets.

    :param reader_cfg: ``input_columns=['ps_index']``, ``output_column`` for the targets.
    :param task: the task file, as ``prompt-style render`` takes it.
    :param load_options: the keyword arguments of ``prompt_style.load_task``.
    :param prompts: ``text`` or ``dialogue`` (see :class:`PromptStyleTemplate`).
    :param labels: perplexity: only the records scored on these labels (OpenCompass
        scores one set of labels per dataset; records with another number of
        choices are another dataset of the same config).
    """

    def __init__(
        self,
        reader_cfg: Mapping[str, Any] | None = None,
        task: str | None = None,
        load_options: Mapping[str, Any] | None = None,
        prompts: str = "text",
        labels: list[Any] | None = None,
        k: int | list[int] = 1,
        n: int = 1,
        **unknown: Any,
    ) -> None:
        # BaseDataset.__init__ is not called (it would map over the rows to add its columns);
        # the same columns are made here: OpenCompass's evaluators group by them.
        abbr = unknown.pop("abbr", "dataset")
        if unknown or task is None:
            what = f"unknown keys {', '.join(sorted(unknown))}" if unknown else "no task"
            raise OpenCompassExportError(f"PromptStyleDataset: {what}", hint="export the task again")
        made = globals()["prompts"](task, load_options, prompts)
        reader_cfg = _plain(reader_cfg or {})
        target = reader_cfg.get("output_column") or "target"
        kept = made.indices(_plain(labels))
        targets = _column(made.targets)
        columns = {INDEX: kept, target: [targets[i] for i in kept], "subdivision": [abbr] * len(kept), "idx": kept}
        table = InMemoryTable.from_pydict(columns)
        # A fingerprint of the task and options, not of the data: datasets would hash every value.
        fingerprint = hashlib.sha256(f"{_key(task, load_options)}|{prompts}|{labels!r}".encode()).hexdigest()[:16]
        split = Dataset(table, fingerprint=fingerprint)
        if n > 1:
            split = concatenate_datasets([split] * n)
        self.dataset = DatasetDict({"train": split, "test": split})
        self._init_reader(**{"input_columns": [INDEX], "output_column": target, **reader_cfg})


class PromptStyleTemplate(PromptTemplate):
    """Hands OpenCompass each record's prompt as prompt-style renders it.

    ``prompts="text"``: the finished string (the task's meta template applied by
    prompt-style; OpenCompass passes a string to a language model untouched).
    ``prompts="dialogue"``: the dialogue as a ``PromptList``, which OpenCompass's
    template parser formats with the model's ``meta_template``.

    In perplexity mode its ``template`` is keyed by the labels (``labels``, the
    dataset's), so that ``PPLInferencer`` scores one prompt per label.
    """

    def __init__(
        self,
        task: str,
        load_options: Mapping[str, Any] | None = None,
        prompts: str = "text",
        labels: list[Any] | None = None,
    ) -> None:
        made = self._made = globals()["prompts"](task, load_options, prompts)
        template: Any = "{" + INDEX + "}"
        labels = _plain(labels)
        if made.mode == "ppl":
            sets = made.label_sets()
            if labels is None and len(sets) == 1:
                labels = sets[0]
            if labels not in sets:
                raise OpenCompassExportError(
                    f"PromptStyleTemplate: no record is scored on the labels {labels!r} (the task's: "
                    f"{', '.join(map(repr, sets))})",
                    hint="export the task again: the config has one dataset per set of labels",
                )
            template = {label: "" for label in labels}
        super().__init__(template=template, ice_token=None, sep_token=None)
        self._label = {label: i for i, label in enumerate(labels or ())}
        self._parts = made.parts  # read per call: the hot path of PPLInferencer

    @staticmethod
    def _shown(prompt: Any) -> Any:
        # A new list of the (shared, never changed) items: OpenCompass's parsers only read them.
        return prompt if isinstance(prompt, str) else PromptList(prompt)

    def generate_item(
        self,
        entry: Mapping[str, Any],
        output_field: Any = None,
        output_field_replace_token: str = "",
        ice_field_replace_token: str = "",
    ) -> Any:
        made = self._made
        if made.mode != "gen":
            raise OpenCompassExportError(
                "PromptStyleTemplate: this task is scored by perplexity (PPLInferencer), not generated",
                hint="export the task again: the config names the inferencer that fits",
            )
        return self._shown(made.prompt(entry[INDEX]))

    def generate_label_prompt_item(
        self, entry: Mapping[str, Any], ice: Any, label: Any, remain_sep: bool = False
    ) -> Any:
        position = self._label.get(label)
        if position is None:
            raise OpenCompassExportError(
                f"PromptStyleTemplate: no prompt for the label {label!r} (the task's labels: "
                f"{', '.join(map(repr, self._label))})",
                hint="leave PPLInferencer's labels unset",
            )
        part = self._parts[entry[INDEX]]
        if part.__class__ is tuple:  # multiple choice: the context and the label's continuation
            return part[0][position] + part[1][position]
        prompt = part[position]
        return prompt if prompt.__class__ is str else PromptList(prompt)

    def generate_ice_item(self, entry: Mapping[str, Any], label: Any) -> Any:
        raise OpenCompassExportError(
            "PromptStyleTemplate renders whole prompts: in-context examples are prompt-style's",
            hint="use ZeroRetriever with it",
        )


class PromptStyleRetriever(BaseRetriever):
    """The in-context examples a prompt-style retriever (any ``retrieve_examples``
    plugin) chooses, for OpenCompass's own templates to lay out.

    It loads the task with prompt-style and asks the task's retriever for the
    examples of each record OpenCompass evaluates (found by its ``idx``, which
    ``BaseDataset`` adds, so a partitioned run still asks for the right records).

    :param task: the task file, as ``prompt-style render`` takes it.
    :param load_options: the keyword arguments of ``prompt_style.load_task``.
    """

    def __init__(
        self,
        dataset: Any,
        task: str,
        load_options: Mapping[str, Any] | None = None,
        ice_separator: str = "\n",
        ice_eos_token: str = "\n",
        ice_num: int = 1,
    ) -> None:
        super().__init__(dataset, ice_separator, ice_eos_token, ice_num)
        self._task = load(task, load_options)

    def retrieve(self) -> list[list[int]]:
        task = self._task
        records = list(task.records())
        select = task.renderer.retriever.select
        names = self.test_ds.column_names
        indices = self.test_ds["idx"] if "idx" in names else range(len(self.test_ds))
        out = []
        for i in indices:
            if not 0 <= i < len(records):
                raise OpenCompassExportError(
                    f"PromptStyleRetriever: OpenCompass evaluates record {i}, and the task has {len(records)}",
                    hint="export the task again with the same data",
                )
            out.append([int(j) for j in select(i, records[i])])
        return out
