"""A SCALe round's training with the encoder's token embeddings frozen (``--freeze-word-embeddings``) against every
weight trained, on the same labelled rows, alternating in one process.

Each repeat trains one round from the base model of each kind on the first ``--labelled`` training rows of the
dataset for ``--steps`` steps (today's defaults otherwise) and times the trainer's loop alone (no model loading).
Prints each kind's median seconds a step and the frozen one's ratio to the other.

    python benchmarks/frozen_word_embeddings.py [--dataset trec] [--labelled 75] [--steps 60] [--repeats 3]
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
    parser.add_argument("--dataset", default="trec", help="trec, sst2 or sst5")
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--labelled", type=int, default=75, help="labelled training rows (the first ones)")
    parser.add_argument("--steps", type=int, default=60, help="optimisation steps a round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of each kind, alternating")
    parser.add_argument("--output", default="benchmarks/results/frozen_word_embeddings.json", help="JSON results")
    args = parser.parse_args(argv)
    from st_contrastive.active.objectives import train_round
    from st_contrastive.config.active_learning import RoundTraining
    from st_contrastive.data.text_classification import load_text_classification
    from st_contrastive.default_model import default_model

    data = load_text_classification(args.dataset)
    texts, labels = data.train_texts[: args.labelled], data.train_labels[: args.labelled]
    kinds = {"every weight": RoundTraining(), "token embeddings frozen": RoundTraining(freeze_word_embeddings=True)}
    seconds = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for kind in list(kinds)[:: 1 if repeat % 2 else -1]:  # neither always first
                model = train_round(
                    "supcon-ce",
                    args.model or default_model(),
                    texts,
                    labels,
                    data.label_names,
                    kinds[kind],
                    Path(folder) / "checkpoints",
                    seed=repeat,
                    steps=args.steps,
                )
                seconds[kind].append(model.optimisation_seconds / model.steps)
    step = {kind: statistics.median(values) for kind, values in seconds.items()}
    summary = {
        "dataset": args.dataset,
        "labelled": args.labelled,
        "steps": args.steps,
        "seconds_per_step": seconds,
        "frozen_over_every_weight": step["token embeddings frozen"] / step["every weight"],
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    for kind, value in step.items():
        print(f"{kind}: {1000 * value:.0f} ms a step (median of {args.repeats} rounds of {args.steps} steps)")
    print(f"frozen / every weight: {summary['frozen_over_every_weight']:.2f} ({args.dataset}, {args.labelled} rows)")
    return summary


if __name__ == "__main__":
    main()
