"""prompt-style's pytest plugin: fixtures and a conformance kit for plugin authors.

Installed with prompt-style (the ``pytest11`` entry point ``prompt_style``), so
any test suite in an environment with prompt-style has:

Fixtures
    ``prompt_style_plugin``
        the plugin under test (:class:`PluginUnderTest`), from the test class's
        ``plugin`` attribute, the test module's ``prompt_style_plugin`` global, or
        the ini option ``prompt_style_plugin`` (an import path).
    ``prompt_style_manager``
        a fresh plugin manager holding the built-ins, the plugins the ini option
        ``prompt_style_requires`` (or a class's ``requires``) names, and the plugin
        under test; no other installed plugin, no ``PROMPT_STYLE_*`` variable.
    ``prompt_style_render``
        ``render(records, meta="plain", meta_options=None, fewshot=None, **task)``
        -> a list of :class:`~prompt_style.RenderedPrompt`, with that manager.
    ``prompt_style_golden``
        golden files (:class:`Golden`) in ``golden/`` beside the test file;
        ``pytest --prompt-style-update-goldens`` (or
        ``PROMPT_STYLE_UPDATE_GOLDENS=1``) writes them instead of comparing.

The conformance kit
    :class:`StyleConformance`, :class:`MetaTemplateConformance`,
    :class:`RetrieverConformance` and :class:`TaskFormatConformance`: subclass
    one in a ``Test...`` class, set ``plugin`` and the name under test, and every
    check of the kind runs as a test of yours.

Only this package imports pytest; ``import prompt_style`` never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import prompt_style

from ._base import Conformance, assert_typed_error
from ._plugin import PluginUnderTest, installed_manager, isolated_manager, plugin_under_test
from ._processes import HASH_SEEDS, rendered, rendered_in_processes
from ._records import FIELDS, UNICODE_CHOICES, UNICODE_QUESTION, mcq_record, pool, unicode_record
from .golden import UPDATE_ENV, UPDATE_OPTION, Golden, update_requested
from .meta import MetaTemplateConformance
from .retriever import RetrieverConformance
from .style import StyleConformance
from .task_format import TaskFormatConformance

__all__ = [
    "StyleConformance",
    "MetaTemplateConformance",
    "RetrieverConformance",
    "TaskFormatConformance",
    "Conformance",
    "PluginUnderTest",
    "plugin_under_test",
    "isolated_manager",
    "installed_manager",
    "assert_typed_error",
    "rendered",
    "rendered_in_processes",
    "HASH_SEEDS",
    "Golden",
    "UPDATE_OPTION",
    "UPDATE_ENV",
    "FIELDS",
    "UNICODE_QUESTION",
    "UNICODE_CHOICES",
    "mcq_record",
    "unicode_record",
    "pool",
]


# -- pytest hooks ---------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("prompt-style")
    group.addoption(
        UPDATE_OPTION,
        action="store_true",
        default=False,
        help=f"write prompt-style golden files instead of comparing with them (also {UPDATE_ENV}=1)",
    )
    parser.addini("prompt_style_plugin", "the prompt-style plugin under test: an import path (package.module[:OBJECT])")
    parser.addini("prompt_style_requires", "other prompt-style plugins the one under test needs (import paths)", "args")


# -- fixtures -------------------------------------------------------------------------


@pytest.fixture
def prompt_style_plugin(request: pytest.FixtureRequest) -> PluginUnderTest:
    """The plugin under test (see the module docstring for where it is named)."""
    spec: Any = getattr(request.cls, "plugin", None) if request.cls is not None else None
    name = getattr(request.cls, "plugin_name", None) if request.cls is not None else None
    if spec is None:
        spec = getattr(request.module, "prompt_style_plugin", None)
    if spec is None:
        spec = request.config.getini("prompt_style_plugin") or None
    if spec is None:
        pytest.fail(
            "no prompt-style plugin under test: set `plugin = your_module` on the test class, "
            "`prompt_style_plugin = your_module` in the test module, or prompt_style_plugin in the pytest settings"
        )
    return plugin_under_test(spec, name)


def _requires(request: pytest.FixtureRequest) -> list[PluginUnderTest]:
    listed = getattr(request.cls, "requires", None) if request.cls is not None else None
    if listed is None:
        listed = request.config.getini("prompt_style_requires") or ()
    return [plugin_under_test(p) for p in listed]


@pytest.fixture
def prompt_style_manager(request: pytest.FixtureRequest, prompt_style_plugin: PluginUnderTest) -> Any:
    """A fresh manager: the built-ins, the required plugins and the plugin under test."""
    return isolated_manager(prompt_style_plugin, _requires(request))


@pytest.fixture
def prompt_style_render(prompt_style_manager: Any) -> Any:
    """``render(records, **task)``: :func:`prompt_style.render_records` with the fresh manager."""

    def render(records: Any, **task: Any) -> list[prompt_style.RenderedPrompt]:
        return prompt_style.render_records(records, plugins=prompt_style_manager, **task)

    return render


@pytest.fixture
def prompt_style_golden(request: pytest.FixtureRequest) -> Golden:
    """Golden files in ``golden/`` beside the test file."""
    update = update_requested(bool(request.config.getoption(UPDATE_OPTION, default=False)))
    return Golden(Path(str(request.path)).parent / "golden", update=update)
