"""Prompts with what is invisible made visible: spaces, tabs, newlines, odd
whitespace and special tokens, for ``prompt-style view`` (terminal and HTML).

:func:`segments` cuts a text into ``(kind, text)`` pieces; the terminal painter and
the HTML page each draw the kinds their own way, so both show the same thing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["segments", "Painter", "MARKS", "special_pattern", "token_pieces", "odd_mark"]

MARKS = {
    "space": "·",
    "tab": "→",
    "newline": "↵",
    "cr": "␍",
    "nbsp": "⍽",
}
"""How each kind of whitespace is drawn (an odd character is drawn as ``⟨U+XXXX⟩``)."""

# Special tokens most chat formats write as text; a tokenizer's own list is used when given.
_HEURISTIC = (
    r"<\|[^|<>\s]{1,40}\|>",  # <|im_start|>, <|eot_id|>, <|start_header_id|>...
    r"</?s>",
    r"\[/?INST\]",
    r"\[/?(?:SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\]",
    r"<(?:start_of_turn|end_of_turn|bos|eos|pad|unk)>",
    r"<<SYS>>|<</SYS>>",
)
_ODD = frozenset("\u0085\u2028\u2029\u200b\u200c\u200d\u2060\ufeff")


def special_pattern(tokens: Iterable[str] = ()) -> re.Pattern[str]:
    """A pattern matching special tokens: ``tokens`` (a tokenizer's), longest first,
    and the usual chat-format tokens."""
    known = sorted({t for t in tokens if t}, key=len, reverse=True)
    return re.compile("|".join([*(re.escape(t) for t in known), *_HEURISTIC]))


def _odd(char: str) -> bool:
    if char in _ODD:
        return True
    category = unicodedata.category(char)
    return category in ("Zs", "Zl", "Zp", "Cf", "Cc") and char not in " \t\n\r\u00a0"


def segments(text: str, specials: re.Pattern[str] | None = None) -> list[tuple[str, str]]:
    """``text`` as ``(kind, text)`` pieces: ``text``, ``special`` (a special token),
    ``space``, ``tab``, ``newline``, ``cr``, ``nbsp`` and ``odd`` (any other invisible
    or unusual whitespace character, one per piece). Joined, the pieces' texts are
    ``text`` again."""
    out: list[tuple[str, str]] = []
    position = 0
    matches = list(specials.finditer(text)) if specials is not None else []
    for match in [*matches, None]:
        end = match.start() if match is not None else len(text)
        _plain(text[position:end], out)
        if match is None:
            break
        if match.end() > match.start():
            out.append(("special", match.group()))
        position = match.end()
    return out


def _plain(text: str, out: list[tuple[str, str]]) -> None:
    run: list[str] = []
    for char in text:
        kind = {" ": "space", "\t": "tab", "\n": "newline", "\r": "cr", "\u00a0": "nbsp"}.get(char)
        if kind is None and _odd(char):
            kind = "odd"
        if kind is None:
            run.append(char)
            continue
        if run:
            out.append(("text", "".join(run)))
            run = []
        out.append((kind, char))
    if run:
        out.append(("text", "".join(run)))


def odd_mark(char: str) -> str:
    return f"⟨U+{ord(char):04X}⟩"


class Painter:
    """Draws segments for a terminal: ANSI colours (``color``) or plain text. Markers
    are drawn dim, special tokens in bold magenta; in plain text they are the markers
    alone, so a pipe or a file shows the same characters."""

    RESET = "\033[0m"
    STYLES = {
        "mark": "\033[2;36m",
        "special": "\033[1;35m",
        "odd": "\033[1;31m",
        "heading": "\033[1m",
        "dim": "\033[2m",
        "minus": "\033[31m",
        "plus": "\033[32m",
        "good": "\033[1;32m",
        "token0": "\033[48;5;236m",
        "token1": "\033[48;5;238m",
    }

    def __init__(self, color: bool) -> None:
        self.color = color

    def paint(self, style: str, text: str) -> str:
        if not self.color or not text:
            return text
        return f"{self.STYLES[style]}{text}{self.RESET}"

    def visible(
        self, text: str, specials: re.Pattern[str] | None, offsets: Sequence[tuple[int, int]] | None = None
    ) -> str:
        """``text`` with its whitespace and special tokens visible; each newline is
        drawn as ``↵`` and then kept, so lines stay lines. With token ``offsets``,
        token boundaries too: alternating backgrounds, or ``│`` between tokens in plain text."""
        if offsets:
            return self._tokens(text, specials, offsets)
        return "".join(self._piece(kind, piece) for kind, piece in segments(text, specials))

    def _piece(self, kind: str, piece: str) -> str:
        if kind == "text":
            return piece
        if kind == "special":
            return self.paint("special", piece)
        if kind == "odd":
            return self.paint("odd", odd_mark(piece))
        mark = self.paint("mark", MARKS[kind])
        return mark + "\n" if kind == "newline" else mark

    def _tokens(self, text: str, specials: re.Pattern[str] | None, offsets: Sequence[tuple[int, int]]) -> str:
        parts = [self.visible(piece, specials) for piece in token_pieces(text, offsets)]
        if self.color:
            return "".join(self.paint(f"token{number % 2}", piece) for number, piece in enumerate(parts))
        return "│".join(parts)


def token_pieces(text: str, offsets: Sequence[tuple[int, int]]) -> list[str]:
    """``text`` cut at token boundaries: one piece per token that covers text (a
    token the tokenizer adds covers none; characters a tokenizer's offsets skip,
    such as SentencePiece's leading spaces, go with the next token; tokens sharing
    characters, such as the bytes of one character, are one piece)."""
    pieces = []
    cursor = 0
    for _, end in offsets:
        end = min(end, len(text))
        if end <= cursor:
            continue
        pieces.append(text[cursor:end])
        cursor = end
    if cursor < len(text):
        pieces.append(text[cursor:])
    return pieces
