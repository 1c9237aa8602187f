"""The plain route: a task as OpenCompass's own dataset config.

A task maps onto OpenCompass's own classes exactly when its prompts are
OpenCompass's — the ``opencompass`` style, ``PromptTemplate`` templates,
``GenInferencer`` or ``PPLInferencer`` — and OpenCompass 0.5.4 builds them as
prompt-style does, which holds unless the task meets one of the places where
prompt-style departs from OpenCompass on purpose (docs/opencompass.md,
"Differences"). :func:`plain_problem` checks all of that and says what stands
in the way; :func:`plain_dataset` writes the dataset dict:

* ``type=HFDataset``: OpenCompass reads the task's JSON Lines itself, through a
  dataset folder whose ``README.md`` maps each split to its file (OpenCompass's
  ``HFDataset`` refuses a ``data_files`` mapping); :mod:`.datacheck` checks
  that its reader gives the records prompt-style reads;
* the templates as the task has them (``PromptTemplate``), ``reader_cfg`` with
  its splits and ranges;
* the retriever OpenCompass has for prompt-style's: ``zero`` ->
  ``ZeroRetriever``, ``fixk`` -> ``FixKRetriever``, ``opencompass_random`` ->
  ``RandomRetriever``, ``sliding_window`` -> ``SlidingWindowRetriever``, with
  the shots and seed the task was loaded with; any other retriever is the
  retriever route's :class:`~prompt_style_opencompass.runtime.PromptStyleRetriever`;
* ``GenInferencer`` or ``PPLInferencer`` for the task's mode.

The meta template, when it is an OpenCompass one, is the model's
``meta_template`` (the exporter writes it beside the datasets).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import prompt_style

from .datacheck import ADDED_COLUMNS, data_problem
from .dialogue import MetaRoles, Unsupported
from .pyconfig import Name

OC_RETRIEVERS = {
    "zero": "ZeroRetriever",
    "fixk": "FixKRetriever",
    "opencompass_random": "RandomRetriever",
    "sliding_window": "SlidingWindowRetriever",
}
"""prompt-style retriever -> the OpenCompass 0.5.4 class that picks the same examples."""
IMPORTS = {
    "PromptTemplate": "opencompass.openicl.icl_prompt_template",
    "ZeroRetriever": "opencompass.openicl.icl_retriever",
    "FixKRetriever": "opencompass.openicl.icl_retriever",
    "RandomRetriever": "opencompass.openicl.icl_retriever",
    "SlidingWindowRetriever": "opencompass.openicl.icl_retriever",
    "GenInferencer": "opencompass.openicl.icl_inferencer",
    "PPLInferencer": "opencompass.openicl.icl_inferencer",
    "AccEvaluator": "opencompass.openicl.icl_evaluator",
    "AccwithDetailsEvaluator": "opencompass.openicl.icl_evaluator",
    "HFDataset": "opencompass.datasets",
}
"""Where the classes a config names are imported from."""
INFERENCERS = {"gen": "GenInferencer", "ppl": "PPLInferencer"}
RETRIEVER_CLASS = "prompt_style_opencompass.runtime.PromptStyleRetriever"
_DIALOGUE_KEYS = ("begin", "round", "end")
_SPLIT_NAME = re.compile(r"\w+\Z")


class NotPlain(Exception):
    """Why a task is not OpenCompass's own config (the message says)."""


@dataclass
class PlainTask:
    """What the plain and retriever routes write, worked out from a loaded task."""

    dataset: dict[str, Any]
    """The dataset dict (``type`` values are :class:`~.pyconfig.Name`)."""
    splits: dict[str, Path]
    """The dataset folder's splits: name -> data file."""
    meta_template: Mapping[str, Any] | None = None
    """The OpenCompass meta template to give the model, if any."""
    twin: dict[str, Any] = field(default_factory=dict)
    """The same dataset as prompt-style reads it (for the check after writing)."""
    route: str = "plain"


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _role_items(template: Any, sections: Sequence[str]) -> list[Mapping[str, Any]]:
    """The role items of a dialogue template's ``sections`` (of every label's, if label-keyed)."""
    if not isinstance(template, Mapping):
        return []
    if not set(template) <= set(_DIALOGUE_KEYS):
        return [item for value in template.values() for item in _role_items(value, sections)]
    items: list[Mapping[str, Any]] = []
    for section in sections:
        part = template.get(section)
        for item in part if isinstance(part, list) else [part]:
            if isinstance(item, Mapping) and "role" in item:
                items.append(item)
    return items


