"""Write golden files made by the REAL transformers ``apply_chat_template``, for the
tests of prompt-style-hf and prompt-style-chat-formats.

Run it with a throwaway venv's python (transformers, tokenizers, jinja2; no torch)::

    python3 -m venv /tmp/venvs/chat
    /tmp/venvs/chat/bin/pip install transformers tokenizers jinja2
    /tmp/venvs/chat/bin/python tools/golden/make_chat_golden.py [--corpus /work/shared/corpora/chat_templates]

The published templates come from packages (``--published`` re-copies them)::

    pip download --no-deps --no-binary :all: -d /tmp/pkgs llama-cpp-python==0.3.36
    pip download --no-deps --only-binary :all: -d /tmp/pkgs trl==1.16.0 axolotl==0.19.0
    # unpack them (tar xzf / unzip) under /tmp/pkgs/unpacked, then
    /tmp/venvs/chat/bin/python tools/golden/make_chat_golden.py --published /tmp/pkgs/unpacked

It is deterministic (same inputs and versions give byte-identical files) and
downloads nothing. Inputs (committed):

* ``tests/golden/transformers_chat/corpus/``: a copy of the chat-template corpus (the real
  templates, ``index.json`` with their special tokens, and ``expected.json``, the
  corpus's own transformers renders of six conversations); ``--corpus`` refreshes
  the copy from a corpus directory first.
* ``tests/golden/transformers_chat/templates/``: templates written for these goldens, each
  exercising Jinja features chat templates use (``index.json``: their tokens).
* ``tests/golden/transformers_chat/published/``: real chat templates published in PyPI
  packages under permissive licences (llama-cpp-python's copy of llama.cpp's
  template collection, trl, axolotl), byte for byte; ``index.json`` names each one's
  package, path, model and licences and the special tokens it is rendered with,
  ``NOTICE.md`` the licences. ``--published DIR`` (repeatable) re-copies the files
  named in ``index.json`` from unpacked packages (searched by file name).
* ``tests/golden/transformers_chat/conversations.json``: conversations with their keyword
  arguments (``add_generation_prompt``, ``continue_final_message``, template
  variables), tools and documents.
* ``tests/golden/transformers_chat/tool_functions.py``: Python functions passed as tools.

Outputs:

* ``tests/golden/transformers_chat/expected.json``: for every template (corpus and ours) and
  every conversation (ours, plus the corpus's six for our templates),
  ``{"ok": true, "text": ...}`` or ``{"ok": false, "error": ..., "type": ...}``,
  and ``spans`` (the ``{% generation %}`` character spans) for templates that
  have generation blocks; ``tool_schemas``: ``get_json_schema`` of each tool
  function; ``folders``: renders of the model folders below loaded with
  ``AutoTokenizer.from_pretrained`` (template precedence, named templates,
  special tokens from ``tokenizer_config.json`` / ``special_tokens_map.json``).
* ``tests/golden/transformers_chat/published/expected.json``: the published templates on
  every conversation (ours and the corpus's six), in the same form.
* ``tests/golden/transformers_chat/models/``: those small model folders (written here too).

Every render is ``PreTrainedTokenizerFast(tokenizer_object=<one-token WordLevel>,
bos_token=..., eos_token=..., chat_template=TEMPLATE).apply_chat_template(messages,
tokenize=False, tools=..., documents=..., **kwargs)`` with ``strftime_now``'s
clock frozen at 2025-07-10T12:00:00, as the corpus was made.
"""

from __future__ import annotations

import argparse
import datetime as _datetime
import importlib.util
import json
import platform
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from frozen_clock import freeze_transformers_clock  # noqa: E402  (beside this script)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "transformers_chat"
CORPUS = GOLDEN / "corpus"
OURS = GOLDEN / "templates"
PUBLISHED = GOLDEN / "published"
MODELS = GOLDEN / "models"
FROZEN = _datetime.datetime(2025, 7, 10, 12, 0, 0)


def _tokenizer(bos, eos, template):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    inner = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    return PreTrainedTokenizerFast(tokenizer_object=inner, bos_token=bos, eos_token=eos, chat_template=template)


def _result(fn):
    try:
        return {"ok": True, "text": fn()}
    except Exception as exc:  # what transformers raised
        return {"ok": False, "type": type(exc).__name__, "error": str(exc)}


