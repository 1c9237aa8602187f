"""What listing plugins imports, and the lazy names that keep it small.

``prompt-style plugins`` (and any process that only lists or resolves plugins)
must not import heavy libraries or implementations it does not use: the
tokenizers library, OpenCompass's styles, retrievers, readers and meta templates,
lm-evaluation-harness's reader. Checked in a fresh interpreter by module names,
never by timing (bench/cli_bench.py measures the time).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import prompt_style
from prompt_style._lazy import Lazy, resolved

NOT_IMPORTED_BY_PLUGIN_LISTING = (
    "tokenizers",
    "prompt_style.formats.lm_eval",
    "prompt_style.formats.opencompass",
    "prompt_style.formats.native",
    "prompt_style.formats.task_template.reader",
    "prompt_style.styles.opencompass",
    "prompt_style.styles.templates",
    "prompt_style.retrievers.opencompass",
    "prompt_style.retrievers.shared_random",
    "prompt_style.meta.opencompass",
    "prompt_style.chat",
    "importlib.resources",
    "prompt_style.safe.jinja_env",
    "prompt_style.loading",
    "prompt_style.render",
    "prompt_style.harness",
    "jinja2",
    "json",
    "difflib",
)

LISTING = """
import contextlib, io, json, sys
before = set(sys.modules)
from prompt_style.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["plugins"])
print(json.dumps({"code": code, "modules": sorted(set(sys.modules) - before)}))
"""


def test_listing_plugins_imports_no_implementation():
    # json is imported by this probe itself before it looks, so it is checked separately below
    proc = subprocess.run([sys.executable, "-c", LISTING], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == 0
    imported = set(result["modules"])
    heavy = [m for m in NOT_IMPORTED_BY_PLUGIN_LISTING if m != "json" and m in imported]
    assert not heavy, f"listing plugins imported {heavy}"


def test_listing_plugins_does_not_import_json():
    probe = (
        "import contextlib, io, sys\n"
        "from prompt_style.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['plugins'])\n"
        "sys.stdout.write(str('json' in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_tokenizers_plugin_imports_tokenizers_only_to_load():
    probe = "import sys, prompt_style_tokenizers as p; p.load_tokenizer(); print('tokenizers' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "No module named 'prompt_style_tokenizers'" in proc.stderr:
        pytest.skip("prompt-style-tokenizers is not installed")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@pytest.mark.parametrize("package", ["prompt_style", "prompt_style.styles", "prompt_style.fields", "prompt_style.meta"])
def test_every_public_name_resolves(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    assert set(module.__all__) <= set(dir(module))


def test_lazy_table_matches_the_type_checking_imports():
    # prompt_style/__init__.py lists each lazy name twice (for type checkers, and in _LAZY)
    import ast
    from pathlib import Path

    source = Path(prompt_style.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    checked: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                for alias in stmt.names:
                    checked[alias.name] = "." * stmt.level + (stmt.module or "")
    assert checked == prompt_style._LAZY
    eager = {name for name in prompt_style.__all__ if name not in prompt_style._LAZY}
    assert eager == {n for n in prompt_style.__all__ if n in vars(prompt_style) and n not in checked}


def test_submodules_stay_reachable_as_attributes():
    assert prompt_style.loading.load_task is prompt_style.load_task
    with pytest.raises(AttributeError):
        prompt_style.no_such_name  # noqa: B018


def test_builtin_catalog_entries_resolve_to_their_shapes(pm):
    lazy = 0
    for hook in ("read_task", "format_prompt", "apply_meta_template", "retrieve_examples", "format_instances"):
        for name, providers in pm.catalog(hook).items():
            factory = providers[0].factory
            if isinstance(factory, Lazy):
                lazy += 1
                assert name in repr(factory) or factory.target
            value = resolved(factory)
            if hook == "read_task":
                assert callable(value.detect) and callable(value.read) and value.suffixes
            else:
                assert callable(value), (hook, name)
    assert lazy >= 10


def test_lazy_entries_behave_like_their_targets(pm):
    reader = pm.resolve("read_task", "lm-eval").factory
    assert isinstance(reader, Lazy)
    assert reader.suffixes == resolved(reader).suffixes
    import pickle

    assert repr(pickle.loads(pickle.dumps(reader))) == repr(reader)
    named = pm.resolve("apply_meta_template", "opencompass::api").factory
    assert "opencompass::api" not in repr(named) and "'api'" in repr(named)
    assert named(options={}).apply is not None


def test_opencompass_retriever_names_agree():
    from prompt_style.retrievers.builtin import OPENCOMPASS_RETRIEVERS
    from prompt_style.retrievers.opencompass import CATALOG

    assert set(OPENCOMPASS_RETRIEVERS) == set(CATALOG)


def test_chat_command_default_meta_is_the_chat_modules():
    from prompt_style.chat import DEFAULT_CHAT_META
    from prompt_style.cli.chat import DEFAULT_CHAT_META as cli_default

    assert cli_default == DEFAULT_CHAT_META
