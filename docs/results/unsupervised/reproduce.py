"""DeCLUTR against sentence-transformers' own unsupervised methods (SimCSE, TSDAE, Contrastive Tension) at equal
wall time: continued training of all-MiniLM-L6-v2 on the shared Wikipedia documents.

Every arm is its `st-contrastive` command (declutr, simcse, tsdae, ct) for --max-seconds 120 on 2 CPU cores, the
learning rate's warm-up and decay on the clock, at the method's published settings (batch, input length, τ); the
step caps below are far above what 120 s reach, so time alone stops each run. The learning rate is chosen on STS-B
dev (seed 42, table `dev`): the method's published rate or about a third of it. The chosen rate is then trained with seeds
43 and 44 as well, and the three models are scored once on STS-B test and SICK-R test (table `test`; seed 42's is the
dev run's saved model). A run whose folder is in --runs
(runs/unsupervised/<arm>-lr<rate>-seed<seed>) is read back, not trained again; results.json beside this file keeps
what the tables need.

Table `chain` is the pipeline the TSDAE paper and sentence-transformers recommend: each unsupervised model of
table `test` (seed s) as the first step, then the same supervised step, `st-contrastive supcon` (SupCon + CE on
SNLI at its defaults) for 100 steps with seed s, against that step from the shipped model alone; scored once on
STS-B test and SICK-R test.

    .venv/bin/python docs/results/unsupervised/reproduce.py {dev,test,chain} [--runs runs/unsupervised]

About 3.5 minutes a run (120 s of training, the rest loading, cutting sentences and evaluating); 2 a chain run.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the command line its scripts share
import results_script

SECONDS = 120
SEEDS = (42, 43, 44)
# arm -> (the row's name, the command and its options, the learning rates tried on dev: about a third of the
# published one, and the published one)
ARMS = {
    "declutr": (
        "DeCLUTR, contrastive-only (`make main`'s settings: 4 documents, spans ≤ 128 tokens)",
        ["declutr", "--batch-size", "4", "--max-span-length", "128", "--mlm-weight", "0", "--max-steps", "2000"],
        (2e-5, 5e-5),
    ),
    "simcse": ("SimCSE (MNRL on (s, s), batch 64, 32 tokens, τ 0.05)", ["simcse", "--max-steps", "2000"], (1e-5, 3e-5)),
    "tsdae": ("TSDAE (DenoisingAutoEncoderLoss, batch 8, 75 tokens)", ["tsdae", "--max-steps", "2000"], (1e-5, 3e-5)),
    "ct": ("CT, in-batch negatives (batch 128, 75 tokens)", ["ct", "--max-steps", "300"], (2e-5, 5e-5)),
}
DEV_TASKS, TEST_TASKS = ["stsb-dev"], ["stsb-test", "sick-test"]


def rates(arm: str) -> tuple[float, ...]:
    return ARMS[arm][2]


def run_name(arm: str, rate: float, seed: int) -> str:
    return f"{arm}-lr{rate:.0e}-seed{seed}"


def trained(name: str, runs: Path, tasks: list[str], base_eval: bool = True) -> dict:
    """One run's scores (× 100) after training on ``tasks`` (before too, where ``base_eval``), its steps, seconds
    and rows seen; trained first where its folder lacks results.json."""
    import json

    arm, rate, seed = name.split("-lr")[0], float(name.split("-lr")[1].split("-seed")[0]), int(name.split("seed")[1])
    output = runs / name
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main

        command = ARMS[arm][1]
        cli_main(
            [
                *command,
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


def chosen_rate(arm: str, dev: dict) -> float:
    """The learning rate with the best STS-B dev score after training (seed 42)."""
    return max(rates(arm), key=lambda rate: dev[run_name(arm, rate, 42)]["after"]["stsb-dev"])


def dev_runs(runs: Path) -> dict:
    names = [run_name(arm, rate, 42) for arm in ARMS for rate in rates(arm)]
    return results_script.kept(__file__, names, lambda name: trained(name, runs, DEV_TASKS))


def dev_table(runs: Path) -> str:
    dev = dev_runs(runs)
    base = next(iter(dev.values()))["before"]["stsb-dev"]
    lines = [
        "| arm | learning rate | STS-B dev | steps in 120 s | rows seen |",
        "|---|---|---|---|---|",
        f"| all-MiniLM-L6-v2 as shipped |  | {base:.2f} |  |  |",
    ]
    for arm, (label, _, _) in ARMS.items():
        best = chosen_rate(arm, dev)
        for rate in rates(arm):
            row = dev[run_name(arm, rate, 42)]
            mark = " (chosen)" if rate == best else ""
            lines.append(
                f"| {label} | {rate:.0e}{mark} | {row['after']['stsb-dev']:.2f} | {row['steps']:,} | {row['rows']:,} |"
            )
    return "\n".join(lines)


def mean_std(values: list[float], digits: int = 2) -> str:
    return f"{statistics.mean(values):,.{digits}f} ± {statistics.stdev(values):,.{digits}f}"


def on_test(name: str, runs: Path) -> dict:
    """A final run's test scores. The seed-42 run of the chosen rate is the dev run: its saved model is scored on
    the test tasks now (once). The other seeds are trained here, scored on the test tasks after training. The base
    (``name`` "base") is scored once, not by every run."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.evaluation import evaluate_model

    if name == "base":
        from st_contrastive.default_model import default_model

        scores = evaluate_model(SentenceTransformer(default_model()), TEST_TASKS)
        return {"after": {task: scores[task]["spearman"] for task in TEST_TASKS}}
    row = trained(name, runs, TEST_TASKS, base_eval=False)
    if set(row["after"]) != set(TEST_TASKS):
        scores = evaluate_model(SentenceTransformer(str(runs / name)), TEST_TASKS)
        row["after"] = {task: scores[task]["spearman"] for task in TEST_TASKS}
    return row


