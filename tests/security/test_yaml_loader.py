"""The one YAML loader: YAML 1.2 core scalars, strictness, budgets, tags, lines."""

from __future__ import annotations

import json
import math
import pickle

import pytest
import yaml

from prompt_style import TaskFileError, YamlLimitError, YamlLimits, load_task, load_yaml
from prompt_style.safe.yaml_loader import YamlFloat, parse_scalar


def data(text: str, **kw):
    return load_yaml("t.yaml", text=text, **kw).data


def error(text: str, cls=TaskFileError, **kw) -> TaskFileError:
    with pytest.raises(cls) as info:
        load_yaml("t.yaml", text=text, **kw)
    assert info.value.file == "t.yaml"
    return info.value


@pytest.mark.parametrize(
    "text, value",
    [
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("Yes", "Yes"),
        ("0755", "0755"),
        ("007", "007"),
        ("1:30", "1:30"),
        ("2001-12-14", "2001-12-14"),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("=", "="),
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("0", 0),
        ("-12", -12),
        ("+5", 5),
        ("0o17", 15),
        ("0x1F", 31),
        ("1.5", 1.5),
        ("-0.25", -0.25),
        ("1e3", 1000.0),
        (".5", 0.5),
        (".inf", math.inf),
        ("-.Inf", -math.inf),
        ("abc", "abc"),
        ("9" * 5000, "9" * 5000),
    ],
)
def test_yaml_1_2_core_schema_scalars(text, value):
    assert parse_scalar(text) == value
    assert type(parse_scalar(text)) in (type(value), YamlFloat)
    assert data(f"k: {text}")["k"] == value


def test_nan():
    assert math.isnan(data("k: .nan")["k"])


def test_quoted_and_tagged_scalars():
    assert data("a: 'yes'\nb: \"1\"\nc: !!str 12\nd: !!int '12'\ne: !!float 3\nf: !!bool 'true'\ng: !!null ''") == {
        "a": "yes",
        "b": "1",
        "c": "12",
        "d": 12,
        "e": 3.0,
        "f": True,
        "g": None,
    }
    assert "not a valid int" in str(error("a: !!int abc"))


def test_floats_print_as_written():
    values = data("k: [3.10, 1e3, .5, 1.50, 2.5]")["k"]
    assert [str(v) for v in values] == ["3.10", "1e3", ".5", "1.50", "2.5"]
    assert values[0] == 3.1 and values[1] + 1 == 1001
    assert json.dumps(values) == "[3.1, 1000.0, 0.5, 1.5, 2.5]"
    assert pickle.loads(pickle.dumps(values[0])) == values[0] and str(pickle.loads(pickle.dumps(values[0]))) == "3.10"
    assert f"{values[0]}" == "3.10" and "%s" % values[0] == "3.10"


def test_yaml_1_1_values_stay_strings_in_a_task(tmp_path, pm):
    (tmp_path / "t.jsonl").write_text('{"q": "Q?"}\n')
    (tmp_path / "t.yaml").write_text(
        "data: {test: t.jsonl}\ndoc_to_text: q\ndoc_to_choice: [yes, no, 0755, 1:30, 3.10, on]\ndoc_to_target: 0\n"
        "template: {template_type: mcq, choice_labels: [yes, no, on, off, y, n]}\n"
    )
    result = next(load_task(tmp_path / "t.yaml", plugins=pm).render())
    assert result.text == "Q?\nyes. yes\nno. no\non. 0755\noff. 1:30\ny. 3.10\nn. on\nAnswer:"
    assert result.continuations == (" yes", " no", " on", " off", " y", " n")


@pytest.mark.parametrize(
    "text, path, line",
    [
        ("a: 1\na: 2", "a", 2),
        ("data:\n  test: [{q: first, q: second}]", "data.test.0.q", 2),
        ("t:\n  x: {a: 1}\n  y:\n    b: 1\n    b: 2", "t.y.b", 5),
        ("m: {1: a, true: b}", "m.True", 1),
        ("m: {1: a, 1.0: b}", "m.1.0", 1),
    ],
)
def test_duplicate_keys_at_every_depth(text, path, line):
    err = error(text)
    assert (err.key, err.line) == (path, line)
    assert "appears twice" in str(err)


@pytest.mark.parametrize(
    "tag",
    [
        "!!omap [{a: 1}]",
        "!!pairs [{a: 1}]",
        "!!set {a}",
        "!!binary aGk=",
        "!!timestamp 2001-12-14",
        "!!python/object/apply:os.system ['ls']",
        "!!python/name:os.system",
        "!!python/tuple [1]",
        "!Custom x",
        "!<tag:example.com,2000:x> y",
    ],
)
def test_only_core_tags(tag):
    err = error(f"a: 1\nb: {tag}")
    assert err.line == 2 and "is not allowed" in str(err)


def test_callers_register_their_tags():
    """promptsource's !Template is a yaml.YAMLObject, built by a generator constructor."""

    class Template(yaml.YAMLObject):
        yaml_tag = "!Template"

    def function(loader, node):
        return ("fn", loader.construct_mapping(node, deep=True))

    text = "templates:\n  a: !Template {jinja: 'x {{ y }}', n: 3, on: yes, f: 3.10}\n  b: !Fn {k: [1, 0755]}\n"
    result = data(text, tags={"!Template": Template.from_yaml, "!Fn": function})
    assert isinstance(result["templates"]["a"], Template)
    assert result["templates"]["a"].__dict__ == {"jinja": "x {{ y }}", "n": 3, "on": "yes", "f": 3.1}
    assert result["templates"]["b"] == ("fn", {"k": [1, "0755"]})
    doc = load_yaml("t.yaml", text=text, tags={"!Template": Template.from_yaml, "!Fn": function})
    assert doc.lines["templates.a.jinja"] == 2
    with pytest.raises(TaskFileError, match="appears twice"):
        data("a: !Fn {k: 1, k: 2}", tags={"!Fn": function})
    with pytest.raises(TaskFileError, match="not allowed"):
        data("a: !Fn {k: !!python/name:os.system x}", tags={"!Fn": function})


