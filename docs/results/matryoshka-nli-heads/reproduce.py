"""SupCon + CE inside MatryoshkaLoss: the head's CE at full size only, or a head of its own per size, per seed.

Both arms train `st-contrastive supcon` with --matryoshka-dims 384 128 64 on the same SNLI pairs (the shared
snli-test file: the shared data has no SNLI train split, and snli-dev is kept for the choice), the heads at a
learning rate of their own. They are compared on the dev split only: STS-B dev Spearman at each size (the command's
own evaluation) and SNLI dev accuracy of each head there is (2,000 pairs). A seed whose runs are already in
runs/matryoshka-nli-heads/<arm>-<seed> is read back, not trained again.

    .venv/bin/python docs/results/matryoshka-nli-heads/reproduce.py [--seeds 42] [--max-rows 2000]
                                                                     [--head-learning-rate 1e-2]

Writes results.json and table.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

DIMS = ["384", "128", "64"]
ARMS = {"full": "CE at full size only", "per-size": "a head per size"}
NLI_DEV_PAIRS = 2000
HERE = Path(__file__).resolve().parent


def command(max_rows: int, head_learning_rate: float) -> list[str]:
    return [
        "supcon",
        "--dataset",
        "snli-test",
        "--max-rows",
        str(max_rows),
        "--matryoshka-dims",
        *DIMS,
        "--head-learning-rate",
        str(head_learning_rate),
        "--eval-tasks",
        "stsb-dev",
        "--no-base-eval",
    ]


def nli_dev_accuracy(output: Path) -> dict:
    """SNLI dev accuracy (%) of each head the run saved, on embeddings truncated to the head's size."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.data import load_nli
    from st_contrastive.models import load_nli_classifier

    pairs = load_nli("snli-dev", max_rows=NLI_DEV_PAIRS)
    model = SentenceTransformer(str(output), device="cpu")
    u, v = (model.encode(pairs[column], convert_to_tensor=True) for column in ("premise", "hypothesis"))
    accuracy = {}
    for dim in DIMS:
        folder = output / ("nli_head" if dim == DIMS[0] else f"nli_head-{dim}")
        if folder.exists():
            head = load_nli_classifier(folder)
            predicted = head.predict(u[:, : int(dim)], v[:, : int(dim)])
            accuracy[dim] = 100 * sum(head.labels[g] == p for g, p in zip(pairs["label"], predicted)) / len(pairs)
    return accuracy


def one_seed(seed: int, args) -> dict:
    from st_contrastive.commands.cli import main as cli_main

    rows = {}
    for arm in ARMS:
        output = Path(args.runs) / f"{arm}-{seed}"
        if not (output / "results.json").exists():
            cli_main(
                [
                    *command(args.max_rows, args.head_learning_rate),
                    "--matryoshka-heads",
                    arm,
                    "--seed",
                    str(seed),
                    "--output",
                    str(output),
                    "--overwrite",
                ]
            )
        results = json.loads((output / "results.json").read_text())
        by_dimension = results["by_dimension"]["after"]
        rows[arm] = {
            "stsb_dev": {
                DIMS[0]: results["after"]["stsb-dev"]["spearman"],
                **{dim: by_dimension[dim]["stsb-dev"]["spearman"] for dim in DIMS[1:]},
            },
            "snli_dev_accuracy": nli_dev_accuracy(output),
            "seconds_per_step": results["train"]["seconds"] / results["train"]["steps"],
        }
    return rows


def cell(values: list[float]) -> str:
    if not values:
        return "no head"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def table(seeds: dict) -> str:
    lines = [
        "| CE term | "
        + " | ".join(f"STS-B dev {d}" for d in DIMS)
        + " | "
        + " | ".join(f"SNLI dev acc. {d}" for d in DIMS)
        + " | s / step |",
        "|---|" + "---|" * 7,
    ]
    for arm, name in ARMS.items():
        rows = [seeds[s][arm] for s in seeds]
        sts = [cell([r["stsb_dev"][d] for r in rows]) for d in DIMS]
        nli = [cell([r["snli_dev_accuracy"][d] for r in rows if d in r["snli_dev_accuracy"]]) for d in DIMS]
        lines.append(f"| {name} | " + " | ".join(sts + nli) + f" | {cell([r['seconds_per_step'] for r in rows])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[42])
    parser.add_argument("--max-rows", type=int, default=2000, help="SNLI pairs to train on")
    parser.add_argument("--head-learning-rate", type=float, default=1e-2)
    parser.add_argument("--runs", default="runs/matryoshka-nli-heads")
    args = parser.parse_args(argv)
    seeds = {seed: one_seed(seed, args) for seed in args.seeds}
    (HERE / "results.json").write_text(
        json.dumps({"command": command(args.max_rows, args.head_learning_rate), "seeds": seeds}, indent=2) + "\n"
    )
    (HERE / "table.md").write_text(table(seeds) + "\n")
    print(table(seeds))


if __name__ == "__main__":
    main()
