"""The active-learning results tables of docs/few-labels.md and docs/scale.md, from the runs' kept states.

Each table reads `st-contrastive active` run folders under --runs (their states are kept in docs/results/al-*: every
round of every arm, no models). A folder without metrics.json is trained first with the command that made it
(RUNS below), so a table can be rebuilt one run at a time.

    .venv/bin/python docs/results/active-tables/reproduce.py TABLE [--runs docs/results]

Prints TABLE as its page shows it and writes it to TABLE.md beside this file. Wall times from scratch are stated
beside each table in the pages (7 to 100 minutes a run on 2 cores).
"""

from __future__ import annotations

import functools
import itertools
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # docs/results: the command line its scripts share
import results_script

DATASETS = {"trec": "TREC-6", "sst2": "SST-2", "sst5": "SST-5"}
Held = str | tuple[str, ...]  # an arm's seeds: in one run folder, or in several that hold other seeds
PERCENTS = ("1", "5", "10", "15")
STEP_FLOOR_READ = ("trec",)  # test splits read at the step floor's defaults so far
SIMULATED = [
    "active",
    "--num-seeds",
    "3",
    "--pool-size",
    "1500",
    "--initial",
    "0.01",
    "--step",
    "0.05",
    "--budget",
    "0.15",
]
# Every run before the floor per class (issue 51) had none: their commands turn it off. And every warm-started run
# before the warm start's floor continued from round 0 on.
NO_CLASS_FLOOR = ["--min-steps-per-class", "0"]
WARM_FROM_ROUND_ONE = ["--warm-start", "--warm-start-min-per-class", "0"]
# The paper's rounds, before the dev-split choice: 3 epochs over five dropout views.
PAPER_ROUNDS = [
    "--epochs",
    "3",
    "--min-steps",
    "10",
    *NO_CLASS_FLOOR,
    "--dropout-rates",
    "0.0",
    "0.1",
    "0.2",
    "0.3",
    "0.4",
]
DEV = [
    *SIMULATED,
    "--objective",
    "supcon-ce",
    "--acquisition",
    "random",
    "--min-steps",
    "10",
    *NO_CLASS_FLOOR,
    "--dev-size",
    "500",
]
CHOSEN = ["--epochs", "10", "--dropout-rates", "0.0", "0.1", *WARM_FROM_ROUND_ONE]  # the dev split's choice then
KMEANS_DEV = [*CHOSEN, "--acquisition", "kmeans"]
# The rounds' budget before the step floor was chosen (issue 51): the k-means runs below were made with it.
BEFORE_FLOOR = ["--epochs", "10", "--min-steps", "10", *NO_CLASS_FLOOR, *WARM_FROM_ROUND_ONE]
TEST = [
    *SIMULATED,
    "--objective",
    "supcon-ce",
    "ce",
    "--acquisition",
    "random",
    "--reference",
    "setfit",
    "setfit-defaults",
    "logreg",
]
SCALE_KMEANS = [*SIMULATED, "--objective", "supcon-ce", "--acquisition", "kmeans"]  # SCALe alone, no reference arm
KMEANS = [*SCALE_KMEANS, "--reference", "setfit-defaults", "logreg"]
WARM_TEST = [*SIMULATED, "--objective", "supcon-ce", "--acquisition", "random", *PAPER_ROUNDS, *WARM_FROM_ROUND_ONE]

WARM10 = "the same, from the base until a round had 10 labels a class (`--warm-start-min-per-class 10`)"
KMEANS_DEV_ARMS = {
    "min30": ["--min-steps", "30"],
    "min50": ["--min-steps", "50"],
    "min50-e8": ["--min-steps", "50", "--epochs", "8"],
    "min50-head3e-2": ["--min-steps", "50", "--head-learning-rate", "3e-2"],
    "min50-newhead": ["--min-steps", "50", "--new-head"],
    "min50-refithead": ["--min-steps", "50", "--refit-head"],
    "flat90": ["--min-steps", "90", "--epochs", "1"],
    "min90": ["--min-steps", "90"],
    # its run recorded the warm start's floor of the day, which --no-warm-start leaves unused
    "per-class-cold": ["--min-steps-per-class", "15", "--no-warm-start", "--warm-start-min-per-class", "10"],
    "per-class-warm10": ["--min-steps-per-class", "15", "--warm-start-min-per-class", "10"],
    "per-class-warm10-base-e30": [
        "--min-steps-per-class",
        "15",
        "--warm-start-min-per-class",
        "10",
        "--from-base-epochs",
        "30",
    ],
}
# 30 passes from the base with one dropout view instead of two, at the same steps
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30"],
    "--dropout-rates",
    "0.1",
]
# one view with about 1.5 times those steps in every round (the defaults before the pair phase)
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1"],
    "--epochs",
    "15",
    "--from-base-epochs",
    "45",
    "--min-steps",
    "15",
    "--min-steps-per-class",
    "23",
]
# one view's defaults with fewer steps: a smaller floor per class, 35 passes from the base and 13 in a round that
# continues
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-fewer"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    "--min-steps-per-class",
    "15",
    "--from-base-epochs",
    "35",
    "--epochs",
    "13",
]
# one view's defaults with fewer steps only where a round continues: a smaller floor per class, 10 passes (TREC-6)
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-cont10"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    "--min-steps-per-class",
    "15",
    "--epochs",
    "10",
]
# one view's defaults with label smoothing 0.1 on the head's cross-entropy
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-ls0.1"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    "--label-smoothing",
    "0.1",
]
# one view's defaults with every round from the base at 15 passes: the rounds that continue today, from the base at
# their steps, and the 5 % round at the floor per class (SST-5's dev split, then the two the choices are made on)
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-base15"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    "--no-warm-start",
    "--from-base-epochs",
    "15",
]
# one view's defaults with a round that continues starting halfway back to the base (shrink toward the base)
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-shrink0.5"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    "--shrink-to-base",
    "0.5",
]
# one view's defaults with the token embeddings frozen at the base model's
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-frozenwords"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    "--freeze-word-embeddings",
]
# one view's defaults with the rounds that would continue starting from the base at their passes, with a new head
LATER_FROM_BASE = ["--shrink-to-base", "1", "--new-head"]
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-later-from-base"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
    *LATER_FROM_BASE,
]
# one view's defaults with the first half, or three quarters, of every round's steps on SetFit's pairs
for share in ("0.5", "0.75"):
    KMEANS_DEV_ARMS[f"per-class-warm10-base-e30-v1-pairs{share}"] = [
        *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-x1.5"],
        "--pair-share",
        share,
    ]
# half on pairs, as SetFit's 16 pairs a step: the same texts in half the pair steps
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16"] = [
    *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5"],
    "--pairs-per-step",
    "16",
]
# and with smaller floors per class than the default: fewer steps where the floor decides, TREC-6's and SST-5's
# 15-label rounds above all (at 10, about SetFit's steps there)
CLASS_FLOORS = (15, 10)
for floor in CLASS_FLOORS:
    KMEANS_DEV_ARMS[f"per-class-warm10-base-e30-v1-pairs0.5-x16-floor{floor}"] = [
        *KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16"],
        "--min-steps-per-class",
        str(floor),
    ]
# a quarter of SetFit's time: fewer steps in every round (about two thirds of today's), at the paper's learning rate
# and at higher ones; and today's defaults again, beside them in one session (runs can part between sessions)
QUARTER = ["--min-steps-per-class", "10", "--from-base-epochs", "30", "--epochs", "10"]
SIXTEEN_PAIRS_DEV = KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16"]
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16-again"] = SIXTEEN_PAIRS_DEV
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16-quarter"] = [*SIXTEEN_PAIRS_DEV, *QUARTER]
# or today's steps, each cheaper: the embeddings and the first three of six layers frozen
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16-frozen3"] = [*SIXTEEN_PAIRS_DEV, "--frozen-layers", "3"]
# and the 5 % round's 45 passes kept, the steps taken from the others
KMEANS_DEV_ARMS["per-class-warm10-base-e30-v1-pairs0.5-x16-quarter-e5"] = [
    *SIXTEEN_PAIRS_DEV,
    "--min-steps-per-class",
    "10",
    "--epochs",
    "5",
]
QUARTER_LEARNING_RATES = ("3e-5", "5e-5", "1e-4")
for rate in QUARTER_LEARNING_RATES:
    KMEANS_DEV_ARMS[f"per-class-warm10-base-e30-v1-pairs0.5-x16-quarter-lr{rate}"] = [
        *SIXTEEN_PAIRS_DEV,
        *QUARTER,
        "--learning-rate",
        rate,
    ]
