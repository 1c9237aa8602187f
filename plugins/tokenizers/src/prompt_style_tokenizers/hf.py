"""``tokenizers``: a ``tokenizer.json`` file, or a local Hugging Face tokenizer folder.

What transformers 5 does when ``AutoTokenizer.from_pretrained(folder)`` finds a
``tokenizer.json``, reproduced without transformers:

- ``tokenizer_config.json`` (and, where it has no ``added_tokens_decoder``,
  ``special_tokens_map.json``) name the special tokens; those the file lacks are
  added. ``add_bos_token`` / ``add_eos_token`` are ignored: transformers pops
  them when a ``tokenizer.json`` exists, and the file's post-processor decides
  what ``add_special_tokens`` adds.
- ``split_special_tokens: true`` makes special tokens plain text.
- For ``LlamaTokenizer`` (and ``LlamaTokenizerFast``, ``CodeLlamaTokenizer``)
  and ``GemmaTokenizer`` transformers 5 rebuilds the tokenizer from the file's
  vocabulary and merges with that class's own normalizer and pre-tokenizer, so
  an older file (Llama 2 and Mistral 7B v0.1 were saved with a ``Prepend("▁")``
  normalizer) encodes as transformers 5 encodes it, not as the file alone
  would. Other classes use the file as it is (as transformers does for
  ``PreTrainedTokenizerFast`` and for files saved by transformers 5).

A bare ``tokenizer.json`` (no config) has no named BOS or EOS in transformers;
here the post-processor's first and last special tokens are taken for them, so
that a BOS is never added twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
from tokenizers.models import BPE

from prompt_style import OptionError, TokenizerError, read_text_file

from .backend import (
    Backend,
    add_missing,
    added_tokens_decoder_of,
    read_json,
    special_tokens_of,
    token_text,
)

__all__ = ["REBUILT_CLASSES", "read_config", "prepend_scheme"]

LLAMA_CLASSES = frozenset({"LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer", "CodeLlamaTokenizerFast"})
GEMMA_CLASSES = frozenset({"GemmaTokenizer", "GemmaTokenizerFast"})
REBUILT_CLASSES = LLAMA_CLASSES | GEMMA_CLASSES
"""Tokenizer classes whose pipeline transformers 5 rebuilds instead of reading it from ``tokenizer.json``."""

CLASS_DEFAULTS = {
    **{cls: {"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"} for cls in LLAMA_CLASSES},
    **{
        cls: {
            "unk_token": "<unk>",
            "bos_token": "<bos>",
            "eos_token": "<eos>",
            "pad_token": "<pad>",
            "mask_token": "<mask>",
        }
        for cls in GEMMA_CLASSES
    },
}
"""The special tokens these classes' ``__init__`` defaults to (added when the config does not name them)."""

OPTIONS = ("tokenizer_class", "legacy", "add_prefix_space")


def read_config(folder: Path | None) -> dict[str, Any]:
    """``tokenizer_config.json`` with ``special_tokens_map.json`` merged in as transformers 5 does."""
    if folder is None:
        return {}
    path = folder / "tokenizer_config.json"
    config = read_json(path) if path.is_file() else {}
    special_map = folder / "special_tokens_map.json"
    if "added_tokens_decoder" not in config and special_map.is_file():
        for key, value in read_json(special_map).items():
            if key == "extra_special_tokens" and isinstance(value, list):
                existing = list(config.get("extra_special_tokens") or [])
                config["extra_special_tokens"] = existing + [v for v in value if v not in existing]
            else:
                config[key] = value
    if "additional_special_tokens" in config and not config.get("extra_special_tokens"):
        config["extra_special_tokens"] = config.pop("additional_special_tokens")
    return config


def check_options(options: Mapping[str, Any], accepted: tuple[str, ...], what: str) -> None:
    for key in options:
        if key not in accepted:
            raise OptionError(
                f"the {what} tokenizer loader has no option 'tokenizer_{key}'",
                key=f"meta.tokenizer_{key}",
                hint="its options: " + ", ".join(f"tokenizer_{name}" for name in accepted),
            )


