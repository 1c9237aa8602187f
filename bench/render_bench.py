"""Rendering throughput: prompt-style against hand-written f-strings and lm-evaluation-harness.

The workload is MMLU as lm-evaluation-harness evaluates it: 57 per-subject tasks,
14,000 test records in all (split between the subjects in the proportions of the
real MMLU test set), 5-shot with the first five records of each subject's ``dev``
split, lm-eval's layout (the subject's description, ``question.strip()``, ``A.``-``D.``
choices, ``Answer:``). The records are written as JSON Lines to a temporary folder,
one test and one dev file per subject, with a prompt-style task file per subject.

Renderers, each producing the 14,000 prompts in the same order:

``prompt-style (JSONL)``    ``load_task(task_file)`` then ``[r.text for r in task.render()]``
                            for the 57 tasks: the public API end to end, task files read,
                            JSON Lines parsed (the headline).
``prompt-style (render)``   the same with the tasks loaded beforehand (untimed, afresh for
                            each timed run): ``Task.render()`` only (reading the JSON
                            Lines is still timed).
``prompt-style (memory)``   records already in memory: tasks loaded with
                            ``load_task(task_file, data={"test": records})`` beforehand
                            (untimed, afresh for each timed run), then ``Task.render()``.
``prompt-style (memory, TaskRenderer.render)`` the same, rendered by a harness's own loop:
                            ``task.renderer.render(record, index)`` for each record.
``prompt-style (lm-eval task files)`` lm-evaluation-harness's own MMLU task files (its
                            ``_default_template_yaml``, Jinja ``doc_to_text``, and one
                            ``mmlu_<subject>.yaml`` each, as lm-eval ships them) read by
                            prompt-style, end to end: ``load_task(file, data=..., shots=5)``
                            (``--data``/``--shots``), then ``Task.render()``.
``prompt-style (lm-eval task files, render)`` the same with the tasks loaded beforehand
                            (untimed, afresh for each timed run): ``Task.render()`` only.
``f-string (plain)``        a plain hand-written renderer reading the same JSON Lines:
                            ``json.loads`` per line, direct indexing, the five few-shot
                            blocks and the question built with f-strings for every record.
``f-string (memoised)``     the same, with the description and the five few-shot blocks
                            built once per task: per record one f-string after the prefix.
``f-string (memoised, memory)`` the memoised f-string on the records already in memory.
``lm-eval 0.4.13``          lm-evaluation-harness's own ``fewshot_context`` on its own
                            ``mmlu_<subject>`` tasks, in a subprocess with the Python of a
                            throwaway venv (``bench/lmeval_side.py``); skipped, saying so,
                            when that venv is absent.

Method: one untimed warm-up of each, then ``--rounds`` rounds; in each round every
renderer runs once (in a rotating order), timed with ``time.perf_counter`` after a
``gc.collect()``, with no earlier output alive and the allocator primed the same way
before each run (the memory of 14,000 prompts, used and freed). Every ratio is taken **within a round** and reported as the
**median over rounds** (the medians of the times are shown too). The outputs of all
renderers are compared record by record, every round; a difference stops the benchmark
(exit 1), because the timings would compare different work. lm-eval's pass takes about a
minute, so it runs in the first ``--lm-eval-rounds`` rounds only (default 3), after a warm-up
on three documents per task; its contexts are compared after its first round.

Peak traced memory (tracemalloc) of streaming 14,000 and 200,000 records with only a
running checksum shows that rendering a split is constant-memory.

Run: ``uv run python bench/render_bench.py`` (or via ``bench/run.py``).
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import prompt_style

N_RECORDS = 14_000
N_STREAM = 200_000
ROUNDS = 7
LM_EVAL_ROUNDS = 3
SHOTS = 5
SEED = 20240517
LM_EVAL_PYTHON = Path("/tmp/venvs/lmeval/bin/python")
LM_EVAL_TEMPLATE = Path(__file__).resolve().parents[1] / "tests/lm_eval_tasks/mmlu/default/_default_template_yaml"

# Targets (issue: speed of the lm-evaluation-harness template system).
TARGET_LM_EVAL = 2000.0  # at least this many times faster than lm-eval's fewshot_context
TARGET_PLAIN = 1.0  # at most this many times the plain f-string (JSONL)
TARGET_MEMO = 1.3  # at most this many times the memoised f-string (JSONL)
TARGET_MEMORY = 3.0  # records in memory: at most this many times the memoised f-string (memory)
TARGET_RATIO = TARGET_PLAIN  # the headline target, for bench/run.py

# ---------------------------------------------------------------------------
# Data: deterministic MMLU-shaped records, varied by index
# ---------------------------------------------------------------------------

# The 57 MMLU subjects with their test-set sizes (cais/mmlu), which set each subject's
# share of the records.
MMLU_SUBJECTS: dict[str, int] = {
    "abstract_algebra": 100,
    "anatomy": 135,
    "astronomy": 152,
    "business_ethics": 100,
    "clinical_knowledge": 265,
    "college_biology": 144,
    "college_chemistry": 100,
    "college_computer_science": 100,
    "college_mathematics": 100,
    "college_medicine": 173,
    "college_physics": 102,
    "computer_security": 100,
    "conceptual_physics": 235,
    "econometrics": 114,
    "electrical_engineering": 145,
    "elementary_mathematics": 378,
    "formal_logic": 126,
    "global_facts": 100,
    "high_school_biology": 310,
    "high_school_chemistry": 203,
    "high_school_computer_science": 100,
    "high_school_european_history": 165,
    "high_school_geography": 198,
    "high_school_government_and_politics": 193,
    "high_school_macroeconomics": 390,
    "high_school_mathematics": 270,
    "high_school_microeconomics": 238,
    "high_school_physics": 151,
    "high_school_psychology": 545,
    "high_school_statistics": 216,
    "high_school_us_history": 204,
    "high_school_world_history": 237,
    "human_aging": 223,
    "human_sexuality": 131,
    "international_law": 121,
    "jurisprudence": 108,
    "logical_fallacies": 163,
    "machine_learning": 112,
    "management": 103,
    "marketing": 234,
    "medical_genetics": 100,
    "miscellaneous": 783,
    "moral_disputes": 346,
    "moral_scenarios": 895,
    "nutrition": 306,
    "philosophy": 311,
    "prehistory": 324,
    "professional_accounting": 282,
    "professional_law": 1534,
    "professional_medicine": 272,
    "professional_psychology": 612,
    "public_relations": 110,
    "security_studies": 245,
    "sociology": 201,
    "us_foreign_policy": 100,
    "virology": 166,
    "world_religions": 171,
}
SUBJECTS = tuple(MMLU_SUBJECTS)

# Question shapes seen in MMLU: plain text, braces that are not placeholders,
# non-ASCII, leading and trailing whitespace, multi-sentence stems.
QUESTIONS = (
    "What is the value of {a} × {b}?",
    "Let {{x}} denote the number of apples in basket {a}. If {{x}} + {b} = {c}, what is {{x}}?",
    "Which of the following best describes item #{a} in a list of {c} {s} concepts? ",
    "A car accelerates uniformly from rest to {a} m/s in {b} s. What is the magnitude of its acceleration?",
    "In {s}, which statement about case {a} is most accurate, given the evidence presented in study {c}?",
    "  Which of the following is closest to {a}/{b} (question {i})?",
    "Statement 1 | Every group of order {a} is cyclic. Statement 2 | Every subgroup of index {b} is normal. (variant {i})",
    "Which enzyme is inhibited in experiment {i} when substrate concentration rises to {a} mM?\n",
)

CHOICE_SHAPES = (
    ("{a}", "{b}", "{c}", "{d}"),
    ("True, True", "False, False", "True, False", "False, True"),
    ("{a} m/s²", "{b} m/s²", "{c} m/s²", "{d} m/s²"),
    ("Option {i}-α", "Option {i}-β", "Option {i}-γ", "Option {i}-δ"),
    ("It increases by {a}%", "It decreases by {b}%", "It stays the same", "It cannot be determined from case {i}"),
)


def make_record(i: int, rng: random.Random, subject: str | None = None) -> dict[str, Any]:
    subject = subject or SUBJECTS[i % len(SUBJECTS)]
    values = {
        "i": i,
        "a": rng.randint(2, 999),
        "b": rng.randint(2, 99),
        "c": rng.randint(100, 9999),
        "d": rng.randint(1, 50),
        "s": subject.replace("_", " "),
    }
    question = QUESTIONS[i % len(QUESTIONS)].format(**values)
    shape = CHOICE_SHAPES[(i + i // len(QUESTIONS)) % len(CHOICE_SHAPES)]
    choices = [c.format(**values) for c in shape]
    return {"question": question, "subject": subject, "choices": choices, "answer": rng.randrange(4)}


def write_jsonl(path: Path, n: int, seed: int, start: int = 0, subject: str | None = None) -> Path:
    rng = random.Random(seed)
    dumps = json.dumps
    with path.open("w", encoding="utf-8") as handle:
        for i in range(start, start + n):
            handle.write(dumps(make_record(i, rng, subject), ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def split_counts(n: int) -> dict[str, int]:
    """``n`` records shared between the subjects in MMLU's proportions (largest remainder)."""
    total = sum(MMLU_SUBJECTS.values())
    exact = {s: n * size / total for s, size in MMLU_SUBJECTS.items()}
    counts = {s: int(v) for s, v in exact.items()}
    for s in sorted(exact, key=lambda s: counts[s] - exact[s])[: n - sum(counts.values())]:
        counts[s] += 1
    return counts


