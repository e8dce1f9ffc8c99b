"""Which SupCon + CE settings improve an encoder that already embeds sentences (all-MiniLM-L6-v2 as shipped)?

Each arm is `st-contrastive supcon` on all-MiniLM-L6-v2 (its final Normalize kept: the loss reads the embedding
before it), on the shared SNLI dev+test pairs, scored on STS-B dev and SICK-R dev (SICK's trial split) before and
after, for three seeds. A run missing from results.json beside this script is trained (about 2.5 minutes a run of
100 steps on 2 cores) and its scores, seconds and steps are kept.

    .venv/bin/python recipes/supcon-encoder-defaults/reproduce.py dev
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # recipes/: the command line its scripts share
import results_script

SEEDS = (42, 43, 44)  # 42: TrainSettings' default seed
DEV = ("stsb-dev", "sick-dev")
STEPS = ["--max-steps", "100"]
ARMS = {  # name: (what the table calls it, the options beside --seed)
    "default": ("today's defaults: cosine, τ 1, λ 0.3, lr 2e-5", STEPS),
    "dot": ("dot product, τ 1, λ 0.3, lr 2e-5", [*STEPS, "--similarity", "dot"]),
    "dot-l0.9": (
        "dot product, τ 1, λ 0.9 (less CE), lr 2e-5",
        [*STEPS, "--similarity", "dot", "--supcon-weight", "0.9"],
    ),
    "dot-lr5e-6": ("dot product, τ 1, λ 0.3, lr 5e-6", [*STEPS, "--similarity", "dot", "--learning-rate", "5e-6"]),
}


def measure(name: str) -> dict:
    """Train one arm's seed (NAME is ARM/seedN) and keep its scores before and after, seconds and steps."""
    arm, seed = name.split("/seed")
    with tempfile.TemporaryDirectory() as folder:
        command = ["supcon", *ARMS[arm][1], "--seed", seed, "--eval-tasks", *DEV, "--output", folder, "--overwrite"]
        subprocess.run([str(Path(sys.executable).parent / "st-contrastive"), *command], check=True)
        results = json.loads((Path(folder) / "results.json").read_text())
    return {
        "command": "st-contrastive " + " ".join(command[:-3]),
        "before": {task: results["before"][task]["spearman"] for task in DEV},
        "after": {task: results["after"][task]["spearman"] for task in DEV},
        "seconds": round(results["train"]["seconds"], 1),
        "steps": results["train"]["steps"],
    }


def dev() -> str:
    runs = results_script.kept(__file__, [f"{arm}/seed{seed}" for arm in ARMS for seed in SEEDS], measure)
    first = runs[f"default/seed{SEEDS[0]}"]["before"]
    lines = [
        "| arm | STS-B dev | SICK-R dev | change of the mean | seconds |",
        "|---|---|---|---|---|",
        f"| all-MiniLM-L6-v2 as shipped | {first['stsb-dev']:.2f} | {first['sick-dev']:.2f} | | |",
    ]
    for arm, (label, _) in ARMS.items():
        seeds = [runs[f"{arm}/seed{seed}"] for seed in SEEDS]
        cells = [results_script.mean_std([run["after"][task] for run in seeds], 2) for task in DEV]
        changes = [sum(run["after"][t] - run["before"][t] for t in DEV) / len(DEV) for run in seeds]
        change = f"{statistics.mean(changes):+.2f} ± {statistics.stdev(changes):.2f}"
        seconds = results_script.mean_std([run["seconds"] for run in seeds], 0)
        lines.append(f"| {label} | {' | '.join(cells)} | {change} | {seconds} |")
    return "\n".join(lines)


NOT_CHOSEN = {  # arm: what was tried, and what its table row says
    "default": "the paper's settings (cosine) on all-MiniLM-L6-v2, the loss reading the pooled embedding",
    "dot-l0.9": "less cross-entropy (λ 0.9), on dot products",
    "dot-lr5e-6": "a lower learning rate (5e-6), on dot products",
}


def negative() -> str:
    """The arms not chosen: the change of the mean of the two dev scores, and on how many seeds it was a gain."""
    runs = results_script.kept(__file__, [f"{arm}/seed{seed}" for arm in ARMS for seed in SEEDS], measure)
    lines = ["| tried | change of the mean of STS-B dev and SICK-R dev | seeds that gain |", "|---|---|---|"]
    for arm, tried in NOT_CHOSEN.items():
        changes = [
            sum(run["after"][t] - run["before"][t] for t in DEV) / len(DEV)
            for run in (runs[f"{arm}/seed{seed}"] for seed in SEEDS)
        ]
        gains = sum(change > 0 for change in changes)
        lines.append(
            f"| {tried} | {statistics.mean(changes):+.2f} ± {statistics.stdev(changes):.2f} | {gains} of {len(SEEDS)} |"
        )
    return "\n".join(lines)


TABLES = {"dev": dev, "negative": negative}

if __name__ == "__main__":
    results_script.run(__file__, __doc__.split("\n\n")[0], TABLES)
