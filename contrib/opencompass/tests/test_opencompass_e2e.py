"""End to end against the real OpenCompass 0.5.4: what OpenCompass hands a model
from an exported config equals ``prompt-style render --format jsonl``, byte for byte.

Every case is exported with ``prompt-style export opencompass`` and rendered with
``prompt-style render --format jsonl`` (both the command line, in this Python);
one OpenCompass run (its own command line, ``--debug``: the tasks run one after
the other in its process; inference, evaluation and the summary) evaluates every case with a recording
model of its own (``prompt_style_opencompass.recording``: a language model, or
an API model, with the exported ``meta_template``), and a second run
(``--max-num-workers 2``, OpenCompass's worker processes reading the configs
it dumps, a dataset of more than 16 records split between them) repeats three
cases, one per route. The model records every prompt
OpenCompass's inferencer gives it (after OpenCompass's own template parser):
generation prompts in record order, perplexity prompts label after label.

Needs OpenCompass 0.5.4 and this bridge installed in the running Python (skips
otherwise): ``python tools/harnesses/run.py --harness opencompass`` builds such
an environment (tools/harnesses/specs/opencompass.json) and runs this file. Each
case appends a line to ``$PROMPT_STYLE_E2E_REPORT`` when set.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "opencompass", reason="OpenCompass 0.5.4 is not installed here (tools/harnesses/run.py --harness opencompass)"
)
pytest.importorskip("prompt_style_opencompass.runtime", reason="the bridge or its OpenCompass dependencies are missing")

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
ROOT = HERE.parents[2]
META = str(CASES_DIR / "meta.yaml")
MC = ["--data", f"dev={CASES_DIR / 'mc_dev.jsonl'}", "--data", f"test={CASES_DIR / 'mc_test.jsonl'}"]
QA = ["--data", f"dev={CASES_DIR / 'qa_dev.jsonl'}", "--data", f"test={CASES_DIR / 'qa_test.jsonl'}"]
AWKWARD = CASES_DIR / "mc_test_awkward.jsonl"
GOLDEN = "tests/golden/opencompass"
_RECORDS = ROOT / GOLDEN / "records"
CSQA = ["--trust-code", "--data", f"train={_RECORDS / 'commonsenseqa_gen_1da2d0/train.jsonl'}"]
CSQA += ["--data", f"validation={_RECORDS / 'commonsenseqa_gen_1da2d0/validation.jsonl'}"]
ARC_C = ["--trust-code", "--data", f"train={_RECORDS / 'ARC_c_few_shot_ppl/train.jsonl'}"]
ARC_C += ["--data", f"test={_RECORDS / 'ARC_c_few_shot_ppl/test.jsonl'}"]
ARC = [
    "--data",
    f"train={ROOT / 'examples/arc/data/train.jsonl'}",
    "--data",
    f"test={ROOT / 'examples/arc/data/test.jsonl'}",
]


@dataclass(frozen=True)
class Case:
    name: str
    task: str
    """Relative to tests/cases/, or to the repository with ``repo:``."""
    args: list[str] = field(default_factory=list)
    """render options (given to export and render alike)."""
    route: str = "plain"
    """The route the exporter must choose."""
    export: list[str] = field(default_factory=list)
    """``--export-option`` values."""
    api: bool = False
    """An API model (APITemplateParser) records the prompts."""

    @property
    def path(self) -> str:
        if self.task.startswith("repo:"):
            return str(ROOT / self.task[5:])
        return str(CASES_DIR / self.task)


CASES = [
    # OpenCompass configs that OpenCompass runs with its own classes
    Case("oc_gen", "oc_gen.yaml"),
    Case("oc_gen_meta", "oc_gen.yaml", ["--meta", META]),
    Case("oc_gen_0shot", "oc_gen.yaml", ["--meta", META, "--shots", "0"]),
    Case("oc_gen_api", "oc_gen.yaml", ["--meta", "opencompass::api"], api=True),
    Case("oc_ppl", "oc_ppl.yaml"),
    Case("oc_ppl_meta", "oc_ppl_dialogue.yaml", ["--meta", META]),
    Case("oc_ppl_gen", "oc_ppl_dialogue.yaml", ["--meta", META, "--mode", "gen"]),
    Case("oc_random", "oc_random.yaml"),
    Case("oc_random_seed", "oc_random.yaml", ["--seed", "5", "--shots", "3"]),
    Case("oc_shipped", "repo:examples/opencompass/task.yaml", ["--meta", "opencompass::internlm2-chat"]),
    # OpenCompass's own .py configs as shipped (their eval_cfg kept), on the golden files' awkward records
    Case(
        "oc_py_csqa", f"repo:{GOLDEN}/py/commonsenseqa_gen_1da2d0.py", [*CSQA, "--meta", "opencompass::internlm2-chat"]
    ),
    Case("oc_py_arc_ppl", f"repo:{GOLDEN}/py/ARC_c_few_shot_ppl.py", [*ARC_C, "--meta", META]),
    # prompt-style's retriever inside OpenCompass's templates
    Case("oc_native_random", "oc_native_random.yaml", ["--meta", META], route="retriever"),
    Case("oc_gen_retriever", "oc_gen.yaml", ["--meta", META], route="retriever", export=["route=retriever"]),
    # rendered by prompt-style when OpenCompass loads the dataset
    Case("oc_render_dialogue", "oc_gen.yaml", ["--meta", META], route="render", export=["route=render"]),
    Case("oc_render_baked", "oc_gen.yaml", ["--meta", META], route="render", export=["route=render", "bake_meta=true"]),
    Case("oc_render_api", "oc_gen.yaml", ["--meta", "opencompass::api"], "render", ["route=render"], api=True),
    Case("oc_render_ppl", "oc_ppl_dialogue.yaml", ["--meta", META], route="render", export=["route=render"]),
    Case("oc_awkward", "oc_gen.yaml", ["--meta", META, "--data", f"test={AWKWARD}"], "render"),
    Case("mmlu_0shot", "repo:examples/mmlu/task.yaml", ["--shots", "0"], route="render"),
    Case("mmlu_5shot", "repo:examples/mmlu/task.yaml", [], route="render"),
    Case("mmlu_chatml", "repo:examples/mmlu/task.yaml", ["--shots", "2", "--meta", "chatml"], route="render"),
    Case("mmlu_oc_meta", "repo:examples/mmlu/task.yaml", ["--shots", "2", "--meta", META], route="render"),
    Case("qa_random", "qa.yaml", [], route="render"),
    Case("qa_random_meta", "qa.yaml", ["--meta", META], route="render"),
    Case("qa_random_api", "qa.yaml", ["--meta", "opencompass::api-system"], route="render", api=True),
    Case("arc_random", "repo:examples/arc/task.yaml", [], route="render"),
    # lm-evaluation-harness task files: what OpenCompass hands the model is what lm-eval would
    Case("lmeval_arc", "repo:examples/lm_eval/arc/arc_easy.yaml", [*ARC, "--shots", "2"], route="render"),
    Case("lmeval_qa", "lm_eval_qa.yaml", QA, route="render"),
    Case("lmeval_qa_meta", "lm_eval_qa.yaml", [*QA, "--meta", META], route="render"),
    # awkward records (U+2028, CRLF, emoji, braces, Jinja-looking text, |||)
    Case("awkward_gen", "repo:tools/bridges/cases/awkward/gen.yaml", route="render"),
    Case("awkward_cloze", "repo:tools/bridges/cases/awkward/cloze.yaml", route="render"),
    Case("awkward_oc_bot", "repo:tools/bridges/cases/awkward/oc_bot.yaml"),
    Case(
        "awkward_oc_bot_api", "repo:tools/bridges/cases/awkward/oc_bot.yaml", ["--meta", "opencompass::api"], api=True
    ),
    # a task-template file (SciRIFF's format)
    Case("tt_sciq", "repo:examples/sciq/sciq_mcq.yaml", ["--shots", "2", "--meta", META], route="render"),
]
WORKER_CASES = ["oc_gen_meta", "oc_native_random", "mmlu_oc_meta"]
"""Repeated with OpenCompass's worker processes (its default runner)."""

