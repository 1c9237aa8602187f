"""The compiled fast path's parts for chat formats (:mod:`prompt_style.fastpath`): where a
chat format's text stands around the record's question (``last_turn_affixes``,
``stripped_turn_affixes``: :func:`_chat_split`), and the few-shot examples a retriever
chooses per record joined from each example's closed texts (``closed_turn``:
:func:`_chat_selection`; with the text before the first example read off ``apply``
for a model's own template: :func:`_anchored_selection`). Each is checked against the
meta template's ``apply`` on the task's own turns before it is used."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .fast_examples import ExampleSelection, MergedSelection, Refused
from .fast_prompts import ChatMessages
from .meta.chat_rules import single_turn
from .safe.json_lines import dumps_json, json_utf8, safe_utf8
from .styles.base import QAStyle
from .types import Dialogue, Turn

if TYPE_CHECKING:
    from .render import TaskRenderer

__all__ = ["_chat_split", "_chat_selection", "_selection", "_selects"]


def _chat_split(
    meta: Any, last_turn: Any, dialogue: Dialogue, stripped: bool = False, position: int = -1
) -> tuple[str, str, ChatMessages | None, bool] | None:
    """``(head, tail, messages, textless)``: a chat format's text before the record's own
    text (the last turn's content, empty in ``dialogue`` but for what every record's
    starts with, which ``head`` ends with) and after it, and its messages, for
    ``dialogue``: what ``last_turn_affixes`` promises, checked against ``apply`` on this
    dialogue; ``head`` and ``tail`` empty and ``textless`` true for a format that gives
    messages and no text; ``None`` when the promise does not hold, or ``apply`` gives more
    than text and messages. ``stripped``: ``last_turn`` is ``stripped_turn_affixes``,
    whose promise is for contents ``strip()`` leaves as they are, checked on the content
    with a letter after it. ``position`` -2: the record's turn is followed by an answer
    prefill every record shares (``last_turn`` is then ``prefilled_turn_affixes``'s split)."""
    content = dialogue[position].content
    try:
        split = last_turn(dialogue)
        if split is None:
            return None
        before, after = split
        made = meta.apply(dialogue)
        checked = made
        if stripped:
            if type(before) is not str:
                return None
            content += "Q"
            probe = list(dialogue)
            probe[position] = dialogue[position]._replace(content=content)
            checked = meta.apply(tuple(probe))
    except Exception:  # the general path gives the error, for every record
        return None
    if before is None and after is None:  # messages and no text (API messages)
        if made.text is not None or made.messages is None:
            return None
    elif type(before) is not str or type(after) is not str or checked.text != before + content + after:
        return None
    others = (made.token_ids, made.context_token_ids, made.continuation_token_ids, made.token_report)
    if any(value is not None for value in others) or made.assistant_spans is not None:
        return None
    chat = None
    if made.messages is not None:
        chat = ChatMessages.of(made.messages, dialogue[position].content, position)
        if chat is None:
            return None
    if before is None:
        return "", "", chat, True
    return before + dialogue[position].content, after, chat, False


def _either_split(
    meta: Any, last_turn: Any, dialogue: Dialogue, stripped_ok: bool = True
) -> tuple[tuple[str, str, ChatMessages | None, bool] | None, bool]:
    """``(split, stripped)``: :func:`_chat_split` of ``dialogue`` by ``last_turn_affixes``,
    or, where that gives none and ``stripped_ok``, by the format's ``stripped_turn_affixes``
    (``stripped`` true: the caller sees that each record's content is one ``strip()``
    leaves as it is)."""
    split = _chat_split(meta, last_turn, dialogue)
    stripped_of = getattr(meta, "stripped_turn_affixes", None)
    if split is not None or stripped_of is None or not stripped_ok:
        return split, False
    return _chat_split(meta, stripped_of, dialogue, stripped=True), True


def _prefilled_split(meta: Any, dialogue: Dialogue) -> tuple[tuple[str, str, ChatMessages | None, bool], bool] | None:
    """``(split, trims)``: :func:`_chat_split` of ``dialogue`` around the content of the turn
    before its last (an answer prefill every record shares), by the format's
    ``prefilled_turn_affixes`` (``trims``: for contents ``strip()`` leaves as they are);
    ``None`` where the format does not say it, or its promise does not hold here."""
    prefilled = getattr(meta, "prefilled_turn_affixes", None)
    try:
        found = None if prefilled is None else prefilled(dialogue)
    except Exception:  # the general path gives the error, for every record
        return None
    if found is None:
        return None
    before, after, trims = found
    split = _chat_split(meta, lambda _: (before, after), dialogue, stripped=bool(trims), position=-2)
    return None if split is None else (split, bool(trims))


def _selects(renderer: TaskRenderer, style: Any, affixes: Any, closed: Any) -> bool:
    """Whether the fast path can join the examples a retriever chooses per record: a meta
    template whose text is its turns' texts joined (``affixes``), or a chat format
    closing its turns alike wherever they stand (``closed_turn``) with the examples as
    turns of their own (lm-evaluation-harness's ``fewshot_as_multiturn``); a style
    joining its examples as :class:`QAStyle` does; and a pool."""
    cls = type(style)
    rules = renderer.chat
    return (
        (
            (affixes is not None and rules is None)
            or closed is not None  # (examples in one user turn: _merged_selection)
        )
        and bool(renderer.pool)
        and getattr(cls, "shot_block", None) is QAStyle.shot_block
        and getattr(cls, "_example_turns", None) is QAStyle._example_turns
    )


def _selection(renderer: TaskRenderer, style: Any, **parts: Any) -> ExampleSelection:
    """An :class:`ExampleSelection` of the task's pool and style, with the meta
    template's ``parts`` (its affixes, the text around the question, ...)."""
    return ExampleSelection(
        shot=renderer._shot,
        size=len(renderer.pool),
        example_turns=style._example_turns,
        shot_block=style.shot_block,
        delimiter=style.settings.fewshot_delimiter,
        **parts,
    )


_PROBE = 'Q\u2028"?'
"""The question of :func:`_chat_selection`'s probe: a quote and U+2028, which a line's JSON escapes."""


def _chat_selection(
    renderer: TaskRenderer,
    style: Any,
    meta: Any,
    last_turn: Any,
    closed: Any,
    given: Dialogue,
    start_turns: Dialogue,
    example: Any,
    start_turns_of: Callable[[str], Dialogue],
    per_description: bool = False,
) -> ExampleSelection | None:
    """The :class:`ExampleSelection` of a chat format that declares ``closed_turn``: the
    turns before the question each their closed text and message, the question's text
    around its content ``last_turn_affixes`` of that turn alone. ``given`` are the turns
    before the examples as the style made them, ``start_turns`` the same after the chat
    rules. Checked against ``apply`` on a dialogue of two examples first; ``None`` when
    the promise does not hold. ``per_description``: the records have descriptions of
    their own (the text before the first example read off ``apply`` is not taken)."""

    question = Turn("user", "", "")
    try:
        textless = last_turn((question,)) == (None, None)  # messages and no text (API messages)
    except Exception:  # the general path gives the error, for every record
        return None

    def texts(made: Any) -> tuple[Any, Any]:
        # a format of messages only gives no text: its texts are empty here
        if made is None or ((made[0] is None and made[1] is None) is not textless):
            raise Refused
        return ("", "") if textless else (made[0], made[1])

    def closed_affixes(turn: Turn) -> tuple[Any, Any]:
        return texts(closed(turn))

    def message(turn: Turn) -> Any:
        made = closed(turn)
        if made is None:
            raise Refused
        return made[2]

    def question_affixes(turn: Turn) -> tuple[Any, Any]:
        return texts(last_turn((turn,)))

    rules = renderer.chat

    def holds(selection: ExampleSelection, after: str, counts: tuple[int, ...]) -> bool:
        # the promise, on the task's own turns: examples and a question, as the general
        # path renders them (the pool's first record, as the question too)
        for count in counts:
            block, sep = style.shot_block([example] * count)
            dialogue = (*given, *block, Turn("user", _PROBE, sep))
            made = meta.apply(rules.apply(dialogue) if rules is not None else dialogue)
            text, before, behind = selection.prefix_and_json((0,) * count)
            own = _PROBE
            if made.text != (None if textless else text + own + after) or made.messages is None:
                return False
            if any(v is not None for v in (made.token_ids, made.context_token_ids, made.continuation_token_ids)):
                return False
            if made.token_report is not None or made.assistant_spans is not None:
                return False
            if safe_utf8(dumps_json(made.messages)) != before + json_utf8(own)[1:-1] + behind:
                return False
        return True

    try:
        if example is None:
            return None
        if rules is not None and rules.chat and not rules.fewshot_as_multiturn:
            # the examples and the question in one user turn
            if textless or per_description:
                return None
            return _merged_selection(renderer, style, meta, last_turn, start_turns, message, holds)
        try:
            after = question_affixes(question)[1]
            if type(after) is not str:
                raise Refused
            selection = _selection(
                renderer,
                style,
                affixes=closed_affixes,
                start=None,  # (the closed texts of start_turns)
                start_turns=start_turns,
                after=after,
                question_affixes=question_affixes,
                message=message,
                textless=textless,
                start_turns_of=start_turns_of,
            )
            if holds(selection, after, (2,)):
                return selection
        except Refused:
            pass
        # (with a description per record, the text before the first example is read off
        # apply for each description, and the whole is checked on the task's own start
        # only: a template that moves the system text elsewhere, such as Mistral's into
        # the last user turn, would not show it; the general path takes such tasks)
        return (
            None
            if textless or per_description
            else _anchored_selection(
                renderer, style, meta, last_turn, closed, start_turns, start_turns_of, message, holds
            )
        )
    except Exception:  # Refused, or what the general path reports for every record
        return None


def _merged_selection(
    renderer: TaskRenderer,
    style: Any,
    meta: Any,
    last_turn: Any,
    start_turns: Dialogue,
    message: Callable[[Turn], Any],
    holds: Callable[[ExampleSelection, str, tuple[int, ...]], bool],
) -> ExampleSelection | None:
    """:func:`_chat_selection` for lm-evaluation-harness's chat rules without
    ``fewshot_as_multiturn``: the examples and the question are one user turn (the rules'
    ``single_turn``: each turn's separator and content joined). The text before that
    turn's content and the start's messages are read off ``apply`` (``last_turn_affixes``
    of the start turns and a question); the examples' texts are joined as plain text
    (:class:`MergedSelection`). Checked against ``apply`` with one, two and three
    examples; ``None`` when that does not hold, or for a format that changes the content
    otherwise than ``strip()`` (``stripped_turn_affixes``: the selection's ``stripped`` set,
    a record whose content has white space at an end is the general path's)."""
    split_of, split, stripped = _start_split(meta, last_turn, start_turns)
    if split is None or type(split[0]) is not str or type(split[1]) is not str:
        return None
    after = split[1]
    start = _StartOfApply(meta, split_of, after, "", message)
    try:
        selection = MergedSelection(
            merge=single_turn,
            shot=renderer._shot,
            size=len(renderer.pool),
            example_turns=style._example_turns,
            shot_block=style.shot_block,
            delimiter=style.settings.fewshot_delimiter,
            affixes=_plain_affixes,
            start=None,
            start_turns=start_turns,
            after=after,
            question_affixes=lambda turn: (turn.sep, after),
            message=start.message,
            lead=start.lead,
        )
        selection.stripped = stripped  # (before the check: the selection's prefix reads it)
    except Refused:
        return None
    return selection if holds(selection, after, (1, 2, 3)) else None


class _StartOfApply:
    """The text before the first example and the start turns' messages, read off the
    meta template's ``apply`` (for :func:`_merged_selection`, :func:`_anchored_selection`):
    ``lead(turns)`` is the text ``split_of`` (``last_turn_affixes`` or
    ``stripped_turn_affixes``) gives before the question of ``(*turns, question)``, less
    ``opening`` (the question's closed ``before``), and the JSON of those turns' messages;
    ``message(turn)`` is a start turn's message as ``apply`` gave it, else ``message``'s
    (a turn ``closed_turn`` does not take, such as a system turn, has its message here).

    :raises Refused: from ``lead``, where the start does not stand as the task's does."""

    __slots__ = ("_meta", "_split_of", "_after", "_opening", "_message", "_known")

    def __init__(self, meta: Any, split_of: Any, after: str, opening: str, message: Callable[[Turn], Any]) -> None:
        self._meta, self._split_of, self._after = meta, split_of, after
        self._opening, self._message = opening, message
        self._known: dict[Turn, Any] = {}

    def lead(self, turns: Dialogue) -> tuple[str, bytes]:
        question = Turn("user", "", "")
        split = self._split_of((*turns, question))
        opening = self._opening
        if split is None or type(split[0]) is not str or split[1] != self._after or not split[0].endswith(opening):
            raise Refused
        messages = self._meta.apply((*turns, question)).messages
        if type(messages) is not list or len(messages) != len(turns) + 1 or messages[-1] != self._message(question):
            raise Refused
        head = b"".join([safe_utf8(dumps_json(m)) + b", " for m in messages[:-1]])
        known = self._known
        if len(known) > 4096:
            known.clear()
        try:
            known.update(zip(turns, messages))
        except TypeError:  # (a turn with extra keys: not hashable)
            raise Refused from None
        return split[0][: len(split[0]) - len(opening)], b"[" + head

    def message(self, turn: Turn) -> Any:
        found = self._known.get(turn)
        return self._message(turn) if found is None else found


def _plain_affixes(turn: Turn) -> tuple[str, str]:
    """A turn's text in one user turn's content (the chat rules' ``single_turn``)."""
    return turn.sep, ""


def _start_split(meta: Any, last_turn: Any, start_turns: Dialogue) -> tuple[Any, Any, bool]:
    """``(split_of, split, stripped)``: where the text of ``start_turns`` and an empty
    question stands around the question's content, by ``last_turn_affixes`` or, for a
    format that strips the content (``stripped``), its ``stripped_turn_affixes``."""
    dialogue = (*start_turns, Turn("user", "", ""))
    split = last_turn(dialogue)
    if split is not None:
        return last_turn, split, False
    split_of = getattr(meta, "stripped_turn_affixes", None)
    return split_of, None if split_of is None else split_of(dialogue), True


def _anchored_selection(
    renderer: TaskRenderer,
    style: Any,
    meta: Any,
    last_turn: Any,
    closed: Any,
    start_turns: Dialogue,
    start_turns_of: Callable[[str], Dialogue],
    message: Callable[[Turn], Any],
    holds: Callable[[ExampleSelection, str, tuple[int, ...]], bool],
) -> ExampleSelection | None:
    """:func:`_chat_selection` for a chat format whose text before the first example is
    not its start turns' closed texts (a model's chat template that writes a token first,
    or a default system message when there is none): that text is the text of the start
    turns and the question before the question's own (``last_turn_affixes`` of that
    dialogue, less the question's closed ``before``), their messages ``apply``'s. The
    examples' closed texts and the question's as before; checked against ``apply`` with
    one, two and three examples. For a format that strips the content
    (``stripped_turn_affixes``), the selection's ``stripped`` is set: the generated code
    then takes only the questions ``strip()`` leaves alone. ``None`` when that does not hold."""
    made = closed(Turn("user", "", ""))
    split_of, split, stripped = _start_split(meta, last_turn, start_turns)
    if made is None or split is None or type(made[0]) is not str or type(split[1]) is not str:
        return None
    opening, after = made[0], split[1]
    start = _StartOfApply(meta, split_of, after, opening, message)

    def question_affixes(turn: Turn) -> tuple[Any, Any]:
        made = closed(turn)
        if made is None:
            raise Refused
        return made[0], after

    def closed_affixes(turn: Turn) -> tuple[Any, Any]:
        made = closed(turn)
        if made is None or type(made[0]) is not str or type(made[1]) is not str:
            raise Refused
        return made[0], made[1]

    try:
        selection = _selection(
            renderer,
            style,
            affixes=closed_affixes,
            start=None,
            start_turns=start_turns,
            after=after,
            question_affixes=question_affixes,
            message=start.message,
            start_turns_of=start_turns_of,
            lead=start.lead,
        )
    except Refused:
        return None
    if not holds(selection, after, (1, 2, 3)):
        return None
    selection.stripped = stripped
    return selection
