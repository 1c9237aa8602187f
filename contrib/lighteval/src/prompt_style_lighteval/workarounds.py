"""``python -m prompt_style_lighteval.workarounds [--check | --undo]``: what a
fresh lighteval 0.13.0 install needs before it reads any custom task.

1. ``lighteval/tasks/tasks/tiny_benchmarks.py`` downloads ``tinyBenchmarks.pkl``
   when it is imported (lighteval imports every task module, for every run): an
   empty placeholder is created where it looks, so nothing is downloaded (the
   tinyBenchmarks tasks themselves then do not work offline).
2. ``HfApi().list_models(model_name=...)``, called while lighteval's task
   modules are imported, fails with huggingface_hub 1.x and later: a ``.pth``
   file is installed in this Python's site-packages that maps ``model_name=``
   to ``search=`` (``prompt_style_lighteval._hub_compat``).
3. ``xxhash`` 4 rejects ``str``, which lighteval hashes: checked only; install
   ``pip install "xxhash<4"``.

``--check`` reports and changes nothing (exit 1 when something is missing);
``--undo`` removes what 1 and 2 added.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

PTH = "prompt_style_lighteval_hub_compat.pth"
PTH_LINE = (
    "import importlib.util as _u; "
    "_u.find_spec('prompt_style_lighteval') and __import__('prompt_style_lighteval._hub_compat')\n"
)


def _lighteval_dir() -> Path | None:
    spec = importlib.util.find_spec("lighteval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _pkl() -> Path | None:
    root = _lighteval_dir()
    return root / "tasks" / "tasks" / "tinyBenchmarks.pkl" if root else None


def _pth() -> Path:
    return Path(sysconfig.get_paths()["purelib"]) / PTH


def _xxhash_ok() -> bool | None:
    try:
        return int(metadata.version("xxhash").split(".")[0]) < 4
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prompt_style_lighteval.workarounds", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="report only")
    mode.add_argument("--undo", action="store_true", help="remove the placeholder and the .pth file")
    args = parser.parse_args(argv)
    pkl, pth = _pkl(), _pth()
    if pkl is None:
        print("lighteval is not installed in this Python", file=sys.stderr)
        return 1
    if args.undo:
        for path in (pkl, pth):
            if path.is_file() and (path == pth or path.stat().st_size == 0):
                path.unlink()
                print(f"removed {path}")
        return 0
    missing = 0
    if not pkl.exists():
        if args.check:
            print(f"missing: {pkl} (lighteval downloads it on import)")
            missing += 1
        else:
            pkl.touch()
            print(f"created the placeholder {pkl}")
    if not pth.is_file():
        if args.check:
            print(f"missing: {pth} (HfApi.list_models(model_name=...) for huggingface_hub >= 1)")
            missing += 1
        else:
            pth.write_text(PTH_LINE, encoding="utf-8")
            print(f"installed {pth}")
    if _xxhash_ok() is False:
        print('xxhash 4 is installed, which lighteval cannot use: pip install "xxhash<4"')
        missing += 1
    if not missing:
        print("lighteval is ready for custom tasks" + (" (nothing changed)" if args.check else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
