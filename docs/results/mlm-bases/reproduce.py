"""The small MLM bases built on 2 cores, and what DeCLUTR, SupCon + CE and their chain do from them: four tables.

- `pretraining` (docs/declutr.md): the two bases, `st-contrastive pretrain-mlm` into runs/mlm-small (lr 5e-4, 15 %
  masking) and runs/mlm-base (lr 1e-3, 30 % masking, both corpora);
- `ablations` (docs/declutr.md): four `st-contrastive declutr-ablation` runs of 150 steps from runs/mlm-base;
- `sweep` (docs/supcon.md): `st-contrastive supcon-sweep` from runs/mlm-small;
- `chain` (docs/supcon.md): `st-contrastive chain` from runs/mlm-base.
A run is read back from its folder under --runs, and trained first where it is missing (a base before the runs that
start from it). results.json beside this file keeps what the tables need, so they print without the runs.

    .venv/bin/python docs/results/mlm-bases/reproduce.py {pretraining,ablations,sweep,chain} [--runs runs]

Prints the table as the page shows it and writes TABLE.md beside this file. On 2 cores (measured): runs/mlm-small and
runs/mlm-base 23 minutes each, the ablations 16, the chain 14, the sweep 55. The kept bases were built with
pretrain-mlm's deterministic tokenizer; the kept ablations and chain ran on an earlier build of runs/mlm-base, made
before it, so runs from the kept base will differ from them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

# base folder under --runs -> its pretrain-mlm options (without --output)
BASES = {
    "mlm-small": ["--max-steps", "2000"],
    "mlm-base": ["--dataset", "both", "--max-steps", "1900", "--learning-rate", "1e-3", "--mlm-probability", "0.3"],
}
BASE_LABELS = {
    "mlm-small": "lr 5e-4, 15 % masking (the earlier base, `runs/mlm-small`)",
    "mlm-base": "lr 1e-3, 30 % masking, no dropout (`runs/mlm-base`)",
}

ABLATION = [
    "--dataset",
    "wiki",
    "--short-documents",
    "skip",
    "--max-steps",
    "150",
    "--batch-size",
    "8",
    "--eval-steps",
    "50",
]
SHORT_SPANS = ["--min-span-length", "16", "--max-span-length", "64"]
# ablation folder under --runs -> (its setting as the table names it, the declutr-ablation options after ABLATION)
ABLATIONS = {
    "abl-default": ("τ 0.05, lr 5e-5, spans 32–126", ["--variants", "contrastive-only", "declutr", "simcse"]),
    "abl-l16-64": ("τ 0.05, lr 5e-5, spans 16–64", ["--variants", "contrastive-only", *SHORT_SPANS]),
    "abl-t0.1": (
        "τ 0.1, lr 5e-5, spans 16–64",
        ["--variants", "contrastive-only", "simcse", *SHORT_SPANS, "--temperature", "0.1"],
    ),
    "abl-lr2e-4": (
        "τ 0.05, lr 2e-4, spans 16–64",
        ["--variants", "contrastive-only", "simcse", *SHORT_SPANS, "--learning-rate", "2e-4"],
    ),
}
VARIANTS = {
    "contrastive-only": "DeCLUTR contrastive-only",
    "declutr": "DeCLUTR (contrastive + MLM)",
    "simcse": "SimCSE",
}
ABLATION_SCORES = ("stsb-dev", "stsb-test", "sick-test")

SWEEP = "supcon-sweep-mlm-small"
SWEEP_COLUMNS = ("stsb-test", "sick-test", "sts avg")

CHAIN = [
    "--declutr-steps",
    "150",
    "--dataset",
    "wiki",
    "--short-documents",
    "skip",
    "--batch-size",
    "8",
    *SHORT_SPANS,
    "--learning-rate",
    "2e-4",
    "--eval-max-rows",
    "2000",
]
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


def cli(argv: list[str]) -> None:
    from st_contrastive.commands.cli import main as cli_main

    cli_main(argv)


def base(name: str, runs: Path) -> Path:
    """The base's folder, pretrained first when it has no pretraining.json."""
    folder = runs / name
    if not (folder / "pretraining.json").exists():
        cli(["pretrain-mlm", *BASES[name], "--output", str(folder)])
    return folder


