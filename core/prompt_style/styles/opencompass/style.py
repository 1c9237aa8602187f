"""The ``opencompass`` style: an OpenCompass ``infer_cfg`` (``ice_template``,
``prompt_template``, the retriever's ``ice_separator`` and ``ice_eos_token``)
turned into dialogues, in generation or perplexity mode.

The OpenCompass task-file reader (``prompt_style.formats.opencompass``) writes
these options from a dataset config; a task file may also name the style
directly (``template: {template_type: opencompass, prompt_template: ...}``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import FieldError, OptionError, PromptStyleError, StyleError, cut
from ...meta.roles import api_role
from ...options import check_options
from ...types import Dialogue, FormattedPrompt, Sample, StyleSettings, Turn
from .chat import CHAT_INFER_MODES, ChatBuilder
from .infer import InferPrompts
from .template import RAW, Ice, PromptTemplate, compile_template

__all__ = ["OpenCompassStyle", "FieldTurn", "opencompass_style", "MODES", "INFERENCERS"]

MODES = ("gen", "ppl")
"""Generation (``GenInferencer``) and perplexity (``PPLInferencer``)."""

INFERENCERS: dict[str, str] = {"chat": "gen", "ll": "ppl", "ppl_only": "ppl"}
"""The inferencers with prompts of their own, and the mode each parses in:
``chat`` (``ChatInferencer``), ``ll`` (``LLInferencer``), ``ppl_only``
(``PPLOnlyInferencer``, ``InferencePPLOnlyInferencer``)."""


@dataclass
class OpenCompassStyle:
    """Formats records with an OpenCompass ``infer_cfg``'s templates.

    In ``gen`` mode a record gives one dialogue (the output column masked); in
    ``ppl`` mode it gives ``candidates``: one ``(label, dialogue)`` per label of
    a label-keyed template, in the template's order, or one with the gold
    answer filled in.
    """

    ice_template: Mapping[str, Any] | None = None
    """The ``ice_template`` config: ``{type, template, ice_token, sep_token}``."""
    prompt_template: Mapping[str, Any] | None = None
    """The ``prompt_template`` config; omitted, ``ice_template`` serves as both."""
    output_column: str | None = None
    """``reader_cfg.output_column``: masked in generation, the label of examples."""
    input_columns: list[str] | str | None = None
    """``reader_cfg.input_columns`` (informative: OpenCompass fills every field)."""
    mode: str = "gen"
    """``gen`` or ``ppl`` (the task's inferencer decides; ``--mode`` overrides)."""
    ice_separator: str = "\n"
    """The retriever's ``ice_separator``: between examples of non-dialogue templates."""
    ice_eos_token: str = "\n"
    """The retriever's ``ice_eos_token``: after the examples of non-dialogue templates."""
    gen_field_replace_token: str = ""
    """The inferencer's ``gen_field_replace_token``: what the output column reads in generation."""
    infer_mode: str | None = None
    """``MultiTurnGenInferencer``'s and ``ChatInferencer``'s ``infer_mode`` (``every``,
    ``every_with_gt``, ``last``), or ``multiround`` (``GenInferencer(multiround=True)`` on a
    ``RawPromptTemplate``): each record is cut into one request per model reply
    (:mod:`prompt_style.conversation`); ``None``: one request per record."""
    inferencer: str | None = None
    """An inferencer whose prompts are not ``GenInferencer``'s or ``PPLInferencer``'s
    (:data:`INFERENCERS`): ``chat`` builds the record's chat (``ChatInferencer``), ``ll``
    gives every label's prompt with the record's ``cont`` (``LLInferencer``), ``ppl_only``
    the generation prompt scored whole (``PPLOnlyInferencer``). An explicit mode
    (``--mode``) replaces it with ``GenInferencer`` or ``PPLInferencer``."""
    labels: list[Any] | None = None
    """``PPLInferencer``'s and ``LLInferencer``'s ``labels``: the labels to score, in this
    order, instead of the label-keyed template's."""
    settings: StyleSettings = field(default_factory=StyleSettings, repr=False)

    modes = MODES  # a class attribute: this style has generation and perplexity modes

    def __post_init__(self) -> None:
        if self.settings.mode:
            # An explicit mode is GenInferencer's or PPLInferencer's prompts, whatever the config's inferencer.
            if self.inferencer == "chat":
                self.infer_mode = None
            self.inferencer = None
            if self.settings.mode == "gen":
                self.labels = None  # the perplexity inferencer's labels: GenInferencer has none
        mode = self.settings.mode or self.mode
        if mode not in MODES:
            raise OptionError(f"mode must be gen or ppl, not {mode!r}", key="mode")
        self.mode = mode
        self._check_inferencer(mode)
        if self.infer_mode is not None and self.inferencer is None:
            from .multiturn import INFER_MODES
            from .raw_prompt import MULTIROUND

            modes = (*INFER_MODES, MULTIROUND)
            if self.infer_mode not in modes:
                raise OptionError(
                    f"infer_mode must be one of {', '.join(modes)}, not {self.infer_mode!r}", key="infer_mode"
                )
            if mode != "gen":
                raise OptionError("multi-turn requests (infer_mode) have no perplexity mode", key="mode")
        self.prompts = InferPrompts(
            ice_template=compile_template(self.ice_template, "ice_template"),
            prompt_template=compile_template(self.prompt_template, "prompt_template"),
            output_column=self.output_column,
            ice_separator=self.ice_separator,
            ice_eos_token=self.ice_eos_token,
            gen_field_replace_token=self.gen_field_replace_token,
        )
        self._check_messages_template(mode)
        self._chat = None
        if self.inferencer == "chat":
            self._chat = ChatBuilder(self.prompts.prompt_template, self._input_columns(), self.output_column)
        self._reset()

    def _input_columns(self) -> list[str] | None:
        columns = self.input_columns
        return columns.split() if isinstance(columns, str) else columns

    def _check_inferencer(self, mode: str) -> None:
        inferencer = self.inferencer
        if inferencer is None:
            if self.labels is not None and mode != "ppl":
                raise OptionError("labels are the perplexity candidates: they need mode ppl", key="labels")
            return
        if inferencer not in INFERENCERS:
            raise OptionError(
                f"inferencer must be one of {', '.join(INFERENCERS)}, not {inferencer!r}", key="inferencer"
            )
        if INFERENCERS[inferencer] != mode:
            raise OptionError(f"inferencer {inferencer!r} parses in mode {INFERENCERS[inferencer]}", key="mode")
        if inferencer == "chat":
            self.infer_mode = self.infer_mode or "last"
            if self.infer_mode not in CHAT_INFER_MODES:
                raise OptionError(
                    f"ChatInferencer's infer_mode must be one of {', '.join(CHAT_INFER_MODES)}, "
                    f"not {self.infer_mode!r}",
                    key="infer_mode",
                )
        elif self.infer_mode is not None:
            raise OptionError(f"inferencer {inferencer!r} has no infer_mode", key="infer_mode")
        if self.labels is not None and inferencer != "ll":
            raise OptionError(f"inferencer {inferencer!r} takes no labels", key="labels")

    def _check_messages_template(self, mode: str) -> None:
        """A RawPromptTemplate has generation prompts only; multiround needs one."""
        raw = self.prompts.template.kind == "messages"
        if raw and mode == "ppl":
            # OpenCompass's PPLInferencer fails on it (no label-keyed template; its label
            # prompt ignores the label and the examples).
            raise OptionError(
                "a RawPromptTemplate has no perplexity mode: OpenCompass's PPLInferencer cannot score "
                "its messages (they do not depend on the label)",
                key="mode",
                hint="use GenInferencer (--mode gen), or a label-keyed PromptTemplate for perplexity",
            )
        if self.infer_mode == "multiround" and not raw:
            raise OptionError(
                "multiround generation fills the empty assistant messages of a RawPromptTemplate; "
                "this prompt template is not one",
                key="infer_mode",
                hint="use a RawPromptTemplate, or MultiTurnPromptTemplate with MultiTurnGenInferencer",
            )

    def _reset(self) -> None:
        self._examples: dict[Sample, Ice] = {}
        self._last: tuple[tuple[Sample, ...], Ice] | None = None
        self._checked: set[int] = set()

    def ice(self, shots: Sequence[Sample]) -> Ice:
        """The in-context examples of a record, joined (cached per example, and the
        last combination reused: a fixed retriever gives the same every time)."""
        if not shots:
            return self.prompts.ice(())
        key = tuple(shots)
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        count = len(key)
        if count not in self._checked:
            self.prompts.check_examples(count)
            self._checked.add(count)
        examples = self._examples
        items = []
        for shot in key:
            item = examples.get(shot)
            if item is None:
                try:
                    item = examples[shot] = self.prompts.example(shot.record)
                except PromptStyleError as exc:
                    # Say which example: the record named in the error is the evaluated one.
                    exc.message = f"in-context example (record {shot.index} of the pool): {exc.message}"
                    raise
            items.append(item)
        ice = self.prompts.ice(items)
        self._last = (key, ice)
        return ice

    def format(self, sample: Sample, shots: Sequence[Sample]) -> FormattedPrompt:
        record = sample.record
        if self._chat is not None:
            # ChatInferencer: the record's chat, no in-context examples; one target per reply.
            if shots:
                raise StyleError(
                    f"OpenCompass's ChatInferencer sends no in-context examples, so {len(shots)} cannot be shown",
                    key="num_fewshot",
                    hint="render without --shots (or with --mode gen for GenInferencer's prompts with examples)",
                )
            turns, golds = self._chat.build(record)
            return FormattedPrompt(turns, (), golds, mode="gen", infer_mode=self.infer_mode)
        ice = self.ice(shots)
        if self.inferencer == "ppl_only":
            # PPLOnlyInferencer: the generation prompt, scored whole (parsed in perplexity mode).
            return FormattedPrompt(self.prompts.gen(record, ice), (), sample.target, mode="ppl")
        if self.mode == "gen":
            dialogue = self.prompts.gen(record, ice)
            if self.settings.chat and self.infer_mode is None:
                dialogue = stop_at_answer(dialogue)
            return FormattedPrompt(dialogue, (), sample.target, mode="gen", infer_mode=self.infer_mode)
        candidates = tuple(self.prompts.ppl(record, ice, self.labels))
        continuations = (self._cont(record),) if self.inferencer == "ll" else ()
        return FormattedPrompt((), continuations, sample.target, candidates=candidates, mode="ppl")

    def fast_round(
        self, shots: Sequence[Sample]
    ) -> tuple[Dialogue, Any, Mapping[str, Any] | None, Turn, str, Dialogue] | None:
        """For the renderer's fast path: ``(head, text, override, turn, lead, after)`` when
        every record's generation dialogue is ``head`` (the same for every record: no field
        in it, the in-context examples of ``shots``), then ``turn`` with the content ``lead
        + text.fill(record, override)`` (OpenCompass's filling of the round's first item,
        or of a string template: ``lead`` its text before the fields, the in-context
        examples where its ice token stands), then ``after``: the round's second item, the
        answer's, whose fields are all masked in generation (an ``ice_template`` serving
        as the prompt: ``BOT: '{answer}'``), or nothing. A record whose filled text is
        empty is not of that shape (its item then has no separator, or is left out).
        ``None`` for any other template (labels, a round of more items, an ``end``
        section, fields in ``begin`` or before a string's ice token), mode or inferencer."""
        if self.mode != "gen" or self._chat is not None or self.infer_mode is not None:
            return None
        prompts = self.prompts
        template = prompts.template
        if type(template) is PromptTemplate and template.kind == "string":
            return self._fast_string(shots)
        if type(template) is not PromptTemplate or template.kind != "dialogue":
            return None
        sections = template.dialogue
        rounds = sections.get("round") or ()
        if not 1 <= len(rounds) <= 2 or sections.get("end"):
            return None
        item = rounds[0]
        if item.role == RAW or len(item.pieces) != 1:
            return None
        if any(piece.fields for begin in sections.get("begin") or () for piece in begin.pieces):
            return None
        text, override = item.pieces[0], prompts.gen_override
        # a second item (the answer's: {answer}, masked in generation) the same for every record
        answer = rounds[1] if len(rounds) == 2 else None
        if answer is not None and (
            answer.role == RAW
            or len(answer.pieces) != 1
            or not all(name in (override or {}) for name in answer.pieces[0].fields)
        ):
            return None
        try:
            dialogue = prompts.gen({}, self.ice(shots))
            content = text.fill({}, override)
        except PromptStyleError:
            return None  # (the general path says what, for every record)
        after: Dialogue = ()
        if answer is not None and dialogue:
            after = dialogue[-1:]
            if after[0].role != answer.role or after[0].content != answer.pieces[0].fill({}, override):
                return None
            dialogue = dialogue[:-1]
        if (
            not dialogue
            or not content
            or dialogue[-1] != Turn(item.role, content, dialogue[-1].sep, item.fallback_role)
        ):
            return None
        if self.settings.chat:
            # a chat format's dialogue stops at the answer (stop_at_answer): with the answer's
            # item, that cut is the shape of one item; the record's own turn must stay
            whole = (*dialogue, *after)
            cut = stop_at_answer(whole)
            if cut == dialogue:
                after = ()
            elif cut != whole:
                return None
        return dialogue[:-1], text, override, dialogue[-1], "", after

    def _fast_string(self, shots: Sequence[Sample]) -> tuple[Dialogue, Any, Any, Turn, str, Dialogue] | None:
        """:meth:`fast_round` of a string template: one raw item, its text before the
        ice token (no field in it) and the examples the ``lead``, what follows it filled."""
        prompts = self.prompts
        pieces = prompts.template.string
        if not pieces or len(pieces) > 2 or any(piece.fields for piece in pieces[:-1]):
            return None
        text, override = pieces[-1], prompts.gen_override
        try:
            dialogue = prompts.gen({}, self.ice(shots))
            content = text.fill({}, override)
        except PromptStyleError:
            return None  # (the general path says what, for every record)
        if len(dialogue) != 1 or not content or type(dialogue[0].content) is not str:
            return None
        whole = dialogue[0].content
        lead = whole[: len(whole) - len(content)]
        if dialogue[0] != Turn(RAW, lead + content, "", None, "round"):
            return None
        return (), text, override, dialogue[0], lead, ()

    def fast_candidates(self, shots: Sequence[Sample]) -> tuple[tuple[Any, tuple[Any, ...]], ...] | None:
        """For the renderer's fast path: every record's perplexity candidates
        (``PPLInferencer``'s prompts, a label-keyed template or the inferencer's labels),
        as ``((label, turns), ...)``. Each turn is a :class:`Turn` every record shares
        (the in-context examples of ``shots``, text without fields) or a
        :class:`FieldTurn`: the turn with the content ``parts[0] + str(record[names[0]]) +
        parts[1] + ...``, as OpenCompass fills it when the record holds every name.

        Found by filling the templates once with a record whose every field is a mark.
        A record whose content of such a turn is empty is not of that shape (its item
        then has no separator, or is left out). ``None`` for any other mode, inferencer
        or template (one candidate labelled with each record's own gold answer)."""
        if self.mode != "ppl" or self._chat is not None or self.infer_mode is not None or self.inferencer is not None:
            return None
        if self.prompts.template.kind != "labels" and self.labels is None:
            return None
        marks = _Marks()
        try:
            candidates = self.prompts.ppl(marks, self.ice(shots), self.labels)
        except PromptStyleError:
            return None  # (the general path says what, for every record)
        made = []
        for label, dialogue in candidates:
            turns: list[Any] = []
            for turn in dialogue:
                content = turn.content
                if type(content) is not str:
                    return None
                if "\x00" not in content and "\x01" not in content:
                    turns.append(turn)
                    continue
                pieces = _MARK.split(content)
                parts, names = pieces[0::2], tuple(marks.names[int(i)] for i in pieces[1::2])
                if any("\x00" in part or "\x01" in part for part in parts):
                    return None  # (a text of the template or an example holding one)
                turns.append(FieldTurn(turn, tuple(parts), names))
            made.append((label, tuple(turns)))
        return tuple(made)

    @staticmethod
    def _cont(record: Any) -> str:
        """LLInferencer's continuation: the record's ``cont``, the part of every
        candidate whose log-likelihood is scored."""
        if "cont" not in record:
            raise FieldError(
                "OpenCompass's LLInferencer scores the record's 'cont' field (the continuation inside each "
                "label's prompt), and the record has none",
                key="cont",
                hint="give every record a 'cont' field, or render with --mode ppl (PPLInferencer)",
            )
        cont = record["cont"]
        if not isinstance(cont, str):
            raise FieldError(f"the record's 'cont' must be text, not {cut(cont)}", key="cont")
        return cont

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_examples", "_last", "_checked"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()


_CHAT_ROUND = {"user": 0, "system": 1, "assistant": 2}
"""The round of the meta template OpenCompass's chat models use when they have none
(``HuggingFacewithChatTemplate``'s ``_get_meta_template``): HUMAN, SYSTEM, BOT (``generate``)."""


@dataclass(frozen=True)
class FieldTurn:
    """A turn of :meth:`OpenCompassStyle.fast_candidates` whose content is filled from
    the record: ``parts`` around the values of the fields ``names``."""

    turn: Turn
    """The turn, its content as filled with marks."""
    parts: tuple[str, ...]
    names: tuple[str, ...]


_MARK = re.compile("\x00(\\d+)\x01")


class _Marks(dict):  # type: ignore[type-arg]
    """A record holding every field, each a mark (``\\x00<n>\\x01``) for the field's
    name ``names[n]``: where a filled template's text holds a field's value."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __contains__(self, name: object) -> bool:
        return True

    def __getitem__(self, name: Any) -> str:
        self.names.append(name)
        return f"\x00{len(self.names) - 1}\x01"

    def get(self, name: Any, default: Any = None) -> Any:
        return self[name]


def stop_at_answer(dialogue: Dialogue) -> Dialogue:
    """A generation dialogue as OpenCompass's chat models send it: up to the BOT turn of the
    last round of the ``round`` section, the answer's place (``APITemplateParser`` stops at
    the ``generate`` role there), which is left out with all that follows. Rounds are split
    as OpenCompass splits them (a role not later than the one before in the round starts a
    new one); a dialogue with other roles is left as it is."""
    rounds = [i for i, turn in enumerate(dialogue) if turn.section == "round" and turn.role != RAW]
    if not rounds:
        return dialogue
    positions = {}
    last, start = -1, rounds[0]
    for i in rounds:
        turn = dialogue[i]
        position = _CHAT_ROUND.get(api_role(turn.role))
        if position is None and turn.fallback_role:
            position = _CHAT_ROUND.get(api_role(turn.fallback_role))
        if position is None:
            return dialogue
        if position <= last:
            start = i
        positions[i] = last = position
    for i in rounds:
        if i >= start and positions[i] == _CHAT_ROUND["assistant"]:
            return tuple(dialogue[:i])
    return dialogue


def opencompass_style(*, options: dict[str, Any], settings: StyleSettings) -> OpenCompassStyle:
    """The ``opencompass`` style from the task's template options."""
    return check_options(OpenCompassStyle, options, what="style 'opencompass'", settings=settings)
