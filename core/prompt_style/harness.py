"""The harness side: a small chat-model protocol and an adapter from rendered tasks to it.

A harness that evaluates chat models (local or behind an API) implements
:class:`ChatModel` — ``chat(messages) -> str``, and optionally
``loglikelihood(messages, continuations) -> scores`` — and lets
:func:`run_chat_model` feed it the conversations of any task, in any task
format prompt-style reads::

    task = prompt_style.load_task("task.yaml", meta="messages")
    for result in prompt_style.run_chat_model(my_model, task):
        print(result.request.index, result.prediction, result.correct)

Conversations come from the rendered prompts: their ``messages`` when the meta
template gives them (``messages``, ``chatml``, a model's own chat template...),
else the role-tagged turns of the dialogue (few-shot examples as user/assistant
turns). The model applies its own chat template; prompt-style decides what the
conversation says.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .errors import OptionError, PluginError, RenderError
from .meta.builtin import Messages

if TYPE_CHECKING:
    from .loading import Task
    from .render import RenderedPrompt

__all__ = [
    "ChatModel",
    "ScoringChatModel",
    "ChatRequest",
    "ChatResult",
    "chat_requests",
    "run_chat_model",
    "accuracy",
]

_MESSAGES = Messages()


@runtime_checkable
class ChatModel(Protocol):
    """What a harness implements to be fed conversations."""

    def chat(self, messages: list[dict[str, Any]]) -> str:
        """The model's reply to ``messages`` (``[{"role": ..., "content": ...}]``,
        ending with a user turn)."""
        ...


@runtime_checkable
class ScoringChatModel(ChatModel, Protocol):
    """A chat model that can also score replies (multiple choice by log-likelihood)."""

    def loglikelihood(self, messages: list[dict[str, Any]], continuations: Sequence[str]) -> Sequence[float]:
        """The log-probability of each continuation as the start of the assistant's reply."""
        ...


@dataclass(frozen=True)
class ChatRequest:
    """One rendered record, as a chat model takes it."""

    index: int
    """The record's position in the evaluated split."""
    messages: list[dict[str, Any]]
    """The conversation, ending with the turn the model answers."""
    continuations: tuple[str, ...]
    """Multiple choice: the candidate replies; empty for generation."""
    target: Any
    """The gold answer: an index into ``continuations``, or the reference."""
    prompt: RenderedPrompt
    """The rendered prompt it came from (text, token ids, plugins used)."""


@dataclass(frozen=True)
class ChatResult:
    """What the model made of one request."""

    request: ChatRequest
    response: str | None = None
    """The reply (``chat``), when the model was asked to generate."""
    scores: list[float] | None = None
    """Log-likelihood of each continuation (``loglikelihood``), for multiple choice."""
    prediction: int | None = None
    """Multiple choice: the chosen continuation (highest score, or the one the reply gives)."""

    @property
    def correct(self) -> bool | None:
        """Multiple choice with an index target: whether the prediction is the target."""
        target = self.request.target
        if not self.request.continuations or isinstance(target, bool) or not isinstance(target, int):
            return None
        return self.prediction == target


def _messages(prompt: RenderedPrompt) -> list[dict[str, Any]]:
    if prompt.messages is not None:
        return prompt.messages
    if prompt.dialogue:
        return _MESSAGES.apply(prompt.dialogue).messages or []
    raise RenderError("the rendered prompt has neither messages nor a dialogue", index=prompt.index)


def chat_requests(prompts: Task | Iterable[RenderedPrompt], *, limit: int | None = None) -> Iterator[ChatRequest]:
    """The conversations of a task (or of rendered prompts), lazily.

    :param prompts: a loaded :class:`~prompt_style.Task` (rendered here) or rendered prompts.
    :param limit: only the first ``limit`` records.
    """
    rendered = prompts.render(limit=limit) if hasattr(prompts, "render") else iter(prompts)
    if limit is not None and not hasattr(prompts, "render"):
        rendered = itertools.islice(rendered, limit)
    for prompt in rendered:
        yield ChatRequest(prompt.index, _messages(prompt), tuple(prompt.continuations), prompt.target, prompt)


def _chosen(response: str, continuations: Sequence[str]) -> int | None:
    """The continuation a generated reply gives: the first whose text the reply starts with, as a whole word."""
    reply = response.strip()
    for index, continuation in enumerate(continuations):
        choice = continuation.strip()
        if choice and reply.startswith(choice) and not reply[len(choice) : len(choice) + 1].isalnum():
            return index
    return None


