"""BERT masking of packed blocks, drawn from the block numbers so that a resumed run masks as the uninterrupted one."""

from __future__ import annotations

import numpy as np
import torch

from st_contrastive.models.masking import mask_tokens


class BlockMaskingCollator:
    """BERT masking whose draws are a function of (seed, the batch's block numbers), not of a running generator.

    transformers' collator draws from one generator, so a run resumed from a checkpoint masks differently from the
    uninterrupted run (the skipped batches never draw). Keyed draws make a resumed run identical to it.
    """

    def __init__(self, tokenizer, mlm_probability: float, seed: int):
        self.tokenizer, self.mlm_probability, self.seed = tokenizer, mlm_probability, seed

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        input_ids = torch.tensor([feature["input_ids"] for feature in features])
        key = np.random.default_rng([self.seed, *(feature["block"] for feature in features)]).integers(2**63 - 1)
        masked, labels = mask_tokens(
            input_ids, self.tokenizer, self.mlm_probability, torch.Generator().manual_seed(int(key))
        )
        return {"input_ids": masked, "labels": labels}
