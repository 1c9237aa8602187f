"""Rendering the same task in other processes, with other hash seeds.

A plugin must give the same prompt in any process: a set iterated in hash order,
``hash()`` of a string or a module-level random generator would make a worker
render differently from its parent. The kit renders a task here and in two fresh
interpreters with different ``PYTHONHASHSEED`` values, started at once, and
compares everything (the JSON view, the dialogue and each record's few-shot
selection).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import prompt_style

from ._plugin import PluginUnderTest

__all__ = ["HASH_SEEDS", "rendered", "rendered_in_processes"]

HASH_SEEDS = ("0", "4242")

_CHILD = r"""
import base64, importlib, json, pickle, sys
import prompt_style

def rendered(task):
    out = []
    for result in task.render():
        out.append({"json": result.to_json(), "dialogue": prompt_style.dialogue_to_json(result.dialogue)})
    return out

def obj(spec):
    if isinstance(spec, dict):
        return pickle.loads(base64.b64decode(spec["pickle"]))
    module, _, attribute = spec.partition(":")
    found = importlib.import_module(module.strip())
    for part in filter(None, attribute.strip().split(".")):
        found = getattr(found, part)
    return found

payload = json.loads(sys.stdin.read())
plugins = [(name, obj(spec)) for name, spec in payload["plugins"]]
manager = prompt_style.create_plugin_manager(entry_points=payload["entry_points"], environ={}, plugins=plugins)
task = prompt_style.load_task(payload["task"], plugins=manager, **payload["options"])
records = payload["records"]
selections = [list(task.renderer.retriever.select(i, r)) for i, r in enumerate(records)] if records else []
json.dump({"rendered": rendered(task), "selections": selections}, sys.stdout)
"""


def rendered(
    task: Any, *, manager: prompt_style.PluginManager, options: Mapping[str, Any], records: Sequence[Any] = ()
) -> dict[str, Any]:
    """What a child process reports, computed here."""
    loaded = prompt_style.load_task(task, plugins=manager, **options)
    out = [
        {"json": result.to_json(), "dialogue": prompt_style.dialogue_to_json(result.dialogue)}
        for result in loaded.render()
    ]
    selections = [list(loaded.renderer.retriever.select(i, r)) for i, r in enumerate(records)]
    # through JSON, as the children's answers come (tuples become lists)
    return json.loads(json.dumps({"rendered": out, "selections": selections}))


def _spec(plugin: PluginUnderTest) -> Any:
    if isinstance(plugin.spec, str):
        return plugin.spec
    if not plugin.spec:
        raise AssertionError(
            f"the plugin object {plugin.object!r} cannot be pickled, so another process cannot get it: "
            "name the plugin by import path instead (plugin = 'package.module' or 'package.module:OBJECT')"
        )
    return {"pickle": base64.b64encode(plugin.spec).decode("ascii")}


def rendered_in_processes(
    task: Any,
    *,
    plugins: Sequence[PluginUnderTest],
    options: Mapping[str, Any],
    records: Sequence[Any] = (),
    entry_points: bool = False,
    seeds: Sequence[str] = HASH_SEEDS,
    timeout: float = 300,
) -> list[dict[str, Any]]:
    """:func:`rendered` in one fresh interpreter per hash seed, run side by side.

    The children see the parent's ``sys.path`` (so they import the plugin from
    where the tests do) and no ``PROMPT_STYLE_*`` variables.
    """
    payload = json.dumps(
        {
            "plugins": [[p.name, _spec(p)] for p in plugins],
            "entry_points": entry_points,
            "task": task,
            "options": dict(options),
            "records": list(records),
        }
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPT_STYLE_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    children = []
    for seed in seeds:
        child_env = {**env, "PYTHONHASHSEED": seed}
        children.append(
            subprocess.Popen(
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_env,
                text=True,
                encoding="utf-8",
            )
        )
    results = []
    for seed, child in zip(seeds, children):
        out, err = child.communicate(payload, timeout=timeout)
        if child.returncode != 0:
            raise AssertionError(f"rendering in a fresh process (PYTHONHASHSEED={seed}) failed:\n{err}")
        results.append(json.loads(out))
    return results
