"""Write the turn-by-turn token goldens (``tokenize=turns``), made by the REAL openchat
``ochat`` package and transformers.

Run it with the chat venv's python (transformers 5.23.0, tokenizers 0.23.3), after
adding what it reads SentencePiece models and ochat's conversation template with::

    /tmp/venvs/chat/bin/pip install sentencepiece==0.2.3 protobuf
    /tmp/venvs/chat/bin/pip install ochat==3.6.1 --no-deps   # its conversation template (pydantic only)
    /tmp/venvs/chat/bin/python tools/golden/make_turns_golden.py

Output: ``tests/golden/tokens/turns.json.gz`` (versions under ``generator``), read by
``plugins/tokenizers/tests/test_turns_golden.py``.

What it records:

1. ``ochat.published``: openchat's own reference tokens. ochat 3.6.1's test
   (``ochat/tests/test_model_config.py``, inference mode) lists the tokens its
   ``ConversationTemplate`` builds for two conversations with openchat 3.5's real
   tokenizer (``openchat/openchat_3.5``, ``imone/Mistral_7B_with_EOT_token``):
   the BOS, then each message's role prefix, content and end-of-turn token
   tokenized one by one. They are copied here as ochat ships them, with
   ochat's Hugging Face chat template for that model (``hf_chat_template`` of
   ``openchat_v3.2_mistral``, read from the installed package).
2. ``derived``: the tokenizer folders the tests build: Mistral 7B v0.1's
   SentencePiece model (``tests/golden/tokens/folders/mistral-v1``, which openchat
   3.5 is fine-tuned from) with the two tokens openchat adds (``<|end_of_turn|>``
   32000, ``<|pad_0|>`` 32001) and ochat's template, with ``legacy`` true and false.
   (openchat's own ``tokenizer_config.json`` is not available offline; the
   published tokens above check the rebuilt folder.)
3. ``ochat.runs``: ochat's ``ConversationTemplate.tokenize_conversations`` itself
   (loaded from the installed package, training and inference mode, condition
   ``GPT4 Correct``) on those folders through transformers' ``AutoTokenizer``, for
   more conversations (system prompts, multi-turn, contents with leading spaces
   and special-token text, where ochat's finer cut differs); beside them the
   turn-by-turn ids below and transformers' whole-string ids.
4. ``corpus``: every template of the chat-template corpus
   (``tests/golden/transformers_chat/corpus``) on its six conversations, cut into
   pieces by rendering prefixes with transformers' ``apply_chat_template(tokenize=False)``
   (the first *k* messages as a closed transcript; what the whole render adds to the
   last prefix is the generation prompt; a prefix that is not the start of the whole
   text gives no boundary), each piece tokenized by transformers on its own
   (``encode(piece, add_special_tokens=False)``, a BOS the template writes at the
   start a piece of its own), for two real tokenizers (``mistral-v3-json``: a
   ``tokenizer.json``, ``legacy`` false; ``mistral-v1``: SentencePiece, ``legacy``
   true), and ``apply_chat_template(tokenize=True)``'s ids where they differ.

The test suite never imports transformers or ochat; this script is never imported.
"""

from __future__ import annotations

import ast
import copy
import datetime as _datetime
import gzip
import importlib.metadata as md
import importlib.util
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from frozen_clock import freeze_transformers_clock  # noqa: E402  (beside this script)

ROOT = Path(__file__).resolve().parents[2]
TOKENS = ROOT / "tests" / "golden" / "tokens"
CORPUS = ROOT / "tests" / "golden" / "transformers_chat" / "corpus"
FROZEN = _datetime.datetime(2025, 7, 10, 12, 0, 0)
CORPUS_TOKENIZERS = ("mistral-v3-json", "mistral-v1")


def _token(content: str) -> dict:
    return {
        "content": content,
        "lstrip": False,
        "normalized": False,
        "rstrip": False,
        "single_word": False,
        "special": True,
    }


