"""Building blocks for styles: few-shot assembly, choice formatting, target resolution.

Plugins build their styles from these (the first-party mmlu, gpqa and cloze
distributions are presets of :class:`ChoiceStyle`) or implement the
:class:`~prompt_style.types.Style` protocol from scratch.
"""

from __future__ import annotations

import functools
import string
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..delimiters import maybe_delimit, requires_delimiter
from ..errors import OptionError, StyleError
from ..fields import multiple_input
from ..fields.targets import resolve_gold
from ..options import check_options
from ..types import Dialogue, FormattedPrompt, Sample, Style, StyleSettings, Turn

__all__ = [
    "QAStyle",
    "ChoiceStyle",
    "PassthroughStyle",
    "DEFAULT_LABELS",
    "choice_style",
    "resolve_target",
    "maybe_delimit",
    "requires_delimiter",
]

DEFAULT_LABELS: tuple[str, ...] = tuple(string.ascii_uppercase)

_UNSET: Any = object()

_new_tuple = tuple.__new__  # Turn(role, content, sep, section="ice") without the keyword call


def _ice_turn(role: str, content: str, sep: str) -> Turn:
    """``Turn(role, content, sep, section="ice")``: a few per example, for every task's
    first record (the named tuple's keyword call costs three times this)."""
    return _new_tuple(Turn, (role, content, sep, None, "ice", None))


def resolve_target(target: Any, answers: Sequence[Any], *also: Sequence[Any]) -> int | list[int]:
    """The index of the gold choice: :func:`prompt_style.resolve_gold` for a
    target that is not a template's output.

    ``answers`` is the record's choices (what ``doc_to_choice`` gives). The
    renderer already resolves every record's gold answer before the style runs
    (:attr:`Sample.gold <prompt_style.Sample.gold>`), so styles need not call
    this. ``also`` (labels, other names of the choices) is ignored: a target is
    never matched against a style's labels, so that changing the style never
    changes the gold answer.

    :raises TargetError: (a :class:`StyleError`) when the target names no
        choice, or could name two.
    """
    if also:
        warnings.warn(
            "resolve_target() no longer matches targets against labels; the extra sequences are ignored",
            DeprecationWarning,
            stacklevel=2,
        )
    return resolve_gold(target, answers)


