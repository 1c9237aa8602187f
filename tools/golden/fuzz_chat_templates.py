"""Random conversations through chat templates: prompt-style's ``hf`` (both engines,
and the meta template's ``apply_messages``) against the real transformers
``apply_chat_template(tokenize=False)``, in one process.

A check to run after changing prompt_style_hf, beside the committed goldens; it
writes nothing. It needs the transformers venv of make_chat_golden.py::

    /tmp/venvs/chat/bin/python tools/golden/fuzz_chat_templates.py [--templates 'DIR/*.jinja'] [--seed N] [--per-template N]

Default templates: the committed corpus copy and the feature templates. Each
conversation mixes roles (system, user, assistant, tool, developer, ...),
contents (empty, whitespace, newlines, unicode, template syntax, special-token
text, multimodal parts, non-strings, ``None``), tool calls, reasoning,
``add_generation_prompt`` / ``continue_final_message``, ``enable_thinking`` and
tools. A difference in text or error message is printed; the exit status is the
number of differences (capped at 100).
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
    "<|im_end|>",
    "</s>",
    "é 你好 🤖",
    "a" * 50,
    "\t",
    "</think>x",
    "<think>r</think>answer",
    "[INST]",
]
ROLES = ["system", "user", "assistant", "tool", "developer", "ipython"]
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


def conversation(rng: random.Random):
    def content():
        r = rng.random()
        if r < 0.8:
            return rng.choice(TEXTS) + rng.choice(TEXTS)
        if r < 0.9:
            return [{"type": "text", "text": rng.choice(TEXTS)}] + ([{"type": "image"}] if rng.random() < 0.5 else [])
        return rng.choice([None, 7, ["x"], {"text": "y"}])

    def message():
        role = rng.choice(ROLES) if rng.random() < 0.3 else rng.choice(["user", "assistant"])
        m = {"role": role, "content": content()}
        if rng.random() < 0.1:
            arguments = rng.choice([{"a": 1}, '{"a": 1}'])
            m["tool_calls"] = [
                {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": arguments}}
            ]
        if rng.random() < 0.05:
            m["reasoning_content"] = rng.choice(TEXTS)
        if rng.random() < 0.05:
            m["name"] = None
        if role == "tool":
            m["tool_call_id"] = "abcdefghi"
        return m

    messages = [message() for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.5:
        messages[0] = {"role": "system", "content": rng.choice(TEXTS)}
    kwargs = {}
    r = rng.random()
    if r < 0.4:
        kwargs["add_generation_prompt"] = True
    elif r < 0.55:
        kwargs["continue_final_message"] = True
    if rng.random() < 0.2:
        kwargs["enable_thinking"] = rng.choice([True, False])
    return messages, kwargs, (TOOLS if rng.random() < 0.2 else None)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", action="append", help="a glob of .jinja files (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-template", type=int, default=40)
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
    ]
    files = sorted({f for pattern in patterns for f in glob.glob(pattern)})
    rng = random.Random(args.seed)
    differences = total = 0
    for path in files:
        source = Path(path).read_text(encoding="utf-8")
        inner = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=inner, bos_token="<s>", eos_token="</s>", chat_template=source
        )
        try:
            engines = [ChatTemplate(source), ChatTemplate(source, engine="jinja")]
            # The meta template's one-call path (apply_messages without tools or variables).
            meta = hf_meta({"chat_template": source, "bos_token": "<s>", "eos_token": "</s>", "now": FROZEN})
        except ChatTemplateError as exc:
            print(f"{Path(path).name}: does not compile here ({exc.message}); skipped")
            continue
        for _ in range(args.per_template):
            messages, kwargs, tools = conversation(rng)
            total += 1
            try:
                theirs = ("ok", tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, **kwargs))
            except Exception as exc:  # what transformers raised
                theirs = ("error", str(exc))
            variables = {
                k: v for k, v in kwargs.items() if k not in ("add_generation_prompt", "continue_final_message")
            }
            variables.update(bos_token="<s>", eos_token="</s>")
            for engine in engines:
                try:
                    ours = (
                        "ok",
                        engine.render(
                            messages,
                            tools=tools,
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
                if ours != theirs:
                    differences += 1
                    print(
                        f"DIFFERENT {Path(path).name} ({engine.engine}): {json.dumps([messages, kwargs], ensure_ascii=False)[:300]}"
                    )
                    print(f"  transformers: {theirs!r:.300}\n  prompt-style: {ours!r:.300}")
            try:
                ours = ("ok", meta.apply_messages(messages, tools=tools, **kwargs).text)
            except ChatTemplateError as exc:
                ours = ("error", exc.template_message)
            except PromptStyleError as exc:
                ours = ("error", str(exc))
            if ours != theirs:
                differences += 1
                print(f"DIFFERENT {Path(path).name} (hf apply_messages): {json.dumps([messages, kwargs])[:300]}")
                print(f"  transformers: {theirs!r:.300}\n  prompt-style: {ours!r:.300}")
    print(f"{len(files)} templates, {total} conversations, 2 engines and apply_messages: {differences} differences")
    return min(differences, 100)


if __name__ == "__main__":
    sys.exit(main())
