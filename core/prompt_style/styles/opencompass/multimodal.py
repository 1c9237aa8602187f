"""Multimodal prompts: AISBench's ``MMPromptTemplate``, a template type of the
``opencompass`` style (:data:`~prompt_style.styles.opencompass.TEMPLATE_TYPES`).

A dialogue item with ``prompt_mm`` (instead of ``prompt``) becomes a turn whose
content is a tuple of OpenAI-style content parts. ``prompt_mm`` maps a modality
(``text``, ``image``, ``audio``, ``video``) to the part to build for it, with
``{field}`` placeholders::

    {"text":  {"type": "text", "text": "{anything}\\nQuestion: {question}"},
     "image": {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,{image}"}}}

A record field may hold several pieces of content, each wrapped in AISBench's
segment markers::

    <AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>cat.jpg<AIS_CONTENT_TAG>

Then the item gives one part per segment, in the record's order: a text
segment fills the ``text`` part (the marked field's placeholder standing for
the segment's text, the other placeholders for the record's fields), an image
segment fills the ``image`` part's ``{image}``, and so on for ``audio`` and
``video``. Without markers the item gives the parts of ``prompt_mm`` in its
order, filled from the record's fields (a field holding a list gives one part
per item: several images). The content itself may be a URL (``https://``,
``file://``, a path) or base64 data: the template's part says which
(``"url": "{image}"`` or ``"url": "data:image/jpeg;base64,{image}"``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import OptionError, StyleError
from ...types import Dialogue
from .template import FieldText, Ice, Item, PromptTemplate, TemplateConfigError, register_template_type

__all__ = [
    "AIS_CONTENT_TAG",
    "AIS_MARKERS",
    "MODALITIES",
    "MMPromptTemplate",
    "fill_placeholders",
    "mm_parts",
    "split_segments",
]

AIS_CONTENT_TAG = "<AIS_CONTENT_TAG>"
AIS_MARKERS: Mapping[str, str] = {
    "text": "<AIS_TEXT_START>",
    "image": "<AIS_IMAGE_START>",
    "audio": "<AIS_AUDIO_START>",
    "video": "<AIS_VIDEO_START>",
}
"""Modality -> the marker that starts its segment (AISBench's ``utils/prompt/prompt.py``)."""

MODALITIES = tuple(AIS_MARKERS)
_STARTS = tuple(AIS_MARKERS.values())
_PART_KEYS = {"text": "text", "image": "image_url", "audio": "audio_url", "video": "video_url"}
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def fill_placeholders(text: str, values: Mapping[str, Any]) -> str:
    """OpenCompass's ``{field}`` filling (as :class:`FieldText`): a known field becomes
    ``str(value)``, an unknown placeholder stays as written, values are not scanned again."""
    return FieldText(text).fill(values) if "{" in text else text


def split_segments(value: str) -> list[tuple[str, str]]:
    """``[(modality, content), ...]`` of a string with AISBench segment markers.

    :raises StyleError: for text outside any marker (it would be lost).
    """
    segments = []
    for piece in value.split(AIS_CONTENT_TAG):
        for modality, marker in AIS_MARKERS.items():
            if piece.startswith(marker):
                segments.append((modality, piece[len(marker) :]))
                break
        else:
            if piece.strip():
                raise StyleError(
                    f"{piece[:40]!r} is outside any segment marker",
                    hint="wrap every piece as <AIS_TEXT_START>...<AIS_CONTENT_TAG> (or IMAGE, AUDIO, VIDEO)",
                )
    return segments


def _is_marked(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_STARTS)


def _fill(part: Any, values: Mapping[str, Any]) -> Any:
    """A deep copy of ``part`` with the placeholders of every string filled."""
    if isinstance(part, str):
        return fill_placeholders(part, values)
    if isinstance(part, Mapping):
        return {key: _fill(value, values) for key, value in part.items()}
    if isinstance(part, list):
        return [_fill(value, values) for value in part]
    return copy.deepcopy(part)


def _placeholders(part: Any) -> set[str]:
    if isinstance(part, str):
        return set(_PLACEHOLDER.findall(part))
    if isinstance(part, Mapping):
        return set().union(*(_placeholders(v) for v in part.values())) if part else set()
    if isinstance(part, list):
        return set().union(*(_placeholders(v) for v in part)) if part else set()
    return set()


def _check_prompt_mm(prompt_mm: Any, where: str) -> None:
    if isinstance(prompt_mm, list):
        return
    if not isinstance(prompt_mm, Mapping) or not prompt_mm:
        raise OptionError(f"{where}.prompt_mm must be a mapping from modality to content part", key="template")
    for modality, part in prompt_mm.items():
        if modality not in MODALITIES:
            raise OptionError(
                f"{where}.prompt_mm has modality {modality!r}; the modalities are {', '.join(MODALITIES)}",
                key="template",
            )
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            raise OptionError(
                f"{where}.prompt_mm.{modality} must be a content part with a type, "
                'for example {"type": "image_url", "image_url": {"url": "{image}"}}',
                key="template",
            )


def _unfilled(part: Mapping[str, Any], modality: str) -> None:
    left = _placeholders({k: v for k, v in part.items() if k != "type"})
    if left and modality != "text":
        names = ", ".join(sorted(left))
        raise StyleError(
            f"the {modality} part has no value for {{{names}}}",
            hint=f"give the record a field {sorted(left)[0]!r}, or mark the content with {AIS_MARKERS[modality]}",
        )


def mm_parts(prompt_mm: Mapping[str, Any] | Sequence[Any], record: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The content parts of one ``prompt_mm`` item for ``record`` (see the module docs).

    :raises StyleError: for a segment whose modality ``prompt_mm`` lacks, for
        text outside the markers, and for a media part left with an unfilled placeholder.
    """
    if isinstance(prompt_mm, list):  # already a list of parts
        return tuple(_fill(part, record) for part in prompt_mm)
    text_part = prompt_mm.get("text")
    text_names = list(dict.fromkeys(_PLACEHOLDER.findall(_text_of(text_part)))) if text_part else []
    marked = [name for name in text_names if _is_marked(record.get(name))]
    if marked:
        name = binding = marked[0]  # the seed's convention: the text part names the marked field
    else:
        # AISBench's datasets put the segments in a field of their own ('content').
        marked = [key for key, value in record.items() if _is_marked(value)]
        if len(marked) > 1:
            raise StyleError(
                f"fields {', '.join(map(repr, marked))} all hold segment markers",
                hint="name the one to use in the text part, e.g. {content}",
            )
        if not marked:
            return _direct_parts(prompt_mm, record)
        name = marked[0]
        binding = text_names[0] if text_names else None
    parts = []
    for modality, content in split_segments(record[name]):
        part = prompt_mm.get(modality)
        if part is None:
            raise StyleError(
                f"field {name!r} holds a {modality} segment, but the item's prompt_mm has no {modality} part",
                hint=f"add prompt_mm.{modality}, for example "
                f'{{"type": "{_PART_KEYS[modality]}", "{_PART_KEYS[modality]}": {{"url": "{{{modality}}}"}}}}',
            )
        if modality == "text":
            if binding is None:
                raise StyleError(
                    f"field {name!r} holds a text segment, but the text part has no placeholder for it",
                    hint='for example "text": {"type": "text", "text": "{question}"}',
                )
            values = {**record, binding: content}
        else:
            values = {**record, modality: content}
        filled = _fill(part, values)
        _unfilled(filled, modality)
        parts.append(filled)
    return tuple(parts)


def _text_of(part: Any) -> str:
    """All strings of a part, for finding its placeholders in order."""
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        return "\n".join(_text_of(v) for k, v in part.items() if k != "type")
    if isinstance(part, list):
        return "\n".join(_text_of(v) for v in part)
    return ""


def _direct_parts(prompt_mm: Mapping[str, Any], record: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """Without segment markers: the parts of ``prompt_mm`` in order, filled from the record."""
    parts = []
    for modality, part in prompt_mm.items():
        lists = [name for name in _placeholders(part) if isinstance(record.get(name), (list, tuple))]
        if modality != "text" and len(lists) == 1:  # several images (videos, ...) in one field
            for item in record[lists[0]]:
                parts.append(_fill(part, {**record, lists[0]: item}))
            continue
        filled = _fill(part, record)
        _unfilled(filled, modality)
        parts.append(filled)
    return tuple(parts)


@dataclass(frozen=True)
class MMItem(Item):
    """A role item whose content is ``prompt_mm``: content parts, not text."""

    prompt_mm: Any = None


@register_template_type
class MMPromptTemplate(PromptTemplate):
    """A dialogue template whose role items may carry ``prompt_mm`` (content parts)
    instead of ``prompt``; the rest is OpenCompass's ``PromptTemplate``."""

    type_name = "MMPromptTemplate"

    def __init__(self, template: Any, ice_token: str | None = None, sep_token: str | None = None, *, key: str) -> None:
        super().__init__(template, ice_token, sep_token, key=key)
        self._require_dialogue(
            "an MMPromptTemplate needs a dialogue template whose items carry prompt_mm",
            hint="for example round: [{role: HUMAN, prompt_mm: {text: {type: text, text: '{question}'}}}]",
        )
        # A prompt_mm item's text is the marker fill() swaps for its parts: found by marker.
        items = [item for section in self.dialogue.values() for item in section]
        self._mm_items = {item.pieces[0].source: item for item in items if isinstance(item, MMItem)}

    def role_item(self, raw: Mapping[str, Any], section: str, key: str) -> Item:
        if "prompt_mm" not in raw:
            return super().role_item(raw, section, key)
        unknown = [k for k in raw if k not in ("role", "prompt_mm", "fallback_role")]
        if unknown:
            raise TemplateConfigError(
                f"a prompt_mm item has unknown key(s) {', '.join(map(str, unknown))}",
                key=f"{key}.{unknown[0]}",
                hint="a prompt_mm item has role, prompt_mm and optionally fallback_role",
            )
        item = super().role_item({k: v for k, v in raw.items() if k != "prompt_mm"}, section, key)
        try:
            _check_prompt_mm(raw["prompt_mm"], key)
        except OptionError as exc:
            raise TemplateConfigError(exc.message, key=f"{key}.prompt_mm") from None
        # The text is a marker that fill() swaps for the parts (the engine builds text items).
        marker = FieldText(f"\x00prompt_mm:{key}\x00")
        return MMItem(item.role, (marker,), item.fallback_role, section, key, raw["prompt_mm"])

    def fill(
        self,
        entry: Mapping[str, Any],
        ice: Ice,
        label: Any = None,
        override: Mapping[str, Any] | None = None,
    ) -> Dialogue:
        turns = super().fill(entry, ice, label, override)
        items = self._mm_items
        if not items:
            return turns
        values = {**entry, **override} if override else entry
        out = []
        for turn in turns:
            item = items.get(turn.content) if isinstance(turn.content, str) else None
            if item is not None:
                try:
                    turn = turn._replace(content=mm_parts(item.prompt_mm, values))
                except StyleError as exc:
                    raise exc.locate(key=item.key) from None
            out.append(turn)
        return tuple(out)