@dataclass
class QAStyle:
    """Base for question -> answer styles, with lm-evaluation-harness few-shot layout.

    Flattened to plain text the dialogue reads::

        description + q1 + target_delimiter + a1 + fewshot_delimiter + ... + q

    Subclasses implement :meth:`question_text` and :meth:`answers`. The turns
    of a few-shot example are built once per example and reused.
    """

    settings: StyleSettings = field(default_factory=StyleSettings, repr=False)

    _generative = False
    """Whether the style asks the model to generate its answer (a ChoiceStyle's
    ``generation`` variants): the prompt is then a generation prompt whatever the
    task's ``output_type``, and :meth:`target` gives the reference answer."""

    def question_text(self, sample: Sample) -> str:
        """The user text of a record (without its answer)."""
        raise NotImplementedError

    def answers(self, sample: Sample) -> tuple[str, ...] | None:
        """Candidate answers without the target delimiter; ``None`` for generation."""
        raise NotImplementedError

    def labels(self, sample: Sample) -> Sequence[Any]:
        """The labels this style shows for the choices (for example ``A``, ``B``).
        Display only: targets are never matched against them."""
        return ()

    def target(self, sample: Sample, answers: tuple[str, ...] | None) -> Any:
        """The gold answer: an index into ``answers`` (the one the renderer resolved
        from the task's fields, :attr:`Sample.gold`), or the reference for generation."""
        target = sample.target
        if answers is None or target is None:
            return target
        gold = sample.gold
        if gold is None:  # a Sample built outside the renderer
            gold = resolve_gold(target, sample.choices if sample.choices is not None else answers)
        return gold

    def example_answer(self, sample: Sample) -> str:
        """The answer text shown after a few-shot example."""
        if multiple_input.is_multiple_input(sample):  # its doc_to_target, the one continuation
            return str(sample.target)
        answers = self.answers(sample)
        if answers is None or self.settings.output_type == "loglikelihood":
            target = sample.target
            if isinstance(target, (list, tuple)):
                target = target[0] if target else ""
            return "" if target is None else str(target)  # no answer, never the text 'None'

        gold = self.target(sample, answers)
        if isinstance(gold, list):  # several gold answers: an example shows the first
            gold = gold[0]
        return answers[gold]

    def _example_turns(self, shot: Sample) -> tuple[Turn, Turn, tuple[Turn, ...], str]:
        """The turns of one few-shot example, built once: the user turn opening
        the prompt (no separator), the same after a previous example, the turns
        that follow it, and the text that separates it from what comes next.

        This is lm-evaluation-harness's ``build_qa_turn``: with a ``gen_prefix``
        the answer reads ``gen_prefix + " " + answer`` (no space when either side
        has one), and an example without an answer (``""``) shows only its
        question (and prefix) with nothing after it.
        """
        settings = self.settings
        if multiple_input.is_multiple_input(shot):  # the example's own correct choice is its text
            text = multiple_input.shot_text(shot)
        else:
            text = self.question_text(shot)
        tgt = settings.fewshot_target_delimiter
        if tgt is None:
            tgt = settings.target_delimiter
        prefix = shot.gen_prefix
        has_answer = shot.target is not None and shot.target != ""
        if prefix:
            sep = tgt if requires_delimiter(text, prefix) else ""
        else:
            sep = tgt if has_answer else ""
        if has_answer:
            answer = maybe_delimit(prefix, self.example_answer(shot))
            rest: tuple[Turn, ...] = (_ice_turn("assistant", answer, sep),)
            trailing = settings.fewshot_delimiter
        else:
            rest = (_ice_turn("assistant", prefix, sep),) if prefix else ()
            trailing = "" if prefix else sep
        return (
            _ice_turn("user", text, ""),
            _ice_turn("user", text, settings.fewshot_delimiter),
            rest,
            trailing,
        )

    def shot_block(self, shots: Sequence[Sample]) -> tuple[Dialogue, str]:
        """The turns of a run of few-shot examples, in order, and the separator
        that comes before what follows them (the record's question).

        :meth:`format` builds the block once per run: a retriever that gives every
        record the same examples gives the renderer one tuple of shots, whose
        block is then reused (the cache is keyed on that tuple's identity).
        """
        cache = self.__dict__.get("_shot_turns")
        if cache is None:
            cache = self.__dict__["_shot_turns"] = {}
        fewshot_delimiter = self.settings.fewshot_delimiter
        turns: list[Turn] = []
        sep = ""
        for position, shot in enumerate(shots):
            made = cache.get(shot)
            if made is None:
                made = cache[shot] = self._example_turns(shot)
            if position == 0:
                turns.append(made[0])
            elif sep == fewshot_delimiter:
                turns.append(made[1])
            else:
                turns.append(made[0]._replace(sep=sep))
            turns.extend(made[2])
            sep = made[3]
        return tuple(turns), sep

    def format(self, sample: Sample, shots: Sequence[Sample]) -> FormattedPrompt:
        turns: list[Turn] = []
        if sample.description:
            turns.append(Turn("system", sample.description, section="begin"))
        settings = self.settings
        sep = ""
        if shots:
            last = self.__dict__.get("_last_block")
            if last is not None and last[0] is shots:
                block, sep = last[1]
            else:
                block, sep = made = self.shot_block(shots)
                if type(shots) is tuple:  # immutable: the same object means the same examples
                    self.__dict__["_last_block"] = (shots, made)
            turns.extend(block)
        if multiple_input.is_multiple_input(sample):  # one context per choice
            return multiple_input.format_multiple_input(settings, turns, sep, sample)
        text, answers = self.question_and_answers(sample)
        turns.append(Turn("user", text, sep))
        prefix = sample.gen_prefix
        if prefix:
            # The answer's start, as an assistant prefill the model continues.
            delimiter = settings.target_delimiter if requires_delimiter(text, prefix) else ""
            turns.append(Turn("assistant", prefix, delimiter))
        output_type = settings.output_type
        if output_type is None or self._generative:
            output_type = "generate_until" if answers is None or self._generative else "multiple_choice"
        if output_type == "multiple_choice":
            if answers is None:
                raise StyleError(
                    "output_type is multiple_choice but the task has no doc_to_choice",
                    key="doc_to_choice",
                    hint="set doc_to_choice to the record's list of choices",
                )
            delimiter = settings.continuation_delimiter
            if delimiter is None:
                delimiter = settings.target_delimiter
            return FormattedPrompt(
                tuple(turns),
                tuple([delimiter + a for a in answers]),
                self.target(sample, answers),
            )
        target = sample.target
        if output_type == "loglikelihood":
            if not isinstance(target, str):
                raise StyleError(
                    f"output_type loglikelihood scores doc_to_target as the continuation, "
                    f"but it gave {type(target).__name__} {target!r}",
                    key="doc_to_target",
                    hint="make doc_to_target give the text to score",
                )
            return FormattedPrompt(tuple(turns), (target,), target)
        return FormattedPrompt(tuple(turns), (), self.target(sample, None))

    def question_and_answers(self, sample: Sample) -> tuple[str, tuple[str, ...] | None]:
        """:meth:`question_text` and :meth:`answers` together, for styles that
        share work between them."""
        return self.question_text(sample), self.answers(sample)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_shot_turns", None)
        state.pop("_last_block", None)
        state.pop("_questions", None)
        state.pop("_labels_n", None)  # styles.compiled's caches
        state.pop("_layouts", None)
        return state


