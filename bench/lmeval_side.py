"""lm-evaluation-harness's own context building, timed: the other side of render_bench.py.

Run by ``bench/render_bench.py`` as a subprocess with the Python of a throwaway venv
that has lm-eval 0.4.13 (``--lm-eval-python``, default ``/tmp/venvs/lmeval/bin/python``);
never imported by prompt-style. It is a worker: it loads the tasks once, then, for each
line ``round`` read on stdin, times one pass of context building and answers one JSON
line on stdout (``warm`` does the same for three documents per task, untimed by the
bench); ``dump PATH`` writes the contexts of the last round as JSON Lines (for the
byte-for-byte comparison); ``quit`` ends it.

The tasks are lm-eval's own per-subject MMLU tasks as shipped
(``lm_eval/tasks/mmlu/default/mmlu_<subject>.yaml`` and their
``_default_template_yaml``), loaded with ``TaskManager(include_path=...)``; the only
change is ``ConfigurableTask.download``, patched to build the task's
``datasets.DatasetDict`` from the bench's local JSON Lines (``<subject>_test.jsonl``,
``<subject>_dev.jsonl``) instead of downloading ``cais/mmlu``.

Timed, per round and task: ``task.fewshot_context(doc, num_fewshot=5, ...)`` for every
test document, with the arguments ``ConfigurableTask.build_all_requests`` passes (no
system instruction, no chat template, ``gen_prefix=task.doc_to_prefix(doc)``). The
documents are listed from the task's ``doc_iterator`` before the clock starts (they are
already in memory in a ``datasets.Dataset``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def load_tasks(data: Path, subjects: list[str], shots: int):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    import datasets
    import lm_eval
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks import TaskManager

    datasets.disable_progress_bars()

    def read(path: Path) -> list[dict]:
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def download(self, dataset_kwargs=None, **kwargs):  # the Hub replaced by the bench's files
        subject = self.config.dataset_name
        self.dataset = datasets.DatasetDict(
            {split: datasets.Dataset.from_list(read(data / f"{subject}_{split}.jsonl")) for split in ("test", "dev")}
        )

    ConfigurableTask.download = download
    include = Path(lm_eval.__file__).parent / "tasks" / "mmlu" / "default"
    manager = TaskManager(include_path=str(include), include_defaults=False)
    names = [f"mmlu_{subject}" for subject in subjects]
    loaded = manager.load(names)["tasks"]
    tasks = []
    for name in names:
        task = loaded[name]
        task.set_config(key="num_fewshot", value=shots)
        task.set_fewshot_seed(seed=1234)
        docs = [doc for _, doc in task.doc_iterator(rank=0, limit=None, world_size=1)]
        tasks.append((task, docs))
    return tasks


def one_round(tasks, shots: int, per_task: int | None = None) -> tuple[float, list[str]]:
    contexts: list[str] = []
    append = contexts.append
    start = time.process_time()
    for task, docs in tasks:
        fewshot_context = task.fewshot_context
        doc_to_prefix = task.doc_to_prefix
        for doc in docs[:per_task]:
            append(
                fewshot_context(
                    doc,
                    num_fewshot=shots,
                    system_instruction=None,
                    apply_chat_template=False,
                    fewshot_as_multiturn=False,
                    chat_template=None,
                    gen_prefix=doc_to_prefix(doc),
                )
            )
    return time.process_time() - start, contexts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with <subject>_{test,dev}.jsonl")
    parser.add_argument("--subjects", required=True, help="comma-separated MMLU subjects")
    parser.add_argument("--shots", type=int, default=5)
    args = parser.parse_args(argv)
    import logging

    logging.disable(logging.WARNING)
    from importlib.metadata import version

    start = time.perf_counter()
    tasks = load_tasks(args.data, args.subjects.split(","), args.shots)
    ready = {
        "ready": True,
        "lm_eval": version("lm_eval"),
        "datasets": version("datasets"),
        "python": sys.version.split()[0],
        "tasks": len(tasks),
        "records": sum(len(docs) for _, docs in tasks),
        "load_s": time.perf_counter() - start,
    }
    print(json.dumps(ready), flush=True)
    contexts: list[str] = []
    for line in sys.stdin:
        command = line.strip()
        if command == "warm":  # a few documents per task: first-call costs out of the timed rounds
            seconds, _ = one_round(tasks, args.shots, per_task=3)
            print(json.dumps({"seconds": seconds}), flush=True)
        elif command == "round":
            seconds, contexts = one_round(tasks, args.shots)
            print(json.dumps({"seconds": seconds, "records": len(contexts)}), flush=True)
        elif command.startswith("dump "):
            with open(command[5:], "w", encoding="utf-8") as handle:
                for text in contexts:
                    handle.write(json.dumps(text, ensure_ascii=False) + "\n")
            print(json.dumps({"dumped": len(contexts)}), flush=True)
        elif command == "quit":
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
