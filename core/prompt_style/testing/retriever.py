"""The conformance kit for retrievers (``retrieve_examples``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import prompt_style

from ._base import Conformance, assert_typed_error
from ._records import FIELDS, mcq_record, pool, unicode_record

__all__ = ["RetrieverConformance"]


class RetrieverConformance(Conformance):
    """Checks a retriever: valid pool indices, never the record itself on its own
    split, the same choice in any order and process, 2 to 26 choices, unicode,
    every installed meta template, pickling and typed errors.

    ::

        class TestMyRetriever(RetrieverConformance):
            plugin = my_package
            retriever = "mine"
    """

    hook = "retrieve_examples"

    retriever: ClassVar[str] = ""
    """The retriever name under test."""
    options: ClassVar[Mapping[str, Any]] = {}
    """Retriever options (``retriever: {name: ..., **options}``)."""
    exact_k: ClassVar[bool] = True
    """It gives exactly ``num_fewshot`` examples (``False``: at most that many)."""
    excludes_the_record: ClassVar[bool] = True
    """On the evaluated split, a record is never its own example (``False`` only to
    reproduce a system that does otherwise, as OpenCompass's retrievers do)."""
    checks_pool_size: ClassVar[bool] = True
    """Asking for more examples than the pool holds is a typed error when the task loads."""
    accepts_unknown_options: ClassVar[bool] = False
    """The factory takes any option (so an unknown one is not an error)."""
    pool_size: ClassVar[int] = 8

    def name_under_test(self) -> str:
        if not self.retriever:
            raise AssertionError(f"{type(self).__name__} must set `retriever` to the retriever name under test")
        return self.retriever

    def records(self) -> list[dict[str, Any]]:
        return [mcq_record(4, i % 4, tag=f"r{i}") for i in range(5)]

    def task_mapping(
        self,
        records: Sequence[Mapping[str, Any]],
        *,
        k: int = 2,
        same_split: bool = False,
        options: Mapping[str, Any] | None = None,
        **keys: Any,
    ) -> dict[str, Any]:
        data: dict[str, Any] = {"test": list(records)}
        if not same_split:
            data["dev"] = pool(self.pool_size)
        return {
            **FIELDS,
            "task": "conformance",
            "template": "mcq",
            "data": data,
            "fewshot_split": "test" if same_split else "dev",
            "num_fewshot": k,
            "retriever": {"name": self.name_under_test(), **self.options, **(options or {})},
            **keys,
        }

    def load(self, records: Sequence[Mapping[str, Any]], *, manager: Any = None, **task: Any) -> prompt_style.Task:
        return prompt_style.load_task(self.task_mapping(records, **task), plugins=manager or self.manager())

    def task(self) -> dict[str, Any]:
        return self.task_mapping(self.records(), k=3)

    def selection_records(self) -> list[Any]:
        return self.records()

    # -- checks -----------------------------------------------------------------------

    def test_the_factory_builds_a_retriever(self):
        provider = self.manager().resolve("retrieve_examples", self.name_under_test())
        built = provider.factory(options=dict(self.options), pool=pool(self.pool_size), k=2, same_split=False, seed=1)
        assert callable(getattr(built, "select", None)), "the factory must return an object with select()"

    def test_selects_k_distinct_pool_indices(self):
        records = self.records()
        for k in (1, 3):
            retriever = self.load(records, k=k).renderer.retriever
            for i, record in enumerate(records):
                chosen = list(retriever.select(i, record))
                assert all(type(j) is int and 0 <= j < self.pool_size for j in chosen), f"k={k}: {chosen}"
                assert len(set(chosen)) == len(chosen), f"k={k}: an example twice: {chosen}"
                assert len(chosen) == k if self.exact_k else len(chosen) <= k, f"k={k}: {len(chosen)} examples"

    def test_never_the_record_itself_on_its_own_split(self):
        if not self.excludes_the_record:
            return
        records = self.records()
        retriever = self.load(records, k=2, same_split=True).renderer.retriever
        for i, record in enumerate(records):
            chosen = list(retriever.select(i, record))
            assert i not in chosen, f"record {i} is its own example: {chosen}"
            assert all(0 <= j < len(records) for j in chosen)

    def test_the_same_choice_in_any_order(self):
        records = self.records()
        forward = self.load(records, k=3).renderer.retriever
        backward = self.load(records, k=3).renderer.retriever
        ahead = [list(forward.select(i, r)) for i, r in enumerate(records)]
        behind = [list(backward.select(i, r)) for i, r in reversed(list(enumerate(records)))][::-1]
        assert ahead == behind, "a record's examples depend on the order records are rendered in"
        assert [list(forward.select(i, r)) for i, r in enumerate(records)] == ahead, "asked twice, chose otherwise"

    def test_a_shared_selection_is_what_select_gives(self):
        records = self.records()
        retriever = self.load(records, k=2).renderer.retriever
        shared = getattr(retriever, "shared_selection", None)
        if shared is None or shared() is None:
            return
        for i, record in enumerate(records):
            assert list(retriever.select(i, record)) == list(shared()), "shared_selection() differs from select()"

    def test_more_examples_than_the_pool_holds_is_a_typed_error(self):
        if not self.checks_pool_size:
            return
        error = assert_typed_error(lambda: self.load(self.records(), k=self.pool_size + 1))
        assert error.key in ("num_fewshot", "retriever", "fewshot_split") or (error.key or "").startswith("retriever")

    def test_an_unknown_option_is_an_option_error(self):
        if self.accepts_unknown_options:
            return
        error = assert_typed_error(lambda: self.load(self.records(), options={"no_such_option_xyz": 1}))
        assert isinstance(error, prompt_style.OptionError), f"{type(error).__name__}: {error}"
        assert error.key == "retriever.no_such_option_xyz", error.key

    def test_2_to_26_choices_and_unicode(self):
        records = [mcq_record(n, 7 % n) for n in (2, 3, 7, 26)] + [unicode_record()]
        results = list(self.load(records, k=2, description="").render())
        assert len(results) == len(records)
        for record, result in zip(records, results):
            assert record["question"] in (result.text or "")
            assert result.target == record["answer"]

    def test_every_installed_meta_template(self):
        manager = self.installed_manager()
        record = mcq_record(4, 1)
        rendered = []
        for name in manager.names("apply_meta_template"):
            task = self.task_mapping([record], k=2)
            try:
                loaded = prompt_style.load_task(task, plugins=manager, meta=name)
            except prompt_style.PromptStyleError:
                continue  # a meta template that needs options of its own
            [result] = list(loaded.render())
            assert result.text or result.messages or result.token_ids, f"meta template {name!r} gave nothing"
            rendered.append(name)
        assert {"plain", "messages"} <= set(rendered), rendered
