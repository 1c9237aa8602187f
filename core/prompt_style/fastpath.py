"""The renderer's compiled fast path: the common case, rendered with string joins.

The general path (:meth:`TaskRenderer.render <prompt_style.render.TaskRenderer.render>`)
builds a :class:`~prompt_style.Sample`, a dialogue of turns and a
:class:`~prompt_style.FormattedPrompt` for every record, and the meta template joins
the turns again. When a task is in the common case

- a :class:`~prompt_style.ChoiceStyle` (the ``mcq``/``cloze`` presets: ``mcq::mmlu``,
  ``mcq::gpqa``, ...) that does not override how it formats, or the
  :class:`~prompt_style.PassthroughStyle` of lm-evaluation-harness's task files
  (``doc_to_text`` is the question text, the choices the continuations), multiple
  choice, without ``gen_prefix``;
- a retriever whose selection does not depend on the record (``shared_selection()``:
  ``first_n`` from another split, ``fixed``, ``fixk``, ``zero``);
- a meta template whose text is the concatenation of its turns' texts
  (``affixes(turn)``: ``plain``), or that says how its output stands around the last
  turn (``last_turn_affixes``: ``chatml``, API ``messages``); no tokenizer;
  lm-evaluation-harness's chat rules (a system instruction, and with a chat format
  ``fewshot_as_multiturn=False``: examples and question in one user message, the
  examples rendered once as what that message starts with);
- field extractors that are pure functions of the record (``pure``: field names,
  Jinja, ``{field}`` templates, constants, lm-evaluation-harness's ``doc_to_*``; not
  user callables), and a description that is the same for every record (literal
  text; or an extractor that gives the record-free text ``describe({})`` for the
  record, which is checked per record: a record whose description differs takes the
  general path),

everything but the record's own question is the same for every record: the few-shot
block is rendered to text **once per task**, and a record's text is that prefix, the
meta template's affixes and the question text from a function compiled per number of
choices (:mod:`prompt_style.styles.compiled`).

Three shapes have fast paths of their own: ``loglikelihood_rolling`` (the document is
the text and the target), a task-template file's task (its template's compiled
functions, offered by the reader's extractors: ``fast_parts()``) and a style whose
generation dialogue is a shared head and one turn filled from the record
(``fast_round()``: OpenCompass's dialogue templates).

It is an optimisation, never a second behaviour: a record is rendered here only when
the general path would take its usual course for it (a ``str`` question, a ``list`` of
choices without ``None``, an ``int`` target in range, no error anywhere); for anything
else the fast function returns ``None`` and the general path renders the record, with
its errors. The result is the same object the general path builds: same text,
continuations, target and dialogue (tests/test_fastpath.py checks both paths on awkward
records).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .errors import PromptStyleError
from .fast_chat import _chat_selection, _either_split, _prefilled_split, _selection, _selects
from .fast_descriptions import per_description
from .fast_examples import ExampleSelection, MergedSelection, Refused
from .fast_fields import (
    _column,
    _constant,
    _getter,
    _getters,
    _key_of,
    _offer,
    _once,
    _plain_choice_style,
    _plain_generation,
    _plain_passthrough_style,
    _pure,
)
from .fast_opencompass import dialogue_round, perplexity_candidates
from .fast_prompts import (
    DeferredDialogue,
    LazyDialoguePrompt,
    LazyMessagesPrompt,
    SelectedMessagesPrompt,
    SelectedPrompt,
    shaped_prompt,
)
from .fastpath_codegen import generated_code, maker, parameters
from .fields.extractors import CallableField
from .fields.jinja_compiler import SLOW, budget_threshold
from .fields.multiple_input import ContextChoice
from .lines import json_strings
from .render import RenderedPrompt
from .safe.limits import _SCOPE, SIZE_FLOOR, jinja_limits
from .styles.base import _format_fields
from .styles.compiled import MAX_CHOICES, layout, question_function, style_labels
from .styles.task_template import TaskTemplateStyle
from .types import Dialogue, Sample, Turn

if TYPE_CHECKING:
    from .render import TaskRenderer

__all__ = ["compile_fast_path", "LazyDialoguePrompt", "DeferredDialogue"]

FastRender = Callable[[Mapping[str, Any], int], "RenderedPrompt | None"]

_MISSING: Any = object()


def compile_fast_path(renderer: TaskRenderer) -> FastPath | None:
    """The fast path of ``renderer``'s task (:class:`FastPath`), or ``None`` when the
    task is not in the common case.

    Builds the task's shared few-shot examples (``renderer.shared_shots()``): an
    example with bad data makes this return ``None``, so that the general path
    reports it for every record, as it does without the fast path. Everything it
    renders (examples, their block, the description) is rendered within the task's
    budgets, as the general path renders it.
    """
    # The process's budgets (PROMPT_STYLE_LIMITS, configure()) read now if they were not
    # yet: reading them lowers SIZE_FLOOR, below which the code reads no budget (a worker
    # process may reach its first record before anything else asked for them).
    jinja_limits()
    limits = renderer.limits
    token = _SCOPE.set(limits) if limits is not None else None
    try:
        path = _compile(renderer)
    finally:
        if token is not None:
            _SCOPE.reset(token)
    if path is None:
        # a description per record that only a constant one would let compile (a chat
        # format's system turn): compiled once per description (fast_descriptions)
        made = per_description(renderer, compile_fast_path)
        if made is not None:
            path = FastPath(made[0], made[1], "", lines_emitting=made[2])
    return path


_PROBE_SECONDS = 0.05
"""The deadline of the probe that asks whether a task's description needs a record field
(its other budgets: a million characters built, 100,000 loop iterations, 10,000 macro calls)."""


def _compile(renderer: TaskRenderer) -> FastPath | None:
    if renderer._rolling:
        return _rolling(renderer)
    if type(renderer.style) is TaskTemplateStyle:
        return _task_template(renderer, renderer.style)
    if getattr(renderer.style, "fast_round", None) is not None:  # OpenCompass's dialogues
        shape = dialogue_round(renderer, renderer.style.fast_round)
        if shape is None and getattr(renderer.style, "fast_candidates", None) is not None:
            shape = perplexity_candidates(renderer, renderer.style.fast_candidates)
        return None if shape is None else _shaped(renderer, *shape)
    if renderer._meta_scored is not None:
        return None
    style = renderer.style
    passthrough = _plain_passthrough_style(style)
    text_of, choice_of, target_of, prefix_of = renderer._text, renderer._choice, renderer._target, renderer._prefix
    describe = renderer._description
    settings = getattr(style, "settings", None)
    # A generation task (lm-evaluation-harness's generate_until): the question text, no
    # choices, the reference answer as the target.
    generation = (
        passthrough and choice_of is None and settings is not None and settings.output_type in (None, "generate_until")
    )
    if generation:
        if text_of is None:
            return None
    else:
        if not (passthrough or _plain_choice_style(style)) or not renderer._needs_gold or renderer._gold is None:
            return None
        if style._generative:
            # a generation variant (generation: answer / cot): a generation prompt
            # whatever the output_type, the gold's label as the target
            if passthrough or not _plain_generation(style):
                return None
        elif settings.output_type not in (None, "multiple_choice"):
            return None
        if text_of is None or choice_of is None or target_of is None:
            return None
    # lm-evaluation-harness's gen_prefix, the same for every record (a record with a column
    # named like it is the general path's: lm-eval reads that column): an assistant turn
    # after the question, whose text the shared tail ends with (plain-text meta templates)
    prefill_text, prefix_key = None, None
    if prefix_of is not None:
        constant = _constant(prefix_of)
        if constant is None or type(constant[0]) is not str:
            return None
        prefill_text, prefix_key = constant[0] or None, constant[1]
    if not (all(_once(e) for e in (text_of, choice_of, target_of)) and _pure(describe)):
        return None
    ordered = not all(_pure(e) for e in (text_of, choice_of, target_of))  # user code among them
    # The fields in one C call when each is a dict key (the common case).
    get3 = q_method = None
    if generation:
        keys = [_key_of(text_of, True), _key_of(target_of) if target_of is not None else None]
        if all(k is not None for k in keys) and not keys[1][1] and len(keys[0][1]) <= 1:
            get3 = itemgetter(keys[0][0], keys[1][0])
            q_method = keys[0][1][0] if keys[0][1] else None
    else:
        keys = [_key_of(text_of, True), _key_of(choice_of), _key_of(target_of)]
        if all(k is not None for k in keys) and not keys[1][1] and not keys[2][1] and len(keys[0][1]) <= 1:
            get3 = itemgetter(keys[0][0], keys[1][0], keys[2][0])
            q_method = keys[0][1][0] if keys[0][1] else None
    # a constant list of choices, a target read from a column: read in the loop, no call
    constant_choices = _constant(choice_of) if choice_of is not None and get3 is None else None
    if constant_choices is not None and (constant_choices[1] is not None or type(constant_choices[0]) is not list):
        constant_choices = None
    target_column = _column(target_of) if target_of is not None and get3 is None else None
    text_of, text_slow = _getters(text_of, text=True)
    choice_of, choice_slow = _getters(choice_of, choice=True)
    target_of, target_slow = _getters(target_of)
    meta = renderer.meta
    affixes = getattr(meta, "affixes", None)
    # a chat format that says how its text stands around the last turn's content
    last_turn = getattr(meta, "last_turn_affixes", None) if affixes is None else None
    if affixes is None and last_turn is None:
        return None
    try:
        shots = renderer.shared_shots()
    except PromptStyleError:
        return None
    per_record = shots is None  # examples chosen per record: an ExampleSelection below
    selection: ExampleSelection | None = None
    example = None  # an example whose number of choices the code is written for
    closed = getattr(meta, "closed_turn", None) if last_turn is not None else None
    if per_record:
        if not _selects(renderer, style, affixes, closed):
            return None
        shots = ()
        try:
            example = renderer._shot(0)
        except PromptStyleError:
            example = None
    block, sep = style.shot_block(shots) if shots else ((), "")
    system = Turn("system", "", section="begin")
    if affixes is not None:
        block_text = meta.apply(block).text if block else ""
        d_before, d_after = affixes(system)
        q_before, q_after = affixes(Turn("user", "", sep))
        if not all(isinstance(t, str) for t in (block_text, d_before, d_after, q_before, q_after)):
            return None
    else:
        block_text = d_before = d_after = q_before = q_after = ""  # the chat format's split gives them

    constant_description = describe is None or getattr(describe, "kind", None) in ("literal", "constant")
    check_description = None  # the description every record must give to take this path
    description_key = None  # or: the key a record must not have to take it (see _constant)
    # (with examples chosen per record, a description that varies is the record's own:
    # made once per description, ExampleSelection.start_of, rather than a constant some
    # records do not give)
    if not constant_description and not per_record:
        constant = _constant(describe)
        if constant is not None and type(constant[0]) is str:
            description_key, constant_description = constant[1], True
    if not constant_description and not per_record:
        # pure: the text when the description needs no field. A probe, so on small
        # budgets: a description that runs long or builds much here is left to each
        # record's render (which stops it once, within the task's own budgets), not run
        # to its budgets twice.
        base = _SCOPE.get() or jinja_limits()
        probe = dataclasses.replace(
            base,
            deadline=min(base.seconds, _PROBE_SECONDS),
            max_work=min(base.max_work, 1 << 20),
            max_loop_iterations=min(base.max_loop_iterations, 100_000),
            max_macro_calls=min(base.max_macro_calls, 10_000),
        )
        token = _SCOPE.set(probe)
        try:
            value = describe({})
        except Exception:
            value = None
        finally:
            _SCOPE.reset(token)
        if type(value) is str:
            check_description, constant_description = _getter(describe), True
    head_turns: tuple[Turn, ...] = block
    head_text = block_text
    if describe is not None and constant_description:
        value = describe({})
        description = "" if value is None else str(value)
        if description:
            head_turns = (system._replace(content=description), *block)
            head_text = d_before + description + d_after + block_text
        describe = None
    lead = ""  # what the record's turn holds before its question (see DeferredDialogue)
    rules = renderer.chat
    selected_describe = None  # a description per record, with examples chosen per record
    if per_record:
        # a description per record: the turns before the examples for it, made once per
        # description (ExampleSelection.start_of); the chat rules join it as the general path
        selected_describe, describe = describe, None
        question, chat_rules = Turn("user", "", ""), rules

        def before_examples(turns: Dialogue) -> Dialogue:
            # the chat rules (a system instruction) on the turns before the examples:
            # with the examples as turns of their own, they touch no other (see _selects)
            if chat_rules is None:
                return turns
            ruled = chat_rules.apply((*turns, question))
            if not ruled or ruled[-1] != question:  # (one user turn: the question merged alone, equal)
                raise Refused
            return ruled[:-1]

        def start_turns_of(description: str) -> Dialogue:
            return before_examples((system._replace(content=description),) if description else ())

        try:
            start_turns = before_examples(head_turns)
        except Exception:  # the general path gives the error, for every record
            return None
        if affixes is None:  # a chat format closing its turns alike (closed_turn)
            selection = _chat_selection(
                renderer,
                style,
                meta,
                last_turn,
                closed,
                head_turns,
                start_turns,
                example,
                start_turns_of,
                per_description=selected_describe is not None,
            )
            if selection is None:
                return None
            q_after, rules = selection.after, None
        else:
            selection = _selection(
                renderer,
                style,
                affixes=affixes,
                start=head_text,
                start_turns=start_turns,
                after=q_after,
                start_turns_of=start_turns_of,
            )
        head_turns, head_text, q_before = (), "", ""  # the selection's, per record
    if rules is not None:
        # lm-evaluation-harness's chat rules: a system instruction before the shared turns;
        # a description per record is the general path's
        if describe is not None:
            return None
        question_turn = Turn("user", "", sep)
        try:
            ruled = rules.apply((*head_turns, question_turn))
        except Exception:  # the general path gives the error, for every record
            return None
        if not ruled or not all(type(t.content) is str for t in ruled):
            return None
        if rules.chat and not rules.fewshot_as_multiturn:
            # one user turn: the examples, then the record's question (its content is
            # the lead, then the question text); a chat format splits around it
            last = ruled[-1]
            if affixes is not None or last != Turn("user", last.content, last.sep):
                return None
            lead, sep = last.content, last.sep
        elif ruled[-1] is not question_turn:
            return None
        head_turns = ruled[:-1]
        if affixes is not None:
            try:
                pieces = [affixes(turn) for turn in head_turns]
            except Exception:
                return None
            if not all(type(b) is str and type(a) is str for b, a in pieces):
                return None
            head_text = "".join([b + turn.content + a for turn, (b, a) in zip(head_turns, pieces)])
    textless = False
    strip_first = strip_empty = None  # with a chat format's stripped_turn_affixes: the guard's values
    if selection is not None and selection.stripped:
        # the question's content: its own text (in one user turn, after the examples' text,
        # whose start the selection checks: its own text checked at both ends, and one
        # left empty the general path's)
        strip_first, strip_empty = True, isinstance(selection, MergedSelection)
    prefill = prefilled_split = None
    if prefill_text is not None:
        # gen_prefix: shared examples, no chat rules, one description. Its turn is
        # delimited from the question (requires_delimiter) unless it starts with white
        # space: then for a question text that is not empty and does not end with white
        # space, which the generated code's guard checks (the others the general path's)
        delimiter = settings.target_delimiter
        if selection is not None or renderer.chat is not None or describe is not None:
            return None
        delimited = not prefill_text[0].isspace()
        if delimited and type(delimiter) is not str:
            return None
        prefill = Turn("assistant", prefill_text, delimiter if delimited else "")
        if affixes is not None:  # plain text: the prefill's text ends the shared tail
            try:
                a_before, a_after = affixes(prefill)
            except Exception:  # the general path gives the error, for every record
                return None
            if type(a_before) is not str or type(a_after) is not str:
                return None
            q_after = q_after + a_before + prefill_text + a_after
            trims = False
        else:  # a chat format that says how its text stands around the question before it
            found = None if lead else _prefilled_split(meta, (*head_turns, Turn("user", lead, sep), prefill))
            if found is None:
                return None
            prefilled_split, trims = found
        if delimited or trims:
            # (a format that trims the question: its text must have no white space at either end)
            strip_first, strip_empty = trims, delimited
    if describe is None:
        # The text is one f-string (prefix, question, affixes); the dialogue (and a chat
        # format's messages) are made from it when first read (LazyDialoguePrompt).
        chat = None
        if prefilled_split is not None:
            head, tail, chat, textless = prefilled_split
        elif last_turn is None or selection is not None:  # (a selection's messages are its own)
            head, tail = head_text + q_before, q_after
            if prefill is not None:
                try:  # checked once against the meta template itself
                    probe = meta.apply((*head_turns, Turn("user", "Q", sep), prefill)).text
                except Exception:
                    return None
                if probe != f"{head}Q{tail}":
                    return None
        else:
            # a format that strips the content: the records whose content strip() leaves as
            # it is (the generated code's guard), the others the general path's
            dialogue = (*head_turns, Turn("user", lead, sep))
            split, stripped = _either_split(meta, last_turn, dialogue, stripped_ok=not lead[:1].isspace())
            if stripped:
                strip_first, strip_empty = not lead, lead != lead.strip()
            if split is None:
                return None
            head, tail, chat, textless = split
        deferred = DeferredDialogue(
            head_turns,
            len(head),
            len(tail),
            sep,
            renderer.plugins,
            renderer.until,
            renderer._shared_ids,
            messages=chat,
            head=head,
            tail=tail,
            textless=textless,
            lead=lead,
            selected=selection,
            prefill=prefill,
        )
    elif last_turn is not None:
        return None  # a description per record: a chat format renders the whole dialogue
    else:
        head = tail = ""  # a description per record: joined around the question text
        deferred = None
    # A description per record: the text before the question, made once per description
    # (the last 4,096 kept), for the lines, whose text is then whole (no shared head).
    starts: dict[str, str] = {}

    def start_for(description: str) -> str:
        if len(starts) >= 4096:
            starts.clear()
        made = starts[description] = (d_before + description + d_after if description else "") + head_text + q_before
        return made

    line_deferred = deferred
    if deferred is None:
        line_deferred = DeferredDialogue(
            head_turns, 0, 0, sep, renderer.plugins, renderer.until, renderer._shared_ids, head="", tail=""
        )

    delimiter = settings.continuation_delimiter
    if delimiter is None:
        delimiter = settings.target_delimiter
    answers_vary = passthrough or "choice" in _format_fields(style.answer_format)
    answers_of = None if passthrough else style._answers_of
    # the continuations are the choices' texts (str() of each, as the style makes them)
    # after the delimiter: two maps in C
    choice_answers = type(delimiter) is str and (passthrough or style.answer_format == "{choice}")
    # n -> (question function, continuations or None when they vary by record, labels)
    compiled: dict[int, Any] = {}

    choice_generation = not passthrough and style._generative

    def compile_n(n: int) -> Any:
        labels = style_labels(style, n)
        question = question_function(style, n, head, tail, choice_generation) if labels is not None else None
        if question is None:
            made = None
        elif choice_generation:
            # no continuations; the labels the target is one of (the numbers of a style
            # that numbers its choices). The answers are made, as the general path makes
            # them, to meet a format error once (it then gives it, for each such record)
            try:
                shown = style.labels(Sample(0, {}, None, [None] * n))
                answers_of([None] * n, labels)
                made = (question, (), tuple(shown))
            except Exception:
                made = None
        elif answers_vary:
            made = (question, None, labels)
        else:
            made = (question, tuple([delimiter + a for a in answers_of([None] * n, labels)]), labels)
        compiled[n] = made
        return made

    # The number of choices written into the code: the first example's (tasks
    # usually keep it); records with another number use compile_n's functions.
    first = shots[0].choices if shots else None if example is None else example.choices
    n0 = len(first) if type(first) is list else None
    inline = layout(style, n0) if n0 is not None and not passthrough and not choice_generation else None
    if inline is None:
        n0 = None
    # A layout that shows no choice (cloze) is the same f-string for every number of
    # choices the style has labels for: those records take it too, with their own
    # continuations (the choices' texts), rather than a compiled function per number.
    any_n = inline is not None and choice_answers and "{c[" not in inline.source
    same_n = frozenset(n for n in range(1, MAX_CHOICES + 1) if layout(style, n) == inline) if any_n else frozenset()
    # Passthrough: the continuations of the first example's choice list, reused for
    # every record that gives the same list (a task's constant doc_to_choice).
    same_list = first if passthrough and type(first) is list and all(type(a) is str for a in first) else None
    values: dict[str, Any] = {
        "get3": get3,
        "q_method": q_method,
        "cap_of": budget_threshold,
        "SIZE_FLOOR": SIZE_FLOOR,
        "text_of": text_of,
        "choice_of": choice_of,
        "target_of": target_of,
        "text_slow": text_slow,
        "choice_slow": choice_slow,
        "target_slow": target_slow,
        "SLOW": SLOW,
        "describe": describe if selected_describe is None else selected_describe,
        "compiled": compiled,
        "compile_n": compile_n,
        "answers_of": answers_of,
        "delimiter": delimiter,
        "gold_of": renderer._gold,
        "add_delimiter": delimiter.__add__ if type(delimiter) is str else None,
        "new_prompt": object.__new__,
        "LazyDialoguePrompt": (
            (SelectedMessagesPrompt if selection.textless else SelectedPrompt)
            if selection is not None
            else LazyMessagesPrompt
            if textless
            else LazyDialoguePrompt
        ),
        "select": renderer._select,
        "prefix_of": None if selection is None else selection.prefix_and_json if selection.chat else selection.prefix,
        "start_of": None if selection is None else selection.start_of,
        "starts": starts,
        "start_for": start_for,
        "RenderedPrompt": RenderedPrompt,
        "Turn": Turn,
        "plugins": renderer.plugins,
        "until": renderer.until,
        "shot_ids": renderer._shared_ids,
        "deferred": deferred,
        "head_turns": head_turns,
        "head_text": head_text,
        "q_before": q_before,
        "q_after": q_after,
        "d_before": d_before,
        "d_after": d_after,
        "system": system,
        "sep": sep,
        "Bail": _Bail,
        "MISSING": _MISSING,
        "check_description": check_description,
        "description0": description if check_description is not None else None,
        "D_KEY": description_key,
        "P_KEY": prefix_key,
        "C_CONST": None if constant_choices is None else constant_choices[0],
        "T_KEY": None if target_column is None else target_column[0],
        "T_DEFAULT": None if target_column is None else target_column[1],
        "P_H": head,
        "P_T": tail,
        "P_START": len(head),
        "P_STOP": len(tail),
        "S_FIRST": strip_first,
        "S_EMPTY": strip_empty,
        "P_C": same_list,
        "P_CC": None if same_list is None else list(same_list),
        "P_CT": None if same_list is None else tuple([delimiter + a for a in same_list]),
    }
    if inline is not None:
        labels0 = style_labels(style, n0)
        values["N0"] = n0
        values["SAME_N"] = same_n
        values["LABELS0"] = labels0
        values["C0"] = None if answers_vary else tuple([delimiter + a for a in answers_of([None] * n0, labels0)])
        layout_values = list(inline.values)
        values["G_H"], values["G_T"] = layout_values[0], layout_values[1]  # without head and tail
        layout_values[0] = head + layout_values[0]
        layout_values[1] = layout_values[1] + tail
        values.update({f"F_{name}": value for name, value in zip(inline.names, layout_values)})
    code = generated_code(
        combined=get3 is not None,
        q_method=q_method is not None,
        described=describe is not None,
        inline=inline,
        any_n=bool(same_n),
        answers_vary=answers_vary,
        passthrough=passthrough,
        checked_description=check_description is not None,
        description_key=description_key is not None,
        prefix_key=prefix_key is not None,
        choice_answers=choice_answers,
        textless=textless or (selection is not None and selection.textless),
        generation=(generation, target_of is not None) if generation else None,
        choice_generation=choice_generation,
        fallbacks=frozenset(
            name
            for name, fallback in (("text", text_slow), ("choice", choice_slow), ("target", target_slow))
            if fallback
        ),
        inline_reads=frozenset(
            name for name, made in (("choice", constant_choices), ("target", target_column)) if made is not None
        ),
        selected=selection is not None,
        selected_chat=selection is not None and selection.chat,
        selected_described=selected_describe is not None,
        ordered=ordered,
        stripped=strip_first is not None,
    )
    make = maker(code)
    # positional, in the order of its parameters: some fifty keywords would be matched by name
    fast, many, lines = make(*[values[name] for name in parameters(make)])

    if renderer.limits is not None:
        return _within(renderer.limits, fast, code)
    path = FastPath(fast, many, code, lines, line_deferred)
    if passthrough and not generation and selection is None and last_turn is None and describe is None:
        # a record whose doc_to_text gives a number leaves the generated code (it takes
        # str questions only): lm-evaluation-harness's multiple-input records, around the
        # same head and tail (the examples show their own correct choice: shot_block's)
        parts = None if check_description is not None else _multiple_input_parts(renderer, deferred, description_key)
        if parts is not None:
            return _or_multiple_input(path, *parts)
    return path


def _multiple_input_parts(
    renderer: TaskRenderer, shared: DeferredDialogue, description_key: str | None
) -> tuple[Any, ...] | None:
    """``(take, prompt, line_parts)`` of lm-evaluation-harness's multiple-input records
    (winogrande: ``doc_to_text`` gives the index of the choice that is the context,
    ``doc_to_choice`` the contexts, ``doc_to_target`` the one continuation), for the task's
    ``shared`` head (description, examples, the question turn's affix) and tail, as
    :func:`_shaped` takes them: each context is the head, the choice and the tail, as a
    meta template of ``affixes`` joins its turns' texts; the line holds the ``contexts``.
    A record with ``description_key`` has a description of its own (the general path's).
    The fields are read in the general path's order, user code through ``kept`` (called
    once a record, whichever reader or path renders it); ``None`` when the task is not
    of this shape."""
    style = renderer.style
    text_of, choice_of, target_of = renderer._text, renderer._choice, renderer._target
    if renderer.chat is not None or renderer._meta_scored is not None or renderer._prefix is not None:
        return None
    if style.settings.output_type not in (None, "multiple_choice"):
        return None
    if text_of is None or choice_of is None or target_of is None:
        return None
    head_turns, head, tail, sep = shared.turns, shared.head, shared.tail, shared.sep
    settings = style.settings
    delimiter = settings.continuation_delimiter
    if delimiter is None:
        delimiter = settings.target_delimiter
    if type(delimiter) is not str or type(head) is not str or type(tail) is not str:
        return None
    forgets = [e.forget for e in (text_of, choice_of, target_of) if not _pure(e)]
    read_q, read_c, read_t = (_kept_reader(e) for e in (text_of, choice_of, target_of))
    ids, plugins, until = renderer._shared_ids, renderer.plugins, renderer.until

    def take(record: Any) -> tuple[int, list[str], str] | None:
        try:
            if description_key is not None and description_key in record:
                return None
            q = read_q(record)
            if type(q) is not ContextChoice:
                return None
            c = read_c(record)
            if type(c) is not list or None in c:
                return None
            t = read_t(record)
            if not 0 <= q < len(c) or (type(t) is not str and type(t) is not int):
                return None
            texts = list(map(str, c))
        except Exception:
            return None
        for forget in forgets:  # rendered here: nothing kept for the general path
            forget()
        return int(q), texts, delimiter + str(t)

    bare = not head and not tail  # (zero-shot, plain text: each context is its choice)

    def prompt(index: int, gold: int, texts: list[str], continuation: str) -> RenderedPrompt:
        contexts = tuple(texts) if bare else tuple([f"{head}{x}{tail}" for x in texts])
        return RenderedPrompt(
            index,
            contexts[0],
            None,
            (continuation,) * len(texts),
            gold,
            plugins,
            (*head_turns, Turn("user", texts[0], sep)),
            None,
            None,
            until,
            contexts=contexts,
            fewshot_indices=ids,
        )

    def line_parts(gold: int, texts: list[str], continuation: str) -> tuple[str, Any, Any, bytes]:
        more = b', "contexts": ' + json_strings(texts if bare else [f"{head}{x}{tail}" for x in texts])
        return texts[0], (continuation,) * len(texts), gold, more

    return take, prompt, line_parts


def _kept_reader(extractor: Any) -> Callable[[Any], Any]:
    """A field's reader for :func:`_multiple_input_parts`: user code through ``kept``,
    anything else through its quicker getter (the field itself where that gives ``SLOW``)."""
    if type(extractor) is CallableField and not extractor.pure:
        return extractor.kept
    getter = _getter(extractor)
    if getter is extractor:
        return extractor

    def read(record: Any) -> Any:
        value = getter(record)
        return extractor(record) if value is SLOW else value

    return read


def _or_multiple_input(path: FastPath, take: Any, prompt: Any, line_parts: Any) -> FastPath:
    """``path``, whose records of lm-evaluation-harness's multiple-input shape (which its
    code hands to the general path) are rendered by :func:`_multiple_input_parts`'s
    functions first."""
    main = path.render

    def fast(record: Mapping[str, Any], index: int) -> RenderedPrompt | None:
        made = main(record, index)
        if made is not None:
            return made
        taken = take(record)
        return None if taken is None else prompt(index, *taken)

    # A block of records (the loops' unit) whose every record was of this shape makes the
    # next block try this shape first, and hand a record of another shape straight to the
    # general path (the generated code would read its question once more); a block with
    # records of another shape goes back to the generated code first.
    first = [False]

    def block(records: Any, general: Any, start: int, made: Callable[..., Any], loop: Callable[..., Any]) -> Any:
        """The block's outputs: ``made(index, taken)`` for a record of this shape,
        ``general`` for another; ``loop(other)`` runs the generated code's loop with
        ``other`` for the records it hands on."""
        handed, taken_all = [0], [True]

        def other(record: Any, index: int) -> Any:
            handed[0] += 1
            taken = take(record)
            if taken is None:
                taken_all[0] = False
                return general(record, index)
            return made(index, taken)

        if first[0]:
            yield from map(other, records, itertools.count(start))
        else:
            yield from loop(other)
        first[0] = taken_all[0] and type(records) is list and handed[0] == len(records)

    def many(records: Any, general: Any, start: int = 0) -> Any:
        def loop(other: Any) -> Any:
            return path.many(records, other, start)

        return block(records, general, start, lambda index, taken: prompt(index, *taken), loop)

    def lines(records: Any, general: Any, start: int = 0, *, emit: Any, line_of: Any) -> Any:
        def made(index: int, taken: Any) -> Any:
            line = emit(index, *line_parts(*taken))
            return line_of(prompt(index, *taken)) if line is None else line

        def loop(other: Any) -> Any:
            return path.lines(records, other, start, emit=emit, line_of=line_of)

        return block(records, general, start, made, loop)

    return FastPath(
        fast, None if path.many is None else many, path.code, None if path.lines is None else lines, path.deferred
    )


def _shaped(
    renderer: TaskRenderer,
    take: Callable[[Any], tuple[Any, ...] | None],
    prompt: Callable[..., RenderedPrompt],
    line_parts: Callable[..., tuple[Any, ...]],
    code: str,
    deferred: DeferredDialogue,
) -> FastPath:
    """The fast path of a shape of its own (rolling documents, task-template files,
    OpenCompass dialogues): ``take(record)`` gives the record's fields, or ``None`` for a
    record the general path renders; ``prompt(index, *fields)`` its prompt;
    ``line_parts(*fields)`` what ``emit`` writes its line from (own text,
    continuations, target and, optionally, more members)."""

    def fast(record: Mapping[str, Any], index: int) -> RenderedPrompt | None:
        made = take(record)
        return None if made is None else prompt(index, *made)

    if renderer.limits is not None:
        return _within(renderer.limits, fast, code)

    def many(records: Any, general: Any, start: int = 0) -> Any:
        for index, record in enumerate(records, start):
            made = take(record)
            yield general(record, index) if made is None else prompt(index, *made)

    def lines(records: Any, general: Any, start: int = 0, *, emit: Any, line_of: Any) -> Any:
        for index, record in enumerate(records, start):
            made = take(record)
            if made is None:
                yield general(record, index)
                continue
            line = emit(index, *line_parts(*made))
            yield line_of(prompt(index, *made)) if line is None else line

    return FastPath(fast, many, code, lines, deferred)


def _within(limits: Any, fast: Callable[[Mapping[str, Any], int], Any], code: str) -> FastPath:
    """The fast path of a task with Jinja budgets of its own: each record rendered
    within them, as the general path renders it (records one by one: no ``many``)."""

    def scoped(record: Mapping[str, Any], index: int) -> RenderedPrompt | None:
        token = _SCOPE.set(limits)  # the task's Jinja budgets, as the general path sets them
        try:
            return fast(record, index)
        finally:
            _SCOPE.reset(token)

    return FastPath(scoped, None, code)


def _rolling(renderer: TaskRenderer) -> FastPath | None:
    """The fast path of a ``loglikelihood_rolling`` task: the document (``doc_to_target``,
    a ``str``) is the prompt's text and its target, with no context, examples or chat
    format. A record is taken when the general path would read each of its fields
    without an error (``doc_to_text`` is read, as it reads it, and its value dropped);
    anything else is the general path's, with its errors."""
    text_of, target_of, describe = renderer._text, renderer._target, renderer._description
    if target_of is None or renderer._choice is not None or renderer._prefix is not None:
        return None
    if describe is not None and getattr(describe, "kind", None) not in ("literal", "constant"):
        return None
    if not (_pure(text_of) and _pure(target_of)):
        return None
    text_get = None if text_of is None else _getter(text_of)
    target_get = _getter(target_of)
    deferred = DeferredDialogue((), 0, 0, "", renderer.plugins, None, (), head="", tail="", bare=True)
    new = object.__new__

    def document(record: Mapping[str, Any]) -> tuple[str] | None:
        try:
            if text_get is not None:
                question = text_get(record)
                if question is SLOW or type(question) is ContextChoice:
                    return None
            target = target_get(record)
        except Exception:
            return None
        return (target,) if type(target) is str else None

    def prompt(index: int, text: str) -> LazyDialoguePrompt:
        made = new(LazyDialoguePrompt)
        made.index = index
        made.text = text
        made.continuations = ()
        made.target = text
        made._deferred = deferred
        made.permutation = None
        made.fewshot_indices = ()
        made.doc_id = None
        return made

    def line_parts(text: str) -> tuple[str, Any, Any]:
        return text, (), text

    return _shaped(renderer, document, prompt, line_parts, "rolling", deferred)


