"""What OpenCompass receives on the render route, record by record.

:func:`render_prompts` renders a loaded task with prompt-style and gives, per
record, what :class:`~prompt_style_opencompass.runtime.PromptStyleTemplate`
hands OpenCompass: in generation the prompt, in perplexity one prompt per
label. A prompt is the finished string (``kind="text"``: the task's meta
template applied by prompt-style) or the dialogue as ``PromptList`` items
(``kind="dialogue"``: OpenCompass's parser applies the model's meta template,
see :mod:`prompt_style_opencompass.dialogue`).

* An OpenCompass perplexity task (a label-keyed template): one prompt per
  label of its candidates, labels as the task has them.
* A multiple-choice task (lm-evaluation-harness's): the context followed by
  each continuation (``text + " A"``, ...), labelled ``0, 1, ...``: what
  lm-evaluation-harness scores, as strings OpenCompass's ``PPLInferencer``
  scores whole. ``PPLInferencer`` scores the same labels for every record of a
  dataset, so records with another number of choices go to another dataset.
* Anything else: one generation prompt; its stop sequences go to
  ``GenInferencer``'s ``stopping_criteria``.

The exporter runs it once to check every record and choose the inferencer;
the run-time classes run it when OpenCompass loads the dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import prompt_style

from .dialogue import MetaRoles, Unsupported, prompt_items
from .errors import OpenCompassExportError

KINDS = ("text", "dialogue")


@dataclass
class Prompts:
    """A task's prompts as OpenCompass receives them, built when asked for.

    The records are rendered once; what OpenCompass is handed is made from the
    rendered parts on demand (:meth:`prompt`, :meth:`candidate`), so that the
    bridge holds no second copy of every prompt: the context and continuations
    of a multiple-choice record are joined, and a dialogue becomes ``PromptList``
    items, when OpenCompass asks for that record and label.
    """

    mode: str = "gen"
    """``gen`` (``GenInferencer``) or ``ppl`` (``PPLInferencer``)."""
    targets: list[Any] = field(default_factory=list)
    """Each record's target (``RenderedPrompt.target``)."""
    parts: list[Any] = field(default_factory=list)
    """Per record: generation, its text or ``PromptList`` items; perplexity, its
    candidates' texts or items, or ``(contexts, continuations)`` for multiple choice."""
    labels: list[tuple[Any, ...]] = field(default_factory=list)
    """Perplexity: each record's labels (OpenCompass scores one set of labels per
    dataset: the exporter writes one dataset per set, see :meth:`label_sets`)."""
    until: tuple[str, ...] | None = None
    """Generation: the stop sequences."""

    def __len__(self) -> int:
        return len(self.targets)

    def prompt(self, index: int) -> Any:
        """Generation: what OpenCompass is handed for record ``index``."""
        return self.parts[index]

    def candidate(self, index: int, position: int) -> Any:
        """Perplexity: what OpenCompass scores for record ``index``'s ``position``-th label."""
        part = self.parts[index]
        if isinstance(part, tuple):  # multiple choice: a context and its continuation
            return part[0][position] + part[1][position]
        return part[position]

    def label_sets(self) -> list[list[Any]]:
        """The distinct label lists, in the order records first have them."""
        return [list(labels) for labels in dict.fromkeys(self.labels)]

    def indices(self, labels: list[Any] | None) -> list[int]:
        """The records with these labels (all of them for ``None``)."""
        if labels is None:
            return list(range(len(self)))
        wanted = tuple(labels)
        return [i for i, own in enumerate(self.labels) if own == wanted]


class PromptItems:
    """Dialogues as ``PromptList`` items (:func:`~.dialogue.prompt_items`), each
    turn's item made once, and the items before the round reused whole when the
    next dialogue starts with the same turns: a task's in-context examples are the
    same turns in every record, and OpenCompass's parsers never change the items."""

    def __init__(self, roles: MetaRoles) -> None:
        self.roles = roles
        self._memo: dict[Any, Any] = {}
        self._prefixes: dict[Any, Any] = {}

    def __call__(self, dialogue: Any) -> Any:
        return prompt_items(dialogue, self.roles, self._memo, self._prefixes)


