"""Each method's training step against the nearest sentence-transformers loss on the same batch, on one device, in
fp32 and in bf16 autocast: examples/s, peak memory, and for DeCLUTR the model FLOPs utilisation.

  DeCLUTRLoss (MLM on)        vs MultipleNegativesRankingLoss   the same spans (anchors and positives)
  DeCLUTRLoss, mlm_weight=0   vs MultipleNegativesRankingLoss   the same: MNRL's work, so its cost (target 1.00)
  NLISupConLoss (SupCon + CE) vs SoftmaxLoss                    the same premise-grouped SNLI pairs
  SCALeLoss (2 dropout views) vs CosineSimilarityLoss           16 TREC questions; SetFit's step: 16 pairs of them
  multi-view (DEP, SEQ)       vs bi-GRU only (SEQ, SEQ)         the same parsed Wikipedia sentences, bilinear loss

the first four on all-MiniLM-L6-v2 and on a BERT-base-sized encoder built from its config (random weights: speed
only); multi-view at the paper's sizes (300-dimensional words, 600-dimensional views).

    python benchmarks/gpu_step.py --device cuda [--encoders minilm bert-base] [--precisions fp32 bf16]
                                  [--cached-anchors 256 1024 4096] [--find-syncs]

``--cached-anchors`` adds CachedDeCLUTRLoss's peak memory against DeCLUTRLoss's at those batch sizes
(benchmarks/cached_memory.py). ``--find-syncs`` runs one more step of each loss with CUDA's synchronization debug
mode on and lists the lines of this package that made the host wait for the GPU. Writes
benchmarks/results/gpu.json with the device named. The test suite runs it on the CPU with a tiny encoder so that it
cannot rot; figures from a CPU mean nothing for a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
import warnings
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

from benchmarks.declutr_step import encoder_flops, mlm_share_of_flops, span_rows, split_features
from st_contrastive.data import PremiseGroupBatchSampler, load_nli, load_sentence_corpus
from st_contrastive.data.text_classification import load_text_classification
from st_contrastive.data_dir import data_file
from st_contrastive.default_model import default_model
from st_contrastive.losses import DeCLUTRLoss, MultiViewBilinearLoss, NLISupConLoss, SCALeLoss
from st_contrastive.losses.length_groups import CALL_TOKENS
from st_contrastive.models import multiview_model
from st_contrastive.training import optimized_parameters

# Dense bf16 tensor-core peak of each card, TFLOP/s, from NVIDIA's datasheets (SXM parts).
PEAK_BF16_TFLOPS = {"H200": 989.4, "H100": 989.4, "A100": 312.0, "L40S": 362.0, "A10G": 70.0, "L4": 121.0}


def load_encoder(name: str, base: str, random_weights: bool, device: str) -> SentenceTransformer:
    """``minilm`` (``base``: all-MiniLM-L6-v2 unless told), ``bert-base`` (BERT-base's sizes, random weights,
    ``base``'s tokenizer) or a saved model's path. With ``random_weights``, ``minilm`` is ``base``'s architecture
    newly initialised (the same speed; only its config and tokenizer are read)."""
    if name not in ("minilm", "bert-base"):
        return SentenceTransformer(name, device=device)
    if name == "minilm" and not random_weights:
        return SentenceTransformer(base, device=device)
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    config = AutoConfig.from_pretrained(base)
    if name == "bert-base":
        config.update(
            {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
        )
    folder = tempfile.mkdtemp(prefix=f"{name}-random-")
    AutoModelForMaskedLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    transformer = Transformer(folder, max_seq_length=256)
    return SentenceTransformer(modules=[transformer, Pooling(config.hidden_size, pooling_mode="mean")], device=device)


def declutr_pair(model, args, mlm_weight: float = 1.0) -> dict:
    needed = args.batch_documents * (args.repeats + 1)
    # Articles too short for two anchors of --max-length are skipped (about half at 256 tokens): read 4× as many.
    rows, collator = span_rows(model, 4 * needed, args.max_length, num_positives=2)
    if len(rows) < needed:
        raise ValueError(
            f"{len(rows)} of {4 * needed} articles are long enough for --max-length "
            f"{args.max_length}; {needed} needed: lower --batch-documents or --repeats"
        )
    batches = []
    for step in range(args.repeats + 1):
        anchors, positives, mnrl = split_features(
            collator(rows[step * args.batch_documents : (step + 1) * args.batch_documents]), 2
        )
        batches.append(
            {
                "method": ([anchors, positives], None),
                "baseline": (mnrl, None),
                "examples": len(anchors["input_ids"]) + len(positives["input_ids"]),
                # Model FLOPs: the spans' own tokens (what MFU counts); padded: what one padded pass per column
                # computes, as the earlier runs counted them.
                "flops": 3
                * (encoder_flops(model, anchors, padded=False) + encoder_flops(model, positives, padded=False)),
                "padded_flops": 3 * (encoder_flops(model, anchors) + encoder_flops(model, positives)),
                **({"mlm_share": mlm_share_of_flops(model, anchors, positives)} if mlm_weight else {}),
            }
        )
    return {
        "method": DeCLUTRLoss(model, mlm_weight=mlm_weight, **length_groups(args)),
        "baseline": MultipleNegativesRankingLoss(model, scale=1 / 0.05),
        "batches": batches,
    }


def length_groups(args) -> dict:
    """The losses' own default unless --length-groups is given (1: one padded pass per column, as before)."""
    return {} if args.length_groups is None else {"length_groups": args.length_groups}


def nli_pair(model, args) -> dict:
    pairs = load_nli("snli-dev")
    batches = []
    for rows in list(PremiseGroupBatchSampler(pairs, batch_size=args.batch_pairs, seed=0))[: args.repeats + 1]:
        batch = pairs.select(rows)
        features = [model.preprocess(batch["premise"]), model.preprocess(batch["hypothesis"])]
        labels = torch.tensor(batch["label"])
        batches.append({"method": (features, labels), "baseline": (features, labels), "examples": 2 * len(rows)})
    return {
        "method": NLISupConLoss(model, supcon_weight=0.3, **length_groups(args)),
        "baseline": SoftmaxLoss(model, model.get_embedding_dimension(), num_labels=3),
        "batches": batches,
    }


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
        batches.append(
            {
                "method": ([model.preprocess(texts[:16])], labels[:16]),
                "baseline": ([model.preprocess(texts[:16]), model.preprocess(texts[16:])], pairs),
                "examples": 32,
            }
        )
    return {
        "method": SCALeLoss(model, num_labels=len(trec.label_names), dropout_rates=(0.0, 0.1)),
        "baseline": CosineSimilarityLoss(model),
        "batches": batches,
    }


def multiview_pair(parsed: str, args) -> dict:
    """Two multi-view models over one vocabulary, so both read the same features: DEP + SEQ (the paper's pair that
    needs a parser) against SEQ + SEQ (its single-view control, QuickThought's)."""
    needed = args.batch_sentences * (args.repeats + 1)
    dataset, sentences = load_sentence_corpus(parsed, limit=needed)
    if len(sentences) < needed:
        raise ValueError(
            f"--parsed {parsed}: {len(sentences)} sentences, {needed} needed (--batch-sentences × (--repeats + 1))"
        )
    models = [
        multiview_model(views, sentences, parser=None, device=args.device) for views in (["dep", "seq"], ["seq", "seq"])
    ]
    for model in models:
        model[0].add_parses(sentences)
    batches = []
    for step in range(args.repeats + 1):
        rows = dataset[step * args.batch_sentences : (step + 1) * args.batch_sentences]
        features = [models[0].preprocess(rows["sentence"])]
        batches.append(
            {
                "method": (features, torch.tensor(rows["label"])),
                "baseline": (features, torch.tensor(rows["label"])),
                "examples": len(rows["label"]),
            }
        )
    return {
        "method": MultiViewBilinearLoss(models[0]),
        "baseline": MultiViewBilinearLoss(models[1]),
        "batches": batches,
    }


def parsed_wikipedia(path: str | None, sentences: int) -> str:
    """``path``, or the first Wikipedia articles parsed by spaCy into runs/benchmarks/ (once: the parse resumes)."""
    if path:
        return path
    from st_contrastive.parsing import make_parser, parse_corpus

    output = Path("runs/benchmarks/wiki-parsed.jsonl.gz")
    output.parent.mkdir(parents=True, exist_ok=True)
    # An article gives about 60 sentences; a third of that is a safe guess.
    parse_corpus(
        data_file("corpus/docs.jsonl.gz"),
        output,
        make_parser("spacy"),
        limit_documents=sentences // 20 + 1,
        show_progress=False,
    )
    return str(output)


ENCODER_PAIRS = {
    "declutr-vs-mnrl": declutr_pair,
    "declutr-contrastive-vs-mnrl": lambda model, args: declutr_pair(model, args, mlm_weight=0.0),
    "nli-supcon-vs-softmax": nli_pair,
    "scale-vs-setfit": scale_pair,
}
PAIRS = [*ENCODER_PAIRS, "multiview-vs-gru"]


def step_seconds(loss, features, labels, optimizer, device: str, precision: str) -> float:
    features = [batch_to_device(dict(f), device) for f in features]
    labels = labels.to(device) if labels is not None else None
    synchronize(device)
    start = time.perf_counter()
    autocast = (
        torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)
        if precision == "bf16"
        else contextlib.nullcontext()
    )
    with autocast:
        out = loss(features, labels)
        total = sum(out.values()) if isinstance(out, dict) else out
    total.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    synchronize(device)
    return time.perf_counter() - start