def measure(name: str, runs: Path) -> dict:
    """What the tables need of one run (a base, an ablation, the sweep or the chain), trained where missing."""
    if name in BASES:
        result = json.loads((base(name, runs) / "pretraining.json").read_text())
        return {
            key: result[key]
            for key in (
                "steps_done",
                "wall_seconds",
                "held_out_mask_token_loss_after",
                "held_out_mask_token_loss_unigram",
                "held_out_log",
            )
        }
    folder = runs / name
    if name in ABLATIONS:
        if not (folder / "ablation.json").exists():
            cli(
                [
                    "declutr-ablation",
                    "--model",
                    str(base("mlm-base", runs)),
                    *ABLATION,
                    *ABLATIONS[name][1],
                    "--output",
                    str(folder),
                ]
            )
        result = json.loads((folder / "ablation.json").read_text())
        return {key: result[key] for key in ("scores", "train_seconds", "eval_curves")}
    if name == SWEEP:
        if not (folder / "sweep.json").exists():
            cli(["supcon-sweep", "--model", str(base("mlm-small", runs)), "--output", str(folder)])
        return json.loads((folder / "sweep.json").read_text())["scores"]
    if not (folder / "chain.json").exists():
        cli(["chain", "--model", str(base("mlm-base", runs)), *CHAIN, "--output", str(folder)])
    return json.loads((folder / "chain.json").read_text())["scores"]


def kept(names: list[str], runs: Path) -> dict[str, dict]:
    return results_script.kept(__file__, names, lambda name: measure(name, runs))


def pretraining(runs: Path) -> str:
    lines = [
        "| run | steps | wall time | [MASK]-token loss | token-frequency (unigram) loss | below unigram |",
        "|---" * 6 + "|",
    ]
    for name, result in kept(list(BASES), runs).items():
        after, unigram = result["held_out_mask_token_loss_after"], result["held_out_mask_token_loss_unigram"]
        lines.append(
            f"| {BASE_LABELS[name]} | {result['steps_done']:,} | {result['wall_seconds'] / 60:.0f} min | "
            f"{after:.2f} | {unigram:.2f} | {unigram - after:.2f} |"
        )
    return "\n".join(lines)


def ablations(runs: Path) -> str:
    """Each run's arms under its setting; the highest score of each column in bold."""
    results = kept(list(ABLATIONS), runs)
    best = {
        task: max(result["scores"][arm][task] for result in results.values() for arm in result["train_seconds"])
        for task in ABLATION_SCORES
    }
    lines = ["| setting | arm | STS-B dev | STS-B test | SICK-R test | dev curve | s |", "|---" * 7 + "|"]
    for name, result in results.items():
        setting = ABLATIONS[name][0]
        for arm in result["train_seconds"]:
            scores = [f"{result['scores'][arm][task]:.2f}" for task in ABLATION_SCORES]
            scores = [
                f"**{cell}**" if result["scores"][arm][task] == best[task] else cell
                for cell, task in zip(scores, ABLATION_SCORES)
            ]
            curve = " → ".join(f"{score:.1f}" for _, score in result["eval_curves"][arm]["sts-b-dev"])
            lines.append(
                f"| {setting} | {VARIANTS[arm]} | "
                + " | ".join(scores)
                + f" | {curve} | {result['train_seconds'][arm]:.0f} |"
            )
            setting = ""  # named on its first row only
    return "\n".join(lines)


def sweep(runs: Path) -> str:
    """Every variant's averages against CE only (the base has none)."""
    scores = kept([SWEEP], runs)[SWEEP]
    ce = scores["ce-only"]
    lines = ["| variant | STS-B | SICK-R | STS avg | vs CE | transfer avg | vs CE |", "|---" * 7 + "|"]
    for variant, row in scores.items():
        label = "base (MLM only, before NLI)" if variant == "base" else variant
        changes = ["", ""] if variant == "base" else [f"{row[c] - ce[c]:+.2f}" for c in ("sts avg", "transfer avg")]
        lines.append(
            f"| {label} | "
            + " | ".join(f"{row[c]:.2f}" for c in SWEEP_COLUMNS)
            + f" | {changes[0]} | {row['transfer avg']:.2f} | {changes[1]} |"
        )
    return "\n".join(lines)


def chain(runs: Path) -> str:
    """Every arm's scores; the highest of each average in bold."""
    scores = kept(["chain"], runs)["chain"]
    best = {column: max(row[column] for row in scores.values()) for column in AVERAGES}
    lines = [
        "| arm | STS-B | SICK-R | STS avg | MR | CR | SUBJ | MPQA | SST-2 | SST-5 | TREC | MRPC | transfer avg |",
        "|---" * 13 + "|",
    ]
    for arm, row in scores.items():
        cells = [f"**{row[c]:.2f}**" if c in AVERAGES and row[c] == best[c] else f"{row[c]:.2f}" for c in CHAIN_COLUMNS]
        lines.append(f"| {CHAIN_ARMS[arm]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


RUNS = "runs"
TABLES = {
    "pretraining": lambda runs=Path(RUNS): pretraining(runs),
    "ablations": lambda runs=Path(RUNS): ablations(runs),
    "sweep": lambda runs=Path(RUNS): sweep(runs),
    "chain": lambda runs=Path(RUNS): chain(runs),
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