@dataclass
class PassthroughStyle(QAStyle):
    """lm-evaluation-harness without a template: ``doc_to_text`` is the prompt,
    the choices (if any) are the continuations."""

    def question_text(self, sample: Sample) -> str:
        return str(sample.question)

    def answers(self, sample: Sample) -> tuple[str, ...] | None:
        if sample.choices is None:
            return None
        return tuple([str(c) for c in sample.choices])


@functools.lru_cache(maxsize=256)
def _format_problem(fmt: str) -> str | None:
    """``styles.compiled.format_problem``, once per format (imported when a style is
    built: listing plugins skips the compiler)."""
    from .compiled import format_problem

    return format_problem(fmt)


def _format_fields(fmt: str) -> frozenset[str]:
    return _parsed_fields(fmt)


@functools.lru_cache(maxsize=256)
def _parsed_fields(fmt: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(fmt) if name is not None)


@dataclass
class ChoiceStyle(QAStyle):
    """A question followed by its labelled choices (multiple choice), or scored
    on the choice texts themselves (cloze) when ``answer_format`` is ``"{choice}"``.

    Plain text::

        prefix + question [+ " " + blank_marker]
        choices_header + choice_format(A, c0) + choice_delimiter + ...
        suffix

    with the three blocks joined by ``question_choice_delimiter`` and empty
    blocks left out. ``choice_format`` and ``answer_format`` may use
    ``{label}``, ``{choice}`` and ``{number}`` (1-based). A ``blank_marker``
    (cloze) is appended to the question (``blank_position: end``) or
    must already be in it (``inline``).

    The task options ``show_choices_in_prompt`` and ``choices_prefix`` (the
    names of lm-evaluation-harness's template system) are accepted
    as other names of ``show_choices`` and ``choices_header``.
    """

    name: str = "mcq"
    prefix: str = ""
    suffix: str = "Answer:"
    question_choice_delimiter: str = "\n"
    choice_delimiter: str = "\n"
    choices_header: str = ""
    choice_labels: list[str] | None = None
    choice_format: str = "{label}. {choice}"
    answer_format: str = "{label}"
    show_choices: bool = True
    blank_marker: str = ""
    blank_position: str = "end"
    generation: str = "none"
    generation_instruction: str | None = None

    def __post_init__(self) -> None:
        if self.generation not in GENERATIONS:
            raise OptionError(
                f"style {self.name!r}: generation must be one of {', '.join(GENERATIONS)}, not {self.generation!r}",
                key="generation",
                hint="none: scored on the continuations; answer: the model writes 'ANSWER: X'; "
                "cot: it reasons first, then writes 'ANSWER: X' on its last line",
            )
        self._generative = self.generation != "none"
        if self.generation_instruction is not None:
            try:
                unknown = _format_fields(self.generation_instruction) - {"letters"}
            except ValueError as exc:
                raise OptionError(
                    f"style {self.name!r}: bad generation_instruction: {exc}", key="generation_instruction"
                ) from None
            if unknown:
                raise OptionError(
                    f"style {self.name!r}: generation_instruction uses unknown field(s) " + ", ".join(sorted(unknown)),
                    key="generation_instruction",
                    hint="use {letters} (the labels, 'A,B,C,D')",
                )
        if self.blank_position not in BLANK_POSITIONS:
            raise OptionError(
                f"style {self.name!r}: blank_position must be one of {', '.join(BLANK_POSITIONS)}, "
                f"not {self.blank_position!r}",
                key="blank_position",
                hint="end: the blank marker follows the question; inline: the question contains it",
            )
        for option in ("choice_format", "answer_format"):
            fmt = getattr(self, option)
            try:
                unknown = _format_fields(fmt) - {"label", "choice", "number"}
            except ValueError as exc:
                raise OptionError(f"style {self.name!r}: bad {option} {fmt!r}: {exc}", key=option) from None
            if unknown:
                raise OptionError(
                    f"style {self.name!r}: {option} {fmt!r} uses unknown field(s) " + ", ".join(sorted(unknown)),
                    key=option,
                    hint="use {label}, {choice} or {number}",
                )
            problem = _format_problem(fmt)
            if problem is not None:
                from ..errors import cut

                raise OptionError(f"style {self.name!r}: bad {option} {cut(fmt)}: {problem}", key=option)
        shown = _format_fields(self.choice_format) if self.show_choices else set()
        self._uses_labels = "label" in shown | _format_fields(self.answer_format)
        named = shown or _format_fields(self.answer_format)
        self._numbered = "number" in named and "label" not in named
        if self.choice_labels is not None:
            self.choice_labels = [str(label) for label in self.choice_labels]
            if not self.choice_labels:
                raise OptionError(f"style {self.name!r}: choice_labels is empty", key="choice_labels")

    def _labels_for(self, sample: Sample) -> Sequence[str]:
        choices = sample.choices
        if not choices:
            raise StyleError(
                f"style {self.name!r} needs choices, but doc_to_choice gave {choices!r}",
                key="doc_to_choice",
                hint="set doc_to_choice to the record's list of choices",
            )
        labels = self.choice_labels or DEFAULT_LABELS
        if len(choices) > len(labels) and not self._uses_labels:
            # Labels are neither shown nor scored, so past Z they are simply absent:
            # a target can still be an index or a choice text.
            return [""] * len(choices)
        if len(choices) > len(labels):
            if self.choice_labels is None:
                raise StyleError(
                    f"{len(choices)} choices but the default labels stop at Z (26)",
                    key="doc_to_choice",
                    hint="give template.choice_labels with one label per choice",
                )
            raise StyleError(
                f"{len(choices)} choices but only {len(labels)} choice labels {list(labels)}",
                key="template.choice_labels",
                hint=f"give at least {len(choices)} labels",
            )
        return labels

    def labels(self, sample: Sample) -> Sequence[str]:
        """The labels the choices are shown with: the choice labels, or the numbers
        ``1``, ``2``, ... of a style that numbers its choices (``{number}``)."""
        n = len(sample.choices)
        if self._numbered:
            return [str(i) for i in range(1, n + 1)]
        return self._labels_for(sample)[:n]

    def question_and_answers(self, sample: Sample) -> tuple[str, tuple[str, ...]]:
        labels = self._labels_for(sample)
        if self._generative:
            # The record asked of the model: inspect_ai's layout (the instruction, then the
            # question and its choices, no answer prefix). Few-shot examples keep the
            # style's own layout and show their answers as it does.
            text = self._question(sample, labels if self.show_choices else (), suffix=False)
            return self._instruction(sample, labels) + "\n\n" + text, self._answers(sample, labels)
        return self._question(sample, labels), self._answers(sample, labels)

    def question_text(self, sample: Sample) -> str:
        question, choices = sample.question, sample.choices
        if type(question) is str and type(choices) is list and self._compiles():
            # the few-shot examples' text, with the function compiled per number of choices
            # (byte for byte _question's; tests/test_fastpath.py checks it)
            cache = self.__dict__.get("_questions")
            if cache is None:
                cache = self.__dict__["_questions"] = {}
            n = len(choices)
            function = cache.get(n, _UNSET)
            if function is _UNSET:
                from .compiled import question_function

                function = cache[n] = question_function(self, n)
            if function is not None:
                try:
                    text = function(question, choices)
                except Exception:  # _question gives the error
                    text = None
                if text is not None:
                    return text
        return self._question(sample, self._labels_for(sample) if self.show_choices else ())

    def _compiles(self) -> bool:
        """Whether the compiled question functions stand for :meth:`_question` (not overridden)."""
        cls = type(self)
        return cls._question is ChoiceStyle._question and cls._labels_for is ChoiceStyle._labels_for

    def answers(self, sample: Sample) -> tuple[str, ...]:
        return self._answers(sample, self._labels_for(sample))

    def _question(self, sample: Sample, labels: Sequence[str], suffix: bool = True) -> str:
        question = str(sample.question)
        marker = self.blank_marker
        if marker:
            if self.blank_position == "end":
                question = f"{question} {marker}"
            elif marker not in question:
                raise StyleError(
                    f"style {self.name!r} has blank_position inline, but the question has no blank marker {marker!r}",
                    key="doc_to_text",
                    hint="write the blank into the question, or use blank_position: end",
                )
        blocks = [self.prefix + question]
        if self.show_choices:
            fmt = self.choice_format.format
            try:
                listed = self.choice_delimiter.join(
                    [fmt(label=labels[i], choice=c, number=i + 1) for i, c in enumerate(sample.choices)]
                )
            except (TypeError, ValueError) as exc:  # a format spec the record's choice does not take
                raise _format_error(self, "choice_format", sample.choices, exc) from None
            blocks.append(self.choices_header + listed)
        if self.suffix and suffix:
            blocks.append(self.suffix)
        return self.question_choice_delimiter.join(blocks)

    def _instruction(self, sample: Sample, labels: Sequence[str]) -> str:
        """The answer instruction of the generation variants (inspect_ai's wording)."""
        letters = ",".join(self.labels(sample))
        template = self.generation_instruction
        if template is None:
            several = isinstance(sample.gold, list)
            template = GENERATION_INSTRUCTIONS[(self.generation, several)]
        return template.format(letters=letters)

    def target(self, sample: Sample, answers: tuple[str, ...] | None) -> Any:
        if not self._generative:
            return QAStyle.target(self, sample, answers)
        gold = QAStyle.target(self, sample, self._answers(sample, self._labels_for(sample)))
        labels = self.labels(sample)
        if gold is None:
            return None
        if isinstance(gold, list):
            return [labels[i] for i in gold]
        return labels[gold]

    def example_answer(self, sample: Sample) -> str:
        if not self._generative:
            return QAStyle.example_answer(self, sample)
        gold = sample.gold if sample.gold is not None else QAStyle.target(self, sample, self.answers(sample))
        if isinstance(gold, list):  # several gold answers: an example shows the first
            gold = gold[0]
        return self.answers(sample)[gold]

    def _answers(self, sample: Sample, labels: Sequence[str]) -> tuple[str, ...]:
        return self._answers_of(sample.choices, labels)

    def _answers_of(self, choices: Sequence[Any], labels: Sequence[str]) -> tuple[str, ...]:
        fmt = self.answer_format
        if fmt == "{label}":
            return tuple(labels[: len(choices)])
        if fmt == "{choice}":
            return tuple([str(c) for c in choices])
        try:
            return tuple([fmt.format(label=labels[i], choice=c, number=i + 1) for i, c in enumerate(choices)])
        except (TypeError, ValueError) as exc:  # a format spec the record's choice does not take
            raise _format_error(self, "answer_format", choices, exc) from None


