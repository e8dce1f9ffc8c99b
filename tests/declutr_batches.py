"""Documents and a collator whose spans tell where they came from, shared by the tests of DeCLUTR's collator and
loss."""

from __future__ import annotations

import torch

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler

NUM_TOKENS = 600


def span_collator(tokenizer) -> DeCLUTRDataCollator:
    sampler = SpanSampler(num_anchors=2, num_positives=3, min_length=8, max_length=64)
    return DeCLUTRDataCollator(tokenizer, sampler, seed=0)


def documents(count: int = 3) -> list[dict]:
    # Distinct ids per position, so each span's content tells where it came from.
    return [{"token_ids": list(range(100 + d, 100 + d + NUM_TOKENS))} for d in range(count)]


def unmasked(batch: dict) -> torch.Tensor:
    """The anchors' token ids with the masked positions put back."""
    labels = batch["anchor_mlm_labels"]
    return torch.where(labels != -100, labels, batch["anchor_input_ids"])
