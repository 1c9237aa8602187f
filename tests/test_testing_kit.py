"""The conformance kit (``prompt_style.testing``) passes good plugins and catches bad ones;
its pytest plugin's fixtures, ini options and golden files work; and the core
never imports pytest."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import prompt_style
from prompt_style.testing import (
    MetaTemplateConformance,
    RetrieverConformance,
    StyleConformance,
    TaskFormatConformance,
    assert_typed_error,
)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
TESTING = ROOT / "core" / "prompt_style" / "testing"


@pytest.fixture
def module(tmp_path, monkeypatch):
    """``module(source)`` -> a module importable by name here and in child processes."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make(source: str):
        name = f"kit_plugin_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        made.append(name)
        return importlib.import_module(name)

    yield make
    for name in made:
        sys.modules.pop(name, None)


def run_check(kit: type, name: str) -> None:
    """Run one check of a kit class as pytest would (a fresh instance)."""
    instance = kit()
    if isinstance(instance, TaskFormatConformance):
        raise NotImplementedError  # needs its tmp_path fixture: see the pytester tests
    getattr(instance, name)()


def fails(kit: type, name: str, match: str) -> None:
    with pytest.raises(AssertionError, match=match):
        run_check(kit, name)


GOOD_STYLE = """
from dataclasses import dataclass
from prompt_style import QAStyle, check_options, hookimpl

@dataclass
class Plain(QAStyle):
    def question_text(self, sample):
        listed = [f"({i + 1}) {c}" for i, c in enumerate(sample.choices)]
        return "\\n".join([str(sample.question), *listed, "Answer:"])

    def answers(self, sample):
        return tuple(f"({i + 1})" for i in range(len(sample.choices)))

def factory(*, options, settings):
    return check_options(Plain, options, what="style 'kit'", settings=settings)

@hookimpl
def format_prompt():
    return {"kit": factory}
"""


def style_kit(plugin, **attributes):
    return type("TestKit", (StyleConformance,), {"plugin": plugin, "style": "kit", **attributes})


# -- the style kit ----------------------------------------------------------------------


def test_a_good_style_passes_every_check(module):
    kit = style_kit(module(GOOD_STYLE))
    checks = [n for n in dir(kit) if n.startswith("test_")]
    assert len(checks) >= 12
    for name in checks:
        run_check(kit, name)


def test_hash_order_is_caught_across_processes(module):
    plugin = module(
        GOOD_STYLE.replace(
            "listed = [",
            "order = sorted(range(len(sample.choices)), key=lambda i: hash(f'{sample.question}{i}'))\n"
            "        listed = [",
        ).replace("for i, c in enumerate(sample.choices)]", "for i, c in enumerate(sample.choices)] + [str(order)]")
    )
    fails(style_kit(plugin), "test_deterministic_across_processes_and_hash_seeds", "another process")


def test_a_raw_exception_is_caught_by_the_error_contract(module):
    plugin = module(
        GOOD_STYLE.replace(
            "def answers(self, sample):",
            "def answers(self, sample):\n        if len(sample.choices) == 27: raise ValueError('too many')\n",
        )
    )
    fails(
        style_kit(plugin),
        "test_more_choices_than_it_lays_out_renders_or_is_a_typed_error",
        "the plugin raised ValueError: too many",
    )


def test_an_unknown_option_accepted_silently_is_caught(module):
    plugin = module(
        GOOD_STYLE.replace("check_options(Plain, options,", "Plain(settings=settings) or check_options(Plain, {},")
    )
    fails(style_kit(plugin), "test_an_unknown_option_is_an_option_error", "did not raise")


def test_lost_unicode_is_caught(module):
    plugin = module(
        GOOD_STYLE.replace("str(sample.question)", "str(sample.question).encode('ascii', 'replace').decode()")
    )
    fails(style_kit(plugin), "test_unicode_is_kept_as_written", "not shown|assert")


