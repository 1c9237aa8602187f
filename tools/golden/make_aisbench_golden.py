"""Golden files from AISBench's real multi-turn and multimodal prompt code.

* Multi-turn: ``MultiTurnPromptTemplate.generate_item`` builds a record's whole
  dialogue, and ``MultiTurnGenInferencer`` (``infer_mode`` every, every_with_gt,
  last) cuts it into requests; a stand-in model records the ``PromptList``
  each request hands to ``parse_template`` and answers with canned replies.
  AISBench's ``last`` mode crashes (RecursionError, recorded as such); its
  documented request is the last request of ``every_with_gt``.
* Multimodal: ``MMPromptTemplate.generate_item`` with ``prompt_mm`` templates
  and records whose ``content`` holds the ``<AIS_..._START>`` segment markers.

Saved: the inputs and, per request, the ``PromptList`` items (segment marker
dicts dropped). tests/test_aisbench_golden.py renders the same inputs with
prompt-style's OpenCompass reader and compares the dialogues.

Run it with the throwaway venv of tools/golden/README.md plus
``pip install --no-deps ais-bench-benchmark`` and what its modules import::

    /tmp/venvs/ocretr/bin/python tools/golden/make_aisbench_golden.py
"""

from __future__ import annotations

import asyncio
import copy
import importlib.metadata
import json
import platform
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "aisbench"

ROUND = [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]

MULTITURN = [
    ("plain", {"round": ROUND}, {"question": ["1+1=?", "2+2=?", "3+3=?"], "answer": ["2", "4", "6"]}),
    (
        "prefixed",
        {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}]},
        {"question": ["Hi {there}", "é ü 東京", "multi\nline"], "answer": ["{question}", "", "a\nb"]},
    ),
    (
        "begin_and_end",
        {
            "begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "You are helpful."}],
            "round": ROUND,
            "end": [{"role": "HUMAN", "prompt": "Answer briefly."}],
        },
        {"question": ["a?", "b?"], "answer": ["A", "B"]},
    ),
    ("one_turn", {"round": ROUND}, {"question": ["only?"], "answer": ["yes"]}),
]

MM_TEXT_IMAGE = {
    "text": {"type": "text", "text": "{question}"},
    "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
}
MM_ALL_BASE64 = {
    "text": {"type": "text", "text": "Question: {question}"},
    "image": {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,{image}"}},
    "video": {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,{video}"}},
    "audio": {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,{audio}"}},
}
TEXT, IMAGE, VIDEO, AUDIO, TAG = (
    "<AIS_TEXT_START>",
    "<AIS_IMAGE_START>",
    "<AIS_VIDEO_START>",
    "<AIS_AUDIO_START>",
    "<AIS_CONTENT_TAG>",
)
MULTIMODAL = [
    (
        "docvqa_like",
        MM_TEXT_IMAGE,
        {"content": f"{IMAGE}/data/a.png{TAG}{TEXT}What is the total?{TAG}", "answer": "42"},
    ),
    (
        "mm_custom_two_images_no_closing_tag",
        MM_TEXT_IMAGE,
        {"content": f"{IMAGE}/d/1.jpg{TAG}{IMAGE}/d/2.jpg{TAG}{TEXT}Same picture?", "answer": "no"},
    ),
    (
        "all_modalities_base64",
        MM_ALL_BASE64,
        {
            "content": f"{TEXT}What is this?{TAG}{IMAGE}aW1n{TAG}{AUDIO}YXVk{TAG}{VIDEO}ZjE=,ZjI={TAG}",
            "answer": "a cat",
        },
    ),
    (
        "text_after_media_with_braces",
        MM_ALL_BASE64,
        {"content": f"{AUDIO}QUFB{TAG}{TEXT}Say {{answer}} é{TAG}", "answer": "x"},
    ),
]


def versions() -> dict[str, str]:
    out = {name: importlib.metadata.version(name) for name in ("ais-bench-benchmark", "mmengine-lite")}
    out["python"] = platform.python_version()
    return out


def without_markers(prompt) -> list:
    return [
        copy.deepcopy(item)
        for item in prompt
        if not (isinstance(item, dict) and "section" in item and "pos" in item and "role" not in item)
    ]


class _Counter:
    async def post(self):
        pass

    async def rev(self):
        pass

    async def failed(self):
        pass

    async def finish(self):
        pass

    async def case_finish(self):
        pass


class _Handler:
    async def report_cache_info(self, *args, **kwargs):
        pass


class _Model:
    """Records what each request hands to parse_template; replies with canned text."""

    def __init__(self, replies):
        self.replies = iter(replies)
        self.requests = []

    def parse_template(self, prompt, mode):
        self.requests.append(without_markers(prompt))
        return prompt

    async def generate(self, history, max_out_len, output, session=None, **kwargs):
        output.success = True
        output.content = next(self.replies)


def multiturn_requests(template, record, mode, replies):
    from ais_bench.benchmark.openicl.icl_inferencer.icl_multiturn_inferencer import MultiTurnGenInferencer
    from ais_bench.benchmark.openicl.icl_prompt_template.icl_prompt_template_multiturn import (
        MultiTurnPromptTemplate,
    )
    from ais_bench.benchmark.utils.logging.logger import AISLogger

    prompt = MultiTurnPromptTemplate(template).generate_item(record)
    inferencer = MultiTurnGenInferencer.__new__(MultiTurnGenInferencer)
    model = _Model(replies)
    inferencer.model = model
    inferencer.infer_mode = mode
    inferencer.perf_mode = False
    inferencer.status_counter = _Counter()
    inferencer.output_handler = _Handler()
    inferencer.logger = AISLogger()
    data = {"index": 0, "prompt": prompt, "data_abbr": "golden", "max_out_len": 16, "gold": None}
    try:
        asyncio.run(inferencer.do_request(data, None, None))
    except RecursionError:
        # infer_last adds a list and a PromptList: PromptList.__radd__ calls itself forever.
        return {"error": "RecursionError in MultiTurnGenInferencer.infer_last"}
    return model.requests


def multimodal_prompt(prompt_mm, record):
    from ais_bench.benchmark.openicl.icl_prompt_template.icl_prompt_template_mm import MMPromptTemplate

    template = MMPromptTemplate({"round": [{"role": "HUMAN", "prompt_mm": prompt_mm}]})
    return without_markers(template.generate_item(record))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    cases = []
    for name, template, record in MULTITURN:
        replies = [f"reply {i}" for i in range(len(record["answer"]))]
        for mode in ("every", "every_with_gt", "last"):
            cases.append(
                {
                    "name": f"{name}_{mode}",
                    "template": template,
                    "record": record,
                    "infer_mode": mode,
                    "replies": replies,
                    "requests": multiturn_requests(template, record, mode, replies),
                }
            )
    meta = {"generator": versions(), "script": "tools/golden/make_aisbench_golden.py"}
    (OUT / "multiturn.json").write_text(
        json.dumps({**meta, "cases": cases}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    mm = [
        {"name": name, "prompt_mm": prompt_mm, "record": record, "prompt": multimodal_prompt(prompt_mm, record)}
        for name, prompt_mm, record in MULTIMODAL
    ]
    (OUT / "multimodal.json").write_text(
        json.dumps({**meta, "cases": mm}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