# The "tag" lm-eval's mmlu_<subject>.yaml files carry (its four MMLU groups).
MMLU_GROUPS = {
    "stem": "abstract_algebra anatomy astronomy college_biology college_chemistry college_computer_science "
    "college_mathematics college_physics computer_security conceptual_physics electrical_engineering "
    "elementary_mathematics high_school_biology high_school_chemistry high_school_computer_science "
    "high_school_mathematics high_school_physics high_school_statistics machine_learning",
    "humanities": "formal_logic high_school_european_history high_school_us_history high_school_world_history "
    "international_law jurisprudence logical_fallacies moral_disputes moral_scenarios philosophy prehistory "
    "professional_law world_religions",
    "social_sciences": "econometrics high_school_geography high_school_government_and_politics "
    "high_school_macroeconomics high_school_microeconomics high_school_psychology human_sexuality "
    "professional_psychology public_relations security_studies sociology us_foreign_policy",
    "other": "business_ethics clinical_knowledge college_medicine global_facts human_aging management marketing "
    "medical_genetics miscellaneous nutrition professional_accounting professional_medicine virology",
}
MMLU_TAG = {subject: f"mmlu_{group}_tasks" for group, names in MMLU_GROUPS.items() for subject in names.split()}


def description(subject: str) -> str:
    """lm-eval's ``description`` of an MMLU subject task (``mmlu_<subject>.yaml``)."""
    return f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"


