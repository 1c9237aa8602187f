"""The OpenCompass bridge's overhead over ``prompt-style render``, same records, same run.

    uv run python bench/opencompass_bridge_bench.py

It runs in a Python with OpenCompass 0.5.4 and the bridge installed (``--python``,
default the OpenCompass venv of ``tools/harnesses/run.py --harness opencompass``,
``/tmp/prompt-style-harness-venvs/opencompass``; it re-runs itself there). For each
workload it writes the records and times, in one process, rotating the order,
best of ``--rounds``:

* **command**: ``prompt-style render TASK --format jsonl`` with the same options,
  run in this process (``prompt_style.cli.main``), its output discarded;
* **render**: the rendering alone, what that command does before writing:
  ``load_task(task, **options)``, then every record rendered, one after the
  other (``for prompt in task.render()``);
* **bridge**: what OpenCompass's process does with an exported render-route
  config, OpenCompass's own work excluded: ``PromptStyleDataset(...)`` (the
  task loaded and rendered, the ``datasets.Dataset`` of indices and targets,
  OpenCompass's ``DatasetReader``), ``PromptStyleTemplate(...)``, and the
  template's ``generate_item`` (generation) or ``generate_label_prompt_item``
  (perplexity, every label) for every record, called with the row OpenCompass
  would pass. The bridge's per-process caches are emptied before each run.

The prompts the template hands OpenCompass must equal the rendered ones
(text prompts; the dialogue route's PromptList items are checked against the
rendered dialogue's), or the script exits 1. Times are CPU time of the process
(the machine's cores are shared); the ratio is taken within each round, and its
median and range are printed. The target: bridge / render <= 1.2; the ratio to
the command (rendering and writing JSON Lines) is information.
The plain route runs no prompt-style code in OpenCompass (nothing to time).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENVS = Path(os.environ.get("PROMPT_STYLE_HARNESS_VENVS", "/tmp/prompt-style-harness-venvs"))
DEFAULT_PYTHON = DEFAULT_VENVS / "opencompass" / "bin" / "python"
TARGET = 1.2

VARIANTS = ["plain", "with {x} braces", "Ünïcödé 中文", "  padded  ", "two\nlines", "a </E> in data"]
SUBJECT = "college biology"

QUESTION = "Question: {input}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer: "
OC_TASK = {
    "abbr": "bench_oc_5shot",
    "reader_cfg": {"input_columns": ["input", "A", "B", "C", "D"], "output_column": "target", "train_split": "dev"},
    "infer_cfg": {
        "ice_template": {
            "type": "PromptTemplate",
            "template": {"round": [{"role": "HUMAN", "prompt": QUESTION}, {"role": "BOT", "prompt": "{target}\n"}]},
        },
        "prompt_template": {
            "type": "PromptTemplate",
            "template": {
                "begin": [
                    {"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": f"Questions about {SUBJECT}."},
                    "</E>",
                ],
                "round": [{"role": "HUMAN", "prompt": QUESTION}],
            },
            "ice_token": "</E>",
        },
        "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
        "inferencer": {"type": "GenInferencer"},
    },
}
MMLU_TASK = {
    "task": "bench_mmlu_5shot",
    "fewshot_split": "dev",
    "description": f"The following are multiple choice questions (with answers) about {SUBJECT}.\n\n",
    "doc_to_text": "{{question.strip()}}",
    "doc_to_choice": "choices",
    "doc_to_target": "answer",
    "template": "mcq::mmlu",
    "num_fewshot": 5,
    "retriever": "first_n",
}
QA_TASK = {
    "task": "bench_qa_3shot",
    "fewshot_split": "dev",
    "doc_to_text": "Question: {{question}}\nAnswer:",
    "doc_to_target": "{{answer}}",
    "output_type": "generate_until",
    "until": ["\n\n"],
    "num_fewshot": 3,
    "retriever": {"name": "random", "seed": 1},
}
META = {
    "round": [
        {"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
        {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True},
    ],
    "reserved_roles": [{"role": "SYSTEM", "begin": "<|im_start|>system\n", "end": "<|im_end|>\n"}],
}


def oc_record(i: int) -> dict[str, str]:
    v = VARIANTS[i % len(VARIANTS)]
    return {
        "input": f"Question {i}: which option is right? ({v})",
        "A": f"option a{i}",
        "B": f"option b{i} {v}",
        "C": f"option c{i}",
        "D": f"option d{i}",
        "target": "ABCD"[i % 4],
    }


def mmlu_record(i: int) -> dict[str, Any]:
    v = VARIANTS[i % len(VARIANTS)]
    return {"question": f" Question {i} ({v})? ", "choices": [f"a{i}", f"b{i} {v}", f"c{i}", f"d{i}"], "answer": i % 4}


def qa_record(i: int) -> dict[str, str]:
    return {"question": f"What is {i} plus one? ({VARIANTS[i % len(VARIANTS)]})", "answer": str(i + 1)}


WORKLOADS: dict[str, tuple[dict[str, Any], Callable[[int], dict[str, Any]], dict[str, Any], str]] = {
    # name: (task file, record maker, load options besides data, the template's prompts)
    "MMLU 5-shot, lm-eval layout (mcq::mmlu), perplexity": (MMLU_TASK, mmlu_record, {}, "text"),
    "generation 3-shot, random retriever, ChatML (baked)": (QA_TASK, qa_record, {"meta": "chatml"}, "text"),
    "OpenCompass MMLU 5-shot, its meta template (dialogue)": (OC_TASK, oc_record, {"meta": "META"}, "dialogue"),
}


def write(work: Path, name: str, n: int) -> tuple[Path, dict[str, Any], str]:
    import yaml

    task, make, options, kind = WORKLOADS[name]
    folder = work / str(list(WORKLOADS).index(name))
    folder.mkdir()
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False, allow_unicode=True), encoding="utf-8")
    for split, records in (("dev", [make(10_000_000 + i) for i in range(5)]), ("test", map(make, range(n)))):
        with (folder / f"{split}.jsonl").open("w", encoding="utf-8") as handle:
            for item in records:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    options = dict(options, data={"dev": str(folder / "dev.jsonl"), "test": str(folder / "test.jsonl")})
    if options.get("meta") == "META":
        (folder / "meta.yaml").write_text(yaml.safe_dump(META, sort_keys=False), encoding="utf-8")
        options["meta"] = str(folder / "meta.yaml")
    return path, options, kind


def render(path: Path, options: dict[str, Any], keep: bool = False) -> list[Any]:
    """``prompt-style render``'s work: every record rendered, one after the other
    (the command writes each and keeps none)."""
    import prompt_style

    rendered = prompt_style.load_task(path, **options).render()
    if keep:
        return list(rendered)
    for _ in rendered:
        pass
    return []


class _Sink:
    """Standard output that keeps nothing (the command's output is not the point)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def command(path: Path, options: dict[str, Any]) -> None:
    """``prompt-style render TASK --format jsonl [options]``, in this process, output discarded."""
    from contextlib import redirect_stdout

    from prompt_style.cli import main

    args = ["render", str(path), "--format", "jsonl"]
    for split, file in options["data"].items():
        args += ["--data", f"{split}={file}"]
    if options.get("meta"):
        args += ["--meta", options["meta"]]
    with redirect_stdout(_Sink()):  # type: ignore[type-var]
        if main(args) != 0:
            raise SystemExit(f"prompt-style render {path} failed")


def bridge(path: Path, options: dict[str, Any], kind: str, keep: bool = False) -> list[Any]:
    from prompt_style_opencompass import runtime

    runtime._TASKS.clear()  # as in a fresh OpenCompass process
    runtime._PROMPTS.clear()
    reader_cfg = {"input_columns": [runtime.INDEX], "output_column": "target"}
    dataset = runtime.PromptStyleDataset(reader_cfg=reader_cfg, task=str(path), load_options=options, prompts=kind)
    template = runtime.PromptStyleTemplate(task=str(path), load_options=options, prompts=kind)
    rows = [{runtime.INDEX: i} for i in range(len(dataset.test))]  # the rows OpenCompass hands the template
    kept: list[Any] = []
    if isinstance(template.template, dict):
        # Perplexity: as PPLInferencer asks, label after label, one label's prompts alive at a time.
        for label in template.template:
            batch = [template.generate_label_prompt_item(row, "", label) for row in rows]
            if keep:
                kept += batch
        return kept
    batch = [template.generate_item(row) for row in rows]
    return batch if keep else []


def expected(rendered: list[Any], kind: str) -> list[Any]:
    """What the template must hand OpenCompass, from the rendered records."""
    if kind == "dialogue":
        from prompt_style_opencompass.dialogue import MetaRoles, prompt_items

        roles = MetaRoles.of(META)
        return [prompt_items(r.dialogue, roles) for r in rendered]
    first = rendered[0]
    if first.continuations:
        width = len(first.continuations)
        return [r.text + r.continuations[j] for j in range(width) for r in rendered]
    return [r.text for r in rendered]


def run(n: int, rounds: int) -> int:
    import statistics

    import prompt_style

    prompt_style.default_plugin_manager()  # once per process, as in OpenCompass's
    failed = False
    print(f"OpenCompass bridge overhead: {n:,} records per workload, {rounds} rounds (CPU time, rotating order)")
    print(f"{'workload':<56} {'render':>8} {'command':>8} {'bridge':>8}  {'bridge/render (range)':<22} {'/command':>8}")
    with tempfile.TemporaryDirectory(prefix="ps-oc-bridge-bench-") as tmp:
        for name in WORKLOADS:
            path, options, kind = write(Path(tmp), name, n)
            got = [list(map(_plain, bridge(path, options, kind, keep=True)))]  # warm-up, and the check
            want = expected(render(path, options, keep=True), kind)
            if got[0] != want:
                print(f"{name}: the bridge hands OpenCompass other prompts than prompt-style renders", file=sys.stderr)
                return 1
            command(path, options)  # warm-up
            runs = {
                "render": partial(render, path, options),
                "command": partial(command, path, options),
                "bridge": partial(bridge, path, options, kind),
            }
            times: dict[str, list[float]] = {which: [] for which in runs}
            order = list(runs)
            for r in range(rounds):
                for which in order[r % 3 :] + order[: r % 3]:
                    gc.collect()
                    started = time.process_time()  # the two cores are shared: CPU time of this process
                    runs[which]()
                    times[which].append(time.process_time() - started)
            ratios = [b / r for b, r in zip(times["bridge"], times["render"])]
            to_command = [b / c for b, c in zip(times["bridge"], times["command"])]
            ratio = statistics.median(ratios)
            ok = ratio <= TARGET
            failed |= not ok
            shown = f"{ratio:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) {'PASS' if ok else 'FAIL'}"
            medians = {which: statistics.median(values) for which, values in times.items()}
            print(
                f"{name:<56} {medians['render'] * 1e3:6.0f}ms {medians['command'] * 1e3:6.0f}ms "
                f"{medians['bridge'] * 1e3:6.0f}ms  {shown:<22} {statistics.median(to_command):7.2f}x"
            )
    print(f"target: bridge / render <= {TARGET}x ({'met on every workload' if not failed else 'missed on some'})")
    return 0


def _plain(prompt: Any) -> Any:
    return prompt if isinstance(prompt, str) else [dict(i) if isinstance(i, dict) else i for i in prompt]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=14_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--python", type=Path, default=DEFAULT_PYTHON, help="a Python with OpenCompass and the bridge")
    args = parser.parse_args(argv)
    try:
        import prompt_style_opencompass.runtime  # noqa: F401
    except ImportError:
        if not args.python.exists():
            print(
                "needs OpenCompass 0.5.4 and the bridge: run tools/harnesses/run.py --harness opencompass, or --python"
            )
            return 1
        command = [str(args.python), __file__, "--records", str(args.records), "--rounds", str(args.rounds)]
        return subprocess.run(command).returncode
    return run(args.records, args.rounds)


if __name__ == "__main__":
    raise SystemExit(main())