def waits_for_the_device(loss, features, labels, optimizer, device: str, precision: str) -> list[str]:
    """The lines (file:line, of any package) where one step made the host wait for the GPU, by CUDA's
    synchronization debug mode; on a CPU, none can be seen."""
    if torch.device(device).type != "cuda":
        return []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step_seconds(loss, features, labels, optimizer, device, precision)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    # step_seconds' own synchronize() calls are the measurement's, not the step's.
    return sorted(
        {
            f"{w.filename}:{w.lineno}"
            for w in caught
            if "synchroniz" in str(w.message) and not w.filename.endswith("gpu_step.py")
        }
    )


def synchronize(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def peak_mib(device: str) -> float | None:
    return torch.cuda.max_memory_allocated() / 2**20 if torch.device(device).type == "cuda" else None


def reset_peak(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats()


def profile_table(loss, features, labels, optimizer, device: str, precision: str, rows: int = 12) -> str:
    """The ops of one step that took the most time on the device (the CPU where there is none)."""
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.device(device).type == "cuda"
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    with profile(activities=activities) as profiler:
        step_seconds(loss, features, labels, optimizer, device, precision)
    return profiler.key_averages().table(
        sort_by="self_cuda_time_total" if cuda else "self_cpu_time_total", row_limit=rows
    )


def measure(pair: dict, device: str, precision: str, find_syncs: bool, profile: bool = False) -> dict:
    """Median step of the method and of the baseline (alternating, after a warm-up pass over every batch, each arm
    with its own optimizer over its model and its loss's own parameters) and the peak memory of each one's steps."""
    losses = {arm: pair[arm].to(device) for arm in ("method", "baseline")}
    optimizers = {
        arm: torch.optim.AdamW(optimized_parameters(loss.model, [loss]), lr=1e-6) for arm, loss in losses.items()
    }
    # A warm-up pass over every batch first: cuDNN and cuBLAS build a plan for each new shape (tens of ms for
    # attention in bf16), which training pays once per padded length, not every step.
    for batch in pair["batches"]:
        for arm, loss in losses.items():
            step_seconds(loss, *batch[arm], optimizers[arm], device, precision)
    seconds, peaks = {"method": [], "baseline": []}, {"method": 0.0, "baseline": 0.0}
    for step, batch in enumerate(pair["batches"]):
        for arm in ("method", "baseline")[:: 1 if step % 2 else -1]:
            reset_peak(device)
            seconds[arm].append(step_seconds(losses[arm], *batch[arm], optimizers[arm], device, precision))
            peaks[arm] = max(peaks[arm], peak_mib(device) or 0.0)
    median = {arm: statistics.median(values) for arm, values in seconds.items()}
    examples = statistics.mean(b["examples"] for b in pair["batches"])
    row = {
        "median_seconds": median,
        "examples_per_second": {arm: examples / s for arm, s in median.items()},
        "method_over_baseline": median["method"] / median["baseline"],
        "peak_mib": peaks if torch.device(device).type == "cuda" else None,
    }
    if "flops" in pair["batches"][0]:
        achieved = statistics.mean(b["flops"] for b in pair["batches"]) / median["method"] / 1e12
        padded = statistics.mean(b["padded_flops"] for b in pair["batches"]) / median["method"] / 1e12
        peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in device_name(device)), None)
        row["method_tflops"] = achieved
        row["mfu_of_bf16_peak"] = achieved / peak if peak else None
        row["padded_mfu_of_bf16_peak"] = padded / peak if peak else None
    if "mlm_share" in pair["batches"][0]:  # the target: MLM costs no more than its head's share of the FLOPs
        row["mlm_share_of_flops"] = statistics.mean(b["mlm_share"] for b in pair["batches"])
    if profile:
        row["profile"] = {
            arm: profile_table(losses[arm], *pair["batches"][-1][arm], optimizers[arm], device, precision)
            for arm in losses
        }
    if find_syncs:
        row["device_waits"] = {
            arm: waits_for_the_device(losses[arm], *pair["batches"][-1][arm], optimizers[arm], device, precision)
            for arm in losses
        }
    return row


