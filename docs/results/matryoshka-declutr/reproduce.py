"""make main's DeCLUTR with and without --matryoshka-dims 384 128 64, per seed: STS at each size, time per step.

The run without the modifier is scored truncated too (the model loaded with truncate_dim), and the base model at
each size is the floor. A seed whose runs are already in runs/mat-<arm>-<seed> is read back, not trained again.

    .venv/bin/python docs/results/matryoshka-declutr/reproduce.py [--seeds 42 43 44]

Writes results.json and table.md beside this file (about 11 minutes a seed on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

DIMS = ["384", "128", "64"]
TASKS = ["stsb-dev", "stsb-test", "sick-test"]
COMMAND = [
    "declutr",
    "--max-steps",
    "150",
    "--batch-size",
    "4",
    "--max-span-length",
    "128",
    "--mlm-weight",
    "0",
    "--eval-tasks",
    *TASKS,
]
HERE = Path(__file__).resolve().parent


def spearman(scores: dict) -> dict:
    return {task: scores[task]["spearman"] for task in TASKS}


def truncated(output: Path) -> dict:
    """The run's model loaded with truncate_dim at each smaller size, scored (written once to truncated.json)."""
    path = output / "truncated.json"
    if not path.exists():
        from sentence_transformers import SentenceTransformer

        from st_contrastive.evaluation import evaluate_model

        path.write_text(
            json.dumps(
                {
                    dim: spearman(
                        evaluate_model(
                            SentenceTransformer(str(output), device="cpu", truncate_dim=int(dim)),
                            TASKS,
                            show_progress=False,
                        )
                    )
                    for dim in DIMS[1:]
                }
            )
        )
    return json.loads(path.read_text())


def one_seed(seed: int, runs: Path) -> dict:
    from st_contrastive.commands.cli import main as cli_main

    rows = {}
    for arm in ("plain", "matryoshka"):
        output = runs / f"mat-{arm}-{seed}"
        if not (output / "results.json").exists():
            cli_main(
                [
                    *COMMAND,
                    "--seed",
                    str(seed),
                    *(["--matryoshka-dims", *DIMS] if arm == "matryoshka" else []),
                    "--output",
                    str(output),
                    "--overwrite",
                ]
            )
        results = json.loads((output / "results.json").read_text())
        sizes = (
            {dim: spearman(results["by_dimension"]["after"][dim]) for dim in DIMS[1:]}
            if arm == "matryoshka"
            else truncated(output)
        )
        rows[arm] = {
            "384": spearman(results["after"]),
            **sizes,
            "seconds_per_step": results["train"]["seconds"] / results["train"]["steps"],
        }
        if arm == "matryoshka":
            rows["base"] = {
                "384": spearman(results["before"]),
                **{dim: spearman(results["by_dimension"]["before"][dim]) for dim in DIMS[1:]},
            }
    return rows


def cell(values: list[float]) -> str:
    """mean ± sample std; the mean alone where the std rounds to 0.00 (the untrained base, equal to float noise)."""
    if len(values) == 1 or statistics.stdev(values) < 0.005:
        return f"{statistics.mean(values):.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def table(seeds: dict) -> str:
    """The table as docs/loss-modifiers.md shows it."""
    rows = [
        ("base, not trained (the floor)", "base", "384"),
        ("base, not trained", "base", "128"),
        ("base, not trained", "base", "64"),
        ("DeCLUTR", "plain", "384"),
        *(("DeCLUTR + Matryoshka", "matryoshka", dim) for dim in DIMS),
        *(("DeCLUTR (no modifier), truncated", "plain", dim) for dim in DIMS[1:]),
    ]
    lines = ["| model | size | STS-B dev | STS-B test | SICK-R test | s / step |", "|---|---|---|---|---|---|"]
    for name, arm, dim in rows:
        values = [seeds[s][arm][dim] for s in seeds]
        step = cell([seeds[s][arm]["seconds_per_step"] for s in seeds]) if arm != "base" and dim == "384" else ""
        lines.append(f"| {name} | {dim} | " + " | ".join(cell([v[t] for v in values]) for t in TASKS) + f" | {step} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    parser.add_argument("--runs", default="runs")
    args = parser.parse_args(argv)
    seeds = {seed: one_seed(seed, Path(args.runs)) for seed in args.seeds}
    (HERE / "results.json").write_text(json.dumps({"command": COMMAND, "seeds": seeds}, indent=2) + "\n")
    (HERE / "table.md").write_text(table(seeds) + "\n")
    print(table(seeds))


if __name__ == "__main__":
    main()