def _spans(template, bos, eos, conversation):
    """The {% generation %} character spans, as apply_chat_template computes them
    for return_assistant_tokens_mask (before tokenizing)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = [{k: v for k, v in m.items() if v is not None} for m in conversation["messages"]]
    kwargs = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
    kwargs.update(conversation.get("kwargs", {}))
    kwargs.pop("continue_final_message", None)
    _, indices = render_jinja_template(
        conversations=[messages],
        tools=conversation.get("tools"),
        documents=conversation.get("documents"),
        chat_template=template,
        return_assistant_tokens_mask=True,
        **kwargs,
    )
    return [list(span) for span in indices[0]]


def _render(template, bos, eos, conversation):
    tok = _tokenizer(bos, eos, template)
    kwargs = dict(conversation.get("kwargs", {}))
    out = _result(
        lambda: tok.apply_chat_template(
            conversation["messages"],
            tools=conversation.get("tools"),
            documents=conversation.get("documents"),
            tokenize=False,
            **kwargs,
        )
    )
    if out["ok"] and "{% generation" in template.replace("{%-", "{%") and not kwargs.get("continue_final_message"):
        out["spans"] = _spans(template, bos, eos, conversation)
    return out


def _copy_corpus(source: Path) -> None:
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    (CORPUS / "templates").mkdir(parents=True)
    for name in ("README.md", "index.json", "expected.json"):
        shutil.copyfile(source / name, CORPUS / name)
    for path in sorted((source / "templates").glob("*.jinja")):
        shutil.copyfile(path, CORPUS / "templates" / path.name)


def _copy_published(trees: list[Path]) -> None:
    """Re-copy each published template from unpacked packages: the file whose path
    ends with its ``package_path`` (checked against its recorded ``sha256_16``)."""
    import hashlib

    index = json.loads((PUBLISHED / "index.json").read_text(encoding="utf-8"))
    for name, info in index.items():
        if name.startswith("_"):
            continue
        tail = info["package_path"]
        found = [p for tree in trees for p in tree.rglob(Path(tail).name) if p.as_posix().endswith(tail)]
        if not found:
            print(f"{name}: {tail} not found; kept", file=sys.stderr)
            continue
        data = found[0].read_bytes()
        if hashlib.sha256(data).hexdigest()[:16] != info["sha256_16"]:
            print(f"{name}: {found[0]} differs from the recorded version; kept", file=sys.stderr)
            continue
        (PUBLISHED / "templates" / info["file"]).write_bytes(data)


# -- model folders ----------------------------------------------------------------

FOLDER_TEMPLATE = (
    "{{ bos_token }}[{{ source }}] eos={{ eos_token }} unk={{ unk_token | default('-') }} pad={{ pad_token | default('-') }}"
    " image={{ image_token | default('-') }} audio={{ audio_token | default('-') }} tools={{ tools | length if tools else 0 }}\n"
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
)


def _template(source):
    return "{% set source = '" + source + "' %}" + FOLDER_TEMPLATE


def _added(content, special=True):
    return {
        "__type": "AddedToken",
        "content": content,
        "lstrip": False,
        "normalized": False,
        "rstrip": False,
        "single_word": False,
        "special": special,
    }


FOLDERS = {
    # chat_template.jinja wins over the config's template; added_tokens_decoder
    # present, so special_tokens_map.json is ignored; model-specific tokens.
    "jinja-over-config": {
        "chat_template.jinja": _template("chat_template.jinja"),
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "chat_template": _template("tokenizer_config"),
            "bos_token": _added("<s>"),
            "eos_token": "</s>",
            "unk_token": "<unk>",
            "image_token": "<image>",
            "extra_special_tokens": {"audio_token": "<audio>"},
            "added_tokens_decoder": {
                "1": {
                    "content": "<s>",
                    "lstrip": False,
                    "normalized": False,
                    "rstrip": False,
                    "single_word": False,
                    "special": True,
                }
            },
        },
        "special_tokens_map.json": {"bos_token": "<IGNORED>"},
    },
    # Named templates in the config (default and tool_use); no added_tokens_decoder,
    # so special_tokens_map.json overrides the config's tokens.
    "config-named": {
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "chat_template": [
                {"name": "default", "template": _template("default")},
                {"name": "tool_use", "template": _template("tool_use")},
            ],
            "bos_token": "<s>",
            "eos_token": "</s>",
            "pad_token": "<pad>",
        },
        "special_tokens_map.json": {
            "eos_token": {
                "content": "<|eot|>",
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
            }
        },
    },
    # chat_template.jinja plus additional_chat_templates/*.jinja.
    "additional-templates": {
        "chat_template.jinja": _template("default-file"),
        "additional_chat_templates/tool_use.jinja": _template("tool_use-file"),
        "additional_chat_templates/rag.jinja": _template("rag-file"),
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<bos>",
            "eos_token": "<eos>",
        },
    },
    # Named templates without a default.
    "config-no-default": {
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "chat_template": [
                {"name": "chat", "template": _template("chat")},
                {"name": "tool_use", "template": _template("tool_use")},
            ],
            "eos_token": "</s>",
        },
    },
}

FOLDER_CASES = {
    "plain": {},
    "with_tools": {"tools": "TOOLS"},
    "named_tool_use": {"chat_template": "tool_use"},
    "named_rag": {"chat_template": "rag"},
    "named_chat": {"chat_template": "chat"},
}


def _write_folders() -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    if MODELS.exists():
        shutil.rmtree(MODELS)
    vocab = {"[UNK]": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "<pad>": 4, "<bos>": 5, "<eos>": 6, "<|eot|>": 7}
    for name, files in FOLDERS.items():
        folder = MODELS / name
        folder.mkdir(parents=True)
        Tokenizer(WordLevel(vocab, unk_token="[UNK]")).save(str(folder / "tokenizer.json"))
        for file, content in files.items():
            path = folder / file
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _render_folders(conversations) -> dict:
    from transformers import AutoTokenizer

    tools = conversations["tools_user_only_gen"]["tools"]
    messages = conversations["multi_turn_gen"]["messages"]
    out = {}
    for name in FOLDERS:
        tok = AutoTokenizer.from_pretrained(str(MODELS / name))
        cases = {}
        for case, kwargs in FOLDER_CASES.items():
            kwargs = {k: (tools if v == "TOOLS" else v) for k, v in kwargs.items()}
            cases[case] = _result(lambda kw=kwargs, t=tok: t.apply_chat_template(messages, tokenize=False, **kw))
        out[name] = {"special_tokens_map": tok.special_tokens_map, "cases": cases}
    return out


def _tool_schemas() -> dict:
    from transformers.utils import get_json_schema

    spec = importlib.util.spec_from_file_location("chat_tool_functions", GOLDEN / "tool_functions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: _result(lambda f=fn: get_json_schema(f)) for name, fn in module.TOOLS.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", type=Path, help="refresh tests/golden/transformers_chat/corpus from this corpus directory first"
    )
    parser.add_argument(
        "--published",
        type=Path,
        action="append",
        help="re-copy the published templates named in published/index.json from this unpacked package tree",
    )
    args = parser.parse_args(argv)
    if args.corpus:
        _copy_corpus(args.corpus)
    if args.published:
        _copy_published(args.published)

    import jinja2
    import tokenizers
    import transformers

    freeze_transformers_clock(FROZEN)
    corpus_expected = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
    corpus_convs = corpus_expected["meta"]["conversations"]
    ours_convs = json.loads((GOLDEN / "conversations.json").read_text(encoding="utf-8"))["conversations"]
    all_convs = {**corpus_convs, **ours_convs}

    templates = {}
    corpus_index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    for name, info in sorted(corpus_index.items()):
        text = (CORPUS / "templates" / info["file"]).read_text(encoding="utf-8")
        templates[name] = ("corpus", text, info.get("bos_token"), info.get("eos_token"), ours_convs)
    ours_index = json.loads((OURS / "index.json").read_text(encoding="utf-8"))
    for path in sorted(OURS.glob("*.jinja")):
        info = ours_index.get(path.stem, {})
        text = path.read_text(encoding="utf-8")
        templates[path.stem] = ("ours", text, info.get("bos_token"), info.get("eos_token"), all_convs)

    results = {}
    for name, (origin, text, bos, eos, convs) in templates.items():
        renders = {conv: _render(text, bos, eos, convs[conv]) for conv in sorted(convs)}
        results[name] = {"origin": origin, "bos_token": bos, "eos_token": eos, "renders": renders}

    published = {}
    published_index = json.loads((PUBLISHED / "index.json").read_text(encoding="utf-8"))
    for name, info in sorted(published_index.items()):
        if name.startswith("_"):
            continue
        text = (PUBLISHED / "templates" / info["file"]).read_text(encoding="utf-8")
        bos, eos = info.get("bos_token"), info.get("eos_token")
        renders = {conv: _render(text, bos, eos, all_convs[conv]) for conv in sorted(all_convs)}
        published[name] = {"origin": "published", "bos_token": bos, "eos_token": eos, "renders": renders}

    _write_folders()
    out = {
        "meta": {
            "generated_by": "tools/golden/make_chat_golden.py",
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "jinja2": jinja2.__version__,
            "python": platform.python_version(),
            "frozen_now": FROZEN.isoformat(),
            "path": "PreTrainedTokenizerFast(tokenizer_object=WordLevel, bos/eos, chat_template)"
            ".apply_chat_template(messages, tokenize=False, tools=, documents=, **kwargs)",
        },
        "results": results,
        "folders": _render_folders(all_convs),
        "tool_schemas": _tool_schemas(),
    }
    (GOLDEN / "expected.json").write_text(
        json.dumps(out, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
    )
    n = sum(len(r["renders"]) for r in results.values())
    print(f"wrote {GOLDEN / 'expected.json'}: {len(results)} templates, {n} renders", file=sys.stderr)
    meta = dict(out["meta"], templates="published/index.json (sources and licences: published/NOTICE.md)")
    (PUBLISHED / "expected.json").write_text(
        json.dumps({"meta": meta, "results": published}, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    n = sum(len(r["renders"]) for r in published.values())
    print(f"wrote {PUBLISHED / 'expected.json'}: {len(published)} templates, {n} renders", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
