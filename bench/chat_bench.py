"""Chat templates: prompt-style's ``hf`` against transformers' ``apply_chat_template``.

    /tmp/venvs/chat/bin/python bench/chat_bench.py     # from the repository root

It needs a throwaway venv with transformers (no torch)::

    python3 -m venv /tmp/venvs/chat
    /tmp/venvs/chat/bin/pip install transformers tokenizers jinja2 pluggy pyyaml

prompt-style is imported from this checkout (``core/`` and ``plugins/hf/src``
are put on ``sys.path``), so nothing of the repository needs installing there.

For every template of the chat-template corpus and every conversation of its
``expected.json`` (the six corpus conversations; ``--all`` adds the golden
conversations of tests/golden/transformers_chat), in the same process:

* **transformers**: ``tokenizer.apply_chat_template(messages, tokenize=False,
  **kwargs)`` with a tokenizer built once per template, exactly as the corpus
  was made (``PreTrainedTokenizerFast`` with the template, ``bos_token``,
  ``eos_token``; ``strftime_now``'s clock frozen at 2025-07-10T12:00:00);
* **hf**: the ``hf`` meta template built once per template
  (``template=FILE``, the same tokens, ``now=2025-07-10T12:00:00``), then
  ``meta.apply_messages(messages, **kwargs)``;
* **hf (Jinja engine)**: the same with ``engine=jinja`` (Jinja's own renderer
  instead of the fast code generator), to show what the generator gives.

The outputs are compared first (every text equal; where transformers raises,
hf raises too): a difference exits 1, since timing different work means
nothing. Each conversation is then timed interleaved — a batch of calls of
each contender in turn, repeated, keeping each one's fastest batch, in CPU
time of the process (``time.process_time``) — which keeps the ratio honest on
a busy machine. Reported: the time per
conversation over the whole corpus (the sum of per-conversation times) and
its ratio, the median of the per-conversation ratios, and the templates where
hf gains least. Target: hf at least 5x faster than transformers on the median
conversation (the whole corpus's ratio is reported against it too).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "core"), str(ROOT / "plugins" / "hf" / "src")]
FROZEN = datetime(2025, 7, 10, 12, 0, 0)
TARGET = 5.0


def corpus_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "corpora" / "chat_templates"
        if (candidate / "expected.json").is_file():
            return candidate
    return ROOT / "tests" / "golden" / "transformers_chat" / "corpus"


def tool_schemas(n: int) -> list[dict]:
    """``n`` tool schemas of the usual shape (a description, typed parameters, an enum, a
    nested object), varied so that no two are alike."""
    out = []
    for i in range(n):
        out.append(
            {
                "type": "function",
                "function": {
                    "name": f"tool_{i}",
                    "description": f"Tool number {i}: looks things up ({'fast' if i % 2 else 'careful'}).",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": f"What to look up, #{i}"},
                            "limit": {"type": "integer", "description": "How many results"},
                            "mode": {"type": "string", "enum": ["exact", "fuzzy", f"m{i % 7}"]},
                            "options": {
                                "type": "object",
                                "description": "Extra options",
                                "properties": {"lang": {"type": "string"}, "safe": {"type": "boolean"}},
                            },
                        },
                        "required": ["query"],
                    },
                },
            }
        )
    return out


def tool_conversations(counts: list[int]) -> dict[str, dict]:
    """A short agentic conversation (a tool call and its result) with ``n`` tools, for each ``n``."""
    messages = [
        {"role": "system", "content": "You are a helpful assistant with tools."},
        {"role": "user", "content": "Look up the weather in Paris."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "tool_1", "arguments": {"query": "Paris"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "tool_1", "content": "Sunny, 21 °C."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ]
    return {
        f"tools-{n}": {"messages": messages, "tools": tool_schemas(n), "kwargs": {"add_generation_prompt": True}}
        for n in counts
    }


def build(corpus: Path, all_conversations: bool, tools: list[int] | None = None, published: bool = False):
    from prompt_style_hf.meta import hf_meta
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    index = json.loads((corpus / "index.json").read_text(encoding="utf-8"))
    expected = json.loads((corpus / "expected.json").read_text(encoding="utf-8"))
    conversations = dict(expected["meta"]["conversations"])
    if all_conversations:
        golden = ROOT / "tests" / "golden" / "transformers_chat" / "conversations.json"
        conversations.update(json.loads(golden.read_text(encoding="utf-8"))["conversations"])
    jobs = []
    extra = tool_conversations(tools or [])
    templates = [
        (name, corpus / "templates" / index[name]["file"], index[name]) for name in sorted(expected["results"])
    ]
    if published:
        folder = ROOT / "tests" / "golden" / "transformers_chat" / "published"
        more = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        templates += [
            (f"published/{name}", folder / "templates" / info["file"], info)
            for name, info in sorted(more.items())
            if isinstance(info, dict)
        ]
    for name, path, info in templates:
        source = path.read_text(encoding="utf-8")
        tokens = {k: info[k] for k in ("bos_token", "eos_token") if info.get(k) is not None}
        inner = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=inner,
            bos_token=info.get("bos_token"),
            eos_token=info.get("eos_token"),
            chat_template=source,
        )
        meta = hf_meta({"template": str(path), "now": FROZEN, **tokens})
        slow = hf_meta({"template": str(path), "now": FROZEN, "engine": "jinja", **tokens})
        for conv_name, conv in sorted(conversations.items()):
            jobs.append((name, conv_name, tokenizer, meta, slow, conv))
        for conv_name, conv in extra.items():
            jobs.append((name, conv_name, tokenizer, meta, slow, conv))
    return jobs


def kind_of(conversation: str) -> str:
    """The class of a conversation in the report: the corpus's (and golden) ones, or ``tools-N``."""
    return conversation if conversation.startswith("tools-") else "conversations"


