"""DeCLUTR against sentence-transformers' own unsupervised methods (SimCSE, TSDAE, Contrastive Tension) at equal
wall time, on the shared Wikipedia documents, from two starting points: all-MiniLM-L6-v2 (continued training, tables
`dev`, `test`, `transfer`, `chain`) and the small MLM base that `pretrain-mlm` builds (runs/mlm-base, tables
`mlm-dev`, `mlm-test`, `mlm-transfer`).

Every arm is its `st-contrastive` command (declutr, simcse, tsdae, ct) for --max-seconds 120 on 2 CPU cores, the
learning rate's warm-up and decay on the clock, at the method's published settings (batch, input length, τ); the
step caps below are far above what 120 s reach, so time alone stops each run. The learning rate is chosen on STS-B
dev (seed 42, tables `dev` and `mlm-dev`) from two: for all-MiniLM-L6-v2 the method's published rate and about a
third of it; for the MLM base, whose 1,900 steps of pretraining leave it far from any sentence embedding, the
published rate and about four times it. The chosen rate is then trained with seeds 43 and 44 as well, and the three
models are scored once on STS-B test and SICK-R test (tables `test`, `mlm-test`; seed 42's is the dev run's saved
model) and on the eight SentEval transfer tasks (`transfer`, `mlm-transfer`). A run whose folder is in --runs
(runs/unsupervised/<arm>-lr<rate>-seed<seed>, runs/unsupervised/mlm-base/... for the MLM base) is read back, not
trained again; results.json beside this file keeps what the tables need. The MLM base itself is built by
docs/results/mlm-bases/reproduce.py (into runs/mlm-base) when missing.

Table `chain` is the pipeline the TSDAE paper and sentence-transformers recommend: each unsupervised model of
table `test` (seed s) as the first step, then the same supervised step, `st-contrastive supcon` (SupCon + CE on
SNLI at its defaults) for 100 steps with seed s, against that step from the shipped model alone; scored once on
STS-B test and SICK-R test.

    .venv/bin/python docs/results/unsupervised/reproduce.py
        {dev,test,transfer,chain,mlm-dev,mlm-test,mlm-transfer} [--runs runs/unsupervised]

About 3.5 minutes a run (120 s of training, the rest loading, cutting sentences and evaluating); 2 a chain run.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

SECONDS = 120
SEEDS = (42, 43, 44)
# arm -> (the row's name, the command and its options)
ARMS = {
    "declutr": (
        "DeCLUTR, contrastive-only (`make main`'s settings: 4 documents, spans ≤ 128 tokens)",
        ["declutr", "--batch-size", "4", "--max-span-length", "128", "--mlm-weight", "0", "--max-steps", "2000"],
    ),
    "simcse": ("SimCSE (MNRL on (s, s), batch 64, 32 tokens, τ 0.05)", ["simcse", "--max-steps", "2000"]),
    "tsdae": ("TSDAE (DenoisingAutoEncoderLoss, batch 8, 75 tokens)", ["tsdae", "--max-steps", "2000"]),
    "ct": ("CT, in-batch negatives (batch 128, 75 tokens)", ["ct", "--max-steps", "300"]),
}
# starting point -> (its row's name, the learning rates each arm tries on dev). Its runs' names (the keys of
# results.json) start with "<starting point>/", except all-MiniLM-L6-v2's, which came first.
BASES = {
    "minilm": (
        "all-MiniLM-L6-v2 as shipped",
        {"declutr": (2e-5, 5e-5), "simcse": (1e-5, 3e-5), "tsdae": (1e-5, 3e-5), "ct": (2e-5, 5e-5)},
    ),
    "mlm-base": (
        "the MLM base as built (mean pooling)",
        {"declutr": (5e-5, 2e-4), "simcse": (3e-5, 1e-4), "tsdae": (3e-5, 1e-4), "ct": (5e-5, 2e-4)},
    ),
}
DEV_TASKS, TEST_TASKS = ["stsb-dev"], ["stsb-test", "sick-test"]
RUNS = Path("runs/unsupervised")  # the run folders, under the checkout
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


def rates(base: str, arm: str) -> tuple[float, ...]:
    return BASES[base][1][arm]


def run_name(base: str, arm: str, rate: float, seed: int) -> str:
    prefix = "" if base == "minilm" else f"{base}/"
    return f"{prefix}{arm}-lr{rate:.0e}-seed{seed}"


def starting_point(name: str) -> str:
    """The starting point of a kept name (a run's, or "<base>/base"): its prefix, all-MiniLM-L6-v2's names having none."""
    return name.rpartition("/")[0] or "minilm"


def base_model(base: str) -> str:
    """The starting point's model: the shipped all-MiniLM-L6-v2, or runs/mlm-base (pretrained first when missing,
    by the script that owns it)."""
    if base == "minilm":
        from st_contrastive.default_model import default_model

        return default_model()
    path = HERE.parent / "mlm-bases" / "reproduce.py"
    spec = importlib.util.spec_from_file_location("mlm_bases_reproduce", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.base(base, results_script.ROOT / "runs"))


def trained(name: str, runs: Path, tasks: list[str], base_eval: bool = True) -> dict:
    """One run's scores (× 100) after training on ``tasks`` (before too, where ``base_eval``), its steps, seconds
    and rows seen; trained first where its folder lacks results.json."""
    import json

    short = name.rpartition("/")[2]
    arm, rate, seed = short.split("-lr")[0], float(short.split("-lr")[1].split("-seed")[0]), int(short.split("seed")[1])
    output = runs / name
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        cli_main(
            [
                *ARMS[arm][1],
                *("--model", base_model(starting_point(name))),
                *("--learning-rate", str(rate), "--seed", str(seed), "--max-seconds", str(SECONDS)),
                *("--eval-tasks", *tasks, "--output", str(output), "--overwrite"),
                *([] if base_eval else ["--no-base-eval"]),
            ]
        )
    results = json.loads((output / "results.json").read_text())
    train, training = results["train"], results["config"]["training"]
    return {
        "before": {task: results["before"][task]["spearman"] for task in tasks if task in results["before"]},
        "after": {task: results["after"][task]["spearman"] for task in tasks if task in results["after"]},
        "steps": train["steps"],
        "seconds": train["seconds"],
        "rows": train["steps"] * training["batch_size"],
    }


def chosen_rate(base: str, arm: str, dev: dict) -> float:
    """The learning rate with the best STS-B dev score after training (seed 42)."""
    return max(rates(base, arm), key=lambda rate: dev[run_name(base, arm, rate, 42)]["after"]["stsb-dev"])


def dev_runs(runs: Path, base: str = "minilm") -> dict:
    names = [run_name(base, arm, rate, 42) for arm in ARMS for rate in rates(base, arm)]
    return results_script.kept(__file__, names, lambda name: trained(name, runs, DEV_TASKS))


def dev_table(runs: Path = RUNS, base: str = "minilm") -> str:
    dev = dev_runs(runs, base)
    before = next(iter(dev.values()))["before"]["stsb-dev"]
    lines = [
        "| arm | learning rate | STS-B dev | steps in 120 s | rows seen |",
        "|---|---|---|---|---|",
        f"| {BASES[base][0]} |  | {before:.2f} |  |  |",
    ]
    for arm, (label, _) in ARMS.items():
        best = chosen_rate(base, arm, dev)
        for rate in rates(base, arm):
            row = dev[run_name(base, arm, rate, 42)]
            mark = " (chosen)" if rate == best else ""
            lines.append(
                f"| {label} | {rate:.0e}{mark} | {row['after']['stsb-dev']:.2f} | {row['steps']:,} | {row['rows']:,} |"
            )
    return "\n".join(lines)


def mean_std(values: list[float], digits: int = 2) -> str:
    return f"{statistics.mean(values):,.{digits}f} ± {statistics.stdev(values):,.{digits}f}"


def base_key(base: str) -> str:
    """The name the starting point's own scores are kept under (all-MiniLM-L6-v2's came first: "base")."""
    return "base" if base == "minilm" else f"{base}/base"


def final_names(runs: Path, base: str) -> dict[str, list[str]]:
    """Each arm's three final runs: the chosen rate, every seed."""
    dev = dev_runs(runs, base)
    return {arm: [run_name(base, arm, chosen_rate(base, arm, dev), seed) for seed in SEEDS] for arm in ARMS}


