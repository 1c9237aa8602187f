"""prompt-style-cloze's four styles pass the style conformance kit of ``prompt_style.testing``."""

import prompt_style_cloze

from prompt_style.testing import StyleConformance


class TestClozeConformance(StyleConformance):
    plugin = prompt_style_cloze
    style = "cloze"


class TestClozePureConformance(StyleConformance):
    plugin = prompt_style_cloze
    style = "cloze::pure"
    shows_choices = False  # the question and its blank only; scored on the choice texts


class TestClozeQAConformance(StyleConformance):
    plugin = prompt_style_cloze
    style = "cloze::qa"
    shows_choices = False


class TestClozeOptionsConformance(StyleConformance):
    plugin = prompt_style_cloze
    style = "cloze::options"
