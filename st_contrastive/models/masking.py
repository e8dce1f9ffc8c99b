"""BERT masking of token ids: the data preparation of every MLM term (DeCLUTR's anchors, MLM pretraining)."""

from __future__ import annotations

import torch
from transformers import DataCollatorForLanguageModeling

from st_contrastive.config.objectives import Masking

IGNORE_INDEX = -100  # the label PyTorch's cross-entropy skips: positions that are not masked


def mask_tokens(
    input_ids: torch.Tensor,
    tokenizer,
    mlm_probability: float = Masking.mlm_probability,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT masking: ``mlm_probability`` of the non-special tokens become targets, 80% [MASK], 10% random, 10% kept.

    Returns the masked ids and the labels (the original id at targets, ``IGNORE_INDEX`` elsewhere). The masking is
    transformers' own (``DataCollatorForLanguageModeling.torch_mask_tokens``, the same path MLM pretraining takes),
    drawing from ``generator``; special tokens, padding included, are never masked.
    """
    Masking(mlm_probability)  # refuses a bad probability, naming it
    masker = DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability)
    masker.generator = generator
    cpu_ids = input_ids.detach().cpu()
    special = torch.isin(cpu_ids, torch.tensor(sorted(tokenizer.all_special_ids)))
    masked, labels = masker.torch_mask_tokens(cpu_ids.clone(), special_tokens_mask=special)
    return masked.to(input_ids.device), labels.to(input_ids.device)
