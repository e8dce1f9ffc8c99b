"""The SBERT NLI head: a softmax classifier over ``(u, v, |u−v|)`` of a premise and a hypothesis embedding."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.arguments import at_least, require
from st_contrastive.models.heads.head import Head

NLI_LABELS = ("entailment", "neutral", "contradiction")  # SNLI/MultiNLI label ids 0, 1, 2


class NLIClassifier(Head):
    """A softmax classifier over ``(u, v, |u−v|)``.

    By default one linear layer: the classifier of sentence-transformers' ``SoftmaxLoss`` (SBERT). With
    ``hidden_size`` it has two layers (linear, ReLU, linear), the "two-layer softmax classifier" of the SupCon
    NLI paper, which does not say more of it. ``labels`` are the class names in id order (SNLI's by default).
    With ``normalize`` it scales each embedding to unit length first: a head trained inside sentence-transformers'
    MatryoshkaLoss, which hands the loss unit vectors, then reads at prediction what it read in training. Saved as a
    folder with ``config.json`` and ``model.safetensors`` (:meth:`save`, :meth:`load`), so a trained
    head can label new pairs with the encoder.
    """

    config_keys: ClassVar[list[str]] = ["embedding_dimension", "labels", "hidden_size", "normalize"]

    def __init__(
        self,
        embedding_dimension: int,
        labels: Sequence[str] = NLI_LABELS,
        hidden_size: int | None = None,
        normalize: bool = False,
    ):
        super().__init__()
        at_least("embedding_dimension", embedding_dimension, 1)
        if hidden_size is not None:
            at_least("hidden_size", hidden_size, 1)
        require("labels", labels, len(labels) >= 2, "a classifier needs at least two labels")
        self.embedding_dimension = embedding_dimension
        self.labels = list(labels)
        self.hidden_size = hidden_size
        self.normalize = normalize
        features = 3 * embedding_dimension
        self.hidden = nn.Sequential(nn.Linear(features, hidden_size), nn.ReLU()) if hidden_size else nn.Identity()
        self.linear = nn.Linear(hidden_size or features, len(self.labels))

    def forward(self, premises: torch.Tensor, hypotheses: torch.Tensor) -> torch.Tensor:
        if self.normalize:
            premises, hypotheses = (
                nn.functional.normalize(premises, dim=-1),
                nn.functional.normalize(hypotheses, dim=-1),
            )
        features = torch.cat([premises, hypotheses, (premises - hypotheses).abs()], dim=1)
        return self.linear(self.hidden(features.to(self.linear.weight.dtype)))

    @torch.no_grad()
    def predict_proba(self, premises: torch.Tensor | np.ndarray, hypotheses: torch.Tensor | np.ndarray) -> np.ndarray:
        """Label probabilities per (premise, hypothesis) embedding pair, ``(pairs, len(labels))``."""
        device = self.linear.weight.device
        logits = self(torch.as_tensor(premises, device=device), torch.as_tensor(hypotheses, device=device))
        return logits.float().softmax(dim=-1).cpu().numpy()

    def predict(self, premises: torch.Tensor | np.ndarray, hypotheses: torch.Tensor | np.ndarray) -> list[str]:
        """The most probable label name per pair."""
        return [self.labels[i] for i in self.predict_proba(premises, hypotheses).argmax(axis=1)]


def load_nli_classifier(path: str | Path) -> NLIClassifier:
    """The head saved by ``NLIClassifier.save`` (or ``NLISupConLoss.save_classifier``): a folder or a Hub id."""
    return NLIClassifier.load(str(path))


def predict_nli(
    model: SentenceTransformer, classifier: NLIClassifier, premises: Sequence[str], hypotheses: Sequence[str]
) -> list[str]:
    """NLI labels of sentence pairs, from the encoder's embeddings and a trained head."""
    u = model.encode(list(premises), convert_to_tensor=True)
    v = model.encode(list(hypotheses), convert_to_tensor=True)
    return classifier.predict(u, v)
