"""An offline lighteval model that records what it is handed: ``lighteval custom``.

::

    lighteval custom recorder "$(python -m prompt_style_lighteval.offline_model)" "TASK|0" \
        --custom-tasks prompt_style_lighteval.tasks

(``python -m prompt_style_lighteval.offline_model`` prints this file's path,
which ``lighteval custom`` loads.) Every request is appended as one JSON line to
``PROMPT_STYLE_LIGHTEVAL_RECORD`` (when set): the task, the doc's id and kind,
and the prompt as lighteval's own models build it from the doc with its
``PromptManager``: ``text`` (a model without a chat template), ``messages``
(an API model, or a chat template's input), the doc's ``choices`` (multiple
choice: the continuations scored after the prompt; generation: the references)
and ``gold_index``, and a generation's ``stop_sequences``. It replies ``PROMPT_STYLE_LIGHTEVAL_REPLY``
(default ``A``) and scores the first choice highest. It loads nothing and needs
no network.

This file is loaded by path (lighteval's ``custom`` backend), so it imports
absolutely and defines exactly one ``LightevalModel`` subclass.
"""

from __future__ import annotations

import json
import os
from typing import Any

from lighteval.models.abstract_model import LightevalModel
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.prompt_manager import PromptManager

RECORD = "PROMPT_STYLE_LIGHTEVAL_RECORD"
REPLY = "PROMPT_STYLE_LIGHTEVAL_REPLY"


class _NoCache:
    """lighteval's pipeline hands the model its registry for a sample cache; a
    recorder caches nothing (every request must reach it)."""

    def _init_registry(self, registry: Any) -> None:
        pass


class PromptRecorder(LightevalModel):
    """Records every doc's prompt as lighteval builds it; replies without a model."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self._cache = _NoCache()
        system = getattr(config, "system_prompt", None)
        self._plain = PromptManager(use_chat_template=False, system_prompt=system)
        self._chat = PromptManager(use_chat_template=True, tokenizer=None, system_prompt=system)

    @property
    def tokenizer(self) -> Any:
        return None

    @property
    def add_special_tokens(self) -> bool:
        return False

    @property
    def max_length(self) -> int:
        return 1 << 20

    def _record(self, doc: Any, kind: str) -> None:
        path = os.environ.get(RECORD)
        if not path:
            return
        line = {
            "task": doc.task_name,
            "id": doc.id,
            "kind": kind,
            "text": self._plain.prepare_prompt(doc),
            "messages": self._chat.prepare_prompt_api(doc),
        }
        line["choices"] = list(doc.choices)  # loglikelihood: the continuations; generation: the references
        line["gold_index"] = doc.gold_index
        if kind == "generate":
            line["stop_sequences"] = list(doc.stop_sequences or [])
        with open(path, "a", encoding="utf-8") as out:
            # ASCII: one line whatever the text holds (U+2028, a lone surrogate)
            out.write(json.dumps(line) + "\n")

    def greedy_until(self, docs: list[Any]) -> list[ModelResponse]:
        reply = os.environ.get(REPLY, "A")
        for doc in docs:
            self._record(doc, "generate")
        return [ModelResponse(text=[reply]) for _ in docs]

    def loglikelihood(self, docs: list[Any]) -> list[ModelResponse]:
        out = []
        for doc in docs:
            self._record(doc, "loglikelihood")
            scores = [-float(i) for i in range(len(doc.choices))]
            out.append(ModelResponse(logprobs=scores, argmax_logits_eq_gold=[i == 0 for i in range(len(scores))]))
        return out

    def loglikelihood_rolling(self, docs: list[Any]) -> list[ModelResponse]:
        for doc in docs:
            self._record(doc, "loglikelihood_rolling")
        return [ModelResponse(logprobs=[0.0]) for _ in docs]


if __name__ == "__main__":  # the path to give ``lighteval custom``
    print(os.path.abspath(__file__))