def _label_keyed(template: Any) -> bool:
    return isinstance(template, Mapping) and not set(template) <= set(_DIALOGUE_KEYS)


def _type_name(value: Any, default: str = "PromptTemplate") -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value.rsplit(".", 1)[-1]
    name = getattr(value, "__name__", None)
    return name.rsplit(".", 1)[-1] if isinstance(name, str) else repr(value)


def _template(cfg: Any, key: str) -> dict[str, Any] | None:
    """A template dict of the task, for OpenCompass: ``type=PromptTemplate``."""
    if cfg is None:
        return None
    kind = _type_name(cfg.get("type"))
    if kind != "PromptTemplate":
        raise NotPlain(f"{key} is a {kind}: OpenCompass's own route takes PromptTemplate templates")
    out: dict[str, Any] = {"type": Name("PromptTemplate")}
    for name, value in cfg.items():
        if name == "type":
            continue
        if name == "sep_token" and value is not None:
            raise NotPlain(f"{key} has a sep_token, which OpenCompass leaves in in-context examples")
        out[name] = value
    template = out.get("template")
    if isinstance(template, Mapping):
        for section in ("end",):
            if any(isinstance(v, Mapping) and section in v for v in [template, *template.values()]):
                raise NotPlain(f"{key} has an end section, which OpenCompass 0.5.4 fails to parse")
        for item in _role_items(template, _DIALOGUE_KEYS):
            if "prompt" not in item:
                raise NotPlain(f"{key} has a {item.get('role')} item without a prompt (OpenCompass shows its default)")
    for text in _strings(template):
        for name in ADDED_COLUMNS:
            if "{" + name + "}" in text:
                raise NotPlain(f"{key} names {{{name}}}, a column OpenCompass's BaseDataset adds to every record")
    return out


