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


def test_unknown_harness_names_the_bridge(tmp_path, capsys, monkeypatch):
    # the bridge is installed in the dev environment: a manager without entry points is
    # one where it is not
    manager = prompt_style.create_plugin_manager(entry_points=False, environ={})
    monkeypatch.setattr(prompt_style.plugins, "_default_manager", manager)
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


def test_relative_paths_of_options_are_made_absolute(plugin, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "p.json"
    meta = "examples/opencompass/meta.yaml"
    args = ["export", "prompts-file", "examples/opencompass/task.yaml", "--out", str(out), "--meta", meta]
    args += ["--data-root", "examples"]
    assert main(args) == 0
    model = "examples/chat/qwen2.5-7b-instruct"
    args = ["export", "prompts-file", str(MMLU), "--out", str(out), "--meta", "hf"]
    args += ["--meta-option", f"template={model}"]
    assert main(args + ["--meta-option", "add_generation_prompt=false", "--model-args", "dtype=auto"]) == 0
    first, second = plugin.exporter.requests
    assert first.load_options["meta"] == str((ROOT / meta).resolve())
    assert first.load_options["read_options"] == {"data_root": str((ROOT / "examples").resolve())}
    assert second.load_options["meta"] == "hf"  # a name, not a path
    template = str((ROOT / model).resolve())
    assert second.load_options["meta_options"] == {"template": template, "add_generation_prompt": False}
    assert second.load_options["model_args"] == "dtype=auto"


def test_source_data_is_what_the_task_reads_before_processing(tmp_path):
    task = prompt_style.load_task(MMLU)
    data = task.source_data()
    assert list(data) == ["test", "dev"]  # the evaluated split first
    assert data["test"].name == "test.jsonl" and data["dev"].name == "dev.jsonl"
    # with zero shots the few-shot split is still named: a harness may ask for shots later
    assert list(prompt_style.load_task(MMLU, shots=0).source_data()) == ["test", "dev"]
    # loading from it gives the same prompts
    again = prompt_style.load_task(MMLU, data=data)
    assert [p.text for p in again.render()] == [p.text for p in task.render()]


def test_source_data_is_unprocessed(tmp_path):
    records = [{"q": " a "}, {"q": " b "}]

    def strip(docs):
        return [{"q": d["q"].strip()} for d in docs]

    config = prompt_style.TaskConfig(task="t", data={"test": records}, doc_to_text="q", process_docs=strip)
    task = prompt_style.load_task(config)
    assert task.source_data() == {"test": records}
    assert [p.text for p in task.render()] == ["a", "b"]
