"""Few-shot examples chosen per record on the fast path (``prompt_style.fast_examples``):
lm-evaluation-harness's default sampler (``shared_random``), ``random``, a retriever
plugin of one's own. Every task renders its records through the fast path and the
general path; prompts, dialogues, lines and errors must agree."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from prompt_style import PromptStyleError, RenderedPrompt, create_plugin_manager, load_task
from prompt_style._markers import hookimpl
from prompt_style.fast_prompts import SelectedMessagesPrompt, SelectedPrompt
from prompt_style.lines import PromptEncoder
from prompt_style.safe.json_lines import dumps_line

RECORDS: list[Any] = [
    {"q": "Plain question?", "c": ["a", "b", "c", "d"], "a": 1, "s": "math"},
    {"q": "  {braces} {{x}} %s  ", "c": ["{a}", "}{", "{{", "%d"], "a": 0, "s": "x"},
    {"q": "Ünïcødé — 你好 \u2028 tab\t", "c": ["α", "β", "γ"], "a": 2, "s": "ü"},
    {"q": "five?", "c": ["1", "2", "3", "4", "5"], "a": 4, "s": "a"},
    {"q": "text target", "c": ["a", "b"], "a": "b", "s": "c"},
    {"q": None, "c": ["a", "b"], "a": 0, "s": "c"},
    {"q": "null choice", "c": ["a", None], "a": 0, "s": "c"},
    {"q": "out of range", "c": ["a", "b"], "a": 5, "s": "c"},
    {"q": 42, "c": ["a", "b"], "a": 0, "s": "c"},
    {"c": ["a", "b"], "a": 0, "s": "missing question"},
    {"q": "long " * 200, "c": ["x", "y"], "a": 1, "s": "c"},
    {"q": "no subject", "c": ["x", "y"], "a": 1},
] * 3

POOL: list[dict[str, Any]] = [
    {"q": "Shot {0} one?", "c": ["x", "y", "z", "w"], "a": 2, "s": "dev"},
    {"q": "  shot two  ", "c": ["{p}", "q"], "a": 1, "s": "dev"},
    {"q": "shot ___ three \u2029", "c": ["α", "β", "γ"], "a": 0, "s": "dev"},
    {"q": "Shot four", "c": ["one", "two", "three"], "a": "two", "s": "dev"},
    {"q": "Shot five", "c": ["p", "q"], "a": 0, "s": "dev"},
    {"q": "Shot six", "c": ["r", "s", "t", "u"], "a": 3, "s": "dev"},
]

STYLES: dict[str, Any] = {
    "mcq": {"template_type": "mcq"},
    "numbers": {"template_type": "mcq", "choice_format": "{number:02d}. {choice}", "answer_format": "{number}"},
    "cloze": "cloze",
    "passthrough": "passthrough",
}

RETRIEVERS: dict[str, Any] = {
    "random": "random",
    "shared_random": "shared_random",
    "first_n_exclude": {"name": "first_n", "exclude_record": True},
}


def task_of(style: Any = "mcq", retriever: Any = "random", shots: int = 3, **keys: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "data": {"test": [{"q": "unused", "c": ["a"], "a": 0}], "dev": POOL},
        "fewshot_split": "dev",
        "doc_to_text": "q",
        "doc_to_choice": "c",
        "doc_to_target": "a",
        "template": STYLES[style] if isinstance(style, str) else style,
        "num_fewshot": shots,
        "retriever": retriever,
        **keys,
    }
    return task


def outcome(renderer: Any, record: Any, index: int) -> tuple[Any, ...]:
    try:
        r = renderer.render(record, index)
    except PromptStyleError as exc:
        return ("error", type(exc).__name__, str(exc), exc.key, exc.index)
    return ("ok", r.to_json(), r.dialogue, r.text, r.fewshot_indices, r.continuations, r.target, r)


def assert_same(task: Any, pm: Any, records: list[Any], taken: bool = True, **options: Any) -> list[Any]:
    fast = load_task(task, plugins=pm, **options).renderer
    general = load_task(task, plugins=pm, **options).renderer
    general._fast = None
    assert (fast.fast_render() is not None) is taken
    outcomes = []
    for index, record in enumerate(records):
        a, b = outcome(fast, record, index), outcome(general, record, index)
        assert a == b, f"record {index} {record!r}:\nfast    {a!r}\ngeneral {b!r}"
        outcomes.append(a)
    return outcomes


@pytest.mark.parametrize("retriever", list(RETRIEVERS))
@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize(
    "description", [None, "The following are questions.\n\n", "{{ 'Fixed' }} text\n\n", "About {{ s }}:\n\n"]
)
def test_examples_chosen_per_record_equal_the_general_path(pm_all, style, retriever, description):
    keys = {} if description is None else {"description": description}
    outcomes = assert_same(task_of(style, RETRIEVERS[retriever], **keys), pm_all, RECORDS)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    assert made and any(o[0] == "error" for o in outcomes)
    assert any(type(p) is SelectedPrompt for p in made)
    if retriever != "first_n_exclude":
        assert len({p.fewshot_indices for p in made}) > 1  # (the examples differ by record)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
        copied = pickle.loads(pickle.dumps(prompt))
        assert copied == prompt and type(copied) is RenderedPrompt


@pytest.mark.parametrize("shots", [0, 1, 5])
def test_any_number_of_examples(pm, shots):
    assert_same(task_of("mcq", "shared_random", shots=shots, description="D\n\n"), pm, RECORDS)


@pytest.mark.parametrize(
    "keys",
    [
        {"fewshot_delimiter": " || ", "target_delimiter": ":: "},
        {"output_type": "generate_until", "doc_to_choice": None, "template": "passthrough"},
        {"description": "About {{ s }}:\n\n"},  # a description per record: made once per description
        {"description": "{{ '' if s == 'c' else s }}"},  # an empty one: no system turn
        {"description": "About {{ s }}", "fewshot_delimiter": " || "},
    ],
    ids=["delimiters", "generation", "description_per_record", "empty_for_some", "description_and_delimiter"],
)
def test_task_settings(pm, keys):
    task = task_of("mcq", "random")
    task.update(keys)
    if task.get("doc_to_choice") is None:
        task.pop("doc_to_choice")
    assert_same(task, pm, RECORDS)


def test_examples_without_an_answer_and_with_bad_data(pm):
    pool = [*POOL, {"q": "no answer", "c": ["a", "b"], "a": None, "s": "dev"}, {"q": None, "c": ["a"], "a": 0}]
    task = task_of("passthrough", "random", shots=4)
    task["data"] = {**task["data"], "dev": pool}
    task["doc_to_target"] = "{{ a }}"
    outcomes = assert_same(task, pm, RECORDS * 2)
    errors = [o for o in outcomes if o[0] == "error"]
    assert any("few-shot example" in o[2] for o in errors)


def test_the_evaluated_split_as_the_pool(pm):
    """lm-evaluation-harness draws one more example and drops the record itself."""
    good = [r for r in RECORDS if isinstance(r.get("q"), str) and None not in r["c"] and r["a"] in (0, 1)]
    task = task_of("mcq", "shared_random", shots=2)
    task["data"] = {"test": good, "dev": POOL}
    task["fewshot_split"] = "test"
    assert_same(task, pm, good)


@pytest.mark.parametrize("meta", ["chatml", "messages"])
@pytest.mark.parametrize("retriever", list(RETRIEVERS))
@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("description", [None, "The following are questions.\n\n", "About {{ s }}"])
@pytest.mark.parametrize("instruction", [None, "Be brief."])
def test_a_chat_format_closing_its_turns_alike_joins_them_too(pm_all, meta, style, retriever, description, instruction):
    """ChatML and API messages (``closed_turn``): the examples are user/assistant turns of
    their own, each closed alike; the text and the messages are joined from each example's."""
    keys = {} if description is None else {"description": description}
    options = {"meta": meta} if instruction is None else {"meta": meta, "system_instruction": instruction}
    outcomes = assert_same(task_of(style, RETRIEVERS[retriever], **keys), pm_all, RECORDS, **options)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    kind = SelectedMessagesPrompt if meta == "messages" else SelectedPrompt
    assert any(type(p) is kind for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert prompt.messages and prompt.messages[-1]["role"] == "user"
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
        copied = pickle.loads(pickle.dumps(prompt))
        assert copied == prompt and type(copied) is RenderedPrompt


@pytest.mark.parametrize("meta", ["llama-3", "qwen", "mistral::v3", "phi-3::mini"])
@pytest.mark.parametrize("retriever", list(RETRIEVERS))
@pytest.mark.parametrize("description", [None, "The following are questions.\n\n", "About {{ s }}"])
@pytest.mark.parametrize("instruction", [None, " Be brief. "])
def test_a_models_own_chat_template_joins_them_too(pm_all, meta, retriever, description, instruction):
    """A model's own chat template (``hf``: the named formats) declares ``closed_turn``
    where it writes a turn's content as it is; the text before the first example (a
    begin-of-text token, a default system message) is read off ``apply``; a template
    that trims contents (Llama 3's) takes the questions and examples trimming leaves
    alone, the others the general path; a description per record takes the general
    path. Equal to the general path either way."""
    keys = {} if description is None else {"description": description}
    options = {"meta": meta} if instruction is None else {"meta": meta, "system_instruction": instruction}
    # a description per record: the general path (the text before the first example of
    # each description is not checked whole)
    per_record = description is not None and "{{" in description
    task = task_of("mcq", RETRIEVERS[retriever], **keys)
    outcomes = assert_same(task, pm_all, RECORDS, taken=not per_record, **options)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    if per_record:
        return
    # (Llama 3's template trims contents: two of the pool's first three examples have white
    # space at an end, so first_n's records are the general path's)
    if meta == "qwen" or (meta == "llama-3" and retriever != "first_n_exclude"):
        assert any(type(p) is SelectedPrompt for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")


@pytest.mark.parametrize("meta", ["chatml", "qwen", "llama-3", "messages"])
@pytest.mark.parametrize("retriever", list(RETRIEVERS))
@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("description", [None, "The following are questions.\n\n", "About {{ s }}"])
@pytest.mark.parametrize("instruction", [None, "Be brief."])
def test_examples_in_one_user_turn(pm_all, meta, retriever, style, description, instruction):
    """lm-evaluation-harness's chat rules without ``fewshot_as_multiturn``: the examples
    and the question are one user turn, its text joined from the examples' plain texts
    (``MergedSelection``), its message one; a format that trims the content (Llama 3's)
    for the records whose content it leaves alone. A format of messages only (no text)
    and a description per record take the general path."""
    keys = {} if description is None else {"description": description}
    options = {"meta": meta, "fewshot_as_multiturn": False}
    if instruction is not None:
        options["system_instruction"] = instruction
    taken = meta in ("chatml", "qwen", "llama-3") and not (description and "{{" in description)
    outcomes = assert_same(task_of(style, RETRIEVERS[retriever], **keys), pm_all, RECORDS, taken=taken, **options)
    made = [o[-1] for o in outcomes if o[0] == "ok"]
    # (Llama 3's template trims the content, which the first example's text starts: first_n's
    # first example has white space before it, so its records are the general path's)
    if taken and not (meta == "llama-3" and retriever == "first_n_exclude"):
        assert any(type(p) is SelectedPrompt for p in made)
    encoder = PromptEncoder()
    for prompt in made:
        assert encoder.line(prompt) == (dumps_line(prompt.to_json()) + "\n").encode("utf-8")
        if prompt.messages is not None:
            assert prompt.messages[-1]["role"] == "user" and len(prompt.dialogue) == len(prompt.messages)


@pytest.mark.parametrize("meta", ["chatml", "messages"])
def test_chat_lines_of_a_file_equal_the_general_path(make_task, pm_all, tmp_path, meta):
    good = [r for r in RECORDS if isinstance(r.get("q"), str) and None not in r["c"] and r["a"] in (0, 1)] * 50
    keys = {k: v for k, v in task_of("mcq", "shared_random", description="D\n\n").items() if k != "data"}
    path = make_task({"test": good, "dev": POOL}, **keys)
    task = load_task(path, plugins=pm_all, meta=meta, system_instruction="Sys \u2028 tem")
    got = list(task.json_lines())
    general = load_task(path, plugins=pm_all, meta=meta, system_instruction="Sys \u2028 tem")
    general.renderer._fast = None
    encoder = PromptEncoder()
    assert got == [general.provenance.line_bytes(p, encoder) for p in general.render()]
    assert task.renderer.fast_render() is not None and len(got) == len(good)
    first = json.loads(got[0])
    assert first["messages"][0] == {"role": "system", "content": "Sys \u2028 tem\n\nD\n\n"}
    assert [m["role"] for m in first["messages"][1:]] == ["user", "assistant"] * 3 + ["user"]


class OddIndices:
    """A retriever plugin choosing lists, negative and out-of-range indices."""

    @hookimpl
    def retrieve_examples(self):
        return {"odd": self.make}

    @staticmethod
    def make(**kwargs: Any) -> Any:
        class Odd:
            def select(self, index: int, record: Any) -> Any:
                return [[1, 0], (-1,), (0, 99), [], (True,), (2, 2)][index % 6]

            def shared_selection(self) -> None:
                return None

        return Odd()


def test_a_retriever_plugin_of_ones_own():
    pm = create_plugin_manager(entry_points=False, environ={}, plugins=[("odd-retriever", OddIndices())])
    outcomes = assert_same(task_of("mcq", "odd"), pm, [RECORDS[0]] * 12)
    assert [o[0] for o in outcomes[:6]] == ["ok", "ok", "error", "ok", "ok", "ok"]
    assert outcomes[1][4] == (-1,)  # the general path's indexing, as it was


def test_lines_of_a_file_equal_the_general_path(make_task, pm, tmp_path):
    good = [r for r in RECORDS if isinstance(r.get("q"), str) and None not in r["c"] and r["a"] in (0, 1)] * 100
    keys = {k: v for k, v in task_of("mcq", "shared_random", description="D\n\n").items() if k != "data"}
    path = make_task({"test": good, "dev": POOL}, **keys)
    task = load_task(path, plugins=pm)
    got = list(task.json_lines())
    general = load_task(path, plugins=pm)
    general.renderer._fast = None
    encoder = PromptEncoder()
    assert got == [general.provenance.line_bytes(p, encoder) for p in general.render()]
    assert task.renderer.fast_render() is not None and len(got) == len(good)
    assert len({json.loads(line)["fewshot_indices"].__repr__() for line in got}) > 10
