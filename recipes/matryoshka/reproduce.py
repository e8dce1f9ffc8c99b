"""Matryoshka embeddings with this package's losses: the two tables of the report beside this file, printed from
results.json.

`declutr`: make main's DeCLUTR with and without --matryoshka-dims 384 128 64, STS at each size (the run without the
modifier truncated too) and the time per step; `nli-heads`: SupCon + CE inside MatryoshkaLoss with the head's CE at
full size only or a head per size, on the dev splits. Three seeds each. The runs' commands are in the report.

    .venv/bin/python recipes/matryoshka/reproduce.py {declutr,nli-heads}
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # recipes/: the command line its scripts share
import results_script

RESULTS = json.loads((Path(__file__).resolve().parent / "results.json").read_text())
DIMS = ("384", "128", "64")
TASKS = ("stsb-dev", "stsb-test", "sick-test")


def cell(values: list[float]) -> str:
    """mean ± sample std; the mean alone where the std rounds to 0.00 (the untrained base, equal to float noise)."""
    if len(values) == 1 or statistics.stdev(values) < 0.005:
        return f"{statistics.mean(values):.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def declutr() -> str:
    seeds = RESULTS["declutr"].values()
    rows = [
        ("base, not trained (the floor)", "base", "384"),
        ("base, not trained", "base", "128"),
        ("base, not trained", "base", "64"),
        ("DeCLUTR", "plain", "384"),
        *(("DeCLUTR + Matryoshka", "matryoshka", dim) for dim in DIMS),
        *(("DeCLUTR (no modifier), truncated", "plain", dim) for dim in DIMS[1:]),
    ]
    lines = ["| model | size | STS-B dev | STS-B test | SICK-R test | s / step |", "|---|---|---|---|---|---|"]
    for name, arm, dim in rows:
        scores = [cell([seed[arm][dim][task] for seed in seeds]) for task in TASKS]
        step = cell([seed[arm]["seconds_per_step"] for seed in seeds]) if arm != "base" and dim == "384" else ""
        lines.append(f"| {name} | {dim} | " + " | ".join(scores) + f" | {step} |")
    return "\n".join(lines)


def heads_cell(values: list[float]) -> str:
    if not values:
        return "no head"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def nli_heads() -> str:
    seeds = RESULTS["nli-heads"].values()
    lines = [
        "| CE term | "
        + " | ".join(f"STS-B dev {dim}" for dim in DIMS)
        + " | "
        + " | ".join(f"SNLI dev acc. {dim}" for dim in DIMS)
        + " | s / step |",
        "|---|" + "---|" * 7,
    ]
    for arm, name in (("full", "CE at full size only"), ("per-size", "a head per size")):
        rows = [seed[arm] for seed in seeds]
        sts = [heads_cell([row["stsb_dev"][dim] for row in rows]) for dim in DIMS]
        nli = [heads_cell([row["snli_dev_accuracy"][d] for row in rows if d in row["snli_dev_accuracy"]]) for d in DIMS]
        step = heads_cell([row["seconds_per_step"] for row in rows])
        lines.append(f"| {name} | " + " | ".join(sts + nli) + f" | {step} |")
    return "\n".join(lines)


TABLES = {"declutr": declutr, "nli-heads": nli_heads}

if __name__ == "__main__":
    results_script.run(__file__, __doc__.splitlines()[0], TABLES)
