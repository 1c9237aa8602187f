"""Run the OpenCompass bridge end to end against the real OpenCompass 0.5.4.

    python tools/bridges/e2e_opencompass.py                       # layer over /tmp/venvs/opencompass, else build
    python tools/bridges/e2e_opencompass.py --opencompass-venv DIR # a venv with OpenCompass 0.5.4 installed
    python tools/bridges/e2e_opencompass.py --build               # a fresh venv with OpenCompass 0.5.4
    python tools/bridges/e2e_opencompass.py -- -k oc_gen          # arguments after -- go to pytest

Standard library only. It prepares a virtual environment (``--venv``, default
``/tmp/prompt-style-e2e/opencompass``), installs this checkout's prompt-style,
its light first-party plugins and ``contrib/opencompass`` into it (editable, no
dependencies), and runs ``contrib/opencompass/tests/`` there with pytest: the
end-to-end test exports every case with ``prompt-style export opencompass``,
runs OpenCompass's own command line on the configs with recording models, and
compares what OpenCompass hands the models with ``prompt-style render --format
jsonl``. The summary counts the prompts compared.

The environment is either

* layered over an existing OpenCompass venv (``--opencompass-venv``; the
  default when ``/tmp/venvs/opencompass`` has OpenCompass): a new venv whose
  ``site-packages`` sees the other's through a ``.pth`` file, so nothing is
  installed into the existing venv; or
* built (``--build``): ``torch==2.13.0`` (the CPU wheel) first, then
  ``opencompass==0.5.4`` without its dependencies and the ones it imports,
  pinned where today's releases break OpenCompass 0.5.4 (numpy<2 with
  pyarrow<22, datasets<4, transformers<5).

Either way it adds :data:`RUNTIME`: modules ``opencompass``'s command line
imports at start-up (through ``opencompass.datasets``) that the pinned recipe
leaves out, installed without dependencies so that nothing already pinned moves.

Exit status: pytest's (0 when every case gave the same prompts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "contrib" / "opencompass" / "tests"
DEFAULT_OPENCOMPASS_VENV = Path("/tmp/venvs/opencompass")
DEFAULT_VENV = Path(os.environ.get("PROMPT_STYLE_E2E_VENVS", "/tmp/prompt-style-e2e")) / "opencompass"

BUILD = [
    ["torch==2.13.0"],
    ["--no-deps", "opencompass==0.5.4", "mmengine==0.10.7"],
    [
        "addict", "yapf", "termcolor", "rich", "numpy<2", "tqdm", "pyyaml", "packaging", "importlib_metadata",
        "requests", "datasets<4", "pyarrow<22", "transformers<5", "httpx", "jieba", "scipy", "scikit-learn",
        "evaluate", "rouge_chinese", "nltk", "rank_bm25", "regex",
    ],
]  # fmt: skip
"""The OpenCompass 0.5.4 install that works today (docs/harnesses.md#opencompass)."""
RUNTIME = [
    "absl-py==2.5.1", "annotated-types==0.8.0", "fuzzywuzzy==0.18.0", "gradio_client==1.3.0", "h5py==3.16.0",
    "httpx2==2.16.2", "jsonlines==4.0.0", "Levenshtein==0.27.5", "RapidFuzz==3.14.6", "openai==3.57.0",
    "prettytable==3.18.0", "pydantic==2.14.4", "pydantic_core==2.50.5", "rouge_score==0.1.2", "sniffio==1.3.1",
    "tiktoken==0.14.0", "timeout-decorator==0.5.0", "tree-sitter==0.26.1", "tree-sitter-languages==1.10.2",
    "typing-inspection==0.4.5", "websockets==17.4",
]  # fmt: skip
"""What ``opencompass``'s command line imports at start-up beyond the recipe (no dependencies)."""
TOOLS = ["pytest>=8", "pluggy>=1.3", "jinja2>=3.1.6"]
PACKAGES = [
    ".",
    "plugins/mmlu",
    "plugins/gpqa",
    "plugins/cloze",
    "plugins/chatml",
    "plugins/hf",
    "plugins/chat-formats",
    "contrib/opencompass",
]
"""This checkout's packages the environment gets (editable, no dependencies)."""


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def site_packages(python: Path) -> str:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def has_opencompass(python: Path) -> bool:
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('opencompass') is None)"
    return python.exists() and subprocess.run([str(python), "-c", code]).returncode == 0


def pip(python: Path, *args: str) -> None:
    print("+ pip install", " ".join(args), flush=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args], check=True)


def base_interpreter(env: Path) -> str:
    """The interpreter a venv was made from (``executable`` in its pyvenv.cfg)."""
    for line in (env / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "executable":
            return value.strip()
    return sys.executable


def prepare(args: argparse.Namespace) -> Path:
    target: Path = args.venv
    python = python_of(target)
    layered = None if args.build else args.opencompass_venv
    if layered is not None and not has_opencompass(python_of(layered)):
        if args.opencompass_venv != DEFAULT_OPENCOMPASS_VENV:
            raise SystemExit(f"{layered} has no OpenCompass: give a venv with opencompass==0.5.4, or --build")
        layered = None
    if not python.exists():
        interpreter = base_interpreter(layered) if layered is not None else sys.executable
        print(f"+ venv {target} ({interpreter})", flush=True)
        subprocess.run([interpreter, "-m", "venv", str(target)], check=True)
        if layered is not None:
            # The existing venv's packages, seen without touching them.
            (Path(site_packages(python)) / "_opencompass_venv.pth").write_text(
                site_packages(python_of(layered)) + "\n", encoding="utf-8"
            )
        else:
            for step in BUILD:
                pip(python, *step)
        pip(python, "--no-deps", *RUNTIME)
        pip(python, *TOOLS)
    for package in PACKAGES:
        pip(python, "--no-deps", "-e", str(ROOT / package))
    return python


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opencompass-venv", type=Path, default=DEFAULT_OPENCOMPASS_VENV)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the environment to prepare and run in")
    parser.add_argument("--build", action="store_true", help="install OpenCompass 0.5.4 in the venv itself")
    parser.add_argument("--report", type=Path, help="append one JSON line per comparison here")
    args = parser.parse_args(argv)
    python = prepare(args)
    report = args.report or Path(tempfile.mkstemp(prefix="opencompass-e2e-", suffix=".jsonl")[1])
    env = {**os.environ, "PROMPT_STYLE_E2E_REPORT": str(report)}
    command = [str(python), "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-q", str(TESTS), *extra]
    print("+", " ".join(command), flush=True)
    code = subprocess.run(command, cwd=ROOT, env=env).returncode
    lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines() if line.strip()]
    same = sum(line["identical"] for line in lines)
    prompts = sum(line["prompts"] for line in lines)
    print(
        f"OpenCompass 0.5.4: {len(lines)} comparisons, {prompts} prompts, {same} identical, {len(lines) - same} differing"
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
