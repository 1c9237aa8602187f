"""Token-level prompts: prompt-style against transformers + lm-evaluation-harness, same run, same inputs.

Run with the throwaway venv that has transformers and lm-eval (tools/golden/README.md,
"Token-level golden files"), from the repository root::

    /tmp/venvs/tokens/bin/pip install pluggy          # once: prompt-style's one extra dependency
    /tmp/venvs/tokens/bin/python bench/tokens_bench.py [--records N] [--tokenizer PATH]

The workload is render_bench's MMLU-shaped records, 5-shot ``mcq::mmlu``, as
plain text with four continuations each: what lm-evaluation-harness sends to a
model in a loglikelihood task. Timed, each including its tokenizer's loading:

- **prompt-style**: ``load_task(..., meta_options={"tokenizer": PATH})`` and
  rendering every record: text, ``token_ids``, ``context_token_ids``,
  ``continuation_token_ids`` and the token report;
- **transformers + lm-eval**: ``AutoTokenizer.from_pretrained(PATH)`` and, on the
  texts prompt-style rendered (rendering not timed), lm-evaluation-harness's own
  ``HFLM.tok_encode(text)`` and ``HFLM.loglikelihood`` requests (its
  ``_encode_pair``) for the four continuations.

The outputs are compared id for id (a large parity check as well); the script
exits 1 if any differs. Default tokenizers: Mistral v3 from tests/golden/tokens,
as a ``tokenizer.json`` folder and as a SentencePiece model.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT / "core", *sorted((ROOT / "plugins").glob("*/src"))):
    sys.path.insert(0, str(path))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import render_bench  # noqa: E402

import prompt_style  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "tokens" / "folders"


def golden_folder(name: str, work: Path) -> Path:
    target = work / name
    target.mkdir()
    for path in (GOLDEN / name).iterdir():
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fin, (target / path.stem).open("wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(path, target / path.name)
    return target


def manager():
    plugins = [(name, importlib.import_module(f"prompt_style_{name}")) for name in ("mmlu", "tokenizers")]
    return prompt_style.create_plugin_manager(entry_points=False, environ={}, plugins=plugins)


def run_prompt_style(task_file: Path, tokenizer: Path):
    task = prompt_style.load_task(task_file, plugins=manager(), meta_options={"tokenizer": str(tokenizer)})
    return [
        (p.text, p.continuations, p.token_ids, p.context_token_ids, p.continuation_token_ids) for p in task.render()
    ]


def run_lm_eval(tokenizer_path: Path, prompts):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoTokenizer

    lm = HFLM.__new__(HFLM)
    lm.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path))
    lm.add_bos_token = None
    lm.custom_prefix_token_id = None
    lm.backend = "causal"
    lm.enable_thinking = False
    captured: list = []
    lm._loglikelihood_tokens = lambda requests, **kw: captured.extend(requests) or [(0.0, True)] * len(requests)
    out = []
    for text, continuations, *_ in prompts:
        ids = lm.tok_encode(text)
        captured.clear()
        requests = [Instance("loglikelihood", {}, (text, c), i) for i, c in enumerate(continuations)]
        lm.loglikelihood(requests, disable_tqdm=True)
        contexts = {tuple(context) for _, context, _ in captured}
        out.append((ids, [list(c) for c in contexts], [list(cont) for _, _, cont in captured]))
    return out


def bench(task_file: Path, tokenizer: Path, label: str) -> bool:
    started = time.perf_counter()
    ours = run_prompt_style(task_file, tokenizer)
    ours_time = time.perf_counter() - started
    started = time.perf_counter()
    theirs = run_lm_eval(tokenizer, ours)
    theirs_time = time.perf_counter() - started
    different = 0
    for (_, _, ids, context, pieces), (their_ids, their_contexts, their_pieces) in zip(ours, theirs):
        if ids != their_ids or [context] != their_contexts or pieces != their_pieces:
            different += 1
    n = len(ours)
    tokens = sum(len(item[2]) for item in ours)
    print(
        f"{label}: {n} records, {tokens} prompt tokens, 4 continuations each\n"
        f"  prompt-style (render + tokens)        {ours_time:7.2f} s  {n / ours_time:8.0f} records/s\n"
        f"  transformers + lm-eval (tokens only)  {theirs_time:7.2f} s  {n / theirs_time:8.0f} records/s\n"
        f"  ratio: prompt-style is {theirs_time / ours_time:.2f}x the baseline's speed; "
        f"records whose ids differ: {different}"
    )
    return different == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2000, help="records to render (default 2000)")
    parser.add_argument("--tokenizer", type=Path, action="append", help="a tokenizer path (repeatable)")
    args = parser.parse_args(argv)
    import lm_eval
    import transformers

    print(f"transformers {transformers.__version__}, lm-eval {lm_eval.__version__}, Python {sys.version.split()[0]}")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ws = render_bench.Workspace(work, n=args.records)
        tokenizers = args.tokenizer or [golden_folder("mistral-v3-json", work), golden_folder("mistral-v3", work)]
        for path in tokenizers:
            ok &= bench(ws.plain_task, path, str(path.name))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
