"""``Task.json_lines``: the lines ``render --format jsonl`` writes, made in the fast
path's loop without prompt objects, are byte for byte the provenance lines of
``Task.render()``'s prompts, whatever the records hold and whichever path takes them."""

from __future__ import annotations

import json
import random

import pytest

from prompt_style import PromptStyleError, load_task
from prompt_style.jsonl import _fused, json_line_batches
from prompt_style.lines import PromptEncoder, json_strings
from prompt_style.safe.json_lines import dumps_line

AWKWARD = [
    "plain",
    "",
    'a "quote" and a \\ backslash',
    "tab\tnew\nline",
    "Ünïcødé — 你好 😀",
    "line\u2028sep\u2029para\x85next",
    "lone \ud800 surrogate",
    "del \x7f and nul \x00",
    "{braces} and {{x}}",
]


def write_task(folder, test, train, **keys):
    """A task file and its splits; the JSON is ASCII, so that lone surrogates can be in it."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in (("test", test), ("train", train)):
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    path = folder / "task.yaml"
    task = {"task": "t", "data": {"test": "test.jsonl", "train": "train.jsonl"}, "fewshot_split": "train", **keys}
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def reference(task, limit=None):
    """The lines as the command line made them before: each prompt's line, one by one."""
    encoder = PromptEncoder()
    return [task.provenance.line_bytes(p, encoder) for p in task.render(limit)]


def records(n: int, seed: int = 7):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = 2 + i % 4
        texts = [rng.choice(AWKWARD) + f" {i}.{j}" for j in range(k)]
        labels = list("ABCDE")[:k]
        out.append(
            {
                "question": rng.choice(AWKWARD) + f" q{i}",
                "choices": {"text": texts, "label": labels},
                "answerKey": labels[rng.randrange(k)],
                "flat": texts,
                "gold": rng.randrange(k),
                "answer": rng.choice(AWKWARD),
            }
        )
    return out


ODD = [  # records the fast path hands to the general path, or takes another way
    {
        "question": "q",
        "choices": {"text": ["a", 2], "label": ["A", "B"]},
        "answerKey": "B",
        "flat": ["a", 2],
        "gold": 1,
        "answer": 7,
    },
    {
        "question": "q " * 40,
        "choices": {"text": ["a", "b"], "label": ["A", "B"]},
        "answerKey": "A",
        "flat": ["a", "b"],
        "gold": 0,
        "answer": ["r1", "r2"],
    },
    {
        "question": "q",
        "choices": {"text": [["x"], "b"], "label": ["A", "B"]},
        "answerKey": "A",
        "flat": [1.5, "b"],
        "gold": 0,
        "answer": "",
    },
]

TASKS = {
    "cloze": {
        "doc_to_text": "{{question}}",
        "doc_to_choice": "{{choices.text}}",
        "doc_to_target": "{{choices.label.index(answerKey)}}",
        "template": "cloze::qa",
    },
    "mcq": {
        "doc_to_text": "{{question.strip()}}",
        "doc_to_choice": "flat",
        "doc_to_target": "gold",
        "template": "mcq::mmlu",
    },
    "generation": {
        "doc_to_text": "Q: {{question}}\nA:",
        "doc_to_target": "answer",
        "output_type": "generate_until",
        "until": ["\n\n", "Q:", "\u2028"],
        "template": "passthrough",
    },
    "rolling": {
        "doc_to_text": "{{question}}",
        "doc_to_target": "{{question}} {{answer}}",
        "output_type": "loglikelihood_rolling",
        "template": "passthrough",
    },
}


