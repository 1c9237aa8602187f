"""End to end against the real lm-evaluation-harness: export, run lm-eval, compare with ``prompt-style render``.

Every case is exported with ``prompt-style export lm-eval`` (or, for the
``metadata.prompt_style`` block, is a task file of lm-eval's own with the block
added), then run by an unmodified lm-eval 0.4.13:

* plain: ``lm-eval run --model dummy --include_path DIR --log_samples`` (the
  command line, offline);
* ``lm_eval.simple_evaluate`` with an in-memory model whose chat template
  returns the messages it is given (``lm_eval_runner.py``): ``num_fewshot=3``
  (lm-eval's ``--num_fewshot``), and ``apply_chat_template=True`` with
  multi-turn and single-turn few-shot, with and without a system instruction.

The logged requests (contexts, continuations, messages, stop sequences) and
targets must equal ``prompt-style render --format jsonl`` for the same task,
records and options, byte for byte; where the repository holds golden files
from the real lm-eval (tests/golden/lm_eval_tasks) or OpenCompass
(tests/golden/opencompass) for the same task and records, the contexts must
equal those too.

lm-eval is not in the development environment: these tests run when lm-eval is
importable here, or when ``PROMPT_STYLE_LM_EVAL_PYTHON`` names the Python of a
venv with lm-eval and prompt-style-lm-eval installed (tools/harnesses/run.py
builds one); otherwise they skip. ``PROMPT_STYLE_E2E_REPORT=FILE`` appends one
JSON line per comparison (bridge, case, run, records).
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
LM_EVAL_TASKS = ROOT / "tests" / "lm_eval_tasks"
INPUTS = ROOT / "tests" / "golden" / "lm_eval_tasks" / "inputs"
LM_EVAL_GOLDEN = ROOT / "tests" / "golden" / "lm_eval_tasks"
OC = ROOT / "tests" / "golden" / "opencompass"


def _harness_python() -> str | None:
    given = os.environ.get("PROMPT_STYLE_LM_EVAL_PYTHON")
    if given:
        return given
    return sys.executable if importlib.util.find_spec("lm_eval") is not None else None


PYTHON = _harness_python()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        PYTHON is None,
        reason="lm-eval is not installed here (set PROMPT_STYLE_LM_EVAL_PYTHON to the python of a venv with "
        "lm-eval 0.4.13 and prompt-style-lm-eval, or run tools/harnesses/run.py)",
    ),
]

SYSTEM = "You are a careful expert. Answer with the letter only."
LIMIT = 6


def _data(**splits: Path) -> tuple[str, ...]:
    return tuple(arg for split, path in splits.items() for arg in ("--data", f"{split}={path}"))


@dataclass(frozen=True)
class Case:
    name: str
    task: Path
    args: tuple[str, ...] = ()
    """Options of both ``export`` and ``render``."""
    chat: bool = True
    """Also run with ``--apply_chat_template``."""
    golden: tuple[tuple[str, str], ...] = ()
    """``(run, golden file)``: lm-eval's own prompts for this task and these records in that run."""
    exported: bool = True
    """``False``: a task file with a ``prompt_style`` block, run as it is (the fixture writes it)."""


ARC = _data(test=INPUTS / "arc" / "test.jsonl", train=INPUTS / "arc" / "train.jsonl")
GSM8K = _data(test=INPUTS / "gsm8k" / "test.jsonl", train=INPUTS / "gsm8k" / "train.jsonl")
WINOGRANDE = (
    *_data(validation=INPUTS / "winogrande" / "validation.jsonl", train=INPUTS / "winogrande" / "train.jsonl"),
    "--trust-code",
)
OC_ARC = _data(
    test=OC / "records" / "ARC_c_few_shot_gen_e9b043" / "test.jsonl",
    train=OC / "records" / "ARC_c_few_shot_gen_e9b043" / "train.jsonl",
)
MMLU = ROOT / "examples" / "mmlu" / "task.yaml"
AWKWARD = ROOT / "tools" / "bridges" / "cases" / "awkward"

