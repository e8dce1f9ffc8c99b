"""Each method's training step against the nearest sentence-transformers loss on the same batch, on one device, in
fp32 and in bf16 autocast: examples/s, peak memory, and for DeCLUTR the model FLOPs utilisation.

  DeCLUTRLoss (MLM on)        vs MultipleNegativesRankingLoss   the same spans (anchors and positives)
  NLISupConLoss (SupCon + CE) vs SoftmaxLoss                    the same premise-grouped SNLI pairs
  SCALeLoss (2 dropout views) vs CosineSimilarityLoss           16 TREC questions; SetFit's step: 16 pairs of them

on all-MiniLM-L6-v2 and on a BERT-base-sized encoder built from its config (random weights: speed only).

    python benchmarks/gpu_step.py --device cuda [--encoders minilm bert-base] [--precisions fp32 bf16]

Writes benchmarks/results/gpu.json with the device named. The test suite runs it on the CPU with a tiny encoder so
that it cannot rot; figures from a CPU mean nothing for a GPU. Not measured here: multi-view against a bi-GRU view.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import (
    CosineSimilarityLoss,
    MultipleNegativesRankingLoss,
    SoftmaxLoss,
)
from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
from sentence_transformers.util import batch_to_device

from benchmarks.declutr_step import encoder_flops, span_rows, split_features
from st_contrastive.data import PremiseGroupBatchSampler, load_nli
from st_contrastive.data.text_classification import load_text_classification
from st_contrastive.default_model import default_model
from st_contrastive.losses import DeCLUTRLoss, NLISupConLoss, SCALeLoss
from st_contrastive.training import optimized_parameters

# Dense bf16 tensor-core peak of each card, TFLOP/s, from NVIDIA's datasheets (SXM parts).
PEAK_BF16_TFLOPS = {"H200": 989.4, "H100": 989.4, "A100": 312.0, "L40S": 362.0, "A10G": 70.0, "L4": 121.0}


def load_encoder(name: str, device: str) -> SentenceTransformer:
    """``minilm`` (the default model), ``bert-base`` (BERT-base's sizes, random weights, MiniLM's tokenizer) or a
    saved model's path."""
    if name == "minilm":
        return SentenceTransformer(default_model(), device=device)
    if name != "bert-base":
        return SentenceTransformer(name, device=device)
    from st_contrastive.pretraining import build_masked_lm

    tokenizer = SentenceTransformer(default_model()).tokenizer
    folder = tempfile.mkdtemp(prefix="bert-base-")
    build_masked_lm(tokenizer, hidden_size=768, num_layers=12, num_heads=12).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    transformer = Transformer(folder, max_seq_length=256)
    return SentenceTransformer(modules=[transformer, Pooling(768, pooling_mode="mean")], device=device)


def declutr_pair(model, args) -> dict:
    rows, collator = span_rows(model, args.batch_documents * (args.repeats + 1), args.max_length, num_positives=2)
    batches = []
    for step in range(args.repeats + 1):
        anchors, positives, mnrl = split_features(collator(rows[step * args.batch_documents:
                                                                (step + 1) * args.batch_documents]), 2)
        batches.append({"method": ([anchors, positives], None), "baseline": (mnrl, None),
                        "examples": len(anchors["input_ids"]) + len(positives["input_ids"]),
                        "flops": 3 * (encoder_flops(model, anchors) + encoder_flops(model, positives))})
    return {"method": DeCLUTRLoss(model), "baseline": MultipleNegativesRankingLoss(model, scale=1 / 0.05),
            "batches": batches}


def nli_pair(model, args) -> dict:
    pairs = load_nli("snli-dev")
    batches = []
    for rows in list(PremiseGroupBatchSampler(pairs, batch_size=args.batch_pairs, seed=0))[: args.repeats + 1]:
        batch = pairs.select(rows)
        features = [model.tokenize(batch["premise"]), model.tokenize(batch["hypothesis"])]
        labels = torch.tensor(batch["label"])
        batches.append({"method": (features, labels), "baseline": (features, labels), "examples": 2 * len(rows)})
    return {"method": NLISupConLoss(model, supcon_weight=0.3),
            "baseline": SoftmaxLoss(model, model.get_embedding_dimension(), num_labels=3), "batches": batches}


def scale_pair(model, args) -> dict:
    trec = load_text_classification("trec")
    generator = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(args.repeats + 1):
        rows = torch.randperm(len(trec.train_texts), generator=generator)[:32].tolist()
        texts = [trec.train_texts[i] for i in rows]
        labels = torch.tensor([trec.train_labels[i] for i in rows])
        # SCALe: 16 questions, each encoded once per dropout view (2); SetFit: 16 pairs, 32 questions encoded.
        pairs = (labels[:16] == labels[16:]).float()
        batches.append({"method": ([model.tokenize(texts[:16])], labels[:16]),
                        "baseline": ([model.tokenize(texts[:16]), model.tokenize(texts[16:])], pairs),
                        "examples": 32})
    return {"method": SCALeLoss(model, num_labels=len(trec.label_names), dropout_rates=(0.0, 0.1)),
            "baseline": CosineSimilarityLoss(model), "batches": batches}


