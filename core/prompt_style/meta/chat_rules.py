"""The chat rules every task follows with a chat meta template.

These are lm-evaluation-harness's rules for ``--apply_chat_template``,
``--fewshot_as_multiturn`` and ``--system_instruction``, applied once, in core,
to the dialogue a style made, before any meta template whose class sets
``chat = True`` (``messages``, ``chatml``, Hugging Face chat templates, chat
plugins) turns it into messages:

- the system message is the system instruction and the task description,
  joined by the task's ``fewshot_delimiter`` unless either side already has
  whitespace at the join (``maybe_delimit``);
- few-shot examples are alternating user/assistant messages (multi-turn), or,
  with ``fewshot_as_multiturn`` false, everything after the system message is
  one user message holding the plain-text prompt (the turns joined with their
  separators), with an assistant prefill (``gen_prefix``) kept apart;
- a dialogue that ends with an assistant turn is a prefill the model continues.

The system instruction applies to plain text too (lm-evaluation-harness puts
it before the description in a base model's prompt). The empty target
delimiter of multiple-choice continuations is a style setting
(``StyleSettings.continuation_delimiter``), set by ``load_task``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..delimiters import maybe_delimit
from ..errors import StyleError
from ..types import Dialogue, Turn
from .roles import api_role

__all__ = ["ChatRules", "continuation_delimiter", "single_turn"]


def continuation_delimiter(target_delimiter: str, gen_prefix: object) -> str:
    """The text before multiple-choice continuations under a chat template:
    empty, unless the task's ``gen_prefix`` (as written in the task) is set and
    does not end with whitespace, then the target delimiter (lm-evaluation-harness's
    ``construct_requests``)."""
    source = getattr(gen_prefix, "source", gen_prefix)
    if isinstance(source, str) and source and not source[-1].isspace():
        return target_delimiter
    return ""


@dataclass(frozen=True)
class ChatRules:
    """Turns a style's dialogue into the one lm-evaluation-harness would send."""

    system_instruction: str | None = None
    """Placed before the description in the system message."""
    fewshot_as_multiturn: bool = True
    """Few-shot examples as user/assistant turns; when false (chat only), one user message."""
    chat: bool = False
    """Whether the meta template is a chat format."""
    delimiter: str = "\n\n"
    """What joins the system instruction and the description (the task's ``fewshot_delimiter``)."""

    def apply(self, dialogue: Dialogue) -> Dialogue:
        turns = list(dialogue)
        instruction = self.system_instruction
        if instruction:
            first = turns[0] if turns else None
            if first is not None and api_role(first.role) == "system" and isinstance(first.content, str):
                turns[0] = first._replace(content=maybe_delimit(instruction, first.content, self.delimiter))
            else:
                turns.insert(0, Turn("system", instruction, "", section="begin"))
        if self.chat and not self.fewshot_as_multiturn:
            turns = single_turn(turns)
        return tuple(turns)


def single_turn(turns: list[Turn]) -> list[Turn]:
    """System turns, then one user turn joining the rest with their separators,
    then the assistant prefill, if any (``multiturn_to_singleturn``)."""
    head = 0
    while head < len(turns) and api_role(turns[head].role) == "system":
        head += 1
    rest = turns[head:]
    prefill = None
    if rest and api_role(rest[-1].role) == "assistant":
        prefill = rest.pop()
    if not rest:
        return turns
    for turn in rest:
        if not isinstance(turn.content, str):
            raise StyleError(
                f"a {turn.role} turn holds multimodal parts, which one plain-text user message cannot hold",
                hint="render with fewshot_as_multiturn (the default)",
            )
    content = rest[0].content + "".join([t.sep + t.content for t in rest[1:]])
    merged = turns[:head] + [Turn("user", content, rest[0].sep, section="round")]
    if prefill is not None:
        merged.append(prefill._replace(sep=""))
    return merged