# two views with 5 passes, not 10, in a round that continues from the last
KMEANS_DEV_ARMS["per-class-warm10-base-e30-e5"] = [*KMEANS_DEV_ARMS["per-class-warm10-base-e30"], "--epochs", "5"]
# run folder -> the `st-contrastive` arguments that made it (without --output)
RUNS: dict[str, list[str]] = {
    **{
        f"al-dev-{dataset}-{arm}": [*DEV, "--dataset", dataset, *options]
        for dataset in ("trec", "sst2")
        for arm, options in {
            "cold": [*PAPER_ROUNDS, "--no-warm-start"],
            "warm": [*PAPER_ROUNDS, *WARM_FROM_ROUND_ONE],
            "warm-e10-v2": CHOSEN,
            "warm-e10-v2-head3e-2": [*CHOSEN, "--head-learning-rate", "3e-2"],
            "warm-e10-v2-kmeans": KMEANS_DEV,
        }.items()
    },
    **{
        f"al-dev-trec-warm-e10-v2-{arm}": [*DEV, "--dataset", "trec", *CHOSEN, *options]
        for arm, options in {
            "lambda0.5": ["--supcon-weight", "0.5"],
            "tau0.1": ["--temperature", "0.1"],
            "head1e-3": ["--head-learning-rate", "1e-3"],
            "entropy": ["--acquisition", "entropy"],
            "balanced-entropy": ["--acquisition", "balanced-entropy"],
        }.items()
    },
    # from the k-means arm (issue 51): a step floor per round; with it fewer epochs, a faster head, a new head each
    # round, logistic regression as the head; 90 steps every round, or at least 90
    **{
        f"al-dev-{dataset}-warm-e10-v2-kmeans-{arm}": [*DEV, "--dataset", dataset, *KMEANS_DEV, *KMEANS_DEV_ARMS[arm]]
        for dataset, arms in {
            "trec": KMEANS_DEV_ARMS,
            "sst2": (
                "min30",
                "min50",
                "min50-e8",
                "min50-refithead",
                "flat90",
                "min90",
                "per-class-cold",
                "per-class-warm10",
                "per-class-warm10-base-e30",
                "per-class-warm10-base-e30-v1",
                "per-class-warm10-base-e30-v1-x1.5",
                "per-class-warm10-base-e30-e5",
                "per-class-warm10-base-e30-v1-fewer",
                "per-class-warm10-base-e30-v1-ls0.1",
                "per-class-warm10-base-e30-v1-base15",
                "per-class-warm10-base-e30-v1-shrink0.5",
                "per-class-warm10-base-e30-v1-frozenwords",
                "per-class-warm10-base-e30-v1-later-from-base",
                "per-class-warm10-base-e30-v1-pairs0.5",
                "per-class-warm10-base-e30-v1-pairs0.75",
                "per-class-warm10-base-e30-v1-pairs0.5-x16",
                *(f"per-class-warm10-base-e30-v1-pairs0.5-x16-floor{floor}" for floor in CLASS_FLOORS),
                "per-class-warm10-base-e30-v1-pairs0.5-x16-again",
                "per-class-warm10-base-e30-v1-pairs0.5-x16-quarter",
                *(f"per-class-warm10-base-e30-v1-pairs0.5-x16-quarter-lr{rate}" for rate in QUARTER_LEARNING_RATES),
                "per-class-warm10-base-e30-v1-pairs0.5-x16-quarter-e5",
                "per-class-warm10-base-e30-v1-pairs0.5-x16-frozen3",
            ),
        }.items()
        for arm in arms
    },
    **{f"al-{dataset}": [*TEST, "--dataset", dataset, *BEFORE_FLOOR] for dataset in DATASETS},
    **{f"al-{dataset}-kmeans": [*KMEANS, *BEFORE_FLOOR, "--dataset", dataset] for dataset in DATASETS},
    # the same at the step floor chosen then (issue 51), at a floor per class, and at the warm start's floor: warm
    # from a round with 10 labels a class
    **{
        f"al-{dataset}-kmeans-min50": [
            *KMEANS,
            "--min-steps",
            "50",
            *NO_CLASS_FLOOR,
            *WARM_FROM_ROUND_ONE,
            "--dataset",
            dataset,
        ]
        for dataset in DATASETS
    },
    **{f"al-{dataset}-kmeans-per-class": [*KMEANS, *WARM_FROM_ROUND_ONE, "--dataset", dataset] for dataset in DATASETS},
    **{f"al-{dataset}-kmeans-warm10": [*KMEANS, "--dataset", dataset] for dataset in DATASETS},
    "al-sst2-references": [
        *SIMULATED,
        "--dataset",
        "sst2",
        "--objective",
        "supcon-ce",
        "ce",
        "--acquisition",
        "random",
        "--reference",
        "setfit-defaults",
        "logreg",
        "--equal-compute",
        *PAPER_ROUNDS,
        "--no-warm-start",
    ],
    **{f"al-test-{dataset}-warm": [*WARM_TEST, "--dataset", dataset] for dataset in ("trec", "sst2")},
    # scale.md's first tables: the paper's rounds from the base, random and entropy acquisition, SetFit at the
    # objectives' steps on each arm's labelled sets
    **{
        f"al-{dataset}-paper-rounds": [
            *SIMULATED,
            "--dataset",
            dataset,
            "--objective",
            "supcon-ce",
            "ce",
            "--acquisition",
            "random",
            "entropy",
            "--reference",
            "setfit",
            *PAPER_ROUNDS,
            "--no-warm-start",
        ]
        for dataset in ("trec", "sst2")
    },
    "al-trec-references": [
        *SIMULATED,
        "--dataset",
        "trec",
        "--objective",
        "supcon-ce",
        "ce",
        "--acquisition",
        "random",
        "--reference",
        "setfit",
        "setfit-defaults",
        "logreg",
        "--equal-compute",
        *PAPER_ROUNDS,
        "--no-warm-start",
    ],
}
# The floor per class's dev rows (15 steps a class: 90 on TREC-6, 30 on SST-2), with SetFit and the floor on their
# rows.
DEV_CLASS_FLOOR = {"trec": "al-dev-trec-warm-e10-v2-kmeans-min90", "sst2": "al-dev-sst2-warm-e10-v2-kmeans-min30"}
for run in DEV_CLASS_FLOOR.values():
    RUNS[run] += ["--min-steps-per-class", "15", "--reference", "setfit-defaults", "logreg"]


def epochs_given(arguments: list[str]) -> str:
    """The last --epochs of a command."""
    return [value for option, value in itertools.pairwise(arguments) if option == "--epochs"][-1]


# The defaults before one view (issue 51): every run above and the next trained at them where it gives no other.
TWO_VIEWS = {"--epochs": ["10"], "--min-steps-per-class": ["15"], "--dropout-rates": ["0.0", "0.1"]}
# 30 passes in a round from the base (issue 51), the defaults the test splits were read at last.
RUNS.update(
    {
        f"al-{dataset}-kmeans-base-e30": [*KMEANS, "--dataset", dataset, "--from-base-epochs", "30"]
        for dataset in DATASETS
    }
)
# Every run before 30 passes but the dev arm that measured them trained a round from the base for its --epochs, as
# all rounds.
for arguments in RUNS.values():
    for option, values in TWO_VIEWS.items():
        if option not in arguments:
            arguments += [option, *values]
    if "--from-base-epochs" not in arguments:
        arguments += ["--from-base-epochs", epochs_given(arguments)]
