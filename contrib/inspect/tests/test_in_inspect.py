"""The bridge inside inspect_ai: samples, the solver, the scorer, the offline model, errors.

Needs inspect_ai (skipped without it: the repository's dev environment has
none). ``tools/bridges/e2e_inspect.py`` runs these in a venv with inspect_ai
0.3.285, then the real ``inspect eval`` cases.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (see tools/bridges/e2e_inspect.py)")

from inspect_ai.model import (  # noqa: E402
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelName,
    ModelOutput,
)
from inspect_ai.scorer import Target  # noqa: E402
from inspect_ai.solver import TaskState  # noqa: E402
from prompt_style_inspect import (  # noqa: E402
    chat_messages,
    message_dicts,
    prompt_style_task,
    record_to_sample,
    render,
    style_answer,
    task_samples,
)
from prompt_style_inspect.errors import PromptStyleInspectError  # noqa: E402
from prompt_style_inspect.model import OfflineModel  # noqa: E402

import prompt_style  # noqa: E402

RECORDS = [
    {"q": "Which planet is red?", "c": ["Venus", "Mars", "Jupiter"], "a": 1},
    {"q": "2 + 2 = ?", "c": ["3", "4"], "a": 1},
    {"q": "Largest ocean?", "c": ["Atlantic", "Pacific", "Indian", "Arctic"], "a": 1},
]


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text(
        "task: tiny\ndata: {test: test.jsonl}\nfewshot_split: test\ndoc_to_text: q\n"
        "doc_to_choice: '{{c}}'\ndoc_to_target: a\ntemplate: mcq\n",
        encoding="utf-8",
    )
    return path


def _state(sample, reply: str) -> TaskState:
    state = TaskState(
        model=ModelName("prompt_style_inspect/fixed"),
        sample_id=sample.id,
        epoch=1,
        input=sample.input,
        messages=[ChatMessageUser(content=sample.input)] if isinstance(sample.input, str) else list(sample.input),
        target=Target(sample.target),
        metadata=dict(sample.metadata),
    )
    state.output = ModelOutput.from_content(model="m", content=reply)
    return state


def _score(sample, reply: str):
    return asyncio.run(style_answer()(_state(sample, reply), Target(sample.target)))


def test_samples_are_the_rendered_prompts(task_file):
    task = prompt_style.load_task(task_file, shots=1)
    samples = task_samples(task)
    rendered = list(task.render())
    assert [s.input for s in samples] == [p.text for p in rendered]
    assert [s.id for s in samples] == [0, 1, 2]
    assert [s.target for s in samples] == ["B", "B", "B"]
    meta = samples[0].metadata["prompt_style"]
    assert "record" not in meta and meta["answers"] == ["A", "B", "C"] and meta["target"] == 1


def test_input_chooses_text_or_messages(task_file):
    chatml = prompt_style.load_task(task_file, meta="chatml")
    assert isinstance(task_samples(chatml)[0].input, list)  # chatml gives both: the messages
    assert task_samples(chatml, input="text")[0].input == next(iter(chatml.render())).text
    with pytest.raises(prompt_style.OptionError, match="input=messages, but the meta template gives text only"):
        task_samples(prompt_style.load_task(task_file), input="messages")


def test_chat_samples_are_messages(task_file):
    task = prompt_style.load_task(task_file, shots=1, meta="messages")
    [first, *_] = task_samples(task)
    assert message_dicts(first.input) == next(iter(task.render())).messages


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("B", "C"),
        ("**B**", "C"),
        ("(B)", "C"),
        ("The answer is (B).", "C"),
        ("Let me think.\nANSWER: B", "C"),
        ("B. Mars", "C"),
        ("Mars", "C"),  # the choice's text
        ("A", "I"),
        ("A cat sat on the mat.", "I"),  # an article is not the label A
    ],
)
def test_scorer_reads_the_reply_with_the_styles_parser(task_file, reply, value):
    [sample, *_] = task_samples(prompt_style.load_task(task_file))
    assert _score(sample, reply).value == value


def test_scorer_says_when_it_finds_no_answer(task_file):
    [sample, *_] = task_samples(prompt_style.load_task(task_file))
    nothing = _score(sample, "no idea")
    assert nothing.value == "I" and nothing.answer is None and nothing.explanation == "no answer found in the reply"


def test_scorer_reads_the_labels_the_style_showed(task_file):
    task = prompt_style.load_task(task_file, style="mcq", style_options={"choice_labels": ["I", "II", "III", "IV"]})
    [sample, *_] = task_samples(task)
    assert sample.target == "II" and _score(sample, "II").value == "C" and _score(sample, "I").value == "I"


def test_generative_multiple_choice_is_read_with_the_styles_parser(task_file):
    task = prompt_style.load_task(task_file, style_options={"generation": "cot"})
    [sample, *_] = task_samples(task)
    assert sample.target == "B" and "ANSWER: $LETTER" in sample.input
    assert _score(sample, "Mars is red.\nANSWER: B").value == "C"
    assert _score(sample, "The answer is (B).").value == "C"
    assert _score(sample, "ANSWER: A").value == "I"


def test_scorer_numbers_and_generation(task_file, tmp_path):
    [sample, *_] = task_samples(prompt_style.load_task(task_file, style="mcq::numbered"))
    assert sample.target == "2" and _score(sample, "2").value == "C" and _score(sample, "B").value == "I"
    gen = tmp_path / "gen.yaml"
    gen.write_text(
        "task: g\ndata: {test: test.jsonl}\ndoc_to_text: q\ndoc_to_target: '{{c[a]}}'\noutput_type: generate_until\n",
        encoding="utf-8",
    )
    [sample, *_] = task_samples(prompt_style.load_task(gen))
    assert sample.target == "Mars" and _score(sample, "mars").value == "C" and _score(sample, "Venus").value == "I"


def test_record_to_sample_numbers_records_or_reads_their_index(task_file):
    to_sample = record_to_sample(task_file, shots=1)
    samples = [to_sample(dict(r)) for r in RECORDS]
    assert [s.id for s in samples] == [0, 1, 2]
    task = prompt_style.load_task(task_file, shots=1)
    assert [s.input for s in samples] == [p.text for p in task.render()]
    by_field = record_to_sample(task, index_field="i")
    assert by_field({**RECORDS[2], "i": 2}).id == 2
    with pytest.raises(prompt_style.RenderError, match="field 'i'"):
        by_field(dict(RECORDS[0]))


def test_solver_renders_again_with_other_options(task_file):
    [sample, *_] = task_samples(prompt_style.load_task(task_file), source={"file": str(task_file), "options": {}})
    state = _state(sample, "")
    solve = render(meta="messages", shots=1, generate_reply=False)
    state = asyncio.run(solve(state, None))
    expected = next(iter(prompt_style.load_task(task_file, meta="messages", shots=1).render())).messages
    assert message_dicts(state.messages) == expected
    assert state.metadata["prompt_style"]["answers"] == ["A", "B", "C"]


def test_errors_are_one_line_and_typed(task_file, tmp_path):
    with pytest.raises(PromptStyleInspectError) as exc:
        prompt_style_task(str(task_file), shots="many")
    assert str(exc.value) == "prompt-style: error: -T: shots: must be a whole number, not 'many'"
    assert isinstance(exc.value.error, prompt_style.OptionError)
    with pytest.raises(PromptStyleInspectError, match="did you mean 'shots'"):
        prompt_style_task(str(task_file), shot=1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"q": "x", "c": ["a"], "a": 5}) + "\n", encoding="utf-8")
    with pytest.raises(PromptStyleInspectError) as exc:
        prompt_style_task(str(task_file), data=f"test={bad}")
    assert "record 0" in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(PromptStyleInspectError, match="unknown style 'nope'"):
        render(style="nope")
    with pytest.raises(PromptStyleInspectError, match="unknown offline model 'gpt'"):
        OfflineModel("gpt")


def test_every_record_that_does_not_render_is_named_at_once(task_file, tmp_path):
    bad = tmp_path / "bad.jsonl"
    records = [RECORDS[0], {**RECORDS[1], "a": 7}, RECORDS[2], {"c": ["x"], "a": 0}]
    bad.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(PromptStyleInspectError) as exc:
        prompt_style_task(str(task_file), data=f"test={bad}")
    assert isinstance(exc.value.error, prompt_style.RecordErrors)
    assert [e.index for e in exc.value.error.errors] == [1, 3]
    assert "2 of 4 records cannot be rendered" in str(exc.value) and "\n" not in str(exc.value)


def test_messages_with_images_and_what_inspect_cannot_hold():
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        }
    ]
    converted = chat_messages(messages, 0)
    assert isinstance(converted[0].content[0], ContentText) and isinstance(converted[0].content[1], ContentImage)
    assert message_dicts(converted) == messages
    with pytest.raises(prompt_style.RenderError, match="role 'tool'"):
        chat_messages([{"role": "tool", "content": "x"}], 3)
    with pytest.raises(prompt_style.RenderError, match="name"):
        chat_messages([{"role": "user", "content": "x", "name": "bob"}], 3)
    with pytest.raises(prompt_style.RenderError, match="no inspect_ai equivalent"):
        chat_messages([{"role": "user", "content": [{"type": "audio_url", "audio_url": {"url": "x"}}]}], 3)


def test_offline_model_records_and_replies(tmp_path):
    record = tmp_path / "received.jsonl"
    model = OfflineModel("fixed", reply="C", record=str(record))
    output = asyncio.run(model.generate([ChatMessageUser(content="hi")], [], "none", GenerateConfig()))
    assert output.completion == "C"
    assert json.loads(record.read_text())["messages"] == [{"role": "user", "content": "hi"}]
    assert asyncio.run(model.count_text_tokens("a" * 40)) == 10


def test_offline_model_records_any_text_one_line_each(tmp_path):
    """U+2028 (a line end to str.splitlines) and a lone surrogate (no UTF-8 for it) in a prompt:
    still one JSON line per request, decoding to the same text."""
    record = tmp_path / "received.jsonl"
    model = OfflineModel("echo", record=str(record))
    text = "a\u2028b\u2029c\x85d\ud800e ✓"
    asyncio.run(model.generate([ChatMessageUser(content=text)], [], "none", GenerateConfig()))
    lines = record.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["messages"] == [{"role": "user", "content": text}]