CASES = [
    Case("mmlu_0shot", MMLU, ("--shots", "0")),
    Case("mmlu_5shot", MMLU),
    Case("mmlu_chatml_text", MMLU, ("--shots", "1", "--meta", "chatml"), chat=False),
    Case("arc_random", ROOT / "examples" / "arc" / "task.yaml"),  # a random retriever, per record
    Case("oc_arc_c_gen", OC / "datasets" / "ARC_c_few_shot_gen_e9b043.yaml", OC_ARC, golden=(("plain", "oc"),)),
    Case("sciq_task_template", ROOT / "examples" / "sciq" / "sciq_mcq.yaml", ("--shots", "2")),
    Case(
        "arc_easy_2shot",
        LM_EVAL_TASKS / "arc" / "arc_easy.yaml",
        (*ARC, "--shots", "2"),
        golden=(
            ("plain", "arc_easy_2shot"),
            ("chat", "arc_easy_2shot_chat_multiturn"),
            ("chat_single_system", "arc_easy_2shot_chat_singleturn_system"),
        ),
    ),
    Case("gsm8k_5shot", LM_EVAL_TASKS / "gsm8k" / "gsm8k.yaml", GSM8K, golden=(("plain", "gsm8k_5shot"),)),
    Case(
        "gsm8k_2shot",
        LM_EVAL_TASKS / "gsm8k" / "gsm8k.yaml",
        (*GSM8K, "--shots", "2"),
        golden=(("chat_system", "gsm8k_2shot_chat_system"),),
    ),
    Case(
        "winogrande_1shot",
        LM_EVAL_TASKS / "winogrande" / "default.yaml",
        (*WINOGRANDE, "--shots", "1"),
        golden=(("plain", "winogrande_1shot"), ("chat", "winogrande_1shot_chat")),
    ),
    Case(
        "winogrande_2shot",
        LM_EVAL_TASKS / "winogrande" / "default.yaml",
        (*WINOGRANDE, "--shots", "2"),
        golden=(("chat_single_system", "winogrande_2shot_chat_singleturn_system"),),
    ),
    Case(
        "lambada_openai",
        LM_EVAL_TASKS / "lambada" / "lambada_openai.yaml",
        _data(test=INPUTS / "lambada" / "test.jsonl"),
        golden=(("plain", "lambada_openai_0shot"),),
    ),
    Case(
        "wikitext",
        LM_EVAL_TASKS / "wikitext" / "wikitext.yaml",
        (*_data(test=INPUTS / "wikitext" / "test.jsonl"), "--trust-code"),
        golden=(("plain", "wikitext_0shot"),),
    ),
    # awkward records (U+2028, CRLF, emoji, braces, Jinja-looking text, |||): generation with stop
    # sequences and a per-record random retriever, a cloze task of seven choices, an OpenCompass
    # config whose template holds the answer's BOT turn
    Case("awkward_gen", AWKWARD / "gen.yaml"),
    Case("awkward_cloze", AWKWARD / "cloze.yaml"),
    Case("awkward_oc_bot", AWKWARD / "oc_bot.yaml"),
    # lm-eval's own arc_easy.yaml with class: and a prompt_style block added: records read by prompt-style
    # (dataset_path: json) or handed over by lm-eval from its own dataset (a local dataset folder).
    Case("block_json", Path("block_json.yaml"), exported=False),
    Case("block_dataset", Path("block_dataset.yaml"), ARC, exported=False),  # render reads the same records
]

RUNS = {
    # name: (lm-eval options, render options)
    "plain": ({}, ()),
    "num_fewshot_3": ({"num_fewshot": 3}, ("--shots", "3")),
    "chat": ({"chat": True}, ("--meta", "messages")),
    "chat_system": ({"chat": True, "system": SYSTEM}, ("--meta", "messages", "--system-instruction", SYSTEM)),
    "chat_single_system": (
        {"chat": True, "single": True, "system": SYSTEM},
        ("--meta", "messages", "--system-instruction", SYSTEM, "--no-fewshot-as-multiturn"),
    ),
}
NUM_FEWSHOT_CASES = ("mmlu_0shot", "mmlu_5shot", "arc_random", "arc_easy_2shot", "block_json")
BLOCK = """\
  prompt_style:
    style: mcq::mmlu
    retriever: {name: random, seed: 3}
    shots: 2
"""