# One view's defaults (issue 51): one dropout view, 1.5 times the steps of two.
RUNS.update({f"al-{dataset}-kmeans-v1": [*KMEANS, "--dataset", dataset] for dataset in DATASETS})
# The pair phase chosen on the dev splits (issue 51), read once on the test splits with SetFit and the floor.
RUNS.update(
    {f"al-{dataset}-kmeans-v1-pairs0.5": [*KMEANS, "--dataset", dataset, "--pair-share", "0.5"] for dataset in DATASETS}
)
# Those pairs at SetFit's 16 a step, chosen on the dev splits (issue 51), read once on the test splits likewise.
RUNS.update(
    {
        f"al-{dataset}-kmeans-v1-pairs0.5-x16": [*RUNS[f"al-{dataset}-kmeans-v1-pairs0.5"], "--pairs-per-step", "16"]
        for dataset in DATASETS
    }
)
# SST-5's dev split (issue 51), the test split unread: one view's defaults with SetFit and the floor on the same rows;
# SCALe alone with one option changed, by run suffix: the arms of the dev-sst5 table.
SST5_DEV = ["--dataset", "sst5", "--dev-size", "500"]
SCALE_SST5_DEV_ARMS = {
    "e30": (["--epochs", "30"], "30 passes in a round that continues (`--epochs 30`)"),
    "refithead": (["--refit-head"], "logistic regression as the head (`--refit-head`)"),
    "nowarm": (["--no-warm-start"], "every round from the base (`--no-warm-start`)"),
    "nowarm-base15": (
        ["--no-warm-start", "--from-base-epochs", "15"],
        "every round from the base at 15 passes (`--no-warm-start --from-base-epochs 15`)",
    ),
    "b32": (["--batch-size", "32"], "32 labelled rows a batch (`--batch-size 32`)"),
    "shrink0.5": (
        ["--shrink-to-base", "0.5"],
        "a round that continues starts halfway back to the base (`--shrink-to-base 0.5`)",
    ),
    "frozenwords": (["--freeze-word-embeddings"], "token embeddings frozen (`--freeze-word-embeddings`)"),
}
RUNS["al-dev-sst5-kmeans-v1"] = [*KMEANS, *SST5_DEV]
for suffix, (options, _) in SCALE_SST5_DEV_ARMS.items():
    RUNS[f"al-dev-sst5-kmeans-v1-{suffix}"] = [*SCALE_KMEANS, *SST5_DEV, *options]
# Dev splits of 2,000 rows (half the 500-row splits' sampling error): one view's defaults (on SST-5 with SetFit and the
# floor beside them), then SCALe alone with one option changed, by run suffix.
DEV_2000_ARMS = {
    "nowarm-base15": SCALE_SST5_DEV_ARMS["nowarm-base15"][0],
    "later-from-base": LATER_FROM_BASE,
    "later-from-base-last-head": ["--shrink-to-base", "1"],
    "pairs0.5": ["--pair-share", "0.5"],
    "pairs0.5-x16": ["--pair-share", "0.5", "--pairs-per-step", "16"],
}
for floor in CLASS_FLOORS:
    DEV_2000_ARMS[f"pairs0.5-x16-floor{floor}"] = [*DEV_2000_ARMS["pairs0.5-x16"], "--min-steps-per-class", str(floor)]
QUARTER_2000_RATES = ("3e-5", "5e-5")  # the two best on the 500-row splits
for rate in QUARTER_2000_RATES:
    DEV_2000_ARMS[f"pairs0.5-x16-quarter-lr{rate}"] = [
        *DEV_2000_ARMS["pairs0.5-x16"],
        *QUARTER,
        "--learning-rate",
        rate,
    ]
# What SST-2's 10 % level, behind SetFit on the same rows, lacks: twice the passes in the rounds that continue, or
# SetFit's head (logistic regression on the trained encoder). Neither changes the rounds from the base, so the 10 %
# round labels the same rows as today's defaults and SetFit there.
DEV_2000_ARMS["pairs0.5-x16-e30"] = [*DEV_2000_ARMS["pairs0.5-x16"], "--epochs", "30"]
DEV_2000_ARMS["pairs0.5-x16-refithead"] = [*DEV_2000_ARMS["pairs0.5-x16"], "--refit-head"]
for dataset in ("sst5", "trec", "sst2"):
    dev_2000 = ["--dataset", dataset, "--dev-size", "2000"]
    RUNS[f"al-dev2000-{dataset}-kmeans-v1"] = [*(KMEANS if dataset == "sst5" else SCALE_KMEANS), *dev_2000]
    for suffix, options in DEV_2000_ARMS.items():
        RUNS[f"al-dev2000-{dataset}-kmeans-v1-{suffix}"] = [*SCALE_KMEANS, *dev_2000, *options]
# Today's defaults on TREC-6's and SST-2's: SetFit and the floor on the same rows too, to see whether the dev splits
# show the test splits' gaps to SetFit.
for dataset in ("trec", "sst2"):
    RUNS[f"al-dev2000-{dataset}-kmeans-v1-pairs0.5-x16"] = [
        *KMEANS,
        *["--dataset", dataset, "--dev-size", "2000"],
        *DEV_2000_ARMS["pairs0.5-x16"],
    ]
# Seeds 3 and 4 of today's defaults (with SetFit and the floor on the same rows) and of fewer steps at lr 3e-5: with
# the runs above, five seeds each for paired comparisons (a seed labels the same first rows in every arm).
SEEDS_3_4 = ["--seed", "3", "--num-seeds", "2"]
for dataset in ("trec", "sst2"):
    for suffix in ("pairs0.5-x16", "pairs0.5-x16-quarter-lr3e-5"):
        RUNS[f"al-dev2000-{dataset}-kmeans-v1-{suffix}-seeds34"] = [
            *(KMEANS if suffix == "pairs0.5-x16" else SCALE_KMEANS),
            *["--dataset", dataset, "--dev-size", "2000"],
            *DEV_2000_ARMS[suffix],
            *SEEDS_3_4,
        ]
# Half of each round's steps on SetFit's pairs is the default since its test reads (issue 51), and SetFit's 16 pairs a
# step since then: every run above that gives neither trained without pairs, and every one but the 16-pair runs at 8.
for arguments in RUNS.values():
    for option, before in {"--pair-share": "0", "--pairs-per-step": "8"}.items():
        if option not in arguments:
            arguments += [option, before]


@dataclass(frozen=True)
class Row:
    labels: tuple[str, ...]  # the row's first cells
    run: str  # a folder of RUNS
    objective: str = "supcon-ce"  # the arm: an --objective, a --reference or an equal-compute arm
    acquisition: str | None = None  # None: the run's only one


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]  # the label columns
    rows: tuple[Row, ...]
    extras: tuple[str, ...] = ("training s / round", "steps / round")


def dev_rows(dataset: str, arms: dict[str, str], prefix: str = "al-dev") -> tuple[Row, ...]:
    return tuple(Row((dataset, name), f"{prefix}-{dataset}-{arm}") for arm, name in arms.items())


# Where the rounds start, as the dev tables that change it name it: one view's defaults, and the rounds after one with
# 10 labels a class started from the base.
ONE_VIEW_DEV_ROUNDS = "one view's defaults (from the last round once it had 10 labels a class)"
LATER_ROUNDS_FROM_THE_BASE = (
    "those rounds from the base at their 15 passes, a new head (`--shrink-to-base 1 --new-head`)"
)

HALF_ON_PAIRS = "the first half of each round's steps on SetFit's pairs (`--pair-share 0.5`)"
SIXTEEN_PAIRS = "those pairs at SetFit's 16 a step, in half the steps (`--pairs-per-step 16`)"
SIXTEEN_PAIRS_READ = ("trec", "sst2", "sst5")  # the test splits read at 16 pairs a step
TODAYS_DEV_ROUNDS = "today's defaults (half of each round's steps on SetFit's pairs, 16 a step)"


FEWER_STEPS = "fewer steps (`--min-steps-per-class 10 --from-base-epochs 30 --epochs 10`)"


def class_floor(floor: int) -> str:
    return f"{floor} steps a class (`--min-steps-per-class {floor}`)"


def dev_splits_table(
    arms: dict[str, str], prefix: str = "al-dev", datasets: tuple[str, ...] = ("trec", "sst2")
) -> Table:
    """The same arms on the dev splits of ``datasets``, TREC-6's and SST-2's unless told (runs
    ``prefix-DATASET-ARM``), with the mean of the four levels."""
    rows = tuple(row for dataset in datasets for row in dev_rows(dataset, arms, prefix))
    return Table(("dataset", "rounds"), rows, (MEAN, "training s / round", "steps / round"))


