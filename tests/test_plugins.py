"""The plugin manager: discovery, environment controls, broken plugins, conflicts."""

from __future__ import annotations

import importlib.metadata
import sys
import warnings
from dataclasses import dataclass

import pytest

import prompt_style
from prompt_style import (
    FormattedPrompt,
    ModelInput,
    PluginConflictError,
    PluginError,
    PluginLoadWarning,
    PluginNotFoundError,
    Turn,
    create_plugin_manager,
    hookimpl,
    load_task,
)

BUILTIN_STYLES = ["mcq", "passthrough", "task_template"]
BUILTIN_RETRIEVERS = [
    "first_n",
    "fixed",
    "fixk",
    "opencompass_random",
    "random",
    "shared_random",
    "sliding_window",
    "zero",
]
BUILTINS = [
    "builtin-formats",
    "builtin-fields",
    "builtin-retrievers",
    "builtin-styles",
    "builtin-meta",
    "builtin-task-templates",
]
FIRST_PARTY = {
    "mmlu": "prompt-style-mmlu",
    "gpqa": "prompt-style-gpqa",
    "cloze": "prompt-style-cloze",
    "chatml": "prompt-style-chatml",
    "numbered": "prompt-style-numbered",
}

GOOD = """
import prompt_style

@prompt_style.hookimpl
def format_prompt():
    return {"mcq::fake": prompt_style.choice_style("mcq::fake", suffix="Fake answer:")}
"""

BROKEN_IMPORT = """
raise RuntimeError("boom at import time")
"""

MISSPELLED_HOOK = """
import prompt_style

@prompt_style.hookimpl
def format_promt():
    return {"mcq::typo": prompt_style.choice_style("mcq::typo")}
"""

NON_MAPPING_CATALOG = """
import prompt_style

@prompt_style.hookimpl
def apply_meta_template():
    return ["not", "a", "mapping"]
"""

RAISING_CATALOG = """
import prompt_style

@prompt_style.hookimpl
def retrieve_examples():
    raise ValueError("catalog exploded")
"""


def style_plugin(name: str, suffix: str) -> str:
    return f"""
import prompt_style

@prompt_style.hookimpl
def format_prompt():
    return {{{name!r}: prompt_style.choice_style({name!r}, suffix={suffix!r})}}
"""


