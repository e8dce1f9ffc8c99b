"""Peak memory and step time of CachedDeCLUTRLoss against DeCLUTRLoss for growing batches, and the padding that
sorting spans by length saves.

Each (batch, loss) pair trains one step in a fresh process, so peaks do not mix (peak_memory.py: allocated GPU
memory, or resident memory sampled during the step, above what the process held before it). The cached loss's
peak should stay nearly flat as the batch grows; the uncached one grows with it.

    python benchmarks/cached_memory.py [--anchors 32 64 128 256 512] [--mini-batch-size 32] [--max-length 32]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
import torch.multiprocessing as mp

from benchmarks.peak_memory import peak_memory


def _spans(model, anchors: int, max_length: int, seed: int = 0):
    """A DeCLUTR batch of ``anchors`` anchors (2 per document, 2 positives each) as the loss receives it."""
    from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
    from st_contrastive.data_dir import data_file

    sampler = SpanSampler(
        num_anchors=2,
        num_positives=2,
        min_length=max(8, max_length // 4),
        max_length=max_length,
        short_documents="skip",
    )
    documents = load_documents(data_file("corpus/docs.jsonl.gz"), limit=anchors)  # enough after skipping short ones
    rows = list(prepare_declutr_dataset(documents, model.tokenizer, sampler))[: anchors // 2]
    batch = DeCLUTRDataCollator(model.tokenizer, sampler, seed=seed)(rows)
    return [
        {k[len(c) + 1 :]: v.to(model.device) for k, v in batch.items() if k.startswith(c + "_")}
        for c in ("anchor", "positive")
    ]


def padding_shares(features: list[dict], mini_batch_size: int) -> dict[str, float]:
    """Share of padded token positions: one pass over each column, mini-batches in batch order, sorted by length."""

    def share(masks: list[torch.Tensor]) -> float:
        real = sum(int(m.sum()) for m in masks)
        padded = sum(len(m) * int(m.sum(dim=1).max()) for m in masks)
        return 1 - real / padded

    out = {"one_pass": share([f["attention_mask"] for f in features])}
    for name, sort in (("mini_batches", False), ("mini_batches_sorted", True)):
        masks = []
        for f in features:
            mask = f["attention_mask"]
            if sort:
                mask = mask[mask.sum(dim=1).argsort(descending=True)]
            masks += list(mask.split(mini_batch_size))
        out[name] = share(masks)
    return out


def _step(rank, model_name, anchors, max_length, mini_batch_size, results) -> None:
    from sentence_transformers import SentenceTransformer

    from st_contrastive.losses import CachedDeCLUTRLoss, DeCLUTRLoss
    from st_contrastive.training import optimized_parameters

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SentenceTransformer(model_name, device=device)
    model.train()
    features = _spans(model, anchors, max_length)
    loss = CachedDeCLUTRLoss(model, mini_batch_size=mini_batch_size) if mini_batch_size else DeCLUTRLoss(model)
    optimizer = torch.optim.AdamW(optimized_parameters(model, [loss]), lr=1e-6)
    for p in loss.parameters():  # optimizer state exists before the measured step, as it does from step 2 on
        p.grad = torch.zeros_like(p)
    optimizer.step()
    optimizer.zero_grad()
    with peak_memory(device) as peak:
        start = time.perf_counter()
        terms = loss([dict(f) for f in features])
        sum(terms.values()).backward()
        optimizer.step()
        seconds = time.perf_counter() - start
    results[(anchors, mini_batch_size)] = {
        "seconds": seconds,
        "peak_bytes": peak["bytes"],
        "device": device,
        "spans": sum(len(f["input_ids"]) for f in features),
        "padding": padding_shares(features, mini_batch_size or 32),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--anchors", type=int, nargs="+", default=[32, 64, 128, 256, 512], help="anchors per batch")
    parser.add_argument("--mini-batch-size", type=int, default=32, help="spans per mini-batch of the cached loss")
    parser.add_argument("--max-length", type=int, default=32, help="longest span in tokens")
    parser.add_argument("--output", default="benchmarks/results/cached_memory.json", help="JSON results path")
    args = parser.parse_args(argv)
    from st_contrastive.default_model import default_model

    model_name = args.model or default_model()
    results = mp.Manager().dict()
    for anchors in args.anchors:
        for mini_batch_size in (0, args.mini_batch_size):
            mp.spawn(_step, args=(model_name, anchors, args.max_length, mini_batch_size, results), nprocs=1, join=True)
    rows = []
    for anchors in args.anchors:
        plain, cached = results[(anchors, 0)], results[(anchors, args.mini_batch_size)]
        rows.append(
            {
                "anchors": anchors,
                "spans": plain["spans"],
                "uncached_mib": plain["peak_bytes"] / 2**20,
                "cached_mib": cached["peak_bytes"] / 2**20,
                "uncached_seconds": plain["seconds"],
                "cached_seconds": cached["seconds"],
                "padding": cached["padding"],
            }
        )
    summary = {
        "model": args.model or "all-MiniLM-L6-v2",
        "device": results[(args.anchors[0], 0)]["device"],
        "mini_batch_size": args.mini_batch_size,
        "max_length": args.max_length,
        "rows": rows,
        "cached_over_uncached_memory_at_largest": rows[-1]["cached_mib"] / max(rows[-1]["uncached_mib"], 1e-9),
        "cached_memory_growth_smallest_to_largest": rows[-1]["cached_mib"] / max(rows[0]["cached_mib"], 1e-9),
        "cached_over_uncached_time_at_largest": rows[-1]["cached_seconds"] / rows[-1]["uncached_seconds"],
        "padding_sorted_over_one_pass": rows[-1]["padding"]["mini_batches_sorted"] / rows[-1]["padding"]["one_pass"],
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    print(
        f"{'anchors':>8}{'spans':>7}{'uncached MiB':>14}{'cached MiB':>12}{'uncached s':>12}{'cached s':>10}"
        f"{'pad: 1 pass':>13}{'mini':>7}{'sorted':>8}"
    )
    for r in rows:
        p = r["padding"]
        print(
            f"{r['anchors']:>8}{r['spans']:>7}{r['uncached_mib']:>14.0f}{r['cached_mib']:>12.0f}"
            f"{r['uncached_seconds']:>12.2f}{r['cached_seconds']:>10.2f}{p['one_pass']:>13.1%}"
            f"{p['mini_batches']:>7.1%}{p['mini_batches_sorted']:>8.1%}"
        )
    print(
        f"cached / uncached peak at {rows[-1]['anchors']} anchors: {summary['cached_over_uncached_memory_at_largest']:.2f}; "
        f"cached peak {rows[-1]['anchors']} / {rows[0]['anchors']} anchors: {summary['cached_memory_growth_smallest_to_largest']:.2f} "
        "(target: nearly flat)"
    )
    return summary


if __name__ == "__main__":
    main()
