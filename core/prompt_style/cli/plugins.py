"""``prompt-style plugins``: the installed plugins and the names they provide."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from ._common import add_command

NAME = "plugins"
HELP = "list installed plugins and the names they provide"
DESCRIPTION = "List plugins: distribution, version and the names each provides per hook."


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = add_command(sub, common, NAME, HELP, DESCRIPTION)
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
    rows = [
        row for row in manager.describe() if args.all or (not row["builtin"] and row["status"] in ("loaded", "broken"))
    ]
    if args.json:
        import json

        out.write(json.dumps(rows, indent=2) + "\n")
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
    for hook, name, providers in manager.conflicts():
        owners = " and ".join(p.plugin.label() for p in providers)
        print(
            f"prompt-style: warning: {hook} name {name!r} is provided by {owners}; "
            f"choose with PROMPT_STYLE_PREFER='{name}=PLUGIN'",
            file=sys.stderr,
        )
    return 0