def _task_template(renderer: TaskRenderer, style: TaskTemplateStyle) -> FastPath | None:
    """The fast path of a task-template file's task (the ``task_template`` style): the
    template's input is the prompt's text, its output the target, its answer choices
    the ``answer_choices`` field, each record rendered once by the template's compiled
    functions (the reader's extractors offer them: ``fast_parts()``). Zero-shot, no
    description, no chat rules, a plain or chat meta template; a record the compiled
    functions do not render whole is the general path's."""
    text_of, target_of, choice_of = renderer._text, renderer._target, renderer._choice
    offered = _offer(text_of, "fast_parts")
    if offered is None or renderer._prefix is not None or renderer._description is not None:
        return None
    key, apply = offered[0], offered[1]
    for extractor, position in ((text_of, 0), (target_of, 1), (choice_of, 2)):
        parts = _offer(extractor, "fast_parts") if extractor is not None else None
        if parts is None or parts[0] is not key or parts[2] != position:
            if extractor is not None or position != 2:
                return None
    if renderer.chat is not None or renderer._meta_scored is not None:
        return None
    if style.settings.output_type not in (None, "generate_until"):
        return None
    meta = renderer.meta
    affixes = getattr(meta, "affixes", None)
    chat, textless = None, False
    try:
        # few-shot examples every record shares (their inputs and outputs rendered once,
        # joined as QAStyle joins them), before the record's input
        shots = renderer.shared_shots()
        if shots is None:
            return None  # (examples chosen per record: the general path's)
        block, sep = style.shot_block(shots) if shots else ((), "")
        if affixes is not None:
            before, tail = affixes(Turn("user", "", sep))
            head = (meta.apply(block).text if block else "") + before
            if block and meta.apply((*block, Turn("user", "Q", sep))).text != f"{head}Q{tail}":
                return None
        else:
            last_turn = getattr(meta, "last_turn_affixes", None)
            # (a format that trims the content, Llama 3's, too: the template's input is
            # stripped already by fast_apply, so every record's content is as strip() leaves it)
            split = None if last_turn is None else _either_split(meta, last_turn, (*block, Turn("user", "", sep)))[0]
            if split is None:
                return None
            head, tail, chat, textless = split
    except Exception:  # the general path gives the error, for every record
        return None
    if type(head) is not str or type(tail) is not str:
        return None
    until, ids = renderer.until, renderer._shared_ids
    deferred = DeferredDialogue(
        block,
        len(head),
        len(tail),
        sep,
        renderer.plugins,
        until,
        ids,
        messages=chat,
        head=head,
        tail=tail,
        textless=textless,
        extras=True,
    )
    with_choices = choice_of is not None

    def prompt(index: int, own: str, output: str, choices: Any) -> RenderedPrompt:
        made = shaped_prompt(deferred, index, own, output)
        # (a list of its own: fast_apply gives a record the list of the one before when equal)
        made.extra = {"answer_choices": list(choices) if with_choices and choices is not None else None}
        return made

    choices_key = b', "answer_choices": '
    no_choices = choices_key + b"null"
    last: list[Any] = [object(), b""]  # the answer choices last written (kept alive) and their JSON

    def line_parts(own: str, output: str, choices: Any) -> tuple[str, Any, Any, bytes]:
        if not with_choices:
            return own, (), output, no_choices
        if choices is not last[0]:
            last[1] = choices_key + json_strings(choices)
            last[0] = choices
        return own, (), output, last[1]

    return _shaped(renderer, apply, prompt, line_parts, "task_template", deferred)


