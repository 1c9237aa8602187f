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

A conversation (``prompt-style chat``, ``render_chat``) is rendered as
transformers renders one with a ChatML template: every message closed, the
generation prompt only when asked (``add_generation_prompt``), the last message
left open only with ``continue_final_message``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prompt_style import ModelInput, StyleError, api_role, check_options, hookimpl


def _closed(messages: list[dict[str, Any]]) -> str:
    return "".join([f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages])


@dataclass(frozen=True)
class ChatML:
    add_generation_prompt: bool | None = None
    """Prompt the model to answer: end with ``<|im_start|>assistant\\n``, or, when
    the dialogue ends with an assistant turn, leave that turn open so the model
    continues it. When false, every turn is closed (a full transcript). Unset: true
    for a task's prompts, false for a conversation (``prompt-style chat``), as
    transformers' ``apply_chat_template`` defaults."""
    continue_final_message: bool = False
    """Leave the last message open for the model to continue (transformers'
    ``continue_final_message``), whatever its role; a task's prompt ending with an
    assistant turn (a prefill) is continued anyway."""
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
        generate = self.add_generation_prompt is not False
        if messages and (self.continue_final_message or (generate and messages[-1]["role"] == "assistant")):
            *closed, last = messages
            return ModelInput(text=f"{_closed(closed)}<|im_start|>{last['role']}\n{last['content']}", messages=messages)
        text = _closed(messages)
        if generate:
            text += "<|im_start|>assistant\n"
        return ModelInput(text=text, messages=messages)

    def last_turn_affixes(self, dialogue) -> tuple[str, str] | None:
        """For the renderer's fast path (docs/hooks.md): the text before and after the
        last turn's content. ChatML writes a content as it is, so for any text ``x``
        in that turn the prompt is ``before + x + after``, and the messages differ only
        in the last one's ``content``."""
        if not dialogue or not all(isinstance(turn.content, str) for turn in dialogue):
            return None
        *head, last = dialogue
        role = api_role(last.role)
        before = _closed([{"role": api_role(t.role), "content": t.content} for t in head])
        before += f"<|im_start|>{role}\n"
        generate = self.add_generation_prompt is not False
        if self.continue_final_message or (generate and role == "assistant"):
            return before, ""  # left open for the model to continue
        return before, "<|im_end|>\n" + ("<|im_start|>assistant\n" if generate else "")

    def prefilled_turn_affixes(self, dialogue) -> tuple[str, str, bool] | None:
        """For the renderer's fast path (docs/hooks.md): ``(before, after, False)`` for the
        content of the turn before the dialogue's last, an assistant turn the model
        continues (an answer prefill such as lm-evaluation-harness's ``gen_prefix``).
        ChatML writes a content as it is, so for any text ``x`` there the prompt is
        ``before + x + after``, and the messages differ only in that message's content."""
        if len(dialogue) < 2 or not all(isinstance(turn.content, str) for turn in dialogue):
            return None
        *head, own, last = dialogue
        role = api_role(last.role)
        if role != "assistant":
            return None
        before = _closed([{"role": api_role(t.role), "content": t.content} for t in head])
        before += f"<|im_start|>{api_role(own.role)}\n"
        generate = self.add_generation_prompt is not False
        if self.continue_final_message or generate:
            rest = f"<|im_start|>{role}\n{last.content}"  # left open for the model to continue
        else:
            rest = f"<|im_start|>{role}\n{last.content}<|im_end|>\n"
        return before, "<|im_end|>\n" + rest, False

    def closed_turn(self, turn) -> tuple[str, str, dict[str, Any]] | None:
        """For the renderer's fast path (docs/hooks.md): the text before and after the
        content of a turn that another turn follows, and its message. ChatML closes
        every such turn the same way wherever it stands, so a dialogue's text is its
        closed turns' texts and then its last turn's (``last_turn_affixes`` of that turn
        alone), and its messages one per turn: few-shot examples chosen per record are
        joined from texts made once per example."""
        if not isinstance(turn.content, str):
            return None
        role = api_role(turn.role)
        return f"<|im_start|>{role}\n", "<|im_end|>\n", {"role": role, "content": turn.content}

    def pieces(self, dialogue, *, full: bool = False) -> list[tuple[tuple[int, ...], str]]:
        """The text :meth:`apply` gives, cut into what each turn adds (``tokenize=turns``):
        each message's ``<|im_start|>{role}\\n{content}<|im_end|>\\n`` (the open last
        message without its end), and the generation prompt ``<|im_start|>assistant\\n``
        as a piece of no turn."""
        messages = self.apply(dialogue).messages or []
        pieces = [((i,), f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n") for i, m in enumerate(messages)]
        generate = self.add_generation_prompt is not False
        if messages and (self.continue_final_message or (generate and messages[-1]["role"] == "assistant")):
            last = messages[-1]
            pieces[-1] = ((len(messages) - 1,), f"<|im_start|>{last['role']}\n{last['content']}")
        elif generate:
            pieces.append(((), "<|im_start|>assistant\n"))
        return pieces

    def apply_messages(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: Any = None,
        documents: Any = None,
        add_generation_prompt: bool | None = None,
        continue_final_message: bool | None = None,
        **variables: Any,
    ) -> ModelInput:
        """A conversation, as transformers renders it with a ChatML template: every
        message closed (an assistant message too), then ``<|im_start|>assistant\\n``
        when ``add_generation_prompt``; ``continue_final_message`` leaves the last
        message open instead."""
        for what, value in (("tools", tools), ("documents", documents)):
            if value is not None:
                raise StyleError(
                    f"meta template 'chatml' cannot show {what}",
                    key=what,
                    hint="render it with a chat template: --meta hf --meta-option template=PATH",
                )
        if variables:
            raise StyleError(
                f"meta template 'chatml' takes no template variables ({', '.join(sorted(variables))})",
                hint="render it with a chat template that reads them: --meta hf --meta-option template=PATH",
            )
        generate = self.add_generation_prompt if add_generation_prompt is None else add_generation_prompt
        if continue_final_message is None:
            continue_final_message = self.continue_final_message
        if generate and continue_final_message:
            raise StyleError(
                "add_generation_prompt and continue_final_message cannot both be true (transformers refuses it too)",
                hint="continue_final_message continues the last message; add_generation_prompt starts a new one",
            )
        chat = [_message(i, message) for i, message in enumerate(messages)]
        if continue_final_message:
            if not chat:
                raise StyleError("continue_final_message needs a message to continue")
            *closed, last = chat
            text = f"{_closed(closed)}<|im_start|>{last['role']}\n{last['content']}"
        else:
            text = _closed(chat) + ("<|im_start|>assistant\n" if generate else "")
        return ModelInput(text=text, messages=chat)


def _message(i: int, message: Any) -> dict[str, Any]:
    """A conversation's message, checked: ChatML shows a role and a text content only."""
    if not isinstance(message, Mapping):
        raise StyleError(f"message {i} is {type(message).__name__}, not an object", key=f"messages.{i}")
    extra = sorted(k for k, v in message.items() if k not in ("role", "content") and v is not None)
    if extra:
        raise StyleError(
            f"meta template 'chatml' renders a message's role and content only; message {i} also has "
            f"{', '.join(repr(k) for k in extra)}",
            key=f"messages.{i}",
            hint="render it with a chat template: --meta hf --meta-option template=PATH",
        )
    role, content = message.get("role"), message.get("content")
    if not isinstance(role, str):
        raise StyleError(f"message {i} has no role", key=f"messages.{i}.role")
    if not isinstance(content, str):
        raise StyleError(
            f"message {i} has no text content (ChatML text shows text only)",
            key=f"messages.{i}.content",
            hint="use the 'messages' meta template for multimodal messages",
        )
    return {"role": api_role(role), "content": content}


def chatml(*, options: dict[str, Any]) -> ChatML:
    return check_options(ChatML, options, what="meta template 'chatml'")


chatml.options = ChatML  # type: ignore[attr-defined]  # its options, for prompt-style plugins --all


@hookimpl
def apply_meta_template():
    return {"chatml": chatml}