def device_name(device: str) -> str:
    return torch.cuda.get_device_name(device) if torch.device(device).type == "cuda" else "cpu"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--encoders",
        nargs="+",
        default=["minilm", "bert-base"],
        help="minilm, bert-base (random weights) or a saved model's path",
    )
    parser.add_argument(
        "--base",
        default=None,
        help="the model whose config and tokenizer minilm and bert-base use (default all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--random-weights",
        action="store_true",
        help="minilm with random weights: only --base's config and tokenizer are read (the same speed)",
    )
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"])
    parser.add_argument("--pairs", nargs="+", default=PAIRS, choices=PAIRS)
    parser.add_argument(
        "--batch-documents", type=int, default=32, help="DeCLUTR: documents per batch (2 anchors, 2 positives each)"
    )
    parser.add_argument("--batch-pairs", type=int, default=64, help="NLI: pairs per batch")
    parser.add_argument("--batch-sentences", type=int, default=256, help="multi-view: sentences per batch")
    parser.add_argument("--max-length", type=int, default=256, help="DeCLUTR: longest span in tokens")
    parser.add_argument(
        "--length-groups",
        type=int,
        default=None,
        help="DeCLUTRLoss's and NLISupConLoss's length_groups (default theirs; 1: one padded pass per column)",
    )
    parser.add_argument(
        "--call-tokens",
        type=int,
        default=None,
        help="what one more encoder call costs the length groups' cut, in tokens, on --device's type (default "
        "st_contrastive.losses.length_groups.CALL_TOKENS; 0: the cut with the fewest tokens)",
    )
    parser.add_argument(
        "--parsed",
        default=None,
        help="multi-view: a parsed corpus (st-contrastive parse); default "
        "the first Wikipedia articles, parsed by spaCy into runs/benchmarks/",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=10,
        help="batches, each timed once per loss after a warm-up pass over them all, is --repeats + 1",
    )
    parser.add_argument(
        "--cached-anchors",
        type=int,
        nargs="*",
        default=[],
        help="CachedDeCLUTRLoss's peak memory against DeCLUTRLoss's at these anchors per batch, on --encoders' first",
    )
    parser.add_argument("--find-syncs", action="store_true", help="list where each loss's step waits for the GPU")
    parser.add_argument("--profile", action="store_true", help="print each step's costliest ops (torch.profiler)")
    parser.add_argument("--output", default="benchmarks/results/gpu.json", help="JSON results path")
    args = parser.parse_args(argv)
    base = args.base or default_model()
    if args.call_tokens is not None:
        CALL_TOKENS[torch.device(args.device).type] = args.call_tokens
    if "multiview-vs-gru" in args.pairs:  # before any model is built: a missing parse cache is parsed now
        parsed = parsed_wikipedia(args.parsed, args.batch_sentences * (args.repeats + 1))

    rows = []
    results = {
        "device": device_name(args.device),
        "torch": torch.__version__,
        "weights": "random" if args.random_weights else "trained",
        "length_groups": args.length_groups,
        "call_tokens": CALL_TOKENS.get(torch.device(args.device).type, 0),
        "rows": rows,
    }
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    for pair_name in args.pairs:
        for encoder in args.encoders if pair_name in ENCODER_PAIRS else ["tree-lstm"]:
            for precision in args.precisions:
                torch.manual_seed(0)
                if pair_name in ENCODER_PAIRS:
                    model = load_encoder(encoder, base, args.random_weights, args.device)
                    model.train()
                    pair = ENCODER_PAIRS[pair_name](model, args)
                else:
                    pair = multiview_pair(parsed, args)
                row = {"encoder": encoder, "pair": pair_name, "precision": precision}
                row |= measure(pair, args.device, precision, args.find_syncs, args.profile)
                rows.append(row)
                print(row_line(row), flush=True)
                output.write_text(json.dumps(results, indent=2) + "\n")  # a run cut short keeps its rows
                del pair
                if torch.device(args.device).type == "cuda":
                    torch.cuda.empty_cache()
    if args.cached_anchors:
        from benchmarks import cached_memory

        model = load_encoder(args.encoders[0], base, args.random_weights, "cpu")
        folder = tempfile.mkdtemp(prefix="cached-memory-")
        model.save(folder)
        results["cached_memory"] = cached_memory.main(
            [
                "--model",
                folder,
                "--anchors",
                *map(str, args.cached_anchors),
                "--output",
                str(output.with_name("cached_memory_" + output.name)),
            ]
        )
    output.write_text(json.dumps(results, indent=2) + "\n")
    return results


def row_line(row: dict) -> str:
    mfu, peak = row.get("mfu_of_bf16_peak"), row["peak_mib"]
    line = (
        f"{row['encoder']:<10} {row['pair']:<22} {row['precision']:<5} "
        f"method/baseline x{row['method_over_baseline']:.2f}  {row['examples_per_second']['method']:8.1f} vs "
        f"{row['examples_per_second']['baseline']:8.1f} examples/s"
    )
    line += f"  peak {peak['method']:.0f} vs {peak['baseline']:.0f} MiB" if peak else ""
    line += f"  MFU {mfu:.1%} (padded tokens counted: {row['padded_mfu_of_bf16_peak']:.1%})" if mfu is not None else ""
    if "mlm_share_of_flops" in row:
        line += f"  (the MLM head's share of the FLOPs: {row['mlm_share_of_flops']:.1%})"
    for arm, table in row.get("profile", {}).items():
        line += f"\n  {arm}'s step, costliest ops:\n{table}"
    for arm, lines in row.get("device_waits", {}).items():
        line += f"\n    {arm} waits for the device at: {', '.join(lines) or 'nowhere'}"
    return line


if __name__ == "__main__":
    main()
