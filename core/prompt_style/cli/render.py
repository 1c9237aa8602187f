"""``prompt-style render``: a task's prompts, as text or JSON Lines."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from ._common import add_command, add_data_argument, add_meta_arguments, non_negative

NAME = "render"
HELP = "render a task's prompts"
DESCRIPTION = "Render the prompts of a task file."


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    render = add_command(sub, common, NAME, HELP, DESCRIPTION)
    render.add_argument("task", metavar="TASK", help="a task file (prompt-style YAML or another installed format)")
    render.add_argument("--style", metavar="S", help="style replacing the task's template (e.g. mcq::gpqa, cloze)")
    add_meta_arguments(
        render,
        default="plain",
        meta_help="meta template: plain (default), messages, chatml, ..., or a meta template file (.yaml, .json, "
        "OpenCompass .py model config)",
        option_help="an option of the meta template, VALUE a string unless it is JSON "
        "(e.g. add_generation_prompt=false, 'human=\"User: \"'); repeatable",
        model_args_help="lm-evaluation-harness's model args: chat_template=NAME chooses the meta template, "
        "pretrained=PATH / tokenizer=PATH the tokenizer, other keys are meta options",
    )
    render.add_argument(
        "--shots", metavar="K", type=non_negative, help="number of few-shot examples (replaces num_fewshot)"
    )
    render.add_argument("--seed", metavar="N", type=int, help="seed for random retrieval")
    render.add_argument("--limit", metavar="N", type=non_negative, help="render only the first N records")
    add_data_argument(render, help="replace a split's data file (repeatable)")
    render.add_argument("--format", choices=("text", "jsonl"), default="text", help="output format (default: text)")
    render.add_argument(
        "--trust-code",
        action="store_true",
        help="allow the task file to run code (lm-evaluation-harness !function, OpenCompass .py configs)",
    )
    render.add_argument(
        "--template",
        metavar="N|NAME",
        help="which of the task file's templates to render (task-template files: number, name or id)",
    )
    render.add_argument(
        "--task-format", metavar="NAME", help="the task file's format, when detection should not decide"
    )
    render.add_argument(
        "--system-instruction",
        metavar="TEXT",
        help="text starting the system message, before the task's description (lm-eval --system_instruction)",
    )
    render.add_argument(
        "--fewshot-as-multiturn",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with a chat meta template, few-shot examples as user/assistant turns (the default); "
        "--no-fewshot-as-multiturn puts the plain-text prompt in one user message",
    )
    render.add_argument(
        "--replies",
        metavar="FILE",
        help="multi-turn tasks in infer_mode every (or multiround): the model's replies, "
        "one JSON list per record per line",
    )
    render.add_argument(
        "--mode",
        choices=("gen", "ppl"),
        help="generation or perplexity prompts, for tasks with modes (OpenCompass; default: from the inferencer)",
    )
    render.add_argument(
        "--data-root",
        metavar="DIR",
        help="where task-template files find their data_dir (default: next to the task file, or data/processed/)",
    )
    render.add_argument(
        "--budget",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="raise or lower a safety budget for templates and task files, e.g. deadline=2 or "
        "max_output=50000000 (repeatable; see docs/security.md)",
    )


def _not_json(index: int) -> Any:
    """``json.dumps(default=...)``: values JSON cannot hold are an error naming the record
    (tuples and ranges of a template's making are lists; sets have no order to keep)."""

    def default(value: Any) -> Any:
        if isinstance(value, (range, type({}.keys()), type({}.values()), type({}.items()))):
            return list(value)
        from ..errors import RenderError, cut

        raise RenderError(
            f"the output holds a {type(value).__name__} ({cut(value)}), which JSON cannot hold",
            index=index,
            hint="make the field spec give strings, numbers, lists or mappings",
        )

    return default


def _body(text: str | None, messages: Any, default: Any = None) -> str:
    import json  # with the command, not with the parser (prompt-style plugins)

    if text is None:
        return json.dumps(messages, ensure_ascii=False, indent=2, default=default)
    return text


def _text_block(result: Any) -> str:
    import json  # with the command, not with the parser (prompt-style plugins)

    default = _not_json(result.index)
    header = f"=== record {result.index} · target: {json.dumps(result.target, ensure_ascii=False, default=default)}"
    if result.continuations:
        header += " · continuations: " + json.dumps(list(result.continuations), ensure_ascii=False)
    until = getattr(result, "until", None)
    if until is not None:
        header += " · until: " + json.dumps(list(until), ensure_ascii=False)
    for key, value in (result.extra or {}).items():
        header += f" · {key}: " + json.dumps(value, ensure_ascii=False, default=default)
    if result.turn is not None:
        header += f" · turn {result.turn}"
    candidates = getattr(result, "candidates", None)
    if candidates is not None:
        blocks = [
            f"--- candidate {json.dumps(c.label, ensure_ascii=False, default=default)}\n"
            f"{_body(c.text, c.messages, default)}\n"
            for c in candidates
        ]
        return f"{header}\n" + "".join(blocks)
    contexts = getattr(result, "contexts", None)
    if contexts is not None:  # multiple input: one context per choice, each before its continuation
        blocks = [
            f"--- context {i}\n{_body(c if isinstance(c, str) else None, c, default)}\n" for i, c in enumerate(contexts)
        ]
        return f"{header}\n" + "".join(blocks)
    tokens = ""
    if result.token_ids is not None:
        tokens = f"--- token_ids ({len(result.token_ids)}): {json.dumps(result.token_ids)}\n"
        if result.continuation_token_ids is not None:
            tokens += f"--- continuation_token_ids: {json.dumps(result.continuation_token_ids)}\n"
        for entry in result.token_report or ():
            tokens += f"--- note: {entry.get('message', entry['kind'])}\n"
    return f"{header}\n{_body(result.text, result.messages, default)}\n{tokens}"


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..safe.limits import configured, parse_assignments

    with configured(parse_assignments(args.budget, what="--budget")):
        return _run(args, out)


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from ..loading import load_task
    from ..safe.json_lines import dumps_line

    task = load_task(
        args.task,
        style=args.style,
        meta=args.meta,
        meta_options=dict(args.meta_option),
        shots=args.shots,
        seed=args.seed,
        data=dict(args.data) or None,
        trust_code=args.trust_code,
        template=int(args.template) if args.template and args.template.isdigit() else args.template,
        task_format=args.task_format,
        system_instruction=args.system_instruction,
        fewshot_as_multiturn=args.fewshot_as_multiturn,
        mode=args.mode,
        read_options={"data_root": args.data_root} if args.data_root else None,
        model_args=args.model_args,
    )
    replies = _read_replies(args.replies) if args.replies else None
    write = out.write
    if args.format == "jsonl":
        for result in task.render(limit=args.limit, replies=replies):
            write(dumps_line(result.to_json(), _not_json(result.index)) + "\n")
    else:
        for result in task.render(limit=args.limit, replies=replies):
            write(_text_block(result))
    out.flush()
    return 0


def _read_replies(path: str) -> list[list[str]]:
    """``--replies``: JSON Lines, line ``i`` the list of the model's replies to record ``i``."""
    import json  # with the command, not with the parser (prompt-style plugins)

    from ..errors import DataError

    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as exc:
        raise DataError(f"cannot read the replies: {exc.strerror}", file=path) from None
    replies = []
    for number, line in enumerate(lines, 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"not JSON: {exc.msg}", file=path, line=number) from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError(
                "each line must be a JSON list of reply strings, one list per record",
                file=path,
                line=number,
                hint='for example ["first reply", "second reply"]',
            )
        replies.append(value)
    return replies
