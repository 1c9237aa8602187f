"""``hf``: any model's own Hugging Face chat template, rendered as transformers'
``apply_chat_template(tokenize=False)`` renders it, without transformers.

``--meta hf --meta-option template=PATH`` where ``PATH`` is a ``.jinja`` file,
a ``tokenizer_config.json`` or a local model folder. The template runs in
prompt-style's Jinja sandbox, set up as transformers sets up its own; see
docs/chat.md for every option.
"""

from __future__ import annotations

from typing import Any

from prompt_style import hookimpl

__all__ = ["hf", "render_template"]


def hf(*, options: dict[str, Any]):
    """The ``hf`` meta template factory (imports jinja2 and reads the template on use)."""
    from .meta import hf_meta

    return hf_meta(options)


def render_template(source: str, messages: Any, **kwargs: Any) -> str:
    """Render ``messages`` with a chat template given as Jinja source, as
    ``apply_chat_template(messages, chat_template=source, tokenize=False, **kwargs)``
    does (special tokens are passed as keyword arguments, e.g. ``bos_token="<s>"``)."""
    from .chat_template import ChatTemplate

    tools = kwargs.pop("tools", None)
    documents = kwargs.pop("documents", None)
    agp = kwargs.pop("add_generation_prompt", False)
    cfm = kwargs.pop("continue_final_message", False)
    now = kwargs.pop("now", None)
    from .meta import _parse_now

    rendered = ChatTemplate(source).render(
        messages,
        tools=tools,
        documents=documents,
        add_generation_prompt=agp,
        continue_final_message=cfm,
        variables=kwargs,
        now=_parse_now(now),
    )
    return rendered.text


def _options() -> dict[str, str]:
    from .meta import OPTIONS

    return dict(OPTIONS)


# What hf declares to `prompt-style plugins --all` (its module is imported only then).
hf.options = _options  # type: ignore[attr-defined]
hf.extra_options = "every other option is a template variable, as transformers passes **kwargs"  # type: ignore[attr-defined]


@hookimpl
def apply_meta_template():
    return {"hf": hf}
