"""The keys of lm-evaluation-harness 0.4.13 task files, by what prompt-style does with them."""

from __future__ import annotations

PROMPT_KEYS: dict[str, str] = {
    "task": "the task's name",
    "include": "task files whose keys this one inherits",
    "dataset_path": "the dataset (json: local data_files; anything else comes from --data)",
    "dataset_name": "the dataset's configuration",
    "dataset_kwargs": "arguments of datasets.load_dataset (data_files is read for dataset_path: json)",
    "custom_dataset": "a function building the data (give the records with --data instead)",
    "training_split": "the training split's name (few-shot examples come from it first)",
    "validation_split": "the validation split's name (evaluated when there is no test_split)",
    "test_split": "the evaluated split's name",
    "fewshot_split": "the split few-shot examples come from",
    "process_docs": "!function run once on each split's records",
    "doc_to_text": "the question",
    "doc_to_choice": "the choices",
    "doc_to_target": "the gold answer",
    "description": "text before the prompt (the system message with a chat template)",
    "target_delimiter": "between a question and its answer",
    "fewshot_delimiter": "after each few-shot example",
    "fewshot_config": "how few-shot examples are chosen and shown",
    "num_fewshot": "the number of few-shot examples",
    "output_type": "multiple_choice, generate_until, loglikelihood or loglikelihood_rolling",
    "generation_kwargs": "generation settings; its until gives the stop sequences",
    "gen_prefix": "text the answer starts with",
    "template": "a prompt style (the template system of prompt-style)",
}
"""Keys that shape the prompt: read and used."""

KEPT_KEYS: dict[str, str] = {
    "task_alias": "the task's display name",
    "tag": "tags naming groups of tasks",
    "group": "a group the task belongs to",
    "group_alias": "the group's display name",
    "task_list": "tasks defined by this file",
    "metric_list": "metrics",
    "filter_list": "answer filters",
    "aggregate_metric_list": "how group metrics are aggregated",
    "process_results": "scoring code",
    "metadata": "free-form information",
    "repeats": "how often each request is sent",
    "should_decontaminate": "decontamination",
    "doc_to_decontamination_query": "decontamination",
    "unsafe_code": "whether scoring runs generated code",
}
"""Keys that do not change prompts: accepted and kept in ``TaskConfig.extras``."""

REFUSED_KEYS: dict[str, str] = {
    "use_prompt": "promptsource prompts replace doc_to_text, doc_to_choice and doc_to_target; "
    "prompt-style does not read them from lm-evaluation-harness task files "
    "(write the prompt as doc_to_text, or use a promptsource template file)",
    "doc_to_image": "images are model inputs prompt-style does not build for lm-evaluation-harness tasks",
    "doc_to_audio": "audio is a model input prompt-style does not build for lm-evaluation-harness tasks",
    "class": "a Python task class builds its own prompts; prompt-style reads YAML tasks only "
    "(a task file with a metadata.prompt_style block may name prompt-style-lm-eval's task class)",
}
"""Keys that would change prompts in ways prompt-style does not support: errors."""

FEWSHOT_KEYS: dict[str, str] = {
    "sampler": "default (random with seed 1234, shared by the task) or first_n",
    "split": "the split examples come from",
    "process_docs": "!function run on the few-shot split",
    "fewshot_indices": "accepted; lm-evaluation-harness 0.4.13 never hands it to its sampler",
    "samples": "the examples themselves (a list, or a !function giving one)",
    "doc_to_text": "the question of an example",
    "doc_to_choice": "the choices of an example",
    "doc_to_target": "the answer of an example",
    "gen_prefix": "text an example's answer starts with",
    "fewshot_delimiter": "after each example",
    "target_delimiter": "between an example's question and answer",
}
"""Keys of ``fewshot_config`` (lm-evaluation-harness's ``FewshotConfig``)."""

SAMPLERS = ("default", "first_n")

LM_EVAL_ONLY = (set(PROMPT_KEYS) | set(KEPT_KEYS) | set(REFUSED_KEYS)) - {
    "task",
    "test_split",
    "fewshot_split",
    "doc_to_text",
    "doc_to_choice",
    "doc_to_target",
    "description",
    "target_delimiter",
    "fewshot_delimiter",
    "num_fewshot",
    "template",
    "metadata",
}
"""Keys that mark a file as lm-evaluation-harness's (the others are prompt-style's too).
``output_type`` and ``gen_prefix`` are prompt-style keys as well, but a file without
``data`` that uses them is an lm-evaluation-harness task."""

NATIVE_ONLY = ("data", "retriever", "seed", "until")
"""Keys only prompt-style's own task files have."""
