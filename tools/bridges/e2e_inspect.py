"""End to end: what inspect_ai 0.3.285 hands the model through prompt-style-inspect
equals ``prompt-style render --format jsonl``, byte for byte.

    python tools/bridges/e2e_inspect.py                       # layers a venv over /tmp/venvs/inspect
    python tools/bridges/e2e_inspect.py --python VENV/bin/python   # a venv with everything installed

Every case runs the real command, ``inspect eval prompt_style_inspect/task -T
task_file=... -T option=... --model prompt_style_inspect/echo -M record=FILE``
(or with ``--solver prompt_style_inspect/render -S ...``, or a task of its own
through ``record_to_sample``), offline. The offline model records every request
it receives; for every record, the messages must equal the rendered
``messages`` (a chat meta template) or be one user message holding the rendered
``text``; the eval log must show the same conversation, the sample's answers
(the continuations without their delimiter) and target. Exit status 1 when any
case differs or fails.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _e2e import (  # noqa: E402
    CASES,
    Case,
    Harness,
    Result,
    differ,
    finish,
    harness_from_args,
    json_lines,
    option_words,
    parser,
    run_cases,
    run_pytest,
)

HARNESS_VENV = "/tmp/venvs/inspect"

CASE_LIST = [
    Case("mcq-plain-0shot", "mcq/task.yaml", {"shots": 0}),
    Case("mcq-plain-3shot", "mcq/task.yaml"),
    Case("mcq-chat-2shot", "mcq/task.yaml", {"meta": "messages", "shots": 2}),
    Case(
        "mcq-chat-single-turn",
        "mcq/task.yaml",
        {
            "meta": "messages",
            "fewshot_as_multiturn": False,
            "system_instruction": "Answer with one letter: A, B, C or D.",
        },
    ),
    Case(
        "mcq-chatml",
        "mcq/task.yaml",
        {"meta": "chatml", "shots": 1},
        "chatml gives text and messages: inspect sends the messages",
    ),
    Case("mcq-style-numbered", "mcq/task.yaml", {"style": "mcq::numbered", "shots": 1}),
    Case("mcq-generative-cot", "mcq/task.yaml", {"style_options": {"generation": "cot"}, "shots": 1}),
    Case("mcq-other-data", "mcq/task.yaml", {"data": {"test": str(CASES / "mcq" / "dev.jsonl")}, "shots": 1}),
    Case("random-retriever-plain", "mcq/task_random.yaml"),
    Case("random-retriever-chat", "mcq/task_random.yaml", {"meta": "messages", "seed": 11}),
    Case("generation-plain-1shot", "gen/task.yaml"),
    Case("generation-chat-0shot", "gen/task.yaml", {"meta": "messages", "shots": 0}),
    Case("opencompass-meta-template", "oc/dataset_cfg.yaml", {"meta": str(CASES / "oc" / "meta.yaml")}),
    Case("opencompass-chat", "oc/dataset_cfg.yaml", {"meta": "messages"}),
    Case("lm-eval-task-plain", "lm_eval/task.yaml"),
    Case("lm-eval-task-chat", "lm_eval/task.yaml", {"meta": "messages"}),
    Case("awkward-generation", "awkward/gen.yaml"),
    Case("awkward-generation-chat", "awkward/gen.yaml", {"meta": "messages"}),
    Case("awkward-cloze-7-choices", "awkward/cloze.yaml"),
    Case("opencompass-answer-turn-chat", "awkward/oc_bot.yaml", {"meta": "messages"}),
    Case("solver-renders-again", "mcq/task.yaml", {"meta": "messages", "shots": 1}, "solver"),
    Case("record-to-sample", "mcq/task_random.yaml", {"shots": 3}, "python"),
]

# A task of the user's own: inspect_ai's json_dataset with prompt-style's record_to_sample.
PYTHON_CASE = """
import sys
from inspect_ai import Task, eval
from inspect_ai.dataset import json_dataset
from prompt_style_inspect import record_to_sample, render, style_answer
task_file, data, log_dir, record = sys.argv[1:5]
dataset = json_dataset(data, record_to_sample(task_file, shots=3))
logs = eval(
    Task(dataset=dataset, solver=render(), scorer=style_answer()),
    model="prompt_style_inspect/echo",
    model_args={"record": record},
    log_dir=log_dir,
    log_format="json",
    display="none",
)
sys.exit(0 if logs[0].status == "success" else 1)
"""


def _expected_messages(line: dict[str, Any]) -> list[dict[str, Any]]:
    if line["messages"] is not None:
        return line["messages"]
    return [{"role": "user", "content": line["text"]}]


def _log(log_dir: Path) -> dict[str, Any]:
    [path] = sorted(log_dir.glob("*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def run_case(harness: Harness, case: Case) -> Result:
    result = Result(case.name)
    work = harness.work / case.name
    if work.exists():
        for old in [*work.glob("logs/*"), *work.glob("*.jsonl")]:
            old.unlink()
    work.mkdir(parents=True, exist_ok=True)
    record = work / "received.jsonl"
    logs = work / "logs"
    if case.note == "python":
        harness.run(
            [
                str(harness.python),
                "-c",
                PYTHON_CASE,
                str(case.path),
                str(CASES / "mcq" / "test.jsonl"),
                str(logs),
                str(record),
            ]
        )
    else:
        argv = [*harness.bin("inspect"), "eval", "prompt_style_inspect/task", "-T", f"task_file={case.path}"]
        if case.note == "solver":  # the task as written; the solver renders again with the case's options
            argv += ["--solver", "prompt_style_inspect/render"]
            argv += [arg for word in option_words(case.options) for arg in ("-S", word)]
        else:
            argv += [arg for word in option_words(case.options) for arg in ("-T", word)]
        argv += ["--model", "prompt_style_inspect/echo", "-M", f"record={record}"]
        argv += ["--log-dir", str(logs), "--log-format", "json", "--display", "none"]
        harness.run(argv)
    expected = harness.expected(case)
    received: dict[Any, list[dict[str, Any]]] = {}
    for entry in json_lines(record.read_text(encoding="utf-8")):
        received[entry["sample_id"]] = entry["messages"]
    log = _log(logs)
    samples = {s["id"]: s for s in log["samples"]}
    if len(received) != len(expected) or len(samples) != len(expected):
        result.differences.append(f"{len(expected)} records rendered, {len(received)} requests, {len(samples)} samples")
    for line in expected:
        index = line["index"]
        want = _expected_messages(line)
        got = received.get(index)
        if got != want:
            result.differences.append(differ("the messages the model received", index, want, got))
            continue
        sample = samples.get(index)
        logged = [{"role": m["role"], "content": m["content"]} for m in (sample or {}).get("messages", [])[:-1]]
        if logged != want:
            result.differences.append(differ("the eval log's messages", index, want, logged))
            continue
        meta = sample["metadata"]["prompt_style"]
        answers = [c.strip() for c in line["continuations"]] or None
        if meta["answers"] != answers or meta["target"] != line["target"]:
            result.differences.append(
                differ("answers and target", index, [answers, line["target"]], [meta["answers"], meta["target"]])
            )
            continue
        result.compared += 1
    return result


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__.split("\n\n")[0], HARNESS_VENV)
    args = p.parse_args(argv)
    args.work = args.work or tempfile.mkdtemp(prefix="prompt-style-e2e-inspect-")
    harness = harness_from_args(args, "contrib/inspect", HARNESS_VENV)
    harness.env["INSPECT_LOG_DIR"] = str(harness.work / "logs")
    print(f"inspect_ai end to end in {harness.work} with {harness.python}", flush=True)
    results = run_cases(CASE_LIST, lambda case: run_case(harness, case), args.case)
    if not args.case and not args.no_pytest:
        results.append(run_pytest(harness, "contrib/inspect/tests"))
    return finish("inspect_ai", results, args.json)


if __name__ == "__main__":
    sys.exit(main())
