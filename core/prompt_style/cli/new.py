"""``prompt-style new``: scaffold a plugin distribution that passes its own tests at once."""

from __future__ import annotations

import argparse
import datetime
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ._common import add_command

NAME = "new"
HELP = "scaffold a plugin distribution: a style, meta template, retriever or task format"
DESCRIPTION = (
    "Write a plugin distribution, prompt-style-NAME: pyproject.toml with the prompt_style entry point, "
    "the module, README, LICENSE and tests that run prompt-style's conformance kit. Its tests pass as "
    "generated: pip install the core and the new folder (pip install -e 'DIR[test]'), then run pytest in it."
)

SCAFFOLD = Path(__file__).resolve().parent / "scaffold"


@dataclass(frozen=True)
class Kind:
    hook: str
    noun: str
    kit: str
    checks: str
    description: str
    usage: str
    golden: str | None
    """The golden file the generated tests check, or ``None``."""


KINDS: dict[str, Kind] = {
    "style": Kind(
        "format_prompt",
        "style",
        "StyleConformance",
        "2 to 26 choices, unicode, empty descriptions, few-shot examples, every installed meta template, "
        "pickling, other processes and typed errors",
        "A prompt-style style: the question, its choices numbered 1), 2), ... and Answer:.",
        "Use it in a task file (`template: ${name}`, or `template: {template_type: ${name}, suffix: ...}`) "
        "or on the command line: `prompt-style render TASK --style ${name}`.",
        "one-shot.txt",
    ),
    "meta": Kind(
        "apply_meta_template",
        "meta template",
        "MetaTemplateConformance",
        "dialogues of every shape, 2 to 26 choices, unicode, empty descriptions, few-shot examples, every "
        "installed style, pickling, other processes and typed errors",
        "A prompt-style meta template: Human: / Assistant: turns for a chat model.",
        "Render any task for it: `prompt-style render TASK --meta ${name}` "
        '(options: `--meta-option human="User: "`), or `load_task(..., meta="${name}")` in Python.',
        "one-shot.txt",
    ),
    "retriever": Kind(
        "retrieve_examples",
        "retriever",
        "RetrieverConformance",
        "valid pool indices, never the record itself, the same choice in any order and process, 2 to 26 "
        "choices, unicode, every installed meta template, pickling and typed errors",
        "A prompt-style retriever: k few-shot examples at random per record, seeded by the record's index.",
        "Use it in a task file: `retriever: {name: ${name}, first: 100}` with `num_fewshot: 5`.",
        None,
    ),
    "format": Kind(
        "read_task",
        "task format",
        "TaskFormatConformance",
        "it claims its own files and no other format's, reads them into a task that renders (2 to 26 "
        "choices, unicode, every installed meta template), pickles, renders the same in other processes, "
        "and names the file of a bad one",
        "A prompt-style task-file format: YAML files with format: ${name}, a prompt and field names.",
        "Render a task file of the format: `prompt-style render task.yaml` (a file with `format: ${name}`; "
        "see the module's docstring).",
        "task.txt",
    ),
}

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*(?:::[a-z0-9]+(?:[-_][a-z0-9]+)*)?$")


EXAMPLES = """  prompt-style new style mcq::roman          a style plugin in ./prompt-style-mcq-roman, tests included
  prompt-style new meta shouting --out plugins/
  prompt-style new retriever sampled && cd prompt-style-sampled && pip install -e . && pytest"""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    parser.add_argument("kind", metavar="KIND", help=f"what the plugin provides: {', '.join(KINDS)}")
    parser.add_argument(
        "name",
        metavar="NAME",
        help="the name it provides (lower case, digits, - and _; a family::variant for a style, e.g. mcq::roman); "
        "the distribution is prompt-style-NAME",
    )
    parser.add_argument(
        "--out", metavar="DIR", default=".", help="where to create the folder prompt-style-NAME (default: here)"
    )
    parser.add_argument("--force", action="store_true", help="write into an existing, non-empty folder")


@dataclass(frozen=True)
class Names:
    """Every name the generated files use, derived from NAME."""

    name: str
    slug: str
    dist: str
    package: str
    cls: str
    factory: str