def meta_roles(task: Any) -> MetaRoles | None:
    """The roles of the task's meta template when it is an OpenCompass meta template
    with a template (``None`` otherwise: there is nothing for OpenCompass to apply);
    :class:`Unsupported` when OpenCompass's parser would show it otherwise."""
    meta = task.renderer.meta
    if not isinstance(meta, prompt_style.OpenCompassMeta) or not isinstance(meta.template, Mapping):
        return None
    return MetaRoles.of(meta.template, meta.api)


def render_prompts(task: Any, kind: str = "text", dialogues: Any = None) -> Prompts:
    """Render every record of ``task`` for OpenCompass.

    :param dialogues: for ``kind="dialogue"``, the same task loaded without a meta
        template, whose records are rendered instead (OpenCompass applies the meta
        template; the dialogue does not depend on it when no chat rules apply).

    :raises OpenCompassExportError: for a record OpenCompass cannot be handed as
        prompt-style renders it, naming the record.
    :raises Unsupported: for ``kind="dialogue"``, a dialogue OpenCompass's parser
        would show otherwise (the caller falls back to ``"text"``).
    """
    if kind not in KINDS:
        raise OpenCompassExportError(f"prompts must be one of {', '.join(KINDS)}, not {kind!r}", key="prompts")
    split = task.config.test_split
    if task.multiturn:
        raise OpenCompassExportError(
            "the task sends several requests per record (a multi-turn dialogue, ChatInferencer): "
            "OpenCompass's GenInferencer and PPLInferencer send one",
            hint="run the OpenCompass config itself, or export a one-request task",
        )
    out = Prompts()
    dialogue = kind == "dialogue"
    items: Any = None
    if dialogue:
        roles = meta_roles(task)
        if roles is None:
            raise Unsupported("the meta template is not an OpenCompass meta template")
        items = PromptItems(roles)
        if dialogues is not None and task.renderer.chat is None:
            task = dialogues
    widths: dict[int, tuple[int, ...]] = {}
    parts, labels, targets = out.parts, out.labels, out.targets
    mode = None
    with_contexts = False
    for prompt in task.render():
        # Only the fields every record has are read for every record: the compiled fast
        # path's prompts look the others up (candidates, contexts, until) the slow way.
        continuations = prompt.continuations
        if mode is None:
            with_contexts = prompt.contexts is not None  # a task's style gives them for all records or none
        if continuations:
            if dialogue:
                raise Unsupported("multiple choice: the continuations follow the formatted context")
            here = "ppl"
            width = len(continuations)
            labels.append(widths.get(width) or widths.setdefault(width, tuple(range(width))))
            text = prompt.text
            if text is None:
                _no_text(split, prompt.index)
            part: Any = (prompt.contexts if with_contexts else (text,) * width, continuations)
        else:
            candidates = prompt.candidates
            if candidates:
                here = "ppl"
                labels.append(tuple(c.label for c in candidates))
                if dialogue:
                    part = [items(c.dialogue) for c in candidates]
                else:
                    part = [c.text if c.text is not None else _no_text(split, prompt.index) for c in candidates]
            else:
                here = "gen"
                if dialogue:
                    part = items(prompt.dialogue)
                else:
                    part = prompt.text if prompt.text is not None else _no_text(split, prompt.index)
        if mode is None:
            mode = out.mode = here
            out.until = prompt.until if here == "gen" else None
        elif here != mode:
            raise OpenCompassExportError(
                f"the record is scored by {_WHAT[here]} where record 0 is scored by {_WHAT[mode]}",
                split=split,
                index=prompt.index,
            )
        parts.append(part)
        targets.append(prompt.target)
    return out


_WHAT = {"gen": "generation", "ppl": "perplexity (one prompt per choice)"}


def _no_text(split: str, index: int) -> Any:
    raise OpenCompassExportError(
        "the meta template gives API messages, not text: OpenCompass hands its API models a dialogue",
        split=split,
        index=index,
        hint="use an OpenCompass API meta template (--meta opencompass::api) without bake_meta, "
        "or a meta template that gives text",
    )
