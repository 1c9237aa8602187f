"""The loaded tokenizer: a ``tokenizers.Tokenizer`` configured as transformers 5 configures it.

transformers 5 runs every fast tokenizer on the ``tokenizers`` library; what it
adds on top when loading a folder is reproduced here: the special tokens named
in ``tokenizer_config.json`` / ``special_tokens_map.json`` become added tokens,
``split_special_tokens`` is honoured, and a post-processor is made from
``add_bos_token`` / ``add_eos_token`` where the files give none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Tokenizer, processors

from prompt_style import PromptStyleError, TokenizerError, read_text_file

__all__ = ["Backend", "read_json", "token_text", "NAMED_SPECIAL_TOKENS"]

NAMED_SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
"""transformers' ``SPECIAL_TOKENS_ATTRIBUTES`` (besides the extra special tokens)."""


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text_file(path, what="file", max_bytes=1 << 30, error=TokenizerError))
    except PromptStyleError as exc:
        raise TokenizerError(f"cannot read {path}: {exc.message}") from None
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise TokenizerError(f"{path}: expected a JSON object, not {type(data).__name__}")
    return data


def token_text(value: Any) -> str | None:
    """A token as written in a config: a string, or an ``AddedToken`` mapping with ``content``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _added(value: Any, *, special: bool) -> AddedToken | None:
    if isinstance(value, str):
        return AddedToken(value, special=special, normalized=not special)
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        fields = {k: value[k] for k in ("single_word", "lstrip", "rstrip", "normalized", "special") if k in value}
        fields.setdefault("special", special)
        return AddedToken(value["content"], **fields)
    return None


def special_tokens_of(config: Mapping[str, Any]) -> list[AddedToken]:
    """Every special token a tokenizer config names, as transformers 5 adds them:
    the named ones (``bos_token``...), model-specific ``*_token`` keys and the
    ``extra_special_tokens`` (or ``additional_special_tokens``) list or mapping."""
    found: list[AddedToken] = []
    # transformers adds them in this order, which decides the ids of tokens new to the vocabulary.
    keys = [k for k in NAMED_SPECIAL_TOKENS if k in config]
    keys += [k for k in config if k not in NAMED_SPECIAL_TOKENS and k.endswith("_token")]
    for key in keys:
        value = config[key]
        if isinstance(value, (str, Mapping)):
            token = _added(value, special=True)
            if token is not None:
                found.append(token)
    extra = config.get("extra_special_tokens") or config.get("additional_special_tokens") or []
    values = extra.values() if isinstance(extra, Mapping) else extra
    for value in values if isinstance(values, (list, tuple, type({}.values()))) else ():
        token = _added(value, special=True)
        if token is not None:
            found.append(token)
    return found


def added_tokens_decoder_of(config: Mapping[str, Any]) -> list[tuple[int, AddedToken]]:
    decoder = config.get("added_tokens_decoder")
    if not isinstance(decoder, Mapping):
        return []
    out = []
    for index, value in decoder.items():
        token = _added(value, special=bool(isinstance(value, Mapping) and value.get("special")))
        try:
            out.append((int(index), token))
        except (TypeError, ValueError):
            continue
    return [(i, t) for i, t in sorted(out, key=lambda item: item[0]) if t is not None]


def add_missing(backend: Tokenizer, tokens: list[AddedToken]) -> None:
    """Add the tokens the backend does not know as added tokens yet (special ones as special)."""
    known = {token.content for token in backend.get_added_tokens_decoder().values()}
    fresh = []
    for token in tokens:
        if token.content not in known:
            known.add(token.content)
            fresh.append(token)
    specials = [t for t in fresh if t.special]
    plain = [t for t in fresh if not t.special]
    if plain:
        backend.add_tokens(plain)
    if specials:
        backend.add_special_tokens(specials)


def post_processor(backend: Tokenizer, bos: str | None, eos: str | None, add_bos: bool, add_eos: bool) -> None:
    """transformers' ``update_post_processor``: ``[bos] $A [eos]`` as asked."""
    add_bos = add_bos and bos is not None and backend.token_to_id(bos) is not None
    add_eos = add_eos and eos is not None and backend.token_to_id(eos) is not None
    single = f"{(bos + ':0 ') if add_bos else ''}$A:0{(' ' + eos + ':0') if add_eos else ''}"
    pair = f"{single}{(' ' + bos + ':1') if add_bos else ''} $B:1{(' ' + eos + ':1') if add_eos else ''}"
    specials = []
    if add_bos:
        specials.append((bos, backend.token_to_id(bos)))
    if add_eos:
        specials.append((eos, backend.token_to_id(eos)))
    backend.post_processor = processors.TemplateProcessing(single=single, pair=pair, special_tokens=specials)


class Backend:
    """A :class:`prompt_style.Tokenizer` on a ``tokenizers.Tokenizer``."""

    def __init__(
        self,
        backend: Tokenizer,
        *,
        name: str,
        bos_token: str | None,
        eos_token: str | None,
        split_special_tokens: bool = False,
    ) -> None:
        self.name = name
        self._backend = backend
        backend.encode_special_tokens = split_special_tokens
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.bos_token_id = backend.token_to_id(bos_token) if bos_token is not None else None
        self.eos_token_id = backend.token_to_id(eos_token) if eos_token is not None else None
        decoder = backend.get_added_tokens_decoder()
        self.added_tokens = {token.content: index for index, token in decoder.items()}
        self.special_tokens = frozenset(token.content for token in decoder.values() if token.special)
        if split_special_tokens:  # transformers then matches none of them in text
            self.added_tokens = {t: i for t, i in self.added_tokens.items() if t not in self.special_tokens}
            self.special_tokens = frozenset()

    @property
    def backend(self) -> Tokenizer:
        """The ``tokenizers.Tokenizer`` itself."""
        return self._backend

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        return self._backend.encode(text, add_special_tokens=add_special_tokens).ids

    def token_offsets(self, text: str, *, add_special_tokens: bool = False) -> list[tuple[int, int]]:
        """The character span of each token of ``encode(text)`` in ``text`` (a token
        the tokenizer adds, such as a BOS, has an empty span): what ``prompt-style
        view`` draws token boundaries with (the optional ``token_offsets`` of the
        :class:`prompt_style.Tokenizer` protocol)."""
        return [tuple(span) for span in self._backend.encode(text, add_special_tokens=add_special_tokens).offsets]

    def __repr__(self) -> str:
        return f"<tokenizer {self.name}>"
