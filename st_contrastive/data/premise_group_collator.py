"""sentence-transformers' collator plus the premise group of each row, taken from the premise text itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator


@dataclass
class PremiseGroupDataCollator(SentenceTransformerDataCollator):
    """Tokenizes the (premise, hypothesis) columns as sentence-transformers does and adds ``premise_group``: the
    same id for rows with the same premise text, so :class:`~st_contrastive.losses.NLISupConLoss` groups by text
    rather than by token ids (which merge premises that tokenize alike, or alike after truncation).

    The trainer hands ``premise_group`` to the loss with the premise's features (its name starts with the premise
    column's). Use it with ``PremiseGroupBatchSampler``: ``data_collator=PremiseGroupDataCollator(model.preprocess)``.
    """

    premise_column: str = "premise"

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        batch = super().__call__(features)
        premises = [row[self.premise_column] for row in features]
        ids = {text: i for i, text in enumerate(dict.fromkeys(premises))}
        batch[f"{self.premise_column}_group"] = torch.tensor([ids[text] for text in premises])
        return batch
