"""Multi-view with frozen pre-trained vectors: the paper's three arms and their untrained controls, per seed.

Each arm is `st-contrastive multiview --word-vectors spacy:en_core_web_md` at 200 steps (where STS-B dev flattened
in the 400-step curves of docs/multiview.md), scored on the paper's transfer tasks, SICK-R and SICK cosine; the
control is the same command with --max-steps 0. A run already in --runs (runs/mv-wv/<arm>-seed<S>) is read back,
not trained again.

    .venv/bin/python docs/results/multiview-wv/reproduce.py [--seeds 1 2 3] [--vocab-size N --runs DIR --out DIR]

Writes results.json and table.md beside this file, or into --out (about 20 minutes a seed on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/results: the helpers its scripts share
from results_script import mean_std

ARMS = {"seq,seq": "SEQ, SEQ (QuickThought)", "dep,seq": "DEP, SEQ", "dep,const": "DEP, CONST"}
TRANSFER = ["mr", "cr", "subj", "mpqa", "trec", "mrpc"]
STEPS = "200"
COMMAND = [
    "multiview",
    "--word-vectors",
    "spacy:en_core_web_md",
    "--max-steps",
    STEPS,
    "--eval-steps",
    "50",
    "--eval-max-rows",
    "2000",
    "--eval-folds",
    "5",
]
HERE = Path(__file__).resolve().parent


def run(views: str, trained: bool, seed: int, runs: Path, vocab_size: int) -> dict:
    """One run's scores (× 100), loss, training seconds and wall seconds (training, evaluation and loading)."""
    from st_contrastive.commands.cli import main as cli_main

    output = runs / f"{'' if trained else 'random-'}{views.replace(',', '-')}-seed{seed}"
    wall = output / "wall_seconds.txt"
    if not (output / "results.json").exists():
        start = time.perf_counter()
        cli_main(
            [
                *COMMAND,
                "--views",
                views,
                "--vocab-size",
                str(vocab_size),
                "--seed",
                str(seed),
                "--output",
                str(output),
                "--overwrite",
                *([] if trained else ["--max-steps", "0"]),
            ]
        )
        wall.write_text(f"{time.perf_counter() - start:.1f}\n")
    results = json.loads((output / "results.json").read_text())
    after = results["after"]
    row = {task: after[task]["accuracy"] for task in TRANSFER}
    row["transfer"] = statistics.mean(row[task] for task in TRANSFER)
    row["sick-r"] = after["sick-r"]["pearson"]
    row["sick-cos"] = after["sick-test"]["spearman"]
    row["train_seconds"] = results.get("train", {}).get("seconds", 0.0)
    row["wall_seconds"] = float(wall.read_text()) if wall.exists() else None
    row["loss"] = results.get("train", {}).get("last_log", {}).get("loss")
    row["dev_curve"] = results.get("eval_curves", {}).get("sts-b-dev", [])
    return row


def unknown_rate(output: Path, parse_cache: Path) -> float:
    """Share (%) of the evaluation sentences' tokens that the run's vocabulary maps to [UNK]."""
    import gzip

    from st_contrastive.models.multiview.vocabulary import Vocabulary

    vocabulary = Vocabulary.load(output)
    ids: list[int] = []
    for path in parse_cache.glob("evaluation-*.jsonl.gz"):
        with gzip.open(path, "rt") as lines:
            ids += [i for line in lines for i in vocabulary.encode(json.loads(line)["tokens"])]
    return 100 * ids.count(1) / len(ids)


COLUMNS = {
    **{task: task.upper() for task in TRANSFER},
    "transfer": "transfer avg",
    "sick-r": "SICK-R r",
    "sick-cos": "SICK cos ρ",
}


def table(rows: dict) -> str:
    lines = [
        "| arm | " + " | ".join(COLUMNS.values()) + " | loss | train s | wall s |",
        "|---|" + "---|" * (len(COLUMNS) + 3),
    ]
    for (views, trained), seeds in rows.items():
        name = ARMS[views] if trained else f"random {ARMS[views].split(' (')[0]}"
        values = list(seeds.values())
        loss = mean_std([v["loss"] for v in values], digits=2) if trained else ""
        lines.append(
            f"| {name} | "
            + " | ".join(mean_std([v[c] for v in values]) for c in COLUMNS)
            + f" | {loss} | {statistics.mean(v['train_seconds'] for v in values):.0f}"
            + f" | {statistics.mean(v['wall_seconds'] or 0 for v in values):.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=50000,
        help="words with a vector; 700000 keeps all 684,830 keys of en_core_web_md's table",
    )
    parser.add_argument("--runs", default="runs/mv-wv")
    parser.add_argument("--out", type=Path, default=HERE, help="where results.json and table.md go")
    args = parser.parse_args(argv)
    rows: dict = {}
    for seed in args.seeds:  # seed by seed, so a stopped run leaves whole seeds behind
        for trained in (True, False):
            for views in ARMS:
                row = run(views, trained, seed, Path(args.runs), args.vocab_size)
                rows.setdefault((views, trained), {})[seed] = row
    first = Path(args.runs) / f"dep-seq-seed{args.seeds[0]}"
    args.out.mkdir(parents=True, exist_ok=True)
    runs = {f"{'' if trained else 'random-'}{views}": seeds for (views, trained), seeds in rows.items()}
    (args.out / "results.json").write_text(
        json.dumps(
            {
                "command": [*COMMAND, "--vocab-size", str(args.vocab_size)],
                "unknown_tokens_percent": unknown_rate(first, Path("runs/parsed")),
                "runs": runs,
            },
            indent=2,
        )
        + "\n"
    )
    (args.out / "table.md").write_text(table(rows) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