def _scored(model: Any, request: ChatRequest) -> ChatResult:
    scores = [float(s) for s in model.loglikelihood(request.messages, list(request.continuations))]
    if len(scores) != len(request.continuations):
        raise PluginError(
            f"the model scored {len(scores)} continuations, not {len(request.continuations)}",
            index=request.index,
            hint="loglikelihood(messages, continuations) returns one score per continuation",
        )
    best = max(range(len(scores)), key=scores.__getitem__) if scores else None
    return ChatResult(request, scores=scores, prediction=best)


def _scored_contexts(model: Any, request: ChatRequest, can_score: bool, mode: str) -> ChatResult:
    """A multiple-input record (lm-evaluation-harness's winogrande): one conversation
    per choice, each scored with the continuation at its position."""
    contexts = request.prompt.contexts or ()
    if not can_score or mode == "generate":
        raise OptionError(
            "the task is a multiple-input task (one context per choice, such as winogrande), "
            "which is scored by log-likelihood, not generated",
            key="mode",
            index=request.index,
            hint="give the model a loglikelihood(messages, continuations) method and use mode auto or loglikelihood",
        )
    if not all(isinstance(context, list) for context in contexts):
        raise RenderError(
            "the contexts of this multiple-input record are texts, not conversations",
            index=request.index,
            hint="load the task with meta='messages' to score each context as a conversation",
        )
    scores: list[float] = []
    for context, continuation in zip(contexts, request.continuations):
        got = [float(s) for s in model.loglikelihood(context, [continuation])]
        if len(got) != 1:
            raise PluginError(
                f"the model scored {len(got)} continuations, not 1",
                index=request.index,
                hint="loglikelihood(messages, continuations) returns one score per continuation",
            )
        scores.append(got[0])
    best = max(range(len(scores)), key=scores.__getitem__) if scores else None
    return ChatResult(request, scores=scores, prediction=best)


def run_chat_model(
    model: ChatModel,
    prompts: Task | Iterable[RenderedPrompt],
    *,
    mode: Literal["auto", "generate", "loglikelihood"] = "auto",
    limit: int | None = None,
) -> Iterator[ChatResult]:
    """Feed a task's conversations to a chat model, lazily, one result per record.

    :param model: a :class:`ChatModel` (``chat``), optionally with ``loglikelihood``.
    :param prompts: a loaded task or rendered prompts.
    :param mode: ``generate`` asks ``chat`` for every record; ``loglikelihood``
        scores the continuations of multiple-choice records (and generates for
        the others); ``auto`` scores when the model can and the record has
        continuations, else generates. A multiple-input record (``contexts``,
        lm-evaluation-harness's winogrande) is always scored, each context's
        conversation with its continuation.
    :param limit: only the first ``limit`` records.
    :raises OptionError: for an unknown ``mode``, or ``loglikelihood`` with a model that cannot score.
    :raises PluginError: when the model returns something other than a reply or one score per continuation.
    """
    can_score = callable(getattr(model, "loglikelihood", None))
    if mode == "loglikelihood" and not can_score:
        raise OptionError(
            f"{type(model).__name__} has no loglikelihood(messages, continuations) method",
            key="mode",
            hint="use mode='generate', or implement loglikelihood",
        )
    if mode not in ("auto", "generate", "loglikelihood"):
        raise OptionError(f"unknown mode {mode!r}", key="mode", hint="use auto, generate or loglikelihood")
    for request in chat_requests(prompts, limit=limit):
        if request.prompt.contexts is not None:  # multiple input: one conversation per choice
            yield _scored_contexts(model, request, can_score, mode)
            continue
        if request.continuations and can_score and mode != "generate":
            yield _scored(model, request)
            continue
        response = model.chat(request.messages)
        if not isinstance(response, str):
            raise PluginError(
                f"{type(model).__name__}.chat returned {type(response).__name__}, not a string",
                index=request.index,
                hint="chat(messages) returns the reply's text",
            )
        prediction = _chosen(response, request.continuations) if request.continuations else None
        yield ChatResult(request, response=response, prediction=prediction)


def accuracy(results: Iterable[ChatResult]) -> float | None:
    """The share of multiple-choice results whose prediction is the target (``None`` when there are none)."""
    marks = [r.correct for r in results if r.correct is not None]
    return sum(marks) / len(marks) if marks else None
