"""lm-evaluation-harness's template system (``lm_eval/api/template.py``) in Python: ``TemplateConfig``,
``MCQTemplateConfig``, ``ClozeTemplateConfig`` and ``TemplateFactory``.

These classes are a face over the style plugins, not a second implementation.
A template config is a style name (``template_type``, e.g. ``mcq::gpqa``) plus
the options that differ from that style's preset; every attribute mirrors the
option of the installed ``format_prompt`` plugin of that name, and every prompt
is formatted by that plugin. So:

* ``TemplateFactory.from_dict({"template_type": "mcq::mystyle"})`` finds any
  installed style of the family, third-party ones included, and an unknown name
  lists the installed styles;
* ``to_dict()`` is exactly what a task file's ``template:`` key takes, and
  ``TemplateFactory.from_dict(t.to_dict()) == t``;
* a task rendered with ``template=t.to_dict()`` and ``t.format_prompt(...)`` give
  the same text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import OptionError, PluginError, PluginNotFoundError, PromptStyleError, StyleError, cut
from ..fields.choices import choice_list
from ..fields.process import compiled_field
from ..meta.builtin import Plain
from ..plugins import default_plugin_manager
from ..types import Sample, StyleSettings
from .base import ChoiceStyle, QAStyle

if TYPE_CHECKING:
    from ..plugins import PluginManager, Provider

__all__ = ["TemplateConfig", "MCQTemplateConfig", "ClozeTemplateConfig", "TemplateFactory"]


class _Preset:
    """Default of a template field: "whatever the style's preset says"."""

    def __repr__(self) -> str:
        return "<preset>"


PRESET: Any = _Preset()

# The fields every template config has that are not style options.
_NOT_OPTIONS = ("template_type", "options", "plugins")
_SETTINGS = StyleSettings(target_delimiter="", task="template")
_PLAIN = Plain()


def _manager(plugins: PluginManager | None) -> PluginManager:
    if plugins is not None:
        return plugins
    return default_plugin_manager()


def _provider(manager: PluginManager, name: str) -> Provider:
    try:
        return manager.resolve("format_prompt", name)
    except PluginNotFoundError as exc:
        installed = ", ".join(manager.names("format_prompt")) or "none"
        exc.hint = f"{exc.hint}; installed styles: {installed}" if exc.hint else f"installed styles: {installed}"
        exc.key = exc.key or "template_type"
        raise


def _build(provider: Provider, options: Mapping[str, Any]) -> Any:
    try:
        return provider.factory(options=dict(options), settings=_SETTINGS)
    except PromptStyleError:
        raise
    except Exception as exc:  # a plugin's bug
        raise PluginError(f"{provider.label()} raised {type(exc).__name__}: {exc}") from exc


def _as_choices(value: Any) -> list[Any]:
    return choice_list(value) or []  # as the renderer reads doc_to_choice values


@dataclass(kw_only=True)
class TemplateConfig:
    """A prompt template: a style name and options (base of the seed's template classes).

    Fields left unset take the style's preset values, read from the installed
    plugin. Do not instantiate this class; use :class:`MCQTemplateConfig`,
    :class:`ClozeTemplateConfig` or :class:`TemplateFactory`. A subclass of
    your own that sets no ``FAMILY`` implements :meth:`format_prompt` and
    :meth:`to_dict` itself and gets :meth:`wrap_doc_to_text` and
    :meth:`wrap_doc_to_choice` for free.
    """

    template_type: str = ""
    """The style's name, ``family::variant`` (``mcq::mmlu``, ``cloze``, ...)."""
    prefix: str = PRESET
    """Text glued directly before the question."""
    suffix: str = PRESET
    """The last block of the prompt, e.g. ``"Answer:"``; empty: none."""
    question_choice_delimiter: str = PRESET
    """Joins the question, the choices block and the suffix."""
    choice_delimiter: str = PRESET
    """Between listed choices."""
    options: dict[str, Any] = field(default_factory=dict)
    """Other options of the style, passed through as they are."""
    plugins: PluginManager | None = field(default=None, repr=False, compare=False)
    """The plugin manager to find the style in (default: the process-wide one)."""

    FAMILY: ClassVar[str] = ""
    """The ``template_type`` family this class stands for (``mcq``, ``cloze``)."""
    STYLE_ATTRIBUTES: ClassVar[Mapping[str, str]] = {}
    """Fields whose style option has another name (``show_choices_in_prompt`` -> ``show_choices``)."""
    OTHER_NAMES: ClassVar[Mapping[str, str]] = {}
    """Option names ``from_dict`` accepts for a field (the style's own spelling)."""

    # -- set-up -----------------------------------------------------------------------

    def __post_init__(self) -> None:
        if type(self) is TemplateConfig:
            raise TypeError("TemplateConfig is abstract: use MCQTemplateConfig, ClozeTemplateConfig or TemplateFactory")
        if not self.FAMILY:
            return  # a subclass of the user's own, formatting by itself
        if not self.template_type:
            self.template_type = self.FAMILY
        family = self.template_type.split("::", 1)[0]
        if family != self.FAMILY:
            raise OptionError(
                f"{type(self).__name__} is for {self.FAMILY!r} styles, not {self.template_type!r}",
                key="template_type",
                hint="TemplateFactory.from_dict chooses the class from template_type",
            )
        provider = _provider(_manager(self.plugins), self.template_type)
        try:
            preset_style = _build(provider, {})
        except PromptStyleError:
            preset_style = None  # a style that needs options: nothing to read
        preset = {name: getattr(preset_style, self.STYLE_ATTRIBUTES.get(name, name), None) for name in self._fields()}
        for name, value in preset.items():
            if getattr(self, name) is PRESET:
                object.__setattr__(self, name, list(value) if isinstance(value, (list, tuple)) else value)
        object.__setattr__(self, "_preset", preset)
        object.__setattr__(self, "_provider", provider)
        self._style()  # options are checked now, not at the first record

    @classmethod
    def _fields(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if f.name not in _NOT_OPTIONS]

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        self.__dict__.pop("_styles", None)  # rebuilt with the new value on next use

    def __getstate__(self) -> dict[str, Any]:
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        state["plugins"] = None  # a manager does not travel; the process-wide one is used
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    # -- the style behind it ----------------------------------------------------------

    def style_options(self) -> dict[str, Any]:
        """The options given to the style: the fields that differ from its preset, then ``options``."""
        if not self.FAMILY:
            return dict(self.options)
        preset = self.__dict__.get("_preset", {})
        out: dict[str, Any] = {}
        for name in self._fields():
            value = getattr(self, name)
            if value is PRESET or value == preset.get(name):
                continue
            out[name] = list(value) if isinstance(value, tuple) else value
        out.update(self.options)
        return out

    def _style(self, *, without_choices: bool = False) -> Any:
        styles = self.__dict__.setdefault("_styles", {})
        style = styles.get(without_choices)
        if style is None:
            options = self.style_options()
            if without_choices:
                options = {k: v for k, v in options.items() if k not in ("show_choices", "show_choices_in_prompt")}
                options["show_choices"] = False
            style = styles[without_choices] = _build(self.__dict__["_provider"], options)
        return style

    # -- the seed's methods -----------------------------------------------------------

    def format_prompt(self, question: Any, choices: Sequence[Any] | None = None) -> str:
        """The prompt for one question and its choices, as the style formats it.

        :raises StyleError: for more choices than labels (never a dropped choice).
        """
        if not self.FAMILY:
            raise NotImplementedError(f"{type(self).__name__} must implement format_prompt()")
        choices = list(choices) if choices else None
        sample = Sample(0, {}, question, choices)
        style = self._style()
        if choices is None and isinstance(style, QAStyle):
            if isinstance(style, ChoiceStyle):  # the layout without a choices block
                style = self._style(without_choices=True)
            return style.question_text(sample)
        text = _PLAIN.apply(style.format(sample, ()).dialogue).text
        return text if text is not None else ""

    def answers(self, choices: Sequence[Any]) -> list[str]:
        """What each choice is scored as (the continuations without the target delimiter):
        ``A``, ``B``, ... for ``mcq``, ``(A)``, ... for ``mcq::gpqa``, the texts for ``cloze``."""
        choices = list(choices)
        if not choices:
            return []
        if not self.FAMILY:
            labels = getattr(self, "choice_labels", None)
            if not labels:
                return [str(c) for c in choices]
            if len(choices) > len(labels):
                raise StyleError(
                    f"{len(choices)} choices but only {len(labels)} choice labels {list(labels)}",
                    key="template.choice_labels",
                )
            return list(labels[: len(choices)])
        style = self._style()
        sample = Sample(0, {}, "", choices)
        if isinstance(style, QAStyle):
            return list(style.answers(sample))
        return list(style.format(sample, ()).continuations)

    def _should_show_choices(self) -> bool:
        """Whether the prompt lists the choices (so ``wrap_doc_to_text`` extracts them)."""
        return True

    def to_dict(self) -> dict[str, Any]:
        """The ``template:`` mapping of a task file: ``template_type`` and the options
        that differ from the style's preset. ``TemplateFactory.from_dict`` reads it back."""
        if not self.FAMILY:
            raise NotImplementedError(f"{type(self).__name__} must implement to_dict()")
        return {"template_type": self.template_type, **self.style_options()}

    def wrap_doc_to_text(self, original_doc_to_text: Any, original_doc_to_choice: Any = None) -> Callable[..., str]:
        """``doc -> prompt``: extract with the user's specs (field names, Jinja,
        callables, as :func:`~prompt_style.process_field`), then format.

        The specs are compiled once, here.
        """
        text = compiled_field(original_doc_to_text, "doc_to_text") if original_doc_to_text is not None else None
        choice = None
        if original_doc_to_choice is not None and self._should_show_choices():
            choice = compiled_field(original_doc_to_choice, "doc_to_choice")

        def wrapped_doc_to_text(doc: Mapping[str, Any]) -> str:
            question = text(doc) if text is not None else ""
            choices = _as_choices(choice(doc)) if choice is not None else None
            return self.format_prompt(question, choices)

        return wrapped_doc_to_text

    def wrap_doc_to_choice(self, original_doc_to_choice: Any) -> Callable[..., list[str]]:
        """``doc -> list``: what each of the record's choices is scored as
        (:meth:`answers`): the labels for multiple choice, the texts for cloze."""
        choice = compiled_field(original_doc_to_choice, "doc_to_choice") if original_doc_to_choice is not None else None

        def wrapped_doc_to_choice(doc: Mapping[str, Any]) -> list[str]:
            if choice is None:
                return []
            return self.answers(_as_choices(choice(doc)))

        return wrapped_doc_to_choice


@dataclass(kw_only=True)
class MCQTemplateConfig(TemplateConfig):
    """A multiple-choice template: labelled choices, scored on the labels.

    Any ``mcq`` style: ``mcq`` (built in, the MMLU layout), ``mcq::mmlu``,
    ``mcq::gpqa``, ``mcq::numbered`` or a third-party ``mcq::...``.
    """

    template_type: str = "mcq"
    choice_labels: list[str] | None = PRESET
    """One label per choice; ``None``: ``A`` … ``Z`` as needed (a record with more
    choices than labels is an error naming it)."""
    choice_format: str = PRESET
    """How a choice is listed: ``{label}``, ``{choice}``, ``{number}``."""
    show_choices_in_prompt: bool = PRESET
    """List the choices in the prompt."""
    choices_header: str = PRESET
    """Text before the first choice (``"Choices:\\n"`` for ``mcq::gpqa``)."""
    answer_format: str = PRESET
    """What each choice is scored as: ``{label}``, ``({label})``, ``{number}``."""

    FAMILY: ClassVar[str] = "mcq"
    STYLE_ATTRIBUTES: ClassVar[Mapping[str, str]] = {"show_choices_in_prompt": "show_choices"}
    OTHER_NAMES: ClassVar[Mapping[str, str]] = {"show_choices": "show_choices_in_prompt"}

    def _should_show_choices(self) -> bool:
        return self.show_choices_in_prompt is not False

    def to_cloze(self, **overrides: Any) -> ClozeTemplateConfig:
        """The ``cloze`` template with this template's prefix, labels, choice format
        and choice listing; ``overrides`` set any other field (``blank_marker="[MASK]"``,
        ``template_type="cloze::qa"``)."""
        carried = {
            "prefix": self.prefix,
            "choice_labels": self.choice_labels,
            "choice_format": self.choice_format,
            "show_choices": self.show_choices_in_prompt,
        }
        carried = {k: v for k, v in carried.items() if v is not None}
        return ClozeTemplateConfig(**{"template_type": "cloze", "plugins": self.plugins, **carried, **overrides})


@dataclass(kw_only=True)
class ClozeTemplateConfig(TemplateConfig):
    """A cloze (fill-in-the-blank) template: scored on the choice texts.

    Any ``cloze`` style: ``cloze`` (the blank and the options), ``cloze::pure``
    (the blank alone), ``cloze::qa`` (lm-evaluation-harness's ``Question: ...
    Answer:``), ``cloze::options`` or a third-party ``cloze::...``.
    """

    template_type: str = "cloze"
    blank_marker: str = PRESET
    """The blank, e.g. ``"______"``; empty: none."""
    show_choices: bool = PRESET
    """List the options."""
    choice_labels: list[str] | None = PRESET
    """Labels of the listed options; ``None``: ``A`` … ``Z``."""
    blank_position: str = PRESET
    """``end`` (after the question) or ``inline`` (the question holds the marker)."""
    choices_prefix: str = PRESET
    """Text before the first option (``"\\nOptions: "``)."""
    choice_format: str = PRESET
    """How an option is listed: ``{label}``, ``{choice}``, ``{number}``."""
    answer_format: str = PRESET
    """What each choice is scored as (``{choice}``: its text)."""

    FAMILY: ClassVar[str] = "cloze"
    STYLE_ATTRIBUTES: ClassVar[Mapping[str, str]] = {"choices_prefix": "choices_header"}
    OTHER_NAMES: ClassVar[Mapping[str, str]] = {
        "choices_header": "choices_prefix",
        "show_choices_in_prompt": "show_choices",
    }

    def _should_show_choices(self) -> bool:
        return self.show_choices is not False

    def to_mcq(self, **overrides: Any) -> MCQTemplateConfig:
        """The ``mcq`` template with this template's prefix, labels and choice
        format; ``overrides`` set any other field (``suffix="Answer (letter):"``,
        ``template_type="mcq::gpqa"``)."""
        carried = {"prefix": self.prefix, "choice_labels": self.choice_labels, "choice_format": self.choice_format}
        carried = {k: v for k, v in carried.items() if v is not None}
        return MCQTemplateConfig(**{"template_type": "mcq", "plugins": self.plugins, **carried, **overrides})


_CLASSES: dict[str, type[TemplateConfig]] = {"mcq": MCQTemplateConfig, "cloze": ClozeTemplateConfig}


class TemplateFactory:
    """Makes template configs: from a ``template:`` mapping, or the named presets."""

    @staticmethod
    def from_dict(config: Mapping[str, Any], *, plugins: PluginManager | None = None) -> TemplateConfig:
        """The template a task file's ``template:`` mapping describes.

        ``template_type`` (default ``mcq``) names any installed ``mcq`` or
        ``cloze`` style (``mcq::mmlu``, ``mcq::gpqa``, ``cloze::pure``,
        third-party ``mcq::...``); the other keys override its preset.

        :raises PluginNotFoundError: for a style nobody installed, listing the installed ones.
        :raises OptionError: for an unknown option (with did-you-mean) or a bad value.
        """
        if not isinstance(config, Mapping):
            raise OptionError(f"a template is a mapping with template_type and options, not {cut(config)}")
        name = config.get("template_type", "mcq")
        if not isinstance(name, str) or not name:
            raise OptionError(f"template_type must be a style name, not {name!r}", key="template_type")
        cls = _CLASSES.get(name.split("::", 1)[0])
        if cls is None:
            manager = _manager(plugins)
            _provider(manager, name)  # an unknown name fails here, listing the installed styles
            family = [n for n in manager.names("format_prompt") if n.split("::", 1)[0] in _CLASSES]
            raise OptionError(
                f"style {name!r} is installed, but the template classes stand for mcq and cloze styles only",
                key="template_type",
                hint=f"use it in a task file as template: {name}; mcq and cloze styles: {', '.join(family)}",
            )
        fields = set(cls._fields())
        typed: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in config.items():
            if key == "template_type":
                continue
            target = key if key in fields else cls.OTHER_NAMES.get(key)
            if target is None:
                extra[key] = value
            elif target in typed:
                raise OptionError(f"{key!r} and {target!r} are two names of one option", key=key)
            else:
                typed[target] = value
        return cls(template_type=name, options=extra, plugins=plugins, **typed)

    @staticmethod
    def create_mmlu_style(*, plugins: PluginManager | None = None) -> MCQTemplateConfig:
        """``mcq::mmlu``: ``question``, ``A. choice`` lines, ``Answer:``; scored on `` A``, `` B``, ..."""
        return MCQTemplateConfig(template_type="mcq::mmlu", plugins=plugins)

    @staticmethod
    def create_gpqa_style(*, plugins: PluginManager | None = None) -> MCQTemplateConfig:
        """``mcq::gpqa``: lm-evaluation-harness's GPQA layout, scored on `` (A)``, `` (B)``, ..."""
        return MCQTemplateConfig(template_type="mcq::gpqa", plugins=plugins)

    @staticmethod
    def create_numbered_style(
        num_choices: int | None = None, *, plugins: PluginManager | None = None
    ) -> MCQTemplateConfig:
        """Choices numbered ``1.``, ``2.``, ... and scored on the numbers (the built-in
        ``mcq`` with number formats). With ``num_choices`` the labels are ``"1"`` …
        ``str(num_choices)``, and a record with more choices is an error."""
        if num_choices is None:
            return MCQTemplateConfig(
                template_type="mcq", choice_format="{number}. {choice}", answer_format="{number}", plugins=plugins
            )
        if isinstance(num_choices, bool) or not isinstance(num_choices, int) or num_choices < 1:
            raise OptionError(f"num_choices must be a positive integer, not {num_choices!r}", key="num_choices")
        return MCQTemplateConfig(
            template_type="mcq", choice_labels=[str(i + 1) for i in range(num_choices)], plugins=plugins
        )

    @staticmethod
    def create_cloze_with_options(*, plugins: PluginManager | None = None) -> ClozeTemplateConfig:
        """``cloze``: ``question ______`` and the labelled options; scored on the texts."""
        return ClozeTemplateConfig(template_type="cloze", plugins=plugins)

    @staticmethod
    def create_pure_cloze(*, plugins: PluginManager | None = None) -> ClozeTemplateConfig:
        """``cloze::pure``: ``question ______`` alone; scored on the texts."""
        return ClozeTemplateConfig(template_type="cloze::pure", plugins=plugins)

    @staticmethod
    def convert_template(template: TemplateConfig, target_type: str, **overrides: Any) -> TemplateConfig:
        """``template.to_cloze()`` or ``template.to_mcq()``; the template itself when
        it already is of ``target_type`` (``mcq`` or ``cloze``)."""
        if target_type == "cloze":
            if isinstance(template, ClozeTemplateConfig):
                return template
            if isinstance(template, MCQTemplateConfig):
                return template.to_cloze(**overrides)
        elif target_type == "mcq":
            if isinstance(template, MCQTemplateConfig):
                return template
            if isinstance(template, ClozeTemplateConfig):
                return template.to_mcq(**overrides)
        else:
            raise OptionError(f"target_type must be 'mcq' or 'cloze', not {target_type!r}")
        raise OptionError(f"cannot convert a {type(template).__name__} to {target_type!r}")
