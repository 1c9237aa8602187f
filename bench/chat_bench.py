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


def build(corpus: Path, all_conversations: bool):
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
    for name in sorted(expected["results"]):
        info = index[name]
        path = corpus / "templates" / info["file"]
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
    return jobs


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="the chat-template corpus directory (default: found next to the checkout)")
    parser.add_argument("--all", action="store_true", help="also the golden conversations (unicode, tools, ...)")
    parser.add_argument("--calls", type=int, default=20, help="calls per timed batch (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="batches per contender, fastest kept (default 5)")
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
    jobs = build(corpus, args.all)
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

    totals = [0.0, 0.0, 0.0]
    ratios = []
    per_template: dict[str, list[float]] = {}
    for job in timed:
        calls = contenders(job)
        times = [0.0, 0.0, 0.0]
        for _ in range(args.repeats):  # interleaved: each contender's batches alternate
            for i, call in enumerate(calls):
                batch = best_batch(call, args.calls, 1)
                times[i] = batch if times[i] == 0.0 else min(times[i], batch)
        for i in range(3):
            totals[i] += times[i]
        ratios.append(times[0] / times[1])
        entry = per_template.setdefault(job[0], [0.0, 0.0])
        entry[0] += times[0]
        entry[1] += times[1]

    n = len(timed)
    ratio = totals[0] / totals[1]
    print(
        f"chat templates: {len(per_template)} templates x {len({j[1] for j in timed})} conversations = {n} renders "
        f"compared and timed ({errors} where both raise: compared, not timed); corpus {corpus}"
    )
    print(
        f"versions: transformers {transformers.__version__}, jinja2 {jinja2.__version__}, "
        f"Python {platform.python_version()} on {platform.machine()}"
    )
    print(f"{'':24}{'per conversation':>18}{'conversations/s':>18}{'vs transformers':>18}")
    for label, total in (("transformers", totals[0]), ("hf", totals[1]), ("hf (Jinja engine)", totals[2])):
        print(f"{label:24}{total / n * 1e6:>15.1f} us{n / total:>18,.0f}{totals[0] / total:>17.2f}x")
    print(f"median per-conversation ratio (transformers / hf): {statistics.median(ratios):.2f}x")
    slowest = sorted(per_template.items(), key=lambda kv: kv[1][0] / kv[1][1])[:5]
    print("least gain: " + ", ".join(f"{name} {a / b:.1f}x" for name, (a, b) in slowest))
    median = statistics.median(ratios)
    print(
        f"target: hf >= {TARGET:.0f}x faster than transformers (median conversation): "
        f"{'PASS' if median >= TARGET else 'FAIL'}; (whole corpus): {'PASS' if ratio >= TARGET else 'FAIL'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