# prompt-style's task file for one subject: lm-eval's MMLU layout with the mcq::mmlu style.
TASK_FILE = """\
task: mmlu_{subject}
data:
  test: {subject}_test.jsonl
  dev: {subject}_dev.jsonl
fewshot_split: dev
description: {description}
doc_to_text: "{{{{question.strip()}}}}"
doc_to_choice: choices
doc_to_target: answer
template: mcq::mmlu
num_fewshot: {shots}
retriever: first_n
"""


class MmluWorkspace:
    """57 subject tasks: ``<subject>_test.jsonl``, ``<subject>_dev.jsonl`` and
    ``mmlu_<subject>.yaml`` in one temporary folder."""

    def __init__(self, root: Path, n: int = N_RECORDS, shots: int = SHOTS) -> None:
        self.root = root
        self.shots = shots
        self.counts = {s: c for s, c in split_counts(n).items() if c}
        self.subjects = tuple(self.counts)
        self.n = sum(self.counts.values())
        self.tests: dict[str, Path] = {}
        self.devs: dict[str, Path] = {}
        self.tasks: dict[str, Path] = {}
        start = 0
        for k, subject in enumerate(self.subjects):
            count = self.counts[subject]
            self.tests[subject] = write_jsonl(
                root / f"{subject}_test.jsonl", count, SEED + k, start=start, subject=subject
            )
            # dev records start at shape 3: whitespace to strip in the few-shot block too
            self.devs[subject] = write_jsonl(root / f"{subject}_dev.jsonl", 5, SEED - k - 1, start=3, subject=subject)
            start += count
            task = root / f"mmlu_{subject}.yaml"
            task.write_text(
                TASK_FILE.format(subject=subject, description=json.dumps(description(subject)), shots=shots),
                encoding="utf-8",
            )
            self.tasks[subject] = task
        self.memory = {s: read_jsonl(self.tests[s]) for s in self.subjects}
        # lm-evaluation-harness's own MMLU task files (its _default_template_yaml, as
        # shipped in tests/lm_eval_tasks, and one mmlu_<subject>.yaml each, as lm-eval's)
        self.lm_eval_tasks: dict[str, Path] = {}
        if LM_EVAL_TEMPLATE.is_file():
            folder = root / "lm_eval_tasks"
            folder.mkdir()
            (folder / "_default_template_yaml").write_text(LM_EVAL_TEMPLATE.read_text(encoding="utf-8"))
            for subject in self.subjects:
                path = folder / f"mmlu_{subject}.yaml"
                path.write_text(  # the keys and order of lm-eval's own mmlu_<subject>.yaml
                    f'"dataset_name": "{subject}"\n"description": {json.dumps(description(subject))}\n'
                    f'"tag": "{MMLU_TAG[subject]}"\n"include": "_default_template_yaml"\n'
                    f'"task": "mmlu_{subject}"\n"task_alias": "{subject}"\n',
                    encoding="utf-8",
                )
                self.lm_eval_tasks[subject] = path
        self.memory_dev = {s: read_jsonl(self.devs[s]) for s in self.subjects}


