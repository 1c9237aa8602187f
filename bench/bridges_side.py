"""The harness side of bench/bridges_bench.py: run in a Python with the harness,
prompt-style and the bridge installed. Prints one JSON object: the seconds of
every contender in every round.

    python bench/bridges_side.py inspect|lighteval --task TASK.yaml --rounds N --meta plain|messages

Contenders, on the same records, the task loaded beforehand (untimed):

- ``render``: ``list(task.render())``, the records rendered, which is what the
  bridges are measured against.
- ``render_jsonl``: the same and each prompt's JSON line, which is what
  ``prompt-style render --format jsonl`` does (for reference).
- ``bridge``: everything the bridge does to hand the harness those records:
  inspect_ai: ``task_samples(task)`` (the samples of ``prompt_style_inspect/task``);
  lighteval: ``task_config(task)`` then the prompt function on every row (the
  docs lighteval asks for).
- ``harness``: the harness's own objects made from ready values, which any
  integration pays: inspect_ai's ``Sample``s (whose validation turns message
  mappings into its message classes), lighteval's ``Doc``s; under the garbage
  collector's conditions of the bridge's own loop (inspect_ai's samples are
  built with it paused, lighteval's docs in lighteval's loop with it running).

Every round checks the bridge's output against the render first: inspect_ai's
sample inputs are the rendered text or messages, lighteval's docs give the
rendered text (its ``PromptManager``, no chat template) or messages (its API
path); a difference exits 1.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import prompt_style


def _timed(fn: Any) -> tuple[float, Any]:
    """Process CPU time: the machine's other jobs do not count (they still share its caches)."""
    gc.collect()
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def _without_collector(fn: Any) -> Any:
    """``fn`` with the garbage collector paused, as the bridges build the harness's
    objects (so the harness's share is measured under the same conditions)."""

    def run() -> Any:
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()

    return run


def _inspect(task: Any) -> tuple[Any, Any, Any]:
    """inspect_ai: ``task_samples`` builds the samples with the collector paused, so
    the harness's share is measured so too."""
    from inspect_ai.dataset import Sample
    from prompt_style_inspect import message_dicts, task_samples

    def bridge() -> Any:
        return task_samples(task)

    made = bridge()
    ready = [
        (s.input if isinstance(s.input, str) else message_dicts(s.input), s.target, s.id, s.metadata) for s in made
    ]

    @_without_collector
    def harness() -> Any:
        return [Sample(input=i, target=t, id=k, metadata=m) for i, t, k, m in ready]

    def check(samples: Any, rendered: list[Any]) -> None:
        for sample, prompt in zip(samples, rendered, strict=True):
            want = prompt.text if prompt.messages is None else prompt.messages
            got = sample.input if isinstance(sample.input, str) else message_dicts(sample.input)
            if got != want:
                raise SystemExit(f"record {prompt.index}: the sample's input differs from the render")

    return bridge, harness, check


def _lighteval(task: Any) -> tuple[Any, Any, Any]:
    """lighteval: the docs are made one by one in lighteval's own loop (the prompt
    function's calls), with the collector running, so the harness's share is too."""
    from lighteval.tasks.prompt_manager import PromptManager
    from lighteval.tasks.requests import Doc
    from prompt_style_lighteval import RenderedDoc, task_config

    rows = Path(tempfile.mkdtemp(prefix="prompt-style-bench-rows-"))
    count = sum(1 for _ in task.render())
    lines = [{"ps_index": i, "__index": i, "__few_shots": False} for i in range(count)]

    logging.getLogger("prompt_style_lighteval").setLevel(logging.ERROR)  # the system-prompt notice, every round

    def bridge() -> Any:
        config = task_config(task, rows=rows)
        function, name = config.prompt_function, config.name
        return [function(line, name) for line in lines]

    made = bridge()
    ready = [
        (d.query, list(d.choices), d.gold_index, [(s.query, s.choices[0]) for s in d.fewshot_samples]) for d in made
    ]

    def harness() -> Any:
        docs = []
        made: dict[tuple[str, str], Any] = {}  # the few-shot samples the bridge makes: one per distinct example
        for query, choices, gold, shots in ready:
            if shots:
                samples = []
                for pair in shots:
                    if pair not in made:
                        made[pair] = Doc(query=pair[0], choices=[pair[1]], gold_index=0)
                    samples.append(made[pair])
                docs.append(RenderedDoc(query=query, choices=choices, gold_index=gold, fewshot_samples=samples))
            else:
                docs.append(Doc(query=query, choices=choices, gold_index=gold))
        return docs

    first = next(iter(task.render()))
    system = None  # lighteval's system message is the model's system_prompt: the task's own, given here
    if first.messages and first.messages[0]["role"] == "system":
        system = first.messages[0]["content"]
    plain = PromptManager(use_chat_template=False)
    chat = PromptManager(use_chat_template=True, tokenizer=None, system_prompt=system)

    def check(docs: Any, rendered: list[Any]) -> None:
        for doc, prompt in zip(docs, rendered, strict=True):
            ok = (
                plain.prepare_prompt(doc) == prompt.text
                if prompt.text is not None
                else chat.prepare_prompt_api(doc) == prompt.messages
            )
            if not ok or doc.choices != list(prompt.continuations):
                raise SystemExit(f"record {prompt.index}: the doc differs from the render")

    return bridge, harness, check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("bridge", choices=("inspect", "lighteval"))
    parser.add_argument("--task", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--meta", default="plain")
    args = parser.parse_args(argv)
    task = prompt_style.load_task(args.task, meta=args.meta)
    bridge, harness, check = (_inspect if args.bridge == "inspect" else _lighteval)(task)
    contenders = {
        "render": lambda: list(task.render()),
        "render_jsonl": lambda: [json.dumps(p.to_json(), ensure_ascii=False) for p in task.render()],
        "bridge": bridge,
        "harness": harness,
    }
    names = list(contenders)
    rounds: list[dict[str, float]] = []
    for number in range(args.rounds + 1):  # round 0 warms up, untimed in the report
        order = names[number % len(names) :] + names[: number % len(names)]
        times: dict[str, float] = {}
        outputs: dict[str, Any] = {}
        for name in order:
            times[name], outputs[name] = _timed(contenders[name])
        check(outputs["bridge"], outputs["render"])
        del outputs
        if number:
            rounds.append(times)
    count = sum(1 for _ in task.render())
    print(json.dumps({"bridge": args.bridge, "meta": args.meta, "records": count, "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
