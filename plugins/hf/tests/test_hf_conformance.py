"""prompt-style-hf passes the meta template conformance kit of ``prompt_style.testing``,
with a published chat template (Llama 3 Instruct, from the corpus copy in the goldens)."""

import prompt_style_hf
from _hf_test_support import CORPUS_COPY

from prompt_style.testing import MetaTemplateConformance


class TestHFConformance(MetaTemplateConformance):
    plugin = prompt_style_hf
    meta = "hf"
    options = {
        "template": str(CORPUS_COPY / "templates" / "chujiezheng-llama-3-instruct.jinja"),
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|eot_id|>",
    }
    chat = True
    # Every other meta option is a variable of the chat template, as transformers
    # passes extra keyword arguments to apply_chat_template's template.
    accepts_unknown_options = True


class TestHFQwenConformance(TestHFConformance):
    """The same with Qwen2.5's template, which writes contents as they are (its fast path
    promises hold for every content) and a default system message when there is none."""

    options = {"template": str(CORPUS_COPY / "templates" / "hfjs-qwen-qwen2.5-7b-instruct.jinja")}