def manager(**kwargs):
    kwargs.setdefault("environ", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        return create_plugin_manager(**kwargs)


def info_of(pm, name):
    return next(p for p in pm.plugins if p.name == name)


def row_of(pm, name):
    return next(r for r in pm.describe() if r["name"] == name)


# -- built-ins and first-party plugins ------------------------------------------------


def test_fresh_manager_each_time():
    a = create_plugin_manager(environ={})
    b = create_plugin_manager(environ={})
    assert a is not b
    assert a.pm is not b.pm


def test_builtins_listed_with_core_distribution(pm):
    assert [p.name for p in pm.plugins] == BUILTINS
    version = importlib.metadata.version("prompt-style")
    for info in pm.plugins:
        assert info.builtin
        assert info.status == "loaded"
        assert info.distribution == "prompt-style"
        assert info.version == version
        assert info.errors == []


def _not_opencompass(names):
    return [n for n in names if not n.startswith("opencompass")]


def test_builtin_names(pm):
    assert _not_opencompass(pm.names("format_prompt")) == BUILTIN_STYLES
    assert _not_opencompass(pm.names("apply_meta_template")) == ["messages", "plain"]
    assert pm.names("retrieve_examples") == BUILTIN_RETRIEVERS


def test_builtin_describe(pm):
    rows = {r["name"]: r for r in pm.describe()}
    assert rows["builtin-fields"]["hooks"] == {"extract_field": []}
    assert _not_opencompass(rows["builtin-styles"]["hooks"]["format_prompt"]) == ["mcq", "passthrough"]
    assert _not_opencompass(rows["builtin-meta"]["hooks"]["apply_meta_template"]) == ["messages", "plain"]
    assert rows["builtin-retrievers"]["hooks"] == {"retrieve_examples": BUILTIN_RETRIEVERS}
    for row in rows.values():
        assert row["distribution"] == "prompt-style"
        assert row["status"] == "loaded"


def test_first_party_plugins_discovered(pm_all):
    loaded = {p.name: p for p in pm_all.plugins if not p.builtin}
    for name, dist in FIRST_PARTY.items():
        assert loaded[name].distribution == dist
        assert loaded[name].status == "loaded"
        assert loaded[name].version == importlib.metadata.version(dist)
    assert {"mcq::mmlu", "mcq::gpqa", "cloze", "cloze::options", "mcq::numbered"} <= set(pm_all.names("format_prompt"))
    assert "chatml" in pm_all.names("apply_meta_template")
    assert pm_all.conflicts() == []


def test_contrib_numbered_discovered_through_its_entry_point():
    eps = importlib.metadata.entry_points(group="prompt_style")
    numbered = [ep for ep in eps if ep.name == "numbered"]
    assert len({(ep.name, ep.value) for ep in numbered}) == 1
    ep = numbered[0]
    assert ep.value == "prompt_style_numbered"
    assert ep.dist.metadata["Name"] == "prompt-style-numbered"

    pm = create_plugin_manager()
    provider = pm.resolve("format_prompt", "mcq::numbered")
    assert provider.plugin.distribution == "prompt-style-numbered"
    assert provider.plugin.name == "numbered"
    assert not provider.plugin.builtin
    assert provider.describe()["distribution"] == "prompt-style-numbered"


def test_contrib_numbered_renders(make_task, pm_all):
    path = make_task(
        {"test": [{"q": "Q", "choices": ["a", "b", "c"], "answer": 2}]},
        doc_to_text="q",
        doc_to_choice="{{choices}}",
        doc_to_target="answer",
        template="mcq::numbered",
    )
    result = next(load_task(path, plugins=pm_all).render())
    assert result.text == "Q\n1. a\n2. b\n3. c\nAnswer:"
    assert result.continuations == (" 1", " 2", " 3")
    assert result.target == 2
    assert result.plugins["format_prompt"]["distribution"] == "prompt-style-numbered"


# -- environment controls -------------------------------------------------------------


def test_plugins_env_empty_string_loads_no_entry_points():
    pm = create_plugin_manager(environ={"PROMPT_STYLE_PLUGINS": ""})
    loaded = [p.name for p in pm.plugins if p.status == "loaded"]
    assert loaded == BUILTINS
    for info in pm.plugins:
        if not info.builtin:
            assert info.status == "skipped"
    assert "mcq::mmlu" not in pm.names("format_prompt")


@pytest.mark.parametrize("allow", ["mmlu", "prompt-style-mmlu", " mmlu , chatml ", "prompt-style-mmlu,chatml"])
def test_plugins_env_allow_list(allow):
    pm = create_plugin_manager(environ={"PROMPT_STYLE_PLUGINS": allow})
    assert info_of(pm, "mmlu").status == "loaded"
    assert info_of(pm, "gpqa").status == "skipped"
    assert info_of(pm, "numbered").status == "skipped"
    assert "mcq::mmlu" in pm.names("format_prompt")
    assert "mcq::gpqa" not in pm.names("format_prompt")
    # built-ins are always loaded
    assert "mcq" in pm.names("format_prompt")


def test_disable_env_blocks_entry_points_and_builtins():
    pm = create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": "gpqa,prompt-style-cloze,builtin-styles"})
    assert info_of(pm, "gpqa").status == "blocked"
    assert info_of(pm, "cloze").status == "blocked"
    assert info_of(pm, "builtin-styles").status == "blocked"
    assert info_of(pm, "mmlu").status == "loaded"
    names = pm.names("format_prompt")
    assert "mcq" not in names and "passthrough" not in names
    assert "mcq::gpqa" not in names and "cloze" not in names
    assert "mcq::mmlu" in names


def test_disable_builtin_fields_makes_specs_unknown(pm):
    pm = create_plugin_manager(entry_points=False, environ={"PROMPT_STYLE_DISABLE": "builtin-fields"})
    with pytest.raises(PluginNotFoundError) as info:
        pm.extractor("question", "doc_to_text")
    assert "builtin-fields" in str(info.value)


def test_environ_defaults_to_os_environ(monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_PLUGINS", "")
    pm = create_plugin_manager()
    assert [p.name for p in pm.plugins if p.status == "loaded"] == BUILTINS


def test_environ_argument_wins_over_os_environ(monkeypatch):
    monkeypatch.setenv("PROMPT_STYLE_DISABLE", "mmlu")
    pm = create_plugin_manager(environ={})
    assert info_of(pm, "mmlu").status == "loaded"


def test_bad_prefer_env():
    with pytest.raises(PluginError) as info:
        create_plugin_manager(environ={"PROMPT_STYLE_PREFER": "no-equals-sign"})
    assert "PROMPT_STYLE_PREFER" in str(info.value)


# -- broken plugins (real entry points in fake distributions) ------------------------


def test_fake_distribution_is_a_real_entry_point(fake_dists):
    module = fake_dists.add("fake-good", "fakegood", GOOD, version="3.1")
    eps = [ep for ep in importlib.metadata.entry_points(group="prompt_style") if ep.name == "fakegood"]
    assert [ep.value for ep in eps] == [module]
    pm = create_plugin_manager(environ={})
    provider = pm.resolve("format_prompt", "mcq::fake")
    assert (provider.plugin.name, provider.plugin.distribution, provider.plugin.version) == (
        "fakegood",
        "fake-good",
        "3.1",
    )


def test_plugin_failing_to_import_is_reported_and_others_work(fake_dists, make_task):
    fake_dists.add("fake-good", "fakegood", GOOD)
    fake_dists.add("fake-broken", "fakebroken", BROKEN_IMPORT, version="0.2")
    with pytest.warns(PluginLoadWarning) as record:
        pm = create_plugin_manager(environ={})
    messages = [str(w.message) for w in record]
    assert any("fakebroken" in m and "boom at import time" in m for m in messages)

    broken = info_of(pm, "fakebroken")
    assert broken.status == "broken"
    assert (broken.distribution, broken.version) == ("fake-broken", "0.2")
    assert any("RuntimeError" in e and "boom at import time" in e for e in broken.errors)
    row = row_of(pm, "fakebroken")
    assert row["status"] == "broken"
    assert row["hooks"] == {}
    assert any("boom at import time" in e for e in row["errors"])

    # everybody else still works
    assert info_of(pm, "fakegood").status == "loaded"
    assert info_of(pm, "mmlu").status == "loaded"
    path = make_task(
        {"test": [{"q": "Q", "choices": ["a", "b"], "answer": 1}]},
        doc_to_text="q",
        doc_to_choice="{{choices}}",
        doc_to_target="answer",
        template="mcq::fake",
    )
    assert next(load_task(path, plugins=pm).render()).text == "Q\nA. a\nB. b\nFake answer:"


def test_broken_plugin_can_be_disabled(fake_dists):
    fake_dists.add("fake-broken", "fakebroken", BROKEN_IMPORT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginLoadWarning)
        pm = create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": "fake-broken"})
    assert info_of(pm, "fakebroken").status == "blocked"
    assert info_of(pm, "fakebroken").errors == []


def test_broken_plugin_not_loaded_when_not_allowed(fake_dists):
    fake_dists.add("fake-broken", "fakebroken", BROKEN_IMPORT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginLoadWarning)
        pm = create_plugin_manager(environ={"PROMPT_STYLE_PLUGINS": "mmlu"})
    assert info_of(pm, "fakebroken").status == "skipped"


def test_entry_point_pointing_at_missing_module(fake_dists):
    fake_dists.add("fake-missing", "fakemissing", GOOD)
    (fake_dists.root / f"{fake_dists.modules[-1]}.py").unlink()
    with pytest.warns(PluginLoadWarning):
        pm = create_plugin_manager(environ={})
    info = info_of(pm, "fakemissing")
    assert info.status == "broken"
    assert any("ModuleNotFoundError" in e for e in info.errors)
    assert "mcq::mmlu" in pm.names("format_prompt")


def test_misspelled_hook_is_reported_by_check_pending(fake_dists):
    fake_dists.add("fake-typo", "faketypo", MISSPELLED_HOOK)
    fake_dists.add("fake-good", "fakegood", GOOD)
    with pytest.warns(PluginLoadWarning, match="format_promt"):
        pm = create_plugin_manager(environ={})
    info = info_of(pm, "faketypo")
    assert info.status == "broken"
    assert any("format_promt" in e for e in info.errors)
    assert row_of(pm, "faketypo")["status"] == "broken"
    assert not pm.pm.is_registered(sys.modules.get(fake_dists.modules[0]))
    # the others still load and work
    assert info_of(pm, "fakegood").status == "loaded"
    assert "mcq::fake" in pm.names("format_prompt")
    assert "mcq::typo" not in pm.names("format_prompt")
    assert pm.resolve("format_prompt", "mcq::mmlu").plugin.name == "mmlu"


def test_misspelled_hook_passed_from_python():
    class Typo:
        @hookimpl
        def retrieve_exemples(self):
            return {}

    with pytest.warns(PluginLoadWarning):
        pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("typo", Typo())])
    assert info_of(pm, "typo").status == "broken"
    assert pm.names("retrieve_examples") == BUILTIN_RETRIEVERS


