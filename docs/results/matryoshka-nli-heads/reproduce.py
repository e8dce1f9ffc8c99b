"""The NLI head inside MatryoshkaLoss: its CE at full size only, or a head per size. Chosen on SNLI dev.

Each arm is the supcon command with --matryoshka-dims 384 128 64 on SNLI test pairs (SNLI dev is held out), per
seed; then STS-B dev at each size (from the run's results.json) and the saved heads' accuracy on SNLI dev pairs,
each head reading the embeddings truncated to its size, as a user loads them (truncate_dim).

    .venv/bin/python docs/results/matryoshka-nli-heads/reproduce.py [--seeds 42 43 44] [--max-rows 6000]

Writes results.json and table.md beside this file; the runs go to runs/nli-heads/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

DIMS = [384, 128, 64]
ARMS = ("full", "per-size")
HERE = Path(__file__).resolve().parent


def head_accuracy(model_dir: Path, head_dir: Path, dim: int, pairs) -> float:
    """Accuracy (%) of a saved head on the pairs, reading the model's embeddings truncated to ``dim``."""
    from sentence_transformers import SentenceTransformer

    from st_contrastive.models import load_nli_classifier, predict_nli

    model = SentenceTransformer(str(model_dir), device="cpu", truncate_dim=dim)
    head = load_nli_classifier(head_dir)
    predicted = predict_nli(model, head, pairs["premise"], pairs["hypothesis"])
    return 100 * statistics.mean(head.labels.index(p) == gold for p, gold in zip(predicted, pairs["label"]))


def one_run(arm: str, seed: int, args, dev) -> dict:
    from st_contrastive.cli import main as cli_main

    output = Path(args.runs) / f"{arm}-{seed}"
    start = time.perf_counter()
    cli_main(["supcon", "--dataset", "snli-test", "--max-rows", str(args.max_rows), "--matryoshka-dims",
              *map(str, DIMS), "--matryoshka-heads", arm, "--eval-tasks", "stsb-dev", "--no-base-eval", "--seed",
              str(seed), "--output", str(output), "--overwrite"])
    wall = time.perf_counter() - start
    results = json.loads((output / "results.json").read_text())
    sts = {str(DIMS[0]): results["after"]["stsb-dev"]["spearman"],
           **{size: scores["stsb-dev"]["spearman"] for size, scores in results["by_dimension"]["after"].items()}}
    heads = {str(DIMS[0]): output / "nli_head", **{str(d): output / f"nli_head-{d}" for d in DIMS[1:]}}
    nli = {size: head_accuracy(output, path, int(size), dev) for size, path in heads.items() if path.exists()}
    return {"arm": arm, "seed": seed, "wall_s": round(wall, 1), "stsb_dev": sts, "snli_dev_accuracy": nli}


def mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def table(runs: list[dict]) -> str:
    lines = ["| heads | size | STS-B dev | SNLI dev accuracy (its head) | wall s / run |", "|---|---|---|---|---|"]
    for arm in ARMS:
        mine = [r for r in runs if r["arm"] == arm]
        for size in map(str, DIMS):
            nli = [r["snli_dev_accuracy"][size] for r in mine if size in r["snli_dev_accuracy"]]
            wall = mean_std([r["wall_s"] for r in mine]) if size == str(DIMS[0]) else ""
            lines.append(f"| {arm} | {size} | {mean_std([r['stsb_dev'][size] for r in mine])} | "
                         f"{mean_std(nli) if nli else 'no head'} | {wall} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    parser.add_argument("--max-rows", type=int, default=6000, help="SNLI test pairs to train on")
    parser.add_argument("--dev-rows", type=int, default=3000, help="SNLI dev pairs to score the heads on")
    parser.add_argument("--runs", default="runs/nli-heads")
    args = parser.parse_args(argv)
    from st_contrastive.data import load_nli

    dev = load_nli("snli-dev", max_rows=args.dev_rows)
    runs = []
    for seed in args.seeds:
        for arm in ARMS:
            runs.append(one_run(arm, seed, args, dev))
            print(json.dumps(runs[-1]), flush=True)
    (HERE / "results.json").write_text(json.dumps({"settings": vars(args), "runs": runs}, indent=2) + "\n")
    (HERE / "table.md").write_text(table(runs) + "\n")
    print(table(runs))


if __name__ == "__main__":
    main()