def dev_2000_table(arms: dict[str, str], datasets: tuple[str, ...] = ("trec", "sst2", "sst5")) -> Table:
    """One view's defaults, then SCALe with one option changed (``arms``: run suffix -> row name), on the 2,000-row dev
    splits of ``datasets`` (runs ``al-dev2000-DATASET-kmeans-v1[-SUFFIX]``)."""
    return dev_splits_table(
        {"kmeans-v1": ONE_VIEW_DEV_ROUNDS, **{f"kmeans-v1-{suffix}": name for suffix, name in arms.items()}},
        prefix="al-dev2000",
        datasets=datasets,
    )


def sst5_dev_table(run: str, arms: dict[str, tuple[list[str], str]]) -> Table:
    """SST-5's dev split: one view's defaults, SetFit and the floor of ``run``, then SCALe with one option changed, one
    run ``run-SUFFIX`` for each of ``arms``."""
    return Table(
        ("dataset", "arm"),
        kmeans_table({"sst5": run}, ()).rows
        + tuple(Row(("SST-5", f"SCALe, k-means, {name}"), f"{run}-{suffix}") for suffix, (_, name) in arms.items()),
        (MEAN, "training s / round", "steps / round"),
    )


def read_on(run: str, datasets) -> dict[str, str]:
    """The runs ``run.format(dataset)``, by dataset."""
    return {dataset: run.format(dataset) for dataset in datasets}


def kmeans_table(runs: dict[str, str], extras: tuple[str, ...]) -> Table:
    """The k-means arms of each dataset's run: SCALe, SetFit on its rows, the floor."""
    return Table(
        ("dataset", "arm"),
        tuple(
            Row((DATASETS[dataset], name), run, arm)
            for dataset, run in runs.items()
            for arm, name in KMEANS_ARMS.items()
        ),
        extras,
    )


def scale_table(runs: dict[str, str], datasets) -> Table:
    """SCALe's arm of each run ``run.format(dataset)``, a row each, named by ``runs``."""
    return Table(
        ("dataset", "rounds"),
        tuple(
            Row((DATASETS[dataset], name), run.format(dataset)) for dataset in datasets for run, name in runs.items()
        ),
    )


CONTINUING_ARMS = {
    "-e30": "the same, twice the passes in the rounds that continue (`--epochs 30`)",
    "-refithead": "the same, logistic regression as the head (`--refit-head`)",
}


def beside_todays_defaults(dataset: str, suffixes: tuple[str, ...]) -> Table:
    """Today's defaults on ``dataset``'s 2,000-row dev split, SCALe with one option changed (run suffixes of
    :data:`CONTINUING_ARMS`), and SetFit on the defaults' rows."""
    run = f"al-dev2000-{dataset}-kmeans-v1-pairs0.5-x16"
    rows = [Row((dataset, TODAYS_DEV_ROUNDS), run)]
    rows += [Row((dataset, CONTINUING_ARMS[suffix]), run + suffix) for suffix in suffixes]
    rows.append(Row((dataset, "SetFit at its settings, on today's defaults' rows"), run, "setfit-defaults"))
    return Table(("dataset", "rounds"), tuple(rows), (MEAN, "training s / round", "steps / round"))


