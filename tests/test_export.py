"""``prompt-style export`` and the ``export_task`` hook, with exporters written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import prompt_style
import prompt_style.plugins
from prompt_style import ExportRequest, ExportResult, PluginError, hookimpl
from prompt_style.cli import main

ROOT = Path(__file__).resolve().parents[1]
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"


class PromptsFile:
    description = "the rendered prompts as one JSON list"

    def __init__(self) -> None:
        self.requests: list[ExportRequest] = []

    def export(self, request: ExportRequest) -> ExportResult:
        self.requests.append(request)
        prompts = [prompt.text for prompt in request.task.render()]
        request.out.write_text(json.dumps(prompts, ensure_ascii=False), encoding="utf-8")
        return ExportResult(files=(request.out,), usage=f"my-harness --prompts {request.out}")


class Broken:
    description = "raises"

    def export(self, request):
        raise ValueError("boom")


class Plugin:
    def __init__(self) -> None:
        self.exporter = PromptsFile()

    @hookimpl
    def export_task(self):
        return {"prompts-file": self.exporter, "broken": Broken()}


@pytest.fixture
def plugin(monkeypatch):
    plugin = Plugin()
    manager = prompt_style.create_plugin_manager(environ={}, plugins=[("exporters", plugin)])
    monkeypatch.setattr(prompt_style.plugins, "_default_manager", manager)
    return plugin


def test_export_writes_what_render_gives(plugin, tmp_path, capsys):
    out = tmp_path / "prompts.json"
    assert main(["export", "prompts-file", str(MMLU), "--out", str(out), "--shots", "1", "--name", "x"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and f"run it with: my-harness --prompts {out}" in printed
    expected = [p.text for p in prompt_style.load_task(MMLU, shots=1).render()]
    assert json.loads(out.read_text(encoding="utf-8")) == expected
    (request,) = plugin.exporter.requests
    assert request.source == MMLU.resolve() and request.name == "x" and request.load_options["shots"] == 1


def test_export_passes_options_and_absolute_data(plugin, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "p.json"
    data = "examples/mmlu/data/test.jsonl"
    args = ["export", "prompts-file", str(MMLU), "--out", str(out), "--data", f"test={data}", "--export-option", "k=3"]
    assert main(args) == 0
    (request,) = plugin.exporter.requests
    assert request.load_options["data"] == {"test": str((ROOT / data).resolve())}
    assert request.options == {"k": 3}
    # the options load the same task again
    again = prompt_style.load_task(request.source, **request.load_options)
    assert [p.text for p in again.render()] == json.loads(out.read_text(encoding="utf-8"))


def test_unknown_harness_names_the_bridge(plugin, tmp_path, capsys):
    assert main(["export", "lm-eval", str(MMLU), "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prompt-style: error: unknown exporter 'lm-eval'") and "prompt-style-lm-eval" in err
    assert len(err.strip().splitlines()) == 1


def test_exporter_bug_is_a_plugin_error(plugin, tmp_path, capsys):
    assert main(["export", "broken", str(MMLU), "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "plugin 'exporters'" in err and "ValueError: boom" in err and "Traceback" not in err


def test_bad_task_is_reported_before_export(plugin, tmp_path, capsys):
    assert main(["export", "prompts-file", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "o")]) == 2
    assert "missing.yaml" in capsys.readouterr().err
    assert plugin.exporter.requests == []


def test_exporter_without_export_method_marks_the_plugin_broken():
    class Bad:
        @hookimpl
        def export_task(self):
            return {"x": object()}

    with pytest.warns(prompt_style.PluginLoadWarning, match="exporters"):
        manager = prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=[("bad", Bad())])
        assert manager.names("export_task") == []


def test_out_is_required(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["export", "lm-eval", str(MMLU)])
    assert exc.value.code == 2


def test_exporter_error_class_is_public():
    assert issubclass(PluginError, prompt_style.PromptStyleError)
    assert isinstance(PromptsFile(), prompt_style.Exporter)