def _format_error(style: ChoiceStyle, option: str, choices: Any, exc: Exception) -> StyleError:
    from ..errors import cut

    return StyleError(
        f"style {style.name!r}: {option} {cut(getattr(style, option))} cannot format the choices "
        f"{cut(choices)}: {cut(str(exc), 200)}",
        key=f"template.{option}",
        hint="a format spec such as :d or :>5 needs choices of a type that takes it; or drop the spec",
    )


BLANK_POSITIONS = ("end", "inline")

GENERATIONS = ("none", "answer", "cot")
"""``ChoiceStyle.generation``: scored on continuations (``none``), or a generation
prompt with an answer instruction (``answer``) and chain of thought (``cot``)."""

# inspect_ai 0.3.285's multiple_choice templates, one instruction per mode and
# number of gold answers; {letters} is "A,B,C,D".
GENERATION_INSTRUCTIONS: dict[tuple[str, bool], str] = {
    ("answer", False): "Answer the following multiple choice question. The entire content of your response "
    "should be of the following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of {letters}.",
    ("cot", False): "Answer the following multiple choice question. The last line of your response should be of "
    "the following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of {letters}. "
    "Think step by step before answering.",
    ("answer", True): "Answer the following multiple choice question where multiple answers may be correct. "
    "The entire content of your response should be of the following format: 'ANSWER: $LETTERS' (without quotes) "
    "where LETTERS is one or more of {letters}.",
    ("cot", True): "Answer the following multiple choice question where multiple answers may be correct. "
    "The last line of your response should be of the following format: 'ANSWER: $LETTERS' (without quotes) "
    "where LETTERS is one or more of {letters}. Think step by step before answering.",
}

