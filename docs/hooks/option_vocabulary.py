"""The table of every command-line option, written from the parsers at build time so it cannot drift from them.

A mkdocs hook: in a page, the line ``<!-- option-table -->`` becomes a table with one row per option: the commands
that take it and the old spellings it replaces (kept for one release, each printing a deprecation line).
"""

from __future__ import annotations

import importlib

MARKER = "<!-- option-table -->"


def option_table() -> str:
    from st_contrastive.commands.cli import COMMANDS

    commands: dict[str, list[str]] = {}
    replaces: dict[str, dict[str, list[str]]] = {}  # new option -> old spelling -> the commands it was used in
    for name, (function, _) in COMMANDS.items():
        parser = importlib.import_module(function.__module__).build_parser()
        for action in parser._actions:
            if not action.option_strings or action.dest == "help":
                continue
            replacement = getattr(action, "replacement", None)  # a deprecated spelling names its replacement
            if replacement:
                for old in action.option_strings:
                    replaces.setdefault(replacement, {}).setdefault(old, []).append(name)
                continue
            for flag in action.option_strings:
                commands.setdefault(flag, []).append(name)
    rows = ["| option | commands | replaces (in) |", "|---|---|---|"]
    for flag in sorted(commands, key=lambda f: (-len(commands[f]), f)):
        old = "; ".join(
            f"`{spelling}` ({', '.join(used)})" for spelling, used in sorted(replaces.get(flag, {}).items())
        )
        rows.append(f"| `{flag}` | {', '.join(commands[flag])} | {old} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, **kwargs) -> str:
    return markdown.replace(MARKER, option_table()) if MARKER in markdown else markdown
