"""The lm-evaluation-harness bridge's overhead over ``prompt-style render``, the harness's own work excluded.

    uv run python bench/lmeval_bridge_bench.py [--records N] [--rounds N] [--lm-eval-python PATH]

Workloads (records written as JSON Lines, as ``prompt-style export lm-eval`` copies them):

``mmlu``    the 57 MMLU subject tasks of bench/render_bench.py, 5-shot from each subject's dev
            split (examples shared by every record: the compiled fast path);
``random``  the same records with a per-record retriever (``random``, 3 of the 5 dev records,
            drawn per record: the general path, and the reason the bridge is a task class).

Rows, each giving every record's context, continuations and gold answer:

``render``        ``prompt-style render`` without the printing: per task ``load_task(file,
                  data=...)``, then ``Task.render()``; with ``--meta messages`` for the chat rows,
                  each prompt's ``messages`` read (the fast path builds them when first read).
``bridge``        the bridge's own work, the target's row: per task ``Prompts(file, options)``
                  (the task loaded, the evaluated split read into lm-eval's documents), then
                  per document ``Prompts.request`` (``fewshot_context``: the record rendered,
                  its context) and ``Prompts.gold`` (``doc_to_target``/``doc_to_choice`` in
                  ``process_results``); for chat, the settings of ``--apply_chat_template``
                  with a chat template that hands the messages back (the model's template
                  is the harness's work).
``+ arguments``   the same with ``Prompts.arguments`` too (``construct_requests``: the
                  ``(context, continuation)`` tuples of lm-eval's requests, which lm-eval's
                  own ``construct_requests`` builds alike for any task), kept alive as
                  lm-eval keeps them: for information.
``task class``    the calls lm-eval makes on the real ``PromptStyleTask``
                  (``fewshot_context``, ``construct_requests``, ``doc_to_target``,
                  ``doc_to_choice``), lm-eval's ``ConfigurableTask.__init__`` and ``Instance``
                  objects included: for information, only when lm-eval is importable.
                  Without it the script re-runs itself with the Python of an lm-eval venv
                  (``--lm-eval-python``; default: tools/harnesses' venv, then /tmp/venvs/lmeval),
                  this checkout first on its path, and says so when there is none.

Method (bench/README.md): one untimed warm-up, then ``--rounds`` rounds; in each round every
row runs once, in a rotating order, after ``gc.collect()``, timed in CPU time of this process
(``time.process_time``: the machine's two cores are shared); each ratio is taken within a round
and reported as the median over rounds (with the range). Every row's contexts, continuations
and targets are compared with the ``render`` row's, record by record, every round; a difference
stops the benchmark (exit 1). Target: bridge / render <= 1.2x. Exits 0 whether or not the
target is met (a report: a missed target shows as FAIL).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from prompt_style_lm_eval.runtime import Prompts, RunSettings  # noqa: E402
from render_bench import MmluWorkspace  # noqa: E402

import prompt_style  # noqa: E402

TARGET = 1.2
ROUNDS = 7
N_RECORDS = 14_000
VENVS = (
    Path(os.environ.get("PROMPT_STYLE_HARNESS_VENVS", "/tmp/prompt-style-harness-venvs")) / "lm-eval",
    Path("/tmp/venvs/lmeval"),
)
RANDOM_TASK = """\
task: mmlu_{subject}_random
data:
  test: {subject}_test.jsonl
  dev: {subject}_dev.jsonl