# ---------------------------------------------------------------------------
# The renderers
# ---------------------------------------------------------------------------


def ps_jsonl(ws: MmluWorkspace) -> list[str]:
    """The public API, end to end: load each task file, render every record."""
    texts = []
    for subject in ws.subjects:
        task = prompt_style.load_task(ws.tasks[subject])
        for r in task.render():
            texts.append(r.text)
    return texts


def ps_load(ws: MmluWorkspace, data: dict[str, Any] | None = None) -> list[Any]:
    return [prompt_style.load_task(ws.tasks[s], data=None if data is None else {"test": data[s]}) for s in ws.subjects]


def ps_lm_eval_files(ws: MmluWorkspace) -> list[str]:
    """lm-evaluation-harness's MMLU task files read by prompt-style, end to end
    (``load_task(file, data=..., shots=5)``, as ``--data`` and ``--shots`` give them)."""
    texts = []
    for subject in ws.subjects:
        task = prompt_style.load_task(
            ws.lm_eval_tasks[subject], data={"test": ws.tests[subject], "dev": ws.devs[subject]}, shots=ws.shots
        )
        for r in task.render():
            texts.append(r.text)
    return texts


def ps_lm_eval_load(ws: MmluWorkspace) -> list[Any]:
    """lm-evaluation-harness's MMLU task files loaded (the untimed set-up of the render row)."""
    return [
        prompt_style.load_task(ws.lm_eval_tasks[s], data={"test": ws.tests[s], "dev": ws.devs[s]}, shots=ws.shots)
        for s in ws.subjects
    ]


def ps_render(tasks: list[Any]) -> list[str]:
    """``Task.render()`` of tasks loaded beforehand."""
    texts = []
    for task in tasks:
        for r in task.render():
            texts.append(r.text)
    return texts


def ps_renderer(tasks: list[Any], records: list[list[dict[str, Any]]]) -> list[str]:
    """``TaskRenderer.render(record, index)`` record by record (a harness's own loop)."""
    texts = []
    for task, recs in zip(tasks, records):
        render = task.renderer.render
        for index, record in enumerate(recs):
            texts.append(render(record, index).text)
    return texts


def fstring_plain(ws: MmluWorkspace) -> list[str]:
    """What a developer would write by hand: every prompt built in full, per record."""
    texts = []
    for subject in ws.subjects:
        intro = f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"
        with open(ws.devs[subject], encoding="utf-8") as f:
            dev = [json.loads(line) for line in f][: ws.shots]
        with open(ws.tests[subject], encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)
                prompt = intro
                for shot in dev:
                    c = shot["choices"]
                    prompt += (
                        f"{shot['question'].strip()}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\n"
                        f"Answer: {'ABCD'[shot['answer']]}\n\n"
                    )
                c = doc["choices"]
                texts.append(f"{prompt}{doc['question'].strip()}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\nAnswer:")
    return texts


def _prefix(subject: str, dev: list[dict[str, Any]]) -> str:
    prefix = f"The following are multiple choice questions (with answers) about {subject.replace('_', ' ')}.\n\n"
    for shot in dev:
        c = shot["choices"]
        prefix += (
            f"{shot['question'].strip()}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\n"
            f"Answer: {'ABCD'[shot['answer']]}\n\n"
        )
    return prefix


def fstring_memo(ws: MmluWorkspace) -> list[str]:
    """The plain f-string with the description and few-shot block built once per task."""
    texts = []
    for subject in ws.subjects:
        with open(ws.devs[subject], encoding="utf-8") as f:
            prefix = _prefix(subject, [json.loads(line) for line in f][: ws.shots])
        with open(ws.tests[subject], encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)
                c = doc["choices"]
                texts.append(f"{prefix}{doc['question'].strip()}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\nAnswer:")
    return texts