def _block_files(folder: Path) -> dict[str, Path]:
    """lm-eval's arc_easy.yaml, unchanged but for its name, its data and the two additions."""
    folder.mkdir(parents=True, exist_ok=True)
    shipped = (LM_EVAL_TASKS / "arc" / "arc_easy.yaml").read_text(encoding="utf-8")
    hub = "dataset_path: allenai/ai2_arc\ndataset_name: ARC-Easy\n"
    assert hub in shipped and shipped.rstrip().endswith("version: 1.0")
    dataset = folder / "arc_dataset"  # a local dataset folder lm-eval reads with datasets.load_dataset
    dataset.mkdir(exist_ok=True)
    for split in ("train", "test"):
        (dataset / f"{split}.jsonl").write_bytes((INPUTS / "arc" / f"{split}.jsonl").read_bytes())
    json_data = (
        "dataset_path: json\ndataset_kwargs:\n  data_files:\n"
        f"    train: {INPUTS / 'arc' / 'train.jsonl'}\n    test: {INPUTS / 'arc' / 'test.jsonl'}\n"
    )
    made = {}
    for name, data in (("block_json", json_data), ("block_dataset", f"dataset_path: {dataset}\n")):
        head = f"task: {name}\nclass: !function prompt_style_lm_eval.task.PromptStyleTask\n"
        text = shipped.replace("task: arc_easy\n", head)
        text = text.replace(hub, data).replace("validation_split: validation\n", "")
        path = folder / f"{name}.yaml"
        path.write_text(text.rstrip() + "\n" + BLOCK, encoding="utf-8")
        made[name] = path
    return made


def _prompt_style(*args: str) -> subprocess.CompletedProcess:
    """``prompt-style ARGS`` as a user runs it (this environment's prompt-style, in this process:
    the command's own code, without an interpreter's start-up per call)."""
    from prompt_style.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["prompt-style", *args], code, out.getvalue(), err.getvalue())


def _offline_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(tmp / "hf"), TOKENIZERS_PARALLELISM="false")
    return env


@pytest.fixture(scope="module")
def lm_eval_runs(tmp_path_factory) -> dict[str, Any]:
    """Export every case, run lm-eval in every run; ``{run: {task: [sample, ...]}}`` and the task files."""
    tmp = tmp_path_factory.mktemp("lm_eval_e2e")
    include = tmp / "tasks"
    tasks: dict[str, Path] = {}
    for case in CASES:
        if not case.exported:
            continue
        args = ("export", "lm-eval", str(case.task), "--out", str(include), "--name", case.name, *case.args)
        done = _prompt_style(*args)
        assert done.returncode == 0, done.stderr
        tasks[case.name] = case.task
    lm_eval_files = {name: include / name / f"{name}.yaml" for name in tasks}
    blocks = _block_files(include / "blocks")
    tasks.update(blocks)
    lm_eval_files.update(blocks)
    env = _offline_env(tmp)
    runs: dict[str, Any] = {"files": tasks, "lm_eval_files": lm_eval_files}
    for run, (options, _) in RUNS.items():
        names = [c.name for c in CASES if (c.chat or not options.get("chat"))]
        if run == "num_fewshot_3":
            names = list(NUM_FEWSHOT_CASES)
        out = tmp / run
        if not options:  # lm-eval's command line, as a user runs it
            command = [PYTHON, "-m", "lm_eval", "run", "--model", "dummy", "--tasks", ",".join(names)]
            command += ["--include_path", str(include), "--limit", str(LIMIT), "--log_samples"]
            command += ["--output_path", str(out)]
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp)
            assert done.returncode == 0, done.stderr[-4000:]
            runs[run] = {name: _logged_samples(out, name) for name in names}
        else:
            result = out.with_suffix(".json")
            command = [PYTHON, str(HERE / "lm_eval_runner.py"), "--include-path", str(include)]
            command += ["--tasks", ",".join(names), "--out", str(result), "--limit", str(LIMIT)]
            if options.get("chat"):
                command += ["--apply-chat-template"]
            if options.get("single"):
                command += ["--no-fewshot-as-multiturn"]
            if "num_fewshot" in options:
                command += ["--num-fewshot", str(options["num_fewshot"])]
            if options.get("system"):
                command += ["--system-instruction", options["system"]]
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp)
            assert done.returncode == 0, done.stderr[-4000:]
            runs[run] = json.loads(result.read_text(encoding="utf-8"))
    return runs


