"""Built-in meta templates: ``plain`` text and API ``messages``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._lazy import Lazy
from .._markers import hookimpl
from ..errors import StyleError
from ..options import check_options
from ..types import Dialogue, ModelInput, Turn
from .roles import api_role


@dataclass(frozen=True)
class Plain:
    """Each turn's separator then its text, concatenated: what a base model reads."""

    def apply(self, dialogue: Dialogue) -> ModelInput:
        try:
            return ModelInput(text="".join([t.sep + t.content for t in dialogue]))
        except TypeError:
            bad = next(t for t in dialogue if not isinstance(t.content, str))
            raise StyleError(
                f"a {bad.role} turn holds multimodal parts, which plain text cannot show",
                hint="use a meta template that keeps parts, such as 'messages'",
            ) from None

    def pieces(self, dialogue: Dialogue, *, full: bool = False) -> list[tuple[tuple[int, ...], str]]:
        """The text each turn adds: its separator and its content (``tokenize=turns``)."""
        self.apply(dialogue)  # the same errors as the text
        return [((i,), t.sep + t.content) for i, t in enumerate(dialogue)]

    def affixes(self, turn: Turn) -> tuple[str, str]:
        """A turn's text is ``turn.sep + turn.content``, and a dialogue's text is its
        turns' texts joined: the renderer may render a task's shared few-shot block
        once and add each record's turns with string joins (see docs/hooks.md)."""
        return turn.sep, ""


@dataclass(frozen=True)
class Messages:
    """An API message list ``[{"role": ..., "content": ...}]``."""

    system: bool = True
    """Keep system turns; when false they are sent as user turns."""
    chat = True  # a class attribute, not an option: API messages are a chat format

    def apply(self, dialogue: Dialogue) -> ModelInput:
        messages: list[dict[str, Any]] = []
        for turn in dialogue:
            role = api_role(turn.role)
            if role == "system" and not self.system:
                role = api_role(turn.fallback_role or "user")
            content = turn.content if isinstance(turn.content, str) else [dict(p) for p in turn.content]
            message = {"role": role, "content": content}
            if turn.extra:  # more keys of an API message (RawPromptTemplate), sent as given
                message.update({k: v for k, v in turn.extra.items() if k not in message})
            messages.append(message)
        return ModelInput(messages=messages)

    def last_turn_affixes(self, dialogue: Dialogue) -> tuple[None, None] | None:
        """For the renderer's fast path (docs/hooks.md): ``(None, None)``, messages and
        no text. For any text ``x`` in the last turn, :meth:`apply` gives the same
        messages but for the last one's ``content``, which is ``x`` as it is. ``None``
        for a dialogue with multimodal contents or extra keys in its last turn."""
        if not dialogue or not all(isinstance(turn.content, str) for turn in dialogue) or dialogue[-1].extra:
            return None
        return None, None

    def prefilled_turn_affixes(self, dialogue: Dialogue) -> tuple[None, None, bool] | None:
        """For the renderer's fast path (docs/hooks.md): ``(None, None, False)``, messages and
        no text, for the turn before the dialogue's last (an assistant turn the model
        continues: an answer prefill): the messages differ only in that one's ``content``.
        ``None`` as :meth:`last_turn_affixes` gives it, or when the last turn is not an
        assistant's."""
        if len(dialogue) < 2 or api_role(dialogue[-1].role) != "assistant":
            return None
        if not all(isinstance(turn.content, str) for turn in dialogue) or dialogue[-2].extra:
            return None
        return None, None, False

    def closed_turn(self, turn: Turn) -> tuple[None, None, dict[str, Any]] | None:
        """For the renderer's fast path (docs/hooks.md): no text, and the turn's message,
        which is the same wherever the turn stands (one message per turn)."""
        if not isinstance(turn.content, str):
            return None
        return None, None, self.apply((turn,)).messages[0]  # type: ignore[index]


def plain(*, options: dict[str, Any]) -> Plain:
    return check_options(Plain, options, what="meta template 'plain'")


def messages(*, options: dict[str, Any]) -> Messages:
    return check_options(Messages, options, what="meta template 'messages'")


# the options each factory takes, for listings (prompt-style plugins --all)
plain.options = Plain  # type: ignore[attr-defined]
messages.options = Messages  # type: ignore[attr-defined]


@hookimpl
def apply_meta_template():
    # OpenCompass meta templates are imported when a task uses one.
    from .opencompass_named import NAMED_META_TEMPLATES

    return {
        "plain": plain,
        "messages": messages,
        "opencompass": Lazy("prompt_style.meta.opencompass:opencompass_meta"),
        **{
            f"opencompass::{name}": Lazy("prompt_style.meta.opencompass:_Named", args=(name,))
            for name in NAMED_META_TEMPLATES
        },
    }
