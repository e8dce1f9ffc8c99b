"""DeCLUTR and SimCSE ten times longer (1,500 steps) from the small MLM base: the two tables of docs/declutr.md.

Reads ablation.json beside this file, the kept result of the run. Without it, trains what is missing first: the
base (`st-contrastive pretrain-mlm`, 32 min on 2 cores) into runs/mlm-base, then the ablation (19 min) into
runs/abl-long-lr2e-4, and keeps its ablation.json here.

    .venv/bin/python docs/results/declutr-mlm-base-long/reproduce.py {final,curve}

Prints the table (final: scores at the end, the best dev point and training seconds; curve: STS-B dev every 150
steps) as the page shows it and writes it to final.md or curve.md beside this file.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

BASE = [
    "pretrain-mlm",
    "--dataset",
    "both",
    "--max-steps",
    "1900",
    "--learning-rate",
    "1e-3",
    "--mlm-probability",
    "0.3",
    "--output",
    "runs/mlm-base",
]
ABLATION = [
    "declutr-ablation",
    "--model",
    "runs/mlm-base",
    "--dataset",
    "wiki",
    "--short-documents",
    "skip",
    "--max-steps",
    "1500",
    "--batch-size",
    "8",
    "--eval-steps",
    "150",
    "--variants",
    "contrastive-only",
    "simcse",
    "--min-span-length",
    "16",
    "--max-span-length",
    "64",
    "--learning-rate",
    "2e-4",
    "--output",
    "runs/abl-long-lr2e-4",
]
ARMS = {"contrastive-only": ("DeCLUTR contrastive-only", "DeCLUTR"), "simcse": ("SimCSE", "SimCSE")}
BASE_ROW = "base (mean pooling)"  # the ablation's name for the untrained base


def ablation() -> dict:
    kept = HERE / "ablation.json"
    if not kept.exists():
        from st_contrastive.commands.cli import main as cli_main

        if not Path("runs/mlm-base/config.json").exists():
            cli_main(BASE)
        cli_main(ABLATION)
        shutil.copy(Path(ABLATION[-1]) / "ablation.json", kept)
    return json.loads(kept.read_text())


def final(result: dict) -> str:
    lines = [
        "| arm (1,500 steps) | STS-B dev | STS-B test | SICK-R test | best dev on the curve | s |",
        "|---|---|---|---|---|---|",
    ]
    for name, label in [(BASE_ROW, "the base (mean pooling)"), *((arm, labels[0]) for arm, labels in ARMS.items())]:
        scores = result["scores"][name]
        cells = [f"{scores[task]:.2f}" for task in ("stsb-dev", "stsb-test", "sick-test")]
        if name in ARMS:
            step, best = max(result["eval_curves"][name]["sts-b-dev"][1:], key=lambda point: point[1])  # after step 0
            cells += [f"{best:.2f} at step {step:,}", f"{result['train_seconds'][name]:.0f}"]
        else:
            cells += ["", ""]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def curve(result: dict) -> str:
    steps = [step for step, _ in result["eval_curves"]["contrastive-only"]["sts-b-dev"]]
    lines = ["| arm | " + " | ".join(f"{step:,}" for step in steps) + " |", "|---|" + "---|" * len(steps)]
    for arm, (_, label) in ARMS.items():
        lines.append(
            f"| {label} | " + " | ".join(f"{score:.1f}" for _, score in result["eval_curves"][arm]["sts-b-dev"]) + " |"
        )
    return "\n".join(lines)


TABLES = {"final": lambda: final(ablation()), "curve": lambda: curve(ablation())}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv)


if __name__ == "__main__":
    main()
