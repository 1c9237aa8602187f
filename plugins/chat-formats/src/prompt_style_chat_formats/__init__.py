"""First-party chat formats: ``llama-2``, ``llama-3``, ``mistral``, ``zephyr``,
``vicuna``, ``alpaca``, ``gemma``, ``phi-3``, ``qwen`` (and their variants),
usable by name with ``--meta NAME`` and no template file.

Each name renders with a published chat template bundled here byte for byte
(``templates/``, provenance in :data:`FORMATS`) through the ``hf`` meta
template, so a format is exactly its template — including the errors the
template raises — and takes every ``hf`` option (``add_generation_prompt``,
``continue_final_message``, ``system_policy``, ``now``, template variables,
special tokens). A family name also takes ``variant`` (``--meta mistral
--meta-option variant=v7`` is ``--meta mistral::v7``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prompt_style import OptionError, hookimpl

__all__ = ["Format", "FORMATS", "FAMILIES", "ALIASES", "template_text", "chat_format"]


@dataclass(frozen=True)
class Format:
    """One bundled chat template and the special tokens it is rendered with."""

    file: str
    """The template file in ``templates/`` (named as in the corpus it was checked on)."""
    bos_token: str | None
    eos_token: str | None
    source: str
    """Where the template was published: ``repo@commit:path#key``."""
    model: str
    """The model (or family) whose template it is."""


FORMATS: Mapping[str, Format] = {
    # -- family names: the family's template as chat_templates (chujiezheng) publishes it
    "llama-2": Format(
        "chujiezheng-llama-2-chat.jinja",
        "<s>",
        "</s>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/llama-2-chat.jinja",
        "Llama 2 Chat",
    ),
    "llama-3": Format(
        "chujiezheng-llama-3-instruct.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/llama-3-instruct.jinja",
        "Llama 3 Instruct",
    ),
    "mistral": Format(
        "chujiezheng-mistral-instruct.jinja",
        "<s>",
        "</s>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/mistral-instruct.jinja",
        "Mistral Instruct",
    ),
    "zephyr": Format(
        "chujiezheng-zephyr.jinja",
        "<s>",
        "</s>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/zephyr.jinja",
        "Zephyr",
    ),
    "vicuna": Format(
        "chujiezheng-vicuna.jinja",
        "<s>",
        "</s>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/vicuna.jinja",
        "Vicuna",
    ),
    "alpaca": Format(
        "chujiezheng-alpaca.jinja",
        "<s>",
        "</s>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/alpaca.jinja",
        "Alpaca",
    ),
    "gemma": Format(
        "chujiezheng-gemma-it.jinja",
        "<bos>",
        "<eos>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/gemma-it.jinja",
        "Gemma IT",
    ),
    "phi-3": Format(
        "chujiezheng-phi-3.jinja",
        "<s>",
        "<|endoftext|>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/phi-3.jinja",
        "Phi-3",
    ),
    "qwen": Format(
        "chujiezheng-qwen2.5-instruct.jinja",
        None,
        "<|im_end|>",
        "chujiezheng/chat_templates@11c495621569:chat_templates/qwen2.5-instruct.jinja",
        "Qwen2.5 Instruct",
    ),
    # -- variants: the templates the model publishers ship
    "llama-2::meta": Format(
        "hfjs-transformers-default-llama.jinja",
        "<s>",
        "</s>",
        "huggingface/huggingface.js@fe42e68017ff:packages/jinja/test/e2e.test.js#llama",
        "Llama 2 Chat as transformers and meta-llama ship it",
    ),
    "llama-3::3.1": Format(
        "hfjs-meta-llama-llama-3.1-8b-instruct.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
        "huggingface/huggingface.js@fe42e68017ff:packages/jinja/test/e2e.test.js#meta-llama/Llama-3.1-8B-Instruct",
        "Llama 3.1 Instruct (tools, date_string)",
    ),
    "mistral::v1": Format(
        "llamacpp-test-mistralai-mistral-7b-instruct-v0.2-mistralai-v1-template-with-a-system-prompt.jinja",
        "<s>",
        "</s>",
        "ggerganov/llama.cpp@c392e5094dea:tests/test-chat-template.cpp#mistralai/Mistral-7B-Instruct-v0.2 "
        "(mistralai 'v1' template with a system prompt)",
        "Mistral v1 spacing: ' [INST] user [/INST] assistant</s>'",
    ),
    "mistral::v3": Format(
        "hfjs-mistralai-mistral-7b-instruct-v0.3-json-schema.jinja",
        "<s>",
        "</s>",
        "huggingface/huggingface.js@fe42e68017ff:packages/jinja/test/e2e.test.js"
        "#mistralai/Mistral-7B-Instruct-v0.3 (JSON Schema)",
        "Mistral v3 (Mistral-7B-Instruct-v0.3, tools): ' [INST] user [/INST] assistant </s>'",
    ),
    "mistral::v3-tekken": Format(
        "hfjs-mistralai-mistral-nemo-instruct-2407.jinja",
        "<s>",
        "</s>",
        "huggingface/huggingface.js@fe42e68017ff:packages/jinja/test/e2e.test.js#mistralai/Mistral-Nemo-Instruct-2407",
        "Mistral v3-tekken (Mistral-Nemo, tools): '[INST]user[/INST]assistant</s>'",
    ),
    "mistral::v7": Format(
        "llamacpp-test-mistralai-mistral-large-instruct-2411-mistralai-v7-template.jinja",
        "<s>",
        "</s>",
        "ggerganov/llama.cpp@c392e5094dea:tests/test-chat-template.cpp#mistralai/Mistral-Large-Instruct-2411 "
        "(mistralai 'v7' template)",
        "Mistral v7: '[SYSTEM_PROMPT] system[/SYSTEM_PROMPT][INST] user[/INST] assistant</s>'",
    ),
    "zephyr::beta": Format(
        "hfjs-huggingfaceh4-zephyr-7b-beta-add_generation_prompt-false.jinja",
        "<s>",
        "</s>",
        "huggingface/huggingface.js@fe42e68017ff:packages/jinja/test/e2e.test.js#HuggingFaceH4/zephyr-7b-beta",
        "HuggingFaceH4/zephyr-7b-beta",
    ),
    "gemma::2": Format(
        "llamacpp-google-gemma-2-2b-it.jinja",
        "<bos>",
        "<eos>",
        "ggerganov/llama.cpp@c392e5094dea:models/templates/google-gemma-2-2b-it.jinja",
        "google/gemma-2-2b-it (no system turn)",
    ),
    "phi-3::mini": Format(
        "llamacpp-test-phi-3-mini.jinja",
        "<s>",
        "<|endoftext|>",
        "ggerganov/llama.cpp@c392e5094dea:tests/test-chat-template.cpp#Phi-3-mini",
        "microsoft/Phi-3-mini",
    ),
    "phi-3::medium": Format(
        "llamacpp-test-phi-3-medium.jinja",
        "<s>",
        "<|endoftext|>",
        "ggerganov/llama.cpp@c392e5094dea:tests/test-chat-template.cpp#Phi-3-medium",
        "microsoft/Phi-3-medium",
    ),
    "phi-3::small": Format(
        "llamacpp-test-phi-3-small.jinja",
        "<|endoftext|>",
        "<|endoftext|>",
        "ggerganov/llama.cpp@c392e5094dea:tests/test-chat-template.cpp#Phi-3-small",
        "microsoft/Phi-3-small",
    ),
    "qwen::2.5": Format(
        "hfjs-qwen-qwen2.5-7b-instruct.jinja",
        None,
        "<|im_end|>",
        "huggingface/huggingface.js@fe42e68017ff:packages/jinja/test/e2e.test.js#Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct (tools)",
    ),
}
"""Every name, its bundled template, special tokens and provenance."""