ENV = {
    **os.environ,
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PYTHONIOENCODING": "utf-8",
}


def _run(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env or ENV, timeout=1800)
    if proc.returncode != 0:
        output = f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{output}")
    return proc.stdout


def _render(case: Case) -> list[dict[str, Any]]:
    out = _run([sys.executable, "-m", "prompt_style", "render", case.path, *case.args, "--format", "jsonl"])
    return [json.loads(line) for line in out.split("\n") if line]


def _export(case: Case, out: Path) -> str:
    options = [x for option in case.export for x in ("--export-option", option)]
    command = ["export", "opencompass", case.path, "--out", str(out), "--name", case.name]
    _run([sys.executable, "-m", "prompt_style", *command, *case.args, *options])
    match = re.search(r"^Route: (\w+):", out.read_text(encoding="utf-8"), re.M)
    assert match, out.read_text(encoding="utf-8")[:500]
    return match.group(1)


def _run_config(cases: list[Case], folder: Path, records: Path, tag: str) -> Path:
    """A run config pairing each case's datasets with a recording model of its own."""
    lines = ["from mmengine.config import read_base", "", "with read_base():"]
    for case in cases:
        text = (folder / f"{case.name}.py").read_text(encoding="utf-8")
        names = [f"{case.name}_datasets"]
        if f"{case.name}_meta_template =" in text:
            names.append(f"{case.name}_meta_template")
        lines.append(f"    from .{case.name} import {', '.join(names)}")
    lines.append("")
    combos = []
    for case in cases:
        text = (folder / f"{case.name}.py").read_text(encoding="utf-8")
        meta = f"{case.name}_meta_template" if f"{case.name}_meta_template =" in text else "None"
        model = "RecordingAPIModel" if case.api else "RecordingModel"
        record = records / f"{case.name}.{tag}.{{pid}}.jsonl"
        lines.append(
            f"model_{case.name} = dict(type='prompt_style_opencompass.recording.{model}', abbr='{case.name}', "
            f"record_file={str(record)!r}, meta_template={meta}, max_out_len=16, batch_size=3)"
        )
        combos.append(f"dict(models=[model_{case.name}], datasets={case.name}_datasets)")
    lines.append("models = [" + ", ".join(f"model_{c.name}" for c in cases) + "]")
    lines.append("datasets = [" + ", ".join(f"*{c.name}_datasets" for c in cases) + "]")
    lines.append("model_dataset_combinations = [" + ", ".join(combos) + "]")
    path = folder / f"run_{tag}.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def opencompass_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("opencompass-e2e")
    folder = tmp / "configs"
    folder.mkdir()
    records = tmp / "records"
    records.mkdir()
    routes = {case.name: _export(case, folder / f"{case.name}.py") for case in CASES}
    expected = {case.name: _render(case) for case in CASES}
    env = {**ENV, "HF_HOME": str(tmp / "hf")}
    debug = _run_config(CASES, folder, records, "debug")
    # A fresh work dir: OpenCompass skips a task whose predictions exist.
    opencompass = [sys.executable, "-m", "opencompass.cli.main"]
    # --mode all: OpenCompass evaluates and summarises the predictions too.
    _run([*opencompass, str(debug), "-w", str(tmp / "work_debug"), "--mode", "all", "--debug"], cwd=folder, env=env)
    workers = _run_config([c for c in CASES if c.name in WORKER_CASES], folder, records, "workers")
    two = ["--mode", "infer", "--max-num-workers", "2"]
    _run([*opencompass, str(workers), "-w", str(tmp / "work_workers"), *two], cwd=folder, env=env)
    return routes, expected, records


