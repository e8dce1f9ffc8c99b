"""DeCLUTR against sentence-transformers' own unsupervised methods (SimCSE, TSDAE, Contrastive Tension) at equal
wall time: the tables of the report beside this file, printed from results.json.

Two starting points: all-MiniLM-L6-v2 (tables `dev`, `test`, `transfer`, and `chain`: each model of `test`, then
SupCon + CE on SNLI for 100 steps) and the small MLM base that `st-contrastive pretrain-mlm` builds (`mlm-dev`,
`mlm-test`, `mlm-transfer`). The runs' commands are in the report.

    .venv/bin/python recipes/unsupervised-methods/reproduce.py {dev,test,transfer,chain,mlm-dev,mlm-test,mlm-transfer}
"""

from __future__ import annotations

import json
import statistics
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # recipes/: the command line its scripts share
import results_script

RESULTS = json.loads((Path(__file__).resolve().parent / "results.json").read_text())
ARMS = {
    "declutr": "DeCLUTR, contrastive-only (`make main`'s settings: 4 documents, spans ≤ 128 tokens)",
    "simcse": "SimCSE (MNRL on (s, s), batch 64, 32 tokens, τ 0.05)",
    "tsdae": "TSDAE (DenoisingAutoEncoderLoss, batch 8, 75 tokens)",
    "ct": "CT, in-batch negatives (batch 128, 75 tokens)",
}
BASES = {"all-MiniLM-L6-v2": "all-MiniLM-L6-v2 as shipped", "mlm-base": "the MLM base as built (mean pooling)"}
TEST_TASKS = ("stsb-test", "sick-test")
TRANSFER = {
    "mr": "MR",
    "cr": "CR",
    "subj": "SUBJ",
    "mpqa": "MPQA",
    "sst2": "SST-2",
    "sst5": "SST-5",
    "trec": "TREC",
    "mrpc": "MRPC",
}


def mean_std(values: list[float], digits: int = 2) -> str:
    return f"{statistics.mean(values):,.{digits}f} ± {statistics.stdev(values):,.{digits}f}"


def chosen_rate(base: str, arm: str) -> str:
    """The learning rate with the best STS-B dev score after training (seed 42)."""
    rates = RESULTS[base]["dev"][arm]
    return max(rates, key=lambda rate: rates[rate]["stsb-dev"])


def dev_table(base: str = "all-MiniLM-L6-v2") -> str:
    lines = [
        "| arm | learning rate | STS-B dev | steps in 120 s | rows seen |",
        "|---|---|---|---|---|",
        f"| {BASES[base]} |  | {RESULTS[base]['base']['stsb-dev']:.2f} |  |  |",
    ]
    for arm, label in ARMS.items():
        for rate, row in RESULTS[base]["dev"][arm].items():
            mark = " (chosen)" if rate == chosen_rate(base, arm) else ""
            lines.append(f"| {label} | {rate}{mark} | {row['stsb-dev']:.2f} | {row['steps']:,} | {row['rows']:,} |")
    return "\n".join(lines)


def test_table(base: str = "all-MiniLM-L6-v2") -> str:
    start = RESULTS[base]["base"]
    lines = [
        "| arm (3 seeds, mean ± std) | learning rate | STS-B test | SICK-R test | steps | seconds | rows seen |",
        "|---|---|---|---|---|---|---|",
        f"| {BASES[base]} |  | {start['stsb-test']:.2f} | {start['sick-test']:.2f} |  |  |  |",
    ]
    for arm, label in ARMS.items():
        rows = list(RESULTS[base]["test"][arm].values())
        scores = [mean_std([row[task] for row in rows]) for task in TEST_TASKS]
        amounts = [mean_std([float(row[key]) for row in rows], 0) for key in ("steps", "seconds", "rows")]
        lines.append(f"| {label} | {chosen_rate(base, arm)} | {' | '.join(scores)} | {' | '.join(amounts)} |")
    return "\n".join(lines)


def transfer_table(base: str = "all-MiniLM-L6-v2") -> str:
    """Accuracy on the same seeded 2,000 rows of each task (of each split) for every model."""
    lines = [f"| arm (3 seeds, mean ± std) | {' | '.join(TRANSFER.values())} | average |", "|---" * 10 + "|"]
    start = RESULTS[base]["base"]["transfer"]
    cells = [f"{start[task]:.1f}" for task in TRANSFER]
    lines.append(f"| {BASES[base]} | {' | '.join(cells)} | {statistics.mean(start.values()):.2f} |")
    for arm, label in ARMS.items():
        rows = list(RESULTS[base]["transfer"][arm].values())
        cells = [results_script.mean_std([row[task] for row in rows]) for task in TRANSFER]
        average = mean_std([statistics.mean(row.values()) for row in rows])
        lines.append(f"| {label.split(' (')[0]} | {' | '.join(cells)} | {average} |")
    return "\n".join(lines)


def chain_table() -> str:
    start = RESULTS["all-MiniLM-L6-v2"]["base"]
    lines = [
        "| first step, then SupCon + CE on SNLI for 100 steps (3 seeds) | STS-B test | SICK-R test |",
        "|---|---|---|",
        f"| neither: all-MiniLM-L6-v2 as shipped | {start['stsb-test']:.2f} | {start['sick-test']:.2f} |",
    ]
    for first, seeds in RESULTS["chain"].items():
        label = "none: the supervised step alone" if first == "none" else ARMS[first].split(" (")[0]
        scores = [mean_std([row[task] for row in seeds.values()]) for task in TEST_TASKS]
        lines.append(f"| {label} | {' | '.join(scores)} |")
    return "\n".join(lines)


TABLES = {
    "dev": dev_table,
    "test": test_table,
    "transfer": transfer_table,
    "chain": chain_table,
    "mlm-dev": partial(dev_table, base="mlm-base"),
    "mlm-test": partial(test_table, base="mlm-base"),
    "mlm-transfer": partial(transfer_table, base="mlm-base"),
}

if __name__ == "__main__":
    results_script.run(__file__, __doc__.splitlines()[0], TABLES)
