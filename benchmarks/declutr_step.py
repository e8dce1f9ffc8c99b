"""DeCLUTR training-step cost against MultipleNegativesRankingLoss on the same spans, measured in one process.

Prints two ratios:
  DeCLUTRLoss step / MNRL step   target <= 1.15 (MLM rides on the anchor forward pass: no second encoder pass)
  sampling + collation / step    target < 5 %

    python benchmarks/declutr_step.py [--model PATH] [--batch-size 4] [--max-length 128] [--repeats 10]
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
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file
from st_contrastive.default_model import default_model
from st_contrastive.losses import DeCLUTRLoss
from st_contrastive.training import optimized_parameters


def split_features(batch: dict, num_positives: int) -> tuple[dict, dict, list[dict]]:
    anchors = {k[len("anchor_"):]: v for k, v in batch.items() if k.startswith("anchor_")}
    positives = {k[len("positive_"):]: v for k, v in batch.items() if k.startswith("positive_")}
    # MNRL sees unmasked anchors and the P positives of each anchor as P columns: the same spans, encoded once.
    clean = {k: v for k, v in anchors.items() if k != "mlm_labels"}
    clean["input_ids"] = torch.where(anchors["mlm_labels"] != -100, anchors["mlm_labels"], anchors["input_ids"])
    columns = [{k: v[p::num_positives] for k, v in positives.items()} for p in range(num_positives)]
    return anchors, positives, [clean, *columns]


def time_step(loss, features, optimizer) -> float:
    start = time.perf_counter()
    out = loss(features, None)
    total = sum(out.values()) if isinstance(out, dict) else out
    total.backward()
    optimizer.step()
    optimizer.zero_grad()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--batch-size", type=int, default=4, help="documents per batch")
    parser.add_argument("--max-length", type=int, default=128, help="longest span in tokens")
    parser.add_argument("--num-positives", type=int, default=2, help="positives per anchor")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps per loss (after one warm-up)")
    parser.add_argument("--output", default="benchmarks/results/declutr_step.json", help="JSON results path")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = SentenceTransformer(args.model or default_model(), device="cpu")
    model.train()
    sampler = SpanSampler(num_positives=args.num_positives, min_length=32, max_length=args.max_length)
    documents = load_documents(data_file("corpus/docs.jsonl.gz"), limit=args.batch_size * (args.repeats + 1))
    rows = list(prepare_declutr_dataset(documents, model.tokenizer, sampler))
    collator = DeCLUTRDataCollator(model.tokenizer, sampler, seed=0)
    declutr = DeCLUTRLoss(model)
    mnrl = MultipleNegativesRankingLoss(model, scale=1 / 0.05)
    optimizer = torch.optim.AdamW(optimized_parameters(model, [declutr, mnrl]), lr=1e-6)  # each parameter once

    times = {"declutr": [], "mnrl": [], "collate": []}
    for step in range(args.repeats + 1):
        batch_rows = rows[step * args.batch_size : (step + 1) * args.batch_size]
        start = time.perf_counter()
        batch = collator(batch_rows)
        collate = time.perf_counter() - start
        anchors, positives, mnrl_features = split_features(batch, args.num_positives)
        # Alternate the order so neither loss profits from a warmer cache.
        first, second = (("declutr", declutr, [anchors, positives]), ("mnrl", mnrl, mnrl_features))[:: 1 if step % 2 else -1]
        measured = {name: time_step(loss, features, optimizer) for name, loss, features in (first, second)}
        if step:  # step 0 warms up
            times["collate"].append(collate)
            for name, seconds in measured.items():
                times[name].append(seconds)

    median = {name: statistics.median(values) for name, values in times.items()}
    results = {
        "model": args.model or "all-MiniLM-L6-v2",
        "batch_documents": args.batch_size,
        "anchors": args.batch_size * sampler.num_anchors,
        "positives": args.batch_size * sampler.num_anchors * args.num_positives,
        "max_length": args.max_length,
        "threads": torch.get_num_threads(),
        "median_seconds": median,
        "declutr_over_mnrl": median["declutr"] / median["mnrl"],
        "collation_share_of_step": median["collate"] / (median["declutr"] + median["collate"]),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=2))
    print(f"median step: DeCLUTRLoss {median['declutr']:.3f}s, MNRL {median['mnrl']:.3f}s, "
          f"sampling+collation {median['collate'] * 1000:.1f}ms")
    print(f"DeCLUTRLoss / MNRL step:        {results['declutr_over_mnrl']:.3f}  (target <= 1.15)")
    print(f"sampling + collation share:     {results['collation_share_of_step']:.2%}  (target < 5%)")
    return results


if __name__ == "__main__":
    main()