PAPER = {"cold": "from the base, 3 epochs, 5 views", "warm": "warm start, 3 epochs, 5 views"}
CHOSEN_ROW = "warm start, 10 epochs, 2 views"
KMEANS_ARMS = {
    "supcon-ce": "SCALe, k-means",
    "setfit-defaults": "SetFit at its settings, the same k-means rows",
    "logreg": "logistic regression, the same rows (floor)",
}
FLOOR = "logistic regression, frozen base (floor)"
MEAN = "mean of the four"  # the accuracy levels' mean: what a choice on the dev splits is made by
LAYOUTS: dict[str, Table] = {
    "dev": Table(
        ("dataset", "rounds"),
        tuple(row for dataset in ("trec", "sst2") for row in dev_rows(dataset, {**PAPER, "warm-e10-v2": CHOSEN_ROW})),
    ),
    "dev-lambda-tau": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2": f"{CHOSEN_ROW} (the defaults: λ 0.9, τ 0.3)",
                "warm-e10-v2-lambda0.5": "the same, λ 0.5",
                "warm-e10-v2-tau0.1": "the same, τ 0.1",
            },
        ),
    ),
    "dev-head-learning-rate": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2": f"{CHOSEN_ROW} (the defaults: head lr 1e-2)",
                "warm-e10-v2-head1e-3": "the same, head lr 1e-3",
                "warm-e10-v2-head3e-2": "the same, head lr 3e-2",
            },
        )
        + dev_rows(
            "sst2",
            {
                "warm-e10-v2": f"{CHOSEN_ROW} (the defaults: head lr 1e-2)",
                "warm-e10-v2-head3e-2": "the same, head lr 3e-2",
            },
        ),
    ),
    "dev-acquisition": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2": f"{CHOSEN_ROW}, random acquisition",
                "warm-e10-v2-entropy": "the same, entropy acquisition",
                "warm-e10-v2-balanced-entropy": "the same, class-balanced entropy",
                "warm-e10-v2-kmeans": "the same, k-means acquisition",
            },
        )
        + dev_rows(
            "sst2",
            {"warm-e10-v2": f"{CHOSEN_ROW}, random acquisition", "warm-e10-v2-kmeans": "the same, k-means acquisition"},
        ),
    ),
    "dev-step-floor": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2-kmeans": "k-means, 10 epochs, at least 10 steps (the earlier defaults)",
                "warm-e10-v2-kmeans-min30": "the same, at least 30 steps",
                "warm-e10-v2-kmeans-min50": "the same, at least 50 steps",
                "warm-e10-v2-kmeans-min50-e8": "the same, at least 50 steps, 8 epochs",
                "warm-e10-v2-kmeans-min50-head3e-2": "the same, at least 50 steps, head lr 3e-2",
            },
        )
        + dev_rows(
            "sst2",
            {
                "warm-e10-v2-kmeans": "k-means, 10 epochs, at least 10 steps (the earlier defaults)",
                "warm-e10-v2-kmeans-min50": "the same, at least 50 steps",
                "warm-e10-v2-kmeans-min50-e8": "the same, at least 50 steps, 8 epochs",
            },
        ),
        (MEAN, "training s / round", "steps / round"),
    ),
    "dev-head": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2-kmeans-min50": "k-means, at least 50 steps, the last round's head (the defaults then)",
                "warm-e10-v2-kmeans-min50-newhead": "the same, a new softmax head each round (`--new-head`)",
                "warm-e10-v2-kmeans-min50-refithead": "the same, logistic regression as the head (`--refit-head`)",
            },
        )
        + dev_rows(
            "sst2",
            {
                "warm-e10-v2-kmeans-min50": "k-means, at least 50 steps, the last round's head (the defaults then)",
                "warm-e10-v2-kmeans-min50-refithead": "the same, logistic regression as the head (`--refit-head`)",
            },
        ),
        (MEAN, "training s / round", "steps / round"),
    ),
    "dev-more-steps": Table(
        ("dataset", "rounds"),
        tuple(
            Row((dataset, name), f"al-dev-{dataset}-warm-e10-v2-kmeans{arm}")
            for dataset in ("trec", "sst2")
            for arm, name in {
                "": "k-means, 10 epochs, at least 10 steps (the earlier defaults)",
                "-min30": "the same, at least 30 steps",
                "-min50": "the same, at least 50 steps (the defaults before a floor per class)",
                "-min90": "the same, at least 90 steps",
                "-flat90": "90 steps every round (`--epochs 1 --min-steps 90`)",
            }.items()
        ),
        (MEAN, "training s / round", "steps / round"),
    ),
    "dev-rounds-from-the-base": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2-kmeans-min90": "the floor per class (90 steps: 15 a class), each round from the last",
                "warm-e10-v2-kmeans-per-class-cold": "the same, each round from the base (`--no-warm-start`)",
                "warm-e10-v2-kmeans-per-class-warm10": WARM10,
            },
        )
        + dev_rows(
            "sst2",
            {
                "warm-e10-v2-kmeans-min30": "the floor per class (30 steps: 15 a class), each round from the last",
                "warm-e10-v2-kmeans-per-class-cold": "the same, each round from the base (`--no-warm-start`)",
                "warm-e10-v2-kmeans-per-class-warm10": WARM10,
            },
        ),
        (MEAN, "training s / round", "steps / round"),
    ),
    "dev-class-floor": kmeans_table(DEV_CLASS_FLOOR, (MEAN, "training s / round", "steps / round")),
    "dev-from-base-epochs": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10": "the warm start's floor: 10 passes in every round",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30": "the same, 30 passes in a round from the base "
            "(`--from-base-epochs 30`)",
        }
    ),
    "dev-views": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30": "the defaults then: two dropout views (0.0 and 0.1)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1": "the same, one view (`--dropout-rates 0.1`)",
        }
    ),
    "dev-cheaper-rounds": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30": "the defaults before: two dropout views (0.0 and 0.1)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1": "one view (`--dropout-rates 0.1`), the same steps",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": "one view, about 1.5 times the steps (`--epochs 15"
            " --from-base-epochs 45 --min-steps 15 --min-steps-per-class 23`)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-e5": "two views, 5 passes in a round that continues"
            " (`--epochs 5`)",
        }
    ),
    "dev-fewer-steps": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": "one view's defaults: `--epochs 15"
            " --from-base-epochs 45 --min-steps-per-class 23`",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-fewer": "fewer steps: `--min-steps-per-class 15"
            " --from-base-epochs 35 --epochs 13`",
        }
    ),
    "dev-fewer-steps-trec": Table(
        ("dataset", "rounds"),
        dev_rows(
            "trec",
            {
                "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": "one view's defaults: `--epochs 15"
                " --from-base-epochs 45 --min-steps-per-class 23`",
                "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-cont10": "a smaller floor per class, 10 passes where"
                " a round continues: `--min-steps-per-class 15 --epochs 10`",
            },
        ),
        (MEAN, "training s / round", "steps / round"),
    ),
    "dev-label-smoothing": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": "one view's defaults (hard labels)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-ls0.1": "label smoothing 0.1 on the head"
            " (`--label-smoothing 0.1`)",
        }
    ),
    "dev-every-round-from-the-base": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": ONE_VIEW_DEV_ROUNDS,
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-base15": "every round from the base at 15 passes"
            " (`--no-warm-start --from-base-epochs 15`)",
        }
    ),
    "dev-shrink-to-base": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": "one view's defaults (from the last round's"
            " weights)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-shrink0.5": "halfway back to the base"
            " (`--shrink-to-base 0.5`)",
        }
    ),
    "dev-frozen-word-embeddings": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": "one view's defaults (every weight trained)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-frozenwords": "token embeddings frozen"
            " (`--freeze-word-embeddings`)",
        }
    ),
    "dev-later-rounds-from-the-base": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": ONE_VIEW_DEV_ROUNDS,
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-later-from-base": LATER_ROUNDS_FROM_THE_BASE,
        }
    ),
    "dev-sst5": sst5_dev_table("al-dev-sst5-kmeans-v1", SCALE_SST5_DEV_ARMS),
    "dev-2000-every-round-from-the-base": dev_2000_table(
        {"nowarm-base15": "every round from the base at 15 passes (`--no-warm-start --from-base-epochs 15`)"},
        datasets=("trec", "sst2"),
    ),
    "dev-2000-later-rounds-from-the-base": dev_2000_table({"later-from-base": LATER_ROUNDS_FROM_THE_BASE}),
    "dev-2000-later-rounds-last-head": dev_2000_table(
        {
            "later-from-base": LATER_ROUNDS_FROM_THE_BASE,
            "later-from-base-last-head": "those rounds from the base at their 15 passes, the last round's head"
            " (`--shrink-to-base 1`)",
        },
        datasets=("sst2",),
    ),
    "dev-2000-pair-phase": dev_2000_table({"pairs0.5": HALF_ON_PAIRS}),
    "dev-2000-sixteen-pairs-a-step": dev_2000_table({"pairs0.5": HALF_ON_PAIRS, "pairs0.5-x16": SIXTEEN_PAIRS}),
    "dev-sixteen-pairs-a-step": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5": HALF_ON_PAIRS,
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16": SIXTEEN_PAIRS,
        }
    ),
    "dev-smaller-class-floor": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16": TODAYS_DEV_ROUNDS,
            **{
                f"warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16-floor{floor}": class_floor(floor)
                for floor in CLASS_FLOORS
            },
        }
    ),
    "dev-2000-smaller-class-floor": dev_splits_table(
        {
            "kmeans-v1-pairs0.5-x16": TODAYS_DEV_ROUNDS,
            **{f"kmeans-v1-pairs0.5-x16-floor{floor}": class_floor(floor) for floor in CLASS_FLOORS},
        },
        prefix="al-dev2000",
    ),
    # SST-5's split, which no choice reads, ran at 10 steps a class only
    "dev-2000-sst5-smaller-class-floor": dev_splits_table(
        {"kmeans-v1-pairs0.5-x16": TODAYS_DEV_ROUNDS, "kmeans-v1-pairs0.5-x16-floor10": class_floor(10)},
        prefix="al-dev2000",
        datasets=("sst5",),
    ),
    "dev-quarter-of-setfit": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16": TODAYS_DEV_ROUNDS,
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16-again": "the same, run again in another"
            " session",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16-quarter": FEWER_STEPS,
            **{
                f"warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16-quarter-lr{rate}": f"the same at"
                f" `--learning-rate {rate}`"
                for rate in QUARTER_LEARNING_RATES
            },
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16-quarter-e5": "fewer steps but in the 5 %"
            " round (`--min-steps-per-class 10 --epochs 5`)",
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5-x16-frozen3": "today's steps, the embeddings and"
            " three of six layers frozen (`--frozen-layers 3`)",
        }
    ),
    # what SST-2's 10 % level lacks against SetFit: more passes in the rounds that continue, or SetFit's head
    "dev-2000-sst2-what-ten-percent-lacks": beside_todays_defaults("sst2", ("-e30", "-refithead")),
    # the same on TREC-6's split: what SST-2's 10 % level gained there costs or gains TREC-6
    "dev-2000-trec-twice-the-passes": beside_todays_defaults("trec", ("-e30",)),
    # today's defaults with SetFit and the floor on the same rows, on the 2,000-row dev splits
    "dev-2000-sixteen-pairs-with-setfit": kmeans_table(
        read_on("al-dev2000-{}-kmeans-v1-pairs0.5-x16", ("trec", "sst2")), (MEAN, "training s / round", "steps / round")
    ),
    "dev-2000-quarter-of-setfit": dev_splits_table(
        {
            "kmeans-v1-pairs0.5-x16": TODAYS_DEV_ROUNDS,
            **{
                f"kmeans-v1-pairs0.5-x16-quarter-lr{rate}": f"{FEWER_STEPS} at `--learning-rate {rate}`"
                for rate in QUARTER_2000_RATES
            },
        },
        prefix="al-dev2000",
    ),
    "dev-pair-phase": dev_splits_table(
        {
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-x1.5": ONE_VIEW_DEV_ROUNDS,
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.5": HALF_ON_PAIRS,
            "warm-e10-v2-kmeans-per-class-warm10-base-e30-v1-pairs0.75": "three quarters of them on the pairs"
            " (`--pair-share 0.75`)",
        }
    ),
    "dev-sst5-2000": sst5_dev_table(
        "al-dev2000-sst5-kmeans-v1", {"nowarm-base15": SCALE_SST5_DEV_ARMS["nowarm-base15"]}
    ),
    "test-kmeans": kmeans_table(read_on("al-{}-kmeans", DATASETS), ("training s / round",)),
    "test-step-floor": kmeans_table(
        read_on("al-{}-kmeans-min50", STEP_FLOOR_READ), ("training s / round", "steps / round")
    ),
    "test-class-floor": kmeans_table(
        read_on("al-{}-kmeans-per-class", DATASETS), ("training s / round", "steps / round")
    ),
    # the warm start's floor: SCALe against the floor per class it replaced, then beside SetFit and the floor
    "test-warm-floor-scale": scale_table(
        {
            "al-{}-kmeans-per-class": "the floor per class, each round from the last",
            "al-{}-kmeans-warm10": "the warm start's floor: from the base until a round had 10 labels a class",
        },
        DATASETS,
    ),
    "test-warm-floor": kmeans_table(read_on("al-{}-kmeans-warm10", DATASETS), ("training s / round", "steps / round")),
    # 30 passes in a round from the base, against the 10 of the warm start's floor
    "test-from-base-epochs-scale": scale_table(
        {
            "al-{}-kmeans-warm10": "the warm start's floor: 10 passes in every round",
            "al-{}-kmeans-base-e30": "the defaults after it: 30 passes in a round from the base",
        },
        DATASETS,
    ),
    # one view at 1.5 times the steps, against two views at 30 passes from the base
    "test-one-view-scale": scale_table(
        {
            "al-{}-kmeans-base-e30": "two views (0.0 and 0.1), 30 passes in a round from the base",
            "al-{}-kmeans-v1": "the defaults after them: one view (0.1), 1.5 times the steps",
        },
        DATASETS,
    ),
    "test-from-base-epochs": kmeans_table(
        read_on("al-{}-kmeans-base-e30", DATASETS), ("training s / round", "steps / round")
    ),
    "test-one-view": kmeans_table(read_on("al-{}-kmeans-v1", DATASETS), ("training s / round", "steps / round")),
    # half of each round's steps on SetFit's pairs (8 a step), chosen on the dev splits, on the test splits
    "test-pair-phase": kmeans_table(
        read_on("al-{}-kmeans-v1-pairs0.5", DATASETS), ("training s / round", "steps / round")
    ),
    "test-pair-phase-scale": scale_table(
        {
            "al-{}-kmeans-v1": "one view's defaults: SupCon + CE alone",
            "al-{}-kmeans-v1-pairs0.5": "half of each round's steps on SetFit's pairs first, 8 a step",
        },
        DATASETS,
    ),
    "test-sixteen-pairs": kmeans_table(
        read_on("al-{}-kmeans-v1-pairs0.5-x16", SIXTEEN_PAIRS_READ), ("training s / round", "steps / round")
    ),
    "test-sixteen-pairs-scale": scale_table(
        {
            "al-{}-kmeans-v1-pairs0.5": "half of each round's steps on SetFit's pairs first, 8 a step",
            "al-{}-kmeans-v1-pairs0.5-x16": "today's defaults: those pairs 16 a step",
        },
        SIXTEEN_PAIRS_READ,
    ),
    "dev-warm-start": Table(
        ("dataset", "rounds start from"),
        tuple(
            Row((DATASETS[dataset], name), f"al-dev-{dataset}-{arm}")
            for dataset in ("trec", "sst2")
            for arm, name in {"cold": "the base (`--no-warm-start`)", "warm": "the last round (`--warm-start`)"}.items()
        ),
        ("steps / round",),
    ),
}
SCALE, CE = "SupCon + CE (SCALe)", "CE only"
for dataset in ("trec", "sst2"):
    LAYOUTS[f"{dataset}-paper-rounds"] = Table(
        ("objective", "acquisition"),
        tuple(
            Row((name, acquisition), f"al-{dataset}-paper-rounds", objective, acquisition)
            for acquisition, sets in (("random", "same labelled sets"), ("entropy", "SCALe's entropy sets"))
            for objective, name in {"supcon-ce": SCALE, "ce": CE, "setfit": f"SetFit ({sets})"}.items()
        ),
        (),
    )
