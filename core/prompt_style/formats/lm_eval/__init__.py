"""lm-evaluation-harness task files (the ``lm-eval`` task-file format).

A task YAML as lm-evaluation-harness 0.4.13 ships it — ``include`` chains,
``dataset_*``, the four split keys, ``doc_to_*``, ``fewshot_config``,
``output_type``, ``generation_kwargs``, ``gen_prefix``, ``!function`` task code
— is translated into the one :class:`~prompt_style.TaskConfig` the rest of
the pipeline renders. docs/lm-eval.md is the user's guide; the rules below
follow lm-evaluation-harness's own code (``lm_eval/api/task.py``,
``lm_eval/config/task.py``, ``lm_eval/api/samplers.py``).
"""

from __future__ import annotations

from .reader import LmEvalReader

__all__ = ["LmEvalReader"]