def fstring_memo_memory(ws: MmluWorkspace) -> list[str]:
    """The memoised f-string on records already in memory."""
    texts = []
    for subject in ws.subjects:
        prefix = _prefix(subject, ws.memory_dev[subject][: ws.shots])
        for doc in ws.memory[subject]:
            c = doc["choices"]
            texts.append(f"{prefix}{doc['question'].strip()}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\nAnswer:")
    return texts


# ---------------------------------------------------------------------------
# lm-evaluation-harness, in its own venv (bench/lmeval_side.py)
# ---------------------------------------------------------------------------


class LmEval:
    """The lm-eval worker subprocess: tasks loaded once, one timed pass per ``round()``."""

    def __init__(self, python: Path, ws: MmluWorkspace) -> None:
        script = Path(__file__).resolve().parent / "lmeval_side.py"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["HF_HOME"] = str(ws.root / "hf-home")
        env["TQDM_DISABLE"] = "1"
        self.proc = subprocess.Popen(
            [str(python), str(script), "--data", str(ws.root), "--subjects", ",".join(ws.subjects)]
            + ["--shots", str(ws.shots)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.info = self._answer()

    def _answer(self) -> dict[str, Any]:
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read()
            raise RuntimeError(f"the lm-eval worker stopped:\n{err[-3000:]}")
        return json.loads(line)

    def _ask(self, command: str) -> dict[str, Any]:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def round(self) -> float:
        return self._ask("round")["seconds"]

    def warm(self) -> None:
        self._ask("warm")

    def texts(self, path: Path) -> list[str]:
        self._ask(f"dump {path}")
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]

    def close(self) -> None:
        try:
            self._ask("quit") if self.proc.poll() is None else None
        except Exception:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def lm_eval_available(python: Path) -> str | None:
    """Why lm-eval cannot run (``None`` when it can)."""
    if not python.exists():
        return f"no lm-eval venv at {python.parent.parent} (make it as tools/golden/README.md says)"
    proc = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('lm_eval'))"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return f"{python} has no lm_eval"
    return None


# ---------------------------------------------------------------------------
# Rounds
# ---------------------------------------------------------------------------


def _prime(expected: list[str]) -> None:
    """Leave the allocator in the same state before every timed run: the memory of
    14,000 prompts of the outputs' sizes, used and freed. Without it a run pays page
    faults or not depending on what ran before it (about 10 ms either way, whoever
    renders), which is noise, not rendering."""
    ballast = [text.encode("utf-8").decode("utf-8") for text in expected]
    del ballast


def _timed(fn: Callable[[], list[str]], expected: list[str] | None = None) -> tuple[float, list[str]]:
    if expected is not None:
        _prime(expected)
    gc.collect()
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def _check(name: str, texts: list[str], expected: list[str], reference: str) -> None:
    if texts == expected:
        return
    if len(texts) != len(expected):
        raise AssertionError(f"{name} rendered {len(texts)} prompts, {reference} {len(expected)}")
    bad = [i for i, (a, b) in enumerate(zip(texts, expected)) if a != b]
    i = bad[0]
    raise AssertionError(
        f"{name}: {len(bad)} of {len(texts)} prompts differ from {reference}; first at prompt {i}:\n"
        f"--- {name}\n{texts[i]!r}\n--- {reference}\n{expected[i]!r}"
    )


RATIOS = (
    # (key, numerator, denominator, target, kind): kind "max" means ratio <= target
    ("plain", "prompt-style (JSONL)", "f-string (plain)", TARGET_PLAIN, "max"),
    ("memo", "prompt-style (JSONL)", "f-string (memoised)", TARGET_MEMO, "max"),
    ("memory", "prompt-style (memory)", "f-string (memoised, memory)", TARGET_MEMORY, "max"),
    (
        "memory_renderer",
        "prompt-style (memory, TaskRenderer.render)",
        "f-string (memoised, memory)",
        TARGET_MEMORY,
        "max",
    ),
    # lm-eval's time is fewshot_context with its tasks loaded (about 2 s, untimed) and its
    # documents in memory; ours with the tasks loaded, reading the JSON Lines (stricter)
    ("lm_eval", "lm-eval 0.4.13", "prompt-style (render)", TARGET_LM_EVAL, "min"),
    # for reference, no target
    ("lm_eval_jsonl", "lm-eval 0.4.13", "prompt-style (JSONL)", None, "min"),
    ("lm_eval_memory", "lm-eval 0.4.13", "prompt-style (memory)", None, "min"),
    # lm-eval's own task files (Jinja doc_to_text), read by prompt-style: the same target
    ("lm_eval_files", "lm-eval 0.4.13", "prompt-style (lm-eval task files, render)", TARGET_LM_EVAL, "min"),
    ("lm_eval_files_jsonl", "lm-eval 0.4.13", "prompt-style (lm-eval task files)", None, "min"),
    ("files_plain", "prompt-style (lm-eval task files)", "f-string (plain)", None, "max"),
    ("files_memo", "prompt-style (lm-eval task files)", "f-string (memoised)", None, "max"),
    ("files_render_memo", "prompt-style (lm-eval task files, render)", "f-string (memoised)", None, "max"),
    ("plain_render", "prompt-style (render)", "f-string (plain)", None, "max"),
    ("memo_render", "prompt-style (render)", "f-string (memoised)", None, "max"),
)


