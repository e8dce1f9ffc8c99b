"""DeCLUTR training-step cost against MultipleNegativesRankingLoss on the same spans, measured in one process.

Prints four ratios, each of two arms' total time over the same steps (every arm runs every step's spans):
  DeCLUTRLoss step / MNRL step, MLM on          target <= 0.85 (MLM rides on the anchor forward pass; its head's
                                                share of the step's FLOPs is printed beside it)
  DeCLUTRLoss(mlm_weight=0) step / MNRL step    target <= 0.80 (the same spans; DeCLUTRLoss computes little of
                                                the padding MNRL computes, whose share is printed)
  DeCLUTRLoss step / its mlm_weight=0 step − 1  target <= the MLM head's FLOP share + 1 point
  sampling + collation / step                   target < 5 %

    python benchmarks/declutr_step.py [--model PATH] [--batch-size 4] [--max-length 128] [--repeats 10] [--profile]

``--profile`` then runs one more step of each loss under torch.profiler and prints the operators whose self time
grows most from MNRL's step to DeCLUTR's: where the time beyond MNRL goes.
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
    anchors = {k[len("anchor_") :]: v for k, v in batch.items() if k.startswith("anchor_")}
    positives = {k[len("positive_") :]: v for k, v in batch.items() if k.startswith("positive_")}
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


def span_rows(model, documents: int, max_length: int, num_positives: int) -> tuple[list[dict], DeCLUTRDataCollator]:
    """The first ``documents`` Wikipedia articles prepared for DeCLUTR, and the collator that samples their spans."""
    sampler = SpanSampler(num_positives=num_positives, min_length=32, max_length=max_length)
    texts = load_documents(data_file("corpus/docs.jsonl.gz"), limit=documents)
    return list(prepare_declutr_dataset(texts, model.tokenizer, sampler)), DeCLUTRDataCollator(
        model.tokenizer, sampler, seed=0
    )


def encoder_flops(model, features: dict, padded: bool = True) -> int:
    """Matrix-multiply FLOPs of the encoder's forward pass over ``features``: its weight matrices (embedding lookups
    excluded) and attention's two products per layer. ``padded``: every padded token counted (what one padded pass
    computes); else each text's own tokens alone (the model FLOPs of model FLOPs utilisation). A backward pass costs
    twice it."""
    config = model[0].auto_model.config
    weights = sum(
        p.numel() for name, p in model[0].auto_model.named_parameters() if p.dim() == 2 and "embeddings" not in name
    )
    rows, length = features["input_ids"].shape
    lengths = [length] * rows if padded else features["attention_mask"].sum(dim=1).tolist()
    return sum(2 * n * weights + 4 * config.num_hidden_layers * n * n * config.hidden_size for n in lengths)


def mlm_share_of_flops(model, anchors: dict, positives: dict) -> float:
    """The MLM head's share of a step's FLOPs (forward and backward scale alike, so the forward's share): its dense
    layer and vocabulary projection on the masked tokens, against the encoder on the anchors and positives."""
    config = model[0].auto_model.config
    head = (
        2 * int((anchors["mlm_labels"] != -100).sum()) * config.hidden_size * (config.hidden_size + config.vocab_size)
    )
    return head / (encoder_flops(model, anchors) + encoder_flops(model, positives) + head)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--batch-size", type=int, default=4, help="documents per batch")
    parser.add_argument("--max-length", type=int, default=128, help="longest span in tokens")
    parser.add_argument("--num-positives", type=int, default=2, help="positives per anchor")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps per loss (after one warm-up)")
    parser.add_argument("--profile", action="store_true", help="profile one step of each loss after timing them")
    parser.add_argument("--output", default="benchmarks/results/declutr_step.json", help="JSON results path")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = SentenceTransformer(args.model or default_model(), device="cpu")
    model.train()
    rows, collator = span_rows(model, args.batch_size * (args.repeats + 1), args.max_length, args.num_positives)
    sampler = collator.span_sampler
    declutr = DeCLUTRLoss(model)
    contrastive_only = DeCLUTRLoss(model, mlm_weight=0)  # given masked anchors, it restores them: MNRL's work
    mnrl = MultipleNegativesRankingLoss(model, scale=1 / 0.05)
    optimizer = torch.optim.AdamW(optimized_parameters(model, [declutr, mnrl]), lr=1e-6)  # each parameter once

    times = {"declutr": [], "contrastive_only": [], "mnrl": [], "collate": []}
    shares, padding = [], []
    for step in range(args.repeats + 1):
        batch_rows = rows[step * args.batch_size : (step + 1) * args.batch_size]
        start = time.perf_counter()
        batch = collator(batch_rows)
        collate = time.perf_counter() - start
        anchors, positives, mnrl_features = split_features(batch, args.num_positives)
        shares.append(mlm_share_of_flops(model, anchors, positives))
        masks = [features["attention_mask"] for features in mnrl_features]
        padding.append(1 - sum(int(m.sum()) for m in masks) / sum(m.numel() for m in masks))
        arms = [
            ("declutr", declutr, [anchors, positives]),
            ("contrastive_only", contrastive_only, [anchors, positives]),
            ("mnrl", mnrl, mnrl_features),
        ]
        # Rotate the order so that no loss always profits from a warmer cache.
        arms = arms[step % 3 :] + arms[: step % 3]
        measured = {name: time_step(loss, features, optimizer) for name, loss, features in arms}
        if step:  # step 0 warms up
            times["collate"].append(collate)
            for name, seconds in measured.items():
                times[name].append(seconds)

    median = {name: statistics.median(values) for name, values in times.items()}
    # The steps' spans differ in length, and every arm runs every step's: each ratio is of two arms' total time over
    # the same steps (two medians could come from different batches; medians of per-step ratios do not compose).
    total = {name: sum(values) for name, values in times.items()}
    results = {
        "model": args.model or "all-MiniLM-L6-v2",
        "batch_documents": args.batch_size,
        "anchors": args.batch_size * sampler.num_anchors,
        "positives": args.batch_size * sampler.num_anchors * args.num_positives,
        "max_length": args.max_length,
        "threads": torch.get_num_threads(),
        "median_seconds": median,
        "step_seconds": times,  # each arm's steps in order: the steps' own spread
        "declutr_over_mnrl": total["declutr"] / total["mnrl"],
        "contrastive_only_over_mnrl": total["contrastive_only"] / total["mnrl"],
        "declutr_over_contrastive_only": total["declutr"] / total["contrastive_only"],
        "mlm_share_of_flops": statistics.mean(shares),
        "padding_share": statistics.mean(padding),  # of the tokens MNRL computes (its columns padded apart)
        "collation_share_of_step": median["collate"] / (median["declutr"] + median["collate"]),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=2))
    print(
        f"median step: DeCLUTRLoss {median['declutr']:.3f}s, contrastive only {median['contrastive_only']:.3f}s, "
        f"MNRL {median['mnrl']:.3f}s, sampling+collation {median['collate'] * 1000:.1f}ms"
    )
    print(
        f"DeCLUTRLoss / MNRL step, MLM on:      {results['declutr_over_mnrl']:.3f}  (target <= 0.85; the MLM head "
        f"is {results['mlm_share_of_flops']:.1%} of the step's FLOPs)"
    )
    print(
        f"DeCLUTRLoss / MNRL step, mlm_weight=0: {results['contrastive_only_over_mnrl']:.3f}  (target <= 0.80; "
        f"padding is {results['padding_share']:.1%} of MNRL's tokens)"
    )
    print(
        f"MLM's extra over mlm_weight=0:         {results['declutr_over_contrastive_only'] - 1:.1%}  (target <= "
        f"{results['mlm_share_of_flops'] + 0.01:.1%}: the head's FLOP share + 1 point)"
    )
    print(f"sampling + collation share:           {results['collation_share_of_step']:.2%}  (target < 5%)")
    if args.profile:
        results["profile"] = profile_growth(
            collator(rows[: args.batch_size]), args.num_positives, {"declutr": declutr, "mnrl": mnrl}, optimizer
        )
        Path(args.output).write_text(json.dumps(results, indent=2))
        print(
            "\nprofile of one step, self CPU time; the operators that grow most from MNRL to DeCLUTR:\n"
            + profile_table(results["profile"])
        )
    return results


def profile_growth(batch: dict, num_positives: int, losses: dict, optimizer, top: int = 12) -> dict:
    """Self CPU milliseconds per operator in one step of DeCLUTRLoss and of MNRL on the same spans (after one
    unprofiled warm-up step each): the ``top`` operators whose time grows most from MNRL to DeCLUTR, and the totals."""
    from torch.profiler import ProfilerActivity, profile

    anchors, positives, mnrl_features = split_features(batch, num_positives)
    features = {"declutr": [anchors, positives], "mnrl": mnrl_features}
    self_ms = {}
    for name, loss in losses.items():
        time_step(loss, features[name], optimizer)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            time_step(loss, features[name], optimizer)
        self_ms[name] = {e.key: e.self_cpu_time_total / 1000 for e in prof.key_averages()}
    names = self_ms["declutr"].keys() | self_ms["mnrl"].keys()
    growth = {n: self_ms["declutr"].get(n, 0.0) - self_ms["mnrl"].get(n, 0.0) for n in names}
    chosen = sorted(growth, key=growth.get, reverse=True)[:top]
    return {
        "operators": {
            n: [round(self_ms["declutr"].get(n, 0.0), 2), round(self_ms["mnrl"].get(n, 0.0), 2)] for n in chosen
        },
        "total_ms": {name: round(sum(ms.values()), 2) for name, ms in self_ms.items()},
    }


def profile_table(profile: dict) -> str:
    """The operators whose self time grows most from MNRL to DeCLUTR, and all operators, as a Markdown table."""
    lines = ["| operator | DeCLUTR ms | MNRL ms | growth |", "|---|---|---|---|"]
    lines += [
        f"| {name} | {declutr:.1f} | {mnrl:.1f} | {declutr - mnrl:+.1f} |"
        for name, (declutr, mnrl) in profile["operators"].items()
    ]
    total = profile["total_ms"]
    extra = total["declutr"] - total["mnrl"]
    lines.append(
        f"| all operators | {total['declutr']:,.0f} | {total['mnrl']:,.0f} | {extra:+,.0f} "
        f"({100 * extra / total['mnrl']:.1f} %) |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