# SetFit at its own settings and the floor beside the paper's rounds, then the objectives at SetFit's training time
for dataset, setfit in (("trec", {"setfit": "SetFit at the objectives' steps"}), ("sst2", {})):
    LAYOUTS[f"{dataset}-references"] = Table(
        ("arm",),
        tuple(
            Row((name,), f"al-{dataset}-references", objective)
            for objective, name in {
                "supcon-ce": SCALE,
                "ce": CE,
                **setfit,
                "setfit-defaults": "SetFit at its own settings",
                "logreg": FLOOR,
            }.items()
        ),
    )
    LAYOUTS[f"{dataset}-equal-compute"] = Table(
        ("arm",),
        tuple(
            Row((name,), f"al-{dataset}-references", objective)
            for objective, name in {
                "supcon-ce": f"{SCALE}, equal steps",
                "setfit-defaults": "SetFit at its own settings",
                "supcon-ce-equal-compute": f"{SCALE}, equal compute",
                "ce-equal-compute": f"{CE}, equal compute",
                "logreg": FLOOR,
            }.items()
        ),
        ("steps / round",),
    )
# Warm-started rounds, chosen on dev, read once on the test split beside the reference runs' rows
LAYOUTS["test-warm-start"] = Table(
    ("dataset", "arm"),
    tuple(
        Row((DATASETS[dataset], name), run, objective)
        for dataset in ("trec", "sst2")
        for name, run, objective in (
            (f"{SCALE}, rounds from the base", f"al-{dataset}-references", "supcon-ce"),
            (f"{SCALE}, `--warm-start`", f"al-test-{dataset}-warm", "supcon-ce"),
            ("SetFit at its own settings", f"al-{dataset}-references", "setfit-defaults"),
            (FLOOR, f"al-{dataset}-references", "logreg"),
        )
    ),
)
# The three test runs at the defaults, each as its own command prints it.
OWN_TABLES = {f"test-{dataset}": f"al-{dataset}" for dataset in ("trec", "sst2", "sst5")}
# SCALe against SetFit at its settings on the same k-means rows: accuracy points, and training time as a share; at
# the defaults before the step floor, at the step floor and at the floor per class (the datasets whose test splits
# were read with them); and the floor per class on the dev splits.
DIFFERENCES = {
    "test-kmeans-against-setfit": read_on("al-{}-kmeans", DATASETS),
    "test-step-floor-against-setfit": read_on("al-{}-kmeans-min50", STEP_FLOOR_READ),
    "test-class-floor-against-setfit": read_on("al-{}-kmeans-per-class", DATASETS),
    "test-warm-floor-against-setfit": read_on("al-{}-kmeans-warm10", DATASETS),
    "test-from-base-epochs-against-setfit": read_on("al-{}-kmeans-base-e30", DATASETS),
    "test-one-view-against-setfit": read_on("al-{}-kmeans-v1", DATASETS),
    "test-pair-phase-against-setfit": read_on("al-{}-kmeans-v1-pairs0.5", DATASETS),
    "test-sixteen-pairs-against-setfit": read_on("al-{}-kmeans-v1-pairs0.5-x16", SIXTEEN_PAIRS_READ),
    "dev-class-floor-against-setfit": DEV_CLASS_FLOOR,
    "dev-sst5-against-setfit": {"sst5": "al-dev-sst5-kmeans-v1"},
    "dev-sst5-2000-against-setfit": {"sst5": "al-dev2000-sst5-kmeans-v1"},
    "dev-2000-sixteen-pairs-against-setfit": read_on("al-dev2000-{}-kmeans-v1-pairs0.5-x16", ("trec", "sst2")),
}
# Today's defaults on five seeds of those dev splits: seeds 3 and 4 in runs of their own.
DIFFERENCES["dev-2000-sixteen-pairs-five-seeds-against-setfit"] = {
    dataset: (run, f"{run}-seeds34") for dataset, run in DIFFERENCES["dev-2000-sixteen-pairs-against-setfit"].items()
}