def _expected(case: Case, rendered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the recording model must have received, in the order OpenCompass asks."""
    key = "messages" if case.api else "text"
    first = rendered[0]
    if not first.get("candidates") and not first["continuations"]:
        return [{"mode": "gen", "prompt": r[key], "stopping_criteria": r.get("until") or []} for r in rendered]
    # Perplexity: one dataset per set of labels (in the order records first have them),
    # in each dataset label after label, record after record.
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rendered:
        labels = [c["label"] for c in r["candidates"]] if r.get("candidates") else list(range(len(r["continuations"])))
        groups.setdefault(repr(labels), []).append(r)
    out = []
    for members in groups.values():
        width = len(members[0].get("candidates") or members[0]["continuations"])
        for j in range(width):
            for r in members:
                if r.get("candidates"):
                    prompt = r["candidates"][j][key]
                else:
                    contexts = r.get("contexts") or [r["text"]] * width
                    prompt = contexts[j] + r["continuations"][j]
                out.append({"mode": "ppl", "prompt": prompt})
    return out


def _received(case: Case, records: Path, tag: str) -> list[dict[str, Any]]:
    files = sorted(records.glob(f"{case.name}.{tag}.*.jsonl"))
    assert files, f"OpenCompass handed {case.name}'s model nothing ({tag})"
    lines = [json.loads(line) for path in files for line in path.read_text(encoding="utf-8").split("\n") if line]
    key = "messages" if case.api else "prompt"
    out = []
    for line in lines:
        got = {"mode": line["mode"], "prompt": line[key]}
        if line["mode"] == "gen" and not case.api:
            got["stopping_criteria"] = line["stopping_criteria"]
        out.append(got)
    return out


def _report(case: Case, tag: str, records: int, count: int, identical: bool) -> None:
    report = os.environ.get("PROMPT_STYLE_E2E_REPORT")
    if report:
        with open(report, "a", encoding="utf-8") as out:
            line = {"harness": "opencompass", "case": f"{case.name}/{tag}", "records": records}
            out.write(json.dumps({**line, "prompts": count, "identical": identical}) + "\n")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_opencompass_hands_the_model_what_prompt_style_renders(opencompass_run, case):
    routes, expected, records = opencompass_run
    assert routes[case.name] == case.route
    want = _expected(case, expected[case.name])
    if case.api:
        for item in want:
            item.pop("stopping_criteria", None)
    tags = ["debug"] + (["workers"] if case.name in WORKER_CASES else [])
    for tag in tags:
        got = _received(case, records, tag)
        if tag == "workers":
            # OpenCompass splits a dataset of more than 16 records between its workers,
            # which run side by side: the same prompts, in another order.
            got, want = sorted(got, key=json.dumps), sorted(want, key=json.dumps)
        _report(case, tag, len(expected[case.name]), len(got), got == want)
        assert len(got) == len(want), f"{tag}: {len(got)} prompts, expected {len(want)}"
        for i, (a, b) in enumerate(zip(got, want)):
            assert a == b, f"{tag}: prompt {i} differs"
