"""Token-level prompts: the text of any meta template, encoded by a local tokenizer.

``tokenize(A) + tokenize(B) != tokenize(A + B)``: a prompt is only exact once
it is tokens. Any meta template that gives text (``plain``, ``chatml``, a
model's own chat template, ...) is wrapped, once per task, by
:class:`TokenizedMeta` when the meta options name a ``tokenizer``. The wrapper
encodes the whole rendered text in one call, as transformers'
``apply_chat_template(tokenize=True)`` does, so the special tokens a template
writes become their ids and are never re-tokenized piece by piece. For multiple
choice it places the context/continuation boundary at token level with
lm-evaluation-harness's rule, and it reports, per record, what a careful
evaluator wants to know (special-token text inside contents, a BOS it did not
add twice, continuations whose tokens differ from tokenizing them alone or that
change the context's tokens).

With ``tokenize=turns`` the ids are instead those of each turn's text tokenized
on its own, concatenated (:mod:`prompt_style.meta.pieces` says what a turn's
text is), as some models' training tokenized conversations; each record's
report then says where that differs from tokenizing the whole text.

Tokenizer files are read by loaders from the ``load_tokenizer`` hook (the
``prompt-style-tokenizers`` distribution reads ``tokenizer.json``, local
Hugging Face tokenizer folders and SentencePiece ``.model`` files).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import OptionError, PromptStyleError, TokenizerError
from ..plugins import install_hint
from ..types import Dialogue, ModelInput, Tokenizer, Turn
from .pieces import Piece, checked_pieces, message_pieces, piece_roles
from .roles import api_role

if TYPE_CHECKING:
    from ..plugins import PluginManager

__all__ = [
    "TOKEN_OPTIONS",
    "TOKENIZE_MODES",
    "TokenizedMeta",
    "split_token_options",
    "resolve_tokenizer",
    "with_tokenizer",
]

TOKEN_OPTIONS = ("tokenizer", "tokenizer_format", "add_special_tokens", "prefix_token_id", "tokenize")
"""Meta options the core takes for itself (with every other ``tokenizer_*``
option, which goes to the tokenizer loader with its prefix removed); the meta
template never sees them."""

_PREFIX = "tokenizer_"

TOKENIZE_MODES = ("whole", "turns")
"""``tokenize=whole`` (the default): the prompt's text tokenized at once, as
transformers' ``apply_chat_template(tokenize=True)`` does; ``tokenize=turns``: each
turn's text tokenized on its own and the ids concatenated, as openchat's training did."""


def _tokenize_mode(options: Mapping[str, Any], meta: Any, name: str) -> str:
    mode = options.get("tokenize", "whole")
    if mode not in TOKENIZE_MODES:
        extra = (
            " (the tokenizer option already asks for token ids; this one says how the text is cut first)"
            if isinstance(mode, bool)
            else ""
        )
        raise OptionError(
            f"option 'tokenize' must be whole or turns, not {mode!r}{extra}",
            key="meta.tokenize",
            hint="whole: the prompt's text tokenized at once (transformers' apply_chat_template(tokenize=True)); "
            "turns: each turn's text tokenized on its own, the ids concatenated",
        )
    if mode == "turns" and not hasattr(meta, "pieces") and not hasattr(meta, "apply_messages"):
        raise OptionError(
            f"meta template {name!r} cannot be tokenized turn by turn: it does not say where its turns "
            "begin and end (it has no pieces() method)",
            key="meta.tokenize",
            hint="use tokenize=whole, or a meta template that gives its pieces (plain, chatml, opencompass, hf)",
        )
    return mode


def split_token_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Separate the tokenizer's options from the meta template's own.

    :returns: ``(meta_options, token_options)``.
    """
    meta: dict[str, Any] = {}
    token: dict[str, Any] = {}
    for key, value in options.items():
        if key in TOKEN_OPTIONS or key.startswith(_PREFIX):
            token[key] = value
        else:
            meta[key] = value
    return meta, token


