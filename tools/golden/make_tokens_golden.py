"""Write the token-level golden files made by the REAL transformers and lm-evaluation-harness.

For tests in plugins/tokenizers/tests (token ids of prompts, chat templates and
multiple-choice continuations). Run it with the throwaway venv's python::

    python3 -m venv /tmp/venvs/tokens
    /tmp/venvs/tokens/bin/pip install transformers tokenizers sentencepiece mistral-common protobuf
    /tmp/venvs/tokens/bin/pip install torch==2.13.0 lm-eval==0.4.13 accelerate   # CPU wheel; lm-eval's HFLM
    /tmp/venvs/tokens/bin/python tools/golden/make_tokens_golden.py [--tekken DIR]

Versions that made the committed files: see ``generator`` in
tests/golden/tokens/expected.json (transformers 5.23.0, tokenizers 0.23.3,
mistral-common 1.13.1, lm-eval 0.4.13).

What it does:

1. Copies Mistral's SentencePiece models shipped in the ``mistral-common`` wheel
   (Apache-2.0) into tokenizer folders under tests/golden/tokens/folders/
   (gzipped; ``tokenizer_config.json`` next to them names the class, the
   special tokens and the chat template, taken from the chat-template corpus),
   and saves one of them with transformers' ``save_pretrained`` to get a real
   ``tokenizer.json`` folder.
2. Derives more cases from those folders (an older ``tokenizer.json`` format,
   another tokenizer class, a bare ``tokenizer.json``, ``split_special_tokens``);
   each derivation is written into expected.json as data, and the tests apply
   the same edits.
3. For every case, loads the folder with ``AutoTokenizer.from_pretrained`` and
   records: ``tokenizer.encode(text, add_special_tokens=False/True)`` of tricky
   strings; ``apply_chat_template(conversation, tokenize=False)`` and
   ``apply_chat_template(..., tokenize=True, return_dict=False)`` of
   conversations; and, through lm-evaluation-harness's own ``HFLM.tok_encode``
   and ``HFLM.loglikelihood`` (its ``_encode_pair``), the context and
   continuation tokens of multiple-choice requests.

``--tekken DIR`` also converts Mistral's tekken tokenizer (too large to commit)
into DIR and writes tests/golden/tokens/tekken.json; its tests run when
``PROMPT_STYLE_TEKKEN_DIR=DIR`` is set.

The test suite never imports transformers or lm-eval; this script is never imported.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import importlib.metadata as md
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "golden" / "tokens"
CORPUS = Path("/work/shared/corpora/chat_templates")

TEMPLATES = {
    "v1": "llamacpp-test-mistralai-mistral-7b-instruct-v0.2-mistralai-v1-template-with-a-system-prompt",
    "v3": "hfjs-mistralai-mistral-7b-instruct-v0.3-json-schema",
    "v7": "llamacpp-test-mistralai-mistral-large-instruct-2411-mistralai-v7-template",
    "tekken": "llamacpp-mistralai-mistral-nemo-instruct-2407",
}

# Folders built from mistral-common's SentencePiece models: (name, data file, config).
SP_FOLDERS = [
    (
        "mistral-v1",
        "tokenizer.model.v1",
        {"add_bos_token": True, "add_eos_token": False, "legacy": True, "template": "v1"},
    ),
    (
        "mistral-v3",
        "mistral_instruct_tokenizer_240323.model.v3",
        {"add_bos_token": True, "add_eos_token": False, "legacy": False, "template": "v3"},
    ),
    # No add_bos_token / legacy: transformers' defaults.
    ("mistral-v7", "mistral_instruct_tokenizer_241114.model.v7", {"template": "v7"}),
]

# Cases derived from the folders above; the tests apply the same edits.
OLD_LLAMA_FORMAT = {
    "normalizer": {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    },
    "pre_tokenizer": None,
}
DERIVED = {
    # tokenizer.json as transformers 4 / Llama 2 / Mistral 7B v0.1 saved it; LlamaTokenizer rebuilds it in transformers 5.
    "mistral-v3-oldformat-llama": {
        "from": "mistral-v3-json",
        "tokenizer_json": OLD_LLAMA_FORMAT,
        "tokenizer_config": {},
    },
    # The same file under the generic class: used as it is.
    "mistral-v3-oldformat-fast": {
        "from": "mistral-v3-json",
        "tokenizer_json": OLD_LLAMA_FORMAT,
        "tokenizer_config": {"tokenizer_class": "PreTrainedTokenizerFast"},
    },
    "mistral-v3-oldformat-llama-legacy": {
        "from": "mistral-v3-json",
        "tokenizer_json": OLD_LLAMA_FORMAT,
        "tokenizer_config": {"legacy": True},
    },
    # GemmaTokenizer rebuilds the file with its own pipeline (and its default <pad>, <mask>).
    "mistral-v3-as-gemma": {"from": "mistral-v3-json", "tokenizer_config": {"tokenizer_class": "GemmaTokenizer"}},
    "mistral-v1-legacy-false": {"from": "mistral-v1", "tokenizer_config": {"legacy": False}},
    # An explicit null BOS (as Qwen's configs write it): no default BOS then.
    "mistral-v3-null-bos": {"from": "mistral-v3-json", "tokenizer_config": {"bos_token": None}},
    "mistral-v3-split-special": {"from": "mistral-v3-json", "tokenizer_config": {"split_special_tokens": True}},
    # tokenizer.json alone: PreTrainedTokenizerFast(tokenizer_file=...).
    "mistral-v3-bare": {"from": "mistral-v3-json", "bare": True},
}

STRINGS = [
    "Hello world",
    " Hello",
    "  two spaces",
    "x  y   z",
    "\nnewline",
    "trailing space ",
    " ",
    "  ",
    "",
    "A\n\nB",
    "tab\there",
    "héllo wörld",
    "你好，世界",
    "🤖 robots 🤖🤖",
    "e\u0301 (combining)",
    "ｆｕｌｌ ｗｉｄｔｈ",
    "\u00a0no-break space",
    "ﬁ ligature",
    "Answer: A",
    " A",
    "A",
    "<s>",
    "</s>",
    "<unk>",
    "<s><s>",
    "<s> after bos",
    "<s>[INST] Hi [/INST]",
    "[INST]x[/INST]",
    "a</s>b",
    "text with </s> inside",
    "[TOOL_CALLS] [AVAILABLE_TOOLS]",
    "[SYSTEM_PROMPT]sys[/SYSTEM_PROMPT]",
    "[control_8] [control_12]",
    "<pad> <mask> <bos> <eos>",
    "{{ jinja }} {% if %}",
    "Question: What is 2 + 2?\nA. 3\nB. 4\nAnswer:",
    "The word is football",
    "  leading and trailing  ",
    "\u2581 literal metaspace \u2581\u2581",
    "<0x0A> byte text",
    "1234567890 3.14159",
]

CONVERSATIONS = {
    "user": ([{"role": "user", "content": "What is the capital of France?"}], {"add_generation_prompt": True}),
    "system_multi_turn": (
        [
            {"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there"},
            {"role": "user", "content": "Who are you?"},
        ],
        {"add_generation_prompt": True},
    ),
    "special_text_in_content": (
        [
            {"role": "user", "content": "Print </s> and [INST] and <s> literally."},
            {"role": "assistant", "content": "[/INST] done </s>"},
            {"role": "user", "content": "Again: [TOOL_CALLS]"},
        ],
        {},
    ),
    "unicode_whitespace": (
        [
            {"role": "user", "content": "  Grüße 👋 你好  \n"},
            {"role": "assistant", "content": " Bonjour "},
            {"role": "user", "content": "\tTab?"},
        ],
        {},
    ),
    "empty_user": ([{"role": "user", "content": ""}], {}),
    "continue_final_message": (
        [
            {"role": "user", "content": "Finish the sentence."},
            {"role": "assistant", "content": "The capital of France is"},
        ],
        {"continue_final_message": True},
    ),
}

PAIRS = [
    ("Question: What is 2 + 2?\nAnswer:", " 4"),
    ("Question: What is 2 + 2?\nAnswer:", "4"),
    ("Question: What is 2 + 2?\nAnswer: ", "4"),
    ("Question: What is 2 + 2?\nAnswer:\n", "4"),
    ("The word is foot", "ball"),
    ("The word is", " football"),
    ("Grüße\n\n", "👋"),
    ("你好", "世界"),
    ("<s>[INST] Which one? [/INST]", " A"),
    ("<s>[INST] Which one? [/INST]", "A"),
    ("<s>[INST] Which one? [/INST] ", "A"),
    ("Say", " </s>"),
    ("", " A"),
    ("", "A"),
    ("", "<s> A"),
]


def fuzz_strings(count: int = 150, seed: int = 20250710) -> list[str]:
    """Random strings of tricky characters, special-token texts and common pieces (seeded)."""
    import random

    rnd = random.Random(seed)
    alphabet = list("abcXYZ019  \n\t.,;:'\"!?éüß你好🤖<>/[]_-\u2581\u00a0\u200b")
    alphabet += [
        "</s>",
        "<s>",
        "[INST]",
        "[/INST]",
        " the",
        "ing",
        "  ",
        "\n\n",
        " A",
        "Answer:",
        "[TOOL_CALLS]",
        "<unk>",
    ]
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30))) for _ in range(count)]


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for dist in ("transformers", "tokenizers", "sentencepiece", "mistral-common", "lm-eval", "jinja2", "torch"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def mistral_data() -> Path:
    import mistral_common

    return Path(mistral_common.__file__).parent / "data"


def template(key: str) -> str:
    return (CORPUS / "templates" / f"{TEMPLATES[key]}.jinja").read_text(encoding="utf-8")


def write_json(path: Path, data) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=1)
    # Lists of token ids on one line each: diffs stay readable, the file small.
    text = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    path.write_text(text + "\n", encoding="utf-8")


def gzip_file(src: Path, dst: Path) -> None:
    # mtime=0 and no file name: the same input gives the same bytes.
    with src.open("rb") as fin, dst.open("wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as fout:
            shutil.copyfileobj(fin, fout)


def materialize(name: str, folders: Path, work: Path) -> Path:
    """The folder of a case, as the tests build it: gunzipped, with the derivation applied."""
    target = work / name
    if target.exists():
        return target
    spec = DERIVED.get(name)
    source = folders / (spec["from"] if spec else name)
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fin, (target / path.stem).open("wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(path, target / path.name)
    if spec:
        if spec.get("tokenizer_json"):
            data = json.loads((target / "tokenizer.json").read_text(encoding="utf-8"))
            data.update(copy.deepcopy(spec["tokenizer_json"]))
            (target / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        if spec.get("tokenizer_config") is not None:
            config = json.loads((target / "tokenizer_config.json").read_text(encoding="utf-8"))
            config.update(spec["tokenizer_config"])
            write_json(target / "tokenizer_config.json", config)
        if spec.get("bare"):
            for path in target.iterdir():
                if path.name != "tokenizer.json":
                    path.unlink()
    return target


def build_folders(folders: Path) -> None:
    from transformers import AutoTokenizer

    data = mistral_data()
    if folders.exists():
        shutil.rmtree(folders)
    folders.mkdir(parents=True)
    for name, filename, spec in SP_FOLDERS:
        folder = folders / name
        folder.mkdir()
        gzip_file(data / filename, folder / "tokenizer.model.gz")
        config = {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
        config.update({k: v for k, v in spec.items() if k != "template"})
        config["chat_template"] = template(spec["template"])
        write_json(folder / "tokenizer_config.json", config)
    # A real tokenizer.json folder: mistral-v3 saved by transformers itself.
    with tempfile.TemporaryDirectory() as tmp:
        source = materialize("mistral-v3", folders, Path(tmp))
        saved = Path(tmp) / "saved"
        AutoTokenizer.from_pretrained(str(source)).save_pretrained(str(saved))
        folder = folders / "mistral-v3-json"
        folder.mkdir()
        gzip_file(saved / "tokenizer.json", folder / "tokenizer.json.gz")
        config = json.loads((saved / "tokenizer_config.json").read_text(encoding="utf-8"))
        for volatile in ("is_local", "local_files_only", "name_or_path"):
            config.pop(volatile, None)
        if (saved / "chat_template.jinja").is_file():
            config["chat_template"] = (saved / "chat_template.jinja").read_text(encoding="utf-8")
        write_json(folder / "tokenizer_config.json", config)


def load_transformers(path: Path, bare: bool):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    if bare:
        return PreTrainedTokenizerFast(tokenizer_file=str(path / "tokenizer.json"))
    return AutoTokenizer.from_pretrained(str(path))


def lm_eval_model(tokenizer):
    """lm-evaluation-harness's HFLM with this tokenizer and its defaults (add_bos_token=None), no model."""
    from lm_eval.models.huggingface import HFLM

    lm = HFLM.__new__(HFLM)
    lm.tokenizer = tokenizer
    lm.add_bos_token = None
    lm.custom_prefix_token_id = None
    lm.backend = "causal"
    lm.enable_thinking = False
    return lm