def test_catalog_returning_non_mapping_is_reported(fake_dists):
    fake_dists.add("fake-list", "fakelist", NON_MAPPING_CATALOG)
    pm = manager()
    with pytest.warns(PluginLoadWarning, match="fakelist"):
        names = pm.names("apply_meta_template")
    assert {"chatml", "messages", "plain"} <= set(names) and names == sorted(names)
    row = row_of(pm, "fakelist")
    assert row["status"] == "broken"
    assert any("apply_meta_template" in e and "mapping" in e for e in row["errors"])
    # the others are unaffected
    assert row_of(pm, "chatml")["status"] == "loaded"


@pytest.mark.parametrize(
    "result",
    ["{'x': 'not callable'}", "{1: lambda **kw: None}", "'plain'"],
)
def test_catalog_with_bad_entries_is_reported(result):
    namespace: dict = {}
    exec(
        "import prompt_style\n"
        "class Bad:\n"
        "    @prompt_style.hookimpl\n"
        "    def format_prompt(self):\n"
        f"        return {result}\n",
        namespace,
    )
    pm = manager(entry_points=False, plugins=[("bad", namespace["Bad"]())])
    with pytest.warns(PluginLoadWarning):
        assert _not_opencompass(pm.names("format_prompt")) == BUILTIN_STYLES
    assert row_of(pm, "bad")["status"] == "broken"