def test_aliases_share_and_merge_keys_merge():
    result = data("base: &b {x: 1, y: [1, 2]}\nuse: *b\nm:\n  <<: *b\n  y: 3\nl: {<<: [{a: 1}, {a: 2, b: 2}], c: 3}")
    assert result["use"] is result["base"]
    assert result["m"] == {"x": 1, "y": 3}
    assert result["l"] == {"a": 1, "b": 2, "c": 3}


def test_alias_bomb_stops_at_once():
    laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)
    )
    err = error(laughs, YamlLimitError)
    assert err.limit == "max_nodes" and "aliases expand" in str(err)
    assert err.line is not None


def test_recursive_and_missing_aliases():
    assert "contains it" in str(error("a: &x [1, *x]"))
    assert "contains it" in str(error("a: &x {k: *x}"))
    assert "no anchor" in str(error("a: *nope"))


def test_nesting_depth_is_bounded_without_recursion():
    for text in (
        "[" * 100_000 + "]" * 100_000,
        "{a: " * 5000 + "1" + "}" * 5000,
        "".join("  " * i + "k:\n" for i in range(500)),
    ):
        err = error(text, YamlLimitError)
        assert err.limit == "max_depth"
    assert data("[[[[1]]]]", limits=YamlLimits(max_depth=4)) == [[[[1]]]]
    with pytest.raises(YamlLimitError):
        data("[[[[[1]]]]]", limits=YamlLimits(max_depth=4))
    with pytest.raises(YamlLimitError):  # an alias cannot carry a value deeper than the budget
        data("a: &a [[[1]]]\nb: [[*a]]", limits=YamlLimits(max_depth=4))


def test_nodes_and_size_are_bounded():
    assert (
        error("".join(f"k{i}: {i}\n" for i in range(100)), YamlLimitError, limits=YamlLimits(max_nodes=50)).limit
        == "max_nodes"
    )
    assert error("k: " + "x" * 200, YamlLimitError, limits=YamlLimits(max_file_bytes=100)).limit == "max_file_bytes"


def test_file_size_is_checked_before_reading(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("k: " + "x" * 1000)
    with pytest.raises(YamlLimitError) as info:
        load_yaml(path, limits=YamlLimits(max_file_bytes=100))
    assert info.value.file == str(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: 1\n---\nb: 2", "more than one YAML document"),
        ("a: b\x00c", "U+0000"),
        ("a: [1, 2", "not valid YAML"),
        ("? [a, b]\n: 1", "a key must be a plain value"),
        ('a: "\\ud800"', "not valid YAML"),
    ],
)
def test_bad_yaml_is_a_task_file_error_with_a_line(text, message):
    err = error(text)
    assert message in str(err)
    assert err.line is not None


def test_lone_surrogates_in_text_are_a_task_file_error():
    assert "not valid YAML" in str(error("a: \ud800"))


def test_files(tmp_path):
    assert "not found" in str(error_of(tmp_path / "nope.yaml"))
    assert "is a directory" in str(error_of(tmp_path))
    (tmp_path / "latin.yaml").write_bytes(b"a: 1\nb: caf\xe9\n")
    err = error_of(tmp_path / "latin.yaml")
    assert "not UTF-8" in str(err) and err.line == 2


def error_of(path):
    with pytest.raises(TaskFileError) as info:
        load_yaml(path)
    return info.value


def test_json_task_files_with_surrogate_pair_escapes(tmp_path):
    """json.dump writes non-BMP characters as surrogate pairs, which libyaml rejects."""
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"description": "emoji 😀", "n": 1}))
    assert load_yaml(path).data == {"description": "emoji 😀", "n": 1}
    path.write_text('{"a": 1, "a": 2}')
    with pytest.raises(TaskFileError, match="appears twice"):
        load_yaml(path)


def test_lines_of_keys_and_items():
    doc = load_yaml("t.yaml", text="a: 1\nb:\n  c: [x,\n     y]\n  d:\n    - e: 1\n")
    assert doc.lines == {"a": 1, "b": 2, "b.c": 3, "b.c.0": 3, "b.c.1": 4, "b.d": 5, "b.d.0": 6, "b.d.0.e": 6}


def test_empty_document():
    assert data("") is None
    assert data("# only a comment\n") is None


def test_meta_option_values_are_strings_unless_json():
    # the command line's KEY=VALUE rule (docs/cli.md): no YAML, so nothing is guessed
    from prompt_style.cli._common import key_value

    assert key_value("a=false") == ("a", False)
    assert key_value("a=yes") == ("a", "yes")
    assert key_value("a=0755") == ("a", "0755")
    assert key_value("a=[1, no]") == ("a", "[1, no]")
    assert key_value('a=[1, "no"]') == ("a", [1, "no"])
    assert key_value("a=: not yaml") == ("a", ": not yaml")
    assert key_value("a=") == ("a", "")
    assert key_value("a=NaN") == ("a", "NaN")
