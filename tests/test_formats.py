"""Task-file formats: the ``read_task`` hook, format detection and its errors."""

from __future__ import annotations

import pytest

from prompt_style import (
    PluginNotFoundError,
    ReadOptions,
    TaskConfig,
    TaskFileError,
    TaskSource,
    create_plugin_manager,
    hookimpl,
    load_task,
    load_task_config,
)


class Upper:
    """A toy format: ``{files: {...}, ask: FIELD}``, questions upper-cased."""

    suffixes = (".yaml", ".yml", ".json")

    def detect(self, source: TaskSource) -> bool:
        return "ask" in source.data

    def read(self, source: TaskSource, options: ReadOptions) -> TaskConfig:
        data = source.data
        return TaskConfig.from_dict(
            {"data": data["files"], "doc_to_text": "{{ %s.upper() }}" % data["ask"]},
            base=source.base,
            path=source.path,
            lines=source.lines,
        )


class UpperPlugin:
    @hookimpl
    def read_task(self):
        return {"upper": Upper()}


class Greedy:
    suffixes = (".yaml",)

    def detect(self, source):
        return True

    def read(self, source, options):  # pragma: no cover - never chosen
        raise AssertionError


class GreedyPlugin:
    @hookimpl
    def read_task(self):
        return {"greedy": Greedy()}


class PyReader:
    """Reads ``.py`` files itself: the core hands it no parsed data."""

    suffixes = (".py",)

    def detect(self, source):
        return source.data is None

    def read(self, source, options):
        if not options.trust_code:
            raise TaskFileError("runs code", file=str(source.path), hint="pass trust_code")
        return TaskConfig.from_dict(
            {"data": {"test": [{"q": source.path.read_text().strip()}]}, "doc_to_text": "q"}, path=source.path
        )


class PyPlugin:
    @hookimpl
    def read_task(self):
        return {"py": PyReader()}


def manager(*plugins):
    return create_plugin_manager(entry_points=False, environ={}, plugins=plugins)


def test_native_reads_what_no_reader_claims(write_yaml, pm):
    path = write_yaml("data: {test: test.jsonl}\ndoc_to_text: q\n")
    config = load_task_config(path, plugins=pm)
    assert config.format == "native"
    assert config.lines["doc_to_text"] == 2


def test_plugin_format_detected_and_read(write_yaml):
    path = write_yaml("files: {test: test.jsonl}\nask: q\n")
    pm = manager(("upper", UpperPlugin()))
    task = load_task(path, plugins=pm)
    assert task.config.format == "upper"
    assert [p.text for p in task.render()] == ["Q0"]


def test_plugin_format_from_a_python_mapping(tmp_path, jsonl):
    jsonl(tmp_path / "t.jsonl", [{"q": "x"}])
    pm = manager(("upper", UpperPlugin()))
    task = load_task({"files": {"test": str(tmp_path / "t.jsonl")}, "ask": "q"}, plugins=pm)
    assert [p.text for p in task.render()] == ["X"]


def test_two_claims_are_an_error_naming_both(write_yaml):
    path = write_yaml("files: {test: test.jsonl}\nask: q\n")
    pm = manager(("upper", UpperPlugin()), ("greedy", GreedyPlugin()))
    with pytest.raises(TaskFileError) as info:
        load_task_config(path, plugins=pm)
    message = str(info.value)
    assert "greedy" in message and "upper" in message and "--task-format" in message


def test_task_format_settles_two_claims(write_yaml):
    path = write_yaml("files: {test: test.jsonl}\nask: q\n")
    pm = manager(("upper", UpperPlugin()), ("greedy", GreedyPlugin()))
    assert load_task_config(path, plugins=pm, task_format="upper").format == "upper"


def test_unknown_task_format_lists_known(write_yaml, pm):
    path = write_yaml("data: {test: test.jsonl}\ndoc_to_text: q\n")
    with pytest.raises(PluginNotFoundError) as info:
        load_task(path, plugins=pm, task_format="nativ")
    assert "native" in str(info.value)


def test_unparsed_suffix_goes_to_its_reader(tmp_path):
    path = tmp_path / "config.py"
    path.write_text("hello\n")
    pm = manager(("py", PyPlugin()))
    with pytest.raises(TaskFileError) as info:
        load_task(path, plugins=pm)
    assert "trust_code" in str(info.value)
    assert [p.text for p in load_task(path, plugins=pm, trust_code=True).render()] == ["hello"]


def test_reader_catalog_must_hold_readers():
    class Bad:
        @hookimpl
        def read_task(self):
            return {"bad": lambda: None}

    with pytest.warns(Warning):
        pm = manager(("bad", Bad()))
        assert "bad" not in pm.names("read_task")
