"""Provenance: what every output line says about how its prompt was made.

A JSON Lines line of ``prompt-style render --format jsonl`` carries, after the
prompt's own keys (:meth:`RenderedPrompt.to_json`), the record's own id, the
few-shot examples shown, the task, style, meta template, retriever and seed, the
distributions (and versions) of every plugin used, and a **fingerprint**: the
SHA-256 of the line itself without ``index`` and ``fingerprint``, as
:func:`dumps_line` writes it. So the fingerprint

- changes whenever any byte of the prompt or any of those fields changes (a new
  plugin version included), and is the same in every process, on every machine,
  whatever ``PYTHONHASHSEED`` (nothing in it depends on hashing or on time);
- does not depend on the record's position (``index``), so the same record
  rendered from a reordered or filtered file keeps it;
- can be checked from the line alone (:func:`verify_fingerprint`).

Everything per task is worked out once (:class:`Provenance`); per record the cost
is the hash of the line and a few joins: the prompt's own keys come as UTF-8 from a
:class:`~prompt_style.lines.PromptEncoder`, which encodes what the task's prompts
share once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from .errors import RenderError
from .lines import PromptEncoder, json_strings
from .safe.json_lines import dumps_line, encode_str, json_utf8, safe_utf8

__all__ = ["Provenance", "PROVENANCE_KEYS", "fingerprint", "verify_fingerprint"]

PROVENANCE_KEYS = (
    "doc_id",
    "fewshot_indices",
    "task",
    "style",
    "meta",
    "retriever",
    "seed",
    "fewshot_split",
    "distributions",
    "fingerprint",
)
"""The keys :meth:`Provenance.line` adds after the prompt's own, in this order."""

_RESERVED = frozenset(PROVENANCE_KEYS)
_CONTS, _TARGET, _DOC_ID = b', "continuations": ', b', "target": ', b', "doc_id": '


def fingerprint(content: str) -> str:
    """``sha256:`` and the hex digest of ``content`` (a JSON line without ``index``
    and ``fingerprint``) encoded as UTF-8."""
    return "sha256:" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def verify_fingerprint(line: str | Mapping[str, Any]) -> bool:
    """Whether a line of ``render --format jsonl`` (or ``chat --format json``), as text
    or parsed, still matches its ``fingerprint``: nothing in it was changed since it
    was written. A line without a fingerprint does not match."""
    value = json.loads(line) if isinstance(line, str) else dict(line)
    if not isinstance(value, dict):
        return False
    claimed = value.pop("fingerprint", None)
    value.pop("index", None)
    return isinstance(claimed, str) and claimed == fingerprint(dumps_line(value))


_HASHED_START = 256
"""A shared start of the members at least this long is hashed once (shorter ones: copying
the hash's state costs about what hashing them does)."""


