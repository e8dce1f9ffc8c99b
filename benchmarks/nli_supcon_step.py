"""NLISupConLoss training step against sentence-transformers' SoftmaxLoss on the same batch, in one process.

Prints NLISupConLoss step / SoftmaxLoss step (target <= 1.2: SupCon reuses the embeddings of the CE pass).

    python benchmarks/nli_supcon_step.py [--model PATH] [--batch-size 64] [--repeats 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import SoftmaxLoss

from st_contrastive.data import PremiseGroupBatchSampler, load_nli
from st_contrastive.default_model import default_model
from st_contrastive.losses import NLISupConLoss
from st_contrastive.training import optimized_parameters


def time_step(loss, features, labels, optimizer) -> float:
    start = time.perf_counter()
    out = loss(features, labels)
    (sum(out.values()) if isinstance(out, dict) else out).backward()
    optimizer.step()
    optimizer.zero_grad()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per batch (the paper's 64)")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps per loss (after one warm-up)")
    parser.add_argument("--output", default="benchmarks/results/nli_supcon_step.json", help="JSON results path")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = SentenceTransformer(args.model or default_model(), device="cpu")
    model.train()
    pairs = load_nli("snli-dev")
    batches = list(PremiseGroupBatchSampler(pairs, batch_size=args.batch_size, seed=0))[: args.repeats + 1]
    supcon = NLISupConLoss(model, supcon_weight=0.3)
    softmax = SoftmaxLoss(model, model.get_embedding_dimension(), num_labels=3)
    optimizer = torch.optim.AdamW(optimized_parameters(model, [supcon, softmax]), lr=1e-6)  # each parameter once

    times = {"nli_supcon": [], "softmax": []}
    for step, rows in enumerate(batches):
        batch = pairs.select(rows)
        features = [model.tokenize(batch["premise"]), model.tokenize(batch["hypothesis"])]
        labels = torch.tensor(batch["label"])
        order = [("nli_supcon", supcon), ("softmax", softmax)][:: 1 if step % 2 else -1]
        measured = {name: time_step(loss, features, labels, optimizer) for name, loss in order}
        if step:
            for name, seconds in measured.items():
                times[name].append(seconds)

    median = {name: statistics.median(values) for name, values in times.items()}
    ratio = median["nli_supcon"] / median["softmax"]
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    results = {
        "model": args.model or "all-MiniLM-L6-v2",
        "batch_size": args.batch_size,
        "median_seconds": median,
        "nli_supcon_over_softmax": ratio,
    }
    Path(args.output).write_text(json.dumps(results, indent=2))
    print(f"median step: NLISupConLoss {median['nli_supcon']:.3f}s, SoftmaxLoss {median['softmax']:.3f}s")
    print(f"NLISupConLoss / SoftmaxLoss step: {ratio:.3f}  (target <= 1.2)")
    return results


if __name__ == "__main__":
    main()