def lm_eval_pairs(lm, pairs) -> list[dict]:
    from lm_eval.api.instance import Instance

    captured: list = []

    def fake_scores(requests, **kwargs):
        captured.extend(requests)
        return [(0.0, True)] * len(requests)

    lm._loglikelihood_tokens = fake_scores
    requests = [
        Instance("loglikelihood", {}, (context, continuation), i) for i, (context, continuation) in enumerate(pairs)
    ]
    lm.loglikelihood(requests, disable_tqdm=True)
    out = []
    for (context, continuation), context_enc, continuation_enc in captured:
        out.append(
            {
                "context": context,
                "continuation": continuation,
                "context_enc": list(context_enc),
                "continuation_enc": list(continuation_enc),
                "whole": lm.tok_encode(context + continuation) if context else None,
            }
        )
    return out


def record_case(tokenizer, chat: bool) -> dict:
    case: dict = {
        "tokenizer_class": type(tokenizer).__name__,
        "bos_token": tokenizer.bos_token,
        "eos_token": tokenizer.eos_token,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    case["encode"] = [
        {
            "text": text,
            "ids": tokenizer.encode(text, add_special_tokens=False),
            "ids_special": tokenizer.encode(text, add_special_tokens=True),
        }
        for text in STRINGS
    ]
    case["fuzz"] = [tokenizer.encode(text, add_special_tokens=False) for text in fuzz_strings()]
    if tokenizer.bos_token_id is None and tokenizer.eos_token_id is None:
        # lm-eval's HFLM cannot run without a prefix token (tok_encode decodes it): nothing to record.
        return case
    lm = lm_eval_model(tokenizer)
    case["tok_encode"] = [{"text": text, "ids": lm.tok_encode(text)} for text in STRINGS if text]
    if chat and tokenizer.chat_template:
        renders = {}
        for name, (messages, kwargs) in CONVERSATIONS.items():
            try:
                text = tokenizer.apply_chat_template(messages, tokenize=False, **kwargs)
                ids = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False, **kwargs)
            except Exception as exc:  # the template raised: recorded, as transformers would report it
                renders[name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            assert ids == tokenizer.encode(text, add_special_tokens=False), name
            renders[name] = {"text": text, "ids": ids}
        case["chat"] = renders
        # Multiple choice after each chat prompt, as lm-eval scores it.
        contexts = [r["text"] for r in renders.values() if "text" in r]
        case["chat_pairs"] = lm_eval_pairs(lm, [(c, cont) for c in contexts for cont in (" A", "A", " Paris")])
    case["pairs"] = lm_eval_pairs(lm, PAIRS)
    return case


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tekken", metavar="DIR", type=Path, help="also convert tekken into DIR and record goldens")
    parser.add_argument("--keep-folders", action="store_true", help="do not rebuild tests/golden/tokens/folders")
    args = parser.parse_args()

    folders = OUT / "folders"
    if not args.keep_folders:
        build_folders(folders)
    cases = [name for name, _, _ in SP_FOLDERS] + ["mistral-v3-json"] + list(DERIVED)
    expected = {
        "generator": versions(),
        "note": "Token ids from transformers (AutoTokenizer.from_pretrained on each case's folder; "
        "PreTrainedTokenizerFast(tokenizer_file=...) for a bare file) and lm-evaluation-harness's HFLM "
        "(tok_encode, loglikelihood -> _encode_pair) with add_bos_token=None. Regenerate with "
        "tools/golden/make_tokens_golden.py.",
        "derived": DERIVED,
        "conversations": {name: {"messages": m, "kwargs": k} for name, (m, k) in CONVERSATIONS.items()},
        "fuzz_strings": fuzz_strings(),
        "cases": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in cases:
            path = materialize(name, folders, Path(tmp))
            bare = bool(DERIVED.get(name, {}).get("bare"))
            tokenizer = load_transformers(path, bare)
            expected["cases"][name] = record_case(tokenizer, chat=not bare)
            print(f"{name}: {type(tokenizer).__name__}", file=sys.stderr)
    write_json(OUT / "expected.json", expected)

    if args.tekken:
        from transformers import AutoTokenizer

        source = args.tekken / "source"
        source.mkdir(parents=True, exist_ok=True)
        shutil.copy(mistral_data() / "tekken_240718.json", source / "tekken.json")
        tokenizer = AutoTokenizer.from_pretrained(str(source))
        tokenizer.save_pretrained(str(args.tekken))
        config_path = args.tekken / "tokenizer_config.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config.update({"bos_token": "<s>", "eos_token": "</s>", "chat_template": template("tekken")})
        write_json(config_path, config)
        tokenizer = AutoTokenizer.from_pretrained(str(args.tekken))
        tekken = {
            "generator": versions(),
            "source": "mistral-common tekken_240718.json",
            "case": record_case(tokenizer, True),
        }
        tekken["conversations"] = expected["conversations"]
        tekken["fuzz_strings"] = expected["fuzz_strings"]
        write_json(OUT / "tekken.json", tekken)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