def test_an_empty_turn_is_caught(module):
    plugin = module(
        GOOD_STYLE.replace(
            "@dataclass\nclass Plain(QAStyle):",
            "from prompt_style import FormattedPrompt, Turn\n\n@dataclass\nclass Plain(QAStyle):\n"
            "    def format(self, sample, shots):\n"
            "        made = super().format(sample, shots)\n"
            "        return FormattedPrompt((Turn('system', ''),) + made.dialogue, made.continuations, made.target)\n",
        )
    )
    fails(style_kit(plugin), "test_an_empty_description_adds_nothing", "a turn with no content")


def test_an_unpicklable_style_is_caught(module):
    plugin = module(
        GOOD_STYLE.replace("return check_options(Plain,", "style = check_options(Plain,").replace(
            "what=\"style 'kit'\", settings=settings)",
            "what=\"style 'kit'\", settings=settings)\n    style.hook = lambda: 0\n    return style",
        )
    )
    with pytest.raises((AssertionError, AttributeError, TypeError, Exception), match="pickle|lambda"):
        run_check(style_kit(plugin), "test_the_renderer_pickles_and_renders_the_same")


def test_a_style_that_reads_the_target_itself_is_caught(module):
    plugin = module(
        GOOD_STYLE.replace(
            "    def answers(self, sample):",
            "    def target(self, sample, answers):\n        return 0\n\n    def answers(self, sample):",
        )
    )
    fails(style_kit(plugin), "test_the_gold_answer_is_the_tasks_not_the_styles", "assert")


def test_a_kit_class_without_a_plugin_fails_clearly():
    kit = type("TestKit", (StyleConformance,), {"style": "kit"})
    with pytest.raises(pytest.fail.Exception, match="must set `plugin`"):
        run_check(kit, "test_the_plugin_provides_the_name")


def test_a_name_the_plugin_does_not_provide_fails_clearly(module):
    kit = type("TestKit", (StyleConformance,), {"plugin": module(GOOD_STYLE), "style": "mcq"})
    fails(kit, "test_the_plugin_provides_the_name", "comes from format_prompt 'mcq' from plugin 'builtin-styles'")


# -- the meta template kit ---------------------------------------------------------------

GOOD_META = """
from dataclasses import dataclass
from typing import Any

from prompt_style import ModelInput, StyleError, api_role, check_options, hookimpl


@dataclass(frozen=True)
class HumanAssistant:
    system: str = ""
    human: str = "Human: "
    assistant: str = "Assistant: "
    turn_end: str = "\\n\\n"
    chat = True

    def apply(self, dialogue):
        parts = []
        for turn in dialogue:
            if not isinstance(turn.content, str):
                raise StyleError("human_assistant shows text only")
            role = api_role(turn.role)
            prefix = {"system": self.system, "assistant": self.assistant}.get(role, self.human)
            parts.append(prefix + turn.content.strip() + self.turn_end)
        if dialogue and api_role(dialogue[-1].role) == "assistant":
            return ModelInput(text="".join(parts)[: -len(self.turn_end)])
        return ModelInput(text="".join(parts) + self.assistant.rstrip())


def human_assistant(*, options: dict[str, Any]) -> HumanAssistant:
    return check_options(HumanAssistant, options, what="meta template 'human_assistant'")


@hookimpl
def apply_meta_template():
    return {"human_assistant": human_assistant}
"""


def meta_kit(plugin, **attributes):
    attributes = {"plugin": plugin, "meta": "human_assistant", "chat": True, "trims_turns": True, **attributes}
    return type("TestKit", (MetaTemplateConformance,), attributes)


def test_a_good_meta_template_passes_every_check(module):
    kit = meta_kit(module(GOOD_META))
    for name in [n for n in dir(kit) if n.startswith("test_")]:
        run_check(kit, name)


def test_untrimmed_turns_pile_up_blank_lines(module):
    plugin = module(GOOD_META.replace("turn.content.strip()", "turn.content"))
    fails(meta_kit(plugin), "test_a_description_ending_in_a_blank_line", "pile up")


