"""``prompt-style render``: a task's prompts, as text or JSON Lines."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from ._common import (
    add_choice_order_arguments,
    add_command,
    add_jobs_argument,
    add_task_arguments,
    choice_order_of,
    load_options,
    non_negative,
)

NAME = "render"
HELP = "render a task's prompts"
DESCRIPTION = "Render the prompts of a task file."


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    render = add_command(sub, common, NAME, HELP, DESCRIPTION)
    render.add_argument("task", metavar="TASK", help="a task file (prompt-style YAML or another installed format)")
    add_task_arguments(render)
    render.add_argument("--limit", metavar="N", type=non_negative, help="render only the first N records")
    render.add_argument("--format", choices=("text", "jsonl"), default="text", help="output format (default: text)")
    add_jobs_argument(render)
    render.add_argument(
        "--replies",
        metavar="FILE",
        help="multi-turn tasks in infer_mode every (or multiround): the model's replies, "
        "one JSON list per record per line",
    )
    add_choice_order_arguments(render)


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
    if getattr(result, "permutation", None) is not None:
        header += " · permutation: " + json.dumps(list(result.permutation))
        if result.rotation is not None:
            header += f" · rotation {result.rotation}"
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

    task = load_task(args.task, **load_options(args), **choice_order_of(args))
    replies = _read_replies(args.replies) if args.replies else None
    write = out.write
    if args.jobs > 1:
        from ..parallel import map_rendered

        fn = _jsonl_line if args.format == "jsonl" else _text_block
        for piece in map_rendered(task, fn, jobs=args.jobs, limit=args.limit, replies=replies):
            write(piece)
    elif args.format == "jsonl":
        for result in task.render(limit=args.limit, replies=replies):
            write(dumps_line(result.to_json(), _not_json(result.index)) + "\n")
    else:
        for result in task.render(limit=args.limit, replies=replies):
            write(_text_block(result))
    out.flush()
    return 0


def _jsonl_line(result: Any) -> str:
    """One request's JSON line, made in a worker process (``--jobs``)."""
    from ..safe.json_lines import dumps_line

    return dumps_line(result.to_json(), _not_json(result.index)) + "\n"


def _read_replies(path: str) -> list[list[str]]:
    """``--replies``: JSON Lines, line ``i`` the list of the model's replies to record ``i``."""
    import json  # with the command, not with the parser (prompt-style plugins)

    from ..errors import DataError
    from ..safe.files import read_text

    lines = read_text(path, what="replies file", error=DataError).splitlines()
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
