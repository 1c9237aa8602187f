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


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION)
    parser.add_argument("conversation", metavar="CONVERSATION.json", help="the conversation file")
    add_meta_arguments(
        parser,
        default=DEFAULT_CHAT_META,
        meta_help="meta template: hf (default), a chat format (llama-3, ...), chatml",
        option_help="an option of the meta template, VALUE read as YAML (e.g. template=path/to/model, "
        "add_generation_prompt=true, enable_thinking=false); repeatable",
        model_args_help="lm-evaluation-harness's model args: pretrained=FOLDER,chat_template=true renders with "
        "the model's own template (and tokenizer); chat_template=NAME chooses the meta template; other keys are "
        "meta options",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help='text: exactly the rendered string (default); json: {"text": ..., "token_ids": ...}',
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    import json

    from ..chat import read_conversation, render_chat

    conversation = read_conversation(args.conversation)
    options = {**conversation.options, **dict(args.meta_option)}
    made = render_chat(
        conversation.messages,
        meta=args.meta,
        meta_options=options,
        model_args=args.model_args,
        tools=conversation.tools,
        documents=conversation.documents,
    )
    if args.format == "json":
        result = {"text": made.text, "token_ids": made.token_ids}
        if made.text is None:
            result["messages"] = made.messages
        if made.assistant_spans is not None:
            result["assistant_spans"] = [list(span) for span in made.assistant_spans]
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif made.text is not None:
        out.write(made.text)
    else:
        out.write(json.dumps(made.messages, ensure_ascii=False, indent=2) + "\n")
    out.flush()
    return 0
