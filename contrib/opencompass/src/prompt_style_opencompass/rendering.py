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
    """A task's prompts as OpenCompass receives them."""

    mode: str = "gen"
    """``gen`` (``GenInferencer``) or ``ppl`` (``PPLInferencer``)."""
    targets: list[Any] = field(default_factory=list)
    """Each record's target (``RenderedPrompt.target``)."""
    prompts: list[Any] = field(default_factory=list)
    """Generation: each record's prompt (a string, or ``PromptList`` items)."""
    candidates: list[list[Any]] = field(default_factory=list)
    """Perplexity: each record's prompt per label."""
    labels: list[list[Any]] = field(default_factory=list)
    """Perplexity: each record's labels (OpenCompass scores one set of labels per
    dataset: the exporter writes one dataset per set, see :meth:`label_sets`)."""
    until: tuple[str, ...] | None = None
    """Generation: the stop sequences."""

    def __len__(self) -> int:
        return len(self.targets)

    def label_sets(self) -> list[list[Any]]:
        """The distinct label lists, in the order records first have them."""
        seen: dict[str, list[Any]] = {}
        for labels in self.labels:
            seen.setdefault(repr(labels), labels)
        return list(seen.values())

    def indices(self, labels: list[Any] | None) -> list[int]:
        """The records with these labels (all of them for ``None``)."""
        if labels is None:
            return list(range(len(self)))
        return [i for i, own in enumerate(self.labels) if own == labels]


def meta_roles(task: Any) -> MetaRoles | None:
    """The roles of the task's meta template when it is an OpenCompass meta template
    with a template (``None`` otherwise: there is nothing for OpenCompass to apply);
    :class:`Unsupported` when OpenCompass's parser would show it otherwise."""
    meta = task.renderer.meta
    if not isinstance(meta, prompt_style.OpenCompassMeta) or not isinstance(meta.template, Mapping):
        return None
    return MetaRoles.of(meta.template, meta.api)


def render_prompts(task: Any, kind: str = "text") -> Prompts:
    """Render every record of ``task`` as OpenCompass is to receive it.

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
    roles = meta_roles(task) if kind == "dialogue" else None
    if kind == "dialogue" and roles is None:
        raise Unsupported("the meta template is not an OpenCompass meta template")
    out = Prompts()
    for prompt in task.render():
        index = prompt.index

        def error(message: str, hint: str | None = None, index: int = index) -> OpenCompassExportError:
            return OpenCompassExportError(message, split=split, index=index, hint=hint)

        if prompt.candidates:
            mode = "ppl"
            labels = [c.label for c in prompt.candidates]
            if kind == "dialogue":
                shown = [prompt_items(c.dialogue, roles) for c in prompt.candidates]  # type: ignore[arg-type]
            else:
                shown = [_text(c.text, c.messages, error) for c in prompt.candidates]
        elif prompt.continuations:
            if kind == "dialogue":
                raise Unsupported("multiple choice: the continuations follow the formatted context")
            mode = "ppl"
            labels = list(range(len(prompt.continuations)))
            contexts = prompt.contexts or [prompt.text] * len(prompt.continuations)
            shown = [_text(c, prompt.messages, error) + cont for c, cont in zip(contexts, prompt.continuations)]
        else:
            mode = "gen"
            labels = None
            if kind == "dialogue":
                shown = prompt_items(prompt.dialogue, roles)  # type: ignore[arg-type]
            else:
                shown = _text(prompt.text, prompt.messages, error)
        if index == 0:
            out.mode = mode
            out.until = prompt.until if mode == "gen" else None
        elif mode != out.mode:
            raise error(f"the record is scored by {_WHAT[mode]} where record 0 is scored by {_WHAT[out.mode]}")
        if mode == "ppl":
            out.candidates.append(shown)
            out.labels.append(labels)  # type: ignore[arg-type]
        else:
            out.prompts.append(shown)
        out.targets.append(prompt.target)
    return out


_WHAT = {"gen": "generation", "ppl": "perplexity (one prompt per choice)"}


def _text(text: str | None, messages: Any, error: Any) -> str:
    if text is None:
        raise error(
            "the meta template gives API messages, not text: OpenCompass hands its API models a dialogue",
            hint="use an OpenCompass API meta template (--meta opencompass::api) without bake_meta, "
            "or a meta template that gives text",
        )
    return text
