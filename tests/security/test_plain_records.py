"""Objects in records (the Python API): a template reads records, it does not act on them.

Only plain data reaches a template; a value of another type that a template refers
to is converted when nothing is lost (string, number and mapping subclasses) or
refused with a DataError naming the field and its type. The file a payload tries to
read never shows, the file it tries to write is never made.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import os
import types
from pathlib import Path

import pytest

from prompt_style import DataError, PromptStyleError, load_task, render_records
from prompt_style.safe.plain import plain_value

SECRET = "TOP-SECRET-5d2e"


@pytest.fixture
def secret(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret.txt").write_text(SECRET)
    yield tmp_path
    assert not (tmp_path / "pwned.txt").exists()


def rendered(template: str, records: list, **task) -> str:
    task.setdefault("doc_to_target", "a")
    return render_records(records, doc_to_text=template, **task)[0].text


@pytest.mark.parametrize(
    "template, value",
    [
        ("{{ q.read_text() }}", lambda: Path("secret.txt")),
        ("{{ q.write_text('x') }}", lambda: Path("pwned.txt")),
        ("{{ (q.parent / 'pwned.txt').touch() }}", lambda: Path("secret.txt")),
        ("{{ q }}", lambda: Path("secret.txt")),
        ("{{ q.name }}", lambda: Path("secret.txt")),
        ("{{ q('secret.txt').read() }}", lambda: open),
        ("{{ q.read() }}", lambda: open("secret.txt")),
        ("{% for line in q %}{{ line }}{% endfor %}", lambda: open("secret.txt")),
        ("{{ 'TOP' in q }}", lambda: open("secret.txt")),
        ("{{ q|list }}", lambda: open("secret.txt")),
        ("{{ q.strftime('%Y') }}", lambda: datetime.date(2020, 1, 2)),
        ("{{ q }}", lambda: decimal.Decimal("1.5")),
        ("{{ q.system('touch pwned.txt') }}", lambda: os),
        ("{{ q.x }}", lambda: types.SimpleNamespace(x=1)),
        ("{{ q[0].read() }}", lambda: [open("secret.txt")]),
        ("{{ q.k.read_text() }}", lambda: {"k": Path("secret.txt")}),
        ("{{ q[0][0].read_text() }}", lambda: ([Path("secret.txt")],)),
        ("{{ q|first }}", lambda: {"a", "b"}),
        ("{{ q }}", lambda: b"bytes"),
        ("Q: {q}", lambda: Path("secret.txt")),
    ],
)
def test_objects_are_refused_naming_the_field_and_its_type(secret, template, value):
    with pytest.raises(DataError) as info:
        rendered(template, [{"q": value(), "a": "x"}])
    message = str(info.value)
    assert "field 'q" in message and "templates cannot see" in message
    assert SECRET not in message


def test_an_object_the_template_does_not_refer_to_is_left_alone(secret):
    assert rendered("{{ q }}", [{"q": "x", "a": "x", "image": Path("secret.txt")}]) == "x"


def test_lossless_conversions(secret):
    evil_text = type("Evil", (str,), {"boom": lambda self: open("pwned.txt", "w"), "__str__": lambda self: SECRET})
    assert rendered("{{ q.upper() }}", [{"q": evil_text("What"), "a": "x"}]) == "WHAT"
    assert rendered("{{ q }}", [{"q": evil_text("What"), "a": "x"}]) == "What"
    with pytest.raises(PromptStyleError):
        rendered("{{ q.boom() }}", [{"q": evil_text("What"), "a": "x"}])
    factory = collections.defaultdict(lambda: open("pwned.txt", "w"), k="v")
    assert rendered("{{ q.k }}", [{"q": factory, "a": "x"}]) == "v"
    with pytest.raises(PromptStyleError):
        rendered("{{ q.missing }}", [{"q": factory, "a": "x"}])
    point = collections.namedtuple("Point", "x y")
    assert rendered("{{ q[0] }}{{ q|length }}", [{"q": point(1, 2), "a": "x"}]) == "12"
    assert rendered("{{ q }}", [collections.OrderedDict(q="mapping record", a="x")]) == "mapping record"


def test_plain_values_are_used_as_they_are():
    value = {"k": ["a", 1, 2.5, None, True, ("t",)]}
    assert plain_value(value, "q") is value
    shared = ["x"]
    assert plain_value([shared, shared], "q")[0] is shared
    recursive: list = []
    recursive.append(recursive)
    assert plain_value(recursive, "q") is recursive  # walked once
    with pytest.raises(DataError, match="nests more than"):
        deep: list = []
        for _ in range(2000):
            deep = [deep]
        plain_value(deep, "q")


def test_records_of_lm_eval_task_files_too(secret, tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(
        "task: t\ndataset_path: json\noutput_type: generate_until\n"
        "doc_to_text: '{{ q.read_text() }}'\ndoc_to_target: '{{ a }}'\n"
    )
    loaded = load_task(task, data={"test": [{"q": Path("secret.txt"), "a": "x"}]})
    with pytest.raises(PromptStyleError) as info:
        list(loaded.render())
    assert "PosixPath" in str(info.value) and SECRET not in str(info.value)