def _loaders(manager: PluginManager) -> dict[str, Any]:
    return {name: manager.resolve("load_tokenizer", name) for name in manager.names("load_tokenizer")}


def resolve_tokenizer(
    manager: PluginManager, path: str | Path, *, fmt: str | None = None, options: Mapping[str, Any] | None = None
) -> tuple[Tokenizer, dict[str, Any]]:
    """Load the tokenizer at ``path`` with the loader that claims it (or the one named ``fmt``).

    :returns: the tokenizer and a JSON-ready description of where it came from.
    :raises TokenizerError: the path is missing, no loader or two loaders claim it,
        or the loader fails.
    """
    where = {"key": "meta.tokenizer"}
    path = Path(path).expanduser()
    if not path.exists():
        raise TokenizerError(
            f"tokenizer not found: {path}",
            hint="give a tokenizer.json, a SentencePiece .model file, or a local model folder",
            **where,
        )
    if fmt is not None:
        try:
            provider = manager.resolve("load_tokenizer", fmt)
        except PromptStyleError as exc:
            raise exc.locate(key="meta.tokenizer_format") from None
    else:
        loaders = _loaders(manager)
        if not loaders:
            raise TokenizerError(
                f"no tokenizer loader is installed to read {path}",
                hint=f"install a tokenizer loader, such as {install_hint('prompt-style-tokenizers')}",
                **where,
            )
        claims = [name for name, provider in loaders.items() if provider.factory.detect(path)]
        if len(claims) > 1:
            raise TokenizerError(
                f"{path} is claimed by more than one tokenizer loader: {', '.join(claims)}",
                hint="name one with --meta-option tokenizer_format=NAME",
                **where,
            )
        if not claims:
            raise TokenizerError(
                f"no tokenizer loader understands {path}",
                hint=f"known loaders: {', '.join(sorted(loaders))}; a folder needs tokenizer.json or tokenizer.model",
                **where,
            )
        provider = loaders[claims[0]]
    loader_options = {k[len(_PREFIX) :]: v for k, v in (options or {}).items()}
    try:
        tokenizer = provider.factory.load(path, loader_options)
    except PromptStyleError as exc:
        raise exc.locate(**where) from None
    except Exception as exc:  # a loader's bug, or a library error on a bad file
        raise TokenizerError(f"{provider.label()} could not load {path}: {type(exc).__name__}: {exc}", **where) from exc
    info = {**provider.describe(), "path": str(path)}
    return tokenizer, info


def _flag(options: Mapping[str, Any], key: str) -> bool | None:
    value = options.get(key, "auto")
    if value is None or value == "auto":
        return None
    if isinstance(value, bool):
        return value
    raise OptionError(f"option {key!r} must be true, false or auto, not {value!r}", key=f"meta.{key}")


def with_tokenizer(
    manager: PluginManager, meta: Any, token_options: Mapping[str, Any], *, name: str
) -> tuple[Any, dict[str, Any]]:
    """Wrap a built meta template so that it also gives token ids.

    :param meta: the meta template object, already built from its own options.
    :param token_options: the options :func:`split_token_options` set apart.
    :param name: the meta template's name, for messages.
    :returns: the wrapped meta template and the tokenizer's description.
    """
    options = dict(token_options)
    if "tokenizer" not in options:
        given = ", ".join(sorted(options))
        raise OptionError(
            f"meta option {given} needs a tokenizer",
            key=f"meta.{sorted(options)[0]}",
            hint="add --meta-option tokenizer=PATH (a tokenizer.json, a .model file or a model folder)",
        )
    tokenize = _tokenize_mode(options, meta, name)
    options.pop("tokenize", None)
    path = options.pop("tokenizer")
    fmt = options.pop("tokenizer_format", None)
    add_special_tokens = _flag(options, "add_special_tokens")
    options.pop("add_special_tokens", None)
    prefix_token_id = options.pop("prefix_token_id", None)
    if prefix_token_id is not None and (isinstance(prefix_token_id, bool) or not isinstance(prefix_token_id, int)):
        raise OptionError(
            f"option 'prefix_token_id' must be a token id, not {prefix_token_id!r}", key="meta.prefix_token_id"
        )
    if not isinstance(path, (str, Path)) or not str(path):
        raise OptionError(f"option 'tokenizer' must be a path, not {path!r}", key="meta.tokenizer")
    tokenizer, info = resolve_tokenizer(manager, path, fmt=fmt, options=options)
    wrapped = TokenizedMeta(
        meta,
        tokenizer,
        add_special_tokens=add_special_tokens,
        prefix_token_id=prefix_token_id,
        name=name,
        tokenize=tokenize,
    )
    info["add_special_tokens"] = wrapped.add_special_tokens
    if tokenize != "whole":
        info["tokenize"] = tokenize
    return wrapped, info


