"""DeCLUTR training throughput (spans per second) and peak memory in float32 and bfloat16, with and without length
bucketing.

Span lengths are Beta-distributed, so a batch padded to its longest span computes on many padding tokens. Three
ways to run the same objective on the same batches:

- ``one pass``: ``DeCLUTRLoss``, each column padded to its longest span;
- ``mini-batches``: ``CachedDeCLUTRLoss`` in batch order (GradCache: embed without a graph, then again with one);
- ``sorted mini-batches``: the same with ``sort_by_length=True``, so each mini-batch is padded only to its own
  longest span (length bucketing; the loss and gradients are unchanged, tests/losses/test_cached_declutr.py).

The last two differ only in bucketing, so their ratio is what bucketing buys. Each setting trains ``--steps``
optimizer steps (after one warm-up step) in a fresh process, so peaks do not mix; peak memory is
``torch.cuda.max_memory_allocated`` on a GPU and the sampled resident memory on CPU (see peak_memory.py).

    python benchmarks/declutr_throughput.py [--anchors 64] [--max-length 128] [--mini-batch-size 32] [--steps 3]
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

from benchmarks.cached_memory import _spans
from benchmarks.peak_memory import peak_memory

SETTINGS = {"one pass": (0, False), "mini-batches": (None, False), "sorted mini-batches": (None, True)}


def _train(rank, model_name, setting, precision, args, results) -> None:
    from sentence_transformers import SentenceTransformer

    from st_contrastive.losses import CachedDeCLUTRLoss, DeCLUTRLoss
    from st_contrastive.training import optimized_parameters

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SentenceTransformer(model_name, device=device)
    model.train()
    mini_batch_size, sort_by_length = SETTINGS[setting]
    loss = (
        DeCLUTRLoss(model)
        if mini_batch_size == 0
        else CachedDeCLUTRLoss(model, mini_batch_size=args.mini_batch_size, sort_by_length=sort_by_length)
    )
    optimizer = torch.optim.AdamW(optimized_parameters(model, [loss]), lr=1e-6)
    batches = [_spans(model, args.anchors, args.max_length, seed=step) for step in range(args.steps + 1)]

    def step(features):
        with torch.autocast(device, dtype=torch.bfloat16, enabled=precision == "bf16"):
            terms = loss([dict(f) for f in features])
        sum(terms.values()).backward()
        optimizer.step()
        optimizer.zero_grad()

    step(batches[0])  # warm-up: kernels, allocator and optimizer state in place
    with peak_memory(device) as peak:
        start = time.perf_counter()
        for features in batches[1:]:
            step(features)
        seconds = time.perf_counter() - start
    spans = sum(len(f["input_ids"]) for features in batches[1:] for f in features)
    results[(setting, precision)] = {
        "spans_per_second": spans / seconds,
        "seconds": seconds,
        "spans": spans,
        "peak_mib": peak["bytes"] / 2**20,
        "device": device,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--anchors", type=int, default=64, help="anchors per batch (2 per document, 2 positives each)")
    parser.add_argument("--max-length", type=int, default=128, help="longest span in tokens (the paper: 512)")
    parser.add_argument("--mini-batch-size", type=int, default=32, help="spans per mini-batch of the cached loss")
    parser.add_argument("--steps", type=int, default=3, help="timed optimizer steps per setting")
    parser.add_argument(
        "--precisions",
        nargs="+",
        choices=["fp32", "bf16"],
        default=None,
        help="default fp32 and bf16 on a GPU, fp32 on CPU (CPUs without AVX512-BF16 emulate bf16)",
    )
    parser.add_argument("--output", default="benchmarks/results/declutr_throughput.json", help="JSON results path")
    args = parser.parse_args(argv)
    args.precisions = args.precisions or (["fp32", "bf16"] if torch.cuda.is_available() else ["fp32"])
    from st_contrastive.default_model import default_model

    model_name = args.model or default_model()
    results = mp.Manager().dict()
    for precision in args.precisions:
        for setting in SETTINGS:
            mp.spawn(_train, args=(model_name, setting, precision, args, results), nprocs=1, join=True)
    rows = [{"precision": p, "setting": s} | results[(s, p)] for p in args.precisions for s in SETTINGS]
    first = args.precisions[0]
    summary = {
        "model": args.model or "all-MiniLM-L6-v2",
        "device": rows[0]["device"],
        "anchors": args.anchors,
        "max_length": args.max_length,
        "mini_batch_size": args.mini_batch_size,
        "steps": args.steps,
        "rows": rows,
        "sorted_over_unsorted_spans_per_second": {
            p: results[("sorted mini-batches", p)]["spans_per_second"]
            / results[("mini-batches", p)]["spans_per_second"]
            for p in args.precisions
        },
        "sorted_over_one_pass_spans_per_second": {
            p: results[("sorted mini-batches", p)]["spans_per_second"] / results[("one pass", p)]["spans_per_second"]
            for p in args.precisions
        },
    }
    if "bf16" in args.precisions and "fp32" in args.precisions:
        summary["bf16_over_fp32_one_pass"] = (
            results[("one pass", "bf16")]["spans_per_second"] / results[("one pass", "fp32")]["spans_per_second"]
        )
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(summary, indent=2))
    print(f"{'precision':<10}{'setting':<22}{'spans/s':>9}{'peak MiB':>10}")
    for r in rows:
        print(f"{r['precision']:<10}{r['setting']:<22}{r['spans_per_second']:>9.1f}{r['peak_mib']:>10.0f}")
    ratios = summary["sorted_over_unsorted_spans_per_second"]
    print(
        f"sorted / unsorted mini-batches (spans/s): {', '.join(f'{p} {v:.2f}' for p, v in ratios.items())} "
        f"({summary['device']}; {args.anchors} anchors, spans {max(8, args.max_length // 4)}-{args.max_length} "
        f"tokens; first precision {first})"
    )
    return summary


if __name__ == "__main__":
    main()
