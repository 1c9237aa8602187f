"""Shared fixtures for the core test suite.

Every test gets a fresh plugin manager (never the process-wide default), a
clean ``PROMPT_STYLE_*`` environment, and helpers that write small tasks and
fake installed plugin distributions into ``tmp_path``.
"""

from __future__ import annotations

import importlib
import json
import sys
import uuid
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

import prompt_style
import prompt_style.plugins

ROOT = Path(__file__).resolve().parents[1]
# Helpers shared by several test modules live in this folder's ``_*_support.py``
# modules, imported by name (test modules themselves are not importable by name).
sys.path.insert(0, str(Path(__file__).resolve().parent))
EXAMPLES = ROOT / "examples"
ENV_VARS = ("PROMPT_STYLE_PLUGINS", "PROMPT_STYLE_DISABLE", "PROMPT_STYLE_PREFER", "PROMPT_STYLE_PLUGINS_DIR")


@pytest.fixture(autouse=True)
def _isolate(monkeypatch):
    """No user environment, no cached default manager, and no leaked warning hook.

    ``prompt_style.cli.main`` replaces ``warnings.showwarning`` and ``cmd_render``
    uses the process-wide default manager; both are reset around every test.
    """
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(prompt_style.plugins, "_default_manager", None)
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)
    yield


@pytest.fixture
def pm():
    """A fresh manager with the built-in plugins only."""
    return prompt_style.create_plugin_manager(entry_points=False, environ={})


@pytest.fixture
def pm_all():
    """A fresh manager with the built-ins and the installed first-party plugins."""
    return prompt_style.create_plugin_manager(environ={})


def _outcome(renderer: Any, record: Any, index: int) -> tuple[Any, ...]:
    """What rendering gives: the prompt's observable fields (and the prompt), or the error."""
    try:
        r = renderer.render(record, index)
    except prompt_style.PromptStyleError as exc:
        return ("error", type(exc).__name__, str(exc), exc.key, exc.index)
    made = (r.to_json(), r.dialogue, r.text, r.messages, r.extra, r.mode, r.fewshot_indices, r.until)
    return ("ok", *made, r)


@pytest.fixture
def both_paths():
    """``both_paths(task_file, records, **load_options)``: each record rendered by a task's
    renderer with its fast path and by one without (the general path only); the two must
    agree, prompt or error. Returns the outcomes (``("ok", ..., prompt)`` or ``("error", ...)``)."""

    def render_both(task: Any, records: list[Any], **options: Any) -> list[tuple[Any, ...]]:
        fast = prompt_style.load_task(task, **options).renderer
        general = prompt_style.load_task(task, **options).renderer
        general._fast = None
        assert fast.fast_render() is not None
        outcomes = []
        for index, record in enumerate(records):
            a, b = _outcome(fast, record, index), _outcome(general, record, index)
            assert a == b, f"record {index} {record!r}:\nfast    {a!r}\ngeneral {b!r}"
            outcomes.append(a)
        return outcomes

    return render_both


def write_jsonl(path: Path, records: Iterable[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def jsonl():
    """``jsonl(path, records)`` writes JSON Lines and returns the path."""
    return write_jsonl


@pytest.fixture
def make_task(tmp_path):
    """Write a YAML task and its JSONL splits; returns the task file path.

    ``make_task(splits={"test": [...], "dev": [...]}, doc_to_text="q", ...)``;
    other keyword arguments become task keys. ``name`` names the YAML file.
    """
    counter = iter(range(10_000))

    def make(splits: Mapping[str, list[Any]], *, name: str | None = None, **keys: Any) -> Path:
        n = next(counter)
        folder = tmp_path / f"task{n}"
        data = {}
        for split, records in splits.items():
            write_jsonl(folder / "data" / f"{split}.jsonl", records)
            data[split] = f"data/{split}.jsonl"
        task = {"task": name or f"task{n}", "data": data, **keys}
        path = folder / f"{name or 'task'}.yaml"
        path.write_text(yaml.safe_dump(task, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return path

    return make


@pytest.fixture
def write_yaml(tmp_path):
    """Write raw YAML text to ``tmp_path/<name>`` (with a one-record test.jsonl next to it)."""
    write_jsonl(tmp_path / "test.jsonl", [{"q": "Q0", "a": "A0"}])

    def write(text: str, name: str = "task.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


class FakeDists:
    """Fake installed distributions with ``prompt_style`` entry points.

    Each distribution is a real ``*.dist-info`` directory (METADATA and
    entry_points.txt) plus a module, in a directory prepended to ``sys.path``,
    so ``importlib.metadata.entry_points`` finds it exactly as it finds an
    installed wheel. Module names are unique per test; they are removed from
    ``sys.modules`` afterwards.
    """

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.root.mkdir()
        self.token = uuid.uuid4().hex[:8]
        self.modules: list[str] = []
        monkeypatch.syspath_prepend(str(root))

    def add(self, dist: str, ep_name: str, source: str, *, version: str = "1.0") -> str:
        """Install ``dist`` whose entry point ``ep_name`` is a module holding ``source``."""
        module = f"ps_fake_{self.token}_{ep_name.replace('-', '_')}"
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
        (info / "entry_points.txt").write_text(f"[prompt_style]\n{ep_name} = {module}\n", encoding="utf-8")
        (self.root / f"{module}.py").write_text(source, encoding="utf-8")
        self.modules.append(module)
        importlib.invalidate_caches()
        return module

    def cleanup(self) -> None:
        for module in self.modules:
            sys.modules.pop(module, None)
        importlib.invalidate_caches()


@pytest.fixture
def fake_dists(tmp_path, monkeypatch):
    dists = FakeDists(tmp_path / "site", monkeypatch)
    yield dists
    dists.cleanup()
