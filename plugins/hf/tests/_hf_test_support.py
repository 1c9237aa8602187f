"""Test support for prompt-style-hf: where the chat-template test data lives, and
rendering a case the way transformers' apply_chat_template was called.

* The corpus of real chat templates and transformers' renders of them: the live
  corpus directory when this checkout sits next to it (``PROMPT_STYLE_CHAT_CORPUS``,
  or ``shared/corpora/chat_templates`` in a parent directory), and always the copy
  committed in ``tests/golden/transformers_chat/corpus``.
* The goldens made by tools/golden/make_chat_golden.py with the real transformers:
  ``tests/golden/transformers_chat/expected.json``.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from prompt_style_hf.chat_template import ChatTemplate

from prompt_style import ChatTemplateError

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden" / "transformers_chat"
CORPUS_COPY = GOLDEN / "corpus"
FROZEN_NOW = datetime(2025, 7, 10, 12, 0, 0)

# Message contents of the seeded random conversations: empty, whitespace, template syntax,
# special-token text, unicode, reasoning tags.
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
    "\t",
    "</think>x",
    "<think>r</think>answer",
    "[INST]",
]


def live_corpus() -> Path | None:
    """The corpus directory next to this checkout, if there is one."""
    given = os.environ.get("PROMPT_STYLE_CHAT_CORPUS")
    if given:
        return Path(given)
    for parent in ROOT.parents:
        candidate = parent / "shared" / "corpora" / "chat_templates"
        if (candidate / "expected.json").is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def load_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def golden():
    return load_json(GOLDEN / "expected.json")


def conversations():
    return load_json(GOLDEN / "conversations.json")["conversations"]


def all_conversations() -> dict[str, Any]:
    """The corpus's conversations and the goldens' (conversations.json), by name."""
    return {**load_json(CORPUS_COPY / "expected.json")["meta"]["conversations"], **conversations()}


TEMPLATE_FILES = sorted([*(CORPUS_COPY / "templates").glob("*.jinja"), *(GOLDEN / "templates").glob("*.jinja")])
"""The corpus's templates (the committed copy) and the feature templates of the goldens."""


PUBLISHED = GOLDEN / "published"


def template_path(name: str, origin: str) -> Path:
    """The file of a template of the goldens: the corpus's, a published one, or ours."""
    if origin == "corpus":
        return CORPUS_COPY / "templates" / load_json(CORPUS_COPY / "index.json")[name]["file"]
    if origin == "published":
        return PUBLISHED / "templates" / load_json(PUBLISHED / "index.json")[name]["file"]
    return GOLDEN / "templates" / f"{name}.jinja"


def golden_results() -> dict[str, Any]:
    """Every template with transformers' renders: the corpus's and ours (expected.json),
    and the published templates (published/expected.json)."""
    return {**golden()["results"], **load_json(PUBLISHED / "expected.json")["results"]}


_TEMPLATES: dict[tuple[str, str], ChatTemplate] = {}


def template(path, engine: str = "auto") -> ChatTemplate:
    key = (str(path), engine)
    found = _TEMPLATES.get(key)
    if found is None:
        found = _TEMPLATES[key] = ChatTemplate(path.read_text(encoding="utf-8"), origin=path.name, engine=engine)
    return found


def render_case(tpl: ChatTemplate, bos, eos, conversation: dict[str, Any], now) -> dict[str, Any]:
    """``{"ok": True, "text": ...}`` or ``{"ok": False, "error": ...}``, like the goldens."""
    kwargs = dict(conversation.get("kwargs", {}))
    variables = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
    agp = kwargs.pop("add_generation_prompt", False)
    cfm = kwargs.pop("continue_final_message", False)
    variables.update(kwargs)
    try:
        out = tpl.render(
            conversation["messages"],
            tools=conversation.get("tools"),
            documents=conversation.get("documents"),
            add_generation_prompt=agp,
            continue_final_message=cfm,
            variables=variables,
            now=now,
        )
    except ChatTemplateError as exc:
        return {"ok": False, "error": exc.template_message}
    result: dict[str, Any] = {"ok": True, "text": out.text}
    if out.assistant_spans is not None:
        result["spans"] = [list(s) for s in out.assistant_spans]
    return result


def same(ours: dict[str, Any], expected: dict[str, Any], *, prefix_errors: bool = False) -> bool:
    if ours["ok"] != expected["ok"]:
        return False
    if not ours["ok"]:
        return ours["error"].startswith(expected["error"]) if prefix_errors else ours["error"] == expected["error"]
    if ours["text"] != expected["text"]:
        return False
    return "spans" not in expected or ours.get("spans") == expected["spans"]
