"""SupConLoss and SCALeLoss steps with their sentences in length groups against one padded pass, in one process.

On SST-2 training sentences (their lengths vary from a word to a paragraph): SupConLoss on batches of 64 and
SCALeLoss on batches of 16 (the active-learning rounds' batch) with two dropout views, each step timed with
``length_groups=4`` (the default) and ``length_groups=1`` (a padded pass per column or view, what
sentence-transformers' losses compute), alternating which runs first; and sentence-transformers'
``BatchAllTripletLoss`` on SupConLoss's batches, the library's own loss over class labels. Prints the step ratios,
the share of padding tokens a padded pass computes, each setting's peak memory, and what one more encoder call costs
in tokens of its work (``length_groups.CALL_TOKENS``).

    python benchmarks/supcon_length_groups.py [--model PATH] [--repeats 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch
from sentence_transformers.sentence_transformer.losses import BatchAllTripletLoss

from benchmarks.peak_memory import peak_memory
from st_contrastive.data.text_classification import load_text_classification
from st_contrastive.default_model import default_model
from st_contrastive.losses import SCALeLoss, SupConLoss
from st_contrastive.scale.round_training import load_encoder
from st_contrastive.training import optimized_parameters


def time_step(loss, features, labels, optimizer) -> tuple[float, int]:
    """Seconds and peak bytes of one step (forward, backward, optimizer)."""
    with peak_memory("cpu") as peak:
        start = time.perf_counter()
        out = loss([dict(column) for column in features], labels)
        (sum(out.values()) if isinstance(out, dict) else out).backward()
        optimizer.step()
        optimizer.zero_grad()
        seconds = time.perf_counter() - start
    return seconds, peak["bytes"]


def padding_share(features: list[dict]) -> float:
    mask = torch.cat([column["attention_mask"].flatten() for column in features])
    return 1 - mask.float().mean().item()


def measure(model, losses: dict, batches: list, repeats: int) -> dict:
    """Median step seconds and the highest peak of each loss over the batches after the first (a warm-up)."""
    optimizer = torch.optim.AdamW(optimized_parameters(model, list(losses.values())), lr=1e-7)
    times, peaks = {name: [] for name in losses}, {name: 0 for name in losses}
    for step, (features, labels) in enumerate(batches[: repeats + 1]):
        order = list(losses.items())[:: 1 if step % 2 else -1]
        for name, loss in order:
            seconds, peak = time_step(loss, features, labels, optimizer)
            if step:
                times[name].append(seconds)
                peaks[name] = max(peaks[name], peak)
    return {name: {"seconds": statistics.median(times[name]), "peak_mib": peaks[name] / 2**20} for name in losses}


def call_tokens(model, repeats: int = 5) -> dict:
    """What one more encoder call costs on this device, in tokens of its work: a step's time (forward and backward)
    over batches of random token ids fitted as ``seconds = call + per_token · tokens``; ``call / per_token`` is what
    ``length_groups.CALL_TOKENS`` holds for the device."""
    shapes = [(1, 4), (4, 16), (16, 16), (16, 32), (16, 48), (32, 48)]
    seconds = []
    for rows, length in shapes:
        features = {
            "input_ids": torch.randint(1000, 2000, (rows, length)),
            "attention_mask": torch.ones(rows, length, dtype=torch.long),
        }
        times = []
        for _ in range(repeats + 1):
            start = time.perf_counter()
            model(dict(features))["sentence_embedding"].sum().backward()
            times.append(time.perf_counter() - start)
        model.zero_grad(set_to_none=True)  # each call's first backward allocates its gradients, as a step's does
        seconds.append(statistics.median(times[1:]))
    per_token, call = np.polyfit([rows * length for rows, length in shapes], seconds, 1)
    return {"call_seconds": float(call), "token_seconds": float(per_token), "call_tokens": float(call / per_token)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model path or Hub id (default all-MiniLM-L6-v2)")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps per setting (after one warm-up)")
    parser.add_argument("--output", default="benchmarks/results/supcon_length_groups.json", help="JSON results path")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = load_encoder(args.model or default_model(), 128)  # Transformer + Pooling, as the rounds train it
    model.train()
    data = load_text_classification("sst2")
    rows = random.Random(0).sample(range(len(data.train_texts)), 64 * (args.repeats + 1))

    def batches(size: int) -> list:
        return [
            (
                [model.tokenize([data.train_texts[i] for i in rows[start : start + size]])],
                torch.tensor([data.train_labels[i] for i in rows[start : start + size]]),
            )
            for start in range(0, size * (args.repeats + 1), size)
        ]

    supcon_batches, scale_batches = batches(64), batches(16)
    results = {"model": args.model or "all-MiniLM-L6-v2", "repeats": args.repeats, "call": call_tokens(model)}
    supcon = measure(
        model,
        {
            "grouped": SupConLoss(model, length_groups=4),
            "padded": SupConLoss(model, length_groups=1),
            "batch_all_triplet": BatchAllTripletLoss(model),
        },
        supcon_batches,
        args.repeats,
    )
    scale = measure(
        model,
        {
            name: SCALeLoss(model, num_labels=2, dropout_rates=(0.0, 0.1), length_groups=groups)
            for name, groups in (("grouped", 4), ("padded", 1))
        },
        scale_batches,
        args.repeats,
    )
    results |= {
        "supcon": supcon
        | {"batch_size": 64, "padding_share": statistics.mean(padding_share(f) for f, _ in supcon_batches)},
        "scale": scale
        | {"batch_size": 16, "padding_share": statistics.mean(padding_share(f) for f, _ in scale_batches)},
        "supcon_grouped_over_padded": supcon["grouped"]["seconds"] / supcon["padded"]["seconds"],
        "supcon_grouped_over_batch_all_triplet": supcon["grouped"]["seconds"] / supcon["batch_all_triplet"]["seconds"],
        "scale_grouped_over_padded": scale["grouped"]["seconds"] / scale["padded"]["seconds"],
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=2))
    for name, label in (("supcon", "SupConLoss, 64 sentences"), ("scale", "SCALeLoss, 16 sentences × 2 views")):
        r = results[name]
        print(
            f"{label}: grouped {r['grouped']['seconds']:.3f}s ({r['grouped']['peak_mib']:.0f} MiB), one padded pass "
            f"{r['padded']['seconds']:.3f}s ({r['padded']['peak_mib']:.0f} MiB); padding {100 * r['padding_share']:.0f} %"
            " of a padded pass's tokens"
        )
    print(
        f"one more encoder call: {results['call']['call_seconds'] * 1000:.0f} ms, the work of "
        f"{results['call']['call_tokens']:.0f} tokens (length_groups.CALL_TOKENS)"
    )
    print(f"SupConLoss grouped / padded step: {results['supcon_grouped_over_padded']:.3f}")
    print(f"SupConLoss grouped / BatchAllTripletLoss step: {results['supcon_grouped_over_batch_all_triplet']:.3f}")
    print(f"SCALeLoss grouped / padded step: {results['scale_grouped_over_padded']:.3f}")
    return results


if __name__ == "__main__":
    main()
