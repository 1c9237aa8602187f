"""The code the compiled fast path (:mod:`prompt_style.fastpath`) generates for a
task's shape: one function body, used by ``fast`` (a record), ``many`` (records, in
order) and ``lines`` (their output lines), compiled once per shape and process.

The code holds names and indices only; every text (the few-shot prefix, labels,
delimiters) is a value passed to the generated ``make()``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from .styles.compiled import Layout

__all__ = ["generated_code", "maker", "parameters"]


@functools.lru_cache(maxsize=128)
def generated_code(
    *,
    combined: bool,
    q_method: bool,
    described: bool,
    inline: Layout | None,
    answers_vary: bool,
    passthrough: bool = False,
    checked_description: bool = False,
    description_key: bool = False,
    prefix_key: bool = False,
    generation: tuple[bool, bool] | None = None,
    choice_generation: bool = False,
    choice_answers: bool = False,
    textless: bool = False,
    any_n: bool = False,
    fallbacks: frozenset[str] = frozenset(),
    inline_reads: frozenset[str] = frozenset(),
    selected: bool = False,
    selected_chat: bool = False,
    selected_described: bool = False,
    ordered: bool = False,
    stripped: bool = False,
) -> str:
    body: list[str] = []
    add = body.append
    if selected:
        # the record's examples (the retriever's choice): the text before its question
        # is theirs (prefix_of), as the general path joins it, or it is the general path's.
        # First: making an example's text reads its fields, which takes what a field of
        # user code kept of this record for the general path (_once)
        add("ids = select(index, record)")
        add("if type(ids) is not tuple:")
        add("    ids = tuple(ids)")
        if selected_described:  # the record's own description, before its examples
            add("value = describe(record)")
            add('start = start_of("" if value is None else str(value))')
        else:
            add("start = None")
        # (a chat format's: and the JSON of the messages around the question's content)
        add("pre, pre_json, post_json = prefix_of(ids, start)" if selected_chat else "pre = prefix_of(ids, start)")
    if generation is not None:
        _generation_body(add, combined, q_method, generation[1], ordered)
    else:
        _field_reads(add, ("q", "c", "target"), combined, q_method, ordered)
    if generation is None:
        add("if type(q) is not str or type(c) is not list:")
        add("    raise Bail")
        add("if type(target) is not int:")
        # a choice's text (or a digit string a template gives): the task's gold resolver
        add("    if type(target) is not str:")
        add("        raise Bail")
        add("    target = gold_of(target, c)")
        add("    if type(target) is not int:")
        add("        raise Bail")
        add("n = len(c)")
        add("if not 0 <= target < n or None in c:")
        add("    raise Bail")
    answers = (
        "tuple(map(add_delimiter, map(str, c)))"
        if choice_answers
        else "tuple([delimiter + a for a in answers_of(c, labels)])"
    )
    generic = [
        "made = compiled.get(n, MISSING)",
        "if made is MISSING:",
        "    made = compile_n(n)",
        "if made is None:",
        "    raise Bail",
        "question, continuations, labels = made",
        # a choice style's generation variant: the gold's label is the target
        *(["target = labels[target]"] if choice_generation else []),
        "text = question(q, c)",
        "if text is None:",
        "    raise Bail",
        "if continuations is None:",
        "    continuations = " + answers,
    ]
    if generation is not None:
        add("text = f'{P_H}{q}{P_T}'")  # one copy of the head, not two
        add("continuations = ()")
    elif passthrough:
        # PassthroughStyle: the question text is the record's text; the continuations
        # are the choices (str ones: str() of anything else is the general path's).
        add("text = f'{P_H}{q}{P_T}'")  # one copy of the head, not two
        add("if c is P_C and c == P_CC:")
        add("    continuations = P_CT")
        add("else:")
        add("    continuations = tuple(map(add_delimiter, map(str, c)))")
    elif inline is None:
        body.extend(generic)
    else:
        add("if n == N0 or n in SAME_N:" if any_n else "if n == N0:")
        if inline.marker:
            add("    if F_M not in q:")
            add("        raise Bail")
        # the layout's names (H, T, L2, ...) are prefixed, so that they cannot meet the body's
        source = re.sub(r"(?<=\{)(H|T|L\d+)(?=\})", r"F_\1", inline.source)
        add(f"    text = f'{source}'")
        if choice_answers:
            add("    continuations = tuple(map(add_delimiter, map(str, c)))")
        elif answers_vary:
            add("    continuations = tuple([delimiter + a for a in answers_of(c, LABELS0)])")
        else:
            add("    continuations = C0")
        add("else:")
        body.extend("    " + line for line in generic)
    if checked_description:
        add("value = check_description(record)")
        add("if value is not description0 and (type(value) is not str or value != description0):")
        add("    raise Bail")
    if description_key:
        add("if D_KEY in record:")  # the description is that column's, not the constant text
        add("    raise Bail")
    if prefix_key:
        add("if P_KEY in record:")  # (the same for gen_prefix)
        add("    raise Bail")
    # (a description per record: lines take the text before the question from a cache
    # per description and make no dialogue; the prompts of fast and many hold both)
    core = list(body)
    dialogue_of = [
        "if description:",
        '    dialogue = (system._replace(content=description), *head_turns, Turn("user", qtext, sep))',
        "else:",
        '    dialogue = (*head_turns, Turn("user", qtext, sep))',
    ]
    if described:
        add("value = describe(record)")
        add('description = "" if value is None else str(value)')
        add("qtext = text")
        add("text = head_text + q_before + qtext + q_after")
        add("if description:")
        add("    text = d_before + description + d_after + text")
        body.extend(dialogue_of)
        make = [
            "made = RenderedPrompt(index, text, None, continuations, target, plugins, dialogue, None, None, until)",
            "made.fewshot_indices = shot_ids",
        ]
    else:
        make = [
            "made = new_prompt(LazyDialoguePrompt)",
            "made.index = index",
            # a meta template of messages only: no text, the content kept for the messages
            *(
                ["made.text = None", "made._content = text"]
                if textless
                else ["made.text = pre + text" if selected else "made.text = text"]
            ),
            "made.continuations = continuations",
            "made.target = target",
            "made._deferred = deferred",  # plugins and until are read from it
            # set (to None) so that reading it is a slot read: a choice order sets it
            # afterwards, and the JSON view then is RenderedPrompt's
            "made.permutation = None",
            # slot reads for what every JSON line with provenance asks (__getattr__ costs more)
            *(
                ["made.fewshot_indices = ids", "made._start = start"]
                if selected
                else ["made.fewshot_indices = shot_ids"]
            ),
            "made.doc_id = None",
        ]

    def indent(lines: list[str], depth: int) -> str:
        return "".join("    " * depth + line + "\n" for line in lines)

    if described:
        own_core = [
            *core,
            "value = describe(record)",
            'description = "" if value is None else str(value)',
            "qtext = text",
            "pre = starts.get(description)",
            "if pre is None:",
            "    pre = start_for(description)",
            "text = pre + qtext + q_after",
        ]
    else:
        own_core = body
    if fallbacks:
        body = _with_fallbacks(body, fallbacks)
        own_core = _with_fallbacks(own_core, fallbacks)
    if inline_reads:
        body = _inlined(body, inline_reads)
        own_core = _inlined(own_core, inline_reads)
    own_body = _own_text(own_core)
    if stripped:
        # a chat format that strips the last turn's content (stripped_turn_affixes): only a
        # record whose content (the lead, then its own text) strip() leaves as it is
        body = [*body, *_STRIP_GUARD_FULL]
        own_body = [*own_body, *_STRIP_GUARD_OWN]
    # a line emit does not take: its prompt made as fast makes it (with a description
    # per record, its dialogue first)
    unmade = (["text = f'{P_H}{text}{P_T}'"] if not described else dialogue_of) + make

    params = ", ".join(
        sorted(
            _PARAMS
            | ({"N0", "LABELS0", "C0", "SAME_N", "G_H", "G_T"} | {f"F_{n}" for n in inline.names} if inline else set())
        )
    )
    return (
        f"def make({params}):\n"
        "    def fast(record, index):\n"
        "        try:\n" + indent(body, 3) + "        except Exception:\n"
        "            return None\n" + indent(make, 2) + "        return made\n"
        "\n"
        "    def many(records, general, start=0):\n"
        "        index = start - 1\n"
        "        for record in records:\n"
        "            index += 1\n"
        "            try:\n" + indent(body, 4) + "            except Exception:\n"
        "                text = None\n"
        # outside the except clause, so that the general path's error is not chained to it
        "            if text is None:\n"
        "                yield general(record, index)\n"
        "                continue\n" + indent(make, 3) + "            yield made\n"
        "\n"
        # many's loop, making each prompt's line (emit) rather than the prompt
        # (text is the record's own part of the prompt here: the shared head and tail
        # are emit's to write, and joined only for a prompt it does not take)
        "    def lines(records, general, start=0, *, emit, line_of):\n"
        "        index = start - 1\n"
        "        for record in records:\n"
        "            index += 1\n"
        "            try:\n" + indent(own_body, 4) + "            except Exception:\n"
        "                text = None\n"
        "            if text is None:\n"
        "                yield general(record, index)\n"
        "                continue\n"
        + (
            "            line = emit(index, pre + text, continuations, target, ids, text, pre_json, post_json)\n"
            if selected_chat
            else "            line = emit(index, pre + text, continuations, target, ids)\n"
            if selected
            else "            line = emit(index, text, continuations, target)\n"
        )
        + "            if line is None:\n"
        + indent(unmade, 4)
        + "                line = line_of(made)\n"
        "            yield line\n"
        "\n"
        "    return fast, many, lines\n"
    )


_FIELD_READS = {
    "text": "q = text_of(record)",
    "choice": "c = choice_of(record)",
    "target": "target = target_of(record)",
}


_INLINE_READS = {
    "choice": "c = C_CONST",
    "target": "target = record[T_KEY] if T_KEY in record else T_DEFAULT",
}
"""What replaces a field's call where :func:`_constant` or :func:`_column` says what it gives."""


