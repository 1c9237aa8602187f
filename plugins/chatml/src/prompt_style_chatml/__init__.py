"""``chatml``: the ChatML chat format, as a string and as API messages.

Each turn becomes ``<|im_start|>{role}\\n{content}<|im_end|>\\n``; the generation
prompt ``<|im_start|>assistant\\n`` follows. The same dialogue is returned as
``[{"role": ..., "content": ...}]`` messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prompt_style import ModelInput, StyleError, api_role, check_options, hookimpl


@dataclass(frozen=True)
class ChatML:
    add_generation_prompt: bool = True
    """End with ``<|im_start|>assistant\\n`` so the model answers."""
    fewshot_as_multiturn: bool = True
    """Few-shot examples as user/assistant turns; when false, everything after
    the system turns is one user message (lm-evaluation-harness's default)."""
    chat = True  # a class attribute, not an option: ChatML is a chat format

    def _messages(self, dialogue) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        rest = []
        for turn in dialogue:
            if not isinstance(turn.content, str):
                raise StyleError(
                    f"a {turn.role} turn holds multimodal parts, which ChatML text cannot show",
                    hint="use the 'messages' meta template for multimodal prompts",
                )
            role = api_role(turn.role)
            if not self.fewshot_as_multiturn and (rest or role != "system"):
                rest.append(turn)
                continue
            messages.append({"role": role, "content": turn.content})
        if rest:
            messages.append({"role": "user", "content": "".join([t.sep + t.content for t in rest])})
        return messages

    def apply(self, dialogue) -> ModelInput:
        messages = self._messages(dialogue)
        text = "".join([f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages])
        if self.add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return ModelInput(text=text, messages=messages)


def chatml(*, options: dict[str, Any]) -> ChatML:
    return check_options(ChatML, options, what="meta template 'chatml'")


@hookimpl
def apply_meta_template():
    return {"chatml": chatml}
