"""Offline models that record what OpenCompass hands them (tests and demos).

:class:`RecordingModel` is a language model (``BaseModel``: OpenCompass's
``LMTemplateParser`` applies its ``meta_template``); :class:`RecordingAPIModel`
an API model (``BaseAPIModel``: ``APITemplateParser``, then the message list
OpenCompass's ``OpenAI`` model would send). Each call appends one JSON line
per prompt to ``record_file`` (``{pid}`` in it: one file per process): ``{"mode": "gen"|"ppl", "prompt": ...}`` (an API
model adds ``"messages"``; generation adds ``max_out_len`` and the
``stopping_criteria``). Generation answers ``reply``; perplexity is 0.

    models = [dict(type='prompt_style_opencompass.recording.RecordingModel',
                   abbr='recorder', record_file='/tmp/prompts.jsonl',
                   meta_template=..., max_out_len=16, batch_size=8)]

This module imports OpenCompass: only OpenCompass imports it.
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any

import numpy as np
from opencompass.models.base import BaseModel
from opencompass.models.base_api import BaseAPIModel

__all__ = ["RecordingModel", "RecordingAPIModel", "openai_messages"]


def _jsonable(prompt: Any) -> Any:
    if isinstance(prompt, str):
        return prompt
    return [dict(item) if isinstance(item, dict) else item for item in prompt]


def openai_messages(prompt: Any) -> list[dict[str, Any]]:
    """The messages OpenCompass 0.5.4's ``OpenAI`` model makes of a parsed prompt."""
    from opencompass.models.openai_api import OpenAI

    fake = SimpleNamespace(_content_token_len=OpenAI._content_token_len, logger=None)
    messages, _ = OpenAI._preprocess_messages(fake, prompt, None, 10**9, "none", len)
    return messages


class _Recorder:
    record_file: str | None
    reply: str

    def _record(self, lines: list[dict[str, Any]]) -> None:
        if not self.record_file:
            return
        # One file per process ({pid} in the name): OpenCompass's runners run tasks side by side.
        path = self.record_file.replace("{pid}", str(os.getpid()))
        with open(path, "a", encoding="utf-8") as out:
            # ASCII: one line whatever the text holds (U+2028, a lone surrogate)
            out.write("".join(json.dumps(line) + "\n" for line in lines))


class RecordingModel(_Recorder, BaseModel):
    """A language model that records its inputs (strings, after the meta template)."""

    def __init__(self, path: str = "recording", record_file: str | None = None, reply: str = "", **kwargs: Any):
        super().__init__(path=path, **kwargs)
        self.record_file = record_file
        self.reply = reply

    def generate(
        self,
        inputs: list[str],
        max_out_len: int,
        stopping_criteria: list[str] | None = None,
        min_out_len: int | None = None,
    ) -> list[str]:
        extra = {"max_out_len": max_out_len, "stopping_criteria": list(stopping_criteria or [])}
        self._record([{"mode": "gen", "prompt": p, **extra} for p in inputs])
        return [self.reply for _ in inputs]

    def get_ppl(self, inputs: list[str], mask_length: list[int] | None = None) -> np.ndarray:
        self._record([{"mode": "ppl", "prompt": p} for p in inputs])
        return np.zeros(len(inputs))

    def get_token_len(self, prompt: str) -> int:
        return len(prompt.split())


class RecordingAPIModel(_Recorder, BaseAPIModel):
    """An API model that records its inputs: OpenCompass's message list and the
    OpenAI-style messages its ``OpenAI`` model would send."""

    def __init__(self, path: str = "recording-api", record_file: str | None = None, reply: str = "", **kwargs: Any):
        super().__init__(path=path, **kwargs)
        self.record_file = record_file
        self.reply = reply

    def _lines(self, mode: str, inputs: list[Any]) -> list[dict[str, Any]]:
        return [{"mode": mode, "prompt": _jsonable(p), "messages": openai_messages(p)} for p in inputs]

    def generate(self, inputs: list[Any], max_out_len: int, **kwargs: Any) -> list[str]:
        lines = self._lines("gen", inputs)
        for line in lines:
            line["max_out_len"] = max_out_len
        self._record(lines)
        return [self.reply for _ in inputs]

    def get_ppl(self, inputs: list[Any], mask_length: list[int] | None = None) -> np.ndarray:
        self._record(self._lines("ppl", inputs))
        return np.zeros(len(inputs))

    def get_token_len(self, prompt: Any) -> int:
        return len(str(prompt).split())