def test_a_meta_template_that_drops_a_turn_is_caught(module):
    plugin = module(GOOD_META.replace("for turn in dialogue:", "for turn in dialogue[1:]:"))
    fails(meta_kit(plugin), "test_dialogues_of_every_shape", "is not shown")


def test_a_wrong_chat_flag_is_caught(module):
    fails(meta_kit(module(GOOD_META), chat=False), "test_the_factory_builds_a_meta_template", "chat should be False")


# -- the retriever kit -------------------------------------------------------------------

GOOD_RETRIEVER = """
import random
from dataclasses import dataclass

from prompt_style import TaskFileError, check_options, hookimpl


@dataclass(frozen=True)
class _NoOptions:
    pass


@dataclass(frozen=True)
class Shuffled:
    k: int
    size: int
    seed: int
    same_split: bool

    def select(self, index, record):
        ids = [i for i in range(self.size) if not (self.same_split and i == index)]
        return random.Random(f"{self.seed}:{index}").sample(ids, self.k)


def shuffled(*, options, pool, k, same_split, seed):
    check_options(_NoOptions, options, what="retriever 'shuffled'")
    available = len(pool) - (1 if same_split else 0)
    if (k or 0) > available:
        raise TaskFileError(f"retriever 'shuffled' needs {k} examples but the pool has {available}", key="num_fewshot")
    return Shuffled(k or 0, len(pool), seed, same_split)


@hookimpl
def retrieve_examples():
    return {"shuffled": shuffled}
"""


def retriever_kit(plugin, **attributes):
    return type("TestKit", (RetrieverConformance,), {"plugin": plugin, "retriever": "shuffled", **attributes})


def test_a_good_retriever_passes_every_check(module):
    kit = retriever_kit(module(GOOD_RETRIEVER))
    for name in [n for n in dir(kit) if n.startswith("test_")]:
        run_check(kit, name)


def test_a_shared_generator_is_caught(module):
    plugin = module(
        GOOD_RETRIEVER.replace('random.Random(f"{self.seed}:{index}").sample', "_SHARED.sample").replace(
            "@dataclass(frozen=True)\nclass Shuffled:",
            "_SHARED = random.Random(1)\n\n@dataclass(frozen=True)\nclass Shuffled:",
        )
    )
    fails(retriever_kit(plugin), "test_the_same_choice_in_any_order", "order")


def test_the_record_itself_is_caught(module):
    plugin = module(GOOD_RETRIEVER.replace("if not (self.same_split and i == index)", "if True"))
    fails(retriever_kit(plugin), "test_never_the_record_itself_on_its_own_split", "its own example")


def test_an_unchecked_pool_size_is_caught(module):
    plugin = module(GOOD_RETRIEVER.replace("if (k or 0) > available:", "if False:"))
    fails(retriever_kit(plugin), "test_more_examples_than_the_pool_holds_is_a_typed_error", "did not raise")


# -- the error contract helper -----------------------------------------------------------


def test_assert_typed_error():
    def typed():
        raise prompt_style.OptionError("bad", key="x")

    assert assert_typed_error(typed).key == "x"
    with pytest.raises(AssertionError, match="raised KeyError"):
        assert_typed_error(lambda: {}["x"])
    with pytest.raises(AssertionError, match="expected StyleError"):
        assert_typed_error(typed, kinds=(prompt_style.StyleError,))


# -- the pytest plugin: fixtures, ini options, golden files, task formats -----------------

FORMAT_PLUGIN = """
from prompt_style import TaskConfig, TaskFileError, hookimpl


class Tiny:
    suffixes = (".tiny",)

    def detect(self, source):
        return source.path is not None and source.path.suffix == ".tiny"

    def read(self, source, options):
        lines = source.path.read_text(encoding="utf-8").splitlines()
        keys = {}
        for number, line in enumerate(lines, 1):
            key, sep, value = line.partition("=")
            if not sep:
                raise TaskFileError(f"expected KEY=VALUE, got {line!r}", file=str(source.path), line=number)
            keys[key.strip()] = value.strip()
        return TaskConfig.from_dict(
            {"data": {"test": keys["data"]}, "doc_to_text": keys["question"], "doc_to_choice": "{{choices}}",
             "doc_to_target": "answer", "template": "mcq"},
            base=source.base,
            path=source.path,
        )


@hookimpl
def read_task():
    return {"tiny": Tiny()}
"""


