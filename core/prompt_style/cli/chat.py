"""``prompt-style chat``: one conversation rendered through a meta template."""

from __future__ import annotations

import argparse
from typing import TextIO

from ._common import add_command, add_meta_arguments

# prompt_style.chat's DEFAULT_CHAT_META; the module (and json) are imported by
# run, not when the parser is built for another command (prompt-style plugins)
DEFAULT_CHAT_META = "hf"

NAME = "chat"
HELP = "render one conversation (a model's chat template, ChatML, ...)"
DESCRIPTION = (
    "Render a conversation (a JSON list of messages, or an object with messages, tools, "
    "documents) through a meta template, e.g. a model's own Hugging Face chat template."
)

EXAMPLES = """  prompt-style chat conversation.json --meta-option template=MODEL_DIR   a model's own chat template
  prompt-style chat conversation.json --meta llama-3 --format json        a chat format by name, as JSON
  prompt-style chat conversation.json --meta gemma::2 --meta-option system_policy=merge
  prompt-style chat conversation.json --model-args pretrained=MODEL_DIR,chat_template=true"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    parser.add_argument("conversation", metavar="CONVERSATION.json", help="the conversation file")
    add_meta_arguments(
        parser,
        default=DEFAULT_CHAT_META,
        meta_help="meta template: hf (default), a chat format (llama-3, ...), chatml",
        option_help="an option of the meta template, VALUE a string unless it is JSON (e.g. template=path/to/model, "
        "add_generation_prompt=true, enable_thinking=false); repeatable",
        model_args_help="lm-evaluation-harness's model args: pretrained=FOLDER,chat_template=true renders with "
        "the model's own template (and tokenizer); chat_template=NAME chooses the meta template; other keys are "
        "meta options",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help='text: exactly the rendered string (default); json: {"text": ..., "token_ids": ..., "messages": ..., '
        '"meta": ..., "fingerprint": ...} on one line',
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    import json

    from ..chat import read_conversation, render_chat
    from ..loading import _meta
    from ..meta.model_args import apply_model_args
    from ..plugins import default_plugin_manager

    conversation = read_conversation(args.conversation)
    meta, options = args.meta, {**conversation.options, **dict(args.meta_option)}
    if args.model_args is not None:
        meta, options = apply_model_args(args.model_args, meta, options, default=DEFAULT_CHAT_META)
    built, used = _meta(default_plugin_manager(), meta, options)
    made = render_chat(conversation.messages, meta=built, tools=conversation.tools, documents=conversation.documents)
    if args.format == "json":
        out.write(json_line(made, used) + "\n")
    elif made.text is not None:
        out.write(made.text)
    else:
        out.write(json.dumps(made.messages, ensure_ascii=False, indent=2) + "\n")
    out.flush()
    return 0


def json_line(made, used) -> str:
    """``chat --format json``: the keys ``render --format jsonl`` uses for the same
    things (``text``, ``token_ids``, ``messages``, ``assistant_spans``, ``meta``,
    ``distributions``, ``fingerprint``), on one line."""
    from ..provenance import distributions, fingerprint
    from ..safe.json_lines import dumps_line

    result = {"text": made.text, "token_ids": made.token_ids, "messages": made.messages}
    if made.assistant_spans is not None:
        result["assistant_spans"] = [list(span) for span in made.assistant_spans]
    from .. import __version__
    from ..plugins import CORE_DISTRIBUTION

    result["meta"] = used.get("name")
    core = {"distribution": CORE_DISTRIBUTION, "version": __version__}  # the core renders every conversation
    result["distributions"] = distributions({"core": core, "apply_meta_template": used})
    result["fingerprint"] = fingerprint(dumps_line(result))
    return dumps_line(result)