@pytest.mark.parametrize(
    "meta", [None, "chatml", "messages", "chatml+system", "plain+system", "chatml+single", "messages+single"]
)
@pytest.mark.parametrize("kind", sorted(TASKS))
@pytest.mark.parametrize("shots", [0, 3])
def test_lines_are_the_prompts_lines(tmp_path, pm_all, kind, shots, meta):
    test = records(60) + ODD + records(5, seed=9)
    path = write_task(tmp_path, test, records(8, seed=3), **TASKS[kind])
    options = {"meta": meta} if meta else {}
    if meta and meta.endswith("+system"):  # lm-evaluation-harness's --system_instruction
        options = {"meta": meta.split("+")[0], "system_instruction": "Be brief. Ünï \u2028"}
    if meta and meta.endswith("+single"):  # its --fewshot_as_multiturn false: one user message
        options = {"meta": meta.split("+")[0], "fewshot_as_multiturn": False}
    task = load_task(path, plugins=pm_all, shots=shots, **options)
    got = list(task.json_lines())
    assert got == reference(load_task(path, plugins=pm_all, shots=shots, **options))
    assert [json.loads(line)["index"] for line in got] == list(range(len(test)))
    assert list(task.json_lines(limit=7)) == got[:7]
    assert flat(json_line_batches(task)) == got
    assert flat(json_line_batches(task, 7)) == got[:7]
    general = load_task(path, plugins=pm_all, shots=shots, **options)
    general.renderer._fast = None  # the general path only
    assert got == reference(general)


def flat(batches):
    out = []
    for batch in batches:
        assert type(batch) is list and batch
        out += batch
    return out


def test_the_fused_loop_is_used_where_it_can_be(tmp_path, pm_all):
    path = write_task(tmp_path, records(5), records(4), **TASKS["cloze"])
    task = load_task(path, plugins=pm_all, shots=2)
    task.renderer.fast_render()
    encoder = PromptEncoder()
    assert _fused(task, encoder, lambda p: b"") is not None
    # a record id of the task's own: each prompt carries it, through the prompts
    with_id = load_task(path, plugins=pm_all, shots=2, doc_id="question")
    assert _fused(with_id, encoder, lambda p: b"") is None
    assert list(with_id.json_lines()) == reference(with_id)


def test_records_in_memory_and_a_file_with_blank_lines(tmp_path, pm_all):
    test = records(30)
    data = tmp_path / "test.jsonl"
    lines = [json.dumps(r) for r in test]
    lines.insert(5, "")
    lines.insert(9, "   ")
    data.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    config = {"data": {"test": str(data), "train": records(4)}, "fewshot_split": "train", **TASKS["cloze"]}
    task = load_task(config, plugins=pm_all, shots=2)
    in_memory = load_task({**config, "data": {"test": test, "train": records(4)}}, plugins=pm_all, shots=2)
    assert list(task.json_lines()) == list(in_memory.json_lines()) == reference(in_memory)
    assert list(in_memory.json_lines(limit=4)) == reference(in_memory, limit=4)