def openchat_config(template: str, legacy: bool) -> dict:
    """openchat 3.5's tokenizer_config.json as the tests write it over mistral-v1's."""
    return {
        "added_tokens_decoder": {
            "0": _token("<unk>"),
            "1": _token("<s>"),
            "2": _token("</s>"),
            "32000": _token("<|end_of_turn|>"),
            "32001": _token("<|pad_0|>"),
        },
        "additional_special_tokens": ["<|end_of_turn|>", "<|pad_0|>"],
        "eos_token": "<|end_of_turn|>",
        "legacy": legacy,
        "chat_template": template,
    }


# ochat conversations: (name, system, [(role, content)], inference). Inference mode ends with an
# empty assistant message (ochat's server appends it): the generation prompt of the chat template.
OCHAT_CONVERSATIONS = [
    ("user_gen", "", [("user", "Who won the 2018 World Cup?"), ("assistant", "")], True),
    (
        "multi_turn_gen",
        "",
        [
            ("user", "What's the weather like?"),
            ("assistant", "I'm an AI and don't have access to real-time data."),
            ("user", "Oh, right. How can I know?"),
            ("assistant", ""),
        ],
        True,
    ),
    ("system_gen", "You are a helpful assistant.", [("user", "Hi"), ("assistant", "")], True),
    (
        "training_transcript",
        "You are a helpful assistant.",
        [
            ("user", "Can you recommend a book?"),
            ("assistant", "Sure. 'Sapiens' by Yuval Noah Harari is a great read."),
            ("user", "What's it about?"),
            ("assistant", "The history of the human species."),
        ],
        False,
    ),
    (
        "unicode",
        "",
        [("user", "Grüße 👋 你好, ça va?"), ("assistant", "Très bien, merci !"), ("user", "日本語は?")],
        False,
    ),
    ("newlines", "", [("user", "Line one\nLine two\n\nA. 3\nB. 4\nAnswer:"), ("assistant", "")], True),
    # Where ochat's finer cut (role prefix | content | end of turn) differs from a message's text:
    ("leading_space", "", [("user", " Hello there"), ("assistant", "  Two spaces"), ("user", "x")], False),
    ("special_text", "", [("user", "What do <s> </s> <|end_of_turn|> mean?"), ("assistant", "")], True),
]


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for dist in ("transformers", "tokenizers", "sentencepiece", "ochat", "pydantic", "jinja2"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def write_json_gz(path: Path, data) -> None:
    """Indented JSON, lists of ids on one line, gzipped reproducibly (mtime 0, no file name)."""
    text = json.dumps(data, ensure_ascii=False, indent=1)
    text = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
        out.write((text + "\n").encode("utf-8"))


def freeze_clock() -> None:
    freeze_transformers_clock(FROZEN)


# -- ochat ---------------------------------------------------------------------------


def ochat_dir() -> Path:
    spec = importlib.util.find_spec("ochat")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install ochat==3.6.1 --no-deps into this venv first")
    return Path(list(spec.submodule_search_locations)[0])


def ochat_template_module():
    """ochat/config/conversation_template.py, loaded on its own (its package imports torch)."""
    path = ochat_dir() / "config" / "conversation_template.py"
    spec = importlib.util.spec_from_file_location("ochat_conversation_template", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ochat_config_source() -> tuple:
    """From ochat/config/__init__.py (not importable without torch): ``_v3_2_role_prefix``
    and ``openchat_v3.2_mistral``'s ``hf_chat_template`` and ``eot``, read with ``ast``."""
    source = (ochat_dir() / "config" / "__init__.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    namespace: dict = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "_v3_2_role_prefix":
            exec(compile(ast.Module([node], []), "ochat/config/__init__.py", "exec"), namespace)
    config = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "openchat_v3.2_mistral":
                    config = value
    assert config is not None
    keywords = {k.arg: k.value for k in config.keywords}
    template = ast.literal_eval(keywords["hf_chat_template"])
    conversation = {k.arg: k.value for k in keywords["conversation_template"].keywords}
    eot = ast.literal_eval(conversation["eot"])
    condition = ast.literal_eval(conversation["inference_condition"])
    return namespace["_v3_2_role_prefix"], template, eot, condition


def ochat_published() -> list[dict]:
    """The inference-mode conversations and openchat_v3.2_mistral's expected tokens of
    ochat's own test, read with ``ast``."""
    tree = ast.parse((ochat_dir() / "tests" / "test_model_config.py").read_text(encoding="utf-8"))
    found = None
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]
    conversations = [ast.literal_eval(n.value) for n in assigns if n.targets[0].id == "conversations"]
    testcases = [ast.literal_eval(n.value) for n in assigns if n.targets[0].id == "testcases"]
    inference, cases = conversations[1], testcases[1]
    for case in cases:
        if case["type"] == "openchat_v3.2_mistral":
            found = case
    assert found is not None
    out = []
    for conversation, expected in zip(inference, found["expected_tokens"]):
        messages = ([{"role": "system", "content": conversation["system"]}] if conversation.get("system") else []) + [
            {"role": item["role"], "content": item["content"]} for item in conversation["items"]
        ]
        assert messages[-1] == {"role": "assistant", "content": ""}
        out.append(
            {
                "ochat": conversation,
                "messages": messages[:-1],
                "kwargs": {"add_generation_prompt": True},
                "expected_tokens": expected,
                "tokenizers": list(found["model"]),
            }
        )
    return out


def ochat_tokens(module, tokenizer, role_prefix, eot, condition, system, items, inference) -> list[int]:
    template = module.ConversationTemplate(
        tokenizer=tokenizer, role_prefix=role_prefix, eot=eot, inference_condition=condition
    )
    messages = [module.Message(role=r, content=c, weight=1.0) for r, c in items]
    conversation = module.Conversation(items=messages, system=system, condition=condition)
    tokens, _ = template.tokenize_conversations([conversation], inference=inference)
    return tokens[0]


# -- turn by turn, in transformers ------------------------------------------------------


def turn_pieces(tokenizer, messages, kwargs, render=None):
    """The pieces of one conversation (prompt-style's tokenize=turns definition), by transformers."""
    render = render or (lambda m, **kw: tokenizer.apply_chat_template(m, tokenize=False, **kw))
    text = render(messages, **kwargs)
    closed = {**kwargs, "add_generation_prompt": False, "continue_final_message": False}
    pieces, start, pending = [], 0, []
    for k in range(1, len(messages) + 1):
        pending.append(k - 1)
        try:
            prefix = render(messages[:k], **closed)
        except Exception:
            continue
        if len(prefix) < start or not text.startswith(prefix):
            continue
        if len(prefix) > start:
            pieces.append((pending, text[start : len(prefix)]))
        pending = []
        start = len(prefix)
    rest = text[start:]
    if pending:
        pieces.append((pending, rest))
    elif rest:
        pieces.append(([], rest))
    pieces = [p for p in pieces if p[1]]
    bos = tokenizer.bos_token
    if pieces and bos and bos in tokenizer.get_added_vocab() and pieces[0][1].startswith(bos):
        turns, first = pieces[0]
        pieces = [([], bos), *([(turns, first[len(bos) :])] if len(first) > len(bos) else []), *pieces[1:]]
    return text, pieces


def turn_ids(tokenizer, pieces) -> list[int]:
    ids: list[int] = []
    for _, piece in pieces:
        ids += tokenizer.encode(piece, add_special_tokens=False)
    return ids


def record(tokenizer, messages, kwargs, render=None) -> dict:
    text, pieces = turn_pieces(tokenizer, messages, kwargs, render)
    ids = turn_ids(tokenizer, pieces)
    whole = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False, **kwargs)
    assert whole == tokenizer.encode(text, add_special_tokens=False)
    ends, pos = [], 0
    for _, piece in pieces:
        pos += len(piece)
        ends.append(pos)
    out = {"ends": ends, "turns": [list(t) for t, _ in pieces], "ids": ids}
    if whole != ids:
        out["whole"] = whole
    return out


# -- folders --------------------------------------------------------------------------


def materialize(name: str, derived: dict, work: Path) -> Path:
    target = work / name
    if target.exists():
        return target
    spec = derived.get(name)
    source = TOKENS / "folders" / (spec["from"] if spec else name)
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fin, (target / path.stem).open("wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copy(path, target / path.name)
    if spec:
        config = json.loads((target / "tokenizer_config.json").read_text(encoding="utf-8"))
        config.update(copy.deepcopy(spec["tokenizer_config"]))
        (target / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return target


def main() -> int:
    from transformers import AutoTokenizer

    freeze_clock()
    role_prefix, template, eot, condition = ochat_config_source()
    module = ochat_template_module()
    derived = {
        "openchat-3.5": {"from": "mistral-v1", "tokenizer_config": openchat_config(template, True)},
        "openchat-3.5-legacy-false": {"from": "mistral-v1", "tokenizer_config": openchat_config(template, False)},
    }
    out: dict = {
        "generator": versions(),
        "note": "Turn-by-turn token ids (tokenize=turns) from openchat's ochat 3.6.1 and transformers; "
        "regenerate with tools/golden/make_turns_golden.py.",
        "derived": derived,
        "ochat": {
            "source": "ochat 3.6.1 (PyPI): ochat/config/conversation_template.py, ochat/config/__init__.py "
            "(openchat_v3.2_mistral, serving alias openchat_3.5), ochat/tests/test_model_config.py",
            "template": template,
            "eot": eot,
            "condition": condition,
            "published": ochat_published(),
            "conversations": {
                name: {"system": system, "items": items, "inference": inference}
                for name, system, items, inference in OCHAT_CONVERSATIONS
            },
            "runs": {},
        },
        "corpus": {"tokenizers": list(CORPUS_TOKENIZERS), "results": {}},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in derived:
            tokenizer = AutoTokenizer.from_pretrained(str(materialize(name, derived, work)))
            runs = out["ochat"]["runs"][name] = {}
            for case in out["ochat"]["published"]:
                ids = ochat_tokens(
                    module,
                    tokenizer,
                    role_prefix,
                    eot,
                    condition,
                    case["ochat"].get("system", ""),
                    [(i["role"], i["content"]) for i in case["ochat"]["items"]],
                    True,
                )
                case.setdefault("ochat_on_folder", {})[name] = ids == case["expected_tokens"]
            for conv_name, system, items, inference in OCHAT_CONVERSATIONS:
                messages = ([{"role": "system", "content": system}] if system else []) + [
                    {"role": r, "content": c} for r, c in items
                ]
                if inference:
                    assert messages[-1] == {"role": "assistant", "content": ""}
                    messages = messages[:-1]
                kwargs = {"add_generation_prompt": inference}
                entry = record(tokenizer, messages, kwargs)
                entry["ochat"] = ochat_tokens(module, tokenizer, role_prefix, eot, condition, system, items, inference)
                entry["messages"] = messages
                entry["kwargs"] = kwargs
                runs[conv_name] = entry
                print(f"{name} {conv_name}: ochat == turns: {entry['ochat'] == entry['ids']}", file=sys.stderr)

        index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
        conversations = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))["meta"]["conversations"]
        out["corpus"]["conversations"] = conversations
        for name in CORPUS_TOKENIZERS:
            tokenizer = AutoTokenizer.from_pretrained(str(materialize(name, derived, work)))
            results = out["corpus"]["results"][name] = {}
            for key, entry in sorted(index.items()):
                tokenizer.chat_template = (CORPUS / "templates" / entry["file"]).read_text(encoding="utf-8")
                cases = results[key] = {}
                for conv_name, conversation in conversations.items():
                    try:
                        cases[conv_name] = record(tokenizer, conversation["messages"], conversation["kwargs"])
                    except Exception as exc:  # the template raised (transformers would too): skipped
                        cases[conv_name] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            differ = sum("whole" in c for r in results.values() for c in r.values())
            print(f"corpus {name}: {len(results)} templates, {differ} renders differ from whole", file=sys.stderr)
    write_json_gz(TOKENS / "turns.json.gz", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