# Option names of lm-evaluation-harness's template system -> ChoiceStyle's.
SEED_OPTION_NAMES = {"show_choices_in_prompt": "show_choices", "choices_prefix": "choices_header"}


def _canonical_options(options: dict[str, Any], name: str) -> dict[str, Any]:
    if not any(key in SEED_OPTION_NAMES for key in options):
        return options
    out: dict[str, Any] = {}
    for key, value in options.items():
        canonical = SEED_OPTION_NAMES.get(key, key)
        if canonical in out or (canonical != key and canonical in options):
            raise OptionError(
                f"style {name!r}: {key!r} and {canonical!r} are two names of one option",
                key=key,
                hint="give only one of them",
            )
        out[canonical] = value
    return out


def choice_style(name: str, **preset: Any) -> Callable[..., Style]:
    """A style factory for :class:`ChoiceStyle` with ``preset`` defaults.

    The task's ``template`` options override the preset; unknown options are
    errors with a did-you-mean.
    """

    def factory(*, options: dict[str, Any], settings: StyleSettings) -> ChoiceStyle:
        merged = {**preset, **_canonical_options(options, name)}
        return check_options(ChoiceStyle, merged, what=f"style {name!r}", settings=settings, name=name)

    factory.__doc__ = f"Style {name!r}: a ChoiceStyle preset {preset!r}."
    return factory