def contenders(job):
    _, _, tokenizer, meta, slow, conv = job
    messages = conv["messages"]
    kwargs = dict(conv.get("kwargs", {}))
    tools, documents = conv.get("tools"), conv.get("documents")
    return (
        lambda: tokenizer.apply_chat_template(messages, tools=tools, documents=documents, tokenize=False, **kwargs),
        lambda: meta.apply_messages(messages, tools=tools, documents=documents, **kwargs).text,
        lambda: slow.apply_messages(messages, tools=tools, documents=documents, **kwargs).text,
    )


def outcome(call):
    try:
        return True, call()
    except Exception as exc:  # transformers' ValueError/TemplateError, our ChatTemplateError
        return False, getattr(exc, "template_message", str(exc))


def best_batch(call, calls: int, repeats: int) -> float:
    # CPU time of this process: time when other processes hold the CPU is not counted.
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            call()
        best = min(best, (time.process_time() - start) / calls)
    return best


def timed_batch(call, budget: float) -> tuple[int, float]:
    """How many calls make a batch of about ``budget`` seconds (at least one), timed once."""
    start = time.process_time()
    call()
    once = max(time.process_time() - start, 1e-6)
    return max(1, min(50, int(budget / once))), once


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="the chat-template corpus directory (default: found next to the checkout)")
    parser.add_argument("--all", action="store_true", help="also the golden conversations (unicode, tools, ...)")
    parser.add_argument("--published", action="store_true", help="also the 47 published templates of the goldens")
    parser.add_argument(
        "--tools", type=int, nargs="*", default=[100, 300], help="conversations with N tools (default 100 300)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds; ratios are given min/median/max (default 3)")
    parser.add_argument("--calls", type=int, default=20, help="calls per timed batch, at most (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="batches per contender and round (default 3)")
    parser.add_argument("--verbose", action="store_true", help="every template's ratios")
    args = parser.parse_args(argv)

    from transformers.utils import chat_template_utils

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return FROZEN

    chat_template_utils.datetime = Frozen  # transformers' strftime_now reads datetime.now()

    import jinja2
    import transformers

    corpus = corpus_dir(args.corpus)
    jobs = build(corpus, args.all, args.tools, args.published)
    timed = []
    mismatches = 0
    errors = 0
    for job in jobs:
        theirs, ours, slow = contenders(job)
        expected, got, got_slow = outcome(theirs), outcome(ours), outcome(slow)
        same = got[0] == expected[0] and (got[1] == expected[1] if got[0] else got[1].startswith(expected[1][:80]))
        if not same or got_slow != got:
            mismatches += 1
            print(f"DIFFERENT: {job[0]} / {job[1]}\n  transformers: {expected!r:.300}\n  hf: {got!r:.300}")
            continue
        if not expected[0]:
            errors += 1
            continue  # both raise: not timed
        timed.append(job)
    if mismatches:
        print(f"{mismatches} outputs differ from transformers: timings would compare different work")
        return 1

    # Every round times every conversation, transformers and hf interleaved batch by batch
    # (the Jinja engine in the first round only); a round's ratios are taken within it.
    rounds: list[dict] = []
    for number in range(args.rounds):
        load = os.getloadavg()[0]
        totals: dict[str, list[float]] = {}
        per_template: dict[tuple[str, str], list[float]] = {}
        ratios: dict[str, list[float]] = {}
        for job in timed:
            calls = contenders(job)[: 3 if number == 0 else 2]
            n, once = timed_batch(calls[0], 0.005)
            n = min(n, args.calls)
            times = [float("inf")] * len(calls)
            for _ in range(args.repeats):
                for i, call in enumerate(calls):
                    times[i] = min(times[i], best_batch(call, n, 1))
            kind = kind_of(job[1])
            total = totals.setdefault(kind, [0.0, 0.0, 0.0, 0])
            for i, value in enumerate(times):
                total[i] += value
            total[3] += 1
            entry = per_template.setdefault((kind, job[0]), [0.0, 0.0])
            entry[0] += times[0]
            entry[1] += times[1]
            ratios.setdefault(kind, []).append(times[0] / times[1])
        rounds.append(
            {"load": (load + os.getloadavg()[0]) / 2, "totals": totals, "templates": per_template, "ratios": ratios}
        )
        print(f"round {number + 1}: load average {rounds[-1]['load']:.1f}", flush=True)

    n = len(timed)
    print(
        f"chat templates: {len({j[0] for j in timed})} templates, {n} renders compared and timed "
        f"({errors} where both raise: compared, not timed); corpus {corpus}; {args.rounds} rounds"
    )
    loads = ", ".join(f"{r['load']:.1f}" for r in rounds)
    print(
        f"versions: transformers {transformers.__version__}, jinja2 {jinja2.__version__}, "
        f"Python {platform.python_version()} on {platform.machine()}; "
        f"load average per round: {loads} on {os.cpu_count()} CPUs"
    )

    def spread(values: list[float]) -> str:
        return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}x"

    failed = []
    for kind in sorted(rounds[0]["totals"], key=lambda k: (k != "conversations", len(k), k)):
        first = rounds[0]["totals"][kind]
        count = first[3]
        overall = [r["totals"][kind][0] / r["totals"][kind][1] for r in rounds]
        medians = [statistics.median(r["ratios"][kind]) for r in rounds]
        names = sorted({name for (k, name) in rounds[0]["templates"] if k == kind})
        # Per template: its ratio in each round (transformers' time / hf's, summed over its conversations).
        by_template = {
            name: [r["templates"][(kind, name)][0] / r["templates"][(kind, name)][1] for r in rounds] for name in names
        }
        worst = sorted(by_template.items(), key=lambda kv: statistics.median(kv[1]))
        print(
            f"\n[{kind}] {len(names)} templates, {count} renders: transformers {first[0] / count * 1e6:.1f} us, "
            f"hf {first[1] / count * 1e6:.1f} us, hf (Jinja engine) {first[2] / count * 1e6:.1f} us per render "
            f"(round 1)"
        )
        print(f"  whole class (min / median / max over rounds): {spread(overall)}")
        print(f"  median render: {spread(medians)}")
        template_medians = [statistics.median(v) for v in by_template.values()]
        print(
            f"  per template, median over rounds: least {min(template_medians):.2f}x, "
            f"median {statistics.median(template_medians):.2f}x, most {max(template_medians):.2f}x"
        )
        print("  least gain: " + ", ".join(f"{name} {spread(values)}" for name, values in worst[:5]))
        below = [name for name, values in by_template.items() if statistics.median(values) < TARGET]
        if below:
            failed.append((kind, below))
        if args.verbose:
            for name, values in sorted(by_template.items()):
                print(f"    {name:70} {spread(values)}")
    print(
        f"\ntarget: hf >= {TARGET:.0f}x transformers on every template (median over rounds), every class: "
        + ("PASS" if not failed else "FAIL: " + "; ".join(f"{kind}: {', '.join(names)}" for kind, names in failed))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
