"""Random conversations through chat templates: prompt-style's ``hf`` (both engines,
and the meta template's ``apply_messages``) against the real transformers
``apply_chat_template(tokenize=False)``, in one process.

A check to run after changing prompt_style_hf, beside the committed goldens; it
writes nothing. It needs the transformers venv of make_chat_golden.py::

    /tmp/venvs/chat/bin/python tools/golden/fuzz_chat_templates.py [--templates 'DIR/*.jinja'] [--seed N] [--per-template N] [--wellformed] [--quiet]

Default templates: the committed corpus copy, the feature templates and the
published templates (``--templates`` takes any others, such as a directory of
templates unpacked from packages). Each
conversation mixes roles (system, user, assistant, tool, developer, ...),
contents (empty, whitespace, newlines, unicode, template syntax, special-token
text, content lists of text/image/video parts, non-strings, ``None``, missing),
tool calls (arguments as a dict or a JSON string, with or without ``id`` and
``type``), reasoning under each of its names, ``name`` fields and extra keys,
system-only and empty conversations, ``add_generation_prompt`` /
``continue_final_message`` (on ``content`` or a reasoning field, and both at
once), extra template variables, tools, documents, and special tokens present or
not; ``--wellformed`` makes conversations as chat APIs send them instead (most
render without raising). A difference in text, in whether an error is raised, or
in the error message (transformers' message must be in ours) is printed; the
exit status is the number of differences (capped at 100).
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "core"), str(ROOT / "plugins" / "hf" / "src")]
GOLDEN = ROOT / "tests" / "golden" / "transformers_chat"
FROZEN = datetime(2025, 7, 10, 12, 0, 0)
TEXTS = [
    "",
    " ",
    "\n",
    "Hello",
    "  padded  ",
    "multi\nline\n",
    "{{ x }}",
    "{% if %}",
    "{# c #}",
    "}}%}",
    "<|im_end|>",
    "<|eot_id|>",
    "<start_of_turn>",
    "</s>",
    "é 你好 🤖",
    "👨\u200d👩\u200d👧 \u200f\u05e9\u05dc\u05d5\u05dd",
    "a" * 50,
    "\t",
    "\r\n",
    "\u2028",
    "'q\"uote\\",
    "</think>x",
    "<think>r</think>answer",
    "[INST]",
    "None",
    "0",
]
ROLES = ["system", "user", "assistant", "tool", "developer", "ipython", "function", "observation", "User"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City"}},
                "required": ["city"],
            },
        },
    }
]
MORE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web for {{ q }} & <b>",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "enum": ["a", "b"]},
                    "n": {"type": "integer", "default": 3},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["q"],
            },
            "return": {"type": "string"},
        },
    },
    {"name": "bare_tool", "description": "no type wrapper", "parameters": {"type": "object", "properties": {}}},
]
DOCUMENTS = [
    [{"title": "Doc", "text": "Paris is in France."}],
    [{"title": "é", "text": "{{ x }}"}, {"text": "untitled"}],
    [{"doc_id": 1, "content": "c", "source": "s"}],
]
# Template variables real templates read (and some they do not).
VARIABLES = {
    "enable_thinking": [True, False],
    "thinking": [True, False],
    "reasoning_effort": ["low", "medium", "high"],
    "date_string": ["26 Jul 2024"],
    "tools_in_user_message": [True, False],
    "add_vision_id": [True, False],
    "custom_instructions": ["Be terse."],
    "builtin_tools": [["code_interpreter", "brave_search"]],
    "keep_cots": [True],
    "xml_tools": [True],
    "system_message": ["SYS"],
    "model_identity": ["I am M."],
    "unrelated_extra": [{"nested": [1, "two", None]}],
}


def conversation(rng: random.Random):
    def text():
        return rng.choice(TEXTS) + rng.choice(TEXTS)

    def content():
        r = rng.random()
        if r < 0.7:
            return text()
        if r < 0.88:
            parts = []
            for _ in range(rng.randint(0, 3)):
                kind = rng.choice(["text", "text", "image", "image_url", "video", "audio", "untyped"])
                if kind == "text":
                    parts.append({"type": "text", "text": rng.choice(TEXTS)})
                elif kind == "image":
                    parts.append(rng.choice([{"type": "image"}, {"type": "image", "image": "http://x/i.png"}]))
                elif kind == "image_url":
                    parts.append({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}})
                elif kind == "untyped":
                    parts.append({"text": rng.choice(TEXTS)})
                else:
                    parts.append({"type": kind})
            return parts
        return rng.choice([None, 7, 1.5, True, ["x"], {"text": "y"}, "", []])

    def tool_call():
        arguments = rng.choice([{"a": 1}, '{"a": 1}', {}, "", {"city": "Paris", "n": [1, 2], "o": {"k": None}}])
        call = {
            "id": "abcdefghi",
            "type": "function",
            "function": {"name": rng.choice(["f", "get_weather"]), "arguments": arguments},
        }
        r = rng.random()
        if r < 0.15:
            del call["type"]
        elif r < 0.25:
            del call["id"]
        elif r < 0.3:
            call = {"name": "f", "arguments": arguments}  # flat, no "function" wrapper
        return call

    def message():
        role = rng.choice(ROLES) if rng.random() < 0.3 else rng.choice(["user", "assistant"])
        m = {"role": role, "content": content()}
        if rng.random() < 0.12:
            m["tool_calls"] = [tool_call() for _ in range(rng.choice([0, 1, 1, 2]))]
            if rng.random() < 0.3:
                m["content"] = rng.choice([None, ""])
        r = rng.random()
        if r < 0.04:
            m["reasoning_content"] = rng.choice(TEXTS)
        elif r < 0.07:
            m["thinking"] = rng.choice(TEXTS)
        elif r < 0.09:
            m["reasoning"] = rng.choice(TEXTS)
        if rng.random() < 0.08:
            m["name"] = rng.choice([None, "alice", "", "f"])
        if rng.random() < 0.05:
            m.update(rng.choice([{"weight": 0}, {"metadata": {"k": "v"}}, {"id": "m1"}, {"tool_call_id": None}]))
        if role == "tool" and rng.random() < 0.9:
            m["tool_call_id"] = "abcdefghi"
        if rng.random() < 0.02:
            del m["content"]
        if rng.random() < 0.01:
            del m["role"]
        return m

    shape = rng.random()
    if shape < 0.02:
        messages = []
    elif shape < 0.06:
        messages = [{"role": "system", "content": text()}]
    elif shape < 0.1:
        messages = [{"role": "user", "content": text()} for _ in range(rng.randint(2, 4))]
    elif shape < 0.14:
        messages = [
            {"role": "user", "content": text()},
            {"role": "assistant", "content": None, "tool_calls": [tool_call()]},
            {"role": "tool", "content": text(), "tool_call_id": "abcdefghi"},
        ]
        if rng.random() < 0.5:
            messages.append({"role": "assistant", "content": text()})
    else:
        messages = [message() for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.5:
            messages[0] = {"role": "system", "content": rng.choice(TEXTS)}
    kwargs = {}
    r = rng.random()
    if r < 0.4:
        kwargs["add_generation_prompt"] = True
    elif r < 0.52:
        kwargs["continue_final_message"] = True
    elif r < 0.55:
        kwargs["continue_final_message"] = rng.choice(["reasoning_content", "thinking", "content"])
    elif r < 0.57:
        kwargs["continue_final_message"] = True
        kwargs["add_generation_prompt"] = True
    for name in rng.sample(sorted(VARIABLES), rng.choice([0, 0, 1, 2, 3])):
        kwargs[name] = rng.choice(VARIABLES[name])
    r = rng.random()
    tools = TOOLS if r < 0.15 else (TOOLS + MORE_TOOLS if r < 0.22 else ([] if r < 0.24 else None))
    documents = rng.choice(DOCUMENTS) if rng.random() < 0.08 else None
    return messages, kwargs, tools, documents


def wellformed_conversation(rng: random.Random):
    """A conversation as a chat API sends one (what most templates render without
    raising): an optional system turn, user and assistant turns alternating, tool
    calls answered by tool turns, reasoning on some assistant turns, ending on a
    user turn (a generation prompt) or an assistant turn (continued)."""
    text = lambda: rng.choice(TEXTS[3:]) + rng.choice(TEXTS)  # noqa: E731 - non-empty first part
    messages = [{"role": "system", "content": text()}] if rng.random() < 0.5 else []
    for _ in range(rng.randint(1, 3)):
        messages.append({"role": "user", "content": text()})
        if rng.random() < 0.4:
            calls = [
                {
                    "id": f"call{k}abcde",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": rng.choice([{"city": "Paris"}, '{"city": "Oslo"}']),
                    },
                }
                for k in range(rng.choice([1, 1, 2]))
            ]
            messages.append({"role": "assistant", "content": rng.choice(["", text()]), "tool_calls": calls})
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"], "name": "get_weather", "content": text()})
        assistant = {"role": "assistant", "content": text()}
        if rng.random() < 0.3:
            assistant["reasoning_content"] = text()
        messages.append(assistant)
    kwargs = {}
    if rng.random() < 0.75:
        messages.append({"role": "user", "content": text()})
        kwargs["add_generation_prompt"] = rng.random() < 0.8
    else:
        kwargs["continue_final_message"] = True
    for name in rng.sample(sorted(VARIABLES), rng.choice([0, 1, 2])):
        kwargs[name] = rng.choice(VARIABLES[name])
    tools = TOOLS if rng.random() < 0.5 else None
    documents = rng.choice(DOCUMENTS[:2]) if rng.random() < 0.1 else None
    return messages, kwargs, tools, documents


def _same_error(theirs, ours) -> bool:
    """Both raised, with transformers' message (ours may add where: a sandbox error
    names the template line and says what templates may not do)."""
    return theirs[0] == ours[0] == "error" and (ours[1] == theirs[1] or (theirs[1] and theirs[1] in ours[1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", action="append", help="a glob of .jinja files (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-template", type=int, default=40)
    parser.add_argument("--quiet", action="store_true", help="one line per difference")
    parser.add_argument(
        "--wellformed", action="store_true", help="conversations as chat APIs send them (fewer that templates refuse)"
    )
    args = parser.parse_args(argv)

    from prompt_style_hf.chat_template import ChatTemplate
    from prompt_style_hf.meta import hf_meta
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast
    from transformers.utils import chat_template_utils

    from prompt_style import ChatTemplateError, PromptStyleError

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return FROZEN

    chat_template_utils.datetime = Frozen
    patterns = args.templates or [
        str(GOLDEN / "corpus" / "templates" / "*.jinja"),
        str(GOLDEN / "templates" / "*.jinja"),
        str(GOLDEN / "published" / "templates" / "*.jinja"),
    ]
    files = sorted({f for pattern in patterns for f in glob.glob(pattern)})
    rng = random.Random(args.seed)
    differences = total = errors = skipped = 0
    # A template that transformers cannot compile either is skipped; one only we cannot compile is a difference.

    def report(name, how, case, theirs, ours):
        nonlocal differences
        differences += 1
        print(f"DIFFERENT {name} ({how}): {json.dumps(case, ensure_ascii=False)[:300]}")
        if not args.quiet:
            print(f"  transformers: {theirs!r:.300}\n  prompt-style: {ours!r:.300}")

    for path in files:
        name = Path(path).name
        source = Path(path).read_text(encoding="utf-8")
        # Special tokens as most models name them, or none (then the template sees none).
        bos, eos = rng.choice([("<s>", "</s>"), ("<s>", "</s>"), (None, "<|im_end|>"), (None, None)])
        tokens = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
        inner = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=inner, chat_template=source, **tokens)
        try:
            chat_template_utils._compile_jinja_template(source)
            theirs_compiles = None
        except Exception as exc:
            theirs_compiles = str(exc)
        try:
            engines = [ChatTemplate(source), ChatTemplate(source, engine="jinja")]
            # The meta template's one-call path (apply_messages).
            meta = hf_meta({"chat_template": source, "bos_token": bos, "eos_token": eos, "now": FROZEN})
        except ChatTemplateError as exc:
            if theirs_compiles is None:
                report(name, "compile", None, "compiles", exc.message)
            else:
                skipped += 1
            continue
        if theirs_compiles is not None:
            report(name, "compile", None, theirs_compiles, "compiles")
            continue
        for _ in range(args.per_template):
            messages, kwargs, tools, documents = (wellformed_conversation if args.wellformed else conversation)(rng)
            case = [messages, kwargs, tools is not None, documents is not None]
            total += 1
            try:
                theirs = (
                    "ok",
                    tokenizer.apply_chat_template(messages, tools=tools, documents=documents, tokenize=False, **kwargs),
                )
            except Exception as exc:  # what transformers raised
                theirs = ("error", str(exc))
            errors += theirs[0] == "error"
            variables = {
                k: v for k, v in kwargs.items() if k not in ("add_generation_prompt", "continue_final_message")
            }
            variables = {**tokens, **variables}
            for engine in engines:
                try:
                    ours = (
                        "ok",
                        engine.render(
                            messages,
                            tools=tools,
                            documents=documents,
                            add_generation_prompt=kwargs.get("add_generation_prompt", False),
                            continue_final_message=kwargs.get("continue_final_message", False),
                            variables=variables,
                            now=FROZEN,
                        ).text,
                    )
                except ChatTemplateError as exc:
                    ours = ("error", exc.template_message)
                except PromptStyleError as exc:
                    ours = ("error", str(exc))
                if ours != theirs and not _same_error(theirs, ours):
                    report(name, engine.engine, case, theirs, ours)
            try:
                ours = ("ok", meta.apply_messages(messages, tools=tools, documents=documents, **kwargs).text)
            except ChatTemplateError as exc:
                ours = ("error", exc.template_message)
            except PromptStyleError as exc:
                ours = ("error", str(exc))
            if ours != theirs and not _same_error(theirs, ours):
                report(name, "hf apply_messages", case, theirs, ours)
    print(
        f"{len(files)} templates ({skipped} that neither compiles skipped), {total} conversations "
        f"({errors} raised in transformers), 2 engines and apply_messages: {differences} differences"
    )
    return min(differences, 100)


if __name__ == "__main__":
    sys.exit(main())