def on_test(name: str, runs: Path) -> dict:
    """A final run's test scores. The seed-42 run of the chosen rate is the dev run: its saved model is scored on
    the test tasks now (once). The other seeds are trained here, scored on the test tasks after training. The
    starting point (``name`` "base" or "<base>/base") is scored once, not by every run."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import evaluate_model

    if name.endswith("base"):
        model = SentenceTransformer(base_model(starting_point(name)))
        scores = evaluate_model(model, TEST_TASKS)
        return {"after": {task: scores[task]["spearman"] for task in TEST_TASKS}}
    row = trained(name, runs, TEST_TASKS, base_eval=False)
    if set(row["after"]) != set(TEST_TASKS):
        scores = evaluate_model(SentenceTransformer(str(runs / name)), TEST_TASKS)
        row["after"] = {task: scores[task]["spearman"] for task in TEST_TASKS}
    return row


def test_runs(runs: Path, base: str) -> dict:
    names = final_names(runs, base)
    keys = [f"test/{base_key(base)}", *(f"test/{name}" for arm in ARMS for name in names[arm])]
    return results_script.kept(__file__, keys, lambda key: on_test(key.removeprefix("test/"), runs))


def test_table(runs: Path = RUNS, base: str = "minilm") -> str:
    dev, names, test = dev_runs(runs, base), final_names(runs, base), test_runs(runs, base)
    start = test[f"test/{base_key(base)}"]["after"]
    lines = [
        "| arm (3 seeds, mean ± std) | learning rate | STS-B test | SICK-R test | steps | seconds | rows seen |",
        "|---|---|---|---|---|---|---|",
        f"| {BASES[base][0]} |  | {start['stsb-test']:.2f} | {start['sick-test']:.2f} |  |  |  |",
    ]
    for arm, (label, _) in ARMS.items():
        rows = [test[f"test/{name}"] for name in names[arm]]
        scores = [mean_std([row["after"][task] for row in rows]) for task in TEST_TASKS]
        amounts = [mean_std([float(row[key]) for row in rows], 0) for key in ("steps", "seconds", "rows")]
        lines.append(f"| {label} | {chosen_rate(base, arm, dev):.0e} | {' | '.join(scores)} | {' | '.join(amounts)} |")
    return "\n".join(lines)


# Rows of each transfer task (of each split, where it has them) that the models are scored on: the same seeded
# random subset for every model. The full tasks are 74,000 sentences a model, which for 26 models on 2 cores cost
# more than all of this comparison's training (docs/declutr.md).
TRANSFER_ROWS = 2000


def on_transfer(name: str, runs: Path) -> dict:
    """A final model's (or the starting point's) accuracy on the eight transfer tasks, SentEval's protocol on
    ``TRANSFER_ROWS`` rows of each."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import evaluate_model

    if name.endswith("base"):
        path = base_model(starting_point(name))
    else:
        test_runs(runs, starting_point(name))  # trained and scored on the test sets first
        path = str(runs / name)
    scores = evaluate_model(SentenceTransformer(path), list(TRANSFER), max_rows=TRANSFER_ROWS)
    return {task: scores[task]["accuracy"] for task in TRANSFER}


