"""The harness bridges' overhead over ``prompt-style render``, the harness's own work excluded.

    uv run python bench/bridges_bench.py        # from the repository root; about 15 minutes

For each bridge whose harness venv exists (``/tmp/venvs/inspect``,
``/tmp/venvs/lighteval``; see tools/bridges/README.md), a venv layered over it
with this checkout's packages is made once (tools/bridges/_e2e.py), and
``bench/bridges_side.py`` runs there: MMLU-shaped records (one task, 5-shot,
the ``mcq::mmlu`` style) as plain text and as chat messages. Per round, in
rotating order, in process CPU time: ``render`` (``list(task.render())``),
``bridge`` (all the bridge does to hand the harness those records, the
harness's objects included) and ``own`` (the same with the harness's own
constructors, inspect_ai's ``Sample`` and lighteval's ``Doc``, replaced by a
stand-in that makes nothing), and for lighteval ``loop`` (its own loop over the
dataset's rows calling a formatter that does nothing: what lighteval does for
any task). The figure is ``(own - loop) / render`` per round, median over
rounds (range shown); target **<= 1.2x**. Shown for reference: the harness's
objects (``bridge - own``), the figure with lighteval's row loop left in
``own``, and against the render plus each prompt's JSON line (what
``prompt-style render --format jsonl`` does). The bridge's real outputs are
compared with the render every round.

Exits 0 whether or not the target is met (a report, not a test), 1 when a
bridge cannot run or its prompts differ from the render.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "bridges"))

from _e2e import overlay_venv  # noqa: E402

TARGET = 1.2
HARNESSES = {
    "inspect": ("/tmp/venvs/inspect", "contrib/inspect"),
    "lighteval": ("/tmp/venvs/lighteval", "contrib/lighteval"),
}
VENVS = Path(tempfile.gettempdir()) / "prompt-style-bench-venvs"

TASK = """task: mmlu_anatomy
data: {test: test.jsonl, dev: dev.jsonl}
fewshot_split: dev
description: "The following are multiple choice questions (with answers) about anatomy.\\n\\n"
doc_to_text: "{{question.strip()}}"
doc_to_choice: choices
doc_to_target: answer
template: mcq::mmlu
num_fewshot: 5
retriever: first_n
"""


def workload(folder: Path, records: int) -> Path:
    """Deterministic MMLU-shaped records: braces, non-ASCII text, surrounding whitespace."""
    rnd = random.Random(13)
    words = ["bone", "muscle", "nerve", "{x}", "gland", "été", "cell", "tissue", "organ", "  "]
    with open(folder / "test.jsonl", "w", encoding="utf-8") as out:
        for i in range(records):
            question = " ".join(rnd.choice(words) for _ in range(rnd.randint(8, 30)))
            choices = [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 6))) for _ in range(4)]
            line = {
                "question": f" Q{i}: {question}? ",
                "subject": "anatomy",
                "choices": choices,
                "answer": rnd.randint(0, 3),
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(folder / "dev.jsonl", "w", encoding="utf-8") as out:
        for i in range(5):
            line = {"question": f"Example {i}?", "subject": "anatomy", "choices": ["a", "b", "c", "d"], "answer": i % 4}
            out.write(json.dumps(line) + "\n")
    (folder / "task.yaml").write_text(TASK, encoding="utf-8")
    return folder / "task.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000, help="records of the task (default 10,000)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", choices=sorted(HARNESSES), action="append", help="one bridge (repeatable)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="prompt-style-bridges-bench-"))
    task = workload(folder, args.records)
    print(f"bridges benchmark: {args.records:,} records, 5-shot, {args.rounds} rounds; {folder}")
    rows: list[tuple[str, str, dict[str, float], list[float], float, float]] = []
    failed = False
    for name in args.only or sorted(HARNESSES):
        venv, bridge = HARNESSES[name]
        if not (Path(venv) / "bin" / "python").exists():
            print(f"{name}: skipped, no harness venv at {venv}")
            continue
        python = overlay_venv(Path(venv), VENVS / name, bridge)
        for meta in ("plain", "messages"):
            side = [str(python), str(ROOT / "bench" / "bridges_side.py"), name, "--task", str(task)]
            done = subprocess.run(
                [*side, "--rounds", str(args.rounds), "--meta", meta],
                capture_output=True,
                text=True,
                cwd=str(folder),
                env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HOME": str(folder)},
            )
            if done.returncode != 0:
                print(f"{name} ({meta}): FAILED\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
                failed = True
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            rounds = result["rounds"]
            medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            net = [(r["own"] - r["loop"]) / r["render"] for r in rounds]
            raw = statistics.median(r["own"] / r["render"] for r in rounds)
            jsonl = statistics.median((r["own"] - r["loop"]) / r["render_jsonl"] for r in rounds)
            rows.append((name, meta, medians, net, raw, jsonl))
    count = args.records
    print()
    print(
        "| bridge | prompt | render | render + JSON line | bridge's own work | harness's objects | harness's row loop "
        "| own / render | (own, row loop in) / render | own / (render + JSON line) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, meta, medians, net, raw, jsonl in rows:
        us = {k: v / count * 1e6 for k, v in medians.items()}
        figure = statistics.median(net)
        verdict = "PASS" if figure <= TARGET else "FAIL"
        print(
            f"| {name} | {meta} | {us['render']:.1f} µs | {us['render_jsonl']:.1f} µs | "
            f"{us['own'] - us['loop']:.1f} µs | {us['bridge'] - us['own']:.1f} µs | {us['loop']:.2f} µs | "
            f"**{figure:.2f}x** ({min(net):.2f}–{max(net):.2f}) {verdict} | {raw:.2f}x | {jsonl:.2f}x |"
        )
    print(
        f"\nprocess CPU time per record, medians over {args.rounds} rounds (range over rounds); "
        f"target own / render <= {TARGET}x"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
