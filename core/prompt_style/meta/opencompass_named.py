"""The meta templates shipped with OpenCompass 0.5.4, by name (``opencompass::NAME``).

Data only, so that the ``builtin-meta`` plugin can list their names without
importing :mod:`prompt_style.meta.opencompass`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NAMED_META_TEMPLATES"]

# Meta templates shipped with OpenCompass 0.5.4 (configs/models/...), by name.
NAMED_META_TEMPLATES: dict[str, dict[str, Any]] = {
    # openai/gpt_4.py, gemini/gemini_pro.py: API models without system messages.
    "api": {
        "round": [
            {"role": "HUMAN", "api_role": "HUMAN"},
            {"role": "BOT", "api_role": "BOT", "generate": True},
        ]
    },
    # hf_llama/hf_llama3_1_8b_instruct.py: API-style chat models with a system role.
    "api-system": {
        "round": [
            {"role": "HUMAN", "api_role": "HUMAN"},
            {"role": "BOT", "api_role": "BOT", "generate": True},
        ],
        "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
    },
    # hf_internlm/hf_internlm2_chat_7b_with_system.py
    "internlm2-chat": {
        "round": [
            {"role": "SYSTEM", "begin": "<|im_start|>system\n", "end": "<|im_end|>\n"},
            {"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
            {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True},
        ]
    },
    # hf_internlm/hf_internlm_chat_7b.py
    "internlm-chat": {
        "round": [
            {"role": "HUMAN", "begin": "<|User|>:", "end": "\n"},
            {"role": "BOT", "begin": "<|Bot|>:", "end": "<eoa>\n", "generate": True},
        ]
    },
    # qwen/ms_qwen_7b_chat.py
    "qwen-chat": {
        "round": [
            {"role": "HUMAN", "begin": "\n<|im_start|>user\n", "end": "<|im_end|>"},
            {"role": "BOT", "begin": "\n<|im_start|>assistant\n", "end": "<|im_end|>", "generate": True},
        ]
    },
    # baichuan/hf_baichuan2_7b_chat.py
    "baichuan2-chat": {
        "round": [
            {"role": "HUMAN", "begin": "<reserved_106>"},
            {"role": "BOT", "begin": "<reserved_107>", "generate": True},
        ]
    },
    # chatglm/hf_chatglm2_6b.py
    "chatglm2": {
        "round": [
            {"role": "HUMAN", "begin": "[Round 1]\n\n问：", "end": "\n\n"},
            {"role": "BOT", "begin": "答：", "end": "\n\n", "generate": True},
        ]
    },
    # moss/hf_moss_moon_003_sft.py
    "moss": {
        "round": [
            {"role": "HUMAN", "begin": "<|Human|>: ", "end": "<eoh>\n"},
            {"role": "BOT", "begin": "<|MOSS|>: ", "end": "<eom>\n", "generate": True},
        ]
    },
    # vicuna/vllm_vicuna_7b_v15_16k.py
    "vicuna": {
        "round": [
            {"role": "HUMAN", "begin": "USER: "},
            {"role": "BOT", "begin": " ASSISTANT:", "end": "</s>", "generate": True},
        ]
    },
    # zephyr/vllm_zephyr_7b_beta.py
    "zephyr": {
        "round": [
            {"role": "HUMAN", "begin": "<|user|>\n", "end": "</s>"},
            {"role": "BOT", "begin": "<|assistant|>\n", "end": "</s>", "generate": True},
        ]
    },
    # others/hf_orionstar_yi_34b_chat.py
    "orionstar-yi-chat": {
        "begin": "<|startoftext|>",
        "round": [
            {"role": "HUMAN", "begin": "Human: ", "end": "\n\n"},
            {"role": "BOT", "begin": "Assistant: <|endoftext|>", "end": "<|endoftext|>", "generate": True},
        ],
    },
}