ALIASES: Mapping[str, str] = {
    # llama.cpp's names for the Mistral spacing variants
    "mistral-v1": "mistral::v1",
    "mistral-v3": "mistral::v3",
    "mistral-v3-tekken": "mistral::v3-tekken",
    "mistral-v7": "mistral::v7",
}

FAMILIES: Mapping[str, tuple[str, ...]] = {
    family: tuple(name.split("::", 1)[1] for name in FORMATS if name.startswith(family + "::"))
    for family in FORMATS
    if "::" not in family
}
"""The variants of each family name (``--meta-option variant=...``)."""

_TEXTS: dict[str, str] = {}


def template_text(name: str) -> str:
    """The bundled template source of a format name."""
    fmt = FORMATS[ALIASES.get(name, name)]
    text = _TEXTS.get(fmt.file)
    if text is None:
        from importlib import resources  # on use: listing plugins does not import it (about 10 ms)

        text = _TEXTS[fmt.file] = (resources.files(__name__) / "templates" / fmt.file).read_text(encoding="utf-8")
    return text


def chat_format(name: str, options: Mapping[str, Any]):
    """Build the meta template of format ``name`` (an ``hf`` meta template)."""
    from prompt_style_hf.meta import HFChat
    from prompt_style_hf.sources import TemplateSource

    options = dict(options)
    name = ALIASES.get(name, name)
    variant = options.pop("variant", None)
    if variant is not None:
        variants = FAMILIES.get(name, ())
        if str(variant) not in variants:
            raise OptionError(
                f"meta template {name!r} has no variant {variant!r}",
                key="variant",
                hint=f"its variants are: {', '.join(variants)}" if variants else "it has no variants",
            )
        name = f"{name}::{variant}"
    if "template" in options:
        raise OptionError(
            f"meta template {name!r} has its own template; to render another one use --meta hf",
            key="meta.template",
        )
    fmt = FORMATS[name]
    tokens = {k: v for k, v in (("bos_token", fmt.bos_token), ("eos_token", fmt.eos_token)) if v is not None}
    source = TemplateSource({"default": template_text(name)}, tokens, f"{name} ({fmt.file})")
    return HFChat(source, options, name=name)


def _factory(name: str):
    def factory(*, options: dict[str, Any]):
        return chat_format(name, options)

    factory.__name__ = f"chat_format_{name}"
    factory.__doc__ = f"The {name!r} chat format: {FORMATS[ALIASES.get(name, name)].model}."
    # what it declares to `prompt-style plugins --all` (hf's options, read only then)
    factory.options = lambda: _options(name)  # type: ignore[attr-defined]
    factory.extra_options = "every other option is a template variable"  # type: ignore[attr-defined]
    return factory


def _options(name: str) -> dict[str, str]:
    from prompt_style_hf.meta import OPTIONS

    options = {key: text for key, text in OPTIONS.items() if key not in ("template", "chat_template")}
    variants = FAMILIES.get(ALIASES.get(name, name))
    if variants:
        options = {"variant": f"one of {', '.join(variants)}", **options}
    return options


@hookimpl
def apply_meta_template():
    return {name: _factory(name) for name in (*FORMATS, *ALIASES)}
