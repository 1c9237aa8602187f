"""The conformance kit for styles (``format_prompt``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import prompt_style

from ._base import Conformance, assert_typed_error
from ._records import FIELDS, UNICODE_CHOICES, UNICODE_QUESTION, mcq_record, pool, unicode_record

__all__ = ["StyleConformance"]

_GENERATION_FIELDS = {"doc_to_text": "question", "doc_to_target": "answer"}


def _shown(result: prompt_style.RenderedPrompt) -> str:
    """Everything the model is shown: the text, or the messages' contents."""
    if result.text:
        return result.text
    return "\n".join(str(m.get("content", "")) for m in result.messages or [])


class StyleConformance(Conformance):
    """Checks a style: 2 to 26 choices, unicode, empty descriptions, few-shot
    examples, every installed meta template, pickling, other processes and typed
    errors.

    ::

        class TestMyStyle(StyleConformance):
            plugin = my_package          # the module your entry point names
            style = "mcq::mine"          # the style name it provides
    """

    hook = "format_prompt"

    style: ClassVar[str] = ""
    """The style name under test."""
    options: ClassVar[Mapping[str, Any]] = {}
    """Template options the style is rendered with (``template: {template_type: ..., **options}``)."""
    multiple_choice: ClassVar[bool] = True
    """The style lays out multiple-choice records (continuations, a gold index);
    ``False`` for a generation style (no ``doc_to_choice``, a text target)."""
    max_choices: ClassVar[int] = 26
    """The most choices the style lays out; more must be a typed error (or work)."""
    shows_question: ClassVar[bool] = True
    """The record's question appears verbatim in the prompt."""
    shows_choices: ClassVar[bool] = True
    """The choice texts appear verbatim in the prompt (``False`` for ``cloze::qa``-like styles)."""
    accepts_unknown_options: ClassVar[bool] = False
    """The factory takes any option (so an unknown one is not an error)."""

    # -- how the kit renders ----------------------------------------------------------

    def name_under_test(self) -> str:
        if not self.style:
            raise AssertionError(f"{type(self).__name__} must set `style` to the style name under test")
        return self.style

    def fields(self) -> dict[str, Any]:
        return dict(FIELDS if self.multiple_choice else _GENERATION_FIELDS)

    def record(self, n: int = 4, answer: int | None = None, *, tag: str = "") -> dict[str, Any]:
        """A record with ``n`` choices (a generation record: a question and a text answer)."""
        record = mcq_record(n, answer, tag=tag)
        if not self.multiple_choice:
            record = {"question": record["question"], "answer": f"the answer{tag}"}
        return record

    def pool(self, size: int = 4) -> list[dict[str, Any]]:
        records = pool(size)
        if not self.multiple_choice:
            records = [{"question": r["question"], "answer": f"answer {i}"} for i, r in enumerate(records)]
        return records

    def task_mapping(
        self,
        records: Sequence[Mapping[str, Any]],
        *,
        fewshot: Sequence[Mapping[str, Any]] | None = None,
        shots: int | None = None,
        options: Mapping[str, Any] | None = None,
        **keys: Any,
    ) -> dict[str, Any]:
        data: dict[str, Any] = {"test": list(records)}
        task: dict[str, Any] = {**self.fields(), "task": "conformance", **keys}
        task["template"] = {"template_type": self.name_under_test(), **self.options, **(options or {})}
        if fewshot is not None:
            data["dev"] = list(fewshot)
            task["fewshot_split"] = "dev"
            task["num_fewshot"] = len(fewshot) if shots is None else shots
        task["data"] = data
        return task

    def render(
        self,
        records: Sequence[Mapping[str, Any]],
        *,
        manager: prompt_style.PluginManager | None = None,
        meta: str = "plain",
        **task: Any,
    ) -> list[prompt_style.RenderedPrompt]:
        loaded = prompt_style.load_task(
            self.task_mapping(records, **task), plugins=manager or self.manager(), meta=meta
        )
        return list(loaded.render())

    def task(self) -> dict[str, Any]:
        records = [self.record(2, 0), self.record(4, 1, tag="b"), self.record(min(26, self.max_choices))]
        if self.multiple_choice:
            records.append(unicode_record())
        return self.task_mapping(records, fewshot=self.pool(3), shots=2)

    # -- checks -----------------------------------------------------------------------

    def test_the_factory_builds_a_style(self):
        provider = self.manager().resolve("format_prompt", self.name_under_test())
        built = provider.factory(options=dict(self.options), settings=prompt_style.StyleSettings())
        assert callable(getattr(built, "format", None)), "the factory must return an object with format()"

    def test_2_to_26_choices(self):
        if not self.multiple_choice:
            return
        top = min(26, self.max_choices)
        records = [self.record(n, answer=7 % n) for n in range(2, top + 1)]
        for n, result in zip(range(2, top + 1), self.render(records)):
            assert len(result.continuations) == n, f"{n} choices gave {len(result.continuations)} continuations"
            assert len(set(result.continuations)) == n, f"{n} choices: continuations repeat {result.continuations}"
            assert result.target == 7 % n, f"{n} choices: target {result.target!r}"
            shown = _shown(result)
            if self.shows_question:
                assert records[n - 2]["question"] in shown
            if self.shows_choices:
                missing = [c for c in records[n - 2]["choices"] if c not in shown]
                assert not missing, f"{n} choices: {missing} not shown"

    def test_more_choices_than_it_lays_out_renders_or_is_a_typed_error(self):
        if not self.multiple_choice:
            return
        n = self.max_choices + 1
        try:
            [result] = self.render([self.record(n)])
        except prompt_style.PromptStyleError:
            assert_typed_error(lambda: self.render([self.record(n)]))
        else:
            assert len(result.continuations) == n

    def test_unicode_is_kept_as_written(self):
        record = unicode_record() if self.multiple_choice else {"question": UNICODE_QUESTION, "answer": "東京 🚀"}
        [result] = self.render([record], description="Réponds — 答えて 🙂\n\n")
        shown = _shown(result)
        shown.encode("utf-8")  # no lone surrogates
        if self.shows_question:
            assert UNICODE_QUESTION in shown
        if self.multiple_choice:
            assert result.target == 0
            if self.shows_choices:
                assert all(c in shown for c in UNICODE_CHOICES), "a unicode choice is not shown as written"
        line = json.dumps(result.to_json(), ensure_ascii=False)
        assert json.loads(line) == json.loads(json.dumps(result.to_json()))

    def test_an_empty_description_adds_nothing(self):
        records = [self.record(3), self.record(4, 2, tag="x")]
        plain = self.render(records)
        empty = self.render(records, description="")
        assert [r.to_json() for r in empty] == [r.to_json() for r in plain]
        assert [r.dialogue for r in empty] == [r.dialogue for r in plain]
        for result in empty:
            assert all(turn.content != "" for turn in result.dialogue), "a turn with no content"
        described = self.render(records[:1], description="Answer the question.\n\n")[0]
        assert "Answer the question." in _shown(described)

    def test_few_shot_examples_come_before_the_question_and_keep_the_target(self):
        examples = self.pool(3)
        record = self.record(4, 2)
        [zero] = self.render([record])
        for shots in (1, 3):
            [result] = self.render([record], fewshot=examples, shots=shots)
            assert result.target == zero.target, "few-shot examples changed the target"
            assert result.continuations == zero.continuations, "few-shot examples changed the continuations"
            if self.shows_question:
                shown = _shown(result)
                places = [shown.find(e["question"]) for e in examples[:shots]]
                assert -1 not in places, f"{shots}-shot: an example's question is not shown"
                assert places == sorted(places), f"{shots}-shot: the examples are not in the retriever's order"
                assert shown.rfind(record["question"]) > max(places), "the record's question does not come last"
        # as messages, each example is its own turns (the chat rules' default)
        [chat] = self.render([record], fewshot=examples, shots=2, meta="messages")
        assert chat.messages and chat.messages[-1]["role"] == "user"

    def test_every_installed_meta_template(self):
        manager = self.installed_manager()
        record = self.record(4, 3)
        rendered, needs_options = [], []
        for name in manager.names("apply_meta_template"):
            try:
                loaded = prompt_style.load_task(
                    self.task_mapping([record], fewshot=self.pool(2), shots=1), plugins=manager, meta=name
                )
            except prompt_style.PromptStyleError:
                needs_options.append(name)  # a meta template that needs options of its own (a file, a template)
                continue
            try:
                [result] = list(loaded.render())
            except prompt_style.PromptStyleError as exc:
                raise AssertionError(f"meta template {name!r}: {exc}") from None
            assert result.text or result.messages or result.token_ids, f"meta template {name!r} gave nothing"
            if self.shows_question:
                assert record["question"] in _shown(result), f"meta template {name!r} lost the question"
            rendered.append(name)
        assert {"plain", "messages"} <= set(rendered), f"rendered through {rendered}; needed options: {needs_options}"

    def test_the_gold_answer_is_the_tasks_not_the_styles(self):
        if not self.multiple_choice:
            return
        by_index = self.record(4, 2)
        by_text = {**self.record(4), "answer": self.record(4)["choices"][1]}
        results = self.render([by_index, by_text])
        assert [r.target for r in results] == [2, 1]

    def test_an_unknown_option_is_an_option_error(self):
        if self.accepts_unknown_options:
            return
        task = self.task_mapping([self.record(3)], options={"no_such_option_xyz": 1})
        error = assert_typed_error(lambda: prompt_style.load_task(task, plugins=self.manager()))
        assert isinstance(error, prompt_style.OptionError), f"{type(error).__name__}: {error}"
        assert error.key == "template.no_such_option_xyz", error.key

    def test_bad_records_are_typed_errors(self):
        if self.multiple_choice:
            no_choices = {**self.record(3), "choices": []}
            assert_typed_error(lambda: self.render([no_choices]))
            out_of_range = {**self.record(3), "answer": 7}
            assert_typed_error(lambda: self.render([out_of_range]), kinds=(prompt_style.TargetError,))
        # odd but valid values render, or are refused with a typed error: never a raw exception
        odd = [{**self.record(3), "question": 42}, {**self.record(3), "question": ""}]
        if self.multiple_choice:
            odd.append({**self.record(3), "choices": [1, 2.5, True]})
        for record in odd:
            try:
                self.render([record])
            except prompt_style.PromptStyleError:
                assert_typed_error(lambda record=record: self.render([record]))