def test_catalog_hook_that_raises_is_reported(fake_dists):
    fake_dists.add("fake-raise", "fakeraise", RAISING_CATALOG)
    pm = manager()
    with pytest.warns(PluginLoadWarning, match="catalog exploded"):
        names = pm.names("retrieve_examples")
    assert set(BUILTIN_RETRIEVERS) <= set(names)  # installed plugins (bm25) may add more
    assert row_of(pm, "fakeraise")["status"] == "broken"


def test_describe_reports_catalog_errors_without_prior_lookup(fake_dists):
    fake_dists.add("fake-list", "fakelist", NON_MAPPING_CATALOG)
    pm = manager()
    with pytest.warns(PluginLoadWarning):
        rows = pm.describe()
    row = next(r for r in rows if r["name"] == "fakelist")
    assert row["status"] == "broken" and row["errors"]


def test_duplicate_entry_point_name_across_distributions(fake_dists):
    fake_dists.add("fake-one", "samename", GOOD)
    # a second distribution whose entry point takes the same plugin name
    info = fake_dists.root / "fake_two-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-two\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[prompt_style]\nsamename = {fake_dists.modules[0]}_two\n")
    (fake_dists.root / f"{fake_dists.modules[0]}_two.py").write_text(style_plugin("mcq::two", "Two:"))
    fake_dists.modules.append(f"{fake_dists.modules[0]}_two")
    importlib.invalidate_caches()
    with pytest.warns(PluginLoadWarning, match="samename"):
        pm = create_plugin_manager(environ={})
    statuses = sorted(p.status for p in pm.plugins if p.name == "samename")
    assert statuses == ["broken", "loaded"]


