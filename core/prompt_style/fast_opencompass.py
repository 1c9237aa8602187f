"""The fast path's shapes of OpenCompass's dataset configs (the ``opencompass`` style):
the generation dialogue (:func:`dialogue_round`) and the perplexity candidates
(:func:`perplexity_candidates`). Each gives what :func:`prompt_style.fastpath._shaped`
makes a fast path of: ``(take, prompt, line_parts, code, deferred)``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .fast_chat import _chat_split, _prefilled_split
from .fast_fields import _getter, _pure
from .fast_prompts import MARKER, DeferredDialogue, shaped_prompt
from .fields.jinja_compiler import SLOW
from .fields.multiple_input import ContextChoice
from .render import Candidate, RenderedPrompt, dialogue_to_json
from .safe.json_lines import dumps_json, json_utf8, safe_utf8
from .types import Turn

if TYPE_CHECKING:
    from .render import TaskRenderer

__all__ = ["dialogue_round", "perplexity_candidates"]

Shape = tuple[Callable[..., Any], Callable[..., RenderedPrompt], Callable[..., tuple[Any, ...]], str, DeferredDialogue]
"""``(take, prompt, line_parts, code, deferred)``, as ``_shaped`` takes them."""


def _fields(renderer: TaskRenderer) -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    """The getters of the record's text and target, when the task reads no other field
    and no user code (the shapes here fill the templates from the record itself)."""
    text_of, target_of = renderer._text, renderer._target
    if text_of is None or target_of is None or renderer._choice is not None or renderer._prefix is not None:
        return None
    if renderer._description is not None or renderer.chat is not None or renderer._meta_scored is not None:
        return None
    if not (_pure(text_of) and _pure(target_of)):
        return None
    return _getter(text_of), _getter(target_of)


def _read(record: Any, text_get: Any, target_get: Any, null_ok: bool) -> tuple[bool, Any]:
    """``(ok, target)``: the record's text and target read as the general path reads
    them, ``ok`` false where it gives an error or another shape (the general path's)."""
    question = text_get(record)
    target = target_get(record)
    if question is None or question is SLOW or type(question) is ContextChoice:
        return False, None
    if not (type(target) is int or type(target) is str or (target is None and null_ok)):
        return False, None
    return True, target


def dialogue_round(renderer: TaskRenderer, fast_round: Callable[..., Any]) -> Shape | None:
    """The fast path of a style that says its generation dialogue is a head every record
    shares, then one turn whose content a function of the record gives
    (``fast_round(shots)``: OpenCompass's dialogue templates, in generation mode): the
    text is the head's, the turn's separator and that content (a plain-text meta
    template); the line holds ``mode`` and the dialogue, its head's JSON made once.
    A record whose fields the general path reads with an error, or whose content is
    empty, is the general path's."""
    getters = _fields(renderer)
    if getters is None:
        return None
    meta = renderer.meta
    affixes = getattr(meta, "affixes", None)
    # a meta template that says how its text stands around the last turn's content
    # (an OpenCompass meta template, ChatML, a model's own template)
    last_turn = getattr(meta, "last_turn_affixes", None)
    if affixes is None and last_turn is None:
        return None
    try:
        shots = renderer.shared_shots()
        offered = None if shots is None else fast_round(shots)
        if offered is None:
            return None
        head, text, override, last, lead, answer = offered
        pieces = None if affixes is None else [affixes(turn) for turn in (*head, last, *answer)]
    except Exception:  # the general path gives the error, for every record
        return None
    if len(answer) > 1:
        return None
    chat, textless = None, False
    if pieces is not None and (
        all(type(b) is str and type(a) is str and not a for b, a in pieces)
        and all(type(turn.content) is str and not turn.extra for turn in (*head, *answer))
    ):
        joined = [b + turn.content for turn, (b, _) in zip((*head, last, *answer), pieces)]
        head_text = "".join(joined[: len(head)]) + pieces[len(head)][0] + lead
        tail_text = "".join(joined[len(head) + 1 :])
    elif last_turn is not None:
        if answer:  # (the answer's turn after the record's: the meta template's split of the turn before it)
            found = _prefilled_split(meta, (*head, last._replace(content=lead), *answer))
            split = None if found is None or found[1] else found[0]
        else:
            split = _chat_split(meta, last_turn, (*head, last._replace(content=lead)))
        if split is None:
            return None
        head_text, tail_text, chat, textless = split  # (textless: API messages, no text)
    else:
        return None
    deferred = DeferredDialogue(
        head,
        len(head_text),
        len(tail_text),
        last.sep,
        renderer.plugins,
        renderer.until,
        renderer._shared_ids,
        messages=chat,
        head=head_text,
        tail=tail_text,
        textless=textless,
        lead=lead,
        extras=True,
        last=last,
        prefill=answer[0] if answer else None,
    )
    # the dialogue's JSON (dialogue_to_json's) around the record's content
    probe = safe_utf8(dumps_json(dialogue_to_json((*head, last._replace(content=lead + MARKER), *answer))))
    around = probe.split(json_utf8(MARKER)[1:-1])
    if len(around) != 2:
        return None
    before, after = b', "mode": "gen", "dialogue": ' + around[0], around[1]
    text_get, target_get = getters
    fill, null_ok = text.fill, renderer.allow_null_target

    def own(record: Mapping[str, Any]) -> tuple[str, Any] | None:
        try:
            if type(record) is not dict:
                return None
            ok, target = _read(record, text_get, target_get, null_ok)
            content = fill(record, override)
        except Exception:
            return None
        if not ok:
            return None
        return (content, target) if content else None

    def prompt(index: int, content: str, target: Any) -> RenderedPrompt:
        made = shaped_prompt(deferred, index, content, target)
        made.mode = "gen"
        return made

    def line_parts(content: str, target: Any) -> tuple[str, Any, Any, bytes]:
        return content, (), target, before + json_utf8(content)[1:-1] + after

    return own, prompt, line_parts, "dialogue_round", deferred


_FIELD = "\x00prompt-style field {}\x00"
"""A mark standing for the value of one field in a candidate's text and dialogue."""
_FIELD_TEXT = re.compile("\x00prompt-style field (\\d+)\x00")
_FIELD_JSON = re.compile(rb"\\u0000prompt-style field (\d+)\\u0000")


def perplexity_candidates(renderer: TaskRenderer, fast_candidates: Callable[..., Any]) -> Shape | None:
    """The fast path of a style that says each record's perplexity candidates are turns
    every record shares and turns whose content is text around the record's fields
    (``fast_candidates(shots)``: OpenCompass's ``PPLInferencer``, one candidate per
    label), under a plain-text meta template (``affixes``): each candidate's text and
    the JSON of the candidates are pieces made once, around the fields' values. A record
    missing a field (OpenCompass leaves its placeholder as written), whose field turn
    would be empty, or whose fields the general path reads with an error, is the general
    path's."""
    getters = _fields(renderer)
    meta = renderer.meta
    affixes = getattr(meta, "affixes", None)
    if getters is None or affixes is None or renderer._chat_apply is not None:
        return None
    try:
        shots = renderer.shared_shots()
        offered = None if shots is None else fast_candidates(shots)
        if not offered:
            return None
        full = renderer._meta_full
        names: list[str] = []  # the field of each mark, in the order the marks are made
        labels, probes, texts = [], [], []
        plans = []  # per candidate: its turns (a Turn, or a FieldTurn filled per record)
        for label, turns in offered:
            probe = []
            for turn in turns:
                if type(turn) is Turn:
                    probe.append(turn)
                    continue
                marked = turn.parts[0] + "".join(
                    _FIELD.format(len(names) + i) + part for i, part in enumerate(turn.parts[1:])
                )
                names.extend(turn.names)
                probe.append(turn.turn._replace(content=marked))
            pieces = [affixes(turn) for turn in probe]
            made = full(tuple(probe))
            text = "".join([b + turn.content + a for turn, (b, a) in zip(probe, pieces)])
            if made.text != text or made.messages is not None or made.token_ids is not None:
                return None
            labels.append(label)
            probes.append(tuple(probe))
            texts.append(text)
            plans.append(turns)
        probed = [Candidate(label, text, None, probe) for label, text, probe in zip(labels, texts, probes)]
        json_probe = safe_utf8(dumps_json([candidate.to_json() for candidate in probed]))
    except Exception:  # the general path gives the error, for every record
        return None
    json_split = _FIELD_JSON.split(json_probe)
    text_splits = [_FIELD_TEXT.split(text) for text in texts]
    # every mark where it was put, and no other text that reads like one
    if any(len(split) != 2 * text.count("\x00prompt-style field ") + 1 for split, text in zip(text_splits, texts)):
        return None
    if len(json_split) // 2 != sum(len(split) // 2 for split in text_splits) + len(names):
        return None
    json_pieces, json_slots = json_split[0::2], [names[int(i)] for i in json_split[1::2]]
    text_plans = [(split[0::2], [names[int(i)] for i in split[1::2]]) for split in text_splits]
    fields = tuple(dict.fromkeys(names))  # each field once
    for piece in json_pieces:
        if b"\\u0000" in piece:
            return None
    text_get, target_get = getters
    null_ok, ids, plugins, until = renderer.allow_null_target, renderer._shared_ids, renderer.plugins, renderer.until
    # the fields of each field turn that has no text of its own: empty when they all are
    empty_checks = tuple(t.names for turns in plans for t in turns if type(t) is not Turn and not any(t.parts))

    def take(record: Any) -> tuple[Any, Any] | None:
        try:
            if type(record) is not dict:
                return None
            ok, target = _read(record, text_get, target_get, null_ok)
            if not ok:
                return None
            values = {}
            for name in fields:
                if name not in record:
                    return None  # (its placeholder stays as written: the general path's)
                value = record[name]
                values[name] = value if type(value) is str else str(value)
        except Exception:
            return None
        for checked in empty_checks:
            if not any(values[name] for name in checked):
                return None
        return values, target

    def filled(parts: Sequence[str], slots: Sequence[str], values: dict[str, str]) -> str:
        # parts[0], then each slot's value and the part after it
        return parts[0] + "".join([values[n] + p for n, p in zip(slots, parts[1:])])

    def prompt(index: int, values: dict[str, str], target: Any) -> RenderedPrompt:
        candidates = []
        for label, turns, (parts, slots) in zip(labels, plans, text_plans):
            dialogue = tuple(
                [t if type(t) is Turn else t.turn._replace(content=filled(t.parts, t.names, values)) for t in turns]
            )
            candidates.append(Candidate(label, filled(parts, slots, values), None, dialogue))
        return RenderedPrompt(
            index,
            None,
            None,
            (),
            target,
            plugins,
            (),
            None,
            None,
            until,
            candidates=candidates,
            mode="ppl",
            fewshot_indices=ids,
        )

    first, rest = json_pieces[0], json_pieces[1:]
    opening = b', "mode": "ppl", "candidates": ' + first

    def line_parts(values: dict[str, str], target: Any) -> tuple[str, Any, Any, bytes]:
        encoded = {name: json_utf8(value)[1:-1] for name, value in values.items()}
        more = opening + b"".join([encoded[n] + p for n, p in zip(json_slots, rest)])
        return "", (), target, more

    deferred = DeferredDialogue((), 0, 0, "", plugins, until, ids, head="", tail="", textless=True, extras=True)
    return take, prompt, line_parts, "perplexity_candidates", deferred