def names(name: str) -> Names:
    """The names of a plugin providing ``name``.

    :raises OptionError: for a name that cannot be one.
    """
    from ..errors import OptionError

    if not _NAME.match(name):
        raise OptionError(
            f"{name!r} cannot be a plugin name",
            key="NAME",
            hint="start with a letter; use lower-case letters, digits, - and _ "
            "(one family::variant for a style, e.g. mcq::roman)",
        )
    slug = name.replace("::", "-").replace("_", "-")
    words = re.split(r"[-_:]+", name)
    return Names(
        name=name,
        slug=slug,
        dist=f"prompt-style-{slug}",
        package="prompt_style_" + slug.replace("-", "_"),
        cls="".join(word.capitalize() for word in words),
        factory="_".join(words),
    )


def _check_free(kind: Kind, made: Names) -> None:
    """The name must not be a first-party distribution's, nor one installed plugins already provide."""
    from .._first_party import FOLDERS
    from ..errors import OptionError
    from ..plugins import create_plugin_manager

    if made.dist in FOLDERS:
        raise OptionError(
            f"{made.dist} is a first-party distribution of prompt-style ({FOLDERS[made.dist]})",
            key="NAME",
            hint="choose another name",
        )
    providers = create_plugin_manager().catalog(kind.hook).get(made.name)
    if providers:
        raise OptionError(
            f"{kind.noun} {made.name!r} is already provided by {providers[0].plugin.label()}",
            key="NAME",
            hint=f"choose another name (two plugins with one name conflict when it is used), e.g. {made.name}::mine"
            if "::" not in made.name
            else "choose another name",
        )


def _fill(template: str, values: dict[str, str]) -> str:
    return string.Template((SCAFFOLD / template).read_text(encoding="utf-8")).substitute(values)


def files(kind_name: str, name: str, core_version: str | None) -> dict[str, str]:
    """The generated files, relative path -> text (``kind_name`` and ``name`` checked)."""
    from ..errors import OptionError

    kind = KINDS.get(kind_name)
    if kind is None:
        from .._suggest import did_you_mean

        raise OptionError(
            f"unknown kind {kind_name!r}",
            key="KIND",
            hint=did_you_mean(kind_name, KINDS) or f"the kinds are {', '.join(KINDS)}",
        )
    made = names(name)
    values = {
        "kind": kind_name,
        "name": made.name,
        "dist": made.dist,
        "plugin": made.slug,
        "package": made.package,
        "package_short": made.slug.replace("-", "_"),
        "cls": made.cls,
        "factory": made.factory,
        "hook": kind.hook,
        "noun": kind.noun,
        "kit": kind.kit,
        "checks": kind.checks,
        "core_requirement": f"prompt-style>={core_version}" if core_version else "prompt-style",
        "year": str(datetime.date.today().year),
    }
    values["description"] = string.Template(kind.description).substitute(values)
    values["usage"] = string.Template(kind.usage).substitute(values)
    out = {
        "pyproject.toml": _fill("pyproject.toml.tmpl", values),
        "README.md": _fill("README.md.tmpl", values),
        "LICENSE": _fill("LICENSE.tmpl", values),
        f"src/{made.package}/__init__.py": _fill(f"{kind_name}.py.tmpl", values),
        f"tests/test_{values['package_short']}.py": _fill(f"test_{kind_name}.py.tmpl", values),
    }
    if kind.golden is not None:
        out[f"tests/golden/{kind.golden}"] = _fill(f"golden_{kind_name}.txt.tmpl", values)
    return out


def run(args: argparse.Namespace, out: TextIO) -> int:
    from .._entry_points import distribution_version
    from ..errors import OptionError

    generated = files(args.kind, args.name, _core_version(distribution_version("prompt-style")))
    made = names(args.name)
    _check_free(KINDS[args.kind], made)
    folder = Path(args.out) / made.dist
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise OptionError(f"--out {args.out} is not a folder", key="--out")
    if folder.exists() and any(folder.iterdir()) and not args.force:
        raise OptionError(
            f"{folder} exists and is not empty",
            key="--out",
            hint="choose another --out, or add --force to write into it",
        )
    for relative, text in generated.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    out.write(f"created {folder} ({KINDS[args.kind].noun} {made.name!r}, distribution {made.dist}):\n")
    for relative in generated:
        out.write(f"  {relative}\n")
    out.write(
        "next:\n"
        f"  pip install -e '{folder}[test]'   (after the prompt-style core, which is not on the package index yet)\n"
        f"  cd {folder} && pytest\n"
    )
    return 0


def _core_version(version: str | None) -> str | None:
    """The running core's release without a local part (``0.1.0``), or ``None`` when unknown."""
    return version.split("+")[0] if version else None
