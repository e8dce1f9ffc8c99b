"""The command line the scripts of recipes/ share: print one of a script's tables as its report shows it (the docs
tier runs ``TABLES[NAME]()`` and compares it with the report, so no copy of a table is kept beside the script)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(
    script: str,
    description: str,
    tables: dict[str, Callable[..., str]],
    argv: list[str] | None = None,
    runs: str | None = None,
) -> str:
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
    print(text)
    return text


def kept(script: str, names: list[str], measure: Callable[[str], dict]) -> dict[str, dict]:
    """What the table needs of each run, by name, from results.json beside the script; a name it lacks is measured
    (its run read back, or trained where missing) and written into it."""
    path = Path(script).resolve().parent / "results.json"
    found = json.loads(path.read_text()) if path.exists() else {}
    for name in [name for name in names if name not in found]:
        found[name] = measure(name)
        # written after each run, atomically: a killed experiment keeps every run it finished
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(found, indent=1) + "\n")
        partial.replace(path)
    return {name: found[name] for name in names}


def mean_std(values: list[float], digits: int = 1) -> str:
    """``mean ± std`` over seeds (the sample std), or the value alone for one seed."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f}"


@contextlib.contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """This repository's code at ``commit``, checked out into a temporary git worktree that is removed after."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / commit[:7]
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), commit], check=True)
        try:
            yield folder
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=True)


def environment(code: Path) -> dict[str, str]:
    """The environment of a process that runs the package in the folder ``code`` on the shared data, offline. Start
    it in ``code`` (``cwd=code``): from this checkout's root, its own package would be imported first."""
    from st_contrastive.data_dir import data_dir

    # a worktree has no ../shared beside it, so the data folder is named
    return {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "ST_CONTRASTIVE_DATA": str(data_dir())}