fewshot_split: dev
description: {description}
doc_to_text: "{{{{question.strip()}}}}"
doc_to_choice: choices
doc_to_target: answer
template: mcq::mmlu
num_fewshot: 3
retriever: {{name: random, seed: 11}}
"""

Output = list[tuple[Any, tuple[str, ...], Any]]


def random_tasks(ws: MmluWorkspace) -> dict[str, Path]:
    import json

    from render_bench import description

    tasks = {}
    for subject in ws.subjects:
        path = ws.root / f"mmlu_{subject}_random.yaml"
        path.write_text(
            RANDOM_TASK.format(subject=subject, description=json.dumps(description(subject))), encoding="utf-8"
        )
        tasks[subject] = path
    return tasks


def chat_template(messages: list[dict[str, Any]], add_generation_prompt: bool = True) -> Any:
    """The model's chat template is the harness's work: this one hands the messages back."""
    return messages


def render_row(ws: MmluWorkspace, tasks: dict[str, Path], chat: bool) -> list[Any]:
    out: list[Any] = []
    meta = "messages" if chat else "plain"
    for subject in ws.subjects:
        data = {"test": ws.tests[subject], "dev": ws.devs[subject]}
        task = prompt_style.load_task(tasks[subject], data=data, meta=meta)
        if chat:  # the row gives each record's messages: the fast path builds them when read
            for p in task.render():
                p.messages  # noqa: B018
                out.append(p)
        else:
            out.extend(task.render())
    return out


def bridge_row(
    ws: MmluWorkspace, tasks: dict[str, Path], chat: bool, with_arguments: bool = True
) -> tuple[list[Any], list[Any], list[Prompts]]:
    """What lm-eval calls per record: ``fewshot_context`` (:meth:`Prompts.request`),
    ``construct_requests`` (:meth:`Prompts.arguments`, in the ``+ arguments`` row) and
    ``process_results``'s ``doc_to_target``/``doc_to_choice`` (:meth:`Prompts.gold`)."""
    contexts: list[Any] = []
    targets: list[Any] = []
    made = []
    for subject in ws.subjects:
        prompts = Prompts(tasks[subject], {"data": {"test": str(ws.tests[subject]), "dev": str(ws.devs[subject])}})
        made.append(prompts)
        settings = RunSettings(num_fewshot=prompts.default_shots, apply_chat_template=chat, seed=1234)
        template = chat_template if chat else None
        request, arguments, gold = prompts.request, prompts.arguments, prompts.gold
        for doc in prompts.docs():
            ctx = request(doc, settings, template)
            contexts.append(arguments(doc, ctx, "multiple_choice") if with_arguments else ctx)
            targets.append(gold(doc)[0])
    return contexts, targets, made


def task_class_row(ws: MmluWorkspace, tasks: dict[str, Path], chat: bool) -> tuple[list[Any], list[Any]]:
    from prompt_style_lm_eval.task import PromptStyleTask

    out: list[Any] = []
    targets: list[Any] = []
    for subject in ws.subjects:
        config = {
            "task": f"bench_{subject}",
            "output_type": "multiple_choice",
            "test_split": "test",
            "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": str(ws.tests[subject]), "dev": str(ws.devs[subject])}},
            "metadata": {
                "config_source": str(ws.root / f"bench_{subject}.yaml"),
                "prompt_style_export": {"task": str(tasks[subject]), "options": {}},
            },
        }
        task = PromptStyleTask(config=config)
        task.set_fewshot_seed(1234)
        shots = task.config.num_fewshot or 0
        template = chat_template if chat else None
        for index, doc in enumerate(task.eval_docs):
            ctx = task.fewshot_context(
                doc, shots, apply_chat_template=chat, fewshot_as_multiturn=chat, chat_template=template
            )
            requests = task.construct_requests(doc, ctx, metadata=(config["task"], index, 1))
            target = task.doc_to_target(doc)
            task.doc_to_choice(doc)
            out.append([r.arguments for r in requests])
            targets.append(target)
    return out, targets


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    # What is alive before a row (the benchmark's expected outputs, lm-eval's and torch's
    # modules) is frozen out of the collector while the row runs: a full collection the
    # row's own objects set off then walks those objects, not the whole process, whose
    # size depends on what else the benchmark imported and keeps.
    gc.collect()
    gc.freeze()
    try:
        start = time.process_time()
        made = fn()
        return time.process_time() - start, made
    finally:
        gc.unfreeze()


def _comparable(name: str, made: Any, chat: bool) -> Output:
    """Each row's records as ``(context, continuations, target)``, after the clock stopped."""
    if name == "render":
        return [(p.messages if chat else p.text, p.continuations, p.target) for p in made]
    requests, targets, *loaded = made
    if name == "bridge":  # the continuations are the ones the kept prompts hold
        conts = [
            p.render(doc, RunSettings(p.default_shots, apply_chat_template=chat, seed=1234)).continuations
            for p in loaded[0]
            for doc in p.docs()
        ]
        return [(ctx, c, t) for ctx, c, t in zip(requests, conts, targets)]
    return [(args[0][0], tuple(a[1] for a in args), t) for args, t in zip(requests, targets)]


def _check(name: str, made: Output, expected: Output) -> None:
    if made == expected:
        return
    if len(made) != len(expected):
        raise AssertionError(f"{name} gave {len(made)} records, render {len(expected)}")
    first = next(i for i, (a, b) in enumerate(zip(made, expected)) if a != b)
    raise AssertionError(f"{name} differs from render at record {first}:\n{made[first]!r}\n{expected[first]!r}")


