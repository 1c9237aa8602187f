"""OpenCompass prompts: prompt-style against OpenCompass itself, same run, same outputs.

    uv run python bench/opencompass_bench.py --opencompass-python /tmp/venvs/opencompass/bin/python

A 5-shot dialogue template (OpenCompass's MMLU layout: dialogue ice_template,
prompt_template with ``begin: '</E>'``, FixKRetriever [0..4]) through a
ChatML-like meta template (InternLM2's, from OpenCompass's model configs), on
14,000 records. prompt-style renders them through its public API
(``load_task(task.yaml, meta=meta.yaml, data=...)``, then ``task.render()``),
timing everything from the task file and JSON Lines on disk; OpenCompass
renders them in a subprocess with its own PromptTemplate + FixKRetriever +
LMTemplateParser (bench/opencompass_side.py), timed from records already in a
``datasets.Dataset``. The outputs must be byte-identical, or the script exits 1.
The target is prompt-style at least 20x faster.

Without ``--opencompass-python`` (or when that Python cannot import
OpenCompass) only prompt-style's figures are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TARGET = 20.0

HINT = "There is a single choice question about college biology. Answer the question by replying A, B, C or D."
QUESTION = f"{HINT}\nQuestion: {{input}}\nA. {{A}}\nB. {{B}}\nC. {{C}}\nD. {{D}}\nAnswer: "
TASK = {
    "abbr": "bench_mmlu_5shot",
    "reader_cfg": {"input_columns": ["input", "A", "B", "C", "D"], "output_column": "target", "train_split": "dev"},
    "infer_cfg": {
        "ice_template": {
            "type": "PromptTemplate",
            "template": {"round": [{"role": "HUMAN", "prompt": QUESTION}, {"role": "BOT", "prompt": "{target}\n"}]},
        },
        "prompt_template": {
            "type": "PromptTemplate",
            "template": {"begin": "</E>", "round": [{"role": "HUMAN", "prompt": QUESTION}]},
            "ice_token": "</E>",
        },
        "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
        "inferencer": {"type": "GenInferencer"},
    },
}
META = {
    "round": [
        {"role": "SYSTEM", "begin": "<|im_start|>system\n", "end": "<|im_end|>\n"},
        {"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
        {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True},
    ]
}
VARIANTS = ["plain", "with {x} braces", "Ünïcödé 中文", "  padded  ", "two\nlines", "a </E> in data"]


def record(i: int) -> dict[str, str]:
    v = VARIANTS[i % len(VARIANTS)]
    return {
        "input": f"Question {i}: which option is right? ({v})",
        "A": f"option a{i}",
        "B": f"option b{i} {v}",
        "C": f"option c{i}",
        "D": f"option d{i}",
        "target": "ABCD"[i % 4],
    }


def write(work: Path, n: int) -> None:
    (work / "task.yaml").write_text(yaml.safe_dump(TASK, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (work / "meta.yaml").write_text(yaml.safe_dump(META, sort_keys=False), encoding="utf-8")
    for name, records in (
        ("dev.jsonl", [record(10_000_000 + i) for i in range(5)]),
        ("test.jsonl", map(record, range(n))),
    ):
        with (work / name).open("w", encoding="utf-8") as handle:
            for item in records:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")


def ours(work: Path) -> list[str]:
    import prompt_style

    task = prompt_style.load_task(
        work / "task.yaml",
        meta=str(work / "meta.yaml"),
        data={"dev": work / "dev.jsonl", "test": work / "test.jsonl"},
    )
    return [r.text for r in task.render()]


def time_ours(work: Path, repeat: int) -> tuple[list[float], list[str]]:
    import prompt_style

    prompt_style.default_plugin_manager()  # created once per process, as in a harness
    ours(work)  # warm-up
    times, texts = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        texts = ours(work)
        times.append(time.perf_counter() - started)
    return times, texts


def run(n: int = 14_000, repeat: int = 5, oc_repeat: int = 3, opencompass_python: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="ps-oc-bench-") as tmp:
        work = Path(tmp)
        write(work, n)
        times, texts = time_ours(work, repeat)
        result = {"n": n, "ours": times}
        print(f"OpenCompass prompts: {n:,} records, 5-shot dialogue template, ChatML-like meta template")
        print(
            f"  prompt-style  best {min(times):.3f} s  median {statistics.median(times):.3f} s  "
            f"({min(times) / n * 1e6:.1f} µs/record, best of {repeat})"
        )
        if not opencompass_python:
            print("  OpenCompass   skipped (give --opencompass-python PATH)")
            return result
        side = ROOT / "bench" / "opencompass_side.py"
        done = subprocess.run(
            [opencompass_python, str(side), str(work), str(oc_repeat)], capture_output=True, text=True
        )
        if done.returncode != 0:
            print(f"  OpenCompass   could not run: {done.stderr.strip().splitlines()[-1:]}")
            return result
        theirs = json.loads((work / "opencompass.json").read_text(encoding="utf-8"))
        info = json.loads((work / "opencompass_times.json").read_text(encoding="utf-8"))
        if theirs != texts:
            bad = next(i for i, (a, b) in enumerate(zip(texts, theirs)) if a != b) if len(theirs) == len(texts) else -1
            raise SystemExit(
                f"outputs differ from OpenCompass (first at record {bad}); the timing would be meaningless"
            )
        oc = info["times"]
        ratio = min(oc) / min(times)
        result.update(opencompass=oc, ratio=ratio, version=info["version"])
        print(
            f"  OpenCompass {info['version']}  best {min(oc):.3f} s  median {statistics.median(oc):.3f} s  "
            f"({min(oc) / n * 1e6:.1f} µs/record, best of {oc_repeat})"
        )
        print(f"  outputs identical: {n:,} of {n:,}")
        print(
            f"  prompt-style is {ratio:.1f}x faster (target >= {TARGET:.0f}x): {'PASS' if ratio >= TARGET else 'FAIL'}"
        )
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opencompass-python", metavar="PATH", help="a Python with OpenCompass 0.5.4 installed")
    parser.add_argument("--records", type=int, default=14_000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of prompt-style (best counts)")
    parser.add_argument("--opencompass-repeat", type=int, default=3, help="timed runs of OpenCompass (best counts)")
    args = parser.parse_args(argv)
    run(args.records, args.repeat, args.opencompass_repeat, args.opencompass_python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
