"""prompt-style-gpqa passes the style conformance kit of ``prompt_style.testing``."""

import prompt_style_gpqa

from prompt_style.testing import StyleConformance


class TestGPQAConformance(StyleConformance):
    plugin = prompt_style_gpqa
    style = "mcq::gpqa"
