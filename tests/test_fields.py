"""Field specs: the built-in ``extract_field`` semantics."""

from __future__ import annotations

import pickle

import pytest

from prompt_style import FieldError, LimitError, SandboxError, compile_field, create_plugin_manager

RECORD = {
    "question": "What is 2+2?",
    "choices": {"text": ["three", "four", "five"], "label": ["A", "B", "C"]},
    "options": ["x", "y", "z"],
    "answerKey": "B",
    "answer": 1,
    "a": {"b": {"c": 42}},
    "meta": {"tags": ["t1", "t2"], "n": 3},
    "items": ["i1", "i2"],
    "values": "the values field",
    "keys": 7,
    "subject": "high_school_physics",
}


def extract(spec, key="doc_to_text", record=RECORD):
    return compile_field(spec, key)(record)


def extract_pm(pm, spec, key="doc_to_text", record=RECORD):
    extractor, info = pm.extractor(spec, key)
    return extractor(record)


@pytest.fixture(params=["compile_field", "plugin_manager"])
def ex(request, pm):
    """Run each semantics test both through compile_field and through pm.extractor."""
    if request.param == "compile_field":
        return extract
    return lambda spec, key="doc_to_text", record=RECORD: extract_pm(pm, spec, key, record)


# -- plain names and single expressions ------------------------------------------------


def test_plain_field_name(ex):
    assert ex("question") == "What is 2+2?"
    assert ex("answer") == 1
    assert ex("options") == ["x", "y", "z"]


def test_plain_field_with_spaces_and_dashes_in_its_name(ex):
    record = {"High-level domain": "Physics"}
    assert ex("High-level domain", record=record) == "Physics"


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("{{options}}", ["x", "y", "z"]),
        ("{{meta}}", {"tags": ["t1", "t2"], "n": 3}),
        ("{{answer}}", 1),
        ("{{choices.text}}", ["three", "four", "five"]),
        ("{{options[0]}}", "x"),
        ("{{ options[-1] }}", "z"),
        ("{{a.b.c}}", 42),
        ("{{ a['b']['c'] }}", 42),
        ("{{ meta.tags[1] }}", "t2"),
        ("{{ choices.label.index(answerKey) }}", 1),
        ("{{ answer + 1 }}", 2),
        ("{{ [question, answerKey] }}", ["What is 2+2?", "B"]),
        ("{{- answer -}}", 1),
    ],
)
def test_single_expression_keeps_type(ex, spec, expected):
    value = ex(spec)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    "spec, expected",
    [
        # a single expression written over several lines (YAML block scalars do this)
        ("{{\n  answer\n}}", 1),
        ("{{ [options[0],\n    options[2]] }}", ["x", "z"]),
        # a single expression whose source contains "}}" (a nested dict literal)
        ("{{ {'k': {'n': answer}} }}", {"k": {"n": 1}}),
    ],
)
def test_single_expression_keeps_type_edge_cases(ex, spec, expected):
    value = ex(spec)
    assert value == expected
    assert type(value) is type(expected)


def test_choices_index_expression_returns_int(ex):
    value = ex("{{ choices.label.index(answerKey) }}")
    assert value == 1 and isinstance(value, int) and not isinstance(value, bool)


def test_choices_zero_index(ex):
    record = {"choices": ["first", "second"]}
    assert ex("{{choices[0]}}", record=record) == "first"


@pytest.mark.parametrize("spec", [" {{answer}} ", "\t{{ answer }}\n", "  {{answer}}"])
def test_whitespace_around_single_expression(ex, spec):
    value = ex(spec)
    assert value == 1 and isinstance(value, int)


def test_whitespace_around_list_expression_keeps_list(ex):
    assert ex(" {{ options }} ") == ["x", "y", "z"]


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("{{items}}", ["i1", "i2"]),
        ("{{values}}", "the values field"),
        ("{{keys}}", 7),
        ("{{ d.items }}", [1, 2]),
        ("{{ d.keys }}", "K"),
        ("{{ d.values[0] }}", 9),
        ("{{ d.items | list }}", [1, 2]),
        ("{{ d.values[0] + 1 }}", 10),
    ],
)
def test_fields_named_like_dict_methods_are_fields(ex, spec, expected):
    record = {**RECORD, "d": {"items": [1, 2], "keys": "K", "values": [9]}}
    assert ex(spec, record=record) == expected


def test_fields_named_like_dict_methods_in_templates(ex):
    record = {"d": {"items": [1, 2], "keys": "K"}}
    assert ex("{{ d.items | join(',') }} / {{ d.keys }}", record=record) == "1,2 / K"
    assert ex("{% for x in d.items %}{{ x }};{% endfor %}", record=record) == "1;2;"


def test_plain_name_items_is_the_field(ex):
    assert ex("items") == ["i1", "i2"]
    assert ex("{items}") == "['i1', 'i2']"


# -- templates -------------------------------------------------------------------------