def run_rounds(ws: MmluWorkspace, rounds: int, lm: LmEval | None, lm_rounds: int) -> dict[str, Any]:
    prompt_style.default_plugin_manager()  # discovery once, as any harness process would
    # name -> (untimed setup, timed renderer of its result): tasks are loaded afresh
    # before each timed render, so every timed render is a task's first (what a task
    # builds on its first record, such as the fast path, is in the time).
    renderers: dict[str, tuple[Callable[[], Any], Callable[[Any], list[str]]]] = {
        "prompt-style (JSONL)": (lambda: None, lambda _: ps_jsonl(ws)),
        "prompt-style (render)": (lambda: ps_load(ws), ps_render),
        "prompt-style (memory)": (lambda: ps_load(ws, ws.memory), ps_render),
        "prompt-style (memory, TaskRenderer.render)": (
            lambda: ps_load(ws, ws.memory),
            lambda tasks: ps_renderer(tasks, [ws.memory[s] for s in ws.subjects]),
        ),
        "f-string (plain)": (lambda: None, lambda _: fstring_plain(ws)),
        **(
            {
                "prompt-style (lm-eval task files)": (lambda: None, lambda _: ps_lm_eval_files(ws)),
                "prompt-style (lm-eval task files, render)": (lambda: ps_lm_eval_load(ws), ps_render),
            }
            if ws.lm_eval_tasks
            else {}
        ),
        "f-string (memoised)": (lambda: None, lambda _: fstring_memo(ws)),
        "f-string (memoised, memory)": (lambda: None, lambda _: fstring_memo_memory(ws)),
    }
    expected = fstring_plain(ws)  # warm-up of every renderer, outputs checked
    for name, (setup, fn) in renderers.items():
        _check(name, fn(setup()), expected, "f-string (plain)")
    load_times: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in renderers}
    if lm is not None:
        times["lm-eval 0.4.13"] = []
        lm.warm()  # a few documents per task (a full pass takes about a minute)
    per_round: list[dict[str, float]] = []
    names = list(renderers)
    for r in range(rounds):
        this: dict[str, float] = {}
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            setup, fn = renderers[name]
            seconds, texts = _timed(functools.partial(fn, setup()), expected)
            _check(name, texts, expected, "f-string (plain)")
            del texts  # every timed run starts with the same memory free: no other output alive
            this[name] = seconds
        gc.collect()
        start = time.process_time()
        ps_load(ws)
        load_times.append(time.process_time() - start)
        if lm is not None and r < lm_rounds:
            this["lm-eval 0.4.13"] = lm.round()
            if r == 0:
                _check("lm-eval 0.4.13", lm.texts(ws.root / "lm_eval_contexts.jsonl"), expected, "f-string (plain)")
        for name, seconds in this.items():
            times[name].append(seconds)
        per_round.append(this)
        print(
            f"    round {r + 1}/{rounds}: "
            + ", ".join(f"{name} {seconds * 1e3:.1f} ms" for name, seconds in this.items()),
            flush=True,
        )
    ratios: dict[str, dict[str, Any]] = {}
    for key, top, bottom, target, kind in RATIOS:
        values = [rnd[top] / rnd[bottom] for rnd in per_round if top in rnd and bottom in rnd]
        if not values:
            continue
        median = statistics.median(values)
        ok = None if target is None else (median <= target if kind == "max" else median >= target)
        ratios[key] = {
            "of": top,
            "to": bottom,
            "median": median,
            "min": min(values),
            "max": max(values),
            "rounds": len(values),
            "target": target,
            "kind": kind,
            "pass": ok,
        }
    return {
        "records": ws.n,
        "tasks": len(ws.subjects),
        "rounds": rounds,
        "times": times,
        "median_s": {name: statistics.median(ts) for name, ts in times.items()},
        "load_task_s": statistics.median(load_times),
        "ratios": ratios,
        "bytes": sum(len(t.encode("utf-8")) for t in expected),
        "lm_eval": lm.info if lm is not None else None,
    }


