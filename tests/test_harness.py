"""The chat-model protocol and the adapter that feeds it a task's conversations (fake models)."""

from __future__ import annotations

import pytest

import prompt_style
from prompt_style import ChatModel, ScoringChatModel, chat_requests, run_chat_model

MCQ = {"doc_to_text": "q", "doc_to_choice": "{{choices}}", "doc_to_target": "a", "template": "mcq"}
RECORDS = [
    {"q": "2 + 2?", "choices": ["3", "4"], "a": 1},
    {"q": "Capital of France?", "choices": ["Paris", "Rome"], "a": 0},
]
DEV = [{"q": "1 + 1?", "choices": ["2", "5"], "a": 0}]


class Echo:
    """Answers with a fixed letter; remembers what it was asked."""

    def __init__(self, reply: str = "B") -> None:
        self.reply = reply
        self.seen: list[list[dict]] = []

    def chat(self, messages):
        self.seen.append(messages)
        return self.reply


class Scorer(Echo):
    """Scores the continuation that names the longest choice highest."""

    def loglikelihood(self, messages, continuations):
        self.seen.append(messages)
        return [-1.0 if c.strip() == "A" else -0.5 for c in continuations]


def task(pm, meta="messages", **extra):
    return prompt_style.load_task(
        {"data": {"test": RECORDS, "dev": DEV}, "fewshot_split": "dev", **MCQ, **extra}, plugins=pm, meta=meta
    )


def test_the_protocols_are_runtime_checkable():
    assert isinstance(Echo(), ChatModel)
    assert not isinstance(Echo(), ScoringChatModel)
    assert isinstance(Scorer(), ScoringChatModel)


def test_conversations_from_messages(pm):
    convs = list(chat_requests(task(pm, num_fewshot=1)))
    assert [c.index for c in convs] == [0, 1]
    first = convs[0]
    assert [m["role"] for m in first.messages] == ["user", "assistant", "user"]
    assert first.messages[-1]["content"].startswith("2 + 2?")
    assert first.continuations == ("A", "B")  # chat formats: no target delimiter (lm-eval's chat rule)
    assert first.target == 1
    assert first.prompt.messages is first.messages


def test_conversations_from_a_plain_text_task_use_the_dialogue(pm):
    [conv, _] = chat_requests(task(pm, meta="plain", num_fewshot=1))
    assert conv.prompt.messages is None
    assert [m["role"] for m in conv.messages] == ["user", "assistant", "user"]


def test_conversations_of_rendered_prompts_with_limit(pm):
    prompts = list(task(pm).render())
    assert [c.index for c in chat_requests(prompts, limit=1)] == [0]
    assert [c.index for c in chat_requests(task(pm), limit=1)] == [0]


def test_generate_mode_reads_the_reply(pm):
    model = Echo("B. 4")
    results = list(run_chat_model(model, task(pm)))
    assert [r.response for r in results] == ["B. 4", "B. 4"]
    assert [r.prediction for r in results] == [1, 1]
    assert [r.correct for r in results] == [True, False]
    assert prompt_style.accuracy(results) == 0.5
    assert model.seen[0][-1]["role"] == "user"


def test_a_reply_that_gives_no_choice(pm):
    [result, _] = run_chat_model(Echo("Beats me"), task(pm))
    assert result.prediction is None  # "B" followed by a letter is not the choice B
    assert result.correct is False


def test_auto_mode_scores_when_the_model_can(pm):
    model = Scorer()
    results = list(run_chat_model(model, task(pm)))
    assert [r.scores for r in results] == [[-1.0, -0.5], [-1.0, -0.5]]
    assert [r.prediction for r in results] == [1, 1]
    assert [r.response for r in results] == [None, None]
    assert prompt_style.accuracy(results) == 0.5


def test_generate_mode_with_a_scoring_model(pm):
    results = list(run_chat_model(Scorer("A"), task(pm), mode="generate"))
    assert [r.prediction for r in results] == [0, 0]
    assert results[0].scores is None


def test_generation_tasks_always_chat(pm):
    records = [{"prompt": "Translate: cat", "ref": "chat"}]
    generation = prompt_style.load_task(
        {"data": {"test": records}, "doc_to_text": "prompt", "doc_to_target": "ref"}, plugins=pm, meta="messages"
    )
    [result] = run_chat_model(Scorer("le chat"), generation)
    assert result.response == "le chat"
    assert result.prediction is None and result.correct is None
    assert prompt_style.accuracy([result]) is None


def test_loglikelihood_mode_needs_the_method(pm):
    with pytest.raises(prompt_style.OptionError, match="has no loglikelihood"):
        list(run_chat_model(Echo(), task(pm), mode="loglikelihood"))


def test_bad_model_answers(pm):
    class Numbers(Echo):
        def chat(self, messages):
            return 42

    with pytest.raises(prompt_style.PluginError, match="returned int, not a string"):
        list(run_chat_model(Numbers(), task(pm)))

    class Short(Scorer):
        def loglikelihood(self, messages, continuations):
            return [0.0]

    with pytest.raises(prompt_style.PluginError, match="scored 1 continuations, not 2") as caught:
        list(run_chat_model(Short(), task(pm)))
    assert caught.value.index == 0
    with pytest.raises(prompt_style.OptionError, match="unknown mode"):
        list(run_chat_model(Echo(), task(pm), mode="rank"))
