"""OpenCompass retriever classes and the prompt-style retrievers that stand for them.

An OpenCompass dataset config names its retriever by class
(``retriever=dict(type=FixKRetriever, fix_id_list=[0, 1, 2])``). The reader of
OpenCompass configs translates that dict with :func:`translate_retriever` into
three parts, because OpenCompass's retriever object does three jobs:

* choosing example indices: our retriever (``retrieve_examples`` plugin) and its options;
* how many examples: ``ice_num`` (``k`` for ``SlidingWindowRetriever``), which
  becomes the task's ``num_fewshot`` so that ``--shots`` can override it;
* joining the examples: ``ice_separator`` and ``ice_eos_token`` belong to the
  prompt side (OpenCompass's ``BaseRetriever.generate_ice``), so they go to the
  style, with the defaults of the class the config names.

Retrievers that look at the text of a record (``BM25Retriever``,
``TopkRetriever``) take the option ``input_columns``: the reader passes
``reader_cfg.input_columns`` (a list, or a string split on whitespace, as
OpenCompass's ``DatasetReader`` does), and the query of a record is the
``str()`` of those fields joined by single spaces.

Every retriever here returns, for each record, the indices OpenCompass 0.5.4
would give it; like OpenCompass, they do not skip the record itself when the
few-shot pool is the evaluated split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._suggest import suggest
from ..errors import OptionError

__all__ = [
    "OpenCompassRetriever",
    "OPENCOMPASS_RETRIEVERS",
    "STYLE_OPTIONS",
    "TranslatedRetriever",
    "translate_retriever",
]

STYLE_OPTIONS = ("ice_separator", "ice_eos_token")
"""Retriever options of OpenCompass that shape the prompt, not the choice of examples."""

_NEWLINES = {"ice_separator": "\n", "ice_eos_token": "\n"}


@dataclass(frozen=True)
class OpenCompassRetriever:
    """How one OpenCompass retriever class maps onto prompt-style."""

    name: str | None
    """Our retriever name; ``None`` when prompt-style has no equivalent."""
    options: Mapping[str, str] = field(default_factory=dict)
    """OpenCompass option -> our retriever option (same name in every case so far)."""
    option_defaults: Mapping[str, Any] = field(default_factory=dict)
    """Our retriever options to set with OpenCompass's default when the config
    omits them (so that the default is OpenCompass's, and ``--seed`` still
    replaces it)."""
    task_keys: Mapping[str, str] = field(default_factory=dict)
    """OpenCompass option -> task key (``ice_num`` -> ``num_fewshot``)."""
    style_defaults: Mapping[str, str] = field(default_factory=lambda: dict(_NEWLINES))
    """``ice_separator`` / ``ice_eos_token`` defaults of this class (prompt side)."""
    ignored: tuple[str, ...] = ()
    """Options OpenCompass accepts and this class never uses."""
    input_columns: bool = False
    """Whether the retriever reads the record's text (``input_columns`` option)."""
    distribution: str | None = None
    """The distribution to install for it, when it is not built in."""
    note: str = ""
    """Why there is no equivalent, or what to know."""


OPENCOMPASS_RETRIEVERS: Mapping[str, OpenCompassRetriever] = {
    "ZeroRetriever": OpenCompassRetriever(
        name="zero",
        # ZeroRetriever(dataset, ice_eos_token='') passes ice_separator='' to its base.
        style_defaults={"ice_separator": "", "ice_eos_token": ""},
        note="takes only ice_eos_token; OpenCompass rejects ice_separator and ice_num here",
    ),
    "FixKRetriever": OpenCompassRetriever(
        name="fixk",
        options={"fix_id_list": "fix_id_list"},
        ignored=("ice_num",),
    ),
    "RandomRetriever": OpenCompassRetriever(
        name="opencompass_random",
        options={"seed": "seed"},
        option_defaults={"seed": 43},
        task_keys={"ice_num": "num_fewshot"},
        note="OpenCompass 0.5.4 does not register it, so only a class object (a .py config) names it there",
    ),
    "SlidingWindowRetriever": OpenCompassRetriever(
        name="sliding_window",
        task_keys={"k": "num_fewshot"},
        ignored=("ice_num",),
    ),
    "BM25Retriever": OpenCompassRetriever(
        name="bm25",
        task_keys={"ice_num": "num_fewshot"},
        input_columns=True,
        distribution="prompt-style-bm25",
    ),
    "TopkRetriever": OpenCompassRetriever(
        name="topk",
        options={
            "sentence_transformers_model_name": "model",
            "tokenizer_name": "tokenizer_name",
            "batch_size": "batch_size",
        },
        # OpenCompass's defaults; both load only when already on this machine (never downloaded).
        option_defaults={"model": "all-mpnet-base-v2", "tokenizer_name": "gpt2-xl"},
        task_keys={"ice_num": "num_fewshot"},
        input_columns=True,
        distribution="prompt-style-topk",
    ),
    "DPPRetriever": OpenCompassRetriever(
        name=None, note="determinantal point process sampling over embeddings is not implemented"
    ),
    "MDLRetriever": OpenCompassRetriever(
        name=None, note="it scores candidate prompts with a language model, which prompt-style never runs"
    ),
    "VotekRetriever": OpenCompassRetriever(name=None, note="vote-k selection is not implemented"),
}
"""OpenCompass 0.5.4 retriever class name -> its prompt-style equivalent."""


