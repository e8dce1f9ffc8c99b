"""Held-out evaluation of MLM pretraining: the held-out blocks masked once, the losses measured on them, and the
unigram (token frequency) loss a useful model must beat."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from datasets import Dataset
from transformers import BertTokenizerFast

from st_contrastive.pretraining.block_masking import BlockMaskingCollator
from st_contrastive.pretraining.model import MaskedPositionsMLM

# The held-out loss is always measured at BERT's 15 %, so runs that train at another rate stay comparable.
HELD_OUT_MLM_PROBABILITY = 0.15


def fixed_masked_batches(blocks: Dataset, tokenizer: BertTokenizerFast, batch_size: int, seed: int) -> list[dict]:
    """Mask the held-out blocks once, so the loss before and after training is measured on identical inputs."""
    collator = BlockMaskingCollator(tokenizer, HELD_OUT_MLM_PROBABILITY, seed + 1)
    rows = blocks.select_columns(["input_ids", "block"]).to_list()
    return [collator(rows[i : i + batch_size]) for i in range(0, len(rows), batch_size)]


@torch.no_grad()
def held_out_mlm_losses(model: MaskedPositionsMLM, batches: list[dict], mask_token_id: int) -> tuple[float, float]:
    """Mean cross-entropy (float32, eval mode) over all labelled tokens, and over those shown as [MASK] only.

    The second is the honest measure of context use: on the 10% of labelled tokens left unchanged a model scores
    well by copying its input, which lowers the first number long before the model reads the context.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    losses, shown_as_mask = [], []
    for batch in batches:
        input_ids, labels = batch["input_ids"].to(device), batch["labels"].to(device)
        labelled = labels != -100
        hidden = model.bert(input_ids=input_ids)[0]
        logits = model.cls(hidden[labelled]).float()
        losses.append(F.cross_entropy(logits, labels[labelled], reduction="none"))
        shown_as_mask.append(input_ids[labelled] == mask_token_id)
    model.train(was_training)
    losses, shown_as_mask = torch.cat(losses), torch.cat(shown_as_mask)
    return float(losses.mean()), float(losses[shown_as_mask].mean())


def unigram_loss(blocks: Dataset, batches: list[dict], mask_token_id: int, vocab_size: int) -> float:
    """Loss on the held-out [MASK] tokens of predicting from corpus token frequencies alone.

    MLM training first plateaus at this value; a model is only useful once it is clearly below it.
    """
    counts = torch.ones(vocab_size)  # add-one smoothing
    for chunk in blocks.iter(batch_size=10_000):
        counts += torch.bincount(torch.tensor(chunk["input_ids"]).flatten(), minlength=vocab_size)
    log_probs = (counts / counts.sum()).log()
    targets = torch.cat([b["labels"][b["input_ids"] == mask_token_id] for b in batches])
    return float(-log_probs[targets].mean())