class TokenizedMeta:
    """A meta template whose text is also given as token ids (built once per task).

    :param meta: the meta template that gives the text.
    :param tokenizer: the loaded tokenizer.
    :param add_special_tokens: add the tokenizer's own special tokens (usually a
        BOS) around the text. ``None`` (``auto``): not for chat formats, whose
        templates write their own (transformers' ``apply_chat_template``), and
        yes for plain text (``tokenizer(text)``, lm-evaluation-harness's default).
        Never when the text already starts with the BOS: no double BOS.
    :param prefix_token_id: the token scored before a continuation whose context
        is empty (lm-evaluation-harness's ``prefix_token_id``); default: the BOS,
        else the EOS.
    :param tokenize: ``whole`` (the text tokenized at once) or ``turns`` (each
        turn's text tokenized on its own, the ids concatenated; the special tokens
        the tokenizer adds, such as a BOS, added once around them).
    """

    def __init__(
        self,
        meta: Any,
        tokenizer: Tokenizer,
        *,
        add_special_tokens: bool | None = None,
        prefix_token_id: int | None = None,
        name: str = "",
        tokenize: str = "whole",
    ) -> None:
        if tokenize not in TOKENIZE_MODES:
            raise OptionError(f"option 'tokenize' must be whole or turns, not {tokenize!r}", key="meta.tokenize")
        self.tokenize = tokenize
        self._inner = meta
        self._tokenizer = tokenizer
        self._name = name or type(meta).__name__
        chat = bool(getattr(meta, "chat", False))
        self.add_special_tokens = (not chat) if add_special_tokens is None else add_special_tokens
        if prefix_token_id is None:
            prefix_token_id = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        self.prefix_token_id = prefix_token_id
        self._setup()

    def _setup(self) -> None:
        tokenizer = self._tokenizer
        by_id = {i: text for text, i in tokenizer.added_tokens.items()}
        # lm-evaluation-harness checks for the prefix token's text (the BOS, else the EOS).
        prefix = by_id.get(self.prefix_token_id) if self.prefix_token_id is not None else None
        self._prefix_text = prefix or tokenizer.bos_token
        self._added_on_empty = tokenizer.encode("", add_special_tokens=True) if self.add_special_tokens else []
        # What the tokenizer itself puts first (its post-processor's BOS), even when the
        # config names no BOS: a text starting with it must not get it twice either.
        first = by_id.get(self._added_on_empty[0]) if self._added_on_empty else None
        self._starts = tuple(t for t in (self._prefix_text, first) if t)
        special = tokenizer.special_tokens
        # Whitespace added tokens (Gemma's runs of newlines) are ordinary text in contents.
        watched = [t for t in tokenizer.added_tokens if t in special or not t.isspace()]
        watched.sort(key=len, reverse=True)
        self._watched = re.compile("|".join(map(re.escape, watched))) if watched else None
        self._warned = False
        self._around = self._additions() if self.tokenize == "turns" else ([], [])
        self._offsets = getattr(tokenizer, "token_offsets", None)
        # A BOS the template writes itself is a piece of its own (tokenize=turns), as a BOS
        # the tokenizer adds is: the first turn is tokenized on its own either way.
        self._bos_texts = tuple(
            t for t in dict.fromkeys((tokenizer.bos_token, first)) if t and t in tokenizer.added_tokens
        )

    def _additions(self) -> tuple[list[int], list[int]]:
        """What the tokenizer adds before and after a text (its BOS, an EOS), for turns
        tokenized one by one: added once, around them all."""
        added = list(self._added_on_empty)
        if not added:
            return [], []
        tokenizer = self._tokenizer
        try:  # where a word goes between them (a tokenizer may know no such word: then by the ids)
            probe = tokenizer.encode("a", add_special_tokens=True)
            bare = tokenizer.encode("a", add_special_tokens=False)
        except Exception:
            probe = bare = []
        at = next((i for i in range(len(probe) - len(bare) + 1) if probe[i : i + len(bare)] == bare), None)
        if bare and at is not None:
            return probe[:at], probe[at + len(bare) :]
        if len(added) > 1 and added[-1] == tokenizer.eos_token_id:
            return added[:-1], added[-1:]
        return added, []

    # -- behave as the wrapped meta template ------------------------------------

    @property
    def chat(self) -> bool:
        return bool(getattr(self._inner, "chat", False))

    @property
    def generate_role(self) -> bool:
        return bool(getattr(self._inner, "generate_role", False))

    @property
    def meta(self) -> Any:
        """The wrapped meta template."""
        return self._inner

    @property
    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if name == "apply_messages":
            # Meta templates that render whole conversations (chat templates) are tokenized the same way.
            return self._apply_messages
        if name == "apply_full":
            # Perplexity candidates (OpenCompass meta templates render the whole dialogue) too.
            return self._apply_full
        return value

    def __getstate__(self) -> dict[str, Any]:
        return {
            k: v for k, v in self.__dict__.items() if k in ("_inner", "_tokenizer", "_name") or not k.startswith("_")
        }

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    # -- encoding ---------------------------------------------------------------

    def encode(self, text: str, report: list[dict[str, Any]] | None = None) -> list[int]:
        """Encode ``text`` as the prompt is encoded (lm-evaluation-harness's ``tok_encode``).

        With special tokens on, a text that already starts with the BOS (the
        prefix token) is encoded without them, so the BOS is never doubled.
        """
        return self._tokenizer.encode(text, add_special_tokens=self._adds(text, report))

    def _adds(self, text: str, report: list[dict[str, Any]] | None = None) -> bool:
        """Whether the tokenizer's special tokens are added around ``text`` (never a second BOS)."""
        add = self.add_special_tokens
        if add and self._starts and text.startswith(self._starts):
            add = False
            if report is not None and self._added_on_empty:
                token = next(t for t in self._starts if text.startswith(t))
                report.append(
                    {
                        "kind": "bos_not_added",
                        "token": token,
                        "message": f"the text already starts with {token!r}, so special tokens "
                        "were not added (no double BOS)",
                    }
                )
        return add

    def _text(self, made: ModelInput) -> str:
        if made.text is None:
            raise TokenizerError(
                f"meta template {self._name!r} gives no text to tokenize",
                key="meta.tokenizer",
                hint="use a meta template that gives text (plain, chatml, hf, ...); 'messages' is for API models",
            )
        return made.text

    def _special_text(self, dialogue: Dialogue, report: list[dict[str, Any]]) -> None:
        if self._watched is None:
            return
        added = self._tokenizer.added_tokens
        special = self._tokenizer.special_tokens
        for index, turn in enumerate(dialogue):
            content = turn.content
            if not isinstance(content, str) or not content:
                continue
            found: dict[str, int] = {}
            for match in self._watched.finditer(content):
                found[match.group()] = found.get(match.group(), 0) + 1
            for token, count in found.items():
                report.append(
                    {
                        "kind": "special_token_text",
                        "turn": index,
                        "role": api_role(turn.role),
                        "token": token,
                        "id": added[token],
                        "special": token in special,
                        "count": count,
                        "message": f"the {api_role(turn.role)} content holds the text {token!r}, encoded as "
                        f"token {added[token]} as transformers does",
                    }
                )
        if report and not self._warned and any(r["kind"] == "special_token_text" for r in report):
            self._warned = True
            first = next(r for r in report if r["kind"] == "special_token_text")
            warnings.warn(
                f"prompt-style: a {first['role']} content holds the special-token text {first['token']!r}, "
                f"encoded as token {first['id']} (as transformers does); each record's token_report lists them",
                stacklevel=2,
            )

    def apply(self, dialogue: Dialogue) -> ModelInput:
        if self.tokenize == "turns":
            return self._turns(self._inner.apply, dialogue, False)
        return self._tokenized(self._inner.apply, dialogue)

    def _apply_full(self, dialogue: Dialogue) -> ModelInput:
        if self.tokenize == "turns":
            return self._turns(self._inner.apply_full, dialogue, True)
        return self._tokenized(self._inner.apply_full, dialogue)

    def _tokenized(self, apply: Any, dialogue: Dialogue) -> ModelInput:
        made = apply(dialogue)
        text = self._text(made)
        report: list[dict[str, Any]] = []
        self._special_text(dialogue, report)
        ids = self.encode(text, report)
        return ModelInput(
            text=text, messages=made.messages, token_ids=ids, token_report=report, assistant_spans=made.assistant_spans
        )

    def _apply_messages(self, messages: Sequence[Any], **kwargs: Any) -> ModelInput:
        """The wrapped meta template's ``apply_messages`` (a whole conversation), plus token ids."""
        pieces: list[Piece] = []
        if self.tokenize == "turns":
            made, pieces = message_pieces(self._inner.apply_messages, messages, **kwargs)
        else:
            made = self._inner.apply_messages(messages, **kwargs)
        text = self._text(made)
        report: list[dict[str, Any]] = []
        turns = []
        for message in messages:
            content = message.get("content") if isinstance(message, Mapping) else None
            if isinstance(content, (list, tuple)):  # text parts of a multimodal message
                content = "".join(
                    p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                )
            role = message.get("role") if isinstance(message, Mapping) else None
            turns.append(Turn(role if isinstance(role, str) else "user", content if isinstance(content, str) else ""))
        self._special_text(tuple(turns), report)
        if self.tokenize == "turns":
            made.token_ids = self._encode_pieces(text, pieces, [api_role(t.role) for t in turns], report)
        else:
            made.token_ids = self.encode(text, report)
        made.token_report = report
        return made

    # -- turn by turn -------------------------------------------------------------

    def _turns(self, apply: Any, dialogue: Dialogue, full: bool) -> ModelInput:
        """``tokenize=turns``: the text of each piece the meta template cuts its text into,
        tokenized on its own."""
        made = apply(dialogue)
        text = self._text(made)
        cut = getattr(self._inner, "pieces", None)
        if cut is None:
            raise TokenizerError(
                f"meta template {self._name!r} cannot cut a task's prompt into turns (it has no pieces() method)",
                key="meta.tokenize",
                hint="use --meta-option tokenize=whole",
            )
        pieces = checked_pieces(cut(dialogue, full=True) if full else cut(dialogue), text, self._name)
        report: list[dict[str, Any]] = []
        self._special_text(dialogue, report)
        ids = self._encode_pieces(text, pieces, [api_role(t.role) for t in dialogue], report)
        return ModelInput(
            text=text, messages=made.messages, token_ids=ids, token_report=report, assistant_spans=made.assistant_spans
        )

    def _encode_pieces(
        self, text: str, pieces: Sequence[Piece], roles: Sequence[str], report: list[dict[str, Any]]
    ) -> list[int]:
        """Each piece tokenized on its own, the ids concatenated; the tokenizer's own special
        tokens (a BOS) once around them, under the same rule as the whole text (none when
        the text starts with the BOS). The differences from the whole text's ids are reported."""
        add = self._adds(text, report)
        if pieces and self._bos_texts and pieces[0][1].startswith(self._bos_texts):
            turns, first = pieces[0]
            bos = next(t for t in self._bos_texts if first.startswith(t))
            pieces = [((), bos), *([(turns, first[len(bos) :])] if len(first) > len(bos) else []), *pieces[1:]]
        before, after = self._around
        ids: list[int] = list(before) if add else []
        starts = []
        encode = self._tokenizer.encode
        for turns, piece in pieces:
            starts.append(len(ids))
            ids += encode(piece, add_special_tokens=False)
            if len(turns) > 1:
                report.append(
                    {
                        "kind": "turns_joined",
                        "turns": list(turns),
                        "roles": piece_roles(turns, roles),
                        "message": f"turns {turns[0]} to {turns[-1]} are one piece: the template renders the "
                        "earlier ones differently once the later ones follow (or refuses to render the "
                        "conversation up to them), so no boundary between them is known",
                    }
                )
        starts.append(len(ids))
        if add:
            ids += after
        self._compare(text, pieces, starts, ids, add, roles, report)
        return ids

    def _compare(
        self,
        text: str,
        pieces: Sequence[Piece],
        starts: Sequence[int],
        ids: list[int],
        add: bool,
        roles: Sequence[str],
        report: list[dict[str, Any]],
    ) -> None:
        """Report where the turn-by-turn ids differ from the whole text's: the first
        differing token, and each piece whose own tokens are not the whole text's
        tokens over its characters (with ``token_offsets``; else the whole text's ids)."""
        whole = self._tokenizer.encode(text, add_special_tokens=add)
        if whole == ids:
            return
        first = next((i for i, (a, b) in enumerate(zip(whole, ids)) if a != b), min(len(whole), len(ids)))
        summary: dict[str, Any] = {
            "kind": "turns_differ",
            "first_difference": first,
            "token_count": len(ids),
            "whole_token_count": len(whole),
            "message": f"tokenized turn by turn, the prompt has other token ids than its whole text "
            f"tokenized at once (from token {first} on)",
        }
        report.append(summary)
        spans = None
        if self._offsets is not None:
            try:
                spans = self._offsets(text, add_special_tokens=add)
            except Exception:  # an optional method of a plugin: the summary still says it all
                spans = None
        if spans is None or len(spans) != len(whole):
            summary["whole"] = whole
            return
        t = 0
        pos = 0
        for j, (turns, piece) in enumerate(pieces):
            start, end = pos, pos + len(piece)
            pos = end
            while t < len(spans) and (spans[t][1] <= start or spans[t][1] == spans[t][0]):
                t += 1
            here = []
            u = t
            while u < len(spans) and spans[u][0] < end:
                if spans[u][1] > spans[u][0]:
                    here.append(whole[u])
                u += 1
            own = ids[starts[j] : starts[j + 1]]
            if own != here:
                what = f"turn {turns[0]}" if len(turns) == 1 else ("turns " + ", ".join(map(str, turns)))
                report.append(
                    {
                        "kind": "turn_tokens",
                        "piece": j,
                        "turns": list(turns),
                        "roles": piece_roles(turns, roles),
                        "chars": [start, end],
                        "start": starts[j],
                        "token_ids": own,
                        "whole": here,
                        "message": f"{what if turns else 'text of no turn'} tokenized on its own gives other "
                        "tokens than the whole text has there",
                    }
                )

    def apply_with_continuations(self, dialogue: Dialogue, continuations: Sequence[str]) -> ModelInput:
        """:meth:`apply`, plus each continuation's tokens split from the whole at token level.

        The rule is lm-evaluation-harness's (``TemplateLM._encode_pair`` and
        ``loglikelihood``, 0.4.x): trailing whitespace of the context moves to
        the continuation; context + continuation is encoded whole and the
        continuation is what follows the context's own tokens. An empty context
        is the prefix token (BOS, else EOS). A report entry is added for each
        continuation whose tokens differ from tokenizing it alone, or whose
        context tokens change when it follows (so the scored sequence is not
        the tokenization of the whole string).
        """
        made = self.apply(dialogue)
        report = made.token_report if made.token_report is not None else []
        context = made.text or ""
        if context == "":
            context_ids, pieces = self._empty_context(continuations)
        elif self.tokenize == "turns":
            context_ids, pieces = self._continuation_pieces(context, made.token_ids or [], continuations, report)
        else:
            context_ids, pieces = self._pairs(context, continuations, report)
        made.context_token_ids = context_ids
        made.continuation_token_ids = pieces
        return made

    def _continuation_pieces(
        self, context: str, context_ids: list[int], continuations: Sequence[str], report: list[dict[str, Any]]
    ) -> tuple[list[int], list[list[int]]]:
        """``tokenize=turns``: a continuation is one more piece, tokenized on its own after
        the prompt's ids (no whitespace moves across: the prompt is scored as it is sent).
        Each continuation whose tokens differ from lm-evaluation-harness's split of the
        whole string is reported."""
        encode = self._tokenizer.encode
        pieces = [encode(continuation, add_special_tokens=False) for continuation in continuations]
        _, split = self._pairs(context, continuations, [])
        for index, (own, whole) in enumerate(zip(pieces, split)):
            if own != whole:
                report.append(
                    {
                        "kind": "continuation_piece",
                        "continuation": index,
                        "text": continuations[index],
                        "token_ids": own,
                        "whole": whole,
                        "message": f"continuation {index} tokenized on its own gives other tokens than "
                        "split from the whole text (lm-evaluation-harness's rule)",
                    }
                )
        return list(context_ids), pieces

    def _empty_context(self, continuations: Sequence[str]) -> tuple[list[int], list[list[int]]]:
        if self.prefix_token_id is None:
            raise TokenizerError(
                "the prompt is empty and the tokenizer has neither a BOS nor an EOS to score continuations after",
                key="meta.prefix_token_id",
                hint="set --meta-option prefix_token_id=ID",
            )
        context = [self.prefix_token_id]
        pieces = []
        for continuation in continuations:
            ids = self._tokenizer.encode(continuation, add_special_tokens=False)
            if ids and ids[0] == self.prefix_token_id:
                ids = ids[1:]
            pieces.append(ids)
        return context, pieces

    def _pairs(
        self, context: str, continuations: Sequence[str], report: list[dict[str, Any]]
    ) -> tuple[list[int], list[list[int]]]:
        stripped = context.rstrip()
        moved = context[len(stripped) :]
        context_ids = self.encode(stripped)
        n = len(context_ids)
        pieces: list[list[int]] = []
        for index, continuation in enumerate(continuations):
            text = moved + continuation
            whole = self.encode(stripped + text)
            piece = whole[n:]
            pieces.append(piece)
            alone = self._tokenizer.encode(text, add_special_tokens=False)
            prefix_matches = whole[:n] == context_ids
            if prefix_matches and alone == piece:
                continue
            entry: dict[str, Any] = {
                "kind": "continuation_boundary",
                "continuation": index,
                "text": text,
                "token_ids": piece,
                "alone": alone,
                "context_unchanged": prefix_matches,
            }
            if moved:
                entry["moved_from_context"] = moved
            if prefix_matches:
                entry["message"] = f"continuation {index} tokenized alone gives other tokens than after the context"
            else:
                entry["whole"] = whole
                entry["message"] = (
                    f"the context's tokens change when continuation {index} follows it: the scored "
                    "context + continuation is not the tokenization of the whole string"
                )
            report.append(entry)
        return context_ids, pieces
