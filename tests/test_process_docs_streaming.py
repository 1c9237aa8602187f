"""lm-evaluation-harness ``process_docs`` run record by record as the evaluated split is rendered.

A ``process_docs`` whose steps are row-wise (``dataset.map(fn)``, ``dataset.filter(fn)``,
column edits: nearly all of lm-eval's) gives a split that is processed as it is read,
in constant memory. These tests check that it gives what processing the split whole
gives (the eager path, reached here by a ``process_docs`` that asks for ``len``), that
functions drawing from the global generators still draw in lm-eval's order, and that a
record the function fails on is named.
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prompt_style import RenderError, load_task
from prompt_style.cli import main
from prompt_style.formats.lm_eval.docs import Docs, ProcessedSplit, StreamedDocs

TASK = """\
task: tiny
dataset_path: some/dataset
output_type: multiple_choice
test_split: test
process_docs: !function utils.{function}
doc_to_text: "{{{{query}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: gold
"""

UTILS = """
import random


def _doc(doc):
    return {"query": doc["q"].strip() + "?", "choices": [c.upper() for c in doc["opts"]], "gold": int(doc["label"])}


def mapped(dataset):
    return dataset.map(_doc)


def mapped_whole(dataset):
    len(dataset)  # reads the split whole: the eager path
    return dataset.map(_doc)


def chained(dataset):
    kept = dataset.filter(lambda x: x["keep"])
    numbered = kept.map(lambda doc, i: {"q": f"{i}: {doc['q']}"}, with_indices=True)
    renamed = numbered.remove_columns(["opts"]).rename_column("options", "opts").remove_columns(["keep"])
    return renamed.map(_doc, remove_columns=["extra"])


def chained_whole(dataset):
    return chained(dataset.select(range(len(dataset))))


def columns(dataset):
    def count(opts, label):
        opts.reverse()  # a copy: the row keeps its own
        return {"n": len(opts), "query": "x", "choices": ["a", "b"], "gold": 0}

    return dataset.map(count, input_columns=["opts", "label"])


def columns_whole(dataset):
    len(dataset)
    return columns(dataset)


def in_place(dataset):
    def change(doc):
        doc["opts"].append("zz")
        doc["q"] = doc["q"] + "!"
        return _doc(doc)

    return dataset.map(change)


def in_place_whole(dataset):
    len(dataset)
    return in_place(dataset)


def shuffled(dataset):
    def shuffle(doc):
        opts = list(doc["opts"])
        random.shuffle(opts)
        return {"query": doc["q"], "choices": opts, "gold": opts.index(doc["opts"][0])}

    return dataset.map(shuffle)


def shuffled_whole(dataset):
    len(dataset)
    return shuffled(dataset)


def unchanged(dataset):
    return dataset