class Provenance:
    """The provenance of one task's prompts, worked out once: the task-level fields
    and the JSON they add to every line.

    :param task: the task's name.
    :param plugins: ``RenderedPrompt.plugins``: the plugin used per hook.
    :param seed: the seed random retrieval uses.
    :param fewshot_split: the split ``fewshot_indices`` point into.
    """

    def __init__(self, *, task: str, plugins: Mapping[str, Any], seed: int | None, fewshot_split: str | None) -> None:
        self.fields: dict[str, Any] = {
            "task": task,
            "style": _name(plugins.get("format_prompt")),
            "meta": _name(plugins.get("apply_meta_template")),
            "retriever": _name(plugins.get("retrieve_examples")),
            "seed": seed,
            "fewshot_split": fewshot_split,
            "distributions": distributions(plugins),
        }
        """The task-level fields, as every line carries them."""
        # ', "task": ..., "distributions": {...}': the same text json.dumps gives them in a line
        self._tail = dumps_line(self.fields)[1:-1]
        self._ids: Any = object()  # the fewshot_indices last seen, and what follows the doc_id for them
        self._after_id = b""
        self._encoder: PromptEncoder | None = None
        # the hash of "{" and the shared start of the members last seen (a prompt made by
        # the fast path, under a choice order: lines that do not take the fused loop)
        self._start = b""
        self._start_hash: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # (a hash object does not pickle: a worker process hashes the start again)
        return {**self.__dict__, "_start": b"", "_start_hash": None}

    def fields_of(self, prompt: Any) -> dict[str, Any]:
        """Every provenance field of ``prompt`` (:data:`PROVENANCE_KEYS`), fingerprint included."""
        line = json.loads(self.line(prompt))
        return {key: line[key] for key in PROVENANCE_KEYS}

    def fingerprint(self, prompt: Any) -> str:
        """The fingerprint of ``prompt``'s line (see the module's documentation)."""
        return self.fields_of(prompt)["fingerprint"]

    def line(self, prompt: Any, default: Callable[[Any], Any] | None = None) -> str:
        """``prompt``'s JSON line (no newline): ``prompt.to_json()``, then the
        provenance keys.

        :param default: for values JSON cannot hold, as ``json.dumps``'s.
        :raises RenderError: when the style's extra fields use a provenance key's name.
        """
        encoder = self._encoder
        if encoder is None or default is not None:
            encoder = PromptEncoder(None if default is None else lambda index: default)
            if default is None:
                self._encoder = encoder
        return self.line_bytes(prompt, encoder)[:-1].decode("utf-8")

    def line_bytes(self, prompt: Any, encoder: PromptEncoder) -> bytes:
        """:meth:`line` as UTF-8, newline included, the prompt's own keys made by
        ``encoder`` (one per task and stream: it keeps what the prompts share, and its
        ``default_for`` says what JSON cannot hold).

        :raises RenderError: when the style's extra fields use a provenance key's name.
        """
        members = encoder.common_members(prompt)
        if members is None:
            members = encoder.more_members(prompt, _RESERVED)
        if members is not None:
            index = prompt.index
        else:  # any other shape: to_json() and json.dumps
            value = prompt.to_json()
            index = value.pop("index")
            if not _RESERVED.isdisjoint(value):  # a style's extra field named like one of ours
                clash = sorted(_RESERVED.intersection(value))
                raise RenderError(
                    f"the style reports a field named {clash[0]!r}, which output lines keep for provenance",
                    index=index,
                    hint="rename the style's extra field",
                )
            members = encoder.members_of(value, index)
        ids = prompt.fewshot_indices
        if ids is not self._ids:  # the same tuple for every record of most tasks: its JSON made once
            self._ids = ids
            self._after_id = self._after_doc_id(ids)
        doc_id = prompt.doc_id
        # the line without index and fingerprint is "{" + members + rest; hashed without joining them
        own = b', "doc_id": %d' % index if doc_id is None and type(index) is int else None
        if own is None:
            own = safe_utf8(", " + _doc_id(doc_id, index))
        start = encoder.shared_before
        if len(start) >= _HASHED_START and members.startswith(start):
            # the text every prompt of the task starts with, hashed once
            if start is not self._start:
                self._start, self._start_hash = start, hashlib.sha256(b"{" + start)
            digest = self._start_hash.copy()
            digest.update(memoryview(members)[len(start) :])
        else:
            digest = hashlib.sha256(b"{")
            digest.update(members)
        digest.update(own)
        digest.update(self._after_id)
        head = b'{"index": %d, ' % index if type(index) is int else safe_utf8(f'{{"index": {index}, ')
        sha = digest.hexdigest().encode()
        return b"".join((head, members, own, self._after_id[:-1], b', "fingerprint": "sha256:', sha, b'"}\n'))

    def _after_doc_id(self, ids: Any) -> bytes:
        """What a line holds after its ``doc_id``, closing brace included, for these
        ``fewshot_indices``."""
        shown = "null" if ids is None else "[" + ", ".join(map(str, ids)) + "]"
        return safe_utf8(f', "fewshot_indices": {shown}, {self._tail}}}')

    def fast_line(self, encoder: PromptEncoder, shared: Any) -> Callable[..., bytes | None] | None:
        """:meth:`line_bytes` for the fast path's prompts that share ``shared`` (a
        :class:`~prompt_style.fastpath.DeferredDialogue` knowing its ``head`` and
        ``tail``), made from what varies: ``fn(index, own, continuations, target)``
        gives the line of the prompt with those fields and the text ``head + own +
        tail`` (no ``doc_id`` of its own); ``fn(..., more)`` with the JSON members of the
        prompt's ``extra`` fields (``b', "answer_choices": [...]'``), which follow the
        target (and ``until``); or
        ``None`` when that prompt is not of the common shape (its line is then
        ``line_bytes(prompt)``). The text before the prompt's own, the same in every
        line, is hashed once. ``None`` when ``shared`` does not qualify."""
        until = shared.until
        if shared.head is None or shared.tail is None or (until is not None and type(until) is not tuple):
            return None
        if until is not None and not all(type(stop) is str for stop in until):
            return None
        before, after, chat_after = encoder.shared_pieces(shared)
        after_id = self._after_doc_id(shared.fewshot_indices)[:-1]
        fresh = hashlib.sha256(b"{" + before).copy  # the hash of every line, up to its own text
        rest = encoder.rest
        strings = json_strings
        join = b"".join
        # the continuations last seen (kept alive, so that their identity is never another
        # object's) and their JSON: the same tuple for every record of most tasks
        last: list[Any] = [None, b""]
        stops = b"" if until is None else b', "until": ' + strings(until)

        def line(
            index: int,
            text: str,
            continuations: Any,
            target: Any,
            more: bytes = b"",
            after_id: bytes = after_id,
            after: bytes = after,
        ) -> bytes | None:
            if type(index) is not int or type(text) is not str:
                return None
            own = json_utf8(text)[1:-1]
            digits = b"%d" % index
            kind = type(target)
            if kind is int or kind is str:  # rest()'s work, inline, for the commonest targets
                if continuations is last[0]:
                    conts = last[1]
                else:
                    try:
                        conts = strings(continuations)
                    except TypeError:
                        return None
                    if type(continuations) is tuple:
                        last[0] = continuations
                        last[1] = conts
                if kind is int:
                    gold = b"%d" % target
                else:
                    gold = json_utf8(target)
                # (each shape its own join: one tuple of pieces unpacked into a shared join
                # costs about 1,000 instructions a line, 1.2% of a line's)
                if chat_after is None:
                    middle = join((own, after, _CONTS, conts, _TARGET, gold, stops, more, _DOC_ID, digits, after_id))
                else:
                    middle = join(
                        (
                            own,
                            after,
                            own,
                            chat_after,
                            _CONTS,
                            conts,
                            _TARGET,
                            gold,
                            stops,
                            more,
                            _DOC_ID,
                            digits,
                            after_id,
                        )
                    )
            else:
                try:
                    tail = rest(index, continuations, target, until)
                except TypeError:
                    return None
                if chat_after is None:
                    middle = join((own, after, tail, more, _DOC_ID, digits, after_id))
                else:
                    middle = join((own, after, own, chat_after, tail, more, _DOC_ID, digits, after_id))
            digest = fresh()
            digest.update(middle)
            digest.update(b"}")
            sha = digest.hexdigest().encode()
            return join((b'{"index": ', digits, b", ", before, middle, b', "fingerprint": "sha256:', sha, b'"}\n'))

        if getattr(shared, "selected", None) is None:
            return line
        # Examples chosen per record: the text is the whole text (the shared head is
        # empty), and the fewshot_indices are the record's: _after_doc_id's bytes, their
        # list written with one %-format per number of examples
        # (not named rest: line() calls the encoder's rest())
        member, rest_of_line = self._after_doc_id(None)[:-1].split(b"null", 1)  # (the first null is theirs)
        rest_of_line = rest_of_line.replace(b"%", b"%%")
        formats: dict[int, bytes] = {}

        def after_indices(ids: tuple[int, ...]) -> bytes:
            # the %-format of a line's bytes after its doc_id for this number of examples
            made = formats[len(ids)] = member + b"[" + b", ".join([b"%d"] * len(ids)) + b"]" + rest_of_line
            return made

        def selected_line(index: int, text: str, continuations: Any, target: Any, ids: tuple[int, ...]) -> bytes | None:
            # ids: int pool indices (the selection takes no other), written with %d
            made = formats.get(len(ids)) or after_indices(ids)
            return line(index, text, continuations, target, b"", made % ids)

        if not shared.selected.chat:
            return selected_line
        if shared.selected.textless:
            # messages and no text: "text" is null, and the record's messages' JSON is its
            # examples' (pre_json), then its question's content in its message
            opening = b'"text": null, "messages": '
            fresh_messages = hashlib.sha256(b"{" + opening).copy

            def selected_messages_line(
                index: int,
                text: str,
                continuations: Any,
                target: Any,
                ids: tuple[int, ...],
                own: str,
                pre_json: bytes,
                post_json: bytes,
            ) -> bytes | None:
                if type(index) is not int or type(own) is not str:
                    return None
                try:
                    tail = rest(index, continuations, target, until)
                except TypeError:
                    return None
                made = formats.get(len(ids)) or after_indices(ids)
                digits = b"%d" % index
                middle = join((pre_json, json_utf8(own)[1:-1], post_json, tail, _DOC_ID, digits, made % ids))
                digest = fresh_messages()
                digest.update(middle)
                digest.update(b"}")
                sha = digest.hexdigest().encode()
                return join((b'{"index": ', digits, b", ", opening, middle, b', "fingerprint": "sha256:', sha, b'"}\n'))

            return selected_messages_line
        # a chat format's: the messages' JSON is the record's, its examples' messages
        # (the selection's, pre_json) and its question's content (own) in its message
        text_after = json_utf8(shared.tail)[1:-1] + b'", "messages": '

        def selected_chat_line(
            index: int,
            text: str,
            continuations: Any,
            target: Any,
            ids: tuple[int, ...],
            own: str,
            pre_json: bytes,
            post_json: bytes,
        ) -> bytes | None:
            made = formats.get(len(ids)) or after_indices(ids)
            if type(own) is not str:
                return None
            messages = join((text_after, pre_json, json_utf8(own)[1:-1], post_json))
            return line(index, text, continuations, target, b"", made % ids, messages)

        return selected_chat_line


def _doc_id(doc_id: Any, index: int) -> str:
    if doc_id is None:
        return f'"doc_id": {index}'
    if type(doc_id) is str:
        text = encode_str(doc_id)
        if "\u2028" in text or "\u2029" in text or "\x85" in text or not text.isprintable():
            text = dumps_line(doc_id)
        return f'"doc_id": {text}'
    if type(doc_id) is int:
        return f'"doc_id": {doc_id}'
    return f'"doc_id": {dumps_line(doc_id)}'


def _name(info: Any) -> Any:
    return info.get("name") if isinstance(info, Mapping) else None


def distributions(plugins: Mapping[str, Any]) -> dict[str, str | None]:
    """``{distribution: version}`` of every plugin in ``plugins`` (per hook, as
    ``RenderedPrompt.plugins`` holds them; field extractors per key; a tokenizer
    under its meta template), sorted by name."""
    found: dict[str, str | None] = {}

    def add(info: Any) -> None:
        if not isinstance(info, Mapping):
            return
        dist = info.get("distribution")
        if isinstance(dist, str):
            found[dist] = info.get("version")
        for nested in info.values():
            if isinstance(nested, Mapping):
                add(nested)

    for info in plugins.values():
        add(info)
    return dict(sorted(found.items()))