def test_table(runs: Path) -> str:
    dev = dev_runs(runs)
    names = {arm: [run_name(arm, chosen_rate(arm, dev), seed) for seed in SEEDS] for arm in ARMS}
    keys = ["test/base", *(f"test/{name}" for arm in ARMS for name in names[arm])]
    test = results_script.kept(__file__, keys, lambda key: on_test(key.removeprefix("test/"), runs))
    base = test["test/base"]["after"]
    lines = [
        "| arm (3 seeds, mean ± std) | learning rate | STS-B test | SICK-R test | steps | seconds | rows seen |",
        "|---|---|---|---|---|---|---|",
        f"| all-MiniLM-L6-v2 as shipped |  | {base['stsb-test']:.2f} | {base['sick-test']:.2f} |  |  |  |",
    ]
    for arm, (label, _, _) in ARMS.items():
        rows = [test[f"test/{name}"] for name in names[arm]]
        scores = [mean_std([row["after"][task] for row in rows]) for task in TEST_TASKS]
        amounts = [mean_std([float(row[key]) for row in rows], 0) for key in ("steps", "seconds", "rows")]
        lines.append(f"| {label} | {chosen_rate(arm, dev):.0e} | {' | '.join(scores)} | {' | '.join(amounts)} |")
    return "\n".join(lines)


SUPERVISED_STEPS = 100


def supervised(name: str, runs: Path) -> dict:
    """``name`` = FIRST-seedS: the supervised step from the first step's model (FIRST "none": the shipped model)."""
    import json

    first, seed = name.rsplit("-seed", 1)
    output = runs / "chain" / name
    if not (output / "results.json").exists():
        from st_contrastive.commands.cli import main as cli_main
        from st_contrastive.default_model import default_model

        dev = dev_runs(runs)
        model = default_model() if first == "none" else str(runs / run_name(first, chosen_rate(first, dev), int(seed)))
        cli_main(
            [
                *("supcon", "--model", model, "--max-steps", str(SUPERVISED_STEPS), "--seed", seed),
                *("--eval-tasks", *TEST_TASKS, "--no-base-eval", "--output", str(output), "--overwrite"),
            ]
        )
    results = json.loads((output / "results.json").read_text())
    return {"after": {task: results["after"][task]["spearman"] for task in TEST_TASKS}}


def chain_table(runs: Path) -> str:
    firsts = ["none", *ARMS]
    keys = [f"chain/{first}-seed{seed}" for first in firsts for seed in SEEDS]
    chained = results_script.kept(__file__, keys, lambda key: supervised(key.removeprefix("chain/"), runs))
    test = results_script.kept(__file__, ["test/base"], lambda key: on_test("base", runs))
    base = test["test/base"]["after"]
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


RUNS = "runs/unsupervised"
TABLES = {"dev": dev_table, "test": test_table, "chain": chain_table}


def main(argv: list[str] | None = None) -> None:
    results_script.run(__file__, __doc__.splitlines()[0], TABLES, argv, runs=RUNS)


if __name__ == "__main__":
    main()