def test_a_bad_record_after_good_ones_is_located(pm_all, tmp_path):
    from prompt_style.errors import DataError

    path = write_task(tmp_path, records(3), records(4), **TASKS["cloze"])
    data = path.parent / "test.jsonl"
    data.write_text(data.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    task = load_task(path, plugins=pm_all, shots=2)
    out = []
    with pytest.raises(DataError) as info:
        for line in task.json_lines():
            out.append(line)
    assert len(out) == 3
    assert info.value.line == 4 and info.value.key == "data.test"
    with pytest.raises(DataError) as info:
        for batch in json_line_batches(task):
            out += batch
    assert len(out) == 6
    assert info.value.line == 4 and info.value.key == "data.test"


LM_EVAL_TASK = """\
task: t
dataset_path: local
output_type: multiple_choice
test_split: test
doc_to_text: "Q: {{question}}"
doc_to_choice: "{{choices.text}}"
doc_to_target: "{{choices.label.index(answerKey)}}"
"""


@pytest.mark.parametrize("lm_eval", [False, True])
def test_batches_of_a_large_file_stop_at_an_error_after_the_lines_before_it(pm_all, tmp_path, lm_eval):
    """Several blocks of the data file: a list per block, and a record the general path
    refuses (no question) comes after every line before it, then its error."""
    from prompt_style.errors import PromptStyleError

    test = records(3000)
    del test[2100]["question"]
    path = write_task(tmp_path, test, records(4), **TASKS["cloze"])
    if lm_eval:  # lm-evaluation-harness's task file: its getters and their fallbacks
        path.write_text(LM_EVAL_TASK, encoding="utf-8")
        task = load_task(path, plugins=pm_all, data={"test": str(path.parent / "test.jsonl")})
    else:
        task = load_task(path, plugins=pm_all, shots=0)
    got = []
    with pytest.raises(PromptStyleError) as info:
        for batch in json_line_batches(task):
            got.append(batch)
    assert len(got) > 2  # more than one block
    lines = flat(got)
    assert len(lines) == 2100 and lines == list(task.json_lines(limit=2100))
    assert "2100" in str(info.value)
    # the lines one by one (a limit): the same, in lists of 256
    for limit in (2500, 3000):
        got = []
        with pytest.raises(PromptStyleError):
            for batch in json_line_batches(task, limit):
                got.append(batch)
        assert flat(got) == lines and max(map(len, got)) <= 256


@pytest.mark.parametrize(
    "items",
    [
        (" a", " b"),
        ("plain",),
        ('quo"te', "x"),
        ("back\\slash",),
        ('", "', "y"),
        ("tab\t",),
        ("\x7f",),
        ("ü", "\u2028"),
        ("lone \udc80",),
        ("", ""),
    ],
)
def test_string_lists_are_json_dumps_lists(items):
    assert json_strings(items) == dumps_line(list(items)).encode("utf-8")


def test_string_lists_are_json_dumps_lists_on_random_items():
    # the separators' escapes counted: any item needing an escape of its own, next to
    # line ends, lone surrogates and non-ASCII text, takes the item-by-item route
    import random

    rng = random.Random(7)
    alphabet = ["a", " ", '"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\x85", "\ud800", "😀", "'"]
    for _ in range(3000):
        items = tuple("".join(rng.choices(alphabet, k=rng.randint(0, 4))) for _ in range(rng.randint(1, 4)))
        expected = dumps_line(list(items)).encode("utf-8", "surrogatepass")
        assert json_strings(items) == expected, items


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_a_json_array_split_gives_the_general_path_s_lines(tmp_path, pm_all, kind):
    """A split given as one JSON array (not JSON Lines) goes through the fast path's loop
    in blocks of records: the same lines as the general path; a bad record is located."""
    test = records(300) + ODD + records(5, seed=9)
    path = write_task(tmp_path, test, records(8, seed=3), **TASKS[kind])
    (tmp_path / "test.json").write_text(json.dumps(test), encoding="utf-8")
    options = {"data": {"test": str(tmp_path / "test.json")}, "shots": 3}
    got = list(load_task(path, plugins=pm_all, **options).json_lines())
    general = load_task(path, plugins=pm_all, **options)
    general.renderer._fast = None
    assert got == reference(general) and len(got) == len(test)
    assert list(load_task(path, plugins=pm_all, **options).json_lines(limit=3)) == got[:3]
    (tmp_path / "bad.json").write_text(json.dumps([*test[:260], ["not", "a", "record"]]), encoding="utf-8")
    lines = load_task(path, plugins=pm_all, data={"test": str(tmp_path / "bad.json")}, shots=3).json_lines()
    made = []
    with pytest.raises(PromptStyleError, match="260") as caught:
        for line in lines:
            made.append(line)
    # (a JSON array is read whole and checked before rendering: no line before the error)
    assert made in ([], got[:260]) and "bad.json" in str(caught.value)


DESCRIPTIONS = {
    "text": "About {{answer}}:\n\n",  # awkward texts, a quote, U+2028, a lone surrogate
    "sometimes": "{% if gold == 0 %}{% else %}About {{ question[:4] }}\n{% endif %}",  # empty for some records
}


@pytest.mark.parametrize("description", sorted(DESCRIPTIONS))
@pytest.mark.parametrize("kind", ["cloze", "mcq", "generation"])
@pytest.mark.parametrize("shots", [0, 3])
def test_a_description_per_record_with_shared_examples(tmp_path, pm_all, kind, shots, description):
    """The lines of a task whose description reads the record (MMLU's subject in one file)
    and whose examples every record shares: the text before each question is made once
    per description; the lines are the prompts' lines, the general path's too."""
    test = records(60) + ODD + records(5, seed=9)
    path = write_task(tmp_path, test, records(8, seed=3), description=DESCRIPTIONS[description], **TASKS[kind])
    task = load_task(path, plugins=pm_all, shots=shots)
    assert task.renderer.fast_render() is not None and task.renderer._fast_path.lines is not None
    got = list(task.json_lines())
    assert got == reference(load_task(path, plugins=pm_all, shots=shots))
    assert flat(json_line_batches(task)) == got
    general = load_task(path, plugins=pm_all, shots=shots)
    general.renderer._fast = None
    assert got == reference(general)


def test_more_descriptions_than_are_kept(tmp_path, pm_all):
    test = records(4200, seed=5)  # (each its own description: the cache is emptied as it fills)
    path = write_task(tmp_path, test, records(8, seed=3), description="{{question}}\n", **TASKS["mcq"])
    task = load_task(path, plugins=pm_all, shots=2)
    got = list(task.json_lines())
    general = load_task(path, plugins=pm_all, shots=2)
    general.renderer._fast = None
    assert got == reference(general)


CHAT_OPTIONS = [
    {"meta": "chatml"},
    {"meta": "messages"},
    {"system_instruction": "Be brief."},
    {"meta": "chatml", "fewshot_as_multiturn": False},
]


@pytest.mark.parametrize("options", CHAT_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("description", sorted(DESCRIPTIONS))
def test_a_description_per_record_in_a_chat_format(tmp_path, pm_all, options, description):
    """A description that reads the record with shared examples, for a chat format or
    lm-evaluation-harness's chat rules: the fast path compiled once per description
    (fast_descriptions); the prompts (text, messages) and lines are the general path's."""
    test = records(60) + ODD + records(5, seed=9)
    path = write_task(tmp_path, test, records(8, seed=3), description=DESCRIPTIONS[description], **TASKS["mcq"])
    task = load_task(path, plugins=pm_all, shots=3, **options)
    assert task.renderer.fast_render() is not None
    assert _fused(task, PromptEncoder(), lambda p: b"") is not None  # lines by each description's path
    general = load_task(path, plugins=pm_all, shots=3, **options)
    general.renderer._fast = None
    assert [p.to_json() for p in task.render()] == [p.to_json() for p in general.render()]
    assert list(task.json_lines()) == reference(general)


def test_a_description_per_record_past_the_descriptions_compiled(tmp_path, pm_all, monkeypatch):
    from prompt_style import fast_descriptions

    monkeypatch.setattr(fast_descriptions, "MAX_DESCRIPTIONS", 3)  # the rest: the general path
    path = write_task(tmp_path, records(30), records(8, seed=3), description="About {{answer}}\n", **TASKS["mcq"])
    task = load_task(path, plugins=pm_all, shots=2, meta="chatml")
    general = load_task(path, plugins=pm_all, shots=2, meta="chatml")
    general.renderer._fast = None
    assert list(task.json_lines()) == reference(general)


def test_a_description_per_record_where_no_description_compiles(tmp_path, pm_all):
    path = write_task(tmp_path, records(10), records(8, seed=3), description="About {{answer}}\n", **TASKS["mcq"])
    # a chat template without the split the fast path needs (it looks at the content): not taken at all
    looking = (
        "{% for m in messages %}{% if m.content.startswith('<tool_response>') %}T{% endif %}"
        "<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>"
    )
    kwargs = {"meta": "hf", "meta_options": {"chat_template": looking}}
    task = load_task(path, plugins=pm_all, shots=2, **kwargs)
    assert task.renderer.fast_render() is None
    general = load_task(path, plugins=pm_all, shots=2, **kwargs)
    general.renderer._fast = None
    assert list(task.json_lines()) == reference(general)