def test_python_plugin_taking_a_builtin_name_is_broken():
    class Impostor:
        @hookimpl
        def format_prompt(self):
            return {}

    with pytest.warns(PluginLoadWarning, match="already taken"):
        pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("builtin-styles", Impostor())])
    statuses = [p.status for p in pm.plugins if p.name == "builtin-styles"]
    assert statuses == ["loaded", "broken"]
    assert _not_opencompass(pm.names("format_prompt")) == BUILTIN_STYLES


# -- conflicts ------------------------------------------------------------------------


@pytest.fixture
def two_claimants(fake_dists):
    fake_dists.add("fake-alpha", "alpha", style_plugin("mcq::dup", "Alpha:"))
    fake_dists.add("fake-beta", "beta", style_plugin("mcq::dup", "Beta:"))
    return fake_dists


def dup_task(make_task):
    return make_task(
        {"test": [{"q": "Q", "choices": ["a", "b"], "answer": 0}]},
        doc_to_text="q",
        doc_to_choice="{{choices}}",
        doc_to_target="answer",
        template="mcq::dup",
    )


def test_conflict_names_both_plugins_and_prefer(two_claimants, make_task):
    pm = create_plugin_manager(environ={})
    with pytest.raises(PluginConflictError) as info:
        pm.resolve("format_prompt", "mcq::dup")
    message = str(info.value)
    assert "alpha" in message and "fake-alpha" in message
    assert "beta" in message and "fake-beta" in message
    assert "PROMPT_STYLE_PREFER" in message
    assert "mcq::dup" in message
    [(hook, name, providers)] = pm.conflicts()
    assert (hook, name) == ("format_prompt", "mcq::dup")
    assert sorted(p.plugin.name for p in providers) == ["alpha", "beta"]
    # load_task reports it with the task file and key
    path = dup_task(make_task)
    with pytest.raises(PluginConflictError) as info:
        load_task(path, plugins=pm)
    assert str(path) in str(info.value)
    assert "template" in str(info.value)


@pytest.mark.parametrize("choice, suffix", [("alpha", "Alpha:"), ("fake-beta", "Beta:"), ("beta", "Beta:")])
def test_conflict_settled_with_prefer_argument(two_claimants, make_task, choice, suffix):
    pm = create_plugin_manager(environ={}, prefer={"mcq::dup": choice})
    assert pm.conflicts() == []
    assert next(load_task(dup_task(make_task), plugins=pm).render()).text.endswith(suffix)


def test_conflict_settled_with_prefer_env(two_claimants, make_task):
    pm = create_plugin_manager(environ={"PROMPT_STYLE_PREFER": "mcq::dup=fake-alpha"})
    assert pm.resolve("format_prompt", "mcq::dup").plugin.name == "alpha"
    assert next(load_task(dup_task(make_task), plugins=pm).render()).text.endswith("Alpha:")


