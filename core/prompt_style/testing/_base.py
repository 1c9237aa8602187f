"""What every conformance kit shares: the plugin under test, fresh managers, and the checks
that read the same for every kind of plugin (pickling, other processes, typed errors)."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import pytest

import prompt_style

from ._plugin import PluginUnderTest, installed_manager, isolated_manager, plugin_under_test, provided_by
from ._processes import rendered, rendered_in_processes

__all__ = ["Conformance", "assert_typed_error"]


def assert_typed_error(call: Callable[[], Any], *, kinds: tuple[type[Exception], ...] = ()) -> Exception:
    """Run ``call``; it must raise a :class:`~prompt_style.PromptStyleError` (one of
    ``kinds`` when given) whose message is one line and that pickles with its
    location, as errors must to travel from a worker process. Returns the error."""
    try:
        call()
    except prompt_style.PromptStyleError as exc:
        error: Exception = exc
    except Exception as exc:  # the contract: never a raw exception
        raise AssertionError(
            f"raised {type(exc).__name__}: {exc}; bad input must raise a prompt_style error "
            "(OptionError, StyleError, TaskFileError, ...)"
        ) from exc
    else:
        raise AssertionError("did not raise: bad input must raise a prompt_style error")
    cause = error.__cause__
    if cause is not None and not isinstance(cause, prompt_style.PromptStyleError):
        if f"raised {type(cause).__name__}" in str(error):  # the core's report of a plugin's own bug
            raise AssertionError(
                f"the plugin raised {type(cause).__name__}: {cause}, which the core reports as a plugin bug "
                f"({type(error).__name__}: {error}); raise a prompt_style error for bad input "
                "(StyleError, OptionError, TaskFileError, ...)"
            ) from cause
    if kinds and not isinstance(error, kinds):
        raise AssertionError(f"raised {type(error).__name__}, expected {' or '.join(k.__name__ for k in kinds)}")
    assert "Traceback" not in str(error)
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error) and str(clone) == str(error), "the error does not pickle with its location"
    return error


class Conformance:
    """Base of the conformance kits. A subclass (named ``Test...``) sets :attr:`plugin`
    and what the kit of its kind asks for; every ``test_`` method is a check."""

    hook: ClassVar[str] = ""
    """The catalog hook the kind is about (set by each kit)."""

    plugin: Any = None
    """The plugin under test: its module, an object with hook implementations, or an
    import path (``"my_package"``, ``"my_package.plugin:PLUGIN"``)."""
    plugin_name: str | None = None
    """The name to register it under (default: the module's last part)."""
    requires: Sequence[Any] = ()
    """Other plugins the plugin needs (modules, objects or import paths): for a chat
    format built on ``hf``, ``["prompt_style_hf"]``."""

    # -- the plugin and its managers --------------------------------------------------

    def under_test(self) -> PluginUnderTest:
        if self.plugin is None:
            pytest.fail(f"{type(self).__name__} must set `plugin` to the plugin's module (or an import path)")
        return plugin_under_test(self.plugin, self.plugin_name)

    def required(self) -> list[PluginUnderTest]:
        return [plugin_under_test(p) for p in self.requires]

    def manager(self) -> prompt_style.PluginManager:
        """A fresh manager: the built-ins, :attr:`requires` and the plugin, nothing installed."""
        return isolated_manager(self.under_test(), self.required())

    def installed_manager(self) -> prompt_style.PluginManager:
        """A fresh manager with every installed plugin as well (for "every installed ..." checks)."""
        return installed_manager(self.under_test(), self.required())

    def name_under_test(self) -> str:  # pragma: no cover - every kit sets it
        raise NotImplementedError

    def task(self) -> Any:
        """The task the pickling and process checks render (a mapping or a path)."""
        raise NotImplementedError

    def load_options(self) -> dict[str, Any]:
        """Keyword arguments for ``load_task`` with :meth:`task`."""
        return {}

    def selection_records(self) -> list[Any]:
        """Records whose few-shot selections the process check compares too."""
        return []

    # -- checks every kind shares ------------------------------------------------------

    def test_the_plugin_provides_the_name(self):
        manager = self.manager()
        [info] = [p for p in manager.plugins if p.name == self.under_test().name]
        assert info.status == "loaded" and not info.errors, f"the plugin did not load: {info.errors}"
        provider = manager.resolve(self.hook, self.name_under_test())
        assert provided_by(provider, self.under_test()), f"{self.name_under_test()!r} comes from {provider.label()}"
        assert not manager.conflicts(), f"names claimed twice: {manager.conflicts()}"

    def test_the_renderer_pickles_and_renders_the_same(self):
        loaded = prompt_style.load_task(self.task(), plugins=self.manager(), **self.load_options())
        first = [r.to_json() for r in loaded.render()]
        assert first, "the task rendered no record"
        split = loaded.renderer.split
        records = prompt_style.load_records(loaded.config.data[split], split)
        clone = pickle.loads(pickle.dumps(loaded.renderer))
        assert [clone.render(record, i).to_json() for i, record in enumerate(records)] == first
        # a second pass in the same process, through the caches, gives the same prompts
        assert [r.to_json() for r in loaded.render()] == first

    def test_deterministic_across_processes_and_hash_seeds(self):
        plugins = [*self.required(), self.under_test()]
        task, options, records = self.task(), self.load_options(), self.selection_records()
        here = rendered(task, manager=self.manager(), options=options, records=records)
        assert here["rendered"], "the task rendered no record"
        for there in rendered_in_processes(task, plugins=plugins, options=options, records=records):
            assert there == here, "another process (another PYTHONHASHSEED) renders differently"
