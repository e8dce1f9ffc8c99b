"""DeCLUTR as continued training of all-MiniLM-L6-v2 at make main's budget: the tables of the report beside this
file, printed from results.json.

`make-main`: what `make main` prints, STS before and after; `variants`: three ways to handle the MLM head the base
does not ship (joint from step 0, 100 head-only steps first, contrastive-only). The runs' commands are in the report.

    .venv/bin/python recipes/declutr-continued-training/reproduce.py {make-main,variants}
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # recipes/: the command line its scripts share
import results_script

RESULTS = json.loads((Path(__file__).resolve().parent / "results.json").read_text())
TASKS = ("stsb-dev", "stsb-test", "sick-dev", "sick-test")
# variant -> (what the row says, the option that makes it)
VARIANTS = {
    "joint": ("DeCLUTR, joint from step 0 (the paper's objective)", ""),
    "head-warmup": ("DeCLUTR, 100 head-only MLM steps first", "`--mlm-head-warmup-steps 100`"),
    "contrastive-only": ("contrastive-only (the default of `make main`)", "`--mlm-weight 0`"),
}


def make_main() -> str:
    """The command's closing table as it prints it: each score (× 100) before and after, the change of the printed
    figures, and the average of the three."""
    run = RESULTS["make-main"]
    lines = ["| task | before | after | change |", "|---|---|---|---|"]
    rows = [(task, run["before"][task], run["after"][task]) for task in run["after"]]
    rows.append(("sts avg", statistics.mean(run["before"].values()), statistics.mean(run["after"].values())))
    for task, before, after in rows:
        lines.append(f"| {task} | {before:.2f} | {after:.2f} | {round(after, 2) - round(before, 2):+.2f} |")
    return "\n".join(lines)


def variants() -> str:
    rows = RESULTS["variants"]
    lines = [
        "| variant | option | STS-B dev | STS-B test | SICK-R dev | SICK-R test | train |",
        "|---" * 7 + "|",
        "| all-MiniLM-L6-v2 as shipped |  | " + " | ".join(f"{rows['base'][task]:.2f}" for task in TASKS) + " |  |",
    ]
    for name, (label, option) in VARIANTS.items():
        row = rows[name]
        minutes = f"{row['train_minutes']:.1f} min"
        if row["head_warmup_minutes"]:
            minutes = f"{row['head_warmup_minutes']:.1f} + {minutes}"
        lines.append(f"| {label} | {option} | " + " | ".join(f"{row[task]:.2f}" for task in TASKS) + f" | {minutes} |")
    return "\n".join(lines)


TABLES = {"make-main": make_main, "variants": variants}

if __name__ == "__main__":
    results_script.run(__file__, __doc__.splitlines()[0], TABLES)
