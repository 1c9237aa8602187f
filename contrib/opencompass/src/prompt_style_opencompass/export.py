"""``prompt-style export opencompass TASK --out dataset_cfg.py``: the exporter.

It writes one Python dataset config (``NAME_datasets = [dict(...)]``, with
``NAME_meta_template`` when the task's meta template is an OpenCompass one)
and, on the plain and retriever routes, the dataset folder OpenCompass reads
the records through (``<stem>_data/README.md``). The route is the first of
``plain``, ``retriever`` and ``render`` that gives the task's prompts exactly
(see the package's docstring); the file's docstring says which, and why the
earlier ones did not apply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import prompt_style
from prompt_style import ExportRequest, ExportResult

from .dialogue import Unsupported
from .errors import OpenCompassExportError
from .options import ExportOptions, export_options
from .plain import IMPORTS, INFERENCERS, NotPlain, PlainTask, eval_cfg, plain_task
from .pyconfig import Name, NotLiteral, assignment, check_literal, identifier
from .rendering import render_prompts

DATASET_CLASS = "prompt_style_opencompass.runtime.PromptStyleDataset"
TEMPLATE_CLASS = "prompt_style_opencompass.runtime.PromptStyleTemplate"
_TWIN_OPTIONS = ("meta", "meta_options", "model_args", "trust_code")
"""The load_task options the plain config does not hold (the model's side)."""


@dataclass
class Plan:
    """What the exporter writes."""

    route: str
    datasets: list[dict[str, Any]]
    meta_template: Mapping[str, Any] | None = None
    splits: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """Why earlier routes did not apply, and what the user must know."""
    baked: str | None = None
    """The meta template prompt-style applied (render route), if any."""


def export(request: ExportRequest) -> ExportResult:
    """Write ``request``'s task for OpenCompass (:class:`~.exporter.OpenCompassExporter`)."""
    options = export_options(request.options)
    out = Path(request.out)
    if out.suffix != ".py":
        raise OpenCompassExportError(
            f"--out {out} is not a .py file: an OpenCompass dataset config is Python",
            key="out",
            hint="e.g. --out configs/datasets/mytask_gen.py",
        )
    task = request.task
    name = request.name or task.name
    load_options = config_options(request.load_options)
    try:
        plan = choose(task, request, options, name=name, load_options=load_options, out=out)
    except prompt_style.PromptStyleError as exc:  # about the task: name its file
        raise exc.locate(file=str(request.source) if request.source else None) from None
    files = write(plan, task=task, request=request, name=name, out=out)
    return ExportResult(files=tuple(files), usage=usage(out, name, plan))


def config_options(load_options: Mapping[str, Any]) -> dict[str, Any]:
    """``load_task``'s options as a config holds them: what was given, paths absolute."""
    options: dict[str, Any] = {}
    for key, value in load_options.items():
        if value is None or value == {} or value is False and key == "trust_code":
            continue
        if key == "meta":
            value = _absolute(value)
        elif key in ("meta_options", "read_options") and isinstance(value, Mapping):
            value = {k: _absolute(v, k == "data_root") for k, v in value.items()}
        elif key == "data" and isinstance(value, Mapping):
            value = {k: str(v) if isinstance(v, Path) else v for k, v in value.items()}
        options[key] = value
    try:
        check_literal(options)
    except NotLiteral as exc:
        raise OpenCompassExportError(
            f"the option {exc.path} ({type(exc.value).__name__}) cannot be written into a config",
            key=f"load_options.{exc.path}",
            hint="give it as text, a number or a file path",
        ) from None
    return options


def _absolute(value: Any, is_path: bool = False) -> Any:
    if isinstance(value, Path):
        return str(value.resolve())
    if not isinstance(value, str) or not value or (not is_path and "/" not in value and "." not in value):
        return value
    path = Path(value).expanduser()
    return str(path.resolve()) if not path.is_absolute() and path.exists() else value


def choose(
    task: Any,
    request: ExportRequest,
    options: ExportOptions,
    *,
    name: str,
    load_options: Mapping[str, Any],
    out: Path,
) -> Plan:
    """The first route that gives the task's prompts exactly (or the forced one)."""
    notes: list[str] = []
    wanted = options.route
    for route in ("plain", "retriever"):
        if wanted not in ("auto", route):
            continue
        try:
            found = plain_task(
                task,
                name=name,
                retriever_route=route == "retriever",
                wrap_any=wanted == "retriever",
                load_options=load_options,
            )
            if route == "retriever":
                found.dataset["infer_cfg"]["retriever"]["task"] = _source(request, route)
            elif options.verify:
                verify(task, found, load_options)
        except NotPlain as exc:
            if wanted == route:
                raise OpenCompassExportError(
                    f"the {route} route cannot give this task's prompts: {exc}",
                    key="route",
                    hint="leave route=auto to take the route that can",
                ) from None
            if not any(note.endswith(f": {exc}") for note in notes):  # said once
                notes.append(f"not {route}: {exc}")
            continue
        return Plan(route, [found.dataset], found.meta_template, found.splits, notes)
    return render_plan(task, request, options, name=name, load_options=load_options, notes=notes)


def _source(request: ExportRequest, route: str) -> str:
    if request.source is None:
        raise OpenCompassExportError(
            f"the {route} route loads the task again when OpenCompass runs, and this task was given as a mapping",
            hint="write the task to a file and export the file",
        )
    return str(Path(request.source).resolve())


def verify(task: Any, found: PlainTask, load_options: Mapping[str, Any]) -> None:
    """Load the written config back with prompt-style; every record must render as the task does."""
    twin_options = {key: load_options[key] for key in _TWIN_OPTIONS if key in load_options}
    try:
        again = prompt_style.load_task(found.twin, **twin_options)
        pairs = zip_longest(task.render(), again.render())
        for index, (mine, theirs) in enumerate(pairs):
            if mine is None or theirs is None or _shown(mine) != _shown(theirs):
                raise NotPlain(f"record {index} renders otherwise from the written config (a bug: please report it)")
    except prompt_style.PromptStyleError as exc:
        raise NotPlain(f"the written config does not load back: {exc}") from None


def _shown(prompt: Any) -> Any:
    candidates = [(c.label, c.text, c.messages) for c in prompt.candidates or ()]
    return prompt.text, prompt.messages, candidates, prompt.continuations


def render_plan(
    task: Any,
    request: ExportRequest,
    options: ExportOptions,
    *,
    name: str,
    load_options: Mapping[str, Any],
    notes: list[str],
) -> Plan:
    """The render route: prompt-style renders, OpenCompass receives each prompt whole."""
    source = _source(request, "render")
    meta = task.renderer.meta
    kind = "text"
    meta_template = None
    baked = (task.renderer.plugins.get("apply_meta_template") or {}).get("name")
    oc_meta = isinstance(meta, prompt_style.OpenCompassMeta) and isinstance(meta.template, Mapping)
    if oc_meta and not options.bake_meta:
        try:
            made = render_prompts(task, "dialogue")
            kind, meta_template, baked = "dialogue", meta.template, None
        except Unsupported as exc:
            notes.append(f"the meta template is applied by prompt-style: {exc}")
            made = render_prompts(task, "text")
    else:
        made = render_prompts(task, "text")
    if baked == "plain" or (isinstance(meta, prompt_style.OpenCompassMeta) and meta.template is None):
        baked = None  # no meta template: OpenCompass's plain join is prompt-style's plain text
    config = task.config
    metadata = (config.metadata or {}).get("opencompass") or {}
    target = (config.template or {}).get("output_column") if isinstance(config.template, Mapping) else None
    target = target or "target"
    common = {"task": source, "load_options": dict(load_options), "prompts": kind}
    inferencer: dict[str, Any] = {"type": Name(INFERENCERS[made.mode])}
    if (metadata.get("types") or {}).get("inferencer") == INFERENCERS[made.mode]:
        for key, value in (metadata.get("inferencer") or {}).items():
            if key not in ("labels", "gen_field_replace_token", "infer_mode", "multiround"):
                inferencer[key] = value
    if made.mode == "gen" and made.until:
        inferencer["stopping_criteria"] = list(made.until)
    sets: list[Any] = made.label_sets() if made.mode == "ppl" else []
    datasets = []
    for labels in sets if len(sets) > 1 else [None]:
        # PPLInferencer scores one set of labels per dataset: one dataset per number of choices.
        own = dict(common, labels=labels) if labels is not None else common
        datasets.append(
            {
                "abbr": name if labels is None else f"{name}_{len(labels)}",
                "type": DATASET_CLASS,
                **own,
                "reader_cfg": {"input_columns": ["ps_index"], "output_column": target},
                "infer_cfg": {
                    "prompt_template": {"type": TEMPLATE_CLASS, **own},
                    "retriever": {"type": Name("ZeroRetriever")},
                    "inferencer": inferencer,
                },
                "eval_cfg": eval_cfg(metadata.get("eval_cfg"), made.mode),
            }
        )
    if len(sets) > 1:
        notes.append(
            f"one dataset per set of labels ({', '.join(str(len(s)) for s in sets)} choices): OpenCompass's "
            "PPLInferencer scores the same labels for every record of a dataset"
        )
    plan = Plan("render", datasets, meta_template, notes=notes, baked=baked)
    if baked:
        plan.notes.append(
            f"the prompts are complete: prompt-style applies the meta template {baked!r}, so give OpenCompass a "
            "model without meta_template (a language model passes strings through untouched)"
        )
    return plan


def write(plan: Plan, *, task: Any, request: ExportRequest, name: str, out: Path) -> list[Path]:
    """Write the config (and the plain routes' dataset folder); the files written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    if plan.splits:
        folder = out.parent / f"{out.stem}_data"
        folder.mkdir(exist_ok=True)
        readme = folder / "README.md"
        readme.write_text(dataset_card(plan.splits, name), encoding="utf-8")
        plan.datasets[0]["path"] = str(folder.resolve())
        files.append(readme)
    variable = identifier(name)
    try:
        check_literal(plan.datasets)
    except NotLiteral as exc:
        raise OpenCompassExportError(
            f"{exc.path} ({type(exc.value).__name__}) cannot be written into a config", key=exc.path
        ) from None
    used = sorted(_names(plan.datasets))
    lines = [header(plan, task=task, request=request, name=name, variable=variable, out=out), ""]
    modules: dict[str, list[str]] = {}
    for used_name in used:
        modules.setdefault(IMPORTS[used_name], []).append(used_name)
    for module in sorted(modules):
        lines.append(f"from {module} import {', '.join(modules[module])}")
    lines.append("")
    if plan.meta_template is not None:
        lines += ["", assignment(f"{variable}_meta_template", _plain(plan.meta_template))]
    lines += ["", assignment(f"{variable}_datasets", plan.datasets)]
    out.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    files.append(out)
    return files


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _names(value: Any) -> set[str]:
    if isinstance(value, Name):
        return {value.name}
    if isinstance(value, Mapping):
        return set().union(*map(_names, value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*map(_names, value)) if value else set()
    return set()


def dataset_card(splits: Mapping[str, Path], name: str) -> str:
    """The dataset folder's ``README.md``: a Hugging Face dataset card whose
    ``configs`` map each split to its data file, which ``datasets`` (and so
    OpenCompass's ``HFDataset``) reads offline."""
    lines = ["---", "configs:", "- config_name: default", "  data_files:"]
    for split, path in splits.items():
        lines += [f"  - split: {split}", f"    path: {json.dumps(str(path))}"]
    lines += [
        "---",
        "",
        f"The records of `{name}`, as `prompt-style export opencompass` found them: OpenCompass's",
        "`HFDataset` reads this folder (each split is the file named above).",
        "",
    ]
    return "\n".join(lines)


_ROUTES = {
    "plain": "OpenCompass's own classes: no prompt-style when OpenCompass runs",
    "retriever": "OpenCompass's templates; in-context examples chosen by prompt-style (PromptStyleRetriever)",
    "render": "prompt-style renders every record when OpenCompass loads the dataset (PromptStyleDataset, "
    "PromptStyleTemplate)",
}


def header(plan: Plan, *, task: Any, request: ExportRequest, name: str, variable: str, out: Path) -> str:
    """The config's docstring: what it is, the route, how to run it."""
    source = str(request.source) if request.source else "(a task given as a mapping)"
    lines = [
        f'"""{name}: an OpenCompass 0.5.4 dataset config written by `prompt-style export opencompass`.',
        "",
        f"Task: {source}",
        f"Route: {plan.route}: {_ROUTES[plan.route]}.",
    ]
    lines += [f"  ({note})" for note in plan.notes]
    lines += [
        "",
        "Use it from a run config in the same folder:",
        "",
        "    from mmengine.config import read_base",
        "",
        "    with read_base():",
        f"        from .{out.stem} import {variable}_datasets",
    ]
    if plan.meta_template is not None:
        lines.append(f"        from .{out.stem} import {variable}_meta_template")
    lines += ["", f"    datasets = [*{variable}_datasets]"]
    if plan.meta_template is not None:
        lines.append(f"    models = [dict(type=..., meta_template={variable}_meta_template, ...)]")
    elif plan.baked:
        lines.append("    models = [dict(type=..., ...)]  # no meta_template: the prompts are complete")
    if plan.route != "plain":
        lines += ["", "OpenCompass's environment needs prompt-style-opencompass (and the task's plugins) installed."]
    lines.append('"""')
    return "\n".join(lines)


def usage(out: Path, name: str, plan: Plan) -> str:
    """The command line the CLI prints."""
    variable = identifier(name)
    if out.parent.name == "datasets":
        return f"opencompass --config-dir {out.parent.parent} --datasets {out.stem} --models YOUR_MODEL"
    return f"opencompass RUN_CONFIG.py, with `from .{out.stem} import {variable}_datasets` in its read_base()"
