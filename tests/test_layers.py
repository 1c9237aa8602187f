"""The import layers (docs/architecture.md#layers), checked as CI checks them.

``lint-imports`` checks the contracts in pyproject.toml: the core's layers, no
plugin imported by the core, plugins on the public API only, and no cycle
between the modules of a package. This test runs it, checks that every plugin
and bridge under plugins/ and contrib/ is under those contracts, and finds
import cycles between single modules (imports inside functions count, ``if
TYPE_CHECKING:`` imports do not): a change that breaks a layer fails here with
the offending import named, before CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with Python 3.11's tomllib")

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
CONTRACTS = {contract["id"]: contract for contract in CONFIG["contracts"]}
# Every distribution's package, installed in the dev environment or not (prompt-style-topk
# needs torch): import-linter reads the source, so the folders go on the path.
SOURCES = sorted([*ROOT.glob("plugins/*/src"), *ROOT.glob("contrib/*/src")])
PACKAGES = sorted(p.name for src in SOURCES for p in src.iterdir() if (p / "__init__.py").is_file())


def _path() -> str:
    return os.pathsep.join([*map(str, SOURCES), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)


def test_the_contracts_are_kept():
    pytest.importorskip("importlinter", reason="import-linter is in the dev dependency group (uv sync)")
    proc = subprocess.run(
        # the lint-imports command, as .ci/run calls it
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]
        + ["--no-cache", "--no-logo"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": _path()},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


def test_every_plugin_and_bridge_is_under_the_contracts():
    assert set(PACKAGES) | {"prompt_style"} == set(CONFIG["root_packages"])
    assert set(PACKAGES) == set(CONTRACTS["public-api"]["source_modules"])
    assert set(PACKAGES) == set(CONTRACTS["core-no-plugins"]["forbidden_modules"])
    assert set(PACKAGES) | {"prompt_style"} == set(CONTRACTS["no-cycles"]["ancestors"])


def test_every_core_module_has_a_layer():
    # import-linter's exhaustive option checks this too; this says which module is missing
    layered = {name.strip() for layer in CONTRACTS["core-layers"]["layers"] for name in layer.split("|")}
    core = ROOT / "core" / "prompt_style"
    children = {p.stem for p in core.glob("*.py") if p.stem != "__init__"}
    children |= {p.parent.name for p in core.glob("*/__init__.py")}
    assert children == layered


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others(monkeypatch):
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (uv sync)")
    for src in SOURCES:
        monkeypatch.syspath_prepend(str(src))
    graph = grimp.build_graph(*CONFIG["root_packages"], exclude_type_checking_imports=True, cache_dir=None)
    edges = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    shown = []
    for component in _cycles(edges):
        members = set(component)
        for importer in component:
            for imported in sorted(edges[importer] & members):
                lines = graph.get_import_details(importer=importer, imported=imported)
                shown.append(f"{importer} -> {imported} (l.{', l.'.join(str(d['line_number']) for d in lines)})")
    assert not shown, "import cycles:\n" + "\n".join(shown)