def run_workload(ws: MmluWorkspace, tasks: dict[str, Path], chat: bool, rounds: int, with_class: bool) -> dict:
    rows: dict[str, Callable[[], Any]] = {
        "render": lambda: render_row(ws, tasks, chat),
        "bridge": lambda: bridge_row(ws, tasks, chat, with_arguments=False),
        "+ arguments": lambda: bridge_row(ws, tasks, chat),
    }
    if with_class:
        rows["task class"] = lambda: task_class_row(ws, tasks, chat)
    expected = _comparable("render", rows["render"](), chat)  # warm-up
    for name, fn in rows.items():
        _check(name, _comparable(name, fn(), chat), expected)
    times: dict[str, list[float]] = {name: [] for name in rows}
    names = list(rows)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            seconds, made = _timed(rows[name])
            _check(name, _comparable(name, made, chat), expected)
            del made
            times[name].append(seconds)
    ratios = {name: [t / b for t, b in zip(times[name], times["render"])] for name in rows if name != "render"}
    return {"records": len(expected), "times": times, "ratios": ratios}


def _lm_eval_python(given: Path | None) -> Path | None:
    candidates = [given] if given else [venv / "bin" / "python" for venv in VENVS]
    for python in candidates:
        if python is None or not python.is_file():
            continue
        probe = subprocess.run([str(python), "-c", "import lm_eval"], capture_output=True)
        if probe.returncode == 0:
            return python
    return None


def _reexec(python: Path, argv: list[str]) -> int:
    """Run this benchmark with lm-eval's Python, this checkout first on its path."""
    paths = [ROOT / "core", ROOT / "contrib" / "lm-eval" / "src", *sorted((ROOT / "plugins").glob("*/src"))]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in paths), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PROMPT_STYLE_BENCH_CHILD"] = "1"
    return subprocess.run([str(python), str(Path(__file__).resolve()), *argv], env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=N_RECORDS, help=f"records in all (default {N_RECORDS:,})")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"timed rounds (default {ROUNDS})")
    parser.add_argument("--lm-eval-python", type=Path, help="python of a venv with lm-eval 0.4.13 (task-class row)")
    parser.add_argument("--no-lm-eval", action="store_true", help="no task-class row, no re-run with lm-eval")
    args = parser.parse_args(argv)

    with_class = importlib.util.find_spec("lm_eval") is not None and not args.no_lm_eval
    if not with_class and not args.no_lm_eval and not os.environ.get("PROMPT_STYLE_BENCH_CHILD"):
        python = _lm_eval_python(args.lm_eval_python)
        if python is not None:
            print(f"(re-running with lm-eval's Python: {python})", flush=True)
            return _reexec(python, argv)
        print("lm-eval is not installed here and no lm-eval venv was found: the task-class row is skipped")
    print(f"lm-eval bridge overhead: Python {sys.version.split()[0]} ({sys.executable}), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="lmeval-bridge-bench-") as tmp:
        ws = MmluWorkspace(Path(tmp), n=args.records)
        workloads = {"mmlu 5-shot (shared examples)": ws.tasks, "random 3-shot (per record)": random_tasks(ws)}
        print(f"{ws.n:,} records, {len(ws.subjects)} tasks, {args.rounds} rounds; ratio = row / render, median (range)")
        for label, tasks in workloads.items():
            for chat in (False, True):
                result = run_workload(ws, tasks, chat, args.rounds, with_class)
                times = result["times"]
                base = statistics.median(times["render"])
                print(f"\n{label}, {'chat (--apply_chat_template)' if chat else 'plain'}:")
                print(f"  {'render':<12} {base * 1000:8.1f} ms  ({result['records'] / base:,.0f} records/s)")
                for name, ratios in result["ratios"].items():
                    median = statistics.median(ratios)
                    verdict = f"target <= {TARGET}x: {'PASS' if median <= TARGET else 'FAIL'}"
                    print(
                        f"  {name:<12} {statistics.median(times[name]) * 1000:8.1f} ms  "
                        f"{median:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
                        + (f"  {verdict}" if name == "bridge" else "")
                    )
    print("\nall rows gave the same contexts, continuations and targets as render, record by record")
    return 0


if __name__ == "__main__":
    sys.exit(main())
