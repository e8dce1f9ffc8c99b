"""What DeCLUTR, SimCSE and SupCon + CE do from a small MLM base pretrained on 2 cores: the tables of the report
beside this file, printed from results.json.

`pretraining` (the two bases), `ablations` (DeCLUTR and SimCSE for 150 steps), `final` and `curve` (1,500 steps),
`sweep` (SupCon + CE over λ) and `chain` (DeCLUTR, then SupCon + CE). The runs' commands are in the report.

    .venv/bin/python recipes/mlm-bases/reproduce.py {pretraining,ablations,final,curve,sweep,chain}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # recipes/: the command line its scripts share
import results_script

RESULTS = json.loads((Path(__file__).resolve().parent / "results.json").read_text())
BASES = {
    "mlm-small": "lr 5e-4, 15 % masking (the earlier base, `runs/mlm-small`)",
    "mlm-base": "lr 1e-3, 30 % masking, no dropout (`runs/mlm-base`)",
}
SETTINGS = {
    "abl-default": "τ 0.05, lr 5e-5, spans 32–126",
    "abl-l16-64": "τ 0.05, lr 5e-5, spans 16–64",
    "abl-t0.1": "τ 0.1, lr 5e-5, spans 16–64",
    "abl-lr2e-4": "τ 0.05, lr 2e-4, spans 16–64",
}
VARIANTS = {
    "contrastive-only": "DeCLUTR contrastive-only",
    "declutr": "DeCLUTR (contrastive + MLM)",
    "simcse": "SimCSE",
}
SCORES = ("stsb-dev", "stsb-test", "sick-test")
CHAIN_ARMS = {
    "base": "base (mean pooling)",
    "declutr": "base → DeCLUTR",
    "supcon": "base → SupCon + CE",
    "declutr+supcon": "base → DeCLUTR → SupCon + CE",
}
CHAIN_COLUMNS = (
    "stsb-test",
    "sick-test",
    "sts",
    "mr",
    "cr",
    "subj",
    "mpqa",
    "sst2",
    "sst5",
    "trec",
    "mrpc",
    "transfer",
)
AVERAGES = ("sts", "transfer")  # the chain table's columns in bold where highest


def pretraining() -> str:
    lines = [
        "| run | steps | wall time | [MASK]-token loss | token-frequency (unigram) loss | below unigram |",
        "|---" * 6 + "|",
    ]
    for name, row in RESULTS["pretraining"].items():
        after, unigram = row["mask_token_loss"], row["unigram_loss"]
        lines.append(
            f"| {BASES[name]} | {row['steps']:,} | {row['seconds'] / 60:.0f} min | "
            f"{after:.2f} | {unigram:.2f} | {unigram - after:.2f} |"
        )
    return "\n".join(lines)


def ablations() -> str:
    """Each run's arms under its setting; the highest score of each column in bold."""
    runs = RESULTS["ablations"]
    best = {task: max(arm[task] for arms in runs.values() for arm in arms.values()) for task in SCORES}
    lines = ["| setting | arm | STS-B dev | STS-B test | SICK-R test | dev curve | s |", "|---" * 7 + "|"]
    for name, arms in runs.items():
        setting = SETTINGS[name]
        for arm, row in arms.items():
            scores = [f"**{row[task]:.2f}**" if row[task] == best[task] else f"{row[task]:.2f}" for task in SCORES]
            curve = " → ".join(f"{score:.1f}" for score in row["curve"])
            lines.append(
                f"| {setting} | {VARIANTS[arm]} | " + " | ".join(scores) + f" | {curve} | {row['seconds']:.0f} |"
            )
            setting = ""  # named on its first row only
    return "\n".join(lines)


def final() -> str:
    """The 1,500-step run: scores at the end, the best dev point after step 0 and the training seconds."""
    long = RESULTS["long"]
    lines = [
        "| arm (1,500 steps) | STS-B dev | STS-B test | SICK-R test | best dev on the curve | s |",
        "|---|---|---|---|---|---|",
        "| the base (mean pooling) | " + " | ".join(f"{long['base'][task]:.2f}" for task in SCORES) + " |  |  |",
    ]
    for arm, label in (("contrastive-only", "DeCLUTR contrastive-only"), ("simcse", "SimCSE")):
        row = long[arm]
        step, best = max(zip(long["curve_steps"][1:], row["curve"][1:]), key=lambda point: point[1])
        cells = [f"{row[task]:.2f}" for task in SCORES] + [f"{best:.2f} at step {step:,}", f"{row['seconds']:.0f}"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def curve() -> str:
    """STS-B dev every 150 steps of the 1,500-step run."""
    long = RESULTS["long"]
    steps = long["curve_steps"]
    lines = ["| arm | " + " | ".join(f"{step:,}" for step in steps) + " |", "|---|" + "---|" * len(steps)]
    for arm, label in (("contrastive-only", "DeCLUTR"), ("simcse", "SimCSE")):
        lines.append(f"| {label} | " + " | ".join(f"{score:.1f}" for score in long[arm]["curve"]) + " |")
    return "\n".join(lines)


def sweep() -> str:
    """Every variant's averages against CE only (the base has none)."""
    scores = RESULTS["sweep"]
    ce = scores["ce-only"]
    lines = ["| variant | STS-B | SICK-R | STS avg | vs CE | transfer avg | vs CE |", "|---" * 7 + "|"]
    for variant, row in scores.items():
        label = "base (MLM only, before NLI)" if variant == "base" else variant
        changes = ["", ""] if variant == "base" else [f"{row[c] - ce[c]:+.2f}" for c in ("sts avg", "transfer avg")]
        lines.append(
            f"| {label} | "
            + " | ".join(f"{row[c]:.2f}" for c in ("stsb-test", "sick-test", "sts avg"))
            + f" | {changes[0]} | {row['transfer avg']:.2f} | {changes[1]} |"
        )
    return "\n".join(lines)


def chain() -> str:
    """Every arm's scores; the highest of each average in bold."""
    scores = RESULTS["chain"]
    best = {column: max(row[column] for row in scores.values()) for column in AVERAGES}
    lines = [
        "| arm | STS-B | SICK-R | STS avg | MR | CR | SUBJ | MPQA | SST-2 | SST-5 | TREC | MRPC | transfer avg |",
        "|---" * 13 + "|",
    ]
    for arm, row in scores.items():
        cells = [f"**{row[c]:.2f}**" if c in AVERAGES and row[c] == best[c] else f"{row[c]:.2f}" for c in CHAIN_COLUMNS]
        lines.append(f"| {CHAIN_ARMS[arm]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TABLES = {
    "pretraining": pretraining,
    "ablations": ablations,
    "final": final,
    "curve": curve,
    "sweep": sweep,
    "chain": chain,
}

if __name__ == "__main__":
    results_script.run(__file__, __doc__.splitlines()[0], TABLES)
