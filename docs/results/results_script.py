"""The command line the docs/results scripts share: print one of a script's tables as its page shows it, and write it
beside the script (table.md for a script of one table, NAME.md for its table NAME)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def run(script: str, description: str, tables: dict[str, Callable[..., str]], argv: list[str] | None = None,
        runs: str | None = None) -> str:
    """``tables``: each table's name and the function that makes its text (given ``runs=`` where the script reads
    run folders, ``runs`` being their default folder)."""
    parser = argparse.ArgumentParser(description=description)
    if list(tables) != ["table"]:
        parser.add_argument("table", choices=list(tables), help="the table to print")
    if runs is not None:
        parser.add_argument("--runs", default=runs, help="folder of the run folders it reads (trains what is missing)")
    args = parser.parse_args(argv)
    name = getattr(args, "table", "table")
    text = tables[name](**({"runs": Path(args.runs)} if runs is not None else {}))
    (Path(script).resolve().parent / f"{name}.md").write_text(text + "\n")
    print(text)
    return text
