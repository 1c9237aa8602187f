"""``chatml``: the ChatML chat format, as a string and as API messages.

Each turn becomes ``<|im_start|>{role}\\n{content}<|im_end|>\\n``; the generation
prompt ``<|im_start|>assistant\\n`` follows. A dialogue that ends with an
assistant turn (an answer prefill, such as lm-evaluation-harness's
``gen_prefix``) is continued instead: its turn is left open, as transformers'
``continue_final_message`` does. The same dialogue is returned as
``[{"role": ..., "content": ...}]`` messages.

Few-shot examples as multi-turn messages or as one user message, and the system
instruction, are chat rules the core applies before any chat meta template
(``load_task(fewshot_as_multiturn=..., system_instruction=...)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prompt_style import ModelInput, StyleError, api_role, check_options, hookimpl


@dataclass(frozen=True)
class ChatML:
    add_generation_prompt: bool = True
    """Prompt the model to answer: end with ``<|im_start|>assistant\\n``, or, when
    the dialogue ends with an assistant turn, leave that turn open so the model
    continues it. When false, every turn is closed (a full transcript)."""
    chat = True  # a class attribute, not an option: ChatML is a chat format

    def apply(self, dialogue) -> ModelInput:
        messages: list[dict[str, Any]] = []
        for turn in dialogue:
            if not isinstance(turn.content, str):
                raise StyleError(
                    f"a {turn.role} turn holds multimodal parts, which ChatML text cannot show",
                    hint="use the 'messages' meta template for multimodal prompts",
                )
            messages.append({"role": api_role(turn.role), "content": turn.content})
        if self.add_generation_prompt and messages and messages[-1]["role"] == "assistant":
            *closed, last = messages
            text = "".join([f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in closed])
            return ModelInput(text=f"{text}<|im_start|>assistant\n{last['content']}", messages=messages)
        text = "".join([f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages])
        if self.add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return ModelInput(text=text, messages=messages)


def chatml(*, options: dict[str, Any]) -> ChatML:
    return check_options(ChatML, options, what="meta template 'chatml'")


chatml.options = ChatML  # type: ignore[attr-defined]  # its options, for prompt-style plugins --all


@hookimpl
def apply_meta_template():
    return {"chatml": chatml}
