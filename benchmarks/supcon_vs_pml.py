"""SupConLoss against pytorch-metric-learning's SupConLoss on the same embeddings and labels: forward + backward
time (the two compute the same value; tests/losses/test_supcon.py checks that).

    python benchmarks/supcon_vs_pml.py [--rows 64 512 2048] [--dim 384] [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from pytorch_metric_learning.losses import SupConLoss as PMLSupConLoss

from st_contrastive.losses.contrastive_core import gather_candidates, similarity_matrix, supcon


def ours(embeddings: torch.Tensor, labels: torch.Tensor, temperature: float) -> torch.Tensor:
    """SupConLoss.compute_loss without a model around it: the package's core on one device."""
    candidates = gather_candidates(embeddings, labels)
    positives = labels[:, None] == candidates.labels[None, :]
    loss, _ = supcon(
        similarity_matrix(embeddings, candidates.embeddings),
        positives,
        candidates.not_self(len(embeddings)),
        temperature,
    )
    return loss


def timed(loss_fn, embeddings, labels, repeats: int) -> float:
    times = []
    for _ in range(repeats + 1):
        leaf = embeddings.clone().requires_grad_()
        start = time.perf_counter()
        loss_fn(leaf, labels).backward()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[64, 512, 2048], help="embeddings per batch")
    parser.add_argument("--dim", type=int, default=384, help="embedding size")
    parser.add_argument("--classes", type=int, default=6, help="labels drawn uniformly")
    parser.add_argument("--repeats", type=int, default=20, help="timed forward+backward passes (after a warm-up)")
    parser.add_argument("--output", default="benchmarks/results/supcon_vs_pml.json", help="JSON results path")
    args = parser.parse_args(argv)
    generator = torch.Generator().manual_seed(0)
    pml = PMLSupConLoss(temperature=0.1)
    rows = []
    for n in args.rows:
        embeddings = torch.randn(n, args.dim, generator=generator)
        labels = torch.randint(args.classes, (n,), generator=generator)
        mine = timed(lambda e, y: ours(e, y, 0.1), embeddings, labels, args.repeats)
        reference = timed(pml, embeddings, labels, args.repeats)
        rows.append({"rows": n, "ours_ms": mine * 1000, "pml_ms": reference * 1000, "ours_over_pml": mine / reference})
    summary = {"dim": args.dim, "rows": rows, "ours_over_pml_at_largest": rows[-1]["ours_over_pml"]}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    for r in rows:
        print(
            f"{r['rows']:>6} rows: SupConLoss {r['ours_ms']:.2f} ms, PML SupConLoss {r['pml_ms']:.2f} ms, "
            f"ratio {r['ours_over_pml']:.2f}"
        )
    return summary


if __name__ == "__main__":
    main()
