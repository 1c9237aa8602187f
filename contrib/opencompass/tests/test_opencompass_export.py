"""``prompt-style export opencompass`` without OpenCompass: the routes, the files, the errors.

The configs written here are read back by prompt-style itself (OpenCompass's
``.py`` configs load with ``trust_code``, their ``opencompass`` imports answered
by stand-ins), so a plain config is checked to give the task's prompts even
where OpenCompass is not installed; tests/test_opencompass_e2e.py runs them in
OpenCompass.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prompt_style_opencompass import ExportOptions, OpenCompassExporter, OpenCompassExportError
from prompt_style_opencompass.datacheck import data_problem
from prompt_style_opencompass.dialogue import MetaRoles, Unsupported, prompt_items
from prompt_style_opencompass.pyconfig import Name, NotLiteral, check_literal, identifier, literal
from prompt_style_opencompass.rendering import render_prompts

import prompt_style
from prompt_style.cli import main

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
ROOT = HERE.parents[2]
EXAMPLES = ROOT / "examples"
META = CASES / "meta.yaml"


def export(capsys, task, out, *args):
    code = main(["export", "opencompass", str(task), "--out", str(out), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def route(path: Path) -> str:
    match = re.search(r"^Route: (\w+):", path.read_text(encoding="utf-8"), re.M)
    assert match
    return match.group(1)


def renders(task) -> list:
    return [
        (p.text, p.messages, [(c.label, c.text) for c in p.candidates or ()], p.continuations) for p in task.render()
    ]


def test_the_exporter_is_a_plugin():
    manager = prompt_style.create_plugin_manager(environ={})
    provider = manager.resolve("export_task", "opencompass")
    assert isinstance(provider.factory, OpenCompassExporter)
    assert isinstance(provider.factory, prompt_style.Exporter)


@pytest.mark.parametrize(
    ("task", "args"),
    [
        (CASES / "oc_gen.yaml", []),
        (CASES / "oc_gen.yaml", ["--meta", str(META)]),
        (CASES / "oc_gen.yaml", ["--shots", "0"]),
        (CASES / "oc_ppl.yaml", []),
        (CASES / "oc_ppl_dialogue.yaml", ["--meta", str(META)]),
        (CASES / "oc_ppl_dialogue.yaml", ["--mode", "gen"]),
        (CASES / "oc_random.yaml", ["--seed", "5", "--shots", "3"]),
        (EXAMPLES / "opencompass" / "task.yaml", ["--meta", "opencompass::api"]),
    ],
)
def test_a_plain_config_loads_back_with_the_same_prompts(capsys, tmp_path, task, args):
    out = tmp_path / "cfg.py"
    code, printed, err = export(capsys, task, out, *args)
    assert code == 0, err
    assert route(out) == "plain"
    text = out.read_text(encoding="utf-8")
    assert "prompt_style" not in text.split('"""', 2)[2]  # no prompt-style at run time
    card = (tmp_path / "cfg_data" / "README.md").read_text(encoding="utf-8")
    data = dict(re.findall(r"- split: (\w+)\n    path: (\".*\")", card))
    assert f"wrote {out}" in printed and "run it with: opencompass" in printed
    # prompt-style reads the written .py config (its opencompass imports answered by stand-ins)
    meta = args[args.index("--meta") + 1] if "--meta" in args else None
    again = prompt_style.load_task(
        out, trust_code=True, data={split: json.loads(path) for split, path in data.items()}, meta=meta or "plain"
    )
    given = {"shots": None, "seed": None, "mode": None}
    for key in given:
        if f"--{key}" in args:
            given[key] = args[args.index(f"--{key}") + 1]
    original = prompt_style.load_task(
        task,
        meta=meta or "plain",
        shots=int(given["shots"]) if given["shots"] else None,
        seed=int(given["seed"]) if given["seed"] else None,
        mode=given["mode"],
    )
    assert renders(again) == renders(original)


def test_a_meta_template_goes_to_the_model(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    assert export(capsys, CASES / "oc_gen.yaml", out, "--meta", str(META), "--name", "my-task")[0] == 0
    namespace: dict = {}
    # the file is Python: run it with the opencompass imports stubbed
    text = out.read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("from opencompass"))
    exec(compile(body, str(out), "exec"), {"__builtins__": __builtins__, **_stubs()}, namespace)
    assert namespace["my_task_meta_template"] == prompt_style.load_yaml(META).data
    (dataset,) = namespace["my_task_datasets"]
    assert dataset["abbr"] == "my-task"
    assert dataset["reader_cfg"] == {
        "input_columns": ["question", "A", "B", "C", "D"],
        "output_column": "answer",
        "train_split": "dev",
        "test_split": "test",
    }
    assert dataset["infer_cfg"]["retriever"] == {
        "type": "FixKRetriever",
        "fix_id_list": [0, 2, 3],
        "ice_separator": "\n",
        "ice_eos_token": "\n",
    }
    assert "models = [dict(type=..., meta_template=my_task_meta_template, ...)]" in text