def prepend_scheme(config: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """transformers' ``_get_prepend_scheme`` for ``LlamaTokenizer`` (``legacy`` defaults to false)."""
    add_prefix_space = options.get("add_prefix_space", config.get("add_prefix_space"))
    if add_prefix_space is None:
        add_prefix_space = True
    legacy = options.get("legacy", config.get("legacy", False))
    if not add_prefix_space:
        return "never"
    return "always" if legacy else "first"


def _bpe(model: Mapping[str, Any], *, unk_token: str | None) -> BPE:
    vocab = model.get("vocab")
    merges = model.get("merges") or []
    if not isinstance(vocab, Mapping):
        raise TokenizerError("the tokenizer's class rebuilds a BPE model, but its model has no BPE vocabulary")
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]
    return BPE(vocab=dict(vocab), merges=merges, fuse_unk=True, byte_fallback=True, dropout=None, unk_token=unk_token)


def rebuild(backend: Tokenizer, data: Mapping[str, Any], cls: str, config: Mapping[str, Any], options) -> None:
    """Give ``backend`` the pipeline transformers 5's ``cls.__init__`` builds (model, normalizer, pre-tokenizer)."""
    model = data.get("model") or {}
    if model.get("type", "BPE") != "BPE":
        return  # transformers would rebuild a BPE from it; leave other models as the file says
    if cls in LLAMA_CLASSES:
        backend.model = _bpe(model, unk_token=None)
        backend.normalizer = None
        backend.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme=prepend_scheme(config, options), split=False
        )
    elif cls in GEMMA_CLASSES:
        backend.model = _bpe(model, unk_token=token_text(config.get("unk_token")) or "<unk>")
        backend.normalizer = normalizers.Replace(" ", "▁")
        backend.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
        backend.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])


def _guess_bos_eos(backend: Tokenizer) -> tuple[str | None, str | None]:
    """The special tokens a TemplateProcessing post-processor puts first and last."""
    try:
        state = backend.to_str()
    except Exception:  # pragma: no cover - every tokenizers object serializes
        return None, None
    import json

    post = json.loads(state).get("post_processor") or {}
    if post.get("type") == "Sequence":
        post = next((p for p in post.get("processors", []) if p.get("type") == "TemplateProcessing"), {})
    if post.get("type") != "TemplateProcessing":
        return None, None
    single = post.get("single") or []
    first = single[0].get("SpecialToken", {}).get("id") if single else None
    last = single[-1].get("SpecialToken", {}).get("id") if len(single) > 1 else None
    return first, last


def load_tokenizer_json(file: Path, folder: Path | None, options: Mapping[str, Any]) -> Backend:
    check_options(options, OPTIONS, "'tokenizers'")
    config = read_config(folder)
    data = read_json(file)
    if "model" not in data:
        hint = "give a Hugging Face tokenizer.json"
        if "vocab" in data and "config" in data:  # Mistral's tekken.json
            hint = "a tekken.json: load it with transformers and save_pretrained() to get a tokenizer.json"
        raise TokenizerError(f"{file} is not a tokenizers file (it has no 'model')", hint=hint)
    try:
        backend = Tokenizer.from_str(read_text_file(file, what="tokenizer file", max_bytes=1 << 30))
    except Exception as exc:
        raise TokenizerError(f"the tokenizers library cannot read {file}: {exc}") from None
    cls = options.get("tokenizer_class", config.get("tokenizer_class"))
    if cls in REBUILT_CLASSES:
        rebuild(backend, data, cls, config, options)
        config = {**CLASS_DEFAULTS[cls], **config}  # an explicit null in the config stays null
    add_missing(backend, [token for _, token in added_tokens_decoder_of(config)])
    add_missing(backend, special_tokens_of(config))
    bos = token_text(config.get("bos_token"))
    eos = token_text(config.get("eos_token"))
    if folder is None or not (folder / "tokenizer_config.json").is_file():
        bos, eos = _guess_bos_eos(backend)
    return Backend(
        backend,
        name=str(folder or file),
        bos_token=bos,
        eos_token=eos,
        split_special_tokens=bool(config.get("split_special_tokens", False)),
    )
