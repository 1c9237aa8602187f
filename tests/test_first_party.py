"""The first-party map (which distribution provides each name) matches the plugins'
own pyprojects, and an unknown name says what to install and how."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import prompt_style
from prompt_style import PluginNotFoundError, TokenizerError, _first_party, create_plugin_manager
from prompt_style import plugins as plugin_machinery

tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml files")

ROOT = Path(__file__).resolve().parents[1]


def tool():
    spec = importlib.util.spec_from_file_location("first_party_tool", ROOT / "tools" / "first_party.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_module_is_up_to_date():
    folders, names = tool().collect(ROOT)
    assert _first_party.FOLDERS == folders
    assert _first_party.NAMES == names
    assert (ROOT / "core" / "prompt_style" / "_first_party.py").read_text(encoding="utf-8") == tool().render(
        folders, names
    ), "run: uv run python tools/first_party.py"


def test_every_first_party_pyproject_with_entry_points_is_in_the_map():
    declared = {}
    for pyproject in [*ROOT.glob("plugins/*/pyproject.toml"), *ROOT.glob("contrib/*/pyproject.toml")]:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        if project.get("entry-points", {}).get("prompt_style"):
            declared[project["name"]] = pyproject.parent.relative_to(ROOT).as_posix()
    assert declared == _first_party.FOLDERS
    # every distribution provides at least one name, and only the distributions above do
    providers = {dist for got in _first_party.NAMES.values() for dist in got.values()}
    assert providers == set(declared)


def test_names_match_what_the_installed_plugins_provide():
    manager = create_plugin_manager(environ={})
    for info in manager.plugins:
        if info.builtin or info.distribution not in _first_party.FOLDERS or info.status != "loaded":
            continue
        for hook, names in manager.provided(info).items():
            for name in names:
                assert _first_party.NAMES[hook][name] == info.distribution


def test_unknown_name_names_the_distribution_and_the_checkout_folder():
    manager = create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(PluginNotFoundError) as caught:
        manager.resolve("retrieve_examples", "bm25")
    message = str(caught.value)
    assert message == (
        "unknown retriever 'bm25' (it comes with prompt-style-bm25, which is not on the package index: "
        f"pip install {ROOT / 'plugins' / 'bm25'})"
    )
    with pytest.raises(PluginNotFoundError, match=r"prompt-style-numbered, .*pip install .*contrib/numbered\)"):
        manager.resolve("format_prompt", "mcq::numbered")


def test_outside_a_checkout_the_hint_says_to_run_it_in_one(monkeypatch):
    monkeypatch.setattr(plugin_machinery, "_checkout", lambda: None)
    manager = create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(PluginNotFoundError) as caught:
        manager.resolve("apply_meta_template", "llama-3")
    assert str(caught.value) == (
        "unknown meta template 'llama-3' (it comes with prompt-style-chat-formats, which is not on the "
        "package index: in a prompt-style checkout, pip install ./plugins/chat-formats)"
    )


def test_a_published_distribution_is_installed_by_name(monkeypatch):
    monkeypatch.setattr(plugin_machinery, "PUBLISHED", frozenset({"prompt-style-mmlu"}))
    manager = create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(
        PluginNotFoundError, match=r"\(it comes with prompt-style-mmlu: pip install prompt-style-mmlu\)"
    ):
        manager.resolve("format_prompt", "mcq::mmlu")


def test_a_name_of_the_hook_it_is_not_for_gets_no_install_hint():
    # 'tokenizers' is a tokenizer format, not a style: no "install" advice, the known styles instead
    manager = create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(PluginNotFoundError) as caught:
        manager.resolve("format_prompt", "tokenizers")
    assert "pip install" not in str(caught.value)


def test_the_checkout_folder_installs_that_distribution():
    for dist, folder in _first_party.FOLDERS.items():
        project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        assert project["name"] == dist


def test_missing_tokenizer_loader_hint(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{}", encoding="utf-8")
    bare = create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(TokenizerError) as caught:
        prompt_style.load_task(
            {"doc_to_text": "q", "data": {"test": [{"q": "x"}]}},
            plugins=bare,
            meta_options={"tokenizer": str(path)},
        )
    assert f"such as prompt-style-tokenizers, which is not on the package index: pip install {ROOT}" in str(
        caught.value
    )


def test_the_tool_check_mode_passes(capsys):
    assert tool().main(["--check"]) == 0
    assert sys.modules.get("prompt_style") is prompt_style


def test_pending_distributions_are_not_in_the_tree_yet():
    # once a bridge's pyproject is under contrib/, the generated map has its names:
    # then delete its entries from plugins._PENDING_NAMES and _PENDING_FOLDERS
    generated = {name for names in _first_party.NAMES.values() for name in names.values()}
    pending = {dist for names in plugin_machinery._PENDING_NAMES.values() for dist in names.values()}
    assert not pending & generated, f"now generated, remove from the pending lists: {pending & generated}"
    assert pending == set(plugin_machinery._PENDING_FOLDERS)


def test_a_pending_exporter_names_its_distribution():
    manager = create_plugin_manager(entry_points=False, environ={})
    with pytest.raises(PluginNotFoundError) as caught:
        manager.resolve("export_task", "lighteval")
    assert str(caught.value).startswith(
        "unknown exporter 'lighteval' (it comes with prompt-style-lighteval, which is not on the package index: "
    )
