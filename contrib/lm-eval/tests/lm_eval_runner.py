"""Run exported tasks in a real lm-evaluation-harness with an in-memory model that records its requests.

Run with the Python of a venv where lm-eval 0.4.13 and prompt-style-lm-eval are
installed (the end-to-end tests and tools/harnesses/ do)::

    python lm_eval_runner.py --include-path DIR --tasks a,b --out samples.json \\
        [--apply-chat-template] [--no-fewshot-as-multiturn] [--system-instruction TEXT] \\
        [--num-fewshot K] [--limit N] [--fewshot-random-seed N]

``lm-eval run --model dummy`` cannot apply a chat template offline (it loads a
tokenizer from the Hub), so this goes through ``lm_eval.simple_evaluate`` with
:class:`RecordingLM`, an ``lm_eval.api.model.LM`` whose ``apply_chat_template``
returns the chat history it is given as JSON: the requests' contexts are then
exactly the messages lm-eval hands a chat model. Writes ``{task: [{doc_id,
target, arguments}, ...]}`` as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--include-path", required=True)
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--apply-chat-template", action="store_true")
    parser.add_argument("--no-fewshot-as-multiturn", action="store_true")
    parser.add_argument("--system-instruction")
    parser.add_argument("--num-fewshot", type=int)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--fewshot-random-seed", type=int, default=1234)
    args = parser.parse_args(argv)

    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    class RecordingLM(LM):
        """Answers every request with a constant; its chat template is the messages as JSON."""

        tokenizer_name = "recording"

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            return [(-1.0, False) for _ in requests]

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
            return [-1.0 for _ in requests]

        def generate_until(self, requests, disable_tqdm: bool = False):
            return ["" for _ in requests]

        def apply_chat_template(self, chat_history, add_generation_prompt=True):
            record = {"messages": chat_history, "add_generation_prompt": add_generation_prompt}
            return json.dumps(record, ensure_ascii=False)

        def chat_template(self, chat_template=False):
            return "recording"

    manager = TaskManager(include_path=args.include_path, include_defaults=False)
    results = simple_evaluate(
        model=RecordingLM(),
        tasks=args.tasks.split(","),
        task_manager=manager,
        num_fewshot=args.num_fewshot,
        limit=args.limit,
        log_samples=True,
        apply_chat_template=args.apply_chat_template,
        fewshot_as_multiturn=args.apply_chat_template and not args.no_fewshot_as_multiturn,
        system_instruction=args.system_instruction,
        fewshot_random_seed=args.fewshot_random_seed,
        bootstrap_iters=0,
    )
    out = {
        task: [
            {"doc_id": s["doc_id"], "target": str(s["target"]), "arguments": [list(a) for a in s["arguments"]]}
            for s in samples
        ]
        for task, samples in results["samples"].items()
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(out, handle, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