def test_complex_jinja_renders_a_string(ex):
    assert ex("{{answerKey}}: {{answer}}") == "B: 1"
    assert ex("Q: {{question}}") == "Q: What is 2+2?"
    assert ex("{{ options }}!") == "['x', 'y', 'z']!"


def test_if_block(ex):
    spec = "{% if answer > 0 %}positive{% else %}zero{% endif %}"
    assert ex(spec) == "positive"
    assert ex(spec, record={"answer": 0}) == "zero"


def test_template_keeps_trailing_newline(ex):
    assert ex("Q: {{question}}\n") == "Q: What is 2+2?\n"


def test_jinja_filters(ex):
    assert ex("{{ subject.replace('_', ' ') }} / {{ question | upper }}") == ("high school physics / WHAT IS 2+2?")


def test_format_template(ex):
    assert ex("Question: {question}\nAnswer:") == "Question: What is 2+2?\nAnswer:"
    assert ex("{answerKey}{answer}") == "B1"


def test_format_template_unknown_placeholders_stay(ex):
    assert ex("{question} {unknown} {0} {}") == "What is 2+2? {unknown} {0} {}"
    assert ex("{not a field}", record={"q": 1}) == "{not a field}"


# -- record values are data, never templates -------------------------------------------

TRAPS = ["{q}", "{{ 7*7 }}", "{% if true %}yes{% endif %}", "{r}", "{{r}}"]


@pytest.mark.parametrize("value", TRAPS)
@pytest.mark.parametrize(
    "spec, key, wrap",
    [
        ("q", "doc_to_text", "{}"),
        ("{{q}}", "doc_to_text", "{}"),
        (" {{ q }} ", "doc_to_text", "{}"),
        ("{q}", "doc_to_text", "{}"),
        ("<{q}|{r}>", "doc_to_text", "<{}|R>"),
        ("<{{q}}|{{r}}>", "doc_to_text", "<{}|R>"),
        ("{% if true %}<{{ q }}>{% endif %}", "doc_to_text", "<{}>"),
        ("About {{ q }}.", "description", "About {}."),
    ],
)
def test_values_are_never_rendered(ex, value, spec, key, wrap):
    record = {"q": value, "r": "R"}
    assert ex(spec, key, record) == wrap.replace("{}", value, 1)


def test_format_template_value_with_placeholder_of_another_field(ex):
    # `{q}` holds "{r}": it must not be replaced by r's value on a second pass.
    assert ex("{q} {r}", record={"q": "{r}", "r": "X"}) == "{r} X"


# -- callables, constants, description -------------------------------------------------


def double_answer(record):
    return record["answer"] * 2


def test_callable(ex):
    assert ex(double_answer) == 2
    assert ex(lambda r: r["options"][1:]) == ["y", "z"]


@pytest.mark.parametrize("constant", [["yes", "no"], 3, 0, 2.5, {"k": "v"}, ("a", "b")])
def test_constants(ex, constant):
    assert ex(constant, "doc_to_choice") == constant
    assert ex(constant, "doc_to_target", record={}) == constant


@pytest.mark.parametrize("constant", [["yes", "no"], 3, 2.5])
def test_a_constant_question_is_an_error(constant):
    with pytest.raises(FieldError, match="doc_to_text: must be a field spec"):
        compile_field(constant, "doc_to_text")


def test_description_plain_text_is_literal(ex):
    assert ex("question", "description") == "question"
    assert ex("About {subject} {q}.", "description") == "About {subject} {q}."
    assert ex("The following are questions.\n\n", "description") == "The following are questions.\n\n"


def test_description_with_jinja_renders(ex):
    assert ex("About {{ subject.replace('_', ' ') }}.", "description") == "About high school physics."


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["missing_field", "{{missing_field}}", "{{ missing_field }} and {{ answer }}"])
def test_missing_field_names_the_field(ex, spec):
    with pytest.raises(FieldError) as info:
        ex(spec)
    assert "missing_field" in str(info.value)
    assert info.value.key == "doc_to_text"
    assert "doc_to_text" in str(info.value)


def test_missing_nested_field_names_it(ex):
    with pytest.raises(FieldError) as info:
        ex("{{a.b.zz}}")
    assert "zz" in str(info.value)


def test_missing_field_in_jinja_expression_path(ex):
    with pytest.raises(FieldError) as info:
        ex("{{ choices.label.index(nokey) }}")
    assert "nokey" in str(info.value)


def test_index_out_of_range_is_field_error(ex):
    with pytest.raises(FieldError) as info:
        ex("{{options[7]}}")
    assert "7" in str(info.value)


@pytest.mark.parametrize(
    "spec",
    [
        "{{ q.__class__ }}",
        "{{ q.__class__.__mro__ }}",
        "x {{ q.__class__ }} y",
        "{{ q.__init__.__globals__ }}",
        "{{ options.append(1) }}",
    ],
)
def test_sandbox_blocks_unsafe_access(ex, spec):
    with pytest.raises(SandboxError) as info:
        ex(spec, record={"q": "text", "options": [1]})
    assert info.value.key == "doc_to_text"


