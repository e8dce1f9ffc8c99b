"""Multi-view with trained word embeddings, 150 steps: the "before" of docs/multiview.md, on the code that measured it.

The runs of the first books table, made with the package as it was at 9a4c761 (the commit whose README first showed
that table; the option spellings are that version's), checked out into a temporary git worktree that is removed
after: SEQ+SEQ, DEP+SEQ and DEP+CONST trained for 150 steps, seeds 1 and 2; the untrained SEQ+SEQ and DEP+CONST
controls (`--max-steps 0`), seeds 1 and 2; SEQ+SEQ and DEP+SEQ at lr 5e-3, seed 1. Each run is then scored on SICK-R
in full with that version's `st-contrastive evaluate`. The runs go under --runs (mv-before/), with a parse cache of
their own, and a run already there is read back. results.json beside this file keeps what the table needs, so it
prints without the runs.

    .venv/bin/python docs/results/multiview-before/reproduce.py [--runs runs]

Prints the table as docs/multiview.md shows it and writes table.md beside this file (54 minutes on 2 cores for the
twelve runs, 39 of it training, parsing into the empty cache and evaluation included).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

# "README: multi-view section (...), books comparison with controls, ...": the table's first appearance.
BEFORE = "9a4c761"
COMMON = [
    "--max-documents",
    "300",
    "--word-dim",
    "128",
    "--dim",
    "256",
    "--max-steps",
    "150",
    "--eval-max-rows",
    "2000",
    "--eval-folds",
    "5",
]
# run folder (without -seedS) -> (the table's row, views, the options after COMMON, seeds)
RUNS_OF_ROWS = {
    "seq-seq": ("SEQ, SEQ (QuickThought)", "seq,seq", [], (1, 2)),
    "dep-seq": ("DEP, SEQ", "dep,seq", [], (1, 2)),
    "dep-const": ("DEP, CONST", "dep,const", [], (1, 2)),
    "random-seq-seq": ("random SEQ, SEQ", "seq,seq", ["--max-steps", "0"], (1, 2)),
    "random-dep-const": ("random DEP, CONST", "dep,const", ["--max-steps", "0"], (1, 2)),
    "lr5e-3-seq-seq": ("SEQ, SEQ at lr 5e-3 (seed 1)", "seq,seq", ["--learning-rate", "5e-3"], (1,)),
    "lr5e-3-dep-seq": ("DEP, SEQ at lr 5e-3 (seed 1)", "dep,seq", ["--learning-rate", "5e-3"], (1,)),
}
TRANSFER = ["mr", "cr", "subj", "mpqa", "trec", "mrpc"]
COLUMNS = {
    **{task: task.upper() for task in TRANSFER},
    "transfer": "transfer avg",
    "sick-r": "SICK-R r",
    "sick-cos": "SICK cos ρ",
}
BOLD = ("transfer", "sick-r")  # in bold where highest


def measure(name: str, runs: Path) -> dict:
    """One run's scores (× 100), training and wall seconds, trained and scored with the package at BEFORE."""
    _, views, options, _ = RUNS_OF_ROWS[name.rsplit("-seed", 1)[0]]
    output = (runs / name).resolve()
    full = output / "evaluation_results.json"
    if not full.exists():
        with results_script.worktree(BEFORE) as code:
            cli, environment = [sys.executable, "-m", "st_contrastive.commands.cli"], results_script.environment(code)
            if not (output / "results.json").exists():
                start = time.perf_counter()
                subprocess.run(
                    [
                        *cli,
                        "multiview",
                        "--views",
                        views,
                        *COMMON,
                        *options,
                        "--seed",
                        name.rsplit("-seed", 1)[1],
                        "--output",
                        str(output),
                        "--parse-cache",
                        str((runs / "parsed").resolve()),
                    ],
                    cwd=code,
                    env=environment,
                    check=True,
                )
                (output / "wall_seconds.txt").write_text(f"{time.perf_counter() - start:.1f}\n")
            subprocess.run(
                [*cli, "evaluate", str(output), "--tasks", "sick-r", "--trust-remote-code"],
                cwd=code,
                env=environment,
                check=True,
            )  # SICK-R in full
    results = json.loads((output / "results.json").read_text())
    after = results["after"]
    scores = {task: after[task]["accuracy"] for task in TRANSFER}
    return scores | {
        "transfer": statistics.mean(scores.values()),
        "sick-r": json.loads(full.read_text())["results"]["sick-r"]["pearson"],
        "sick-cos": after["sick-test"]["spearman"],
        "train_seconds": results["train"]["seconds"],
        "wall_seconds": float((output / "wall_seconds.txt").read_text()),
    }


def table(runs: Path) -> str:
    names = {stem: [f"{stem}-seed{seed}" for seed in seeds] for stem, (*_, seeds) in RUNS_OF_ROWS.items()}
    results = results_script.kept(
        __file__, [name for found in names.values() for name in found], lambda name: measure(name, runs / "mv-before")
    )
    rows = {stem: [results[name] for name in found] for stem, found in names.items()}
    best = {column: max(statistics.mean(r[column] for r in found) for found in rows.values()) for column in BOLD}
    lines = ["| arm | " + " | ".join(COLUMNS.values()) + " | train s |", "|---|" + "---|" * (len(COLUMNS) + 1)]
    for stem, found in rows.items():
        cells = []
        for column in COLUMNS:
            text = results_script.mean_std([r[column] for r in found])
            highest = column in BOLD and statistics.mean(r[column] for r in found) == best[column]
            cells.append(f"**{text}**" if highest else text)
        train = statistics.mean(r["train_seconds"] for r in found)
        lines.append(f"| {RUNS_OF_ROWS[stem][0]} | " + " | ".join(cells) + f" | {train:.0f} |")
    return "\n".join(lines)


RUNS = "runs"
TABLES = {"table": lambda runs=Path(RUNS): table(runs)}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
