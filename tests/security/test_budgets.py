"""The Jinja sandbox: every budget, every leak rule, the clock, and how budgets are set."""

from __future__ import annotations

import datetime
import pickle

import jinja2
import pytest

import prompt_style
from prompt_style import FieldError, JinjaLimits, LimitError, OptionError, SandboxError, render_records
from prompt_style.safe import jinja_env as J
from prompt_style.safe import limits as L

SMALL = JinjaLimits(
    max_source=500,
    max_tokens=200,
    max_output=1000,
    max_string=1000,
    max_items=100,
    max_range=50,
    max_loop_iterations=500,
    max_macro_calls=1000,
    max_work=5000,
    max_filter_input=300,
    max_int_bits=256,
    deadline=0.2,
)


@pytest.fixture(autouse=True)
def _fresh_limits(monkeypatch):
    monkeypatch.delenv(L.ENV_LIMITS, raising=False)
    monkeypatch.delenv(J.ENV_NOW, raising=False)
    L.configure()
    L.reload()
    yield
    L.configure()
    L.reload()


def render(source: str, context: dict | None = None, limits: JinjaLimits | None = SMALL, profile=J.FIELDS) -> str:
    return J.render(J.compile_template(source, profile), context or {}, limits)


def stop(source: str, context: dict | None = None, limits: JinjaLimits | None = SMALL) -> LimitError:
    with pytest.raises(LimitError) as info:
        render(source, context, limits)
    return info.value