class _Bail(Exception):
    """A record the fast path does not render (the general path does)."""


@dataclass(frozen=True)
class FastPath:
    """A task's compiled fast path: ``render(record, index)`` gives the prompt or
    ``None`` (the general path renders that record); ``many(records, general,
    start=0)`` renders records in order (the first at index ``start``), handing the
    ones it does not take to ``general(record, index)`` (``None`` when the task has Jinja budgets of its own:
    then records go through ``render`` one by one). ``code`` is the generated source."""

    render: Callable[[Mapping[str, Any], int], RenderedPrompt | None]
    many: Callable[..., Any] | None
    code: str = field(repr=False)
    lines: Callable[..., Any] | None = None
    """``lines(records, general, start=0, *, emit, line_of)``: ``many``'s loop, giving
    each prompt's output line rather than the prompt: ``emit(index, own,
    continuations, target)`` for the records it takes, ``own`` the text between the
    ``deferred`` head and tail (when that gives ``None``, the
    prompt is made and ``line_of(prompt)`` gives its line), and ``general(record,
    index)`` (a line too) for the others. ``None`` where ``many`` is, or the
    prompts share no :class:`DeferredDialogue`."""
    deferred: DeferredDialogue | None = None
    """What every prompt of ``lines`` shares (its ``head`` and ``tail`` text, ...)."""
    lines_emitting: Callable[..., Any] | None = None
    """For prompts that share no one :class:`DeferredDialogue` (a fast path per
    description): ``lines_emitting(records, general, start=0, *, emit_for, line_of)``,
    ``lines`` with ``emit_for(deferred)`` giving the ``emit`` of each ``deferred``."""