PAIRS = {"declutr-vs-mnrl": declutr_pair, "nli-supcon-vs-softmax": nli_pair, "scale-vs-setfit": scale_pair}


def step_seconds(loss, features, labels, optimizer, device: str, precision: str) -> float:
    features = [batch_to_device(dict(f), device) for f in features]
    labels = labels.to(device) if labels is not None else None
    synchronize(device)
    start = time.perf_counter()
    autocast = (torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16) if precision == "bf16"
                else contextlib.nullcontext())
    with autocast:
        out = loss(features, labels)
        total = sum(out.values()) if isinstance(out, dict) else out
    total.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    synchronize(device)
    return time.perf_counter() - start


def synchronize(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def peak_mib(device: str) -> float | None:
    return torch.cuda.max_memory_allocated() / 2**20 if torch.device(device).type == "cuda" else None


def reset_peak(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats()


def measure(pair: dict, model, device: str, precision: str) -> dict:
    """Median step of the method and of the baseline (alternating, after a warm-up step each) and the peak memory
    of each one's steps."""
    losses = {arm: pair[arm].to(device) for arm in ("method", "baseline")}
    optimizer = torch.optim.AdamW(optimized_parameters(model, list(losses.values())), lr=1e-6)
    seconds, peaks = {"method": [], "baseline": []}, {"method": 0.0, "baseline": 0.0}
    for step, batch in enumerate(pair["batches"]):
        for arm in ("method", "baseline")[:: 1 if step % 2 else -1]:
            reset_peak(device)
            took = step_seconds(losses[arm], *batch[arm], optimizer, device, precision)
            if step:  # step 0 warms up
                seconds[arm].append(took)
                peaks[arm] = max(peaks[arm], peak_mib(device) or 0.0)
    median = {arm: statistics.median(values) for arm, values in seconds.items()}
    examples = statistics.mean(b["examples"] for b in pair["batches"][1:])
    row = {"median_seconds": median, "examples_per_second": {arm: examples / s for arm, s in median.items()},
           "method_over_baseline": median["method"] / median["baseline"],
           "peak_mib": peaks if torch.device(device).type == "cuda" else None}
    if "flops" in pair["batches"][0]:
        achieved = statistics.mean(b["flops"] for b in pair["batches"][1:]) / median["method"] / 1e12
        peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in device_name(device)), None)
        row["method_tflops"] = achieved
        row["mfu_of_bf16_peak"] = achieved / peak if peak else None
    return row


def device_name(device: str) -> str:
    return torch.cuda.get_device_name(device) if torch.device(device).type == "cuda" else "cpu"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--encoders", nargs="+", default=["minilm", "bert-base"],
                        help="minilm, bert-base (random weights) or a saved model's path")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"])
    parser.add_argument("--pairs", nargs="+", default=list(PAIRS), choices=list(PAIRS))
    parser.add_argument("--batch-documents", type=int, default=32, help="DeCLUTR: documents per batch (2 anchors, "
                        "2 positives each)")
    parser.add_argument("--batch-pairs", type=int, default=64, help="NLI: pairs per batch")
    parser.add_argument("--max-length", type=int, default=256, help="DeCLUTR: longest span in tokens")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps per loss (after one warm-up)")
    parser.add_argument("--output", default="benchmarks/results/gpu.json", help="JSON results path")
    args = parser.parse_args(argv)

    rows = []
    for encoder in args.encoders:
        for pair_name in args.pairs:
            for precision in args.precisions:
                torch.manual_seed(0)
                model = load_encoder(encoder, args.device)
                model.train()
                row = {"encoder": encoder, "pair": pair_name, "precision": precision}
                row |= measure(PAIRS[pair_name](model, args), model, args.device, precision)
                rows.append(row)
                mfu = row.get("mfu_of_bf16_peak")
                print(f"{encoder:<10} {pair_name:<22} {precision:<5} method/baseline x{row['method_over_baseline']:.2f}"
                      f"  {row['examples_per_second']['method']:8.1f} vs {row['examples_per_second']['baseline']:8.1f}"
                      f" examples/s" + (f"  peak {row['peak_mib']['method']:.0f} vs {row['peak_mib']['baseline']:.0f} "
                                        "MiB" if row["peak_mib"] else "")
                      + (f"  MFU {mfu:.1%}" if mfu is not None else ""), flush=True)
                del model
                if torch.device(args.device).type == "cuda":
                    torch.cuda.empty_cache()
    results = {"device": device_name(args.device), "torch": torch.__version__, "rows": rows}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