def test_the_pytest_plugin_in_a_project(pytester, tmp_path, module):
    style = module(GOOD_STYLE)
    tiny = module(FORMAT_PLUGIN)
    pytester.makeini(f"[pytest]\nprompt_style_plugin = {style.__name__}\n")
    pytester.makepyfile(
        test_project=f"""
        import prompt_style
        from prompt_style.testing import TaskFormatConformance

        def test_fixtures(prompt_style_plugin, prompt_style_manager, prompt_style_render, prompt_style_golden):
            assert prompt_style_plugin.name == "{style.__name__}"
            assert [p.name for p in prompt_style_manager.plugins if not p.builtin] == ["{style.__name__}"]
            [out] = prompt_style_render(
                [{{"question": "Q?", "choices": ["a", "b"], "answer": 1}}],
                doc_to_text="question", doc_to_choice="{{{{choices}}}}", doc_to_target="answer", template="kit",
            )
            prompt_style_golden.check("kit.txt", out.text)
            prompt_style_golden.check("kit.json", out)

        class TestTiny(TaskFormatConformance):
            plugin = "{tiny.__name__}"
            format = "tiny"
            suffix = ".tiny"
            example = "data = test.jsonl\\nquestion = question\\n"
            bad_example = "data = test.jsonl\\nno equals sign here\\n"
            bad_example_line = 2
        """
    )
    first = pytester.runpytest("-q", "-k", "fixtures")
    first.stdout.fnmatch_lines(["*no golden file*kit.txt*--prompt-style-update-goldens*"])
    assert first.ret == 1
    # the fixtures with the goldens written, and the whole task-format kit
    pytester.runpytest("-q", "--prompt-style-update-goldens").assert_outcomes(passed=12)
    assert (pytester.path / "golden" / "kit.txt").read_text(encoding="utf-8") == "Q?\n(1) a\n(2) b\nAnswer:"
    assert '"continuations": [\n    " (1)",' in (pytester.path / "golden" / "kit.json").read_text(encoding="utf-8")
    (pytester.path / "golden" / "kit.txt").write_text("Q?\n(1) a\n(2) B\nAnswer:", encoding="utf-8")
    changed = pytester.runpytest("-q", "-k", "fixtures")
    changed.stdout.fnmatch_lines(["*differs from what was rendered*", "*-(2) B*", "*+(2) b*"])


def test_no_plugin_under_test_is_a_clear_failure(pytester):
    pytester.makepyfile("def test_x(prompt_style_manager):\n    pass\n")
    result = pytester.runpytest("-q")
    result.stdout.fnmatch_lines(["*no prompt-style plugin under test*"])


# -- what the kit may import ---------------------------------------------------------------


def test_the_core_never_imports_pytest():
    code = (
        "import sys, prompt_style, prompt_style.cli\n"
        "m = prompt_style.create_plugin_manager()\n"
        "t = prompt_style.load_task('examples/mmlu/task.yaml', plugins=m)\n"
        "list(t.render())\n"
        "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules, 'pytest was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_kit_uses_the_public_api_only():
    public = set(prompt_style.__all__)
    for path in TESTING.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("prompt_style"):
                assert node.module == "prompt_style", f"{path.name} imports {node.module}"
                assert {a.name for a in node.names} <= public, f"{path.name}: private names"
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                assert node.level == 1, f"{path.name} imports from outside prompt_style.testing"
            elif (
                isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "prompt_style"
            ):
                assert node.attr in public, f"{path.name} uses prompt_style.{node.attr}, which is not public"
