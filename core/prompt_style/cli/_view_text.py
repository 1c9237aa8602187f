"""``prompt-style view`` on a terminal: one block per record and variant, or the
differences between two variants."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from ._visible import Painter, special_pattern

__all__ = ["show", "diff", "specials_of", "offsets_of"]


def specials_of(task: Any) -> Any:
    """The special-token pattern of a task's meta template: its tokenizer's tokens
    when it has one, and the usual chat-format tokens."""
    tokenizer = getattr(task.renderer.meta, "tokenizer", None)
    tokens = list(getattr(tokenizer, "added_tokens", None) or ()) if tokenizer is not None else []
    return special_pattern(tokens)


def offsets_of(task: Any, prompt: Any) -> list[tuple[int, int]] | None:
    """The character span of each of the prompt's tokens, when the meta template has a
    tokenizer that gives them (``token_offsets``) and they match the prompt's token ids."""
    meta = task.renderer.meta
    tokenizer = getattr(meta, "tokenizer", None)
    offsets = getattr(tokenizer, "token_offsets", None)
    if offsets is None or prompt.text is None or prompt.token_ids is None:
        return None
    try:
        spans = offsets(prompt.text, add_special_tokens=bool(getattr(meta, "add_special_tokens", False)))
    except Exception:  # a tool's view of a plugin's optional method: never fatal
        return None
    return spans if len(spans) == len(prompt.token_ids) else None


def _quoted(value: Any, painter: Painter, specials: Any) -> str:
    if isinstance(value, str):
        return '"' + painter.visible(value, specials).replace("\n", "") + '"'
    return json.dumps(value, ensure_ascii=False)


def _header(variant: Any, prompt: Any, painter: Painter, specials: Any) -> str:
    parts = [f"record {prompt.index}"]
    if prompt.doc_id is not None:
        parts.append(f"doc_id {json.dumps(prompt.doc_id, ensure_ascii=False)}")
    if prompt.turn is not None:
        parts.append(f"turn {prompt.turn}")
    target = f"target {_quoted(prompt.target, painter, specials)}"
    if isinstance(prompt.target, int) and not isinstance(prompt.target, bool) and prompt.continuations:
        if 0 <= prompt.target < len(prompt.continuations):
            target += f" → {_quoted(prompt.continuations[prompt.target], painter, specials)}"
    parts.append(target)
    task = variant.loaded
    plugins = task.plugins
    shots = prompt.fewshot_indices
    where = [
        task.name,
        f"style {plugins['format_prompt']['name']}",
        f"meta {plugins['apply_meta_template']['name']}",
        f"{len(shots) if shots is not None else 0}-shot" + (f" {list(shots)}" if shots else ""),
    ]
    line = "=== " + " · ".join(parts)
    return painter.paint("heading", line) + "\n" + painter.paint("dim", "    " + " · ".join(where)) + "\n"


def _section(title: str, painter: Painter) -> str:
    return painter.paint("heading", f"--- {title}") + "\n"