def _check_meta(meta: Any, meta_name: str | None, templates: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The OpenCompass meta template to export (``None``: none), or :class:`NotPlain`."""
    if meta_name == "plain":
        return None  # the opencompass style's turns joined as OpenCompass joins them without a meta template
    if not isinstance(meta, prompt_style.OpenCompassMeta):
        raise NotPlain(f"the meta template {meta_name!r} is not an OpenCompass one: prompt-style applies it")
    template = meta.template
    if template is None:
        return None
    if not isinstance(template, Mapping):
        raise NotPlain("a meta template that is a list of messages applies to RawPromptTemplate messages only")
    try:
        roles = MetaRoles.of(template, meta.api)
    except Unsupported as exc:
        raise NotPlain(f"the meta template has {exc}") from None
    for key, cfg in templates.items():
        if cfg is None:
            continue
        for item in _role_items(cfg.get("template"), ("round",)):
            if item["role"] not in roles.round:
                raise NotPlain(
                    f"{key} has a {item['role']} item in its round, a role the meta template's round lacks "
                    "(OpenCompass 0.5.4 fails on it)"
                )
        if roles.api:
            for item in _role_items(cfg.get("template"), ("begin", "end")):
                role = item["role"] if item["role"] in (*roles.round, *roles.reserved) else item.get("fallback_role")
                if role in roles.generating:
                    raise NotPlain(f"{key} has a {role} item in begin or end, where OpenCompass's API parser stops")
    ice = templates.get("ice_template")
    if ice is not None:
        examples = ice.get("template")
        for dialogue in examples.values() if _label_keyed(examples) else [examples]:
            order = [roles.round.index(item["role"]) for item in _role_items(dialogue, ("round",))]
            if any(b <= a for a, b in zip(order, order[1:])):
                # prompt-style splits consecutive examples into rounds together, OpenCompass one by one
                raise NotPlain("the ice_template's round is not in the meta template's round order")
    return template


def _data_file(config: Any, split: str) -> Path:
    value = config.data.get(split)
    if not isinstance(value, (str, Path)):
        what = "records in memory" if isinstance(value, list) else "several files" if value else "no data"
        raise NotPlain(f"split {split!r} has {what}: OpenCompass's own route reads one data file per split")
    return Path(value).resolve()


def plain_task(
    task: Any,
    *,
    name: str,
    retriever_route: bool = False,
    wrap_any: bool = False,
    load_options: Mapping[str, Any] | None = None,
) -> PlainTask:
    """The plain (or, with ``retriever_route``, the retriever) route's dataset for ``task``.

    The retriever route takes the retrievers OpenCompass has no class for; with
    ``wrap_any`` (the route forced) any retriever that gives examples.

    :raises NotPlain: saying what keeps the task from OpenCompass's own classes.
    """
    config = task.config
    renderer = task.renderer
    options = config.template
    plugins = renderer.plugins
    style = (plugins.get("format_prompt") or {}).get("name")
    if style != "opencompass" or not isinstance(options, Mapping):
        raise NotPlain(f"its style is {style!r}: OpenCompass builds the prompts of the opencompass style only")
    for option, value in (("inferencer", options.get("inferencer")), ("infer_mode", options.get("infer_mode"))):
        if value is not None:
            raise NotPlain(f"its inferencer builds prompts of its own ({option} {value!r})")
    meta = (config.metadata or {}).get("opencompass") or {}
    types = meta.get("types") or {}
    reader = dict(meta.get("reader_cfg") or {})
    if renderer.chat is not None:
        raise NotPlain("chat rules apply (system instruction, few-shot as multi-turn), which OpenCompass has not")
    if config.process_docs is not None and "test_range" not in reader:
        raise NotPlain("its records are processed (process_docs) before rendering")
    mode = (load_options or {}).get("mode") or options.get("mode", "gen")  # --mode overrides the inferencer's
    templates = {
        key: _template(options.get(key), key) if types.get(key) in (None, "PromptTemplate") else None
        for key in ("ice_template", "prompt_template")
    }
    for key in templates:
        if options.get(key) is not None and templates[key] is None:
            raise NotPlain(f"{key} is a {types.get(key)}: OpenCompass's own route takes PromptTemplate templates")

    retriever_name = (plugins.get("retrieve_examples") or {}).get("name") or "zero"
    shots = retriever_name != "zero"
    separator, eos = options.get("ice_separator", "\n"), options.get("ice_eos_token", "\n")
    retriever_options = dict(config.retriever) if isinstance(config.retriever, Mapping) else {}
    retriever: dict[str, Any]
    if retriever_route and retriever_name == "zero":
        raise NotPlain("the task takes no in-context examples (the plain route's ZeroRetriever)")
    if retriever_route and retriever_name in OC_RETRIEVERS and not wrap_any:
        raise NotPlain(f"OpenCompass has a retriever of its own for {retriever_name!r} (the plain route)")
    if retriever_name == "zero":
        retriever = {"type": Name("ZeroRetriever")}
        if eos:
            retriever["ice_eos_token"] = eos
        prompt, ice = templates["prompt_template"], templates["ice_template"]
        # OpenCompass asks for an ice_token whenever an ice_template is given, even with
        # no examples to place; with none, the template alone gives the same prompt.
        if prompt is not None and ice is not None and prompt.get("ice_token") is None:
            templates["ice_template"] = None
        elif prompt is None and ice is not None and ice.get("ice_token") is None:
            templates["prompt_template"], templates["ice_template"] = ice, None
    elif retriever_name in OC_RETRIEVERS and not retriever_route:
        retriever = {"type": Name(OC_RETRIEVERS[retriever_name])}
        if retriever_name == "fixk":
            retriever["fix_id_list"] = list(retriever_options.get("fix_id_list", []))
        elif retriever_name == "opencompass_random":
            if config.num_fewshot is not None:
                retriever["ice_num"] = config.num_fewshot
            retriever["seed"] = retriever_options.get("seed", 43)
        else:
            retriever["k"] = config.num_fewshot
        retriever.update(ice_separator=separator, ice_eos_token=eos)
    elif not retriever_route:
        raise NotPlain(f"OpenCompass has no retriever giving the examples of prompt-style's {retriever_name!r}")
    else:
        if "test_range" in reader:
            raise NotPlain("reader_cfg.test_range numbers records otherwise than the task (retriever route)")
        retriever = {
            "type": RETRIEVER_CLASS,
            "task": None,  # filled in by the exporter
            "load_options": dict(load_options or {}),
            "ice_separator": separator,
            "ice_eos_token": eos,
        }
    if mode == "ppl":
        main = templates["prompt_template"] or templates["ice_template"]
        if not options.get("labels") and not _label_keyed((main or {}).get("template")):
            raise NotPlain(
                "perplexity with a template that is not label-keyed (OpenCompass takes the labels from the data)"
            )

    test_split = config.test_split
    pool_split = config.fewshot_split or test_split
    files = {test_split: _data_file(config, test_split)}
    if shots:
        files[pool_split] = _data_file(config, pool_split)
    if config.fewshot_process_docs is not None and "train_range" not in reader:
        raise NotPlain("its few-shot examples are processed (process_docs) before use")
    for split, path in files.items():
        problem = data_problem(prompt_style.iter_records(path, split), split)
        if problem:
            raise NotPlain(problem)
    ice = templates["ice_template"]
    if shots and ice is not None and _label_keyed(ice.get("template")) and options.get("output_column"):
        keys = list(ice["template"])
        column = options["output_column"]
        for index, record in enumerate(prompt_style.iter_records(files[pool_split], pool_split)):
            value = record.get(column)
            if not any(value == key and type(value) is type(key) for key in keys):
                raise NotPlain(
                    f"split {pool_split!r} record {index}: its {column} {value!r} is not one of the ice_template's "
                    f"labels {keys!r} as written (OpenCompass looks the label up exactly)"
                )
    meta_name = (plugins.get("apply_meta_template") or {}).get("name")
    meta_template = _check_meta(renderer.meta, meta_name, templates)

    names = {split: split if _SPLIT_NAME.match(split) else f"split{i}" for i, split in enumerate(files)}
    reader_cfg: dict[str, Any] = {
        "input_columns": list(options.get("input_columns") or []),
        "output_column": options.get("output_column"),
        "train_split": names[pool_split] if shots else names[test_split],
        "test_split": names[test_split],
    }
    for key in ("train_range", "test_range"):
        if key in reader:
            reader_cfg[key] = reader[key]
    inferencer: dict[str, Any] = {"type": Name(INFERENCERS[mode])}
    if types.get("inferencer") == INFERENCERS[mode]:
        for key, value in (meta.get("inferencer") or {}).items():
            if key not in ("labels", "gen_field_replace_token", "infer_mode", "multiround"):
                inferencer[key] = value
    if mode == "gen" and options.get("gen_field_replace_token"):
        inferencer["gen_field_replace_token"] = options["gen_field_replace_token"]
    if mode == "ppl" and options.get("labels"):
        inferencer["labels"] = list(options["labels"])
    infer_cfg: dict[str, Any] = {}
    for key in ("ice_template", "prompt_template"):
        if templates[key] is not None:
            infer_cfg[key] = templates[key]
    infer_cfg["retriever"] = retriever
    infer_cfg["inferencer"] = inferencer
    dataset = {
        "abbr": name,
        "type": Name("HFDataset"),
        "path": None,  # the dataset folder, filled in by the exporter
        "reader_cfg": reader_cfg,
        "infer_cfg": infer_cfg,
        "eval_cfg": eval_cfg(meta.get("eval_cfg"), mode),
    }
    twin = {
        "abbr": name,
        "reader_cfg": {**reader_cfg, "train_split": pool_split if shots else test_split, "test_split": test_split},
        "infer_cfg": _as_names(infer_cfg),
        "data": {split: str(path) for split, path in files.items()},
    }
    return PlainTask(
        dataset=dataset,
        splits={names[split]: path for split, path in files.items()},
        meta_template=meta_template,
        twin=twin,
        route="retriever" if retriever_route else "plain",
    )


def eval_cfg(given: Any, mode: str) -> dict[str, Any]:
    """The task's own ``eval_cfg`` (an OpenCompass config's, as plain data), else
    accuracy for perplexity, exact equality with the target for generation."""
    if isinstance(given, Mapping) and given:
        return dict(given)
    return {"evaluator": {"type": Name("AccEvaluator" if mode == "ppl" else "AccwithDetailsEvaluator")}}


def _as_names(value: Any) -> Any:
    """A dict of the config with class names as strings, as prompt-style reads configs."""
    if isinstance(value, Name):
        return value.name
    if isinstance(value, Mapping):
        return {k: _as_names(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_names(v) for v in value]
    return value
