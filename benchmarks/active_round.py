"""Where an active-learning round's time goes: training the round's model against scoring the pool to acquire.

Runs SCALe (SupCon + CE, entropy acquisition) on TREC-6 for a few rounds from 1 % of a 1,500-question pool, and
reports the mean share of each round spent acquiring; acquisition should stay a small part of a round.

    python benchmarks/active_round.py [--model PATH] [--rounds 2] [--pool-size 1500]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--rounds", type=int, default=2, help="acquisition rounds after the initial one")
    parser.add_argument("--pool-size", type=int, default=1500, help="TREC training questions in the pool")
    parser.add_argument("--acquisition", default="entropy", help="acquisition function")
    parser.add_argument("--output", default="benchmarks/results/active_round.json", help="JSON results path")
    args = parser.parse_args(argv)
    from st_contrastive.active.loop import run_active_learning
    from st_contrastive.active.settings import ActiveLearningConfig

    with tempfile.TemporaryDirectory() as folder:
        config = ActiveLearningConfig(
            dataset="trec",
            model=args.model,
            acquisitions=[args.acquisition],
            num_seeds=1,
            initial=0.01,
            step=0.01,
            budget=0.01 * (args.rounds + 1),
            pool_size=args.pool_size,
            test_size=500,
            output=folder,
        )
        rows = run_active_learning(config, progress=False)
    acquired = [r for r in rows if r.get("acquire_seconds")]
    shares = [r["acquire_seconds"] / (r["acquire_seconds"] + r["train_seconds"]) for r in acquired]
    summary = {
        "model": args.model or "all-MiniLM-L6-v2",
        "acquisition": args.acquisition,
        "pool": args.pool_size,
        "rounds": [{k: r.get(k) for k in ("round", "labelled", "train_seconds", "acquire_seconds")} for r in rows],
        "acquisition_share_of_round": statistics.mean(shares) if shares else 0.0,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    for r in summary["rounds"]:
        print(
            f"round {r['round']}: {r['labelled']} labelled, training {r['train_seconds']:.1f}s, "
            f"acquisition {r['acquire_seconds']:.1f}s"
        )
    print(f"acquisition share of a round (acquire / (acquire + train)): {summary['acquisition_share_of_round']:.1%}")
    return summary


if __name__ == "__main__":
    main()
