"""The harness side of bench/bridges_bench.py: run in a Python with the harness,
prompt-style and the bridge installed. Prints one JSON object: the seconds of
every contender in every round.

    python bench/bridges_side.py inspect|lighteval --task TASK.yaml --rounds N --meta plain|messages

Contenders, on the same records, the task loaded beforehand (untimed), in
process CPU time:

- ``render``: ``list(task.render())``, the records rendered: what the bridges
  are measured against.
- ``render_jsonl``: the same and each prompt's JSON line, what ``prompt-style
  render --format jsonl`` does (for reference).
- ``bridge``: everything the bridge does to hand the harness those records, the
  harness's objects included: inspect_ai: ``task_samples(task)`` (the samples
  of ``prompt_style_inspect/task``); lighteval: ``task_config(task)`` then the
  prompt function on every row (the docs lighteval asks for).
- ``own``: the same with the harness's own constructors (inspect_ai's
  ``Sample``, whose validation also turns message mappings into its message
  classes; lighteval's ``Doc``) replaced by a stand-in that takes the same
  keywords and makes nothing: the bridge's own work, measured directly rather
  than as a difference of two large times.
- ``loop``: lighteval only, the harness's own share of ``own``: lighteval's loop
  over the dataset's rows, calling a formatter that does nothing (it does that
  for any task). inspect_ai takes the samples as a list: nothing to exclude.

Every round checks the bridge's real output against the render: inspect_ai's
sample inputs are the rendered text or messages; lighteval's docs give the
rendered text (its ``PromptManager``, no chat template) or messages (its API
path, with the task's system message as the model's ``system_prompt``), and the
rendered continuations. A difference exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import prompt_style


def _timed(fn: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


_MADE = object()


def _stand_in(
    *positional: Any,
    input: Any = None,
    target: Any = None,
    id: Any = None,
    metadata: Any = None,
    query: Any = None,
    choices: Any = None,
    gold_index: Any = None,
    task_name: Any = None,
    fewshot_samples: Any = None,
) -> Any:
    """What a harness's constructor is replaced with in ``own``: it takes the
    arguments the bridges pass (inspect_ai's ``Sample``, lighteval's ``Doc``) and
    makes nothing, so that ``own`` is the bridge's work alone."""
    return _MADE


@contextlib.contextmanager
def _stubbed(module: Any, names: tuple[str, ...]) -> Iterator[None]:
    saved = {name: getattr(module, name) for name in names}
    try:
        for name in names:
            setattr(module, name, _stand_in)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def _inspect(task: Any) -> tuple[Any, Any, Any]:
    import prompt_style_inspect.dataset as dataset
    from prompt_style_inspect import message_dicts, task_samples

    def bridge() -> Any:
        return task_samples(task)

    def own() -> Any:
        with _stubbed(dataset, ("Sample",)):
            return task_samples(task)

    def check(samples: Any, rendered: list[Any]) -> None:
        for sample, prompt in zip(samples, rendered, strict=True):
            want = prompt.text if prompt.messages is None else prompt.messages
            got = sample.input if isinstance(sample.input, str) else message_dicts(sample.input)
            if got != want:
                raise SystemExit(f"record {prompt.index}: the sample's input differs from the render")

    return bridge, own, check, None


def _lighteval(task: Any) -> tuple[Any, Any, Any]:
    import prompt_style_lighteval.bridge as module
    from lighteval.tasks.prompt_manager import PromptManager
    from prompt_style_lighteval import task_config

    logging.getLogger("prompt_style_lighteval").setLevel(logging.ERROR)  # the system-prompt notice, every round
    rows = Path(tempfile.mkdtemp(prefix="prompt-style-bench-rows-"))
    count = sum(1 for _ in task.render())
    lines = [{"ps_index": i, "__index": i, "__few_shots": False} for i in range(count)]

    def bridge() -> Any:
        config = task_config(task, rows=rows)
        function, name = config.prompt_function, config.name
        return [function(line, name) for line in lines]

    def own() -> Any:
        with _stubbed(module, ("Doc", "RenderedDoc")):
            return bridge()

    def nothing(line: Any, task_name: str) -> Any:
        return _MADE

    def loop() -> Any:
        """lighteval's own share of ``own``: its loop over the rows, calling a formatter."""
        return [nothing(line, "task") for line in lines]

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

    return bridge, own, check, loop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("bridge", choices=("inspect", "lighteval"))
    parser.add_argument("--task", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--meta", default="plain")
    args = parser.parse_args(argv)
    task = prompt_style.load_task(args.task, meta=args.meta)
    bridge, own, check, loop = (_inspect if args.bridge == "inspect" else _lighteval)(task)
    contenders = {
        "render": lambda: list(task.render()),
        "render_jsonl": lambda: [json.dumps(p.to_json(), ensure_ascii=False) for p in task.render()],
        "bridge": bridge,
        "own": own,
        "loop": loop or (lambda: None),
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
