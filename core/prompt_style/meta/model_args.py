"""lm-evaluation-harness's ``--model_args`` form, choosing the meta template and its options.

Evaluation people already describe a model as ``pretrained=PATH,chat_template=chatml,...``;
prompt-style reads the same string (``--model-args`` on the command line,
``model_args=`` in :func:`~prompt_style.load_task`) and maps it onto a meta
template and meta options:

==========================  ==========================================================
key                         meaning here
==========================  ==========================================================
``chat_template=NAME``      the meta template (``chatml``, ``llama-3``, ``hf``, ``plain``...);
                            ``true`` / ``auto``: the model's own template (``hf``); a
                            ``.jinja`` file or a model folder: ``hf`` with that template
``pretrained=PATH``         a local model folder: its tokenizer (``tokenizer=PATH``) and,
                            for ``hf``, its chat template (``template=PATH``)
``tokenizer=PATH``          the tokenizer, when it is not the model folder's
``add_bos_token=BOOL``      ``add_special_tokens`` (lm-evaluation-harness's name)
``prefix_token_id=ID``      the token scored before a continuation with an empty context
lm-eval's model-loading     ignored, with a warning (they do not change a prompt):
keys (``dtype``, ...)       see :data:`IGNORED_KEYS`
anything else               a meta option (``add_generation_prompt=false``,
                            ``enable_thinking=false``, ``fewshot_as_multiturn=false``)
==========================  ==========================================================

Values are read as lm-evaluation-harness reads them (``handle_arg_string``):
``true``/``false`` (any case), ``none``, integers, floats, quoted strings kept
as strings, anything else a string.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import OptionError

__all__ = ["ModelArgs", "parse_model_args", "apply_model_args", "IGNORED_KEYS"]

IGNORED_KEYS = frozenset(
    {
        # lm-evaluation-harness HFLM arguments that load or run the model
        "backend",
        "revision",
        "subfolder",
        "truncation",
        "logits_cache",
        "max_length",
        "device",
        "dtype",
        "softmax_dtype",
        "mixed_precision_dtype",
        "batch_size",
        "max_batch_size",
        "trust_remote_code",
        "use_fast_tokenizer",
        "parallelize",
        "max_memory_per_gpu",
        "max_cpu_memory",
        "offload_folder",
        "tp_plan",
        "peft",
        "delta",
        "autogptq",
        "gptqmodel",
        "gguf_file",
        "think_end_token",
        # vLLM and API models
        "tensor_parallel_size",
        "data_parallel_size",
        "gpu_memory_utilization",
        "max_model_len",
        "quantization",
        "seed",
        "model",
        "base_url",
        "num_concurrent",
        "max_retries",
        "tokenized_requests",
    }
)
"""Model-args keys that load or run a model and never change a prompt."""

_MODEL_OWN_TEMPLATE = "hf"


def _value(text: str) -> Any:
    """lm-evaluation-harness's ``handle_arg_string``."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in ("'", '"'):
        return text[1:-1]
    lower = text.lower()
    if lower == "true":
        return True
    if lower == "false":
        return False
    if lower == "none":
        return None
    if text.lstrip("+-").isdigit() and text not in ("", "+", "-"):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class ModelArgs:
    """What a model-args string says about prompts."""

    meta: str | None = None
    """The meta template ``chat_template`` names, or ``None``."""
    meta_options: dict[str, Any] = field(default_factory=dict)
    """Options for the meta template (tokenizer options included)."""
    ignored: tuple[str, ...] = ()
    """Keys that only load or run the model (and token options without a local tokenizer)."""


def _split(text: str) -> dict[str, Any]:
    """lm-evaluation-harness's ``simple_parse_args_string``, with errors for malformed pairs."""
    out: dict[str, Any] = {}
    for item in (part for part in text.strip().split(",") if part):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OptionError(
                f"model args: {item!r} is not KEY=VALUE",
                key="model_args",
                hint="for example --model-args pretrained=./model,chat_template=hf",
            )
        out[key] = _value(value)
    return out


def parse_model_args(model_args: str | Mapping[str, Any]) -> ModelArgs:
    """Read a model-args string (``"pretrained=./m,chat_template=chatml"``) or mapping.

    :returns: the :class:`ModelArgs`: meta template, meta options, ignored keys.
    :raises OptionError: for a malformed pair or an unusable value.
    """
    pairs = _split(model_args) if isinstance(model_args, str) else dict(model_args)
    meta: str | None = None
    options: dict[str, Any] = {}
    ignored = []
    pretrained = pairs.pop("pretrained", None)
    template = pairs.pop("chat_template", None)
    if template is True or (isinstance(template, str) and template.lower() == "auto"):
        meta = _MODEL_OWN_TEMPLATE
    elif isinstance(template, str) and (template.endswith(".jinja") or ("/" in template and Path(template).exists())):
        meta = _MODEL_OWN_TEMPLATE
        options["template"] = template
    elif isinstance(template, str) and template:
        meta = template
    elif template not in (None, False):
        raise OptionError(
            f"model args: chat_template={template!r} is not a meta template name",
            key="model_args.chat_template",
            hint="for example chat_template=chatml, chat_template=hf, or chat_template=true for the model's own",
        )
    for key, value in pairs.items():
        if key in IGNORED_KEYS:
            ignored.append(key)
        elif key == "tokenizer":
            options["tokenizer"] = value
        elif key == "add_bos_token":
            options["add_special_tokens"] = "auto" if value is None else value
        else:
            options[key] = value
    if pretrained is not None:
        if isinstance(pretrained, str) and Path(pretrained).expanduser().is_dir():
            options.setdefault("tokenizer", pretrained)
            if meta == _MODEL_OWN_TEMPLATE:
                options.setdefault("template", pretrained)
        else:
            warnings.warn(
                f"prompt-style: model args: pretrained={pretrained} is not a local folder; prompt-style reads "
                "local files only, so its tokenizer and chat template are not used",
                stacklevel=2,
            )
    if "tokenizer" not in options:
        # add_bos_token and prefix_token_id are about token ids, which need a local tokenizer.
        for key, given in (("add_special_tokens", "add_bos_token"), ("prefix_token_id", "prefix_token_id")):
            if key in options:
                del options[key]
                ignored.append(given)
    return ModelArgs(meta, options, tuple(ignored))


def apply_model_args(
    model_args: str | Mapping[str, Any],
    meta: str,
    meta_options: Mapping[str, Any] | None,
    *,
    default: str = "plain",
) -> tuple[str, dict[str, Any]]:
    """Merge model args into the meta template and its options.

    ``chat_template`` replaces the default meta template (``default``: ``plain``
    for tasks, ``hf`` for ``prompt-style chat``); naming another meta template as
    well is an error, and so is giving one option two different values.
    """
    parsed = parse_model_args(model_args)
    if parsed.ignored:
        warnings.warn(
            "prompt-style: model args: ignored (they load or run the model, or need a local tokenizer): "
            + ", ".join(parsed.ignored),
            stacklevel=2,
        )
    chosen = meta
    if parsed.meta is not None:
        if meta not in (default, parsed.meta):
            raise OptionError(
                f"the meta template is given twice: {meta!r} and chat_template={parsed.meta!r} in the model args",
                key="model_args.chat_template",
                hint="keep one of them",
            )
        chosen = parsed.meta
    options = dict(parsed.meta_options)
    for key, value in (meta_options or {}).items():
        if key in options and options[key] != value:
            raise OptionError(
                f"meta option {key!r} is given twice: {options[key]!r} in the model args and {value!r}",
                key=f"meta.{key}",
                hint="keep one of them",
            )
        options[key] = value
    return chosen, options