def _body(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _dialogue(prompt: Any, painter: Painter, specials: Any) -> str:
    turns = prompt.dialogue
    if not turns:
        return ""
    lines = [_section(f"dialogue: {len(turns)} turn(s), before the meta template", painter)]
    for turn in turns:
        role = turn.role or "text"
        tag = role + (f" · {turn.section}" if turn.section else "")
        if turn.sep:
            tag += f" · sep {_quoted(turn.sep, painter, specials)}"
        content = turn.content if isinstance(turn.content, str) else json.dumps(list(turn.content), ensure_ascii=False)
        lines.append(painter.paint("dim", f"[{tag}] ") + _body(painter.visible(content, specials)))
    return "".join(lines)


def _model_input(task: Any, prompt: Any, painter: Painter, specials: Any) -> str:
    """What the model gets: the text, or the messages; every candidate or context."""
    out = []
    if prompt.candidates is not None:
        for candidate in prompt.candidates:
            out.append(_section(f"candidate {json.dumps(candidate.label, ensure_ascii=False)}", painter))
            out.append(_text_or_messages(candidate.text, candidate.messages, painter, specials))
        return "".join(out)
    if prompt.contexts is not None:
        for number, context in enumerate(prompt.contexts):
            out.append(_section(f"context {number} (scored with continuation {number})", painter))
            text, messages = (context, None) if isinstance(context, str) else (None, context)
            out.append(_text_or_messages(text, messages, painter, specials))
        return "".join(out)
    if prompt.text is not None:
        out.append(_section(f"the prompt: text, {len(prompt.text):,} characters", painter))
    out.append(_text_or_messages(prompt.text, prompt.messages, painter, specials))
    offsets = offsets_of(task, prompt)
    if prompt.token_ids is not None:
        out.append(_section(f"tokens: {len(prompt.token_ids):,}", painter))
        if offsets is not None:
            out.append(_body(painter.visible(prompt.text, specials, offsets)))
        out.append(painter.paint("dim", json.dumps(prompt.token_ids)) + "\n")
    return "".join(out)


def _text_or_messages(text: str | None, messages: Any, painter: Painter, specials: Any) -> str:
    if text is not None:
        return _body(painter.visible(text, specials))
    if not messages:
        return ""
    lines = [_section(f"the prompt: {len(messages)} message(s)", painter)]
    for message in messages:
        content = message.get("content")
        content = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        rest = {k: v for k, v in message.items() if k not in ("role", "content")}
        tag = str(message.get("role")) + (" " + json.dumps(rest, ensure_ascii=False) if rest else "")
        lines.append(painter.paint("dim", f"[{tag}] ") + _body(painter.visible(content, specials)))
    return "".join(lines)


def _scored(prompt: Any, painter: Painter, specials: Any) -> str:
    out = []
    if prompt.continuations:
        out.append(_section("continuations, each scored after the prompt", painter))
        for number, continuation in enumerate(prompt.continuations):
            gold = prompt.target == number and not isinstance(prompt.target, bool)
            mark = painter.paint("good", "✓") if gold else " "
            out.append(f"{mark} {number} {_quoted(continuation, painter, specials)}\n")
    if prompt.until:
        stops = " ".join(_quoted(stop, painter, specials) for stop in prompt.until)
        out.append(_section(f"until (stop sequences): {stops}", painter))
    return "".join(out)


def block(variant: Any, prompt: Any, painter: Painter, *, dialogue: bool = True) -> str:
    """Everything about one prompt of one variant."""
    task = variant.loaded
    specials = specials_of(task)
    out = [_header(variant, prompt, painter, specials)]
    if variant.label:
        out.insert(0, painter.paint("heading", f"##### {variant.label}") + "\n")
    if dialogue:
        out.append(_dialogue(prompt, painter, specials))
    out.append(_model_input(task, prompt, painter, specials))
    out.append(_scored(prompt, painter, specials))
    return "".join(out)


def show(variants: Sequence[Any], records: Sequence[int], painter: Painter, *, dialogue: bool = True) -> str:
    """Each record in each variant, one after the other."""
    out = []
    for index in records:
        for variant in variants:
            for prompt in variant.prompts.get(index, ()):
                out.append(block(variant, prompt, painter, dialogue=dialogue))
                out.append("\n")
    return "".join(out)


def _diffable(variant: Any, prompt: Any) -> list[str]:
    """The lines compared: the visible prompt, continuations, target, stop sequences
    (markers and no colour, so that a changed space or newline shows)."""
    plain = Painter(False)
    text = _model_input(variant.loaded, prompt, plain, specials_of(variant.loaded)) + _scored(
        prompt, plain, specials_of(variant.loaded)
    )
    target = f"target {_quoted(prompt.target, plain, specials_of(variant.loaded))}\n"
    return (text + target).splitlines()


def diff(variants: Sequence[Any], records: Sequence[int], painter: Painter) -> str:
    """What changes from the first variant to the second, record by record."""
    first, second = variants
    out = []
    for index in records:
        left, right = first.prompts.get(index, []), second.prompts.get(index, [])
        for turn in range(max(len(left), len(right))):
            a = _diffable(first, left[turn]) if turn < len(left) else []
            b = _diffable(second, right[turn]) if turn < len(right) else []
            title = f"=== record {index}" + (f" · turn {turn}" if len(left) > 1 or len(right) > 1 else "")
            if a == b:
                out.append(painter.paint("heading", title) + f": the same in {first.label} and {second.label}\n")
                continue
            out.append(painter.paint("heading", title) + "\n")
            for line in difflib.unified_diff(a, b, fromfile=first.label, tofile=second.label, lineterm="", n=2):
                if line.startswith(("---", "+++")):
                    out.append(painter.paint("heading", line) + "\n")
                elif line.startswith("-"):
                    out.append(painter.paint("minus", line) + "\n")
                elif line.startswith("+"):
                    out.append(painter.paint("plus", line) + "\n")
                elif line.startswith("@@"):
                    out.append(painter.paint("dim", line) + "\n")
                else:
                    out.append(line + "\n")
    return "".join(out)
