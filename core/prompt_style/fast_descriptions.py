"""The fast path of a task whose description reads the record, compiled once per description.

Every MMLU subject in one file (``about {{ subject.replace('_', ' ') }}``) with the
same examples for every record: for plain text the compiled fast path joins each
record's description itself (``FastPath.lines`` writes the text before the question
once per description). For a chat format (``chatml``, API ``messages``) or
lm-evaluation-harness's chat rules, the description is a system turn whose place in
the output the fast path works out once per task, which it cannot do for a
description that varies. So here the task's fast path is compiled once per
description, as if that description were the task's own, and each record goes to the
one of its description: the same prompts, without a compilation per record.

At most :data:`MAX_DESCRIPTIONS` descriptions get a fast path; records with another
description, and every record once the first descriptions all fail to compile (the
task is not in the fast path's common case for other reasons), take the general path.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .fields.extractors import Literal

__all__ = ["MAX_DESCRIPTIONS", "per_description"]

MAX_DESCRIPTIONS = 256
"""Descriptions compiled per task (a compilation costs about as much as rendering
ten records on the general path)."""

_GIVE_UP = 2  # descriptions that fail to compile, none having compiled, before the task gives up
_MISSING: Any = object()


def per_description(renderer: Any, compile_one: Callable[[Any], Any]) -> tuple[Any, Any, Any] | None:
    """``(fast, many, lines)`` for ``renderer``'s task (a ``TaskRenderer``) when its description
    reads the record and its examples are shared (the renderer's own fast path has none
    for it), from ``compile_one(variant)`` of the renderer with each description made
    constant; ``None`` for any other task. ``fast(record, index)`` gives the prompt or
    ``None`` (the general path's record); ``many(records, general, start)`` renders
    records in order, handing ``general(record, index)`` the others; ``lines`` is
    ``FastPath.lines_emitting``: their output lines, each record's by its description's
    fast path."""
    describe = renderer._description
    if describe is None or getattr(describe, "kind", None) in ("literal", "constant"):
        return None
    if getattr(describe, "pure", False) is not True:  # user code: called once a record, by the general path
        return None
    if renderer._shared_ids is None:  # examples chosen per record: a path of their own
        return None
    # one compilation first, with a description standing in: a task that would not
    # compile with a constant description is not in the fast path's common case at all
    if _compiled(renderer, "description", compile_one) is None:
        return None
    paths: dict[str, Any] = {}
    state = {"failed": 0, "compiled": 0}

    def path_for(description: str) -> Any:
        if len(paths) >= MAX_DESCRIPTIONS:
            return None
        made = paths[description] = _compiled(renderer, description, compile_one)
        if made is None:
            state["failed"] += 1
        else:
            state["compiled"] += 1
        return made

    def path_of(record: Mapping[str, Any]) -> Any:
        """The fast path of the record's description (``None``: the general path's record)."""
        if state["failed"] >= _GIVE_UP and not state["compiled"]:
            return None
        try:
            value = describe(record)
        except Exception:  # the general path gives the error
            return None
        description = "" if value is None else str(value)
        path = paths.get(description, _MISSING)
        return path_for(description) if path is _MISSING else path

    def fast(record: Mapping[str, Any], index: int) -> Any:
        path = path_of(record)
        return None if path is None else path.render(record, index)

    def many(records: Any, general: Callable[[Any, int], Any], start: int = 0) -> Iterator[Any]:
        index = start - 1
        for record in records:
            index += 1
            made = fast(record, index)
            yield made if made is not None else general(record, index)

    def lines(
        records: Any, general: Callable[[Any, int], Any], start: int = 0, *, emit_for: Any, line_of: Any
    ) -> Iterator[Any]:
        # each record's line by its description's fast path (FastPath.lines), with that
        # path's emit (emit_for: one per DeferredDialogue, made once)
        index = start - 1
        for record in records:
            index += 1
            path = path_of(record)
            if path is None or path.lines is None or path.deferred is None:
                yield general(record, index)
                continue
            emit = emit_for(path.deferred)
            if emit is None:
                made = path.render(record, index)
                yield general(record, index) if made is None else line_of(made)
                continue
            yield from path.lines((record,), general, index, emit=emit, line_of=line_of)

    return fast, many, lines


def _compiled(renderer: Any, description: str, compile_one: Callable[[Any], Any]) -> Any:
    """``compile_one`` of ``renderer`` with ``description`` as its constant description."""
    variant = copy.copy(renderer)  # (set up afresh from its public state: no caches shared)
    variant._description = Literal(description, "description")
    try:
        return compile_one(variant)
    except Exception:  # the general path says what is wrong, per record
        return None
