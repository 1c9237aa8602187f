"""A prompt's text cut into the pieces its turns add, for turn-by-turn tokenization.

Some models were trained on conversations tokenized message by message
(openchat's ``ochat`` package builds its training and serving tokens so), and
``tokenize(A) + tokenize(B) != tokenize(A + B)``: the ids of such a prompt are
the ids of each piece tokenized on its own, concatenated. A *piece* is the text
one turn adds to the prompt, or text that belongs to no turn (a template's
``begin``, the generation prompt); the pieces joined are exactly the prompt's
text.

Two ways to find them:

- a meta template that builds its text turn by turn says where its turns are:
  the optional ``pieces(dialogue, *, full=False)`` method (``plain``, ``chatml``,
  OpenCompass meta templates and ``hf`` implement it);
- a conversation rendered through ``apply_messages`` (a chat template) is cut by
  rendering its prefixes without a generation prompt, as trl and openchat-style
  training do (:func:`message_pieces`): the text each message adds is what the
  render of the first *k* messages adds to the render of the first *k - 1*.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import LimitError, PromptStyleError, SandboxError, TokenizerError
from ..types import ModelInput

__all__ = ["Piece", "message_pieces", "checked_pieces", "piece_roles"]

Piece = tuple[tuple[int, ...], str]
"""``(turns, text)``: the text one or more turns add (their indices), or text of no turn (``()``)."""


def message_pieces(
    apply_messages: Callable[..., ModelInput], messages: Sequence[Any], **variables: Any
) -> tuple[ModelInput, list[Piece]]:
    """Render a conversation and cut its text into the text each message adds.

    The conversation is rendered as asked (``apply_messages(messages, **variables)``);
    then every prefix of it, the first *k* messages, is rendered as a closed
    transcript (``add_generation_prompt=False``, ``continue_final_message=False``,
    the other variables unchanged). Message *k - 1*'s piece is what the *k*-th
    prefix adds to the one before; what the whole render adds to the last prefix
    (the generation prompt) is a piece of no message. A prefix whose text is not
    the start of the whole text (a template that renders earlier messages
    differently once later ones follow, such as one that drops the reasoning of
    past assistant turns, or that raises on it) gives no boundary there: that
    message's text is joined with the next one's in one piece, whose ``turns``
    name both.

    :param apply_messages: the meta template's ``apply_messages``.
    :param messages: the conversation.
    :param variables: ``tools``, ``documents``, ``add_generation_prompt``,
        ``continue_final_message`` and template variables, as ``apply_messages`` takes them.
    :returns: the whole render and its pieces (their texts joined are its text).
    """
    made = apply_messages(messages, **variables)
    text = made.text
    if text is None:
        return made, []
    closed = {**variables, "add_generation_prompt": False, "continue_final_message": False}
    pieces: list[Piece] = []
    start = 0
    pending: list[int] = []
    for k in range(1, len(messages) + 1):
        pending.append(k - 1)
        try:
            prefix = apply_messages(messages[:k], **closed).text
        except (LimitError, SandboxError):  # a budget or the sandbox: never taken for a refusal
            raise
        except PromptStyleError:  # a template that refuses this prefix (raise_exception): no boundary here
            continue
        if prefix is None or len(prefix) < start or not text.startswith(prefix):
            continue
        if len(prefix) > start:
            pieces.append((tuple(pending), text[start : len(prefix)]))
        # (a prefix no longer than the last one: these messages added no text)
        pending = []
        start = len(prefix)
    rest = text[start:]
    if pending:
        pieces.append((tuple(pending), rest))
    elif rest:
        pieces.append(((), rest))
    return made, [piece for piece in pieces if piece[1]]


def checked_pieces(pieces: Any, text: str, name: str) -> list[Piece]:
    """A meta template's ``pieces`` result, checked: ``(turns, text)`` pairs whose texts
    join into the prompt's text.

    :raises TokenizerError: naming the meta template, when they do not (a plugin's bug).
    """
    out: list[Piece] = []
    try:
        for turns, piece in pieces:
            if not isinstance(piece, str):
                raise TypeError(f"a piece's text is {type(piece).__name__}")
            out.append((tuple(int(t) for t in turns), piece))
    except (TypeError, ValueError) as exc:
        raise TokenizerError(
            f"meta template {name!r} gave pieces that are not (turns, text) pairs: {exc}",
            key="meta.tokenize",
            hint="a meta template's pieces(dialogue) returns [((turn index, ...), text), ...]",
        ) from None
    joined = "".join(piece for _, piece in out)
    if joined != text:
        at = next((i for i, (a, b) in enumerate(zip(joined, text)) if a != b), min(len(joined), len(text)))
        raise TokenizerError(
            f"meta template {name!r} cut its text into pieces that do not join into the prompt "
            f"(they differ from character {at} on)",
            key="meta.tokenize",
            hint="use --meta-option tokenize=whole, and report the meta template's pieces() as a bug",
        )
    return [piece for piece in out if piece[1]]


def piece_roles(turns: Sequence[int], roles: Sequence[str]) -> list[str]:
    """The roles of a piece's turns, for reports."""
    return [roles[t] for t in turns if 0 <= t < len(roles)]
