"""Multi-turn dialogues cut into requests, one per model reply.

A style marks a dialogue as multi-turn by setting
:attr:`~prompt_style.FormattedPrompt.infer_mode`. Its model replies are the
``round`` turns of the assistant role (``BOT``); every request is the dialogue
up to one of them, followed by the dialogue's ``end`` turns, as AISBench's
``MultiTurnGenInferencer`` sends them:

``every``
    one request per reply; the turns before it carry the model's own earlier
    replies (handed back turn by turn), so the requests depend on the model.
``every_with_gt``
    one request per reply, with the ground-truth answers before it.
``last``
    one request: everything but the last answer.
``multiround``
    OpenCompass's ``GenInferencer(multiround=True)`` on a ``RawPromptTemplate``:
    one request per empty assistant message (a slot), holding the messages
    before it, the earlier slots filled with the model's own replies.

OpenCompass's ``ChatInferencer`` chats (turns of the section ``chat``) are cut
the same way in its three modes, at every ``assistant`` message: the request is
the chat before it (a chat has no ``end``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any

from .errors import RenderError
from .meta.opencompass_chat import CHAT
from .meta.roles import api_role
from .types import FormattedPrompt, Turn

if TYPE_CHECKING:
    from .render import RenderedPrompt, TaskRenderer

__all__ = ["reply_positions", "slot_positions", "requests", "reply_callback"]

_MULTIROUND = "multiround"


def reply_callback(
    replies: Callable[[RenderedPrompt], str] | Sequence[Sequence[str]] | None,
    first: int = 0,
    total: int | None = None,
) -> Callable[[RenderedPrompt], str] | None:
    """The ``reply`` callback of :meth:`~prompt_style.TaskRenderer.converse` for replies
    given as lists, ``replies[index][turn]`` (a callback or ``None`` is returned as it is).
    A worker holding only records ``first..`` of the lists gets them with ``first`` and
    ``total``, the length of the whole list, and reports a missing reply the same way."""
    if replies is None or callable(replies):
        return replies
    count = len(replies) + first if total is None else total

    def from_lists(request: RenderedPrompt) -> str:
        if request.index >= count:
            raise RenderError(
                f"the replies end at record {count - 1}",
                index=request.index,
                hint="give one list of replies per record",
            )
        given = replies[request.index - first]
        if not isinstance(given, (list, tuple)) or request.turn >= len(given):
            count_given = len(given) if isinstance(given, (list, tuple)) else "no list"
            raise RenderError(
                f"the replies of this record have no reply to turn {request.turn} ({count_given} given)",
                index=request.index,
                hint="give a list with the model's reply to every turn but the last",
            )
        return given[request.turn]

    return from_lists


def reply_positions(dialogue: Sequence[Turn]) -> list[int]:
    """Positions of the model's replies: the assistant-role turns of the ``round`` section,
    or the ``assistant`` messages of a ``ChatInferencer`` chat."""
    return [
        i
        for i, turn in enumerate(dialogue)
        if (turn.section == "round" and api_role(turn.role) == "assistant")
        or (turn.section == CHAT and turn.role == "assistant")
    ]


def slot_positions(dialogue: Sequence[Turn]) -> list[int]:
    """Positions of the slots of a ``multiround`` dialogue: its empty assistant messages
    (OpenCompass's ``GenInferencer._generate_multiround``)."""
    return [i for i, turn in enumerate(dialogue) if api_role(turn.role) == "assistant" and not turn.content]


def requests(
    renderer: TaskRenderer,
    formatted: FormattedPrompt,
    index: int,
    reply: Callable[[RenderedPrompt], str] | None,
    *,
    fewshot_indices: tuple[int, ...] | None = None,
    doc_id: Any = None,
) -> Generator[RenderedPrompt, str | None, None]:
    """The requests of one multi-turn record (see :meth:`TaskRenderer.converse`), each
    with the record's ``doc_id`` and ``fewshot_indices``."""
    where = {"split": renderer.split, "index": index, "file": renderer.source}
    mode = formatted.infer_mode
    dialogue = list(formatted.dialogue)
    multiround = mode == _MULTIROUND
    positions = slot_positions(dialogue) if multiround else reply_positions(dialogue)
    if not positions:
        raise RenderError(
            "the messages have no empty assistant message for the model to fill (GenInferencer multiround)"
            if multiround
            else "the multi-turn dialogue has no model turn (a BOT item in its round) to ask for",
            **where,
        )
    end = () if multiround else tuple(turn for turn in dialogue if turn.section == "end")
    targets = formatted.target if isinstance(formatted.target, (list, tuple)) else None
    if mode == "last":
        positions = positions[-1:]
        first = len(reply_positions(dialogue)) - 1
    else:
        first = 0
    for n, position in enumerate(positions):
        turn = first + n
        if position == 0 and dialogue[0].section == CHAT:
            # OpenCompass's ChatInferencer sends an empty batch and then fails (IndexError).
            raise RenderError(
                f"turn {turn} asks for a reply before anything was said: the chat starts with an "
                "assistant message, so this request would be empty",
                **where,
                hint="start the chat with a user (or system) message",
            )
        target: Any = targets[turn] if targets is not None and turn < len(targets) else formatted.target
        request = renderer._rendered(
            formatted,
            tuple(dialogue[:position]) + end,
            index,
            target=target,
            turn=turn,
            fewshot_indices=fewshot_indices,
            doc_id=doc_id,
        )
        sent = yield request
        if (mode != "every" and not multiround) or n == len(positions) - 1:
            continue
        answer = sent if sent is not None else (reply(request) if reply is not None else None)
        if answer is None:
            raise RenderError(
                f"infer_mode '{mode}' needs the model's reply to turn {turn} before turn {turn + 1} can be built",
                **where,
                hint="give the replies: --replies FILE on the command line, replies= from Python"
                + ("" if multiround else "; or use infer_mode every_with_gt or last"),
            )
        if not isinstance(answer, str):
            kind = type(answer).__name__
            raise RenderError(f"the model's reply to turn {turn} must be a string, not {kind}", **where)
        if multiround:  # a filled slot is a message like any other (a separator in a plain join)
            dialogue[position] = dialogue[position]._replace(content=answer, sep="\n" if position and answer else "")
        else:
            dialogue[position] = dialogue[position]._replace(content=answer)