def test_prefer_argument_wins_over_env(two_claimants):
    pm = create_plugin_manager(environ={"PROMPT_STYLE_PREFER": "mcq::dup=alpha"}, prefer={"mcq::dup": "beta"})
    assert pm.resolve("format_prompt", "mcq::dup").plugin.name == "beta"


def test_conflict_settled_with_disable(two_claimants):
    pm = create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": "beta"})
    assert pm.resolve("format_prompt", "mcq::dup").plugin.name == "alpha"
    pm = create_plugin_manager(environ={"PROMPT_STYLE_DISABLE": "fake-alpha"})
    assert pm.resolve("format_prompt", "mcq::dup").plugin.name == "beta"


def test_prefer_naming_neither_claimant(two_claimants):
    pm = create_plugin_manager(environ={}, prefer={"mcq::dup": "gamma"})
    with pytest.raises(PluginConflictError) as info:
        pm.resolve("format_prompt", "mcq::dup")
    assert "gamma" in str(info.value)
    assert "alpha" in str(info.value) and "beta" in str(info.value)


def test_plugin_claiming_a_builtin_name_conflicts(fake_dists):
    fake_dists.add("fake-mcq", "fakemcq", style_plugin("mcq", "Mine:"))
    pm = create_plugin_manager(environ={})
    with pytest.raises(PluginConflictError) as info:
        pm.resolve("format_prompt", "mcq")
    assert "builtin-styles" in str(info.value) and "fakemcq" in str(info.value)
    pm = create_plugin_manager(environ={}, prefer={"mcq": "builtin-styles"})
    assert pm.resolve("format_prompt", "mcq").plugin.name == "builtin-styles"


# -- each hook implemented by a plugin passed from Python -----------------------------


class Upper:
    """A field spec kind: ``{"upper": field}``."""

    def __init__(self, field):
        self.field = field

    def __call__(self, record):
        return str(record[self.field]).upper()


@dataclass(frozen=True)
class Shout:
    def format(self, sample, shots):
        turns = tuple(Turn("user", f"{s.question}? {s.target}", "\n") for s in shots)
        return FormattedPrompt(turns + (Turn("user", f"{sample.question}!", "\n" if shots else ""),), (), sample.target)


@dataclass(frozen=True)
class Brackets:
    left: str = "["

    def apply(self, dialogue):
        return ModelInput(text="".join(f"{self.left}{t.role}:{t.content}]" for t in dialogue))


@dataclass(frozen=True)
class Last:
    k: int
    size: int

    def select(self, index, record):
        return tuple(range(self.size - self.k, self.size))


class EveryHook:
    @hookimpl(tryfirst=True)
    def extract_field(self, spec, key):
        if isinstance(spec, dict) and "upper" in spec:
            return Upper(spec["upper"])
        return None

    @hookimpl
    def format_prompt(self):
        return {"shout": lambda *, options, settings: Shout()}

    @hookimpl
    def apply_meta_template(self):
        return {"brackets": lambda *, options: Brackets(**options)}

    @hookimpl
    def retrieve_examples(self):
        return {"last": lambda *, options, pool, k, same_split, seed: Last(k, len(pool))}