# ---------------------------------------------------------------------------
# Memory (a single task, streamed)
# ---------------------------------------------------------------------------

PLAIN_TASK = """\
task: bench_mmlu_plain
data:
  test: test.jsonl
  dev: dev.jsonl
fewshot_split: dev
doc_to_text: question
doc_to_choice: choices
doc_to_target: answer
template:
  template_type: mcq::mmlu
num_fewshot: 5
retriever: first_n
"""


class Workspace:
    """One task over one JSONL file (the memory measurement; ``bench/tokens_bench.py``)."""

    def __init__(self, root: Path, n: int = N_RECORDS) -> None:
        self.root = root
        self.test = write_jsonl(root / "test.jsonl", n, SEED)
        self.dev = write_jsonl(root / "dev.jsonl", 5, SEED + 1, start=3)  # shapes 3..7: whitespace to strip
        self.plain_task = root / "plain.yaml"
        self.plain_task.write_text(PLAIN_TASK, encoding="utf-8")
        self._big: Path | None = None

    def big(self, n: int) -> Path:
        if self._big is None:
            self._big = write_jsonl(self.root / "big.jsonl", n, SEED + 2)
        return self._big


def stream_peak(task_file: Path, data_file: Path) -> tuple[int, int, int]:
    """Render ``data_file`` lazily, keeping only a running CRC; returns (records, crc, peak bytes)."""
    gc.collect()
    tracemalloc.start()
    try:
        task = prompt_style.load_task(task_file, data={"test": data_file})
        crc = 0
        count = 0
        for r in task.render():
            crc = zlib.crc32(r.text.encode("utf-8"), crc)
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, crc, peak


def measure_memory(root: Path, n: int, n_big: int) -> dict[str, Any]:
    ws = Workspace(root, n)
    big = ws.big(n_big)
    small_n, _, small_peak = stream_peak(ws.plain_task, ws.test)
    big_n, _, big_peak = stream_peak(ws.plain_task, big)
    growth = big_peak / small_peak
    return {
        "small_records": small_n,
        "small_peak": small_peak,
        "small_file_bytes": ws.test.stat().st_size,
        "big_records": big_n,
        "big_peak": big_peak,
        "big_file_bytes": big.stat().st_size,
        "growth": growth,
        "constant": growth < 1.5,
    }


# ---------------------------------------------------------------------------
# Profiling (optional: --profile)
# ---------------------------------------------------------------------------


