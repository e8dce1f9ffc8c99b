"""DeCLUTR on all-MiniLM-L6-v2 at make main's budget: three ways to handle the MLM head the base does not ship.

Each variant is `st-contrastive declutr` for 150 steps of 4 documents, spans up to 128 tokens, with the variant's
option, scored on STS-B and SICK-R (dev and test) before and after. A variant whose run is in --runs
(runs/declutr-variants/<variant>) is read back, not trained again; results.json beside this file keeps what the
table needs, so the table prints without the runs.

    .venv/bin/python docs/results/declutr-variants/reproduce.py [--runs runs/declutr-variants]

Prints the table as docs/declutr.md shows it and writes table.md beside this file (about 10 minutes a variant on
2 cores).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

TASKS = ["stsb-dev", "stsb-test", "sick-dev", "sick-test"]
COMMAND = ["declutr", "--max-steps", "150", "--batch-size", "4", "--max-span-length", "128", "--eval-tasks", *TASKS]
# variant -> (what the row says, the option that makes it)
VARIANTS = {
    "joint": ("DeCLUTR, joint from step 0 (the paper's objective)", []),
    "head-warmup": ("DeCLUTR, 100 head-only MLM steps first", ["--mlm-head-warmup-steps", "100"]),
    "contrastive-only": ("contrastive-only (the default of `make main`)", ["--mlm-weight", "0"]),
}


def spearman(scores: dict) -> dict:
    return {task: scores[task]["spearman"] for task in TASKS}


def variant(name: str, runs: Path) -> dict:
    """Scores (× 100) before and after, and the minutes of head-only and joint training."""
    output = runs / name
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        cli_main([*COMMAND, *VARIANTS[name][1], "--output", str(output), "--overwrite"])
    results = json.loads((output / "results.json").read_text())
    return {
        "before": spearman(results["before"]),
        "after": spearman(results["after"]),
        "train_minutes": results["train"]["seconds"] / 60,
        "head_warmup_minutes": ((results.get("mlm_head_warmup") or {}).get("seconds") or 0) / 60,
    }


def cells(scores: dict) -> list[str]:
    return [f"{scores[task]:.2f}" for task in TASKS]


def table(rows: dict) -> str:
    lines = [
        "| variant | option | STS-B dev | STS-B test | SICK-R dev | SICK-R test | train |",
        "|---" * 7 + "|",
        "| all-MiniLM-L6-v2 as shipped |  | " + " | ".join(cells(rows["joint"]["before"])) + " |  |",
    ]
    for name, (label, option) in VARIANTS.items():
        row = rows[name]
        minutes = f"{row['train_minutes']:.1f} min"
        if row["head_warmup_minutes"]:
            minutes = f"{row['head_warmup_minutes']:.1f} + {minutes}"
        option_cell = f"`{' '.join(option)}`" if option else ""
        lines.append(f"| {label} | {option_cell} | " + " | ".join(cells(row["after"])) + f" | {minutes} |")
    return "\n".join(lines)


RUNS = "runs/declutr-variants"
TABLES = {
    "table": lambda runs=Path(RUNS): table(
        results_script.kept(__file__, list(VARIANTS), lambda name: variant(name, runs))
    )
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