@pytest.mark.parametrize(
    "limit, source",
    [
        ("max_output", "{% for i in range(40) %}{{ 'x' * 40 }}{% endfor %}"),
        ("max_output", "{{ x }}"),
        ("max_string", "{{ 'a' * 2000 }}"),
        ("max_string", "{{ 'a' * 10**9 }}"),
        ("max_string", "{{ 'x'|center(5000) }}"),
        ("max_string", "{{ ('x\n' * 100)|indent(20) }}"),
        ("max_string", "{{ '%2000s'|format('x') }}"),
        ("max_string", "{{ '%*s'|format(2000, 'x') }}"),
        ("max_string", "{{ '%.2000f' % 1.0 }}"),
        ("max_string", "{{ '{:>2000}'.format(1) }}"),
        ("max_string", "{{ '{:{}}'.format('x', 2000) }}"),
        ("max_string", "{{ ('{0}' * 30).format('a' * 40) }}"),
        ("max_string", "{{ 'x'.ljust(2000) }}"),
        ("max_string", "{{ 'x'.zfill(2000) }}"),
        ("max_string", "{{ ('\t' * 10).expandtabs(200) }}"),
        ("max_string", "{{ ('a' * 100).replace('', 'xx' * 10) }}"),
        ("max_string", "{{ ('a' * 100)|replace('a', 'bb' * 10) }}"),
        ("max_string", "{{ ('x' * 100).join(['a'] * 20) }}"),
        ("max_string", "{{ ('a' * 10).translate({97: 'b' * 200}) }}"),
        ("max_string", "{{ range(40)|join('x' * 40) }}"),
        ("max_string", "{{ (['a' * 100] * 20)|join }}"),
        ("max_string", "{{ ('a' * 600) ~ ('a' * 600) }}"),
        ("max_string", "{{ ('a' * 600) + ('a' * 600) }}"),
        ("max_string", "{{ ('ab ' * 90)|wordwrap(1, wrapstring='x' * 50) }}"),
        ("max_string", "{{ 'aaaa'|regex_replace('', 'x' * 250) }}"),
        ("max_items", "{{ [1] * 200 }}"),
        ("max_items", "{{ ([1] * 80) + ([1] * 80) }}"),
        ("max_items", "{{ range(10)|batch(500)|list }}"),
        ("max_items", "{{ range(10)|slice(500)|list }}"),
        ("max_items", "{{ ('x' * 500)|list }}"),
        ("max_items", "{{ ([[1] * 20] * 20)|sum(start=[]) }}"),
        ("max_items", "{% for c in 'x' * 500 %}{% endfor %}"),
        ("max_range", "{{ range(51)|list }}"),
        ("max_range", "{{ range(10**18)|length }}"),
        ("max_loop_iterations", "{% for i in range(50) %}{% for j in range(50) %}{% endfor %}{% endfor %}"),
        (
            "max_loop_iterations",
            "{{ range(50)|map('string')|map('string')|list|length }}{{ range(50)|list|length }}" * 8,
        ),
        ("max_work", "{% for i in range(50) %}{% set y = 'x' * 200 %}{% endfor %}"),
        ("max_work", "{% set y %}{% for i in range(50) %}" + "x" * 200 + "{% endfor %}{% endset %}{{ y|length }}"),
        (
            "max_work",
            "{% macro m() %}{% for i in range(40) %}{{ 'x' * 300 }}{% endfor %}{% endmacro %}{{ m()|length }}",
        ),
        ("max_filter_input", "{{ ('a ' * 200)|wordwrap(5) }}"),
        ("max_filter_input", "{{ ('a ' * 200)|urlize }}"),
        ("max_filter_input", "{{ ('a ' * 200)|title }}"),
        ("max_filter_input", "{{ ((range(50)|list) * 2)|pprint }}"),
        ("max_int_bits", "{{ 2 ** 1000 }}"),
        ("max_int_bits", "{{ (2 ** 200) * (2 ** 200) }}"),
        ("max_macro_calls", "{% macro a(n) %}{% if n %}{{ a(n-1) }}{{ a(n-1) }}{% endif %}{% endmacro %}{{ a(40) }}"),
        ("deadline", "{{ ('a' * 30 ~ '!')|regex_replace('(a+)+$', '') }}"),
        ("recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
        ("recursion", "{% for x in [[1]] recursive %}{{ loop([[1]]) }}{% endfor %}"),
    ],
)
def test_each_budget_stops_with_a_typed_error_naming_it(limit, source):
    error = stop(source, {"x": "y" * 2000})
    assert error.limit == limit, error
    assert "template" in str(error)
    if limit not in ("recursion",):
        assert f"limit {limit}=" in str(error)  # the hint names the budget and its setting


@pytest.mark.parametrize(
    "limit, source",
    [("max_source", "{{ q }}" + "x" * 600), ("max_tokens", "{{ " + "+".join(["1"] * 150) + " }}")],
)
def test_source_budgets_stop_at_compile_time(limit, source):
    with pytest.raises(LimitError) as info:
        J.compile_template(source, J.FIELDS, limits=SMALL)
    assert info.value.limit == limit
    assert "template '{{ q }}" in str(info.value) or "template '{{ 1+1" in str(info.value)


def test_no_constant_folding_at_compile_time():
    """Jinja folds constants while compiling; the sandbox must not: compiling
    costs nothing and rendering stops at the budget."""
    for source in ("{{ 'a' * 10**9 }}", "{{ 'x'|center(1000000000) }}", "{{ '%999999999s' % 'x' }}"):
        compiled = J.compile_template(source)  # no MemoryError, no time
        with pytest.raises(LimitError):
            J.render(compiled, {})


def test_budget_error_names_the_template_line():
    error = stop("line one\nline two\n{{ 'a' * 5000 }}")
    assert "line 3" in str(error)


def test_compiled_render_is_budgeted_too():
    compiled = J.compile_template("{{ 'a' * 10**9 }}")
    with pytest.raises(LimitError):
        compiled.render()


def test_expression_values_are_bounded_as_if_printed():
    with pytest.raises(LimitError):
        J.evaluate(J.compile_expression("[x] * 100"), {"x": "y" * 5000}, SMALL.replace(max_items=1000))


@pytest.mark.parametrize(
    "source",
    [
        "{{ cycler }}",
        "{{ joiner }}",
        "{{ namespace }}",
        "{{ dict }}",
        "{{ range }}",
        "{{ '{0!r}'.format(range) }}",
        "{{ '{}'.format(cycler) }}",
        "{{ self }}",
        "{% for x in [1] %}{{ loop }}{% endfor %}",
        "{% macro m() %}{% endmacro %}{{ m }}",
        "{{ 'a'.upper }}",
        "{{ [cycler] }}",
        "{{ cycler ~ '' }}",
        "{{ '%s' % joiner }}",
        "{{ '%r'|format(namespace) }}",
        "{{ range|string }}",
        "{{ [range]|join }}",
        "{{ dict(a=cycler) }}",
        "{{ cycler(1, 2) }}",
        "{{ joiner(',') }}",
        "{{ namespace(a=1) }}",
        "{{ range|pprint }}",
        "{{ self|trim }}",
        "{{ [1]|map('string') }}",
        "{{ 'x'.__class__ }}",
        "{{ [].append(1) }}",
    ],
)
def test_functions_classes_and_template_objects_never_print(source):
    with pytest.raises(SandboxError) as info:
        render(source, limits=None)
    assert "template" in str(info.value)


def test_lipsum_is_not_offered():
    with pytest.raises(jinja2.UndefinedError):
        render("{{ lipsum() }}", limits=None)


def test_missing_name_inside_a_value_is_an_error():
    with pytest.raises(jinja2.UndefinedError, match="zz"):
        render("{{ [q, zz] }}", {"q": 1}, limits=None)
    with pytest.raises(jinja2.UndefinedError, match="zz"):
        J.evaluate(J.compile_expression("[q, zz]"), {"q": 1})
    with pytest.raises(FieldError, match="'zz' is missing") as info:
        render_records([{"q": "x"}], doc_to_text="{{ [q, zz] }}")
    assert info.value.key == "doc_to_text" and info.value.index == 0


def test_lenient_profiles_keep_jinja_default_undefined():
    chat = J.JinjaProfile("test-chat", strict_undefined=False, trim_blocks=True, lstrip_blocks=True, loop_controls=True)
    assert render("[{{ nothing }}]", limits=None, profile=chat) == "[]"
    assert (
        render(
            "{% for i in range(5) %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}", limits=None, profile=chat
        )
        == "01"
    )


def test_data_prints_as_jinja_prints_it():
    context = {"q": "x", "n": 3, "l": [1, "a", None], "d": {"k": [1.5]}, "t": (1,), "b": True, "none": None}
    assert render("{{ q }}|{{ n }}|{{ l }}|{{ d }}|{{ t }}|{{ b }}|{{ none }}", context, limits=None) == (
        "x|3|[1, 'a', None]|{'k': [1.5]}|(1,)|True|None"
    )
    assert render("{{ range(3) }}|{{ d.items()|list }}", context, limits=None) == "range(0, 3)|[('k', [1.5])]"


def test_values_within_budget_render_unchanged():
    assert render("{{ 'ab' * 3 }}{{ 'x'|center(5) }}{{ '%05d'|format(42) }}", limits=None) == "ababab  x  00042"
    assert (
        render("{% for i in range(3) %}{{ loop.index }}/{{ loop.length }} {% endfor %}", limits=None) == "1/3 2/3 3/3 "
    )
    assert render("{{ 'a b'|regex_replace('\\\\s+', '_') }}", limits=None) == "a_b"


# -- the clock ----------------------------------------------------------------------

CLOCKED = J.JinjaProfile("test-clock", strftime_now=True)


def test_strftime_now_on_a_fixed_clock(monkeypatch):
    compiled = J.compile_template("{{ strftime_now('%d %b %Y') }}", CLOCKED)
    assert J.render(compiled, {}, now="2025-07-10T12:00:00") == "10 Jul 2025"
    assert J.render(compiled, {}, now=datetime.datetime(2024, 1, 2)) == "02 Jan 2024"
    with J.fixed_clock("2023-03-04T00:00:00"):
        assert J.render(compiled, {}) == "04 Mar 2023"
        assert J.current_time() == datetime.datetime(2023, 3, 4)
    monkeypatch.setenv(J.ENV_NOW, "2022-05-06T07:08:09")
    assert J.render(compiled, {}) == "06 May 2022"
    monkeypatch.delenv(J.ENV_NOW)
    assert J.render(compiled, {}) == datetime.datetime.now().strftime("%d %b %Y")


def test_bad_clock_is_a_typed_error():
    with pytest.raises(prompt_style.PromptStyleError, match="2025-07-10T12:00:00"):
        J.render(J.compile_template("x", CLOCKED), {}, now="yesterday")


def test_strftime_now_only_where_the_profile_asks():
    with pytest.raises(jinja2.UndefinedError):
        render("{{ strftime_now('%Y') }}", limits=None)


# -- setting budgets -------------------------------------------------------------------


def test_limits_from_the_environment(monkeypatch):
    monkeypatch.setenv(L.ENV_LIMITS, "max_string=100, deadline=2.5,max_nodes=5")
    L.reload()
    assert L.jinja_limits().max_string == 100 and L.jinja_limits().deadline == 2.5
    assert L.yaml_limits().max_nodes == 5
    with pytest.raises(LimitError):
        render("{{ 'a' * 200 }}", limits=None)


def test_configure_and_scopes():
    L.configure(max_string=100)
    assert L.jinja_limits().max_string == 100
    with L.limits_scope(JinjaLimits(max_string=50)):
        assert L.jinja_limits().max_string == 50
    assert L.jinja_limits().max_string == 100
    L.configure()
    assert L.jinja_limits() == JinjaLimits()


@pytest.mark.parametrize("text", ["deadlines=1", "deadline", "deadline=abc", "max_output=-1", "max_output=1.5"])
def test_bad_budget_settings_are_option_errors(text):
    with pytest.raises(OptionError):
        L.configure(L.parse_assignments(text))


def test_unknown_budget_suggests_the_name():
    with pytest.raises(OptionError, match="deadline"):
        L.parse_assignments("deadlin=1")


def test_load_task_limits_apply_to_its_templates(tmp_path):
    records = [{"q": "x"}]
    with pytest.raises(LimitError):
        render_records(records, doc_to_text="{{ q * 20000000 }}")
    task = prompt_style.load_task(
        {"data": {"test": records}, "doc_to_text": "{{ q * 20000000 }}"},
        limits=JinjaLimits(max_string=30_000_000, max_output=30_000_000, max_work=100_000_000),
    )
    assert len(next(task.render()).text) == 20_000_000
    clone = pickle.loads(pickle.dumps(task.renderer))
    assert clone.limits.max_string == 30_000_000


def test_cli_budget_option(tmp_path, capsys):
    from prompt_style.cli import main

    (tmp_path / "t.jsonl").write_text('{"q": "x"}\n')
    (tmp_path / "t.yaml").write_text("data: {test: t.jsonl}\ndoc_to_text: '{{ q * 20000000 }}'\n")
    assert main(["render", str(tmp_path / "t.yaml")]) == 2
    assert "max_string" in capsys.readouterr().err
    assert main(["render", str(tmp_path / "t.yaml"), "--budget", "max_string=1e8", "--budget", "max_output=1e8"]) == 0
    assert len(capsys.readouterr().out) > 20_000_000
    assert L.jinja_limits() == JinjaLimits()  # the option lasts for the command only
    assert main(["render", str(tmp_path / "t.yaml"), "--budget", "max_strin=1"]) == 2
    assert "did you mean 'max_string'" in capsys.readouterr().err


def test_every_budget_is_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    for cls in (JinjaLimits, prompt_style.YamlLimits):
        for name in cls.__dataclass_fields__:
            assert f"`{name}`" in doc, name


def test_custom_renderers_run_within_budgets():
    """What a custom code generator uses: the rewritten tree, run() around its render."""
    env = J.environment(J.FIELDS)
    tree = J.prepare_tree(env.parse("{% for i in range(40) %}{% for j in range(40) %}{% endfor %}{% endfor %}"))
    compiled = env.from_string(tree)
    with pytest.raises(LimitError) as info:
        J.run(lambda: "".join(compiled.root_render_func(compiled.new_context({}))), SMALL, template=compiled)
    assert info.value.limit == "max_loop_iterations"
    with pytest.raises(LimitError):
        J.run(lambda: "x" * 2000, SMALL)
    assert J.run(lambda: "ok", SMALL) == "ok"
    assert J.AMPLIFYING_STR_METHODS >= {"replace", "join", "center"}


def test_a_bound_runner_keeps_run_s_budgets():
    """bound_runner's run(arg) is run() in one function: each render a budget of its own
    (made like new when reused, under the scope's limits when they change), active while
    it runs and released after, max_output checked, errors translated."""
    from prompt_style.safe import _deadline

    env = J.environment(J.FIELDS)
    tree = J.prepare_tree(env.parse("{% for i in xs %}{% endfor %}{{ 'x' * m }}"))
    compiled = env.from_string(tree)
    seen = []

    def render(variables):
        budget = J.budget_getter()()
        seen.append((budget, budget.iterations, budget.work, budget.limits, budget in _deadline.RUNNING))
        return "".join(compiled.root_render_func(compiled.new_context(variables)))

    run = J.bound_runner(render, compiled)
    with L.limits_scope(SMALL):
        assert run({"xs": [0] * 40, "m": 3}) == "xxx"
        assert run({"xs": [0] * 40, "m": 3}) == "xxx"  # a reused budget starts from nothing
        with pytest.raises(LimitError) as info:
            run({"xs": [0] * 600, "m": 0})
        assert info.value.limit == "max_loop_iterations"
        with pytest.raises(LimitError) as info:
            J.bound_runner(lambda _: "x" * 2000)(None)
        assert info.value.limit == "max_output"
    assert run({"xs": [0] * 600, "m": 2000}) == "x" * 2000  # the process's limits again
    assert [entry[1:3] for entry in seen[:2]] == [(0, 0), (0, 0)]
    assert all(entry[3] is SMALL and entry[4] for entry in seen[:3])
    assert seen[3][3] is not SMALL
    assert J.budget_getter()() is None and not any(entry[0] in _deadline.RUNNING for entry in seen)


# -- how the deadline is watched -------------------------------------------------------

FANOUT = "{% macro a(n) %}{% if n %}{% set x = a(n-1) %}{% set y = a(n-1) %}{% endif %}{% endmacro %}{{ a(40) }}"
UNCOUNTED = SMALL.replace(max_macro_calls=10**12)  # so that FANOUT runs until the deadline


def test_the_deadline_is_watched_by_a_thread_that_comes_and_goes(monkeypatch):
    """Check points test a flag that a timer thread sets; the thread exits when no
    render runs for a while and starts again with the next render."""
    import time

    from prompt_style.safe import _deadline

    monkeypatch.setattr(_deadline, "IDLE", 0.05)
    assert stop(FANOUT, limits=UNCOUNTED).limit == "deadline"
    deadline = time.monotonic() + 5
    while not _deadline._kick and time.monotonic() < deadline:  # the thread exits when idle
        time.sleep(0.02)
    assert _deadline._kick and not _deadline.RUNNING
    assert render("{{ 'ok' }}") == "ok"
    assert not _deadline._kick  # started again
    assert stop(FANOUT, limits=UNCOUNTED).limit == "deadline"


def test_without_a_thread_the_clock_is_read_at_every_check_point(monkeypatch):
    from prompt_style.safe import _deadline

    monkeypatch.setattr(_deadline, "_failed", True)
    monkeypatch.setattr(_deadline, "_kick", True)
    assert stop(FANOUT, limits=UNCOUNTED).limit == "deadline"
    assert render("{% for i in range(3) %}{{ i }}{% endfor %}") == "012"


def test_a_check_point_flagged_early_reads_the_clock_and_goes_on():
    """`due` only asks for a look at the clock: a render within its deadline continues."""
    from prompt_style.safe import _sandbox

    budget = _sandbox.Budget(SMALL)
    budget.stop_at = float("inf")
    budget.due = True
    budget.tick()
    assert budget.due is False
    budget.stop_at = 0.0
    with pytest.raises(LimitError) as info:
        budget.tick()
    assert info.value.limit == "deadline" and budget.due


def test_budgets_are_counted_with_thresholds():
    """One addition and one comparison per operation: work past the threshold takes the
    slow path, which checks the per-operation limit, then max_work, then the clock."""
    from prompt_style.safe import _sandbox

    budget = _sandbox.Budget(SMALL)
    assert budget.step == min(SMALL.max_string, SMALL.max_output, SMALL.max_items)
    budget.work += 999  # one operation that built 999 characters (under max_string)
    budget.over_size(999, "'+'")
    budget.work += 1001
    with pytest.raises(LimitError) as info:
        budget.over_size(1001, "'+'")
    assert info.value.limit == "max_string"
    budget.work = SMALL.max_work + 1
    with pytest.raises(LimitError) as info:
        budget.over()
    assert info.value.limit == "max_work"


def test_lm_eval_regex_replace_is_the_sandboxed_one(tmp_path):
    """lm-evaluation-harness's ``regex_replace`` filter runs as the sandbox runs it: a
    catastrophic backtracking stops typed at the deadline, not at the end of time."""
    from prompt_style.formats.lm_eval.fields import LM_EVAL_JINJA

    assert dict(LM_EVAL_JINJA.filters)["regex_replace"] is J.regex_replace
    (tmp_path / "test.jsonl").write_text('{"q": "x"}\n', encoding="utf-8")
    (tmp_path / "task.yaml").write_text(
        "task: t\ndataset_path: json\ndataset_kwargs: {data_files: {test: test.jsonl}}\ntest_split: test\n"
        "output_type: generate_until\ndoc_to_target: q\n"
        "doc_to_text: \"{{ ('a' * 30 ~ '!')|regex_replace('(a+)+$', '') }}\"\n",
        encoding="utf-8",
    )
    with pytest.raises(FieldError) as info, L.limits_scope(JinjaLimits(deadline=0.2)):
        list(prompt_style.load_task(tmp_path / "task.yaml").render())
    assert "limit deadline=0.2" in str(info.value)


def test_a_stopped_render_is_not_run_again_for_the_same_values(tmp_path, monkeypatch):
    """The fast path hands a record it could not render to the general path, which says
    what went wrong: a template a budget stopped raises the same error again rather
    than spending its budget twice (and a probe of the description runs on a short clock)."""
    from prompt_style.safe._sandbox import render as sandbox_render

    renders = []
    real = sandbox_render._take_budget

    def counted(limits, now):
        renders.append(limits)
        return real(limits, now)

    monkeypatch.setattr(sandbox_render, "_take_budget", counted)
    (tmp_path / "test.jsonl").write_text('{"q": "x", "n": 3}\n{"q": "y", "n": 4}\n', encoding="utf-8")
    bomb = "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}"
    for key in ("doc_to_text", "description"):
        renders.clear()
        extra = "" if key == "doc_to_text" else "doc_to_text: q\n"
        (tmp_path / "task.yaml").write_text(
            f"data: {{test: test.jsonl}}\ndoc_to_target: q\n{extra}{key}: {bomb!r}\n", encoding="utf-8"
        )
        with pytest.raises(LimitError) as info, L.limits_scope(JinjaLimits(max_macro_calls=20_000)):
            list(prompt_style.load_task(tmp_path / "task.yaml").render())
        assert info.value.limit == "max_macro_calls" and "record 0" in str(info.value)
        # one render (and, for a description, the probe on its short clock)
        assert len(renders) == (1 if key == "doc_to_text" else 2), (key, len(renders))
