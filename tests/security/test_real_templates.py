"""Every real template renders unchanged under the default budgets.

``real_templates/`` holds seven chat templates from model repositories (the
largest, the one with the most tokens, tool use, vision, reasoning, the clock)
and what transformers 5.23.0 renders for five conversations; they must come out
byte for byte, with a transformers-like profile, and no budget may fire. When
the shared corpora are present (``PROMPT_STYLE_CORPORA``, default
``/work/shared/corpora``), all 59 chat templates and all SciRIFF task templates
are rendered too, and no budget may fire on any of them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prompt_style import LimitError, SandboxError
from prompt_style.safe import jinja_env as J

HERE = Path(__file__).resolve().parent / "real_templates"
CORPORA = Path(os.environ.get("PROMPT_STYLE_CORPORA", "/work/shared/corpora"))
NOW = "2025-07-10T12:00:00"


class TemplateRaised(Exception):
    pass


def _raise_exception(message):
    raise TemplateRaised(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _generation_extension():
    from jinja2 import nodes
    from jinja2.ext import Extension

    class Generation(Extension):  # transformers' {% generation %} block, printed as is
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    return Generation


def chat_profile():
    return J.JinjaProfile(
        "test-transformers-like",
        trim_blocks=True,
        lstrip_blocks=True,
        loop_controls=True,
        strict_undefined=False,
        strftime_now=True,
        globals=(("raise_exception", _raise_exception),),
        filters=(("tojson", _tojson),),
        extensions=(_generation_extension(),),
    )


EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
CASES = [(name, conv) for name in EXPECTED["templates"] for conv in EXPECTED["conversations"]]


@pytest.mark.parametrize("name, conversation", CASES)
def test_real_chat_templates_render_byte_for_byte(name, conversation):
    info = EXPECTED["templates"][name]
    spec = EXPECTED["conversations"][conversation]
    compiled = J.compile_template((HERE / info["file"]).read_text(encoding="utf-8"), chat_profile())
    context = {
        "messages": spec["messages"],
        "bos_token": info["bos_token"] or "",
        "eos_token": info["eos_token"] or "",
        **spec["kwargs"],
    }
    want = info["renders"][conversation]
    if not want["ok"]:
        with pytest.raises(TemplateRaised):
            J.render(compiled, context, now=NOW)
        return
    assert J.render(compiled, context, now=NOW) == want["text"]


@pytest.mark.skipif(not (CORPORA / "chat_templates").is_dir(), reason="the shared chat-template corpus is not here")
def test_no_budget_fires_on_the_chat_template_corpus():
    root = CORPORA / "chat_templates"
    expected = json.loads((root / "expected.json").read_text())
    index = json.loads((root / "index.json").read_text())
    profile = chat_profile()
    stopped = []
    for name, info in index.items():
        compiled = J.compile_template((root / "templates" / info["file"]).read_text(), profile)
        for conv, spec in expected["meta"]["conversations"].items():
            context = {
                "messages": spec["messages"],
                "bos_token": info.get("bos_token") or "",
                "eos_token": info.get("eos_token") or "",
                **spec["kwargs"],
            }
            try:
                J.render(compiled, context, now=NOW)
            except (LimitError, SandboxError) as exc:
                stopped.append(f"{name}/{conv}: {exc}")
            except Exception:
                pass  # the template's own raise_exception, as in transformers
    assert not stopped


@pytest.mark.skipif(not (CORPORA / "sciriff").is_dir(), reason="the shared SciRIFF corpus is not here")
def test_no_budget_fires_on_the_sciriff_templates():
    import yaml

    root = CORPORA / "sciriff"
    profile = J.JinjaProfile("test-sciriff-like", globals=(("zip", zip),), mutable=True)
    stopped = []
    for line in (root / "expected.jsonl").read_text().splitlines():
        row = json.loads(line)
        document = yaml.safe_load((root / row["file"]).read_text())
        template = document["templates"][row["_template_id"]]
        context = dict(row["instance"])
        context["answer_choices"] = (template.get("metadata") or {}).get("answer_choices") or []
        try:
            J.render(J.compile_template(template["jinja"], profile), context)
        except (LimitError, SandboxError) as exc:
            stopped.append(f"{row['file']}: {exc}")
        except Exception:
            pass
    assert not stopped
