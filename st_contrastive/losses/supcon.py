"""Supervised contrastive loss (Khosla et al., 2020): the shared core and the label-based loss."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Literal

import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from sentence_transformers.util import all_gather, all_gather_with_grad, get_rank
from torch import nn

logger = logging.getLogger(__name__)

Similarity = Literal["cosine", "dot"]


def similarity_matrix(anchors: torch.Tensor, candidates: torch.Tensor, similarity: Similarity) -> torch.Tensor:
    """Anchor × candidate similarities in float32 (even under autocast)."""
    anchors, candidates = anchors.float(), candidates.float()
    if similarity == "cosine":
        anchors, candidates = F.normalize(anchors, dim=-1), F.normalize(candidates, dim=-1)
    elif similarity != "dot":
        raise ValueError(f"similarity must be 'cosine' or 'dot', not {similarity!r}")
    return anchors @ candidates.T


def supcon(
    similarities: torch.Tensor, positive_mask: torch.Tensor, candidate_mask: torch.Tensor, temperature: float
) -> tuple[torch.Tensor, int]:
    """Mean over anchors of ``−1/|P(i)| Σ_{p∈P(i)} log(exp(s_ip/τ) / Σ_{a∈A(i)} exp(s_ia/τ))``.

    ``positive_mask[i, j]`` marks the positives ``P(i)`` of anchor ``i``; ``candidate_mask[i, j]`` the items
    ``A(i)`` in its denominator (positives and negatives; never the anchor itself). Anchors without a positive
    drop out; returns the loss and how many anchors dropped out. With no anchor left the loss is a zero that
    keeps the graph (never NaN).
    """
    positive_mask = positive_mask & candidate_mask
    logits = (similarities / temperature).masked_fill(~candidate_mask, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    num_positives = positive_mask.sum(dim=1)
    has_positive = num_positives > 0
    dropped = int((~has_positive).sum())
    if not has_positive.any():
        return similarities.sum() * 0.0, dropped
    per_anchor = log_prob.masked_fill(~positive_mask, 0.0).sum(dim=1)[has_positive] / num_positives[has_positive]
    return -per_anchor.mean(), dropped


class SupConLoss(nn.Module):
    """Label-based supervised contrastive loss over sentence embeddings: same label = positive.

    Every sentence is an anchor; its positives are the other sentences of its label, its denominator every other
    sentence of the batch. Equals pytorch-metric-learning's ``SupConLoss`` for cosine similarity. Input: one text
    column and an integer ``label`` column. With ``gather_across_devices`` local anchors are scored against the
    sentences of every rank.
    """

    def __init__(
        self,
        model: SentenceTransformer,
        temperature: float = 0.1,
        similarity: Similarity = "cosine",
        gather_across_devices: bool = False,
    ) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature
        self.similarity = similarity
        self.gather_across_devices = gather_across_devices

    def forward(self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor) -> torch.Tensor:
        embeddings = torch.cat([self.model(features)["sentence_embedding"] for features in sentence_features])
        labels = labels.repeat(len(embeddings) // len(labels))  # several text columns share the row's label
        return self.compute_loss(embeddings, labels)

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        candidates, candidate_labels, offset = embeddings, labels, 0
        if self.gather_across_devices:
            candidates, candidate_labels = all_gather_with_grad(embeddings), all_gather(labels)
            offset = get_rank() * len(embeddings) if len(candidates) > len(embeddings) else 0
        similarities = similarity_matrix(embeddings, candidates, self.similarity)
        rows = torch.arange(len(embeddings), device=embeddings.device)
        not_self = torch.ones_like(similarities, dtype=torch.bool)
        not_self[rows, rows + offset] = False
        positives = labels[:, None] == candidate_labels[None, :]
        loss, dropped = supcon(similarities, positives, not_self, self.temperature)
        if dropped == len(embeddings):
            logger.warning("No sentence in this batch shares its label with another: SupCon term is zero.")
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "similarity": self.similarity}

    @property
    def citation(self) -> str:
        return """
@inproceedings{khosla2020supervised,
    title = {Supervised Contrastive Learning},
    author = {Khosla, Prannay and Teterwak, Piotr and Wang, Chen and Sarna, Aaron and Tian, Yonglong and Isola, Phillip and Maschinot, Aaron and Liu, Ce and Krishnan, Dilip},
    booktitle = {Advances in Neural Information Processing Systems},
    year = {2020},
}
"""
