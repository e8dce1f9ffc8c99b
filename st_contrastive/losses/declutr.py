"""DeCLUTR: NT-Xent between anchor spans and their averaged positives, plus MLM on the masked anchors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.data.declutr_collator import IGNORE_INDEX, mask_tokens
from st_contrastive.losses.nt_xent import nt_xent
from st_contrastive.models.masked_lm_head import MaskedLMHead


class DeCLUTRLoss(nn.Module):
    """The DeCLUTR objective (Giorgi et al., 2021): ``contrastive_weight·NT-Xent + mlm_weight·MLM``.

    Expects the two inputs made by :class:`~st_contrastive.data.DeCLUTRDataCollator`: ``N·A`` anchors (masked,
    with ``mlm_labels``) and ``N·A·P`` positives. Each anchor embedding is paired with the mean of its ``P``
    positive embeddings; every other anchor and positive in the batch is a negative, so the sibling anchors of
    the same document are hard negatives. While training, the anchors are embedded from their masked tokens and
    the MLM head reads the token embeddings of that same forward pass (as the reference implementation does), so
    MLM costs no second encoder pass. Otherwise (evaluation, or ``mlm_weight=0``) the original tokens are restored.

    ``mlm_weight=0`` gives the contrastive-only ablation and ``contrastive_weight=0`` the MLM-only one (the
    positives are then not encoded at all). Returns ``{"contrastive": ..., "mlm": ...}`` (active terms only).
    """

    def __init__(
        self,
        model: SentenceTransformer,
        temperature: float = 0.05,
        contrastive_weight: float = 1.0,
        mlm_weight: float = 1.0,
        gather_across_devices: bool = False,
    ) -> None:
        super().__init__()
        if contrastive_weight <= 0 and mlm_weight <= 0:
            raise ValueError("at least one of contrastive_weight and mlm_weight must be positive")
        self.model = model
        self.temperature = temperature
        self.contrastive_weight = contrastive_weight
        self.mlm_weight = mlm_weight
        self.gather_across_devices = gather_across_devices
        if mlm_weight > 0:
            if model.tokenizer is None or model.tokenizer.mask_token_id is None:
                raise ValueError(
                    "the model's tokenizer has no mask token, so MLM is impossible: pass mlm_weight=0 for "
                    "contrastive-only training"
                )
            self.mlm_head = MaskedLMHead(model[0].auto_model)

    def forward(self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        anchor_features, *positive_inputs = sentence_features
        anchor_features = dict(anchor_features)
        mlm_labels = anchor_features.pop("mlm_labels", None)
        with_mlm = self.mlm_weight > 0 and self.model.training
        if with_mlm and mlm_labels is None:  # legacy fit(): plain tokenized text, so mask here
            anchor_features["input_ids"], mlm_labels = mask_tokens(anchor_features["input_ids"], self.model.tokenizer)
        if mlm_labels is not None and not with_mlm:
            masked = mlm_labels != IGNORE_INDEX
            anchor_features["input_ids"] = torch.where(masked, mlm_labels, anchor_features["input_ids"])

        anchors = self.model(anchor_features)
        losses = {}
        if self.contrastive_weight > 0:
            mean_positives = self._mean_positives(positive_inputs, len(anchors["sentence_embedding"]))
            contrastive = nt_xent(anchors["sentence_embedding"], mean_positives, self.temperature, self.gather_across_devices)
            losses["contrastive"] = self.contrastive_weight * contrastive
        if with_mlm:
            losses["mlm"] = self.mlm_weight * self.mlm_head(anchors["token_embeddings"], mlm_labels)
        return losses

    def _mean_positives(self, positive_inputs: list[dict[str, torch.Tensor]], num_anchors: int) -> torch.Tensor:
        """The mean positive embedding of each anchor.

        One input holds the ``P`` positives of anchor ``i`` at rows ``i·P … i·P+P−1`` (the collator's layout);
        several inputs hold one positive of every anchor each (``InputExample(texts=[anchor, *positives])``).
        """
        if len(positive_inputs) > 1:
            return torch.stack([self.model(f)["sentence_embedding"] for f in positive_inputs]).mean(dim=0)
        positives = self.model(positive_inputs[0])["sentence_embedding"]
        if len(positives) % num_anchors:
            raise ValueError(f"{len(positives)} positives cannot be split evenly among {num_anchors} anchors")
        return positives.view(num_anchors, len(positives) // num_anchors, -1).mean(dim=1)

    def save_masked_lm(self, path: str) -> None:
        """Write the encoder with its MLM head as a ``*ForMaskedLM`` checkpoint (to continue MLM training later)."""
        if self.mlm_weight <= 0:
            raise ValueError("this loss trains no MLM head (mlm_weight=0)")
        self.mlm_head.save_masked_lm(self.model[0].auto_model, self.model.tokenizer, path)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "contrastive_weight": self.contrastive_weight,
            "mlm_weight": self.mlm_weight,
        }

    @property
    def citation(self) -> str:
        return """
@inproceedings{giorgi-etal-2021-declutr,
    title = "{D}e{CLUTR}: Deep Contrastive Learning for Unsupervised Textual Representations",
    author = "Giorgi, John and Nitski, Osvald and Wang, Bo and Bader, Gary",
    booktitle = "Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics",
    year = "2021",
    pages = "879--895",
    url = "https://aclanthology.org/2021.acl-long.72",
}
"""
