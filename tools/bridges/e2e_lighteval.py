"""End to end: what lighteval 0.13.0 hands the model through prompt-style-lighteval
equals ``prompt-style render --format jsonl``, byte for byte.

    python tools/bridges/e2e_lighteval.py                       # layers a venv over /tmp/venvs/lighteval
    python tools/bridges/e2e_lighteval.py --python VENV/bin/python   # a venv with everything installed

The cases run through the real command line, ``lighteval custom recorder
OFFLINE_MODEL "TASK|0,..." --custom-tasks prompt_style_lighteval.tasks`` with
the tasks named by ``PROMPT_STYLE_LIGHTEVAL_TASKS`` (one run for all of them),
and through modules written by ``prompt-style export lighteval``: one run by
the command line, one through lighteval's Python pipeline with the model's
``system_prompt`` set (a conversation that starts with a system message). The
offline model (``prompt_style_lighteval/offline_model.py``) records every
request as lighteval's own ``PromptManager`` builds it. For every record: a
text prompt (``plain``, ``chatml``, an OpenCompass meta template) must equal
the rendered ``text``; a chat prompt (``messages``) the rendered
``messages``; the scored continuations (or a generation's references and stop
sequences) and the gold must be the rendered ones. Also checked: lighteval's
own few-shot count is refused with one line and exit status 2. The lighteval
install's workarounds are applied first (``python -m
prompt_style_lighteval.workarounds``). Exit status 1 when any case differs.
"""

from __future__ import annotations

import shlex
import subprocess
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
    render_flags,
    run_cases,
    run_pytest,
)

HARNESS_VENV = "/tmp/venvs/lighteval"

# note: "" = one entry of PROMPT_STYLE_LIGHTEVAL_TASKS; "export" = a module written by
# prompt-style export, run by lighteval's command line; "pipeline" = the same through
# lighteval's Python pipeline, the model given the task's system message as system_prompt.
CASE_LIST = [
    Case("mcq_plain_0shot", "mcq/task.yaml", {"shots": 0}),
    Case("mcq_plain_3shot", "mcq/task.yaml"),
    Case("mcq_chatml_text", "mcq/task.yaml", {"meta": "chatml", "shots": 1}),
    Case("mcq_style_numbered", "mcq/task.yaml", {"style": "mcq::numbered", "shots": 1}),
    Case("mcq_generative_answer", "mcq/task.yaml", {"style_options": {"generation": "answer"}, "shots": 0}),
    Case("random_retriever_plain", "mcq/task_random.yaml"),
    Case("random_retriever_chat", "mcq/task_random.yaml", {"meta": "messages", "seed": 11}),
    Case("generation_plain_1shot", "gen/task.yaml"),
    Case("generation_chat_1shot", "gen/task.yaml", {"meta": "messages"}),
    Case("opencompass_meta_template", "oc/dataset_cfg.yaml", {"meta": str(CASES / "oc" / "meta.yaml")}),
    Case("opencompass_chat", "oc/dataset_cfg.yaml", {"meta": "messages"}),
    Case("lm_eval_task_plain", "lm_eval/task.yaml"),
    Case("lm_eval_task_chat", "lm_eval/task.yaml", {"meta": "messages"}),
    Case("awkward_generation", "awkward/gen.yaml"),
    Case("awkward_cloze_7_choices", "awkward/cloze.yaml", {"meta": "chatml"}),
    Case("opencompass_answer_turn_chat", "awkward/oc_bot.yaml", {"meta": "messages"}),
    Case("exported_module", "mcq/task_random.yaml", {"shots": 3, "system_instruction": "Answer, briefly."}, "export"),
    Case("exported_chat_system_prompt", "mcq/task.yaml", {"meta": "messages", "shots": 2}, "pipeline"),
]

