"""The command line the docs/results scripts share: print one of a script's tables as its page shows it, and write it
beside the script (table.md for a script of one table, NAME.md for its table NAME)."""

from __future__ import annotations

import argparse
import json
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


def kept(script: str, names: list[str], measure: Callable[[str], dict]) -> dict[str, dict]:
    """What the table needs of each run, by name, from results.json beside the script; a name it lacks is measured
    (its run read back, or trained where missing) and written into it."""
    path = Path(script).resolve().parent / "results.json"
    found = json.loads(path.read_text()) if path.exists() else {}
    missing = [name for name in names if name not in found]
    if missing:
        found |= {name: measure(name) for name in missing}
        path.write_text(json.dumps(found, indent=1) + "\n")
    return {name: found[name] for name in names}