def _logged_samples(out: Path, task: str) -> list[dict[str, Any]]:
    """The samples lm-eval logged for ``task``, arguments as lists (``--log_samples`` writes them by name)."""
    # samples_{task}_{date}.jsonl: a task named like another's prefix (x and x_chat) is not x's
    files = sorted(f for f in out.glob(f"*/samples_{task}_*.jsonl") if f.name[len(f"samples_{task}_") :][:1].isdigit())
    assert files, f"lm-eval logged no samples for {task}"
    samples = []
    for file in files:
        # lm-eval writes U+2028 and U+2029 unescaped: lines end at "\n" only
        for line in filter(None, file.read_text(encoding="utf-8").split("\n")):
            sample = json.loads(line)
            sample["arguments"] = [list(args.values()) for args in sample["arguments"].values()]
            samples.append(sample)
    return samples


def _rendered(task: Path, args: tuple[str, ...]) -> list[dict[str, Any]]:
    done = _prompt_style("render", str(task), *args, "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.split("\n") if line]


def _expected(record: dict[str, Any], output_type: str, chat: bool) -> list[list[Any]]:
    """The request arguments lm-eval must send for a rendered record (a chat context is the
    recording model's JSON of the messages)."""

    def context(text: Any, messages: Any) -> Any:
        if not chat:
            return text
        prefill = bool(messages) and messages[-1]["role"] == "assistant"
        return {"messages": messages, "add_generation_prompt": not prefill}

    conts = record["continuations"]
    if output_type == "loglikelihood_rolling":
        return [[record["text"]]]
    if record.get("contexts") is not None:
        return [[context(c, c), cont] for c, cont in zip(record["contexts"], conts, strict=True)]
    ctx = context(record["text"], record["messages"])
    if output_type == "multiple_choice":
        return [[ctx, cont] for cont in conts]
    if output_type == "loglikelihood":
        return [[ctx, conts[0]]]
    return [[ctx, {"until": record.get("until") or []}]]


def _actual(sample: dict[str, Any], output_type: str, chat: bool) -> list[list[Any]]:
    made = []
    for args in sample["arguments"]:
        args = list(args)
        if chat and output_type != "loglikelihood_rolling":
            args[0] = json.loads(args[0])
        if output_type == "generate_until":
            args[1] = {"until": args[1]["until"]}
        made.append(args)
    return made


def _report(case: str, run: str, records: int, what: str = "render") -> None:
    path = os.environ.get("PROMPT_STYLE_E2E_REPORT")
    if path:
        line = {"bridge": "lm-eval", "case": case, "run": run, "compared_with": what, "records": records}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def _output_type(task_file: Path) -> str:
    """The ``output_type`` an lm-eval task file says (its ``!function`` tags read as text)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(task_file.read_text(encoding="utf-8"), Loader=Loader)["output_type"]


RUN_CASES = [
    (run, case)
    for run, (options, _) in RUNS.items()
    for case in CASES
    if (case.chat or not options.get("chat")) and (run != "num_fewshot_3" or case.name in NUM_FEWSHOT_CASES)
]


@pytest.mark.parametrize(("run", "case"), RUN_CASES, ids=[f"{run}-{case.name}" for run, case in RUN_CASES])
def test_lm_eval_sends_what_render_gives(lm_eval_runs, run, case):
    options, render_options = RUNS[run]
    chat = bool(options.get("chat"))
    task = lm_eval_runs["files"][case.name]
    rendered = _rendered(task, (*case.args, *render_options))
    output_type = _output_type(lm_eval_runs["lm_eval_files"][case.name])
    samples = lm_eval_runs[run][case.name]
    seen = set()
    for sample in samples:
        record = rendered[sample["doc_id"]]
        assert _actual(sample, output_type, chat) == _expected(record, output_type, chat), (case.name, sample["doc_id"])
        assert sample["target"] == str(record["target"]), (case.name, sample["doc_id"])
        seen.add(sample["doc_id"])
    assert seen == set(range(min(LIMIT, len(rendered))))
    _report(case.name, run, len(seen))


def test_an_opencompass_config_under_a_chat_template_gets_what_opencompass_chat_models_get(lm_eval_runs):
    """lm-eval's --apply_chat_template on an exported OpenCompass config: the messages OpenCompass
    hands a chat model (its API template parser, what ``--meta opencompass::api`` renders and
    test_opencompass_e2e.py checks against OpenCompass), without the answer's BOT turn."""
    api = _rendered(AWKWARD / "oc_bot.yaml", ("--meta", "opencompass::api"))
    samples = lm_eval_runs["chat"]["awkward_oc_bot"]
    assert samples
    for sample in samples:
        messages = json.loads(sample["arguments"][0][0])
        assert messages == {"messages": api[sample["doc_id"]]["messages"], "add_generation_prompt": True}


GOLDEN_CASES = [(run, case, golden) for case in CASES for run, golden in case.golden]


@pytest.mark.parametrize(
    ("run", "case", "golden"), GOLDEN_CASES, ids=[f"{run}-{case.name}-{golden}" for run, case, golden in GOLDEN_CASES]
)
def test_lm_eval_sends_what_the_original_harness_builds(lm_eval_runs, run, case, golden):
    """The task exported from lm-eval's own task file gives what lm-eval itself gives for it; the
    OpenCompass config exported to lm-eval gives the prompts OpenCompass builds."""
    chat = run.startswith("chat")
    samples = {s["doc_id"]: s for s in lm_eval_runs[run][case.name]}
    if golden == "oc":
        name = case.task.stem
        with gzip.open(OC / "outputs" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as handle:
            lines = [json.loads(line) for line in handle][1:]
        expected = {r["index"]: r["text"] for r in lines if r["meta"] == "none" and r["mode"] == "gen"}
        for doc_id, sample in samples.items():
            assert sample["arguments"][0][0] == expected[doc_id], (name, doc_id)
        _report(case.name, run, len(samples), "OpenCompass 0.5.4")
        return
    records = json.loads((LM_EVAL_GOLDEN / f"{golden}.json").read_text(encoding="utf-8"))["records"]
    for doc_id, sample in samples.items():
        want = records[doc_id]
        got = [args[0] for args in sample["arguments"]]
        if chat:
            got = [json.loads(g)["messages"] for g in got]
            if "contexts_messages" in want:
                assert got == want["contexts_messages"], (golden, doc_id)
            else:
                assert all(g == want["messages"] for g in got), (golden, doc_id)
        elif "contexts" in want:
            assert got == want["contexts"], (golden, doc_id)
        else:
            assert all(g == want["context"] for g in got), (golden, doc_id)
        if want.get("continuations") and "contexts" not in want:
            assert [args[1] for args in sample["arguments"]] == want["continuations"], (golden, doc_id)
        if want.get("until") is not None:
            assert sample["arguments"][0][1]["until"] == want["until"], (golden, doc_id)
    _report(case.name, run, len(samples), "lm-evaluation-harness 0.4.13")


def _lm_eval_cli(tmp: Path, include: Path, task: str, *args: str) -> subprocess.CompletedProcess:
    command = [PYTHON, "-m", "lm_eval", "run", "--model", "dummy", "--tasks", task, "--include_path", str(include)]
    command += ["--limit", "1", *args]
    return subprocess.run(command, capture_output=True, text=True, env=_offline_env(tmp), cwd=tmp)


def _one_line_error(done: subprocess.CompletedProcess) -> str:
    """lm-eval's command line stopped by a prompt-style error: exit status 2, one line, no traceback."""
    errors = [line for line in done.stderr.splitlines() if line.startswith("prompt-style: error:")]
    assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    return errors[0]


def test_a_num_fewshot_the_task_cannot_give_stops_lm_eval_with_one_line(tmp_path):
    include = tmp_path / "tasks"
    done = _prompt_style("export", "lm-eval", str(MMLU), "--out", str(include), "--name", "too_many")
    assert done.returncode == 0, done.stderr
    error = _one_line_error(_lm_eval_cli(tmp_path, include, "too_many", "--num_fewshot", "50"))
    assert "--num_fewshot 50" in error and "few-shot pool" in error and str(MMLU) in error


def test_an_export_whose_task_file_is_gone_stops_lm_eval_with_one_line(tmp_path):
    task = tmp_path / "gone.yaml"
    task.write_bytes(MMLU.read_bytes().replace(b"data/", str(MMLU.parent / "data").encode() + b"/"))
    include = tmp_path / "tasks"
    done = _prompt_style("export", "lm-eval", str(task), "--out", str(include), "--name", "gone")
    assert done.returncode == 0, done.stderr
    task.unlink()
    error = _one_line_error(_lm_eval_cli(tmp_path, include, "gone"))
    assert "not there any more" in error and "gone.yaml" in error