PIPELINE = """
import sys
from lighteval.logging.evaluation_tracker import EvaluationTracker
from lighteval.models.custom.custom_model import CustomModelConfig
from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters
import prompt_style_lighteval.offline_model as recorder
tasks, module, out, system = sys.argv[1:5]
pipeline = Pipeline(
    tasks=tasks,
    pipeline_parameters=PipelineParameters(launcher_type=ParallelismManager.CUSTOM, custom_tasks_directory=module),
    evaluation_tracker=EvaluationTracker(output_dir=out),
    model_config=CustomModelConfig(
        model_name="recorder", model_definition_file_path=recorder.__file__, system_prompt=system
    ),
)
pipeline.evaluate()
"""


def _lighteval(harness: Harness, tasks: str, custom: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    model = harness.run([str(harness.python), "-m", "prompt_style_lighteval.offline_model"]).strip()
    argv = [*harness.bin("lighteval"), "custom", "recorder", model, tasks, "--custom-tasks", custom]
    argv += ["--output-dir", str(harness.work / "out")]
    return subprocess.run(argv, capture_output=True, text=True, env={**harness.env, **env}, cwd=str(harness.work))


def _received(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``{task name: {record id: request}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if path.exists():
        for entry in json_lines(path.read_text(encoding="utf-8")):
            out.setdefault(entry["task"].rsplit("|", 1)[0], {})[entry["id"]] = entry
    return out


def compare(case: Case, expected: list[dict[str, Any]], got: dict[str, dict[str, Any]], system: str | None) -> Result:
    result = Result(case.name)
    if len(got) != len(expected):
        result.differences.append(f"{len(expected)} records rendered, {len(got)} requests")
    for line in expected:
        index = line["index"]
        request = got.get(str(index))
        if request is None:
            result.differences.append(f"record {index}: no request")
            continue
        if line["text"] is not None:
            if request["text"] != line["text"]:
                result.differences.append(differ("the text", index, line["text"], request["text"]))
                continue
        else:
            want = line["messages"]
            if system is not None:  # lighteval's system message is the model's system_prompt
                if not want or want[0] != {"role": "system", "content": system}:
                    result.differences.append(
                        f"record {index}: the rendered conversation has no system message {system!r}"
                    )
                    continue
            if request["messages"] != want:
                result.differences.append(differ("the messages", index, want, request["messages"]))
                continue
        if line["continuations"]:
            same = request["kind"] == "loglikelihood" and request["choices"] == line["continuations"]
            same = same and request["gold_index"] == line["target"]
            if not same:
                want_scoring = [line["continuations"], line["target"]]
                result.differences.append(
                    differ("continuations and gold", index, want_scoring, [request["choices"], request["gold_index"]])
                )
                continue
        else:
            target = line["target"] if isinstance(line["target"], list) else [line["target"]]
            same = request["kind"] == "generate" and request["choices"] == target
            same = same and request["stop_sequences"] == (line.get("until") or [])
            if not same:
                want_generation = [target, line.get("until")]
                result.differences.append(
                    differ(
                        "references and stop sequences",
                        index,
                        want_generation,
                        [request["choices"], request["stop_sequences"]],
                    )
                )
                continue
        result.compared += 1
    return result


def _system(expected: list[dict[str, Any]]) -> str | None:
    messages = expected[0]["messages"] if expected else None
    return messages[0]["content"] if messages and messages[0]["role"] == "system" else None


def run_all(harness: Harness, only: list[str]) -> list[Result]:
    cases = [c for c in CASE_LIST if not only or c.name in only]
    expected = {}
    for case in cases:
        try:
            expected[case.name] = harness.expected(case)
        except Exception as exc:
            expected[case.name] = exc
    records = harness.work / "received"
    records.mkdir(exist_ok=True)
    for old in records.glob("*.jsonl"):
        old.unlink()
    env_cases = [c for c in cases if not c.note]
    runs: dict[str, Any] = {}
    if env_cases:  # one lighteval run for every entry of PROMPT_STYLE_LIGHTEVAL_TASKS
        entries = "\n".join(shlex.join([str(c.path), *option_words(c.options), f"name={c.name}"]) for c in env_cases)
        record = records / "environment.jsonl"
        done = _lighteval(
            harness,
            ",".join(f"{c.name}|0" for c in env_cases),
            "prompt_style_lighteval.tasks",
            {"PROMPT_STYLE_LIGHTEVAL_TASKS": entries, "PROMPT_STYLE_LIGHTEVAL_RECORD": str(record)},
        )
        runs.update({c.name: (done, record, None) for c in env_cases})
    for case in cases:
        if case.note not in ("export", "pipeline"):
            continue
        module = harness.work / f"{case.name}_tasks.py"
        module.unlink(missing_ok=True)
        record = records / f"{case.name}.jsonl"
        harness.run(
            [
                *harness.bin("prompt-style"),
                "export",
                "lighteval",
                str(case.path),
                "--out",
                str(module),
                "--name",
                case.name,
                *render_flags(case.options),
            ]
        )
        env = {"PROMPT_STYLE_LIGHTEVAL_RECORD": str(record)}
        if case.note == "export":
            done = _lighteval(harness, f"{case.name}|0", str(module), env)
            runs[case.name] = (done, record, None)
        else:
            system = _system(expected[case.name]) if isinstance(expected[case.name], list) else None
            argv = [
                str(harness.python),
                "-c",
                PIPELINE,
                f"{case.name}|0",
                str(module),
                str(harness.work / "out"),
                system or "",
            ]
            done = subprocess.run(
                argv, capture_output=True, text=True, env={**harness.env, **env}, cwd=str(harness.work)
            )
            runs[case.name] = (done, record, system)

    def run(case: Case) -> Result:
        want = expected[case.name]
        if isinstance(want, Exception):
            raise want
        done, record, system = runs[case.name]
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
            raise RuntimeError(f"lighteval exited with {done.returncode}:\n{tail}")
        return compare(case, want, _received(record).get(case.name, {}), system)

    results = run_cases(cases, run, [])
    if not only or "refuses_lighteval_few_shot" in only:
        results.append(_refusal(harness))
    return results


def _refusal(harness: Harness) -> Result:
    """``NAME|2``: lighteval would draw its own examples; the bridge says so in one line, exit 2."""
    case = CASE_LIST[0]
    entry = " ".join([str(case.path), "name=refused"])
    done = _lighteval(harness, "refused|2", "prompt_style_lighteval.tasks", {"PROMPT_STYLE_LIGHTEVAL_TASKS": entry})
    errors = [line for line in done.stderr.splitlines() if line.startswith("prompt-style: error:")]
    result = Result("refuses_lighteval_few_shot")
    if done.returncode == 2 and len(errors) == 1 and "refused|0" in errors[0] and "Traceback" not in done.stderr:
        result.compared = 1
    else:
        result.error = f"exit {done.returncode}, stderr ends: {done.stderr.strip().splitlines()[-3:]}"
    print(f"{result.case:<34} {result.compared:>4} compared  {'identical' if result.ok else 'FAILED'}", flush=True)
    if result.error:
        print("    " + result.error, flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__.split("\n\n")[0], HARNESS_VENV)
    args = p.parse_args(argv)
    args.work = args.work or tempfile.mkdtemp(prefix="prompt-style-e2e-lighteval-")
    harness = harness_from_args(args, "contrib/lighteval", HARNESS_VENV)
    harness.env["PROMPT_STYLE_LIGHTEVAL_CACHE"] = str(harness.work / "cache")
    print(f"lighteval end to end in {harness.work} with {harness.python}", flush=True)
    print(harness.run([str(harness.python), "-m", "prompt_style_lighteval.workarounds"]).strip(), flush=True)
    results = run_all(harness, args.case)
    if not args.case and not args.no_pytest:
        results.append(run_pytest(harness, "contrib/lighteval/tests"))
    return finish("lighteval", results, args.json)


if __name__ == "__main__":
    sys.exit(main())
