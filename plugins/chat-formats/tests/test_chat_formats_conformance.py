"""prompt-style-chat-formats passes the meta template conformance kit of
``prompt_style.testing``, for three shapes of published template: Llama 3 (a
system turn of its own), Gemma (the system text folded into the first user turn)
and Qwen (a default system prompt). Each format renders through ``hf``, which
the kit registers beside it."""

import prompt_style_chat_formats
import prompt_style_hf

from prompt_style.testing import MetaTemplateConformance


class ChatFormat(MetaTemplateConformance):
    plugin = prompt_style_chat_formats
    requires = [prompt_style_hf]
    chat = True
    # Every other meta option is a variable of the chat template, as transformers
    # passes extra keyword arguments to apply_chat_template's template.
    accepts_unknown_options = True


class TestLlama3Conformance(ChatFormat):
    meta = "llama-3"


class TestGemmaConformance(ChatFormat):
    meta = "gemma"


class TestQwenConformance(ChatFormat):
    meta = "qwen"