def transfer_table(runs: Path = RUNS, base: str = "minilm") -> str:
    names = final_names(runs, base)
    keys = [f"transfer/{base_key(base)}", *(f"transfer/{name}" for arm in ARMS for name in names[arm])]
    scored = results_script.kept(__file__, keys, lambda key: on_transfer(key.removeprefix("transfer/"), runs))
    lines = [
        f"| arm (3 seeds, mean ± std) | {' | '.join(TRANSFER.values())} | average |",
        "|---" * (len(TRANSFER) + 2) + "|",
    ]
    start = scored[f"transfer/{base_key(base)}"]
    cells = [f"{start[task]:.1f}" for task in TRANSFER]
    lines.append(f"| {BASES[base][0]} | {' | '.join(cells)} | {statistics.mean(start.values()):.2f} |")
    for arm, (label, _) in ARMS.items():
        rows = [scored[f"transfer/{name}"] for name in names[arm]]
        cells = [results_script.mean_std([row[task] for row in rows]) for task in TRANSFER]
        average = mean_std([statistics.mean(row.values()) for row in rows])
        lines.append(f"| {label.split(' (')[0]} | {' | '.join(cells)} | {average} |")
    return "\n".join(lines)


SUPERVISED_STEPS = 100


def supervised(name: str, runs: Path) -> dict:
    """``name`` = FIRST-seedS: the supervised step from the first step's model (FIRST "none": the shipped model)."""
    import json

    first, seed = name.rsplit("-seed", 1)
    output = runs / "chain" / name
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        dev = dev_runs(runs)
        start = base_model("minilm")
        model = (
            start
            if first == "none"
            else str(runs / run_name("minilm", first, chosen_rate("minilm", first, dev), int(seed)))
        )
        cli_main(
            [
                *("supcon", "--model", model, "--max-steps", str(SUPERVISED_STEPS), "--seed", seed),
                *("--eval-tasks", *TEST_TASKS, "--no-base-eval", "--output", str(output), "--overwrite"),
            ]
        )
    results = json.loads((output / "results.json").read_text())
    return {"after": {task: results["after"][task]["spearman"] for task in TEST_TASKS}}


def chain_table(runs: Path = RUNS) -> str:
    firsts = ["none", *ARMS]
    keys = [f"chain/{first}-seed{seed}" for first in firsts for seed in SEEDS]
    chained = results_script.kept(__file__, keys, lambda key: supervised(key.removeprefix("chain/"), runs))
    base = test_runs(runs, "minilm")["test/base"]["after"]
    lines = [
        f"| first step, then SupCon + CE on SNLI for {SUPERVISED_STEPS} steps (3 seeds) | STS-B test | SICK-R test |",
        "|---|---|---|",
        f"| neither: all-MiniLM-L6-v2 as shipped | {base['stsb-test']:.2f} | {base['sick-test']:.2f} |",
    ]
    for first in firsts:
        rows = [chained[f"chain/{first}-seed{seed}"] for seed in SEEDS]
        label = "none: the supervised step alone" if first == "none" else ARMS[first][0].split(" (")[0]
        scores = [mean_std([row["after"][task] for row in rows]) for task in TEST_TASKS]
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


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=str(RUNS))


if __name__ == "__main__":
    main()
