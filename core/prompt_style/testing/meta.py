"""The conformance kit for meta templates (``apply_meta_template``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import prompt_style
from prompt_style import Turn

from ._base import Conformance, assert_typed_error
from ._records import FIELDS, UNICODE_QUESTION, mcq_record, pool, unicode_record

__all__ = ["MetaTemplateConformance", "DIALOGUES"]

_SYSTEM = "The following are multiple choice questions (with answers).\n\n"  # lm-eval's trailing blank line

DIALOGUES: dict[str, tuple[Turn, ...]] = {
    "user": (Turn("user", "What is 2 + 2?\nAnswer:"),),
    "system and user": (Turn("system", _SYSTEM, section="begin"), Turn("user", "What is 2 + 2?\nAnswer:")),
    "few-shot": (
        Turn("system", _SYSTEM, section="begin"),
        Turn("user", "What is 1 + 1?\nAnswer:", section="ice"),
        Turn("assistant", "2", " ", section="ice"),
        Turn("user", "What is 2 + 2?\nAnswer:", "\n\n"),
    ),
    "answer prefill": (Turn("user", "What is 2 + 2?"), Turn("assistant", "The answer is", " ")),
    "unicode": (Turn("system", "Réponds — 答えて 🙂"), Turn("user", UNICODE_QUESTION)),
    "OpenCompass roles": (
        Turn("SYSTEM", "Be brief.", section="begin"),
        Turn("HUMAN", "What is 1 + 1?", section="ice"),
        Turn("BOT", "2", section="ice"),
        Turn("HUMAN", "What is 2 + 2?"),
    ),
    "raw text": (Turn("", "Plain text without a role."),),
}
"""Dialogues of every shape styles produce; each must render (or be refused with a typed error)."""

MUST_RENDER = ("user", "system and user", "few-shot", "unicode")


def _shown(result: Any) -> str:
    parts = [result.text or ""]
    for message in result.messages or []:
        content = message.get("content")
        parts.append(content if isinstance(content, str) else repr(content))
    return "\n".join(parts)


class MetaTemplateConformance(Conformance):
    """Checks a meta template: dialogues of every shape, 2 to 26 choices, unicode,
    empty descriptions, few-shot examples, every installed style, pickling, other
    processes and typed errors.

    ::

        class TestMyMeta(MetaTemplateConformance):
            plugin = my_package
            meta = "mine"
    """

    hook = "apply_meta_template"

    meta: ClassVar[str] = ""
    """The meta template name under test."""
    options: ClassVar[Mapping[str, Any]] = {}
    """Meta options it is built with (``--meta-option``, ``meta_options=``)."""
    chat: ClassVar[bool | None] = None
    """Whether the built object must say it is a chat format (``chat = True``); ``None``: not checked."""
    trims_turns: ClassVar[bool] = False
    """Turn contents are trimmed, so the blank line that ends lm-evaluation-harness's
    descriptions never piles up with the format's own separators (no ``\\n\\n\\n``)."""
    accepts_unknown_options: ClassVar[bool] = False
    """The factory takes any option (so an unknown one is not an error)."""

    def name_under_test(self) -> str:
        if not self.meta:
            raise AssertionError(f"{type(self).__name__} must set `meta` to the meta template name under test")
        return self.meta

    def load_options(self) -> dict[str, Any]:
        return {"meta": self.name_under_test(), "meta_options": dict(self.options)}

    def built(self, manager: prompt_style.PluginManager | None = None) -> Any:
        provider = (manager or self.manager()).resolve("apply_meta_template", self.name_under_test())
        return provider.factory(options=dict(self.options))

    def task_mapping(self, records: Sequence[Mapping[str, Any]], *, shots: int = 0, **keys: Any) -> dict[str, Any]:
        task: dict[str, Any] = {**FIELDS, "task": "conformance", "template": "mcq", **keys}
        task["data"] = {"test": list(records), "dev": pool(4)}
        if shots:
            task.update(fewshot_split="dev", num_fewshot=shots)
        return task

    def render(self, records: Sequence[Mapping[str, Any]], **task: Any) -> list[prompt_style.RenderedPrompt]:
        loaded = prompt_style.load_task(
            self.task_mapping(records, **task), plugins=self.manager(), **self.load_options()
        )
        return list(loaded.render())

    def task(self) -> dict[str, Any]:
        records = [mcq_record(2, 0), mcq_record(4, 1, tag="b"), mcq_record(26), unicode_record()]
        return self.task_mapping(records, shots=2, description="Answer with a letter.\n\n")

    # -- checks -----------------------------------------------------------------------

    def test_the_factory_builds_a_meta_template(self):
        built = self.built()
        assert callable(getattr(built, "apply", None)), "the factory must return an object with apply()"
        if self.chat is not None:
            assert bool(getattr(built, "chat", False)) is self.chat, f"chat should be {self.chat}"

    def test_dialogues_of_every_shape(self):
        built = self.built()
        for shape, dialogue in DIALOGUES.items():
            try:
                result = built.apply(dialogue)
            except prompt_style.PromptStyleError:
                if shape in MUST_RENDER:
                    raise
                assert_typed_error(lambda dialogue=dialogue: built.apply(dialogue))
                continue
            assert isinstance(result, prompt_style.ModelInput), f"{shape}: apply() must return a ModelInput"
            assert result.text is not None or result.messages is not None or result.token_ids is not None, shape
            if result.text is not None or result.messages is not None:
                shown = _shown(result)
                for turn in dialogue:
                    assert turn.content.strip() in shown, f"{shape}: {turn.content.strip()!r} is not shown"

    def test_fast_path_promises_hold(self):
        """``last_turn_affixes`` (a chat format whose text stands around its last turn's
        content, or whose messages differ only in that content), ``stripped_turn_affixes``
        (the same for contents ``strip()`` leaves as they are), ``prefilled_turn_affixes``
        (the same for the turn before an answer prefill), ``closed_turn`` (each
        turn before the last closed alike, one message per turn) and ``affixes`` (text as
        its turns' texts joined) keep their promise for awkward contents: the renderer's
        fast path relies on them."""
        built = self.built()
        contents = ["", "  padded  \n", "{braces} {{x}} %s", "Ünïcødé — 你好 \u2028", "<|im_end|>\n</s>"]
        split = getattr(built, "last_turn_affixes", None)
        stripped = getattr(built, "stripped_turn_affixes", None)
        # (stripped_turn_affixes: the same promise, for the contents strip() leaves as they are)
        kept = [c for c in contents if c == c.strip()]
        for promise, position in ((split, -1), (stripped, -1), (getattr(built, "prefilled_turn_affixes", None), -2)):
            if promise is None:
                continue
            for shape, dialogue in DIALOGUES.items():
                if position == -2:  # the question before an answer prefill the model continues (gen_prefix)
                    dialogue = (*dialogue, prompt_style.Turn("assistant", "The answer is", " "))
                try:
                    made = promise(dialogue)
                    whole = built.apply(dialogue)
                except prompt_style.PromptStyleError:
                    continue
                if made is None:
                    continue
                trims = promise is stripped or (position == -2 and made[2])
                for content in kept if trims else contents:
                    turned = list(dialogue)
                    turned[position] = dialogue[position]._replace(content=content)
                    result = built.apply(tuple(turned))
                    if made[0] is None and made[1] is None and promise is not stripped:  # messages and no text
                        assert result.text is None and whole.messages is not None, f"{shape}: (None, None)"
                    else:
                        assert result.text == made[0] + content + made[1], f"{shape}: text around {content!r}"
                    if whole.messages is not None:
                        expected = [dict(m) for m in whole.messages]
                        expected[position]["content"] = content
                        assert result.messages == expected, f"{shape}: messages around {content!r}"
        closed = getattr(built, "closed_turn", None)
        if closed is not None and split is not None:
            # the text: each turn before the last closed alike, then the last turn's alone;
            # the messages: one per turn, each the turn's
            for shape, dialogue in DIALOGUES.items():
                try:
                    whole = built.apply(dialogue)
                    last = split(dialogue[-1:])
                    made = [closed(turn) for turn in dialogue]
                except prompt_style.PromptStyleError:
                    continue
                if last is None or any(m is None for m in made):
                    continue
                if whole.text is None:  # messages and no text: no text anywhere
                    assert last == (None, None), f"{shape}: no text, so last_turn_affixes gives (None, None)"
                    assert all(b is None and a is None for b, a, _ in made), f"{shape}: no text, no closed text"
                else:
                    text = "".join(b + t.content + a for (b, a, _), t in zip(made[:-1], dialogue[:-1]))
                    shown = text + last[0] + dialogue[-1].content + last[1]
                    # (or, for a format that writes something before its first turn, such
                    # as a begin-of-text token, the closed texts after it: the renderer
                    # reads that text off apply)
                    around = split(dialogue)
                    opened = None if around is None else text + made[-1][0] + dialogue[-1].content + around[1]
                    assert whole.text == shown or (opened is not None and whole.text.endswith(opened)), (
                        f"{shape}: closed turns' texts"
                    )
                if whole.messages is not None:
                    assert whole.messages == [m for _, _, m in made], f"{shape}: one message per turn"
        affixes = getattr(built, "affixes", None)
        if affixes is not None:
            for shape, dialogue in DIALOGUES.items():
                try:
                    result = built.apply(dialogue)
                except prompt_style.PromptStyleError:
                    continue
                pieces = []
                for turn in dialogue:
                    turn_before, turn_after = affixes(turn)
                    pieces.append(turn_before + turn.content + turn_after)
                assert result.text == "".join(pieces), f"{shape}: text is its turns' texts joined"

    def test_multimodal_content_renders_or_is_a_typed_error(self):
        parts = ({"type": "text", "text": "What is in the picture?"}, {"type": "image_url", "image_url": {"url": "x"}})
        dialogue = (Turn("user", parts),)
        built = self.built()
        try:
            result = built.apply(dialogue)
        except prompt_style.PromptStyleError:
            assert_typed_error(lambda: built.apply(dialogue))
        else:
            assert isinstance(result, prompt_style.ModelInput)

    def test_2_to_26_choices(self):
        records = [mcq_record(n, 7 % n) for n in range(2, 27)]
        for record, result in zip(records, self.render(records)):
            shown = _shown(result)
            assert all(c in shown for c in record["choices"]), f"{len(record['choices'])} choices: not all shown"
            assert len(result.continuations) == len(record["choices"])
            assert result.target == record["answer"]

    def test_few_shot_examples_come_before_the_question(self):
        record = mcq_record(4, 2)
        [result] = self.render([record], shots=3)
        shown = _shown(result)
        places = [shown.find(e["question"]) for e in pool(4)[:3]]
        assert -1 not in places, "an example's question is not shown"
        assert places == sorted(places), "the examples are not in order"
        assert shown.rfind(record["question"]) > max(places), "the record's question does not come last"

    def test_an_empty_description_adds_nothing(self):
        records = [mcq_record(3), mcq_record(4, 1, tag="x")]
        plain = self.render(records, shots=1)
        empty = self.render(records, shots=1, description="")
        assert [r.to_json() for r in empty] == [r.to_json() for r in plain]

    def test_a_description_ending_in_a_blank_line(self):
        [result] = self.render([mcq_record(3)], shots=1, description=_SYSTEM)
        assert _SYSTEM.strip() in _shown(result)
        if self.trims_turns and result.text is not None:
            assert "\n\n\n" not in result.text, f"turn separators pile up: {result.text!r}"

    def test_every_installed_style(self):
        manager = self.installed_manager()
        record = mcq_record(4, 1)
        rendered, needs_options = [], []
        for style in manager.names("format_prompt"):
            task = {**self.task_mapping([record], shots=1), "template": style}
            try:
                loaded = prompt_style.load_task(task, plugins=manager, **self.load_options())
            except prompt_style.PromptStyleError:
                needs_options.append(style)  # a style that needs a template of its own (opencompass, ...)
                continue
            try:
                [result] = list(loaded.render())
            except prompt_style.PromptStyleError as exc:
                raise AssertionError(f"style {style!r}: {exc}") from None
            assert result.text or result.messages or result.token_ids, f"style {style!r}: nothing rendered"
            rendered.append(style)
        assert {"mcq", "passthrough"} <= set(rendered), f"rendered {rendered}; needed options: {needs_options}"

    def test_an_unknown_option_is_an_option_error(self):
        if self.accepts_unknown_options:
            return
        task = self.task_mapping([mcq_record(3)])
        options = {**self.load_options(), "meta_options": {**self.options, "no_such_option_xyz": 1}}
        error = assert_typed_error(lambda: prompt_style.load_task(task, plugins=self.manager(), **options))
        assert isinstance(error, prompt_style.OptionError), f"{type(error).__name__}: {error}"
        assert error.key == "meta.no_such_option_xyz", error.key
