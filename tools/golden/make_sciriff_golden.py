"""Write golden files made by SciRIFF's REAL template code on awkward values.

tests/data/sciriff/expected.jsonl pins what SciRIFF renders on placeholder values. This
script renders the same (file, template) pairs on awkward variants of those instances --
``|||`` in strings, in lists and in mapping keys, template syntax inside values, surrounding
whitespace, unicode, the pipe protector itself, empty strings -- with SciRIFF's own
``Template`` class, and writes ``tests/golden/sciriff/awkward.jsonl`` for
tests/test_task_template_corpus.py.

SciRIFF is not on PyPI; point the script at a checkout of its code (its template module
needs only jinja2 and pyyaml)::

    git clone https://github.com/shi-kejian/sciriff-dev /tmp/sciriff-dev   # or allenai/SciRIFF
    /tmp/venvs/promptsource/bin/python tools/golden/make_sciriff_golden.py --reference /tmp/sciriff-dev

``--release CHECKOUT`` (a clone of allenai/SciRIFF) also copies the release's own 54 task files
(a different layout from the development copies: no template metadata, no ``evaluate``) to
``tests/golden/sciriff/release/templates/`` and renders every template on records synthesised
from the fields it reads, into ``tests/golden/sciriff/release/cases.jsonl``.

``--reference`` may be the checkout or the ``template.py`` file itself
(``tasks/template.py`` in sciriff-dev, ``sciriff/instructions/template.py`` in SciRIFF).
The variants are drawn from ``random.Random(f"{file}:{template}:{variant}")``: re-running
gives byte-identical output for the same versions. It never imports prompt_style.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import platform
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "sciriff"
OUT = ROOT / "tests" / "golden" / "sciriff" / "awkward.jsonl"
RELEASE = ROOT / "tests" / "golden" / "sciriff" / "release"
VARIANTS = 6

AWKWARD = [
    "a ||| b",
    "|||",
    "x|||y|||z",
    "  leading and trailing  ",
    "\n\nnewlines around\n",
    "ünïcödé — 日本語 🙂",
    "{{ question }} {% if x %}{% endif %}",
    "{# not a comment #}",
    "",
    "   ",
    "3ed2dface8203c4c9dfb1a5dc58e41e0",
    "</span> & <b>'quotes' \"double\"</b>",
    "tab\there",
    "\u2028line sep\u00a0nbsp",
    "}}",
    "back\\slash",
]
PLAIN = ["alpha", "beta gamma", "δέλτα", "value with spaces", "x"]


def _text(rng: random.Random, pipes: bool) -> str:
    pool = AWKWARD if pipes else [a for a in AWKWARD if "|||" not in a]
    return rng.choice(pool + PLAIN)


def awkward(value, rng: random.Random, nested_pipes: bool, top: bool = True):
    """A value of the same shape with awkward strings; ``|||`` appears in top-level strings
    always, and inside lists and mappings only when ``nested_pipes``."""
    if isinstance(value, str):
        return _text(rng, pipes=top or nested_pipes)
    if isinstance(value, bool):
        return rng.choice([True, False])
    if isinstance(value, int):
        return rng.choice([0, 1, 2, -1, 10])
    if isinstance(value, list):
        size = rng.choice([0, 1, 2, 3]) if value else 0
        item = value[0] if value else ""
        return [awkward(item, rng, nested_pipes, top=False) for _ in range(size)]
    if isinstance(value, dict):
        return {
            _text(rng, pipes=nested_pipes) if isinstance(k, str) else k: awkward(v, rng, nested_pipes, top=False)
            for k, v in value.items()
        }
    return value


def load_reference(path: Path):
    if path.is_dir():
        for candidate in ("tasks/template.py", "sciriff/instructions/template.py", "template.py"):
            if (path / candidate).is_file():
                path = path / candidate
                break
        else:
            raise SystemExit(f"no template.py under {path}")
    spec = importlib.util.spec_from_file_location("sciriff_template", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True, help="a SciRIFF checkout or its template.py")
    parser.add_argument(
        "--release",
        type=Path,
        help="a checkout of allenai/SciRIFF: also copy its task files and render them on synthesised records",
    )
    args = parser.parse_args()
    import jinja2
    import yaml

    module, where = load_reference(args.reference)
    rows = [json.loads(line) for line in (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines()]
    out = []
    for row in rows:
        raw = yaml.load((CORPUS / row["file"]).read_text(encoding="utf-8"), Loader=yaml.FullLoader)
        body = raw["templates"][row["template_id"]]
        template = module.Template(**body)
        template._id = row["template_id"]
        for variant in range(VARIANTS):
            rng = random.Random(f"{row['file']}:{row['template_id']}:{variant}")
            instance = {k: awkward(v, rng, nested_pipes=variant >= 4) for k, v in row["instance"].items()}
            case = {"file": row["file"], "template_id": row["template_id"], "variant": variant, "instance": instance}
            try:
                applied = template.apply("id", copy.deepcopy(instance), {}, False, False)
                case["input"], case["output"] = applied["input"], applied["output"]
                case["answer_choices"] = template.get_answer_choices_list(copy.deepcopy(instance))
            except Exception as exc:  # noqa: BLE001 - the golden records what the reference raises
                case["error"] = f"{type(exc).__name__}: {exc}"
            out.append(case)
    header = {
        "generator": {
            "reference": str(where.relative_to(args.reference) if args.reference.is_dir() else where.name),
            "jinja2": jinja2.__version__,
            "pyyaml": yaml.__version__,
            "python": platform.python_version(),
            "variants": VARIANTS,
        }
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(header, ensure_ascii=False) + "\n")
        for case in out:
            handle.write(json.dumps(case, ensure_ascii=False) + "\n")
    errors = sum("error" in c for c in out)
    print(f"{len(out)} cases ({errors} where the reference raises) -> {OUT.relative_to(ROOT)}")
    if args.release is not None:
        release(module, args.release, header)
    return 0


def release(module, checkout: Path, header: dict) -> None:
    """allenai/SciRIFF's own task files (its public release: other YAML layout, no template
    metadata, no ``evaluate``), copied to RELEASE/templates, and every template rendered by
    SciRIFF's ``Template`` on records synthesised from the fields it reads (the synthesiser of
    make_promptsource_golden.py), written to RELEASE/cases.jsonl."""
    import shutil
    import subprocess

    import yaml

    spec = importlib.util.spec_from_file_location(
        "make_promptsource_golden", Path(__file__).with_name("make_promptsource_golden.py")
    )
    synth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(synth)
    source = checkout / "sciriff" / "instructions" / "templates"
    target = RELEASE / "templates"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    cases = []
    for path in sorted(source.glob("*.yaml")):
        shutil.copyfile(path, target / path.name)
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.FullLoader)
        for template_id, body in raw["templates"].items():
            template = module.Template(**body)
            template._id = template_id
            for variant, instance in zip(
                synth.SYNTH_VARIANTS, synth.synthesised_records([template.jinja, template.answer_choices])
            ):
                case = {"file": path.name, "template_id": template_id, "variant": variant, "instance": instance}
                try:
                    applied = template.apply("id", copy.deepcopy(instance), {}, False, False)
                    case["input"], case["output"] = applied["input"], applied["output"]
                except Exception as exc:  # noqa: BLE001 - the golden records what the reference raises
                    case["error"] = f"{type(exc).__name__}: {exc}"
                try:
                    case["answer_choices"] = template.get_answer_choices_list(copy.deepcopy(instance))
                except Exception as exc:  # noqa: BLE001
                    case["answer_choices_error"] = f"{type(exc).__name__}: {exc}"
                cases.append(case)
    generator = {**header["generator"], "release": "allenai/SciRIFF", "release_commit": commit}
    with (RELEASE / "cases.jsonl").open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"generator": generator}, ensure_ascii=False) + "\n")
        for case in cases:
            handle.write(json.dumps(case, ensure_ascii=False) + "\n")
    rendered = sum("input" in c for c in cases)
    print(
        f"release: {len(list(target.glob('*.yaml')))} files, {len(cases)} cases ({rendered} rendered) -> {RELEASE.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    sys.exit(main())
