"""``prompt-style render``: a task's prompts, as text or JSON Lines."""

from __future__ import annotations

import argparse
import functools
import gc
import os
from typing import Any, TextIO

from ._common import (
    add_choice_order_arguments,
    add_command,
    add_jobs_argument,
    add_task_arguments,
    choice_order_of,
    non_negative,
)
from ._output import Progress, atomic_output, show_progress
from ._task import add_task_source, load_from_args, usage_problem

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_parser", "run", "usage_problem"]

NAME = "render"
HELP = "render a task's prompts"
DESCRIPTION = "Render the prompts of a task file."


EXAMPLES = """  prompt-style render --example mmlu                           the example prompt-style-mmlu ships
  prompt-style render task.yaml --limit 2                      the first two prompts, as text
  prompt-style render task.yaml --style cloze --shots 0        another style, zero-shot
  prompt-style render task.yaml --meta chatml --system-instruction "Answer with a letter."
  prompt-style render task.yaml --retriever random --seed 7 --fewshot-split train
  prompt-style render task.yaml --style-option 'choice_format="({label}) {choice}"'
  prompt-style render task.yaml --format jsonl --doc-id id --output prompts.jsonl
  prompt-style render lm_eval_task.yaml --data test=test.jsonl --meta hf --meta-option template=MODEL_DIR"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    render = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    add_task_source(render)
    add_task_arguments(render)
    render.add_argument("--limit", metavar="N", type=non_negative, help="render only the first N records")
    render.add_argument("--format", choices=("text", "jsonl"), default="text", help="output format (default: text)")
    render.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write to FILE, whole or not at all (a temporary file renamed into place), with a progress bar "
        "on a terminal; default: stdout",
    )
    render.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
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
    header = f"=== record {result.index}"
    if result.doc_id is not None:  # the task names each record's own id (doc_id)
        header += f" · doc_id: {json.dumps(result.doc_id, ensure_ascii=False, default=default)}"
    header += f" · target: {json.dumps(result.target, ensure_ascii=False, default=default)}"
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


def _loaded(args: argparse.Namespace) -> Any:
    """The task; in the command line's own process, loaded with the collector off and
    then frozen (``gc.freeze``).

    That process ends with the render: what loading makes (the task, its compiled
    code, a split that lm-evaluation-harness's ``process_docs`` made) lives to the end.
    Collecting while it is made, and after, only walks it again and again (a tenth of
    the time of 200,000 processed records); frozen, the collector walks the render's
    own objects only. A caller's process (``main(argv)``) is left as it is."""
    if not getattr(args, "own_process", False):
        return load_from_args(args, **choice_order_of(args))
    enabled = gc.isenabled()
    gc.disable()
    try:
        return load_from_args(args, **choice_order_of(args))
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _run(args: argparse.Namespace, out: TextIO) -> int:
    task = _loaded(args)
    replies = _read_replies(args.replies) if args.replies else None
    to_file = args.output is not None and args.output != "-"
    progress = None
    if show_progress(args.no_progress, to_file=to_file):
        progress = Progress(task.name, _record_count(task, args.limit))
    blocks = None
    if args.jobs > 1 and args.format == "jsonl" and replies is None:
        # (imported only here: a run without --jobs skips them)
        import shutil
        import tempfile

        from ..parallel import json_line_blocks

        # each worker makes the lines of a block of the data file into a file of its own,
        # which this process copies to the output in order

        spill = tempfile.mkdtemp(prefix="prompt-style-", dir=_SHM if os.access(_SHM, os.W_OK) else None)
        try:
            blocks = json_line_blocks(task, jobs=args.jobs, limit=args.limit, default_for=_not_json, spill=spill)
            if blocks is not None:
                try:
                    if to_file:
                        with atomic_output(args.output) as handle:
                            _write_blocks(blocks, handle, progress)
                    else:
                        _write_blocks(blocks, out, progress)
                finally:
                    if progress is not None:
                        progress.close()
                return 0
        finally:
            shutil.rmtree(spill, ignore_errors=True)
    if args.jobs > 1:  # worker processes make each request's output; it comes back in order
        from ..parallel import map_rendered

        fn = functools.partial(_jsonl_line, task.provenance) if args.format == "jsonl" else _text_block
        pieces = map_rendered(task, fn, jobs=args.jobs, limit=args.limit, replies=replies)
        kind = "text"
    elif args.format == "jsonl" and progress is None:
        # made in the render's loop (the fast path's records need no prompt object), in
        # lists (a block of the data file's records each), each written joined
        from ..jsonl import json_line_batches

        pieces = json_line_batches(task, args.limit, replies=replies, default_for=_not_json)
        kind = "batches"
    else:
        pieces = _serial(task, task.render(limit=args.limit, replies=replies), args.format, progress)
        # serial JSON lines come as UTF-8 bytes, written a batch at a time
        kind = "lines" if args.format == "jsonl" else "text"
    try:
        if to_file:
            with atomic_output(args.output) as handle:
                _write(pieces, handle, progress if args.jobs > 1 else None, kind)
        else:
            _write(pieces, out, progress if args.jobs > 1 else None, kind)
    finally:
        if progress is not None:
            progress.close()
    return 0


def _serial(task: Any, prompts: Any, format: str, progress: Any) -> Any:
    """Each prompt's output: its JSON line with provenance, or its text block."""
    if progress is not None:
        prompts = _counted(prompts, progress)
    if format == "jsonl":
        from ..lines import PromptEncoder

        # Each line as UTF-8, made directly, what the task's prompts share encoded once
        # (PromptEncoder): the bytes of its provenance line + "\n", as json.dumps makes it.
        encoder = PromptEncoder(_not_json)
        line = task.provenance.line_bytes
        for result in prompts:
            yield line(result, encoder)
    else:
        for result in prompts:
            yield _text_block(result)


def _write(pieces: Any, out: TextIO, progress: Any, kind: str = "text") -> None:
    """Write every piece; ``progress`` counts them (the serial path counts records itself).
    ``kind``: ``"text"``, ``"lines"`` (lines of UTF-8, which LineWriter writes a batch at a
    time) or ``"batches"`` (lists of such lines, each written joined)."""
    if kind != "text":
        from ..safe.json_lines import LineWriter

        writer = LineWriter(out)
        (writer.write_batches if kind == "batches" else writer.write_all)(pieces)
        return
    write = out.write
    if progress is None:
        for piece in pieces:
            write(piece)
    else:
        for done, piece in enumerate(pieces, 1):
            write(piece)
            progress(done)
    out.flush()


_SHM = "/dev/shm"  # memory, where there is one: the workers' files never reach a disk


def _write_blocks(blocks: Any, out: TextIO, progress: Any) -> None:
    """Write each block of lines as it comes (UTF-8 bytes, or the name of a file holding
    them, copied in the kernel and removed); ``progress`` counts their records."""
    from ..safe.json_lines import LineWriter

    writer = LineWriter(out, batch=1)  # (a block is written as it is, not joined)
    fd = _raw_fd(out)
    done = 0
    for lines, records in blocks:
        if isinstance(lines, str):  # a file of lines a worker wrote
            try:
                if fd is None or not _send(lines, fd):
                    with open(lines, "rb") as handle:
                        writer.write_all([handle.read()])
            finally:
                os.unlink(lines)
        else:
            writer.write_all([lines])
        if progress is not None:
            done += records
            progress(done)
    if progress is not None:
        progress(done, done)
    out.flush()


def _raw_fd(out: TextIO) -> int | None:
    """The descriptor under ``out`` when bytes written there are what ``out`` would
    write (UTF-8, no newline translation), after flushing it; else ``None``."""
    encoding = (getattr(out, "encoding", None) or "").lower().replace("_", "-")
    if encoding not in ("utf-8", "utf8") or os.linesep != "\n" or not hasattr(os, "sendfile"):
        return None
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    out.flush()
    return fd


def _send(name: str, fd: int) -> bool:
    """Copy the file ``name`` to ``fd`` in the kernel; ``False`` when the kernel cannot
    (then nothing was written)."""
    with open(name, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        sent = 0
        while sent < size:
            try:
                count = os.sendfile(fd, handle.fileno(), sent, size - sent)
            except OSError:
                if sent == 0:
                    return False
                raise
            if count == 0:
                break
            sent += count
    return True


def _counted(prompts: Any, progress: Any) -> Any:
    done = 0
    for result in prompts:
        yield result
        if result.turn is None or result.turn == 0:
            done += 1
            progress(done)
    progress(done, done)  # the final count, drawn whatever the clock says


def _record_count(task: Any, limit: int | None) -> int | None:
    """The number of records the evaluated split holds (at most ``limit``), for the
    progress bar: a count of JSON Lines' lines, without parsing them; ``None`` when
    not known cheaply."""
    source = task._records if task._records is not None else task.config.data.get(task.config.test_split)
    count: int | None = None
    if isinstance(source, (list, tuple)) and not (source and hasattr(source[0], "suffix")):
        count = len(source)
    elif source is not None and str(source).endswith((".jsonl", ".ndjson")):
        try:
            with open(source, "rb") as handle:
                count = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
        except OSError:
            count = None
    if count is not None and limit is not None:
        count = min(count, limit)
    return count


def _jsonl_line(provenance: Any, result: Any) -> str:
    """One request's JSON line with its provenance, made in a worker process (``--jobs``)."""
    from ..lines import PromptEncoder

    global _WORKER_ENCODER
    if _WORKER_ENCODER is None:
        _WORKER_ENCODER = PromptEncoder(_not_json)
    return provenance.line_bytes(result, _WORKER_ENCODER).decode("utf-8")


_WORKER_ENCODER: Any = None  # one per worker process: it keeps what the task's prompts share


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
