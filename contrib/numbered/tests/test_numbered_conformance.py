"""prompt-style-numbered passes the style conformance kit of ``prompt_style.testing``."""

import prompt_style_numbered

from prompt_style.testing import StyleConformance


class TestNumberedConformance(StyleConformance):
    plugin = prompt_style_numbered
    style = "mcq::numbered"