"""


def _records(n: int) -> list[dict[str, Any]]:
    return [
        {
            "q": f"  question {i} ",
            "opts": [f"a{i}", f"b{i}", f"c{i}"],
            "options": [f"o{i}", f"p{i}"],
            "label": str(i % 2),
            "keep": i % 4 != 1,
            "extra": i,
        }
        for i in range(n)
    ]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "utils.py").write_text(textwrap.dedent(UTILS), encoding="utf-8")
    data = tmp_path / "test.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _records(40)), encoding="utf-8")
    for name in (
        "mapped",
        "mapped_whole",
        "chained",
        "chained_whole",
        "columns",
        "columns_whole",
        "in_place",
        "in_place_whole",
        "shuffled",
        "shuffled_whole",
        "unchanged",
    ):
        (tmp_path / f"{name}.yaml").write_text(TASK.format(function=name), encoding="utf-8")
    return tmp_path


def _load(folder: Path, name: str, pm, data: Any = None, **kw: Any):
    return load_task(
        folder / f"{name}.yaml", plugins=pm, data={"test": data or folder / "test.jsonl"}, trust_code=True, **kw
    )


@pytest.mark.parametrize("name", ["mapped", "chained", "in_place"])
def test_row_wise_steps_are_streamed_and_give_what_the_whole_split_gives(folder, pm, name):
    streamed = _load(folder, name, pm)
    split = streamed.config.data["test"]
    assert isinstance(split, ProcessedSplit)
    whole = _load(folder, f"{name}_whole", pm)
    assert isinstance(whole.config.data["test"], list)
    got = list(streamed.render())
    assert got == list(whole.render())
    assert got and split.docs._read is None  # rendered without holding the split
    assert list(streamed.records()) == list(whole.records())


def test_input_columns_give_the_function_copies(folder, pm):
    streamed, whole = _load(folder, "columns", pm), _load(folder, "columns_whole", pm)
    assert isinstance(streamed.config.data["test"], ProcessedSplit)
    records = list(streamed.records())
    assert records == list(whole.records())
    assert records[0]["opts"] == ["a0", "b0", "c0"] and records[0]["n"] == 3


def test_records_given_in_memory_are_not_changed(folder, pm):
    given = _records(6)
    before = json.loads(json.dumps(given))
    task = _load(folder, "in_place", pm, data=given)
    assert isinstance(task.config.data["test"], ProcessedSplit)
    assert [r.text for r in task.render()] == [f"question {i} !?" for i in range(6)]
    assert given == before


def test_returning_the_split_unchanged_streams_it(folder, pm):
    (folder / "plain.yaml").write_text(
        TASK.format(function="unchanged")
        .replace("{{query}}", "{{q}}")
        .replace("{{choices}}", "{{opts}}")
        .replace("doc_to_target: gold", "doc_to_target: '{{label}}'"),
        encoding="utf-8",
    )
    task = _load(folder, "plain", pm)
    assert isinstance(task.config.data["test"], ProcessedSplit)
    assert [r.text for r in task.render()][:2] == ["  question 0 ", "  question 1 "]


def test_a_function_drawing_from_random_is_run_whole_when_the_task_loads(folder, pm):
    streamed = _load(folder, "shuffled", pm)
    # random.shuffle: processed whole, as lm-eval does, not streamed
    assert isinstance(streamed.config.data["test"], list)
    random.seed(5)  # what runs between loading and rendering does not change its draws
    whole = _load(folder, "shuffled_whole", pm)
    random.seed(6)
    assert list(streamed.render()) == list(whole.render())
    assert len({tuple(r.continuations) for r in streamed.render()}) > 1


def test_a_function_with_its_own_generator_is_run_whole(folder, pm):
    # GPQA n_shot's utils.py: a module-level random.Random(42) shuffles each row's choices
    (folder / "utils_rng.py").write_text(
        "import random\n\nrng = random.Random(42)\n\n"
        "def process_docs(d):\n"
        "    def f(doc):\n"
        "        opts = list(doc['opts'])\n"
        "        rng.shuffle(opts)\n"
        "        return {'query': doc['q'], 'choices': opts, 'gold': 0}\n"
        "    return d.map(f)\n",
        encoding="utf-8",
    )
    (folder / "rng.yaml").write_text(
        TASK.format(function="process_docs").replace("utils.", "utils_rng."), encoding="utf-8"
    )
    task = _load(folder, "rng", pm)
    assert isinstance(task.config.data["test"], list)
    assert list(task.records()) == list(task.records())  # read twice, the same records


def test_numpy_draws_are_run_whole_too(folder, pm):
    np = pytest.importorskip("numpy")
    (folder / "utils_np.py").write_text(
        "import numpy\n\n"
        "def process_docs(d):\n"
        "    return d.map(lambda x: {'query': 'n' + str(numpy.random.randint(1000)), 'choices': ['a'], 'gold': 0})\n",
        encoding="utf-8",
    )
    (folder / "np.yaml").write_text(
        TASK.format(function="process_docs").replace("utils.", "utils_np."), encoding="utf-8"
    )
    task = _load(folder, "np", pm)
    assert isinstance(task.config.data["test"], list)
    np.random.seed(1234)
    assert [r.text for r in task.render()] == ["n" + str(np.random.randint(1000)) for _ in range(40)]


def test_a_record_the_function_fails_on_is_named(folder, pm):
    (folder / "utils_bad.py").write_text(
        "def process_docs(d):\n"
        "    def f(doc):\n"
        "        if doc['extra'] == 7:\n"
        "            raise KeyError('ctx_z')\n"
        "        if doc['extra'] == 9:\n"
        "            return ['no']\n"
        "        return {'query': doc['q'], 'choices': doc['opts'], 'gold': 0}\n"
        "    return d.map(f)\n",
        encoding="utf-8",
    )
    path = folder / "bad.yaml"
    path.write_text(TASK.format(function="process_docs").replace("utils.", "utils_bad."), encoding="utf-8")
    task = load_task(path, plugins=pm, data={"test": folder / "test.jsonl"}, trust_code=True)
    rendered = []
    with pytest.raises(RenderError) as info:
        for prompt in task.render():
            rendered.append(prompt)
    err = info.value
    assert len(rendered) == 7  # the records before it
    assert (err.file, err.line, err.key, err.split, err.index) == (str(path), 5, "process_docs", "test", 7)
    assert "utils_bad.process_docs raised KeyError: 'ctx_z'" in str(err)
    # a function giving a row that is not a dict
    ok = folder / "ok.jsonl"
    ok.write_text("".join(json.dumps(r) + "\n" for r in _records(12)[8:]), encoding="utf-8")
    task = load_task(path, plugins=pm, data={"test": ok}, trust_code=True)
    with pytest.raises(RenderError, match=r"map's function must return a dict, not list") as info:
        list(task.render())
    assert info.value.index == 1


def test_the_command_line_names_the_record(folder, capsys):
    (folder / "utils_bad.py").write_text(
        "def process_docs(d):\n"
        "    def f(doc):\n"
        "        if doc['extra'] == 3:\n"
        "            raise ValueError('bad row')\n"
        "        return {'query': doc['q'], 'choices': doc['opts'], 'gold': 0}\n"
        "    return d.map(f)\n",
        encoding="utf-8",
    )
    path = folder / "bad.yaml"
    path.write_text(TASK.format(function="process_docs").replace("utils.", "utils_bad."), encoding="utf-8")
    code = main(["render", str(path), "--trust-code", "--data", f"test={folder / 'test.jsonl'}", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code != 0 and len(out.splitlines()) == 3
    assert "process_docs: split 'test' record 3: utils_bad.process_docs raised ValueError: bad row" in err
    assert "Traceback" not in err


def test_anything_else_reads_the_split_whole(folder, pm):
    calls = []

    def source():
        calls.append(1)
        return iter(_records(5))

    docs = StreamedDocs(source)
    mapped = docs.map(lambda d: {"n": 1})
    assert calls == []  # recorded, not run
    assert len(mapped) == 5 and calls == [1]
    assert mapped[0]["n"] == 1 and list(mapped.stream())[4]["n"] == 1 and calls == [1]  # kept once read
    batched = docs.map(lambda b: {"m": [1] * len(b["q"])}, batched=True)
    assert type(batched) is Docs and batched[2]["m"] == 1
    assert docs.filter(lambda d: d["keep"]).column_names[:2] == ["q", "opts"]


def test_streamed_steps_match_docs_steps_one_by_one():
    records = _records(9)
    for step in (
        lambda d: d.map(lambda x: {"z": x["q"]}, remove_columns="extra"),
        lambda d: d.map(lambda x, i: {"i": i}, with_indices=True),
        lambda d: d.map(lambda q, k: {"w": q + str(k)}, input_columns=["q", "keep"]),
        lambda d: d.map(lambda x, add: {"a": add}, fn_kwargs={"add": 3}),
        lambda d: d.map(None),
        lambda d: d.filter(lambda x, i: i % 2 == 0, with_indices=True),
        lambda d: d.filter(lambda k: k, input_columns="keep"),
        lambda d: d.filter(None),
        lambda d: d.select_columns(["q", "label"]),
        lambda d: d.remove_columns("opts"),
        lambda d: d.rename_columns({"q": "question"}),
        lambda d: d.rename_column("q", "question"),
    ):
        eager = step(Docs(records)).to_list()
        streamed = step(StreamedDocs(lambda: iter(json.loads(json.dumps(records))), owned=True))
        assert isinstance(streamed, StreamedDocs)
        assert list(streamed.stream()) == eager
    assert records == _records(9)


def test_the_split_pickles_as_its_records(folder, pm):
    import pickle

    split = _load(folder, "mapped", pm).config.data["test"]
    assert pickle.loads(pickle.dumps(split)) == _load(folder, "mapped_whole", pm).config.data["test"]


def test_the_module_docstring_is_kept(folder):
    assert "constant memory" in (sys.modules["prompt_style.formats.lm_eval.docs"].__doc__ or "")


# -- what counts as computing from the row alone ----------------------------------------

TABLE = ["A", "B", "C"]
MAPPING = {"true": 1, "false": 0}
PATTERN = __import__("re").compile(r"\[.*?\]")
COUNTER = [0]
_RNG = random.Random(1)


def _clean(text):
    import re as _re  # noqa: F401 - an import inside is a local, not state

    return PATTERN.sub("", text).strip()


def _uses_table(doc):
    return {"letter": TABLE[doc["i"]], "gold": MAPPING[doc["label"]], "text": _clean(doc["q"])}


def _counts(doc):
    COUNTER[0] += 1
    return {"n": COUNTER[0]}


def _appends(doc):
    TABLE.append(doc["q"])
    return doc


def _draws(doc):
    return {"x": _RNG.random()}


def _sets_global(doc):
    global TABLE
    TABLE = []
    return doc


def _calls_stateful(doc):
    return _draws(doc)


def test_stateless_reads_the_code():
    from functools import partial

    from prompt_style.formats.lm_eval.stateless import inert, stateless

    assert stateless(_uses_table) and stateless(_clean) and stateless(lambda d: d["q"].upper())
    subject = "math"
    assert stateless(lambda x: x["subject"] == subject)  # a closure over a text
    assert stateless(partial(lambda d, k: d[k], k="q")) and stateless(len)
    for impure in (
        _counts,
        _appends,
        _draws,
        _sets_global,
        _calls_stateful,
        random.shuffle,
        _RNG.random,
        open,
        print.__call__,
    ):
        assert not stateless(impure), impure
    seen = []
    assert not stateless(lambda d: seen.append(d))  # a closure's list, changed
    total = 0

    def nonlocal_counter(d):
        nonlocal total
        total += 1
        return {"n": total}

    assert not stateless(nonlocal_counter)
    assert inert(("a", 1, (2.0, None))) and inert({"a": [1, 2]}) and not inert(object()) and not inert(_RNG)


def _imports_random(doc):
    import random as r

    return {"x": r.random()}


def test_stateless_sees_imports_late_cells_and_partials():
    from functools import partial
    from re import sub

    from prompt_style.formats.lm_eval.stateless import stateless

    assert not stateless(_imports_random)  # an import inside the function
    assert stateless(lambda doc: sub(r"\s+", " ", doc["q"]))  # re's own function, by name
    assert stateless(partial(_uses_table)) and not stateless(partial(_draws))

    def later():
        def f(doc):
            return generator.random()

        unset = stateless(f)  # its closure's variable is not set yet
        generator = random.Random(0)
        return unset, stateless(f)

    assert later() == (False, False)

    class Looks:  # has func, args and keywords, but is not a partial
        func, args, keywords = staticmethod(len), (), {}

        def __call__(self, doc):
            return doc

    assert not stateless(Looks())


def test_a_split_left_empty_and_errors_after_a_column_edit(folder, pm):
    (folder / "utils_more.py").write_text(
        "def none_left(d):\n"
        "    return d.filter(lambda doc: doc['extra'] < 0)\n\n"
        "def renamed(d):\n"
        "    def f(doc):\n"
        "        if doc['n'] == 5:\n"
        "            raise ValueError('five')\n"
        "        return {'query': doc['q'], 'choices': doc['opts'], 'gold': 0}\n"
        "    return d.rename_column('extra', 'n').map(f)\n",
        encoding="utf-8",
    )
    for name in ("none_left", "renamed"):
        (folder / f"{name}.yaml").write_text(
            TASK.format(function=name).replace("utils.", "utils_more."), encoding="utf-8"
        )
    task = _load(folder, "none_left", pm)
    assert isinstance(task.config.data["test"], ProcessedSplit)
    with pytest.raises(RenderError, match="split 'test' has no records left after process_docs") as info:
        list(task.render())
    assert info.value.key == "process_docs" and info.value.file == str(folder / "none_left.yaml")
    task = _load(folder, "renamed", pm)
    with pytest.raises(RenderError, match="raised ValueError: five") as info:
        list(task.render())
    assert info.value.index == 5


def test_steps_after_a_step_read_whole_leave_its_rows_as_they_were():
    def source():
        return iter(_records(4))

    first = StreamedDocs(source, owned=True).map(lambda d: {"q": d["q"].strip()})
    second = first.map(lambda d: {"q": d["q"] + "!"})
    assert len(first) == 4  # read whole (kept) after the second step was made
    assert [r["q"] for r in second.stream()] == [f"question {i}!" for i in range(4)]
    assert [r["q"] for r in second.stream()] == [f"question {i}!" for i in range(4)]  # again, the same
    assert [r["q"] for r in first.stream()] == [f"question {i}" for i in range(4)]
