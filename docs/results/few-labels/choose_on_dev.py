"""The dev-split choice of `st-contrastive active`'s round training: SCALe's settings on TREC-6 and SST-2.

500 labelled train rows are held out as the dev split (`--dev-size 500`; the test split is not read), the rest is
the pool: 1,500 rows per seed, rounds at 1, 5, 10 and 15 % of it, random acquisition (the same labelled sets in
every arm), 3 seeds. A run folder that already has its metrics.json is read back, not trained again.

    .venv/bin/python docs/results/few-labels/choose_on_dev.py [--runs docs/results] [--datasets trec sst2]

Prints the table and writes dev.md and dev.json beside this file (dev-trec.md ... for one dataset) (about 50 minutes on 2 cores for the first three
settings from scratch, 8 and 14 more per setting on TREC-6 and SST-2).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DATASETS = ("trec", "sst2")
COMMON = ["active", "--objective", "supcon-ce", "--acquisition", "random", "--num-seeds", "3", "--pool-size", "1500",
          "--initial", "0.01", "--step", "0.05", "--budget", "0.15", "--min-steps", "10", "--dev-size", "500"]
FIVE_VIEWS = ["--dropout-rates", "0.0", "0.1", "0.2", "0.3", "0.4"]
# run folder suffix -> (what the row says, the options that make the arm)
ARMS = {
    "cold": ("from the base, 3 epochs, 5 views", ["--epochs", "3", *FIVE_VIEWS, "--no-warm-start"]),
    "warm": ("warm start, 3 epochs, 5 views", ["--epochs", "3", *FIVE_VIEWS, "--warm-start"]),
    "warm-e10-v2": ("warm start, 10 epochs, 2 views", ["--epochs", "10", "--dropout-rates", "0.0", "0.1",
                                                       "--warm-start"]),
}
DEFAULTS = ARMS["warm-e10-v2"][1]
# Then each setting moved once from the chosen rounds: SupCon's weight λ (0.9), temperature τ (0.3) and the head's
# learning rate (1e-2), on TREC-6; the head's 3e-2, the better of its two on TREC-6, on SST-2 too.
ONLY_ON = {"warm-e10-v2-lambda0.5": ("trec",), "warm-e10-v2-tau0.1": ("trec",),
           "warm-e10-v2-head1e-3": ("trec",), "warm-e10-v2-entropy": ("trec",),
           "warm-e10-v2-balanced-entropy": ("trec",)}
ARMS |= {
    "warm-e10-v2-lambda0.5": ("the same, λ 0.5", [*DEFAULTS, "--supcon-weight", "0.5"]),
    "warm-e10-v2-tau0.1": ("the same, τ 0.1", [*DEFAULTS, "--temperature", "0.1"]),
    "warm-e10-v2-head1e-3": ("the same, head lr 1e-3", [*DEFAULTS, "--head-learning-rate", "1e-3"]),
    "warm-e10-v2-head3e-2": ("the same, head lr 3e-2", [*DEFAULTS, "--head-learning-rate", "3e-2"]),
}
# Then acquisition other than random at the chosen rounds (the labelled sets now differ between arms).
ARMS |= {
    "warm-e10-v2-entropy": ("the same, entropy acquisition", [*DEFAULTS, "--acquisition", "entropy"]),
    "warm-e10-v2-balanced-entropy": ("the same, class-balanced entropy",
                                     [*DEFAULTS, "--acquisition", "balanced-entropy"]),
    "warm-e10-v2-kmeans": ("the same, k-means acquisition", [*DEFAULTS, "--acquisition", "kmeans"]),
}
HERE = Path(__file__).resolve().parent


def metrics(runs: Path, dataset: str, arm: str) -> list[dict]:
    folder = runs / f"al-dev-{dataset}-{arm}"
    if not (folder / "metrics.json").exists():
        from st_contrastive.cli import main as cli_main

        cli_main([*COMMON, "--dataset", dataset, *ARMS[arm][1], "--output", str(folder)])
    return json.loads((folder / "metrics.json").read_text())


def rows(runs: Path, datasets: list[str]) -> list[dict]:
    from st_contrastive.active.report import summarize

    table = []
    for dataset in datasets:
        for arm, (name, _) in ARMS.items():
            if dataset not in ONLY_ON.get(arm, DATASETS):
                continue
            summary = sorted(summarize(metrics(runs, dataset, arm)), key=lambda s: s["round"])
            table.append({"dataset": dataset, "arm": arm, "rounds": name,
                          "accuracy": {f"{s['percent']:g}": [s["accuracy_mean"], s["accuracy_std"]] for s in summary},
                          "train_seconds_per_round": sum(s["train_seconds_mean"] for s in summary) / len(summary),
                          "steps_per_round": sum(s["steps_mean"] for s in summary) / len(summary)})
    return table


def markdown(table: list[dict]) -> str:
    percents = list(table[0]["accuracy"])
    lines = ["| dataset | rounds | " + " | ".join(f"{p} %" for p in percents) + " | training s / round | steps / round |",
             "|---|---|" + "---|" * (len(percents) + 2)]
    for row in table:
        cells = [f"{mean:.2f} ± {std:.2f}" for mean, std in row["accuracy"].values()]
        lines.append(f"| {row['dataset']} | {row['rounds']} | " + " | ".join(cells)
                     + f" | {row['train_seconds_per_round']:.1f} | {row['steps_per_round']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default=str(HERE.parent), help="folder of the al-dev-* run folders")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    args = parser.parse_args(argv)
    table = rows(Path(args.runs), args.datasets)
    name = "dev" if args.datasets == list(DATASETS) else "dev-" + "-".join(args.datasets)
    (HERE / f"{name}.json").write_text(json.dumps({"command": COMMON, "arms": {k: v[1] for k, v in ARMS.items()},
                                                   "rows": table}, indent=1) + "\n")
    (HERE / f"{name}.md").write_text(markdown(table) + "\n")
    print(markdown(table))


if __name__ == "__main__":
    main()
