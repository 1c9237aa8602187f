"""What :meth:`Task.render <prompt_style.Task.render>` wraps around its ways of rendering a
record: the record's own id set on each prompt (the task's ``doc_id``), and, with
``Task.render(errors=[])``, a record that cannot be rendered kept aside (its error
appended, :data:`SKIPPED` in its place) so that the split is rendered on and a caller
can report every bad record at once (:class:`~prompt_style.RecordErrors`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import PromptStyleError

if TYPE_CHECKING:
    from .render import TaskRenderer

__all__ = ["SKIPPED", "kept", "with_doc_id"]


SKIPPED: Any = object()
"""What :func:`kept` gives for a record that cannot be rendered."""


def kept(render: Callable[[Any, int], Any], errors: list[PromptStyleError]) -> Callable[[Any, int], Any]:
    """``render``, giving :data:`SKIPPED` for a record whose error it appends to ``errors``."""

    def keeping(record: Any, index: int) -> Any:
        try:
            return render(record, index)
        except PromptStyleError as exc:
            errors.append(exc)
            return SKIPPED

    return keeping


def with_doc_id(render: Callable[[Any, int], Any], renderer: TaskRenderer) -> Callable[[Any, int], Any]:
    """``render``, with the record's own id (the task's ``doc_id``) set on what it makes."""
    doc_id = renderer.doc_id

    def with_id(record: Any, index: int) -> Any:
        made = render(record, index)
        if made is not None:
            made.doc_id = doc_id(record, index)
        return made

    return with_id
