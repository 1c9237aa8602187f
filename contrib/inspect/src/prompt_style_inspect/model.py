"""An offline model API for tests and demos: ``--model prompt_style_inspect/NAME``.

inspect_ai's ``mockllm/model`` counts tokens with tiktoken's ``o200k_base``,
which downloads a file on first use. This model API downloads nothing: it
estimates tokens from the text's length and replies without a network.

Models (the part after ``prompt_style_inspect/``):

- ``echo``: replies with the text of the last user message.
- ``fixed``: replies with ``-M reply=TEXT`` (default ``A``).

With ``-M record=PATH`` every request is appended to ``PATH`` as one JSON line,
``{"sample_id": ..., "epoch": ..., "messages": [{"role", "content"}, ...]}``:
exactly the messages the model received, to compare with
``prompt-style render --format jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput

from prompt_style import OptionError

from .errors import in_inspect
from .messages import message_dicts

__all__ = ["OfflineModel", "MODELS"]

MODELS = ("echo", "fixed")
"""The model names this API serves."""


def _active_sample() -> tuple[Any, Any]:
    """The sample being evaluated (id, epoch), when inspect_ai says; for the record only."""
    try:  # not a public API of inspect_ai: the record then has no id, nothing else changes
        from inspect_ai.log._samples import sample_active

        active = sample_active()
    except Exception:
        return None, None
    if active is None:
        return None, None
    return active.sample.id, active.epoch


class OfflineModel(ModelAPI):
    """Replies without a network; optionally records every request."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        reply: Any = "A",
        record: str | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in MODELS:
            raise in_inspect(
                OptionError(
                    f"unknown offline model {model_name!r}",
                    key="--model",
                    hint="use prompt_style_inspect/echo or prompt_style_inspect/fixed",
                )
            )
        if model_args:
            raise in_inspect(
                OptionError(
                    f"unknown model argument(s) {', '.join(sorted(model_args))}",
                    key="-M",
                    hint="the offline models take reply=TEXT and record=PATH",
                )
            )
        self.reply = str(reply)
        self.record = Path(record) if record else None

    async def generate(
        self, input: list[ChatMessage], tools: list[Any], tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        if self.record is not None:
            sample_id, epoch = _active_sample()
            line = {"sample_id": sample_id, "epoch": epoch, "messages": message_dicts(input)}
            with self.record.open("a", encoding="utf-8") as out:
                # ASCII: one line whatever the text holds (U+2028, a lone surrogate)
                out.write(json.dumps(line) + "\n")
        if self.model_name == "echo":
            users = [m for m in input if m.role == "user"]
            content = users[-1].text if users else ""
        else:
            content = self.reply
        return ModelOutput.from_content(model=f"prompt_style_inspect/{self.model_name}", content=content)

    async def count_text_tokens(self, text: str) -> int:
        """About four characters a token, without a tokenizer file."""
        return max(1, (len(text) + 3) // 4)

    def max_tokens(self) -> int | None:
        return 4096
