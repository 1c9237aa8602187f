"""Collect every Jinja template in lm-evaluation-harness's shipped task files.

Writes ``tests/golden/lm_eval_jinja/templates.json``: each distinct template string
(a ``doc_to_text``, ``doc_to_target``, ``doc_to_choice``, ``description`` or
``gen_prefix`` value holding ``{{`` or ``{%``, at any depth of a task file, such as
under ``fewshot_config``), the keys it appears under and how many task files hold
it. ``tests/test_jinja_compiler.py`` renders every one that prompt-style's Jinja
compiler accepts through both paths (compiled and sandboxed) and compares.

Run it with the Python of the lm-eval venv (tools/golden/README.md), from the
repository root::

    /tmp/venvs/lmeval/bin/python tools/golden/extract_lm_eval_jinja.py

It reads the files as text with PyYAML (``!function`` and other tags read as
nothing); nothing of lm-eval is imported but its version and location.
"""

from __future__ import annotations

import collections
import importlib.metadata
import json
import sys
from pathlib import Path

import yaml

KEYS = ("doc_to_text", "doc_to_target", "doc_to_choice", "description", "gen_prefix")
OUT = Path(__file__).resolve().parents[2] / "tests/golden/lm_eval_jinja/templates.json"


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def main() -> int:
    import lm_eval

    root = Path(lm_eval.__file__).parent / "tasks"
    found: dict[str, dict] = {}
    files = 0
    failed = []

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in KEYS and isinstance(value, str) and ("{{" in value or "{%" in value):
                    entry = found.setdefault(value, {"keys": set(), "files": set()})
                    entry["keys"].add(key)
                    entry["files"].add(where)
                walk(value, where)
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    for path in sorted(root.rglob("*.yaml")):
        rel = path.relative_to(root).as_posix()
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
        except Exception as exc:  # a few shipped files are not YAML lm-eval reads
            failed.append(f"{rel}: {type(exc).__name__}")
            continue
        files += 1
        walk(data, rel)
    templates = [
        {"source": source, "keys": sorted(entry["keys"]), "files": len(entry["files"]), "example": min(entry["files"])}
        for source, entry in sorted(found.items(), key=lambda item: (-len(item[1]["files"]), item[0]))
    ]
    keys = collections.Counter(k for t in templates for k in t["keys"])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "generator": {
                    "lm_eval": importlib.metadata.version("lm_eval"),
                    "pyyaml": yaml.__version__,
                    "python": sys.version.split()[0],
                    "task_files_read": files,
                    "task_files_unreadable": len(failed),
                },
                "templates": templates,
            },
            ensure_ascii=False,
            indent=0,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(templates)} distinct templates from {files} task files ({dict(keys)}) -> {OUT}")
    for line in failed:
        print("  unreadable:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
