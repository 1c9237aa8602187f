"""A task's evaluated split rendered on past the records that cannot be rendered
(``Task.render(errors=[])``): each such record's error collected, the others rendered
as :meth:`Task.render <prompt_style.Task.render>` renders them, so that a caller can
report every bad record at once (:class:`~prompt_style.RecordErrors`).

Beneath :mod:`prompt_style.loading`: the task comes in as an argument.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .conversation import reply_callback
from .data import map_records, open_records
from .errors import DataError, PromptStyleError, RenderError

if TYPE_CHECKING:
    from .loading import Task
    from .render import RenderedPrompt, TaskRenderer

__all__ = ["render_past_errors", "with_doc_id"]


_SKIPPED: Any = object()


def render_past_errors(
    task: Task, limit: int | None, replies: Any, errors: list[PromptStyleError]
) -> Iterator[RenderedPrompt]:
    """:meth:`Task.render` with ``errors``: each record's render (or conversation) whose
    error goes to ``errors``, the others' prompts in order."""
    renderer = task.renderer
    split = task.config.test_split
    try:
        source = task.source()
        if renderer.choice_order is None and not task.multiturn:
            fast = renderer.fast_render()
            general = renderer.render if fast is None else renderer._render
            if fast is not None:
                many = renderer._fast_path.many  # the fast path's own loop (it never raises: general does)
                if renderer._doc_id is not None:
                    fast, general, many = with_doc_id(fast, renderer), with_doc_id(general, renderer), None
                fast, general = _kept(fast, errors), _kept(general, errors)
                rendered = map_records(source, split, fast, general, many)
                if limit is not None:
                    rendered = itertools.islice(rendered, limit)
                for made in rendered:
                    if made is not _SKIPPED:
                        yield made
                return
        records = open_records(source, split)
        if limit is not None:
            records = itertools.islice(records, limit)
        if renderer.choice_order is None and not task.multiturn:
            for index, record in enumerate(records):
                try:
                    made = general(record, index)
                except PromptStyleError as exc:
                    errors.append(exc)
                    continue
                yield made
            return
        if task.multiturn and renderer.choice_order is not None:
            raise RenderError("a choice order applies to single-request tasks, not multi-turn dialogues")
        reply = reply_callback(replies) if task.multiturn else None
        for index, record in enumerate(records):
            try:  # a record's requests all at once: none of a record that stops halfway
                made = (
                    list(renderer.converse(record, index, reply))
                    if task.multiturn
                    else renderer.render_ordered(record, index)
                )
            except PromptStyleError as exc:
                errors.append(exc)
                continue
            yield from made
    except DataError as exc:
        raise exc.locate(key=f"data.{split}") from None


def _kept(render: Callable[[Any, int], Any], errors: list[PromptStyleError]) -> Callable[[Any, int], Any]:
    """``render``, giving :data:`_SKIPPED` for a record whose error it appends to ``errors``."""

    def kept(record: Any, index: int) -> Any:
        try:
            return render(record, index)
        except PromptStyleError as exc:
            errors.append(exc)
            return _SKIPPED

    return kept


def with_doc_id(render: Callable[[Any, int], Any], renderer: TaskRenderer) -> Callable[[Any, int], Any]:
    """``render``, with the record's own id (the task's ``doc_id``) set on what it makes."""
    doc_id = renderer.doc_id

    def with_id(record: Any, index: int) -> Any:
        made = render(record, index)
        if made is not None:
            made.doc_id = doc_id(record, index)
        return made

    return with_id
