"""``prompt-style view --html``: one self-contained page (inline CSS and JavaScript,
nothing fetched) with every variant side by side for the same records.

The page keeps each prompt's exact characters in the document, so that selecting
and copying a prompt gives the prompt: whitespace markers (``·``, ``→``, ``↵``) and
token boundaries are drawn by CSS over the real characters, and can be switched off.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from ._view_text import offsets_of, specials_of
from ._visible import odd_mark, segments, token_pieces

__all__ = ["page"]

_CSS = """
:root { --bg: #fbfbf8; --fg: #1d1d1f; --mark: #3b8ea5; --special: #a3319f; --line: #d9d9d2;
        --tok0: #e9eef9; --tok1: #f8ecd9; --good: #1c7c3a; --dim: #6b6b6b; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       background: var(--bg); }
header { position: sticky; top: 0; z-index: 2; background: #1d2b36; color: #fff; padding: 10px 16px;
         display: flex; gap: 24px; align-items: center; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; }
header label { font-size: 13px; cursor: pointer; }
main { padding: 12px 16px 40px; }
section.record { margin: 0 0 28px; }
section.record > h2 { font-size: 15px; margin: 12px 0 8px; }
.grid { display: grid; gap: 12px; grid-template-columns: repeat(var(--columns), minmax(340px, 1fr));
        overflow-x: auto; }
.cell { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; min-width: 0; }
.cell h3 { font-size: 13px; margin: 0 0 2px; }
.meta { color: var(--dim); font-size: 12px; margin-bottom: 8px; }
.meta code { font-size: 12px; }
.label { font-size: 12px; font-weight: 600; color: var(--dim); margin: 10px 0 4px; text-transform: uppercase;
         letter-spacing: .04em; }
pre.prompt, .turn pre, li pre { margin: 0; white-space: pre-wrap; word-break: break-word;
         font: 13px/1.5 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre.prompt { background: #fcfcfa; border: 1px solid var(--line); border-radius: 4px; padding: 8px; }
.ws { position: relative; }
body.marks .ws::before { position: absolute; left: 0; top: 0; color: var(--mark); pointer-events: none; }
body.marks .ws.sp::before { content: "\\00b7"; left: 50%; transform: translateX(-50%); opacity: .75; }
body.marks .ws.tab::before { content: "\\2192"; }
body.marks .ws.nl::before { content: "\\21b5"; position: static; }
body.marks .ws.cr::before { content: "\\240d"; position: static; }
body.marks .ws.nbsp::before { content: "\\237d"; }
.odd { color: #c0392b; font-weight: 600; }
.odd::after { content: attr(data-mark); }
.special { color: var(--special); font-weight: 700; }
body.tokens .tok { border-radius: 2px; }
body.tokens .tok.t0 { background: var(--tok0); }
body.tokens .tok.t1 { background: var(--tok1); }
details { margin-top: 8px; }
summary { cursor: pointer; color: var(--dim); font-size: 12px; }
.turn { border-left: 3px solid var(--line); padding-left: 8px; margin: 6px 0; }
.turn .role { font-size: 11px; color: var(--dim); }
ol.continuations { margin: 0; padding-left: 28px; }
ol.continuations li.gold { color: var(--good); font-weight: 700; }
ol.continuations li.gold::marker { content: "\\2713  "; }
.missing { color: var(--dim); font-style: italic; }
"""

_JS = """
for (const [id, cls] of [["marks", "marks"], ["tokens", "tokens"]]) {
  const box = document.getElementById(id);
  if (!box) continue;
  const apply = () => document.body.classList.toggle(cls, box.checked);
  box.addEventListener("change", apply);
  apply();
}
"""

_KIND_CLASS = {"space": "sp", "tab": "tab", "newline": "nl", "cr": "cr", "nbsp": "nbsp"}


def _visible_html(text: str, specials: Any) -> str:
    out = []
    for kind, piece in segments(text, specials):
        escaped = html.escape(piece, quote=False)
        if kind == "text":
            out.append(escaped)
        elif kind == "special":
            out.append(f'<span class="special">{escaped}</span>')
        elif kind == "odd":
            # the character itself (zero width or odd), then its code point, drawn by CSS
            out.append(f'<span class="odd" data-mark="{odd_mark(piece)}">{escaped}</span>')
        else:
            out.append(f'<span class="ws {_KIND_CLASS[kind]}">{escaped}</span>')
    return "".join(out)


def _prompt_html(text: str, specials: Any, offsets: Sequence[tuple[int, int]] | None, ids: Any) -> str:
    if not offsets:
        return _visible_html(text, specials)
    pieces = token_pieces(text, offsets)
    spans = [(a, b) for a, b in offsets if b > a]
    out = []
    for number, piece in enumerate(pieces):
        token = ids[number] if ids is not None and number < len(ids) and len(spans) == len(pieces) else None
        title = f' title="token {number}: id {token}"' if token is not None else ""
        out.append(f'<span class="tok t{number % 2}"{title}>{_visible_html(piece, specials)}</span>')
    return "".join(out)


def _messages_html(messages: Any, specials: Any) -> str:
    out = []
    for message in messages or ():
        content = message.get("content")
        content = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        out.append(
            f'<div class="turn"><div class="role">{html.escape(str(message.get("role")))}</div>'
            f"<pre>{_visible_html(content, specials)}</pre></div>"
        )
    return "".join(out)


def _cell(variant: Any, prompt: Any | None, columns_label: str) -> str:
    title = html.escape(variant.label or columns_label)
    if prompt is None:
        return f'<div class="cell"><h3>{title}</h3><p class="missing">no such record</p></div>'
    task = variant.loaded
    specials = specials_of(task)
    plugins = task.plugins
    shots = prompt.fewshot_indices or ()
    facts = [
        f"<code>{html.escape(task.name)}</code>",
        f"style <code>{html.escape(str(plugins['format_prompt']['name']))}</code>",
        f"meta <code>{html.escape(str(plugins['apply_meta_template']['name']))}</code>",
        f"{len(shots)}-shot" + (f" {list(shots)}" if shots else ""),
    ]
    if prompt.turn is not None:
        facts.append(f"turn {prompt.turn}")
    body = [
        f'<div class="cell" data-variant="{html.escape(variant.label, quote=True)}">',
        f"<h3>{title}</h3>",
        f'<div class="meta">{" · ".join(facts)}</div>',
    ]
    offsets = offsets_of(task, prompt)
    if prompt.candidates is not None:
        for candidate in prompt.candidates:
            body.append(f'<div class="label">candidate {html.escape(json.dumps(candidate.label))}</div>')
            body.append(_text_or_messages(candidate.text, candidate.messages, specials, None, None))
    elif prompt.contexts is not None:
        for number, context in enumerate(prompt.contexts):
            body.append(f'<div class="label">context {number}</div>')
            text, messages = (context, None) if isinstance(context, str) else (None, context)
            body.append(_text_or_messages(text, messages, specials, None, None))
    else:
        what = f"{len(prompt.text):,} characters" if prompt.text is not None else "messages"
        if prompt.token_ids is not None:
            what += f", {len(prompt.token_ids):,} tokens"
        body.append(f'<div class="label">the prompt ({what})</div>')
        body.append(_text_or_messages(prompt.text, prompt.messages, specials, offsets, prompt.token_ids))
    if prompt.continuations:
        body.append('<div class="label">continuations</div><ol class="continuations" start="0">')
        for number, continuation in enumerate(prompt.continuations):
            gold = ' class="gold"' if prompt.target == number and not isinstance(prompt.target, bool) else ""
            body.append(f"<li{gold}><pre>{_visible_html(continuation, specials)}</pre></li>")
        body.append("</ol>")
    target = prompt.target
    shown = _visible_html(target, specials) if isinstance(target, str) else html.escape(json.dumps(target))
    if isinstance(target, int) and not isinstance(target, bool) and 0 <= target < len(prompt.continuations):
        shown += " \u2192 " + _visible_html(prompt.continuations[target], specials)
    body.append(f'<div class="label">target</div><pre class="target">{shown}</pre>')
    if prompt.until:
        stops = ", ".join(f"<code>{_visible_html(stop, specials)}</code>" for stop in prompt.until)
        body.append(f'<div class="label">until</div><div>{stops}</div>')
    if prompt.dialogue:
        body.append(f"<details><summary>dialogue before the meta template: {len(prompt.dialogue)} turn(s)</summary>")
        for turn in prompt.dialogue:
            content = turn.content if isinstance(turn.content, str) else json.dumps(list(turn.content))
            sep = f" · sep <code>{_visible_html(turn.sep, specials)}</code>" if turn.sep else ""
            role = html.escape(f"{turn.role or 'text'} · {turn.section}" if turn.section else turn.role or "text")
            shown = _visible_html(content, specials)
            body.append(f'<div class="turn"><div class="role">{role}{sep}</div><pre>{shown}</pre></div>')
        body.append("</details>")
    body.append("</div>")
    return "".join(body)


def _text_or_messages(text: Any, messages: Any, specials: Any, offsets: Any, ids: Any) -> str:
    if text is not None:
        return f'<pre class="prompt">{_prompt_html(text, specials, offsets, ids)}</pre>'
    return _messages_html(messages, specials)


def page(variants: Sequence[Any], records: Sequence[int]) -> str:
    """The whole page: a header with the switches, then one row per record (each
    request of a multi-turn record), one column per variant."""
    from .. import __version__

    tokens = any(v.prompts.get(i) and v.prompts[i][0].token_ids is not None for v in variants for i in records)
    title = " vs ".join(v.label for v in variants if v.label) or (variants[0].loaded.name if variants else "prompts")
    rows = []
    for index in records:
        turns = max((len(v.prompts.get(index, ())) for v in variants), default=0)
        for turn in range(turns):
            cells = []
            for variant in variants:
                requests = variant.prompts.get(index, [])
                cells.append(_cell(variant, requests[turn] if turn < len(requests) else None, variant.task))
            heading = f"record {index}" + (f" · request {turn}" if turns > 1 else "")
            rows.append(
                f'<section class="record" id="record-{index}-{turn}"><h2>{heading}</h2>'
                f'<div class="grid" style="--columns: {len(variants)}">{"".join(cells)}</div></section>'
            )
    switches = '<label><input type="checkbox" id="marks" checked> whitespace markers</label>'
    if tokens:
        switches += ' <label><input type="checkbox" id="tokens" checked> token boundaries</label>'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>prompt-style view: {html.escape(title)}</title>"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'\">"
        f"<style>{_CSS}</style></head>"
        '<body class="marks tokens">'
        f"<header><h1>prompt-style view · {html.escape(title)}</h1>{switches}"
        f'<span style="margin-left:auto;font-size:12px;opacity:.7">prompt-style {html.escape(__version__)}</span>'
        "</header>"
        f"<main>{''.join(rows)}</main>"
        f"<script>{_JS}</script></body></html>\n"
    )