@dataclass(frozen=True)
class TranslatedRetriever:
    """An OpenCompass retriever dict, split into the parts prompt-style keeps apart."""

    name: str
    """Our retriever name."""
    options: dict[str, Any]
    """Options for our retriever (``retriever: {name: ..., **options}`` in a task)."""
    task: dict[str, Any]
    """Task keys (``num_fewshot``); empty when the config leaves OpenCompass's default."""
    style: dict[str, str]
    """``ice_separator`` and ``ice_eos_token`` for the prompt side, defaults filled in."""


def _class_name(type_: Any) -> str:
    if isinstance(type_, type):
        return type_.__name__
    return str(type_).rsplit(".", 1)[-1]


def translate_retriever(
    config: Mapping[str, Any],
    *,
    input_columns: Sequence[str] | str | None = None,
) -> TranslatedRetriever:
    """Translate ``infer_cfg.retriever`` of an OpenCompass config.

    :param config: the retriever dict, with ``type`` a class name
        (``"FixKRetriever"``, dotted paths and class objects are accepted too).
    :param input_columns: ``reader_cfg.input_columns``, handed to retrievers that
        read the record's text.
    :returns: the :class:`TranslatedRetriever`.
    :raises OptionError: for an unknown class (listing the known ones), a class
        prompt-style does not implement, or an option the class does not take;
        ``key`` names the option, relative to the retriever dict.
    """
    if "type" not in config:
        raise OptionError("the retriever has no type", key="type", hint=f"known: {', '.join(OPENCOMPASS_RETRIEVERS)}")
    cls = _class_name(config["type"])
    entry = OPENCOMPASS_RETRIEVERS.get(cls)
    if entry is None:
        raise OptionError(
            f"unknown retriever type {cls!r}",
            key="type",
            hint=suggest(cls, OPENCOMPASS_RETRIEVERS, listing="known"),
        )
    if entry.name is None:
        supported = ", ".join(k for k, v in OPENCOMPASS_RETRIEVERS.items() if v.name)
        raise OptionError(f"retriever type {cls!r} is not supported: {entry.note}", key="type", hint=f"use {supported}")
    options = dict(entry.option_defaults)
    task: dict[str, Any] = {}
    style = dict(entry.style_defaults)
    takes_separator = cls != "ZeroRetriever"
    for key, value in config.items():
        if key == "type":
            continue
        if key in entry.options:
            options[entry.options[key]] = value
        elif key in entry.task_keys:
            task[entry.task_keys[key]] = value
        elif key in STYLE_OPTIONS and (takes_separator or key == "ice_eos_token"):
            style[key] = value
        elif key in entry.ignored:
            continue
        else:
            known = [*entry.options, *entry.task_keys, *entry.ignored]
            known += list(STYLE_OPTIONS) if takes_separator else ["ice_eos_token"]
            raise OptionError(
                f"{cls} has no option {key!r}",
                key=str(key),
                hint=suggest(key, known, listing="its options are"),
            )
    if entry.input_columns and input_columns is not None:
        columns = input_columns.split() if isinstance(input_columns, str) else list(input_columns)
        options["input_columns"] = columns
    return TranslatedRetriever(entry.name, options, task, style)