def _inlined(body: list[str], names: frozenset[str]) -> list[str]:
    """``body`` reading each field in ``names`` in the loop (:data:`_INLINE_READS`)
    rather than calling its getter."""
    reads = {_FIELD_READS[name]: _INLINE_READS[name] for name in names}
    out: list[str] = []
    for line in body:
        stripped = line.lstrip()
        out.append(line[: len(line) - len(stripped)] + reads.get(stripped, stripped))
    return out


def _with_fallbacks(body: list[str], fallbacks: frozenset[str]) -> list[str]:
    """``body`` calling the fallback of each field in ``fallbacks`` (``text_slow``, ...)
    where its getter gives ``SLOW`` (see :func:`_getters`)."""
    reads = {_FIELD_READS[name]: name for name in fallbacks}
    out: list[str] = []
    for line in body:
        out.append(line)
        stripped = line.lstrip()
        name = reads.get(stripped)
        if name is not None:
            pad = line[: len(line) - len(stripped)]
            var = stripped.split(" = ", 1)[0]
            out += [f"{pad}if {var} is SLOW:", f"{pad}    {var} = {name}_slow(record)"]
    return out


def _own_text(body: list[str]) -> list[str]:
    """``body`` computing the record's own text only (what stands between the shared
    head ``P_H`` and tail ``P_T``), for ``lines``."""
    own: list[str] = []
    for i, line in enumerate(body):
        stripped = line.lstrip()
        pad = line[: len(line) - len(stripped)]
        if stripped == "text = f'{P_H}{q}{P_T}'":
            line = pad + "text = q"
        elif stripped.startswith("text = f'"):  # the inline layout: its own first and last texts
            line = line.replace("{F_H}", "{G_H}").replace("{F_T}", "{G_T}")
        own.append(line)
        if stripped == "raise Bail" and i >= 2 and body[i - 2].lstrip() == "text = question(q, c)":
            # a layout compiled for this number of choices: head and tail cut off
            own.append(pad[:-4] + "text = text[P_START : len(text) - P_STOP]")
    return own


