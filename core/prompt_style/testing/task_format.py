"""The conformance kit for task-file formats (``read_task``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

import prompt_style

from ._base import Conformance, assert_typed_error
from ._records import mcq_record, pool, unicode_record

__all__ = ["TaskFormatConformance"]

# Tasks of other formats that a reader must not claim.
OTHER_FORMATS: dict[str, dict[str, Any]] = {
    "prompt-style": {"data": {"test": "test.jsonl"}, "doc_to_text": "question", "template": "mcq"},
    "lm-evaluation-harness": {
        "task": "x",
        "dataset_path": "x",
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{question}}",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "answer",
    },
    "OpenCompass": {
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
        "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": "{question}"}},
    },
}


class TaskFormatConformance(Conformance):
    """Checks a task-file format: it claims its own files and no other format's,
    reads them into a TaskConfig that renders (2 to 26 choices, unicode, every
    installed meta template), pickles, renders the same in other processes, and
    reports a bad file as a typed error naming it.

    The kit writes :attr:`example` to ``task`` + :attr:`suffix` in a temporary
    folder, with the records in ``test.jsonl`` and few-shot records in
    ``train.jsonl`` beside it; the example names them as its format does::

        class TestMyFormat(TaskFormatConformance):
            plugin = my_package
            format = "mine"
            example = "my_prompt: '{question}'\\nfiles: {test: test.jsonl}\\n"
    """

    hook = "read_task"

    format: ClassVar[str] = ""
    """The format (reader) name under test."""
    example: ClassVar[str] = ""
    """A task file of the format, reading ``test.jsonl`` (``question``, ``choices``, ``answer``)."""
    suffix: ClassVar[str] = ".yaml"
    bad_example: ClassVar[str | None] = None
    """A file of the format with a mistake: reading it must be a typed error naming the file."""
    bad_example_line: ClassVar[int | None] = None
    """The line the mistake in :attr:`bad_example` is on, when the error should name it."""
    multiple_choice: ClassVar[bool] = True
    """The example is a multiple-choice task (continuations, a gold index)."""
    shows_question: ClassVar[bool] = True
    trust_code: ClassVar[bool] = False

    @pytest.fixture(autouse=True)
    def _folder(self, tmp_path: Path) -> None:
        self.folder = tmp_path

    def name_under_test(self) -> str:
        if not self.format:
            raise AssertionError(f"{type(self).__name__} must set `format` to the format name under test")
        return self.format

    def records(self) -> list[dict[str, Any]]:
        return [mcq_record(2, 0), mcq_record(4, 1, tag="b"), mcq_record(26), unicode_record()]

    def write(
        self, text: str | None = None, *, records: list[dict[str, Any]] | None = None, name: str = "task"
    ) -> Path:
        """Write a task file (the example by default) and its data; returns its path."""
        for split, rows in (("test", records if records is not None else self.records()), ("train", pool(4))):
            lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            (self.folder / f"{split}.jsonl").write_text(lines, encoding="utf-8")
        path = self.folder / f"{name}{self.suffix}"
        path.write_text(self.example if text is None else text, encoding="utf-8")
        return path

    def source(self, path: Path) -> prompt_style.TaskSource:
        """The :class:`~prompt_style.TaskSource` the core hands a reader for ``path``."""
        if path.suffix in (".yaml", ".yml", ".json"):
            document = prompt_style.load_yaml(path)
            return prompt_style.TaskSource(path, document.data, document.lines, path.parent)
        return prompt_style.TaskSource(path, None, {}, path.parent)

    def reader(self, manager: prompt_style.PluginManager | None = None) -> Any:
        return (manager or self.manager()).resolve("read_task", self.name_under_test()).factory

    def task(self) -> str:
        return str(self.write())

    def load_options(self) -> dict[str, Any]:
        return {"trust_code": self.trust_code}

    # -- checks -----------------------------------------------------------------------

    def test_the_reader_has_its_members(self):
        reader = self.reader()
        suffixes = reader.suffixes
        assert isinstance(suffixes, tuple) and all(isinstance(s, str) and s.startswith(".") for s in suffixes)
        assert self.suffix in suffixes, f"the example's suffix {self.suffix} is not in {suffixes}"
        assert callable(reader.detect) and callable(reader.read)

    def test_it_claims_its_example_and_reads_a_task_config(self):
        path = self.write()
        source = self.source(path)
        reader = self.reader()
        assert reader.detect(source) is True, "detect() does not claim the example"
        config = reader.read(source, prompt_style.ReadOptions(trust_code=self.trust_code, plugins=self.manager()))
        assert isinstance(config, prompt_style.TaskConfig)

    def test_no_other_installed_format_claims_its_example(self):
        manager = self.installed_manager()
        source = self.source(self.write())
        for name in manager.names("read_task"):
            if name == self.name_under_test():
                continue
            other = manager.resolve("read_task", name).factory
            if getattr(other, "fallback", False) or self.suffix not in other.suffixes:
                continue  # the fallback reads only what nobody claims
            assert not other.detect(source), f"format {name!r} claims the example too"

    def test_it_claims_no_other_formats_task(self):
        reader = self.reader()
        if self.suffix not in (".yaml", ".yml", ".json") or not set(reader.suffixes) & {".yaml", ".yml", ".json"}:
            return
        if getattr(reader, "fallback", False):
            return  # the fallback (prompt-style's own format) reads what nobody claims
        for name, data in OTHER_FORMATS.items():
            path = self.folder / f"other{self.suffix}"
            source = prompt_style.TaskSource(path, data, {}, self.folder)
            assert not reader.detect(source), f"detect() claims a {name} task"

    def test_the_example_renders(self):
        records = self.records()
        loaded = prompt_style.load_task(self.write(records=records), plugins=self.manager(), **self.load_options())
        results = list(loaded.render())
        assert len(results) == len(records), "not every record rendered"
        for record, result in zip(records, results):
            shown = result.text or json.dumps(result.messages, ensure_ascii=False)
            if self.shows_question:
                assert record["question"] in shown, f"the question is not shown: {shown!r}"
            if self.multiple_choice:
                assert len(result.continuations) == len(record["choices"])
                assert result.target == record["answer"]

    def test_2_to_26_choices(self):
        if not self.multiple_choice:
            return
        records = [mcq_record(n, 7 % n) for n in range(2, 27)]
        loaded = prompt_style.load_task(self.write(records=records), plugins=self.manager(), **self.load_options())
        for record, result in zip(records, loaded.render()):
            assert len(result.continuations) == len(record["choices"])
            assert result.target == record["answer"]

    def test_every_installed_meta_template(self):
        manager = self.installed_manager()
        path = self.write(records=[mcq_record(4, 1)])
        rendered = []
        for name in manager.names("apply_meta_template"):
            try:
                loaded = prompt_style.load_task(path, plugins=manager, meta=name, **self.load_options())
            except prompt_style.PromptStyleError:
                continue  # a meta template that needs options of its own
            [result] = list(loaded.render())
            assert result.text or result.messages or result.token_ids, f"meta template {name!r} gave nothing"
            rendered.append(name)
        assert {"plain", "messages"} <= set(rendered), rendered

    def test_a_bad_file_is_a_typed_error_naming_it(self):
        if self.bad_example is None:
            return
        path = self.write(self.bad_example, name="bad")
        error = assert_typed_error(lambda: prompt_style.load_task(path, plugins=self.manager(), **self.load_options()))
        assert error.file is not None and Path(error.file).name == path.name, f"the error names {error.file!r}"
        if self.bad_example_line is not None:
            assert error.line == self.bad_example_line, f"the error names line {error.line}"
