"""The table of every command-line option, written from the parsers at build time so it cannot drift from them.

A mkdocs hook: in a page, the line ``<!-- option-table -->`` becomes a table with one row per option and the
commands that take it.
"""

from __future__ import annotations

import importlib

MARKER = "<!-- option-table -->"


def option_table() -> str:
    from st_contrastive.commands.cli import COMMANDS

    commands: dict[str, list[str]] = {}
    for name, (function, _) in COMMANDS.items():
        parser = importlib.import_module(function.__module__).build_parser()
        for action in parser._actions:
            if action.option_strings and action.dest != "help":
                for flag in action.option_strings:
                    commands.setdefault(flag, []).append(name)
    rows = ["| option | commands |", "|---|---|"]
    rows += [
        f"| `{flag}` | {', '.join(commands[flag])} |" for flag in sorted(commands, key=lambda f: (-len(commands[f]), f))
    ]
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, **kwargs) -> str:
    return markdown.replace(MARKER, option_table()) if MARKER in markdown else markdown