_STRIP_GUARD_FULL = (
    "own_end = len(text) - P_STOP",
    "if own_end > P_START:",
    "    if text[own_end - 1].isspace() or (S_FIRST and text[P_START].isspace()):",
    "        raise Bail",
    "elif S_EMPTY:",
    "    raise Bail",
)
"""The record's own text (between the head and the tail) ends with no white space and,
where nothing comes before it in the content (``S_FIRST``: no lead), starts with none;
an empty one only where the lead alone is stripped as it is (not ``S_EMPTY``)."""

_STRIP_GUARD_OWN = (
    "if text:",
    "    if text[-1].isspace() or (S_FIRST and text[0].isspace()):",
    "        raise Bail",
    "elif S_EMPTY:",
    "    raise Bail",
)
""":data:`_STRIP_GUARD_FULL` for ``lines``, whose text is the record's own."""

_GETTERS = {"q": "text_of", "c": "choice_of", "target": "target_of"}


_ORDERED_CHECKS = {
    "q": ("if type(q) is not str:", "    raise Bail"),
    "c": ("if type(c) is not list or None in c:", "    raise Bail"),
}
"""With user code among the fields (``ordered``): what the general path would stop at,
checked before the next field is read (each field read no more often than there)."""


def _field_reads(
    add: Callable[[str], None], names: tuple[str, ...], combined: bool, q_method: bool, ordered: bool = False
) -> None:
    """The reads of a record's fields (``q``, ``c``, ``target``): each field's getter, or
    where each is a dict key (``combined``), one ``get3`` for a dict record (and the
    question's ``str`` method, ``q_method``), the getters for any other record.
    ``ordered``: each read after the checks of the one before (:data:`_ORDERED_CHECKS`)."""
    if not combined:
        for name in names:
            add(f"{name} = {_GETTERS[name]}(record)")
            if ordered and name != names[-1]:
                for line in _ORDERED_CHECKS[name]:
                    add(line)
        return
    add("if type(record) is dict:")
    add(f"    {', '.join(names)} = get3(record)")
    if q_method:
        add("    if type(q) is str:")
        add("        q = q_method(q)")
        # the sandbox charges the method's result to the render's budget: beyond the
        # threshold under which no budget can stop it, the general path decides
        add("        if len(q) > SIZE_FLOOR[0] and len(q) > cap_of():")
        add("            raise Bail")
    add("else:")
    for name in names:
        add(f"    {name} = {_GETTERS[name]}(record)")