@functools.cache  # a table reads several arms of one run
def metrics(run: str, runs: Path = HERE.parent) -> list[dict]:
    folder = runs / run
    if not (folder / "metrics.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        # Said first: a table whose run was never kept here trains it (minutes to hours), not only reads it.
        print(f"{folder}: no metrics.json, so this table trains the run first", file=sys.stderr)
        cli_main([*RUNS[run], "--output", str(folder)])
    return json.loads((folder / "metrics.json").read_text())


def arm(run: str, objective: str, runs: Path, acquisition: str | None = None) -> dict:
    """Accuracy mean and std per percent, and training seconds and steps per round (means over rounds)."""
    from st_contrastive.active.report import summarize

    summary = [
        s
        for s in summarize(metrics(run, runs))
        if s["objective"] == objective and acquisition in (None, s["acquisition"])
    ]
    if not summary:  # a finished run gains the arms its command adds when the command runs again
        raise SystemExit(
            f"{runs / run} has no arm {objective!r}{f' with {acquisition} acquisition' * bool(acquisition)}"
            f": add it with st-contrastive {' '.join(RUNS[run])} --output {runs / run}"
        )
    per_round = {key: sum(s[f"{key}_mean"] for s in summary) / len(summary) for key in ("train_seconds", "steps")}
    return {
        "accuracy": {f"{s['percent']:g}": (s["accuracy_mean"], s["accuracy_std"]) for s in summary},
        "training s / round": per_round["train_seconds"],
        "steps / round": per_round["steps"],
    }


def markdown(table: Table, runs: Path) -> str:
    lines = [
        "| " + " | ".join([*table.header, *(f"{p} %" for p in PERCENTS), *table.extras]) + " |",
        "|" + "---|" * (len(table.header) + len(PERCENTS) + len(table.extras)),
    ]
    for row in table.rows:
        found = arm(row.run, row.objective, runs, row.acquisition)
        cells = [f"{mean:.2f} ± {std:.2f}" for mean, std in (found["accuracy"][p] for p in PERCENTS)]
        found[MEAN] = sum(found["accuracy"][p][0] for p in PERCENTS) / len(PERCENTS)
        decimals = {"steps / round": 0, MEAN: 2}  # training seconds: 1
        cells += [f"{found[extra]:.{decimals.get(extra, 1)}f}" for extra in table.extras]
        lines.append("| " + " | ".join([*row.labels, *cells]) + " |")
    return "\n".join(lines)


def signed(value: float) -> str:
    return f"{value:+.1f}".replace("-", "−")


def differences(name: str, runs: Path) -> str:
    lines = [
        "| dataset | " + " | ".join(f"{p} %" for p in PERCENTS) + " | SCALe's training time per round, of SetFit's |",
        "|---|" + "---|" * (len(PERCENTS) + 1),
    ]
    for dataset, held in DIFFERENCES[name].items():
        gaps, share = against_setfit(held, runs)
        cells = [signed(gaps[p]) for p in PERCENTS]
        lines.append(f"| {DATASETS[dataset]} | " + " | ".join(cells) + f" | {share:.0f} % |")
    return "\n".join(lines)


def against_setfit(held: Held, runs: Path) -> tuple[dict[str, float], float]:
    """SCALe − SetFit at each level, means over the seeds of ``held`` (runs that hold both arms), and SCALe's training
    time per round as a percentage of SetFit's."""
    scale, setfit = (seeds_of(held, runs, objective) for objective in ("supcon-ce", "setfit-defaults"))
    gaps = {p: seeds_mean(scale, p) - seeds_mean(setfit, p) for p in PERCENTS}
    return gaps, 100 * seeds_mean(scale, "seconds") / seeds_mean(setfit, "seconds")


# SCALe − SetFit at 5 %, by seed, {row: (SCALe's run, SetFit's run)}. SetFit's arm may be another run's that
# labelled the same rows in its first two rounds (the 15-label round starts from the base in both, and k-means picks
# the next rows with its model): the script refuses the table where a seed's rows differ.
FIVE_PERCENT = {
    "test-warm-floor-5-against-setfit": {
        DATASETS[dataset]: (f"al-{dataset}-kmeans-warm10",) * 2 for dataset in DATASETS
    },
    "dev-from-base-epochs-5-against-setfit": {
        f"{dataset}, {name}": (f"al-dev-{dataset}-warm-e10-v2-kmeans-{arm}", DEV_CLASS_FLOOR[dataset])
        for dataset in ("trec", "sst2")
        for arm, name in {
            "per-class-warm10": "the warm start's floor",
            "per-class-warm10-base-e30": "`--from-base-epochs 30`",
        }.items()
    },
}


def labelled_sets(run: str, objective: str, seed: int, runs: Path) -> list[list]:
    state = json.loads((runs / run / "arms" / f"{objective}-kmeans-seed{seed}" / "state.json").read_text())
    return [state["labelled"][: r["labelled"]] for r in state["rounds"]]


def five_percent_against_setfit(name: str, runs: Path) -> str:
    """SCALe − SetFit at 5 %, by seed and on the mean, on the same rows (:data:`FIVE_PERCENT`)."""
    lines = ["| dataset | SCALe at 5 %, by seed | SetFit at 5 %, by seed | SCALe − SetFit |", "|---|---|---|---|"]
    for shown, (scale_run, setfit_run) in FIVE_PERCENT[name].items():
        arms = {"supcon-ce": scale_run, "setfit-defaults": setfit_run}
        at_5 = {
            objective: {
                r["seed"]: r["accuracy"]
                for r in metrics(run, runs)
                if r["objective"] == objective and r["percent"] == 5
            }
            for objective, run in arms.items()
        }
        if setfit_run != scale_run:  # within one run the reference arms train on SCALe's rows by construction
            for seed in at_5["supcon-ce"]:
                first_two = [labelled_sets(run, objective, seed, runs)[:2] for objective, run in arms.items()]
                if first_two[0] != first_two[1]:
                    raise SystemExit(f"{scale_run}, {setfit_run}: seed {seed}'s first two rounds labelled other rows")
        by_seed = [", ".join(f"{a:.1f}" for a in at_5[objective].values()) for objective in arms]
        mean = [sum(at_5[objective].values()) / len(at_5[objective]) for objective in arms]
        lines.append(f"| {shown} | {by_seed[0]} | {by_seed[1]} | {signed(mean[0] - mean[1])} |")
    return "\n".join(lines)


# SCALe − SetFit at every level, seed by seed, within one run (both arms on the same rows): which gaps are every
# seed's and which are one seed's.
def within_runs(read: dict[str, Held]) -> dict[str, tuple[Held, Held, tuple[str, ...]]]:
    """:data:`BY_SEED` rows of runs that hold both arms (a run, or runs that hold other seeds), at every level."""
    return {DATASETS[dataset]: (run, run, PERCENTS) for dataset, run in read.items()}


# SCALe − SetFit seed by seed, {row: (SCALe's runs, SetFit's runs, levels)}, an arm's seeds from one run or several:
# which gaps are every seed's and which one seed's. Within one run both arms label the same rows; SetFit's arm from
# another run is compared at the levels whose rows SCALe's rounds before them leave unchanged, and the script refuses
# the table where a seed's rows differ.
BY_SEED = {
    "test-sixteen-pairs-by-seed-against-setfit": within_runs(DIFFERENCES["test-sixteen-pairs-against-setfit"]),
    "dev-2000-sixteen-pairs-by-seed-against-setfit": within_runs(DIFFERENCES["dev-2000-sixteen-pairs-against-setfit"]),
    "dev-2000-sixteen-pairs-five-seeds-by-seed-against-setfit": within_runs(
        DIFFERENCES["dev-2000-sixteen-pairs-five-seeds-against-setfit"]
    ),
    "dev-2000-trec-ten-percent-by-seed-against-setfit": {
        f"TREC-6, {name}": (
            f"al-dev2000-trec-kmeans-v1-pairs0.5-x16{suffix}",
            "al-dev2000-trec-kmeans-v1-pairs0.5-x16",
            ("10",),
        )
        for suffix, name in {"": "today's defaults", "-e30": "twice the passes in the rounds that continue"}.items()
    },
    "dev-2000-sst2-ten-percent-by-seed-against-setfit": {
        f"SST-2, {name}": (
            f"al-dev2000-sst2-kmeans-v1-pairs0.5-x16{suffix}",
            "al-dev2000-sst2-kmeans-v1-pairs0.5-x16",
            ("10",),
        )
        for suffix, name in {
            "": "today's defaults",
            "-e30": "twice the passes in the rounds that continue",
            "-refithead": "SetFit's head",
        }.items()
    },
}


def seeds_of(held: Held, runs: Path, objective: str = "supcon-ce") -> dict[int, tuple[str, dict[str, float]]]:
    """By seed over the run or runs ``held``: the run that holds it, and the arm's accuracy at each level, their mean,
    the steps and the training seconds a round; a seed in two of them is refused."""
    found: dict[int, tuple[str, dict[str, float]]] = {}
    for run in (held,) if isinstance(held, str) else held:
        arm(run, objective, runs)  # a run without the arm: says how to add it
        seeds: dict[int, dict[str, float]] = {}
        for r in metrics(run, runs):
            if r["objective"] == objective:
                seed = seeds.setdefault(r["seed"], {"steps": 0.0, "seconds": 0.0})
                seed[f"{r['percent']:g}"] = r["accuracy"]
                seed["steps"] += r["steps"] / len(PERCENTS)
                seed["seconds"] += r["train_seconds"] / len(PERCENTS)
        if seeds.keys() & found.keys():
            raise SystemExit(f"{run}: seeds {sorted(seeds.keys() & found.keys())} are in another run of its arm too")
        found |= {
            seed: (run, values | {MEAN: statistics.fmean(values[p] for p in PERCENTS)})
            for seed, values in seeds.items()
        }
    return found


def seeds_mean(found: dict[int, tuple[str, dict[str, float]]], key: str) -> float:
    """The mean over seeds of one of :func:`seeds_of`'s figures."""
    return statistics.fmean(values[key] for _, values in found.values())


def by_seed_against_setfit(name: str, runs: Path) -> str:
    """SCALe − SetFit at each level on each seed's rows (:data:`BY_SEED`), their mean ± std (std over seeds as in
    every table here) and the seeds on which SCALe is behind."""
    lines = [
        "| dataset | level | SCALe − SetFit, by seed | mean ± std | seeds behind |",
        "|---|---|---|---|---|",
    ]
    for shown, (scale_runs, setfit_runs, levels) in BY_SEED[name].items():
        arms = {"supcon-ce": scale_runs, "setfit-defaults": setfit_runs}
        scale, setfit = (seeds_of(runs_of_arm, runs, objective) for objective, runs_of_arm in arms.items())
        seeds = sorted(scale)
        for seed in seeds if setfit_runs != scale_runs else ():
            labelled = [labelled_sets(found[seed][0], o, seed, runs) for o, found in zip(arms, (scale, setfit))]
            for percent in levels:
                if labelled[0][PERCENTS.index(percent)] != labelled[1][PERCENTS.index(percent)]:
                    raise SystemExit(f"{scale_runs}, {setfit_runs}: seed {seed} labelled other rows at {percent} %")
        for percent in levels:
            gaps = [scale[s][1][percent] - setfit[s][1][percent] for s in seeds]
            by_seed, behind = ", ".join(signed(gap) for gap in gaps), sum(gap < 0 for gap in gaps)
            spread = f"{signed(statistics.fmean(gaps))} ± {statistics.pstdev(gaps):.1f}"  # the pages' std: np.std's
            lines.append(f"| {shown} | {percent} % | {by_seed} | {spread} | {behind} of {len(gaps)} |")
    return "\n".join(lines)


# A candidate against today's defaults, seed by seed on the 2,000-row dev splits, {dataset: (defaults' runs,
# candidate's runs)}: each arm's seeds from several runs, a seed's first round labelling the same rows in both.
def five_seeds(suffix: str) -> dict[str, tuple[Held, Held]]:
    return {
        dataset: tuple(
            (f"al-dev2000-{dataset}-kmeans-v1-{arm}", f"al-dev2000-{dataset}-kmeans-v1-{arm}-seeds34")
            for arm in ("pairs0.5-x16", suffix)
        )
        for dataset in ("trec", "sst2")
    }


PAIRED = {"dev-2000-fewer-steps-five-seeds": five_seeds("pairs0.5-x16-quarter-lr3e-5")}


def paired_seeds(name: str, runs: Path) -> str:
    """Each level, the mean of the four and the steps a round: today's defaults and the candidate (mean ± std over
    seeds) and the candidate − the defaults seed by seed (:data:`PAIRED`)."""
    lines = [
        "| dataset | level | today's defaults | candidate | candidate − defaults, by seed | mean ± std |",
        "|---|---|---|---|---|---|",
    ]
    for dataset, arms in PAIRED[name].items():
        defaults, candidate = (seeds_of(runs_of_arm, runs) for runs_of_arm in arms)
        if defaults.keys() != candidate.keys():
            raise SystemExit(
                f"{dataset}: the defaults have seeds {sorted(defaults)}, the candidate {sorted(candidate)}"
            )
        seeds = sorted(defaults)
        for seed in seeds:
            first = [labelled_sets(found[seed][0], "supcon-ce", seed, runs)[0] for found in (defaults, candidate)]
            if first[0] != first[1]:
                raise SystemExit(f"{dataset}: seed {seed}'s first round labelled other rows in the two arms")
        for key in [*PERCENTS, MEAN, "steps"]:
            values = [[found[seed][1][key] for seed in seeds] for found in (defaults, candidate)]
            gaps = [b - a for a, b in zip(*values)]
            if key == "steps":  # the same on every seed: a round's steps follow its labels
                means = [statistics.fmean(v) for v in values]
                cells = [f"{means[0]:.0f}", f"{means[1]:.0f}", "", f"{means[1] / means[0]:.2f} of the defaults'"]
            else:
                cells = [f"{statistics.fmean(v):.2f} ± {statistics.pstdev(v):.2f}" for v in values]
                cells += [
                    ", ".join(signed(gap) for gap in gaps),
                    f"{signed(statistics.fmean(gaps))} ± {statistics.pstdev(gaps):.1f}",
                ]
            level = {MEAN: MEAN, "steps": "steps / round"}.get(key, f"{key} %")
            lines.append(f"| {DATASETS[dataset]} | {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Every set of defaults read on all three test splits, oldest first: how far behind SetFit each left SCALe, and at
# what share of SetFit's time (the step floor was read on TREC-6 alone).
TEST_READS = {
    "k-means acquisition, at least 10 steps a round": "test-kmeans-against-setfit",
    "a floor per class": "test-class-floor-against-setfit",
    "the warm start's floor": "test-warm-floor-against-setfit",
    "two views, 30 passes from the base": "test-from-base-epochs-against-setfit",
    "one view": "test-one-view-against-setfit",
    "half the steps on SetFit's pairs, 8 a step": "test-pair-phase-against-setfit",
    "16 pairs a step (today's)": "test-sixteen-pairs-against-setfit",
}
HISTORY = {"test-reads-against-setfit": TEST_READS}


def test_reads_against_setfit(name: str, runs: Path) -> str:
    """Per set of defaults (:data:`HISTORY`): the levels of the twelve where SCALe is behind SetFit, the largest gap,
    the mean gap from 5 % on (the 1 % leads would drown it), and SCALe's share of SetFit's time on each test split."""
    shown = ", ".join(DATASETS.values())
    lines = [
        f"| defaults | levels behind, of 12 | largest gap behind | SCALe − SetFit from 5 % on, mean | time, of SetFit's ({shown}) |",
        "|---|---|---|---|---|",
    ]
    for label, read in HISTORY[name].items():
        gaps, shares = [], []
        for held in DIFFERENCES[read].values():
            by_level, share = against_setfit(held, runs)
            gaps += by_level.items()
            shares.append(f"{share:.0f} %")
        behind = [gap for _, gap in gaps if gap < 0]
        later = [gap for p, gap in gaps if p != PERCENTS[0]]
        cells = [str(len(behind)), signed(min(behind)) if behind else "none", signed(sum(later) / len(later))]
        lines.append(f"| {label} | " + " | ".join([*cells, ", ".join(shares)]) + " |")
    return "\n".join(lines)


def table_text(name: str, runs: Path = HERE.parent) -> str:
    if name in DIFFERENCES:
        return differences(name, runs)
    if name in FIVE_PERCENT:
        return five_percent_against_setfit(name, runs)
    if name in BY_SEED:
        return by_seed_against_setfit(name, runs)
    if name in HISTORY:
        return test_reads_against_setfit(name, runs)
    if name in PAIRED:
        return paired_seeds(name, runs)
    if name in OWN_TABLES:  # the command's own report, its legend of arms left out
        from st_contrastive.active.report import format_table, summarize

        return format_table(summarize(metrics(OWN_TABLES[name], runs))).split("\n\n")[0]
    return markdown(LAYOUTS[name], runs)


TABLES = {
    name: functools.partial(table_text, name)
    for name in [*LAYOUTS, *OWN_TABLES, *DIFFERENCES, *FIVE_PERCENT, *BY_SEED, *HISTORY, *PAIRED]
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=str(HERE.parent))


if __name__ == "__main__":
    main()
