"""A SCALe round's seconds at today's defaults, the first half of its budget on SetFit's pairs (``--pair-share 0.5``,
16 pairs a step: the texts of a batch of 16 in half the steps), against SupCon + CE alone (``--pair-share 0``), on the
same labelled rows and the same step budget, alternating in one process.

Each repeat trains one round from the base model of each kind on the first ``--labelled`` training rows of the
dataset for a budget of ``--steps`` steps (the defaults otherwise) and times the trainer's loops alone (no model
loading). Prints each kind's median seconds a round and its ratio to SupCon + CE alone. (The frozen encoder layers
and 8 pairs a step it also timed are no longer options: commit 799a0b0 has them.)

    python benchmarks/round_step.py [--dataset trec] [--labelled 75] [--steps 60] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

BASELINE = "SupCon + CE alone"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="trec", help="trec, sst2 or sst5")
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--labelled", type=int, default=75, help="labelled training rows (the first ones)")
    parser.add_argument("--steps", type=int, default=60, help="optimisation steps a round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of each kind, alternating")
    parser.add_argument("--output", default="benchmarks/results/round_step.json", help="JSON results")
    args = parser.parse_args(argv)
    from st_contrastive.config.scale import RoundTraining
    from st_contrastive.data.text_classification import load_text_classification
    from st_contrastive.default_model import default_model
    from st_contrastive.scale.round_training import train_round

    data = load_text_classification(args.dataset)
    texts, labels = data.train_texts[: args.labelled], data.train_labels[: args.labelled]
    kinds = {
        BASELINE: RoundTraining(pair_share=0),
        "half on SetFit's pairs, 16 a step": RoundTraining(pair_share=0.5),
    }
    seconds = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as folder:

        def round_of(training: RoundTraining, seed: int, steps: int):
            model = args.model or default_model()
            checkpoints = Path(folder) / "checkpoints"
            return train_round("supcon-ce", model, texts, labels, data.label_names, training, checkpoints, seed, steps)

        round_of(kinds[BASELINE], seed=0, steps=4)  # untimed: the process's one-off costs fall on no kind
        for repeat in range(args.repeats):
            order = list(kinds)[repeat % len(kinds) :] + list(kinds)[: repeat % len(kinds)]  # none always first
            for kind in order:
                model = round_of(kinds[kind], seed=repeat, steps=args.steps)
                seconds[kind].append(model.optimisation_seconds)
    median = {kind: statistics.median(values) for kind, values in seconds.items()}
    summary = {
        "dataset": args.dataset,
        "labelled": args.labelled,
        "steps": args.steps,
        "seconds_per_round": seconds,
        "over_supcon_ce_alone": {kind: value / median[BASELINE] for kind, value in median.items() if kind != BASELINE},
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    for kind, value in median.items():
        ratio = f", {value / median[BASELINE]:.2f} of {BASELINE}'s" if kind != BASELINE else ""
        print(f"{kind}: {value:.1f} s a round{ratio} (median of {args.repeats} rounds of {args.steps} steps' budget)")
    print(f"({args.dataset}, the first {args.labelled} training rows)")
    return summary


if __name__ == "__main__":
    main()
