"""Multi-view with frozen pre-trained vectors: the step count, chosen on STS-B dev over 400 steps (seed 1).

DEP+SEQ and SEQ+SEQ are trained 400 steps with STS-B dev every 100, and scored on SICK-R with their untrained
controls (`--max-steps 0`). A run already in --runs (runs/mv-wv/curve-<views>, curve-random-<views>) is read back,
not trained again; results.json beside this file keeps what the table needs, so the table prints without the runs.

    .venv/bin/python docs/results/multiview-wv-curve/reproduce.py [--runs runs/mv-wv]

Prints the table as docs/multiview.md shows it and writes table.md beside this file (about 16 minutes on 2 cores).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

COMMAND = [
    "multiview",
    "--word-vectors",
    "spacy:en_core_web_md",
    "--max-steps",
    "400",
    "--eval-steps",
    "100",
    "--eval-tasks",
    "sick-r",
    "--eval-max-rows",
    "2000",
    "--eval-folds",
    "5",
    "--seed",
    "1",
]
ARMS = {"dep,seq": "DEP, SEQ", "seq,seq": "SEQ, SEQ"}


def run(views: str, trained: bool, runs: Path) -> dict:
    output = runs / f"curve-{'' if trained else 'random-'}{views.replace(',', '-')}"
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        cli_main(
            [
                *COMMAND,
                "--views",
                views,
                "--output",
                str(output),
                "--overwrite",
                *([] if trained else ["--max-steps", "0"]),
            ]
        )
    results = json.loads((output / "results.json").read_text())
    return {
        "dev_curve": results.get("eval_curves", {}).get("sts-b-dev", []),
        "loss": results.get("train", {}).get("last_log", {}).get("loss"),
        "sick_r": [results["after"]["sick-r"]["pearson"], results["after"]["sick-r"]["spearman"]],
        "train_seconds": results.get("train", {}).get("seconds", 0.0),
    }


def table(rows: dict) -> str:
    lines = [
        "| arm | STS-B dev at 100 / 200 / 300 / 400 steps | loss at 400 | SICK-R r | SICK-R ρ | train s |",
        "|---" * 6 + "|",
    ]
    for name, row in rows.items():
        views = name.removeprefix("random ")
        label = f"random {ARMS[views]}" if name.startswith("random") else ARMS[views]
        curve = " / ".join(f"{score:.1f}" for step, score in row["dev_curve"] if step > 0)
        loss = f"{row['loss']:.2f}" if row["loss"] is not None and not name.startswith("random") else ""
        lines.append(
            f"| {label} | {curve} | {loss} | "
            + " | ".join(f"{score:.1f}" for score in row["sick_r"])
            + f" | {row['train_seconds']:.0f} |"
        )
    return "\n".join(lines)


RUNS = "runs/mv-wv"
NAMES = [f"{prefix}{views}" for prefix in ("", "random ") for views in ARMS]  # the arms, then their controls
TABLES = {
    "table": lambda runs=Path(RUNS): table(
        results_script.kept(
            __file__, NAMES, lambda name: run(name.removeprefix("random "), not name.startswith("random"), runs)
        )
    )
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