@pytest.mark.parametrize(
    "spec",
    [
        "{{ answer / 0 }}",
        "x {{ answer / 0 }}",
        "{{ question + 1 }}",
        "{{ range(10**9) | list | length }}",
        "{{ '{0.__class__}'.format(question) }}",
    ],
)
def test_runtime_errors_in_jinja_are_field_errors(ex, spec):
    """An extractor that cannot be applied to a record raises a typed error naming
    the key, whatever went wrong inside Jinja: FieldError, or for the sandbox's
    rules and budgets SandboxError and LimitError."""
    with pytest.raises((FieldError, SandboxError, LimitError)) as info:
        ex(spec)
    assert info.value.key == "doc_to_text"


@pytest.mark.parametrize("spec", ["{{ q", "{{ a b }}", "{% if %}", "{% for x in y %}", "x {{ ) }}"])
def test_bad_jinja_syntax_fails_at_compile_time(pm, spec):
    with pytest.raises(FieldError) as info:
        compile_field(spec, "doc_to_text")
    assert "doc_to_text" in str(info.value)
    with pytest.raises(FieldError):
        pm.extractor(spec, "doc_to_text")


def test_empty_spec_is_an_error():
    with pytest.raises(FieldError):
        compile_field("", "doc_to_text")


def test_record_that_is_not_a_mapping(ex):
    for spec in ("question", "{{question}}", "{{a}} {{b}}"):
        with pytest.raises(FieldError):
            ex(spec, record=["not", "a", "mapping"])


# -- the plugin manager path -----------------------------------------------------------


def test_extractor_answered_by_builtin_plugin(pm):
    extractor, info = pm.extractor("{{choices.text}}", "doc_to_choice")
    assert extractor(RECORD) == ["three", "four", "five"]
    assert info.name == "builtin-fields"
    assert info.distribution == "prompt-style"


def test_extractor_with_first_party_plugins_installed():
    manager = create_plugin_manager(environ={})
    extractor, info = manager.extractor("{{ choices.label.index(answerKey) }}", "doc_to_target")
    assert extractor(RECORD) == 1
    assert info.name == "builtin-fields"


# -- pickling --------------------------------------------------------------------------

PICKLE_SPECS = [
    ("question", "doc_to_text"),
    ("{{choices.text}}", "doc_to_choice"),
    ("{{ choices.label.index(answerKey) }}", "doc_to_target"),
    ("{{ answer + 1 }}", "doc_to_target"),
    ("{{answerKey}}: {{question}}", "doc_to_text"),
    ("{% if answer %}yes{% endif %}", "doc_to_text"),
    ("Q: {question}", "doc_to_text"),
    (["A", "B"], "doc_to_choice"),
    (3, "doc_to_target"),
    ("Plain description.", "description"),
    ("About {{ subject }}.", "description"),
    (double_answer, "doc_to_target"),
]


@pytest.mark.parametrize("spec, key", PICKLE_SPECS)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_extractors_pickle(spec, key, protocol):
    extractor = compile_field(spec, key)
    expected = extractor(RECORD)
    clone = pickle.loads(pickle.dumps(extractor, protocol=protocol))
    assert type(clone) is type(extractor)
    assert clone(RECORD) == expected
    # and a second application (cached compile) gives the same
    assert clone(RECORD) == expected


@pytest.mark.parametrize("spec, key", PICKLE_SPECS[:7])
def test_plugin_manager_extractors_pickle(pm, spec, key):
    extractor, _ = pm.extractor(spec, key)
    clone = pickle.loads(pickle.dumps(extractor))
    assert clone(RECORD) == extractor(RECORD)


def test_unpickled_jinja_extractor_still_sandboxed():
    clone = pickle.loads(pickle.dumps(compile_field("{{ q.__class__ }}", "doc_to_text")))
    with pytest.raises(SandboxError):
        clone({"q": "x"})


@pytest.mark.parametrize(
    "spec",
    [
        "{{question.strip()}}",
        "{{ q.strip().lower() }}",
        "{{ a.b.upper() }}",
        "{{ a['b'].title() }}",
        "{{ xs[0].casefold() }}",
    ],
)
@pytest.mark.parametrize(
    "record",
    [
        {"question": "  Mixed Case \n", "q": " ÉTÉ ", "a": {"b": "x y"}, "xs": ["ǅungla"]},
        {"question": "{{ not a template }}", "q": "{q}", "a": {"b": ""}, "xs": ["ß"]},
    ],
)
def test_string_method_fast_path_equals_jinja(spec, record):
    extractor = compile_field(spec, "doc_to_text")
    assert extractor.methods  # the fast path is taken
    assert extractor(record) == extractor._evaluate(record)


def test_string_method_on_a_non_string_falls_back_to_jinja():
    extractor = compile_field("{{ n.strip() }}", "doc_to_text")
    with pytest.raises(FieldError, match="strip"):
        extractor({"n": 5})