def _generation_body(
    add: Callable[[str], None], combined: bool, q_method: bool, has_target: bool, ordered: bool = False
) -> None:
    """The fields of a generation record: a ``str`` question, and an ``int`` or ``str``
    reference answer (or none, when the task has no ``doc_to_target``); anything
    else is the general path's (a null target, a list of references, numpy integers)."""
    if combined or has_target:
        _field_reads(add, ("q", "target"), combined, q_method, ordered)
    else:
        add("q = text_of(record)")
        add("target = None")
    add("if type(q) is not str:")
    add("    raise Bail")
    if has_target:
        add("if type(target) is not str and type(target) is not int:")
        add("    raise Bail")


_PARAMS = frozenset(
    {
        "get3",
        "q_method",
        "cap_of",
        "SIZE_FLOOR",
        "text_of",
        "choice_of",
        "target_of",
        "text_slow",
        "choice_slow",
        "target_slow",
        "SLOW",
        "describe",
        "compiled",
        "compile_n",
        "answers_of",
        "delimiter",
        "gold_of",
        "add_delimiter",
        "new_prompt",
        "LazyDialoguePrompt",
        "RenderedPrompt",
        "Turn",
        "plugins",
        "until",
        "shot_ids",
        "deferred",
        "head_turns",
        "head_text",
        "q_before",
        "q_after",
        "d_before",
        "d_after",
        "system",
        "sep",
        "Bail",
        "MISSING",
        "check_description",
        "description0",
        "D_KEY",
        "P_KEY",
        "C_CONST",
        "T_KEY",
        "T_DEFAULT",
        "P_H",
        "P_T",
        "P_C",
        "P_CC",
        "P_CT",
        "P_START",
        "P_STOP",
        "S_FIRST",
        "S_EMPTY",
        "select",
        "prefix_of",
        "start_of",
        "starts",
        "start_for",
    }
)


def parameters(make: Callable[..., Any]) -> tuple[str, ...]:
    """The names of ``make``'s parameters, in order."""
    return make.__code__.co_varnames[: make.__code__.co_argcount]


@functools.lru_cache(maxsize=128)
def maker(code: str) -> Callable[..., Any]:
    """``make`` of generated ``code``, compiled once per process: tasks of one shape
    (every MMLU subject) share it, each with its own values."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<prompt_style.fastpath>", "exec"), namespace)  # names and indices only
    return namespace["make"]