def test_every_hook_from_a_python_plugin(tmp_path, jsonl):
    data = jsonl(tmp_path / "test.jsonl", [{"q": f"q{i}", "a": f"a{i}"} for i in range(4)])
    train = jsonl(tmp_path / "train.jsonl", [{"q": f"t{i}", "a": f"b{i}"} for i in range(3)])
    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("every", EveryHook())])
    assert info_of(pm, "every").status == "loaded"
    assert row_of(pm, "every")["hooks"] == {
        "extract_field": [],
        "format_prompt": ["shout"],
        "apply_meta_template": ["brackets"],
        "retrieve_examples": ["last"],
    }
    task = load_task(
        {
            "data": {"test": str(data), "train": str(train)},
            "doc_to_text": {"upper": "q"},
            "doc_to_target": "a",
            "template": "shout",
            "retriever": "last",
            "num_fewshot": 2,
        },
        plugins=pm,
        meta="brackets",
        meta_options={"left": "<"},
    )
    result = next(task.render())
    assert result.text == "<user:T1? b1]<user:T2? b2]<user:Q0!]"
    assert result.target == "a0"
    assert result.plugins["extract_field"]["doc_to_text"]["plugin"] == "every"
    assert result.plugins["extract_field"]["doc_to_target"]["plugin"] == "builtin-fields"
    assert result.plugins["format_prompt"]["plugin"] == "every"
    assert result.plugins["apply_meta_template"]["name"] == "brackets"
    assert result.plugins["retrieve_examples"]["name"] == "last"


def test_extract_field_tryfirst_plugin_wins_and_falls_back(pm):
    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("every", EveryHook())])
    extractor, info = pm.extractor({"upper": "q"}, "doc_to_text")
    assert extractor({"q": "abc"}) == "ABC" and info.name == "every"
    extractor, info = pm.extractor("q", "doc_to_text")
    assert extractor({"q": "abc"}) == "abc" and info.name == "builtin-fields"
    # the hook relay works too, with keyword arguments
    assert pm.hook.extract_field(spec={"upper": "q"}, key="doc_to_text")({"q": "x"}) == "X"


def test_extract_field_returning_non_callable_is_plugin_error():
    class Bad:
        @hookimpl(tryfirst=True)
        def extract_field(self, spec, key):
            return 42

    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("bad", Bad())])
    with pytest.raises(PluginError) as info:
        pm.extractor("q", "doc_to_text")
    assert "bad" in str(info.value)


def test_extract_field_raising_is_plugin_error_naming_the_plugin(make_task):
    """A bug in a plugin's extract_field is reported like a bug in any other hook:
    a PluginError naming the plugin and the key, not a bare exception."""

    class Raises:
        @hookimpl(tryfirst=True)
        def extract_field(self, spec, key):
            raise KeyError("oops")

    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("raiser", Raises())])
    path = make_task({"test": [{"q": "Q"}]}, doc_to_text="q")
    with pytest.raises(PluginError) as info:
        load_task(path, plugins=pm)
    message = str(info.value)
    assert "raiser" in message
    assert "doc_to_text" in message
    assert str(path) in message


def test_factory_raising_is_plugin_error_naming_the_plugin(make_task):
    class Boom:
        @hookimpl
        def format_prompt(self):
            def factory(*, options, settings):
                raise ZeroDivisionError("nope")

            return {"boom": factory}

    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("boom-plugin", Boom())])
    path = make_task({"test": [{"q": "Q"}]}, doc_to_text="q", template="boom")
    with pytest.raises(PluginError) as info:
        load_task(path, plugins=pm)
    message = str(info.value)
    assert "boom-plugin" in message and "ZeroDivisionError" in message and str(path) in message


def test_style_raising_during_render_is_render_error(make_task):
    from prompt_style import RenderError

    class Crash:
        def format(self, sample, shots):
            raise KeyError("crash")

    class P:
        @hookimpl
        def format_prompt(self):
            return {"crash": lambda *, options, settings: Crash()}

    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("p", P())])
    path = make_task({"test": [{"q": "Q"}]}, doc_to_text="q", template="crash")
    with pytest.raises(RenderError) as info:
        list(load_task(path, plugins=pm).render())
    assert info.value.index == 0
    assert str(path) in str(info.value)


def test_unknown_catalog_hook(pm):
    with pytest.raises(ValueError):
        pm.catalog("extract_field")


def test_public_api_exports():
    for name in prompt_style.__all__:
        assert hasattr(prompt_style, name), name
