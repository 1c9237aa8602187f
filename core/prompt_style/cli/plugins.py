"""``prompt-style plugins``: the installed plugins and the names they provide."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from ._common import add_command

NAME = "plugins"
HELP = "list installed plugins and the names they provide"
DESCRIPTION = (
    "List plugins: distribution, version and the names each provides per hook. "
    "Exits 1 when a plugin is broken (after listing everything)."
)
EXAMPLES = """  prompt-style plugins                     the installed plugins
  prompt-style plugins --all               with the built-ins, and each meta template's options
  prompt-style plugins --json | jq '.[] | select(.status == "broken")'"""
EXIT_BROKEN = 1
"""The exit status when a plugin is broken: the listing is complete, the installation is not."""


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION, EXAMPLES)
    parser.add_argument("--all", action="store_true", help="include built-in, blocked and skipped plugins")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _hooks_text(hooks: dict[str, list[str]]) -> str:
    parts = []
    for hook, names in hooks.items():
        parts.append(f"{hook}: {', '.join(names)}" if names else hook)
    return "; ".join(parts) or "-"


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..plugins import create_plugin_manager

    manager = create_plugin_manager()
    every = manager.describe()
    rows = [row for row in every if args.all or (not row["builtin"] and row["status"] in ("loaded", "broken"))]
    options = _meta_options(manager) if args.all else {}
    if args.json:
        import json

        for row in rows:
            if args.all:
                row["meta_options"] = options.get(row["name"], {})
        out.write(json.dumps(rows, indent=2, default=repr) + "\n")
    else:
        if not rows:
            out.write("no plugins installed (built-ins: prompt-style plugins --all)\n")
        for row in rows:
            dist = row["distribution"] or "-"
            version = row["version"] or "-"
            if row.get("path"):  # a plugin file from a plugins folder, not a distribution
                dist = f"(plugins-dir) {row['path']}"
            if row["status"] == "loaded":
                detail = _hooks_text(row["hooks"])
            else:
                detail = row["status"].upper()
                if row["errors"]:
                    detail += ": " + "; ".join(row["errors"])
            out.write(f"{row['name']}\t{dist}\t{version}\t{detail}\n")
            for line in _options_lines(options.get(row["name"], {})):
                out.write(f"    {line}\n")
        if args.all:
            from ..meta.tokens import TOKEN_OPTIONS

            out.write(
                "every meta template that gives text also takes "
                + ", ".join(TOKEN_OPTIONS)
                + " and tokenizer_* options (token ids: docs/chat.md)\n"
            )
    for hook, name, providers in manager.conflicts():
        owners = " and ".join(p.plugin.label() for p in providers)
        print(
            f"prompt-style: warning: {hook} name {name!r} is provided by {owners}; "
            f"choose with PROMPT_STYLE_PREFER='{name}=PLUGIN'",
            file=sys.stderr,
        )
    # each broken plugin was warned about once, on stderr, as it loaded
    return EXIT_BROKEN if any(row["status"] == "broken" for row in every) else 0


def _meta_options(manager) -> dict[str, dict[str, dict]]:
    """``{plugin: {meta template: {"options": [...] or None, "extra": text or None}}}``."""
    from ..options import describe_options

    found: dict[str, dict[str, dict]] = {}
    for name, providers in sorted(manager.catalog("apply_meta_template").items()):
        for provider in providers:
            factory = provider.factory
            try:
                extra = getattr(factory, "extra_options", None)
            except Exception:
                extra = None
            found.setdefault(provider.plugin.name, {})[name] = {
                "options": describe_options(factory),
                "extra": extra if isinstance(extra, str) else None,
            }
    return found


def _option_text(option: dict) -> str:
    text = option["name"]
    if option.get("default") is not None:
        text += f"={_shown(option['default'])}"
    return text


def _shown(value: object) -> str:
    if value is True or value is False:
        return str(value).lower()
    return str(value)


def _options_lines(metas: dict[str, dict]) -> list[str]:
    """One line per set of options, naming the meta templates that take it."""
    groups: dict[str, list[str]] = {}
    for name, declared in metas.items():
        listed = declared["options"]
        if listed is None:
            text = "options not declared (see the plugin's documentation)"
        elif not listed:
            text = "no options"
        else:
            text = "options: " + ", ".join(_option_text(o) for o in listed)
        if declared["extra"]:
            text += f"; {declared['extra']}"
        groups.setdefault(text, []).append(name)
    return [f"{', '.join(names)}: {text}" for text, names in groups.items()]