def _stubs() -> dict:
    names = ["PromptTemplate", "ZeroRetriever", "FixKRetriever", "RandomRetriever", "SlidingWindowRetriever"]
    names += ["GenInferencer", "PPLInferencer", "AccEvaluator", "AccwithDetailsEvaluator", "HFDataset"]
    return {name: name for name in names}


def test_zero_shot_becomes_zero_retriever(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    assert export(capsys, CASES / "oc_gen.yaml", out, "--shots", "0")[0] == 0
    text = out.read_text(encoding="utf-8")
    assert "retriever=dict(type=ZeroRetriever, ice_eos_token='\\n')" in text


def test_prompt_style_retrievers_take_the_retriever_route(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    assert export(capsys, CASES / "oc_native_random.yaml", out)[0] == 0
    assert route(out) == "retriever"
    text = out.read_text(encoding="utf-8")
    assert "type='prompt_style_opencompass.runtime.PromptStyleRetriever'" in text
    assert f"task={str(CASES / 'oc_native_random.yaml')!r}" in text
    assert "not plain: OpenCompass has no retriever giving the examples of prompt-style's 'random'" in text


def test_awkward_records_take_the_render_route_and_say_why(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    args = ["--data", f"test={CASES / 'mc_test_awkward.jsonl'}"]
    assert export(capsys, CASES / "oc_gen.yaml", out, *args)[0] == 0
    assert route(out) == "render"
    text = out.read_text(encoding="utf-8")
    assert "split 'test' record 5: field 'question' holds {answer}" in text
    assert not (tmp_path / "cfg_data").exists()


def test_forcing_a_route_that_cannot_work_is_one_line(capsys, tmp_path):
    args = ["--data", f"test={CASES / 'mc_test_awkward.jsonl'}", "--export-option", "route=plain"]
    code, _, err = export(capsys, CASES / "oc_gen.yaml", tmp_path / "cfg.py", *args)
    assert code == 2
    assert err.startswith(f"prompt-style: error: {CASES / 'oc_gen.yaml'}: route: ")
    assert "route: the plain route cannot give this task's prompts: split 'test'" in err
    assert "record 5" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_render_route_for_any_task(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    assert export(capsys, EXAMPLES / "mmlu" / "task.yaml", out, "--shots", "2", "--meta", "chatml")[0] == 0
    assert route(out) == "render"
    text = out.read_text(encoding="utf-8")
    assert "type='prompt_style_opencompass.runtime.PromptStyleDataset'" in text
    assert "type='prompt_style_opencompass.runtime.PromptStyleTemplate'" in text
    assert "inferencer=dict(type=PPLInferencer)" in text
    assert "load_options=dict(meta='chatml', shots=2)" in text
    assert "prompt-style applies the meta template 'chatml'" in text
    assert "_meta_template" not in text


def test_generation_gets_the_stop_sequences(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    assert export(capsys, CASES / "qa.yaml", out)[0] == 0
    assert "inferencer=dict(type=GenInferencer, stopping_criteria=['\\n', 'Question:'])" in out.read_text()


def test_one_dataset_per_number_of_choices(capsys, tmp_path):
    out = tmp_path / "cfg.py"
    data = [
        "--data",
        f"test={EXAMPLES / 'arc/data/test.jsonl'}",
        "--data",
        f"train={EXAMPLES / 'arc/data/train.jsonl'}",
    ]
    assert export(capsys, EXAMPLES / "lm_eval/arc/arc_easy.yaml", out, *data)[0] == 0
    text = out.read_text(encoding="utf-8")
    abbrs = re.findall(r"abbr='(arc_easy_\d)'", text)
    assert abbrs == ["arc_easy_4", "arc_easy_3", "arc_easy_5"]
    assert "one dataset per set of labels (4, 3, 5 choices)" in text


def test_a_relative_meta_path_is_written_absolute(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(CASES)
    out = tmp_path / "cfg.py"
    assert export(capsys, "qa.yaml", out, "--meta", "meta.yaml")[0] == 0
    text = out.read_text(encoding="utf-8")
    assert f"meta={str(META)!r}" in text and "prompts='dialogue'" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--export-option", "rout=plain"],
            "rout: exporter 'opencompass' has no option 'rout' (did you mean 'route'?)",
        ),
        (["--export-option", "route=fast"], "route: exporter 'opencompass': route must be one of auto, plain"),
        (["--export-option", "bake_meta=maybe"], "bake_meta: exporter 'opencompass': option 'bake_meta' must be bool"),
        (["--meta", "messages"], "the meta template gives API messages, not text"),
    ],
)
def test_bad_options_are_one_line(capsys, tmp_path, args, message):
    code, _, err = export(capsys, CASES / "qa.yaml", tmp_path / "cfg.py", *args)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1


def test_out_must_be_python(capsys, tmp_path):
    code, _, err = export(capsys, CASES / "qa.yaml", tmp_path / "cfg.yaml")
    assert code == 2 and "out: --out" in err and "is not a .py file" in err


def test_multi_turn_tasks_are_refused(capsys, tmp_path):
    task = EXAMPLES / "opencompass_multiturn" / "task.yaml"
    code, _, err = export(capsys, task, tmp_path / "cfg.py")
    assert code == 2 and "several requests per record" in err


def test_a_bad_record_names_itself(capsys, tmp_path):
    bad = tmp_path / "test.jsonl"
    bad.write_text('{"q": "a", "a": "b"}\n{"q": "c"}\n', encoding="utf-8")
    code, _, err = export(capsys, CASES / "qa.yaml", tmp_path / "cfg.py", "--data", f"test={bad}")
    assert code == 2 and "record 1" in err and len(err.strip().splitlines()) == 1


def test_a_mapping_task_has_only_the_plain_route(tmp_path):
    config = prompt_style.load_yaml(CASES / "qa.yaml").data
    config["data"] = {split: str(CASES / path) for split, path in config["data"].items()}
    task = prompt_style.load_task(config)
    request = prompt_style.ExportRequest(task=task, source=None, load_options={}, out=tmp_path / "x.py")
    with pytest.raises(OpenCompassExportError, match="given as a mapping"):
        OpenCompassExporter().export(request)


def test_options_defaults():
    assert ExportOptions() == ExportOptions(route="auto", bake_meta=False, verify=True)


# -- the parts -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "problem"),
    [
        ([{"a": 1}, {"a": 2}], None),
        ([{"a": "x", "b": None}, {"a": "y", "b": "z"}], None),
        ([{"a": 1}, {"b": 2}], "record 1 lacks a"),
        ([{"a": 1}, {"a": 1.5}], "field 'a' holds integer and float values"),
        ([{"a": 1}, {"a": "1"}], "field 'a' holds integer and text values"),
        ([{"a": {"x": 1}}, {"a": {"y": 1}}], "mappings with different keys"),
        ([{"a": [1, 2]}, {"a": [3.0]}], "integer and float"),
        ([{"a": 2**70}], "an integer beyond 64 bits"),
        ([{"q": "{a}", "a": "x"}], "field 'q' holds {a}"),
        ([{"q": "{idx} and {zz}"}], "field 'q' holds {idx}"),
        ([{"q": "{zz} {}"}], None),
    ],
)
def test_data_problems(records, problem):
    found = data_problem(records, "test")
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


ROLES = MetaRoles(round=("HUMAN", "BOT"), reserved=("SYSTEM",), api=False, generating=("BOT",))


def turn(role, content, section="round", fallback=None):
    return prompt_style.Turn(role, content, "", fallback, section)


def test_dialogue_items_resolve_roles_and_mark_sections():
    dialogue = (
        turn("system", "be brief", "begin"),
        turn("user", "q1", "ice"),
        turn("assistant", "a1", "ice"),
        turn("user", "q2"),
    )
    assert prompt_items(dialogue, ROLES) == [
        {"section": "begin", "pos": "begin"},
        {"role": "SYSTEM", "prompt": "be brief"},
        {"section": "begin", "pos": "end"},
        {"section": "ice", "pos": "begin"},
        {"role": "HUMAN", "prompt": "q1"},
        {"role": "BOT", "prompt": "a1"},
        {"section": "ice", "pos": "end"},
        {"section": "round", "pos": "begin"},
        {"role": "HUMAN", "prompt": "q2"},
        {"section": "round", "pos": "end"},
    ]


def test_dialogue_items_fall_back_and_show_reserved_roles_alone():
    roles = MetaRoles(round=("HUMAN", "BOT"), reserved=(), api=False)
    assert prompt_items((turn("SYSTEM", "s", "begin", "HUMAN"),), roles)[1] == {"role": "HUMAN", "prompt": "s"}
    items = prompt_items((turn("SYSTEM", "s", "ice"), turn("HUMAN", "q", "ice")), ROLES)
    assert items[:3] == [
        {"section": "begin", "pos": "begin"},
        {"role": "SYSTEM", "prompt": "s"},
        {"section": "begin", "pos": "end"},
    ]
    assert prompt_items((turn("", "a"), turn("", "b", "begin")), ROLES) == "ab"


@pytest.mark.parametrize(
    ("dialogue", "reason"),
    [
        ((turn("HUMAN", "q"), turn("SYSTEM", "s"), turn("HUMAN", "q2")), "round interrupted"),
        ((turn("TOOL", "x"),), "no role for a 'TOOL' turn"),
        ((turn("HUMAN", ({"type": "image_url"},)),), "multimodal"),
        ((turn("HUMAN", "x", "chat"),), "section 'chat'"),
    ],
)
def test_dialogues_opencompass_would_show_otherwise(dialogue, reason):
    with pytest.raises(Unsupported, match=reason):
        prompt_items(dialogue, ROLES)


def test_meta_templates_opencompass_parses_otherwise():
    with pytest.raises(Unsupported, match="list"):
        MetaRoles.of({"begin": ["<s>", "x"], "round": [{"role": "HUMAN"}]})
    with pytest.raises(Unsupported, match="API meta template with a begin"):
        MetaRoles.of({"begin": "x", "round": [{"role": "HUMAN", "api_role": "HUMAN"}]})
    assert MetaRoles.of({"round": [{"role": "HUMAN", "api_role": "HUMAN"}]}).api


def test_render_prompts_by_kind():
    task = prompt_style.load_task(CASES / "qa.yaml", meta=str(META))
    plain = prompt_style.load_task(CASES / "qa.yaml")
    dialogue = render_prompts(task, "dialogue", plain)
    text = render_prompts(task, "text")
    assert dialogue.mode == text.mode == "gen" and dialogue.until == ("\n", "Question:")
    assert [text.prompt(i) for i in range(len(text))] == [p.text for p in task.render()]
    assert dialogue.prompt(0)[1] == {"role": "SYSTEM", "prompt": "Answer in one word.\n\n"}
    mmlu_task = prompt_style.load_task(EXAMPLES / "mmlu" / "task.yaml")
    mmlu = render_prompts(mmlu_task, "text")
    first = next(iter(mmlu_task.render()))
    assert (
        mmlu.mode == "ppl"
        and mmlu.label_sets() == [[0, 1, 2, 3]]
        and mmlu.indices([0, 1, 2, 3]) == list(range(len(mmlu)))
    )
    assert [mmlu.candidate(0, j) for j in range(4)] == [first.text + c for c in first.continuations]


def test_prompt_items_reuse_the_items_of_shared_turns():
    memo: dict = {}
    shot = turn("HUMAN", "example", "ice")
    one = prompt_items((shot, turn("HUMAN", "q1")), ROLES, memo)
    two = prompt_items((shot, turn("HUMAN", "q2")), ROLES, memo)
    assert one[1] is two[1] and one[4] is not two[4]


def test_literals():
    assert literal({"type": Name("X"), "a": [1, "b"], 2: None}) == "{'type': X, 'a': [1, 'b'], 2: None}"
    assert literal({"type": Name("X"), "x": "y"}) == "dict(type=X, x='y')"
    assert literal({"a": "x" * 120}).startswith("dict(\n    a='xxx")
    assert identifier("mmlu-demo") == "mmlu_demo" and identifier("1x") == "_1x" and identifier("class") == "_class"
    with pytest.raises(NotLiteral, match="a.b"):
        check_literal({"a": {"b": object()}})


def test_the_recording_models_record_any_text_one_line_each(tmp_path):
    """U+2028 (a line end to str.splitlines) and a lone surrogate (no UTF-8 for it) in a prompt:
    still one JSON line per prompt, decoding to the same text."""
    recording = pytest.importorskip("prompt_style_opencompass.recording", reason="needs OpenCompass")
    recorder = recording._Recorder()
    recorder.record_file = str(tmp_path / "received.{pid}.jsonl")
    text = "a\u2028b\u2029c\x85d\ud800e ✓"
    recorder._record([{"mode": "gen", "prompt": text}])
    [path] = tmp_path.glob("received.*.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["prompt"] == text
