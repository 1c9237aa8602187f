"""``sentencepiece``: a SentencePiece ``.model`` file, or a folder holding ``tokenizer.model``.

transformers 5 no longer runs SentencePiece to encode: ``AutoTokenizer`` on a
folder with only ``tokenizer.model`` converts it into a ``tokenizers`` BPE
(``SentencePieceExtractor``: the pieces become the vocabulary, merges are every
split of a piece into two pieces, ordered by the merged piece's id) and gives
it ``LlamaTokenizer``'s pipeline (no normalizer; ``Metaspace`` pre-tokenizer
that replaces spaces by ``▁`` and prepends one to the first piece of text;
byte fallback). Control pieces become special added tokens and user-defined
pieces plain added tokens. This loader does the same conversion, so its token
ids are transformers 5's, which differ from ``sentencepiece``'s own ``encode``
in places (``" Hello"`` is ``▁Hello`` here, ``▁`` ``▁Hello`` in SentencePiece;
text after a special token gets no ``▁`` here).

The model file is a protobuf message; the few fields needed (pieces, their
types, the BOS/EOS/UNK pieces, the model type) are read directly, so the
``sentencepiece`` library is not needed (the tests compare with it when it is
installed).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers
from tokenizers.models import BPE

from prompt_style import PromptStyleError, TokenizerError, read_bytes_file

from .backend import (
    Backend,
    add_missing,
    added_tokens_decoder_of,
    post_processor,
    read_json,
    special_tokens_of,
    token_text,
)
from .hf import check_options, prepend_scheme, read_config

__all__ = ["SentencePieceModel", "read_model", "generate_merges"]

OPTIONS = ("tokenizer_class", "legacy", "add_prefix_space", "add_bos_token", "add_eos_token")

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
"""``SentencePiece.Type`` values of sentencepiece_model.proto."""
UNIGRAM, BPE_TYPE = 1, 2


@dataclass
class SentencePieceModel:
    pieces: list[tuple[str, float, int]] = field(default_factory=list)
    """(piece, score, type) by id."""
    model_type: int = UNIGRAM
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, i


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of a protobuf message: ints, or bytes for length-delimited fields."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 2:
            size, i = _varint(buf, i)
            value, i = buf[i : i + size], i + size
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if i > len(buf):
            raise ValueError("truncated message")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_FLOAT = struct.Struct("<f")


def _piece(buf: bytes) -> tuple[str, float, int]:
    """One ``SentencePiece`` message: piece (1), score (2), type (3); a fast path for the
    common layout (short piece, score, small type), the general reader otherwise."""
    if len(buf) > 2 and buf[0] == 0x0A and buf[1] < 0x80:
        end = 2 + buf[1]
        if len(buf) >= end + 5 and buf[end] == 0x15 and (len(buf) == end + 5 or buf[end + 5] == 0x18):
            kind = buf[end + 6] if len(buf) == end + 7 else NORMAL
            if len(buf) in (end + 5, end + 7):
                return buf[2:end].decode("utf-8"), _FLOAT.unpack_from(buf, end + 1)[0], kind
    piece, score, kind = "", 0.0, NORMAL
    for n, w, v in _fields(buf):
        if n == 1 and w == 2:
            piece = v.decode("utf-8")
        elif n == 2 and w == 5:
            score = _FLOAT.unpack(v)[0]
        elif n == 3 and w == 0:
            kind = v
    return piece, score, kind


def read_model(data: bytes) -> SentencePieceModel:
    """The fields of a ``ModelProto`` that the conversion needs."""
    model = SentencePieceModel()
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:  # repeated SentencePiece pieces
            model.pieces.append(_piece(value))
        elif number == 2 and wire == 2:  # TrainerSpec
            for n, w, v in _fields(value):
                if w == 0 and n == 3:
                    model.model_type = v
                elif w == 0 and n in (40, 41, 42):
                    setattr(model, {40: "unk_id", 41: "bos_id", 42: "eos_id"}[n], _signed(v))
                elif w == 2 and n in (45, 46, 47):
                    setattr(model, {45: "unk_piece", 46: "bos_piece", 47: "eos_piece"}[n], v.decode("utf-8"))
    if not model.pieces:
        raise ValueError("no pieces")
    return model


def generate_merges(vocab: Mapping[str, int]) -> list[tuple[str, str]]:
    """transformers' ``generate_merges(vocab)``: every split of a piece into two
    pieces, ordered by the merged piece's id, then by the parts' lengths."""
    # Sorted by (merged piece id, len(left), len(right)): for one merged piece the
    # splits differ in len(left), so the key is unique and the per-piece order of
    # transformers' intermediate sort does not matter.
    merges: list[tuple[int, int, str, str]] = []
    get = vocab.get
    for merge, merged_id in vocab.items():
        for index in range(1, len(merge)):
            left = merge[:index]
            if get(left) is not None and get(merge[index:]) is not None:
                merges.append((merged_id, index, left, merge[index:]))
    merges.sort()
    return [(m[2], m[3]) for m in merges]


LLAMA_MODEL_TYPES = frozenset({"llama", "mistral", "mixtral"})


def _class_of(config: Mapping[str, Any], folder: Path | None) -> str:
    """The tokenizer class transformers would pick: the config's, else the model type's
    (from ``config.json``), else ``LlamaTokenizer`` for a bare ``.model`` file."""
    if config.get("tokenizer_class"):
        return str(config["tokenizer_class"])
    model_config = folder / "config.json" if folder is not None else None
    if model_config is not None and model_config.is_file():
        model_type = read_json(model_config).get("model_type")
        if isinstance(model_type, str) and model_type not in LLAMA_MODEL_TYPES:
            return f"the tokenizer of model type {model_type!r}"
    return "LlamaTokenizer"


def convert(
    model: SentencePieceModel,
    config: Mapping[str, Any],
    options: Mapping[str, Any],
    name: str,
    cls: str = "LlamaTokenizer",
) -> Backend:
    cls = options.get("tokenizer_class", cls)
    if cls not in ("LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer", "CodeLlamaTokenizerFast"):
        raise TokenizerError(
            f"{name}: converting a SentencePiece model for {cls} is not supported (only LlamaTokenizer's conversion, "
            "as used by Llama, Mistral and their derivatives)",
            hint="give the model's tokenizer.json instead (transformers' save_pretrained writes one)",
        )
    if model.model_type != BPE_TYPE:
        raise TokenizerError(
            f"{name}: a SentencePiece {'unigram' if model.model_type == UNIGRAM else 'non-BPE'} model; "
            "LlamaTokenizer converts BPE models only",
            hint="give the model's tokenizer.json instead",
        )
    vocab: dict[str, int] = {}
    for index, (piece, _, _) in enumerate(model.pieces):
        vocab[piece] = index  # as transformers builds it: a repeated piece keeps its last id
    backend = Tokenizer(BPE(vocab=vocab, merges=generate_merges(vocab), fuse_unk=True, byte_fallback=True))
    backend.normalizer = None
    backend.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme=prepend_scheme(config, options), split=False
    )
    sequence = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    backend.decoder = decoders.Sequence(sequence)
    # Control pieces are special, user-defined pieces are not; both are matched whole in text.
    pieces = [
        AddedToken(piece, normalized=False, special=kind == CONTROL)
        for piece, _, kind in model.pieces
        if kind in (CONTROL, USER_DEFINED)
    ]
    add_missing(backend, [token for _, token in added_tokens_decoder_of(config)])
    defaults = {"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}  # LlamaTokenizer's own
    named = {**defaults, **config}  # an explicit null in the config stays null
    add_missing(backend, special_tokens_of(named))
    add_missing(backend, pieces)
    bos = token_text(named.get("bos_token"))
    eos = token_text(named.get("eos_token"))
    add_bos = bool(options.get("add_bos_token", config.get("add_bos_token", False)))
    add_eos = bool(options.get("add_eos_token", config.get("add_eos_token", False)))
    post_processor(backend, bos, eos, add_bos, add_eos)
    return Backend(
        backend,
        name=name,
        bos_token=bos,
        eos_token=eos,
        split_special_tokens=bool(config.get("split_special_tokens", False)),
    )


def load_sentencepiece(path: Path, options: Mapping[str, Any]) -> Backend:
    """A ``*.model`` file, or a folder holding ``tokenizer.model`` (see ``loaders.SentencePieceLoader``)."""
    check_options(options, OPTIONS, "'sentencepiece'")
    file = path / "tokenizer.model" if path.is_dir() else path
    folder = path if path.is_dir() else (path.parent if (path.parent / "tokenizer_config.json").is_file() else None)
    try:
        # A regular file only (never a FIFO or a device), of at most 1 GiB.
        model = read_model(read_bytes_file(file, what="SentencePiece model", max_bytes=1 << 30, error=TokenizerError))
    except PromptStyleError as exc:
        raise TokenizerError(f"cannot read {file}: {exc.message}") from None
    except (ValueError, UnicodeDecodeError, struct.error) as exc:
        raise TokenizerError(f"{file} is not a SentencePiece model ({exc})") from None
    config = read_config(folder)
    return convert(model, config, options, str(folder or file), cls=_class_of(config, folder))
