"""SCALe or SetFit with few labels? The tables of this folder's README.md (and of docs/few-labels.md and
docs/scale.md), printed from results.json beside this script: for each run, arm and seed, each level's accuracy (%),
training seconds and optimisation steps, with the command that made the run and the commit that added it.

    .venv/bin/python recipes/scale-against-setfit/reproduce.py TABLE

Nothing trains here. ``reproduce.py runs`` lists each run's command: it reruns the run at commit 799a0b0, where a
test checked every command against the settings its run recorded. Today's defaults rerun at HEAD with the command in
the README.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # recipes/: the command line its scripts share
import results_script

RESULTS: dict[str, dict] = json.loads((HERE / "results.json").read_text(encoding="utf-8"))
LEVELS = ("1", "5", "10", "15")  # % of the 1,500-row pool labelled: 15, 75, 150 and 225 labels
DATASETS = {"trec": "TREC-6", "sst2": "SST-2", "sst5": "SST-5"}
MEAN = "mean of the four"  # the four levels' mean accuracy: what every choice on the dev splits was made by
SCALE, SETFIT = "supcon-ce", "setfit-defaults"  # SCALe's arm; SetFit at its own settings on SCALe's rows
DIGITS = {MEAN: 2, "training s / round": 1, "steps / round": 0}  # the decimals of an arm table's last columns
READ: set[tuple[str, str]] = set()  # (run, arm) pairs the tables have read: the test keeps results.json to them
Held = str | tuple[str, ...]  # an arm's seeds: in one run, or in several runs that hold other seeds


def seeds(held: Held, arm: str = SCALE) -> dict[str, dict[str, list]]:
    """Seed -> level -> [accuracy, training seconds, steps], over the run or runs ``held``."""
    found: dict[str, dict[str, list]] = {}
    for run in (held,) if isinstance(held, str) else held:
        READ.add((run, arm))
        of_run = RESULTS[run]["arms"][arm]
        if of_run.keys() & found.keys():
            raise SystemExit(f"{run}: seeds {sorted(of_run.keys() & found.keys())} are in another run of its arm too")
        found |= of_run
    return found


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def std(values: list[float]) -> float:  # over seeds, as numpy's std (the command's own tables use it)
    centre = mean(values)
    return math.sqrt(sum((value - centre) ** 2 for value in values) / len(values))


def summary(held: Held, arm: str = SCALE) -> dict:
    """Accuracy mean and std over seeds at each level (to the hundredth, as the command's report rounds them), their
    mean, and training seconds and steps a round (means over the rounds)."""
    by_seed = list(seeds(held, arm).values())
    column = {level: [seed[level] for seed in by_seed] for level in LEVELS}
    accuracy = {level: [round(f([row[0] for row in column[level]]), 2) for f in (mean, std)] for level in LEVELS}
    per_round = [
        sum(round(mean([row[k] for row in column[level]]), 2) for level in LEVELS) / len(LEVELS) for k in (1, 2)
    ]
    return {
        "accuracy": accuracy,
        MEAN: sum(accuracy[level][0] for level in LEVELS) / len(LEVELS),
        "training s / round": per_round[0],
        "steps / round": per_round[1],
    }


def arm_table(header: tuple[str, ...], rows: list[tuple[tuple[str, ...], Held, str]], extras: tuple[str, ...]) -> str:
    """Rows of (their first cells, the run, the arm): accuracy mean ± std at each level, then ``extras``."""
    lines = [
        "| " + " | ".join([*header, *(f"{level} %" for level in LEVELS), *extras]) + " |",
        "|" + "---|" * (len(header) + len(LEVELS) + len(extras)),
    ]
    for labels, run, arm in rows:
        found = summary(run, arm)
        cells = [f"{m:.2f} ± {s:.2f}" for m, s in found["accuracy"].values()]
        cells += [f"{found[extra]:.{DIGITS[extra]}f}" for extra in extras]
        lines.append("| " + " | ".join([*labels, *cells]) + " |")
    return "\n".join(lines)


def signed(value: float, digits: int = 1) -> str:
    return f"{value:+.{digits}f}".replace("-", "−")


# The test splits, read once at each set of defaults: SCALe, SetFit at its settings and the floor on SCALe's rows.
FINAL = {dataset: f"al-{dataset}-kmeans-v1-pairs0.5-x16" for dataset in DATASETS}  # today's defaults
REFERENCE_ARMS = {
    SCALE: "SCALe, k-means",
    SETFIT: "SetFit at its settings, the same k-means rows",
    "logreg": "logistic regression, the same rows (floor)",
}
# Today's defaults' command at HEAD, by dataset (the runs of FINAL; --num-seeds 3 with the simulated oracle).
TODAY = {
    dataset: (
        f"st-contrastive active --dataset {dataset} --pool-size 1500 --initial 0.01 --step 0.05 --budget 0.15 "
        f"--reference setfit-defaults logreg --output runs/{run}"
    )
    for dataset, run in FINAL.items()
}


def final_table() -> str:
    rows = [((DATASETS[d], name), run, arm) for d, run in FINAL.items() for arm, name in REFERENCE_ARMS.items()]
    return arm_table(("dataset", "arm"), rows, ("training s / round", "steps / round"))


def per_seed(held: Held, arm: str) -> dict[str, dict[str, float]]:
    """Seed -> each level's accuracy, and the training seconds a round."""
    return {
        seed: {level: levels[level][0] for level in LEVELS} | {"seconds": sum(levels[k][1] / 4 for k in LEVELS)}
        for seed, levels in seeds(held, arm).items()
    }


def against_setfit(held: Held) -> tuple[dict[str, float], float]:
    """SCALe − SetFit at each level (means over the seeds of ``held``, runs that hold both arms on the same rows),
    and SCALe's training seconds a round as a percentage of SetFit's."""
    scale, setfit = per_seed(held, SCALE), per_seed(held, SETFIT)

    def over(found, key):
        return statistics.fmean(values[key] for values in found.values())

    return {p: over(scale, p) - over(setfit, p) for p in LEVELS}, 100 * over(scale, "seconds") / over(setfit, "seconds")


def differences(read: dict[str, Held]) -> str:
    lines = [
        "| dataset | " + " | ".join(f"{p} %" for p in LEVELS) + " | SCALe's training time per round, of SetFit's |",
        "|---|" + "---|" * (len(LEVELS) + 1),
    ]
    for dataset, held in read.items():
        gaps, share = against_setfit(held)
        lines.append(f"| {DATASETS[dataset]} | " + " | ".join(signed(gaps[p]) for p in LEVELS) + f" | {share:.0f} % |")
    return "\n".join(lines)


def by_seed(read: dict[str, Held]) -> str:
    """SCALe − SetFit at each level on each seed's rows, their mean ± std over seeds, and the seeds behind."""
    lines = ["| dataset | level | SCALe − SetFit, by seed | mean ± std | seeds behind |", "|---|---|---|---|---|"]
    for dataset, held in read.items():
        scale, setfit = per_seed(held, SCALE), per_seed(held, SETFIT)
        for level in LEVELS:
            gaps = [scale[s][level] - setfit[s][level] for s in sorted(scale, key=int)]
            spread = f"{signed(statistics.fmean(gaps))} ± {statistics.pstdev(gaps):.1f}"
            behind = sum(gap < 0 for gap in gaps)
            cells = [DATASETS[dataset], f"{level} %", ", ".join(map(signed, gaps)), spread, f"{behind} of {len(gaps)}"]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Every set of defaults read on the three test splits, oldest first (runs al-DATASET-SUFFIX).
TEST_READS = {
    "k-means acquisition, at least 10 steps a round": "kmeans",
    "a floor per class": "kmeans-per-class",
    "the warm start's floor": "kmeans-warm10",
    "two views, 30 passes from the base": "kmeans-base-e30",
    "one view": "kmeans-v1",
    "half the steps on SetFit's pairs, 8 a step": "kmeans-v1-pairs0.5",
    "16 pairs a step (today's)": "kmeans-v1-pairs0.5-x16",
}


def test_reads() -> str:
    """Per set of defaults: the levels of the twelve where SCALe is behind SetFit, the largest gap, the mean gap from
    5 % on (the 1 % leads would drown it), and SCALe's share of SetFit's time on each test split."""
    shown = ", ".join(DATASETS.values())
    columns = ["defaults", "levels behind, of 12", "largest gap behind", "SCALe − SetFit from 5 % on, mean"]
    header = "| " + " | ".join([*columns, f"time, of SetFit's ({shown})"]) + " |"
    lines = [header, "|---|---|---|---|---|"]
    for label, suffix in TEST_READS.items():
        gaps, shares = [], []
        for dataset in DATASETS:
            by_level, share = against_setfit(f"al-{dataset}-{suffix}")
            gaps += by_level.items()
            shares.append(f"{share:.0f} %")
        behind = [gap for _, gap in gaps if gap < 0]
        later = [gap for level, gap in gaps if level != LEVELS[0]]
        cells = [str(len(behind)), signed(min(behind)) if behind else "none", signed(sum(later) / len(later))]
        lines.append(f"| {label} | " + " | ".join([*cells, ", ".join(shares)]) + " |")
    return "\n".join(lines)


# Where it started: the paper's rounds (every round from the base, five dropout views, 3 passes, random acquisition),
# then rounds that continue from the last, against SetFit and the floor on the same rows.
PAPER_SCALE = "SupCon + CE (SCALe)"
FLOOR = "logistic regression, frozen base (floor)"


def warm_start_table() -> str:
    rows = [
        ((DATASETS[d], name), run, arm)
        for d in ("trec", "sst2")
        for name, run, arm in (
            (f"{PAPER_SCALE}, rounds from the base", f"al-{d}-references", SCALE),
            (f"{PAPER_SCALE}, `--warm-start`", f"al-test-{d}-warm", SCALE),
            ("SetFit at its own settings", f"al-{d}-references", SETFIT),
            (FLOOR, f"al-{d}-references", "logreg"),
        )
    ]
    return arm_table(("dataset", "arm"), rows, ("training s / round", "steps / round"))


# The dev splits: 500 (or 2,000) labelled training rows held out and scored instead of the test split. A set of
# defaults on them is {(dataset, rows held out): run}; SCALe's arm alone.
Split = tuple[str, int]
E10 = "al-dev-{}-warm-e10-v2"  # run names of the 500-row dev splits, by defaults
K = E10 + "-kmeans"
ONE_VIEW = K + "-per-class-warm10-base-e30-v1"
D5, D2000 = "al-dev-{}-kmeans-v1", "al-dev2000-{}-kmeans-v1"  # one view's defaults: SST-5's 500 rows, the 2,000s
TODAY_500, TODAY_2000 = ONE_VIEW + "-pairs0.5-x16", D2000 + "-pairs0.5-x16"
TWO, TREC, SST5, ALL = ("trec", "sst2"), ("trec",), ("sst5",), ("trec", "sst2", "sst5")


def on(template: str, datasets: tuple[str, ...] = TWO, rows: int = 500) -> dict[Split, str]:
    return {(dataset, rows): template.format(dataset) for dataset in datasets}


# Each set of defaults on the dev splits, in the order they were chosen; each came from the one before it by one
# change, and its name is the change.
DEFAULTS: dict[str, dict[Split, str]] = {
    "the paper's rounds": on("al-dev-{}-cold"),
    "rounds that continue": on("al-dev-{}-warm"),
    "10 passes, two views": on(E10),
    "k-means acquisition": on(K),
    "at least 50 steps": on(K + "-min50"),
    "a floor per class": {("trec", 500): K.format("trec") + "-min90", ("sst2", 500): K.format("sst2") + "-min30"},
    "the warm start's floor": on(K + "-per-class-warm10"),
    "30 passes from the base": on(K + "-per-class-warm10-base-e30"),
    "one view": on(ONE_VIEW + "-x1.5") | on(D5, SST5) | on(D2000, ALL, 2000),
    "pairs, 8 a step": on(ONE_VIEW + "-pairs0.5") | on(D2000 + "-pairs0.5", ALL, 2000),
    "16 pairs a step": on(TODAY_500) | on(TODAY_2000, ALL, 2000),
}
CHANGES = {  # what each set of defaults changed, as the command said it then
    "rounds that continue": "each round from the last round's model (`--warm-start`)",
    "10 passes, two views": "10 passes a round, dropout views 0.0 and 0.1 (`--epochs 10 --dropout-rates 0.0 0.1`)",
    "k-means acquisition": "the rows nearest k-means centres of the embeddings (`--acquisition kmeans`)",
    "at least 50 steps": "at least 50 steps a round (`--min-steps 50`)",
    "a floor per class": "at least 15 steps a round per class (`--min-steps-per-class 15`)",
    "the warm start's floor": "from the base until a round had 10 labels a class (`--warm-start-min-per-class 10`)",
    "30 passes from the base": "30 passes in a round from the base (`--from-base-epochs 30`)",
    "one view": "one view (0.1), 1.5 times the steps (`--dropout-rates 0.1 --epochs 15 --from-base-epochs 45 "
    "--min-steps-per-class 23`)",
    "pairs, 8 a step": "half of each round's steps on SetFit's pairs first (`--pair-share 0.5`)",
    "16 pairs a step": "those pairs 16 a step, in half the steps (`--pairs-per-step 16`)",
}


def held_out(splits) -> str:
    return ", ".join(f"{rows:,}" for rows in sorted({rows for _, rows in splits}))


def by_dataset(values: dict[Split, float], show) -> list[str]:
    """A cell per dataset: ``show`` of the mean over its splits, or "not run"."""
    cells = []
    for dataset in DATASETS:
        mine = [value for (d, _), value in values.items() if d == dataset]
        cells.append(show(mean(mine)) if mine else "not run")
    return cells


def choices() -> str:
    """Each choice: the mean of the four levels before → after it, on the dev splits both sets of defaults ran on
    (the mean over a dataset's splits where it has two), and the steps a round."""
    lines = [
        "| defaults | the change | held out | TREC-6 | SST-2 | SST-5 | steps / round, TREC-6 and SST-2 |",
        "|---|---|---|---|---|---|---|",
    ]
    names = list(DEFAULTS)
    for before, after in itertools.pairwise(names):
        splits = [split for split in DEFAULTS[after] if split in DEFAULTS[before]]
        found = {s: [summary(DEFAULTS[name][s]) for name in (before, after)] for s in splits}
        pairs = {s: (b[MEAN], a[MEAN]) for s, (b, a) in found.items()}
        cells = [by_dataset({s: p[i] for s, p in pairs.items()}, lambda v: f"{v:.2f}") for i in (0, 1)]  # before, after
        accuracy = [f"{b} → {a}" if b != "not run" else b for b, a in zip(*cells)]
        steps = ", ".join(
            " → ".join(f"{found[(d, 500)][i]['steps / round']:.0f}" for i in (0, 1)) for d in TWO if (d, 500) in found
        )
        lines.append(f"| {after} | {CHANGES[after]} | {held_out(splits)} | " + " | ".join([*accuracy, steps]) + " |")
    return "\n".join(lines)


# Tried on the dev splits and not chosen: (what, the option as the command had it at the commit, the defaults it was
# measured against, {split: the candidate's run}). A run's commit is the one that added it.
FEWER = "--min-steps-per-class 10 --from-base-epochs 30 --epochs 10"
TWICE = "twice the passes in a round that continues"
# fmt: off
TRIED: list[tuple[str, str, str, dict[Split, Held]]] = [
    ("SupCon's weight λ 0.5 (the paper's 0.9)", "--supcon-weight 0.5", "10 passes, two views",
     on(E10 + "-lambda0.5", TREC)),
    ("temperature τ 0.1 (the paper's 0.3)", "--temperature 0.1", "10 passes, two views", on(E10 + "-tau0.1", TREC)),
    ("the head's learning rate 1e-3", "--head-learning-rate 1e-3", "10 passes, two views",
     on(E10 + "-head1e-3", TREC)),
    ("the head's learning rate 3e-2", "--head-learning-rate 3e-2", "10 passes, two views", on(E10 + "-head3e-2")),
    ("entropy acquisition (the paper's)", "--acquisition entropy", "10 passes, two views", on(E10 + "-entropy", TREC)),
    ("entropy spread over the predicted classes", "--acquisition balanced-entropy", "10 passes, two views",
     on(E10 + "-balanced-entropy", TREC)),
    ("8 passes with the step floor", "--epochs 8", "at least 50 steps", on(K + "-min50-e8")),
    ("the head's learning rate 3e-2 with it", "--head-learning-rate 3e-2", "at least 50 steps",
     on(K + "-min50-head3e-2", TREC)),
    ("90 steps every round", "--epochs 1 --min-steps 90", "at least 50 steps", on(K + "-flat90")),
    ("a new softmax head each round", "--new-head", "at least 50 steps", on(K + "-min50-newhead", TREC)),
    ("logistic regression as the head, as SetFit predicts", "--refit-head", "at least 50 steps",
     on(K + "-min50-refithead")),
    ("every round from the base (the paper's)", "--no-warm-start", "a floor per class", on(K + "-per-class-cold")),
    ("one view at the same steps", "--dropout-rates 0.1", "30 passes from the base",
     on(K + "-per-class-warm10-base-e30-v1")),
    ("5 passes in a round that continues", "--epochs 5", "30 passes from the base",
     on(K + "-per-class-warm10-base-e30-e5")),
    ("fewer steps", "--min-steps-per-class 15 --from-base-epochs 35 --epochs 13", "one view", on(ONE_VIEW + "-fewer")),
    ("fewer steps where a round continues", "--min-steps-per-class 15 --epochs 10", "one view",
     on(ONE_VIEW + "-cont10", TREC)),
    ("label smoothing 0.1 on the head", "--label-smoothing 0.1", "one view", on(ONE_VIEW + "-ls0.1")),
    ("every round from the base (the paper's), 45 passes", "--no-warm-start", "one view", on(D5 + "-nowarm", SST5)),
    ("every round from the base at 15 passes", "--no-warm-start --from-base-epochs 15", "one view",
     on(ONE_VIEW + "-base15") | on(D5 + "-nowarm-base15", SST5) | on(D2000 + "-nowarm-base15", ALL, 2000)),
    ("a round that continues starts halfway back to the base", "--shrink-to-base 0.5", "one view",
     on(ONE_VIEW + "-shrink0.5") | on(D5 + "-shrink0.5", SST5)),
    ("token embeddings frozen at the base's", "--freeze-word-embeddings", "one view",
     on(ONE_VIEW + "-frozenwords") | on(D5 + "-frozenwords", SST5)),
    ("the rounds that would continue from the base, a new head", "--shrink-to-base 1 --new-head", "one view",
     on(ONE_VIEW + "-later-from-base") | on(D2000 + "-later-from-base", ALL, 2000)),
    ("the same, the last round's head", "--shrink-to-base 1", "one view",
     on(D2000 + "-later-from-base-last-head", ("sst2",), 2000)),
    (TWICE, "--epochs 30", "one view", on(D5 + "-e30", SST5)),
    ("logistic regression as the head", "--refit-head", "one view", on(D5 + "-refithead", SST5)),
    ("32 labelled rows a batch", "--batch-size 32", "one view", on(D5 + "-b32", SST5)),
    ("three quarters of the steps on pairs", "--pair-share 0.75", "pairs, 8 a step", on(ONE_VIEW + "-pairs0.75")),
    ("15 steps a class", "--min-steps-per-class 15", "16 pairs a step",
     on(TODAY_500 + "-floor15") | on(TODAY_2000 + "-floor15", TWO, 2000)),
    ("10 steps a class", "--min-steps-per-class 10", "16 pairs a step",
     on(TODAY_500 + "-floor10") | on(TODAY_2000 + "-floor10", ALL, 2000)),
    ("fewer steps", FEWER, "16 pairs a step", on(TODAY_500 + "-quarter")),
    ("fewer steps at lr 3e-5 (the paper's 2e-5)", f"{FEWER} --learning-rate 3e-5", "16 pairs a step",
     on(TODAY_500 + "-quarter-lr3e-5") | on(TODAY_2000 + "-quarter-lr3e-5", TWO, 2000)),
    ("the same, five seeds", f"{FEWER} --learning-rate 3e-5", "16 pairs a step",
     {(d, 2000): (TODAY_2000.format(d) + "-quarter-lr3e-5", TODAY_2000.format(d) + "-quarter-lr3e-5-seeds34")
      for d in TWO}),
    ("fewer steps at lr 5e-5", f"{FEWER} --learning-rate 5e-5", "16 pairs a step",
     on(TODAY_500 + "-quarter-lr5e-5") | on(TODAY_2000 + "-quarter-lr5e-5", TWO, 2000)),
    ("fewer steps at lr 1e-4", f"{FEWER} --learning-rate 1e-4", "16 pairs a step", on(TODAY_500 + "-quarter-lr1e-4")),
    ("fewer steps, the 5 % round's kept", "--min-steps-per-class 10 --epochs 5", "16 pairs a step",
     on(TODAY_500 + "-quarter-e5")),
    ("the embeddings and three of six layers frozen", "--frozen-layers 3", "16 pairs a step",
     on(TODAY_500 + "-frozen3")),
    (TWICE, "--epochs 30", "16 pairs a step", on(TODAY_2000 + "-e30", TWO, 2000)),
    ("logistic regression as the head", "--refit-head", "16 pairs a step",
     on(TODAY_2000 + "-refithead", ("sst2",), 2000)),
]
# fmt: on


def defaults_of(name: str, split: Split, candidate: Held) -> Held:
    """The runs of the defaults ``name`` on ``split``, with the seeds the candidate has: five-seed candidates are
    read against the defaults' seeds 3 and 4 too."""
    run = DEFAULTS[name][split]
    extra = [held for held in ((candidate,) if isinstance(candidate, str) else candidate) if held.endswith("-seeds34")]
    return (run, f"{run}-seeds34") if extra else run


def negative_results() -> str:
    """What was tried and not chosen: the mean of the four levels, the candidate − the defaults it was measured
    against, by dataset (the mean over its dev splits where it ran on two), its steps a round as a share of theirs,
    and the commits that added its runs."""
    columns = ["tried", "option, at its commit", "against", "held out", *DATASETS.values(), "steps, of the defaults'"]
    header = "| " + " | ".join([*columns, "commit"]) + " |"
    lines = [header, "|" + "---|" * (len(columns) + 1)]
    for what, option, against, candidate in TRIED:
        found = {s: (summary(defaults_of(against, s, run)), summary(run)) for s, run in candidate.items()}
        gaps = by_dataset({s: c[MEAN] - b[MEAN] for s, (b, c) in found.items()}, lambda v: signed(v, 2))
        steps = mean([c["steps / round"] / b["steps / round"] for b, c in found.values()])
        runs = [run for held in candidate.values() for run in ((held,) if isinstance(held, str) else held)]
        commits = ", ".join(dict.fromkeys(RESULTS[run]["commit"] for run in runs))
        cells = [what, f"`{option}`", against, held_out(candidate), *gaps, f"{steps:.2f}", commits]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def runs_table() -> str:
    """Each kept run, the commit that added it and its command (rerun at 799a0b0 with ``--output runs/RUN``)."""
    lines = ["| run | commit | command |", "|---|---|---|"]
    lines += [f"| {run} | {entry['commit']} | `{entry['command']}` |" for run, entry in RESULTS.items()]
    return "\n".join(lines)


DEV_2000_TODAY = {d: (TODAY_2000.format(d), TODAY_2000.format(d) + "-seeds34") for d in TWO}
TABLES = {
    "test-sixteen-pairs": final_table,
    "test-sixteen-pairs-against-setfit": functools.partial(differences, FINAL),
    "test-sixteen-pairs-by-seed-against-setfit": functools.partial(by_seed, FINAL),
    "dev-2000-sixteen-pairs-five-seeds-against-setfit": functools.partial(differences, DEV_2000_TODAY),
    "test-reads-against-setfit": test_reads,
    "test-warm-start": warm_start_table,
    "choices": choices,
    "negative-results": negative_results,
    "runs": runs_table,
}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv)


if __name__ == "__main__":
    main()
