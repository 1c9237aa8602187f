"""prompt-style-chatml passes the meta template conformance kit of ``prompt_style.testing``."""

import prompt_style_chatml

from prompt_style.testing import MetaTemplateConformance


class TestChatMLConformance(MetaTemplateConformance):
    plugin = prompt_style_chatml
    meta = "chatml"
    chat = True