def profile(ws: MmluWorkspace, top: int = 30) -> None:
    import cProfile
    import pstats

    tasks = ps_load(ws)
    profiler = cProfile.Profile()
    profiler.enable()
    ps_render(tasks)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
    print(f"\ncProfile of Task.render() over the {len(tasks)} tasks, by own time:")
    stats.sort_stats("tottime").print_stats(top)
    print("by cumulative time:")
    stats.sort_stats("cumulative").print_stats(top)
    if ws.lm_eval_tasks:
        tasks = ps_lm_eval_load(ws)
        profiler = cProfile.Profile()
        profiler.enable()
        ps_render(tasks)
        profiler.disable()
        print(f"\ncProfile of Task.render() over lm-eval's {len(tasks)} MMLU task files, by own time:")
        pstats.Stats(profiler, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(top)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def ratio_line(r: dict[str, Any]) -> str:
    if r["kind"] == "min":
        text = f"{r['of']} / {r['to']} = {r['median']:,.0f}x faster (rounds {r['min']:,.0f}-{r['max']:,.0f})"
    else:
        text = f"{r['of']} / {r['to']} = {r['median']:.2f}x (rounds {r['min']:.2f}-{r['max']:.2f})"
    if r["target"] is None:
        return text + "  (reference)"
    sign = "<=" if r["kind"] == "max" else ">="
    return f"{text}  target {sign} {r['target']:g}x: {'PASS' if r['pass'] else 'FAIL'}"


def print_report(res: dict[str, Any]) -> None:
    n = res["records"]
    print(
        f"  {n} records in {res['tasks']} MMLU subject tasks, {SHOTS}-shot mcq::mmlu (and lm-eval's own MMLU "
        f"task files); {res['rounds']} rounds, "
        f"outputs byte-identical for every record ({res['bytes'] / 2**20:.1f} MiB of prompts)"
    )
    print("  median time per renderer (all rounds it ran in):")
    for name, seconds in res["median_s"].items():
        runs = len(res["times"][name])
        print(f"    {name:<43} {seconds * 1e3:9.1f} ms  {seconds / n * 1e6:8.2f} us/record  ({runs} rounds)")
    print(f"    (load_task of the {res['tasks']} tasks alone: {res['load_task_s'] * 1e3:.1f} ms, in the JSONL figure)")
    print("  ratios, each within a round, median over rounds:")
    for r in res["ratios"].values():
        print("    " + ratio_line(r))


def run(
    *,
    n: int = N_RECORDS,
    n_big: int = N_STREAM,
    rounds: int = ROUNDS,
    lm_rounds: int = LM_EVAL_ROUNDS,
    lm_eval_python: Path | None = LM_EVAL_PYTHON,
    memory: bool = True,
    do_profile: bool = False,
) -> dict[str, Any]:
    print(f"== render benchmark (Python {sys.version.split()[0]}, prompt-style {_version()})")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="prompt-style-bench-") as tmp:
        ws = MmluWorkspace(Path(tmp), n)
        lm = None
        why = "not asked for (--no-lm-eval)" if lm_eval_python is None or lm_rounds <= 0 else None
        if why is None:
            why = lm_eval_available(lm_eval_python)
        if why is None:
            print(f"  starting lm-eval in {lm_eval_python} (loading its {len(ws.subjects)} MMLU tasks, untimed)")
            try:
                lm = LmEval(lm_eval_python, ws)
                print(
                    f"    lm-eval {lm.info['lm_eval']}, datasets {lm.info['datasets']}, "
                    f"{lm.info['records']} records, loaded in {lm.info['load_s']:.1f} s"
                )
            except Exception as exc:  # a broken venv must not hide our own figures
                why = f"the lm-eval worker failed: {exc}"
                lm = None
        if lm is None:
            print(f"  SKIPPED lm-eval comparison: {why}")
        try:
            res = run_rounds(ws, rounds, lm, lm_rounds)
        finally:
            if lm is not None:
                lm.close()
        res["lm_eval_skipped"] = why
        results.update(res)
        print_report(res)
        if do_profile:
            profile(ws)
    if memory:
        with tempfile.TemporaryDirectory(prefix="prompt-style-bench-mem-") as tmp:
            mem = measure_memory(Path(tmp), n, n_big)
        results["memory"] = mem
        print("  [memory] tracemalloc peak while streaming one task with a running CRC:")
        print(
            f"    {mem['small_records']:>7} records ({_mib(mem['small_file_bytes'])} JSONL): peak {_mib(mem['small_peak'])}"
        )
        print(
            f"    {mem['big_records']:>7} records ({_mib(mem['big_file_bytes'])} JSONL): peak {_mib(mem['big_peak'])}"
        )
        print(
            f"    growth {mem['growth']:.2f}x for {mem['big_records'] / mem['small_records']:.1f}x the records: "
            f"{'constant memory' if mem['constant'] else 'MEMORY GROWS WITH THE INPUT'}"
        )
    targets = [r for r in results["ratios"].values() if r["target"] is not None]
    results["pass"] = all(r["pass"] for r in targets)
    return results


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("prompt-style")
    except Exception:
        return "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=N_RECORDS, help=f"test records in all (default {N_RECORDS})")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"timed rounds (default {ROUNDS})")
    parser.add_argument(
        "--lm-eval-rounds", type=int, default=LM_EVAL_ROUNDS, help=f"rounds lm-eval runs in (default {LM_EVAL_ROUNDS})"
    )
    parser.add_argument(
        "--lm-eval-python",
        type=Path,
        default=LM_EVAL_PYTHON,
        help=f"the lm-eval venv's python (default {LM_EVAL_PYTHON})",
    )
    parser.add_argument("--no-lm-eval", action="store_true", help="skip the lm-eval comparison")
    parser.add_argument("--stream", type=int, default=N_STREAM, help=f"records for the memory run (default {N_STREAM})")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--profile", action="store_true", help="also print cProfile of the render loop")
    args = parser.parse_args(argv)
    run(
        n=args.records,
        n_big=args.stream,
        rounds=max(1, args.rounds),
        lm_rounds=0 if args.no_lm_eval else args.lm_eval_rounds,
        lm_eval_python=None if args.no_lm_eval else args.lm_eval_python,
        memory=not args.no_memory,
        do_profile=args.profile,
    )
    return 0  # a report, not a test


if __name__ == "__main__":
    raise SystemExit(main())
