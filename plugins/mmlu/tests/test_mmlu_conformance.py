"""prompt-style-mmlu passes the style conformance kit of ``prompt_style.testing``."""

import prompt_style_mmlu

from prompt_style.testing import StyleConformance


class TestMMLUConformance(StyleConformance):
    plugin = prompt_style_mmlu
    style = "mcq::mmlu"
