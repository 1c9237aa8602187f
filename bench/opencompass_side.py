"""OpenCompass's side of bench/opencompass_bench.py (run with OpenCompass's Python).

    /tmp/venvs/opencompass/bin/python bench/opencompass_side.py WORKDIR REPEAT

Reads WORKDIR/task.yaml (a dataset config with a FixKRetriever), WORKDIR/meta.yaml,
WORKDIR/dev.jsonl and WORKDIR/test.jsonl, builds every generation prompt as
OpenCompass's GenInferencer does before calling a model — PromptTemplate,
FixKRetriever (``retrieve``, ``generate_ice``, ``generate_prompt_for_generate_task``)
and the model's LMTemplateParser (``parse_template(mode='gen')``) — and writes
the prompts to WORKDIR/opencompass.json and the timings to WORKDIR/opencompass_times.json.
The timed work starts from the records in memory as a ``datasets.Dataset``
(building it is not timed).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

warnings.filterwarnings("ignore")

import yaml  # noqa: E402
from datasets import Dataset  # noqa: E402
from opencompass.models.base import LMTemplateParser  # noqa: E402
from opencompass.openicl.icl_prompt_template import PromptTemplate  # noqa: E402
from opencompass.openicl.icl_retriever import FixKRetriever  # noqa: E402


def template(cfg):
    cfg = dict(cfg)
    cfg.pop("type")
    return PromptTemplate(**cfg)


def render(config, meta, dev, test):
    infer = config["infer_cfg"]
    ice_template = template(infer["ice_template"])
    prompt_template = template(infer["prompt_template"])
    options = {k: v for k, v in infer["retriever"].items() if k != "type"}
    dataset = SimpleNamespace(
        reader=SimpleNamespace(output_column=config["reader_cfg"]["output_column"]), train=dev, test=test
    )
    parser = LMTemplateParser(meta)
    retriever = FixKRetriever(dataset, **options)
    with contextlib.redirect_stderr(io.StringIO()):
        ice_idx_list = retriever.retrieve()
    prompts = []
    for idx, ice_idx in enumerate(ice_idx_list):
        ice = retriever.generate_ice(ice_idx, ice_template=ice_template)
        prompt = retriever.generate_prompt_for_generate_task(
            idx, ice, gen_field_replace_token="", ice_template=ice_template, prompt_template=prompt_template
        )
        prompts.append(parser.parse_template(prompt, mode="gen"))
    return prompts


def main() -> None:
    work, repeat = Path(sys.argv[1]), int(sys.argv[2])
    config = yaml.safe_load((work / "task.yaml").read_text(encoding="utf-8"))
    meta = yaml.safe_load((work / "meta.yaml").read_text(encoding="utf-8"))

    def records(name):
        with (work / name).open(encoding="utf-8") as handle:
            return Dataset.from_list([json.loads(line) for line in handle])

    dev, test = records("dev.jsonl"), records("test.jsonl")
    times = []
    prompts = None
    for _ in range(repeat):
        started = time.perf_counter()
        prompts = render(config, meta, dev, test)
        times.append(time.perf_counter() - started)
    (work / "opencompass.json").write_text(json.dumps(prompts, ensure_ascii=False), encoding="utf-8")
    import opencompass

    (work / "opencompass_times.json").write_text(
        json.dumps({"times": times, "version": opencompass.__version__}), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
