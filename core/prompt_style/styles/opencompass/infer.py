"""An OpenCompass ``infer_cfg``'s templates together: which template serves the
prompt and which the in-context examples, the examples joined as OpenCompass's
``BaseRetriever.generate_ice`` joins them, and the prompts of a record in
generation and perplexity mode (the engine of the ``opencompass`` style; one
template compiled and filled is :mod:`.template`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import StyleError
from ...types import Dialogue, Turn
from .template import ENCLOSING, RAW, Ice, PromptTemplate, TemplateConfigError

__all__ = ["InferPrompts", "join_ice"]


def join_ice(items: Sequence[Ice], separator: str, eos: str, *, dialogue_template: bool) -> Ice:
    """In-context examples joined as OpenCompass's ``generate_ice`` does.

    With a dialogue ice template (``begin``/``round``/``end``) the separator and
    end token are not used. Otherwise dialogue examples are followed each by the
    separator and, at the end, the end token (as raw turns); string examples are
    joined with the separator and the end token appended. No examples give the
    end token alone.
    """
    if dialogue_template:
        separator = eos = ""
    if not items:
        return eos
    if isinstance(items[0], tuple):
        turns: list[Turn] = []
        for item in items:
            if not isinstance(item, tuple):
                raise StyleError("in-context examples mix string and dialogue templates", key="ice_template")
            turns.extend(item)
            if separator:
                turns.append(Turn(RAW, separator, "\n", None, ENCLOSING))
        if eos:
            turns.append(Turn(RAW, eos, "\n", None, ENCLOSING))
        return tuple(turns)
    if any(not isinstance(item, str) for item in items):
        raise StyleError("in-context examples mix string and dialogue templates", key="ice_template")
    return separator.join(items) + eos


@dataclass
class InferPrompts:
    """The templates of an ``infer_cfg`` together, with OpenCompass's rules for
    which template serves what.

    ``prompt_template`` omitted means ``ice_template`` is the prompt template
    too. In generation mode the output column is replaced by
    ``gen_field_replace_token`` (the answer never leaks); in perplexity mode
    the record is filled in whole, once per label of a label-keyed template.
    """

    ice_template: PromptTemplate | None
    prompt_template: PromptTemplate | None
    output_column: str | None = None
    ice_separator: str = "\n"
    ice_eos_token: str = "\n"
    gen_field_replace_token: str = ""

    def __post_init__(self) -> None:
        if self.ice_template is None and self.prompt_template is None:
            raise TemplateConfigError(
                "the infer_cfg has neither a prompt_template nor an ice_template",
                key="prompt_template",
                hint="add prompt_template: {type: PromptTemplate, template: ...}",
            )
        self.template = self.prompt_template if self.prompt_template is not None else self.ice_template
        ice, prompt = self.ice_template, self.prompt_template
        if ice is not None and prompt is not None and (ice.kind == "messages") != (prompt.kind == "messages"):
            # OpenCompass would put a message list into a text, or drop text examples.
            raw = "ice_template" if ice.kind == "messages" else "prompt_template"
            raise TemplateConfigError(
                f"the {raw} is a RawPromptTemplate but the other template is not",
                key=raw,
                hint="use RawPromptTemplate for both (message examples go into a message list)",
            )
        self.gen_override = {self.output_column: self.gen_field_replace_token} if self.output_column else None
        """What fills the output column's placeholder in generation (``None``: nothing)."""

    @property
    def labels(self) -> tuple[Any, ...]:
        """The labels of the prompt template (perplexity candidates); empty when it
        is not label-keyed."""
        return self.template.labels if self.template.kind == "labels" else ()

    def check_examples(self, count: int) -> None:
        """Raise when ``count`` in-context examples would have nowhere to go."""
        if not count:
            return
        if self.ice_template is None:
            raise TemplateConfigError(
                f"the retriever gives {count} in-context examples but there is no ice_template to show them",
                key="ice_template",
                hint="add an ice_template, or use ZeroRetriever",
            )
        template = self.template
        which = "prompt_template" if self.prompt_template is not None else "ice_template"
        if template.ice_token is None:
            raise TemplateConfigError(
                f"the retriever gives {count} in-context examples but the {which} has no ice_token",
                key=which,
                hint="set ice_token: '</E>' and put '</E>' where the examples go",
            )
        if not template.has_ice_slot():
            raise TemplateConfigError(
                f"the {which}'s ice_token {template.ice_token!r} appears nowhere in its template, "
                f"so the {count} in-context examples have nowhere to go",
                key=f"{which}.template",
                hint=f"put {template.ice_token!r} where the examples go, e.g. begin: '{template.ice_token}'",
            )

    def example(self, entry: Mapping[str, Any]) -> Ice:
        """One in-context example from a pool record."""
        label = entry.get(self.output_column) if self.output_column else None
        return self.ice_template.ice_item(entry, label)

    def ice(self, examples: Sequence[Ice]) -> Ice:
        """The examples joined (``generate_ice``)."""
        dialogue = self.ice_template is not None and self.ice_template.is_dialogue
        return join_ice(examples, self.ice_separator, self.ice_eos_token, dialogue_template=dialogue)

    def _usable_ice(self, ice: Ice) -> Ice:
        # OpenCompass inserts examples only where the template names an ice token.
        return ice if self.template.ice_token is not None else ""

    def gen(self, entry: Mapping[str, Any], ice: Ice) -> Dialogue:
        """The generation prompt: the first label's template for a label-keyed
        one, the output column replaced by ``gen_field_replace_token``."""
        return self.template.fill(entry, self._usable_ice(ice), None, self.gen_override)

    def ppl(
        self, entry: Mapping[str, Any], ice: Ice, labels: Sequence[Any] | None = None
    ) -> list[tuple[Any, Dialogue]]:
        """The perplexity prompts: ``(label, dialogue)`` per label in the template's
        order (or per label of ``labels``, the inferencer's own list, in its order); one
        candidate, labelled with the gold answer, when the template is not label-keyed
        and no labels are given."""
        ice = self._usable_ice(ice)
        template = self.template
        if labels is not None:
            if template.kind == "labels":
                return [(label, template.fill(entry, ice, label)) for label in labels]
            prompt = template.fill(entry, ice)
            return [(label, prompt) for label in labels]
        if template.kind == "labels":
            return [(label, template.fill(entry, ice, label)) for label in template.labels]
        gold = entry.get(self.output_column) if self.output_column else None
        return [(gold, template.fill(entry, ice))]
