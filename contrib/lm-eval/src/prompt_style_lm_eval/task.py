"""The lm-evaluation-harness task class: ``class: !function prompt_style_lm_eval.task.PromptStyleTask``.

lm-evaluation-harness 0.4.13 builds a task whose YAML has a ``class:`` key as
``cls(config=cfg)``. :class:`PromptStyleTask` is lm-eval's own
``ConfigurableTask`` (metrics, filters, ``--limit``, ``--samples``, logging
unchanged) whose prompts come from prompt-style, record by record: the
``fewshot_context`` of a record renders that record (so every retriever sees
the record it chooses examples for, unlike lm-eval's sampler hook), and
``construct_requests`` sends the continuations, contexts and stop sequences
``prompt-style render`` gives. This module imports lm_eval; the rest of the
bridge does not.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from prompt_style import PromptStyleError

from .runtime import Docs, LazyRows, Prompts, RunSettings
from .source import Source, source_of

__all__ = ["PromptStyleTask"]

log = logging.getLogger(__name__)


def _by_lm_eval_cli() -> bool:
    """Whether this process is lm-eval's command line (``lm-eval``, ``python -m lm_eval``),
    where a traceback through lm-eval's code is noise."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return script.name in ("lm-eval", "lm_eval") or (script.name == "__main__.py" and script.parent.name == "lm_eval")


def _one_line(method: Callable[..., Any]) -> Callable[..., Any]:
    """On lm-eval's command line, a prompt-style error stops the run as ``prompt-style``
    does: one line on stderr, exit status 2 (on a line of its own: lm-eval's progress bar
    may be on the current one). Elsewhere (``simple_evaluate``) the typed error propagates."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except PromptStyleError as exc:
            if not _by_lm_eval_cli():
                raise
            print(f"\nprompt-style: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper


class PromptStyleTask(ConfigurableTask):
    """An lm-evaluation-harness task whose prompts prompt-style renders."""

    @_one_line
    def __init__(
        self,
        data_dir: Any = None,
        cache_dir: Any = None,
        download_mode: Any = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        config = dict(config or {})
        config.pop("class", None)  # lm-eval's TaskConfig has no such field
        self._source: Source = source_of(config)
        self._prompts: Prompts | None = None
        self._seed: int | None = None
        self._run_settings: RunSettings | None = None
        self._run_key: tuple[Any, ...] = ()
        # lm-eval's own checks of the first record would read the task's doc_to_choice; the
        # choices are prompt-style's (doc_to_choice below), and so is the multiple-input mode.
        choice = config.pop("doc_to_choice", None)
        super().__init__(data_dir=data_dir, cache_dir=cache_dir, download_mode=download_mode, config=config)
        first = self.prompts.render(self.prompts.docs()[0])
        self.multiple_input = len(first.contexts) if first.contexts is not None else 0
        if self.OUTPUT_TYPE == "multiple_choice":
            self.config.doc_to_choice = choice
        # The task's number of shots is prompt-style's (a block's shots:); 0 as None, so that
        # lm-eval's --num_fewshot applies (it leaves a task whose config says 0 at zero).
        self.config.num_fewshot = self.prompts.default_shots or None
        # else none: the gold answer is already the reference text (lm-eval would index choices with it)

    # -- data -------------------------------------------------------------------------

    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        source = self._source
        options = dict(source.options)
        if source.harness_data:
            super().download(dataset_kwargs, **kwargs)
            options["data"] = {split: LazyRows(self.dataset[split]) for split in self._named_splits()}
        else:
            self.dataset = {}
        if source.expected_sha256 and _sha256(source.task) != source.expected_sha256:
            log.warning(
                "%s: %s changed since it was exported; the prompts follow the file as it is now",
                self.config.task,
                source.task,
            )
        self._prompts = Prompts(source.task, options)

    def _named_splits(self) -> list[str]:
        config = self.config
        fewshot = getattr(config.fewshot_config, "split", None)
        names = (config.test_split, config.validation_split, config.training_split, config.fewshot_split, fewshot)
        return [name for name in dict.fromkeys(names) if name is not None and name in self.dataset]

    @property
    def prompts(self) -> Prompts:
        """The prompt-style side of the task (:class:`~prompt_style_lm_eval.runtime.Prompts`)."""
        assert self._prompts is not None, "download() loads the task"
        return self._prompts

    def test_docs(self) -> Docs:
        return self.prompts.docs() if self.has_test_docs() else super().test_docs()

    def validation_docs(self) -> Docs:
        if self.has_validation_docs() and not self.has_test_docs():
            return self.prompts.docs()
        return super().validation_docs()

    def fewshot_docs(self) -> None:
        return None  # prompt-style's retriever chooses the examples, per record

    def set_fewshot_seed(self, seed: int | None = None) -> None:
        super().set_fewshot_seed(seed)
        self._seed = seed

    # -- prompts ---------------------------------------------------------------------

    @_one_line
    def fewshot_context(
        self,
        doc: Mapping[str, Any],
        num_fewshot: int,
        system_instruction: str | None = None,
        apply_chat_template: bool = False,
        fewshot_as_multiturn: bool | None = False,
        chat_template: Callable[..., str] | None = None,
        gen_prefix: str | None = None,
    ) -> str | list[str]:
        # A rolling log-likelihood scores the document alone: no chat template (as lm-eval).
        chat = bool(apply_chat_template and chat_template) and self.OUTPUT_TYPE != "loglikelihood_rolling"
        key = (num_fewshot, chat, system_instruction, fewshot_as_multiturn, self._seed)
        settings = self._run_settings
        if settings is None or key != self._run_key:  # one settings object per run: the task is found by it
            settings = self._run_settings = RunSettings(*key)
            self._run_key = key
        return self.prompts.request(doc, settings, chat_template if chat else None)

    def doc_to_prefix(self, doc: Mapping[str, Any]) -> None:
        return None  # gen_prefix is part of prompt-style's prompt

    @_one_line
    def construct_requests(self, doc: Mapping[str, Any], ctx: str | list[str], **kwargs: Any) -> Any:
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        arguments = self.prompts.arguments(
            doc,
            ctx,
            self.OUTPUT_TYPE,
            self.config.generation_kwargs,
            mutual_info="acc_mutual_info" in self._metric_fn_list,
        )
        if self.OUTPUT_TYPE == "multiple_choice":
            return [
                Instance(request_type="loglikelihood", doc=doc, arguments=args, idx=i, **kwargs)
                for i, args in enumerate(arguments)
            ]
        return Instance(request_type=self.OUTPUT_TYPE, doc=doc, arguments=arguments[0], idx=0, **kwargs)

    # -- what lm-eval's scoring and logging read ----------------------------------------

    def doc_to_text(self, doc: Mapping[str, Any], doc_to_text: Any = None) -> Any:
        target, _ = self.prompts.gold(doc)
        prompt = self.prompts.last(doc)
        if prompt.contexts is not None:
            return target  # a multiple-input task: lm-eval scores doc_to_text as the gold index
        return prompt.text

    def doc_to_target(self, doc: Mapping[str, Any], doc_to_target: Any = None) -> Any:
        return self.prompts.gold(doc)[0]

    def doc_to_choice(self, doc: Mapping[str, Any], doc_to_choice: Any = None) -> Any:
        return self.prompts.gold(doc)[1]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
