"""A softmax classifier over sentence embeddings, with ``predict`` and ``predict_proba`` (SCALe's CE head)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch
from torch import nn

from st_contrastive.arguments import at_least
from st_contrastive.models.heads.head import Head


class LabelClassifier(Head):
    """Linear layer + softmax from a sentence embedding to one of ``labels``.

    ``labels`` are the class names in id order (an int ``n`` names them ``0 … n−1``). ``forward`` gives logits
    for a loss; :meth:`predict_proba` and :meth:`predict` take embeddings (a tensor or ``model.encode`` output),
    so a pool encoded once can be scored by several heads.
    """

    config_keys: ClassVar[list[str]] = ["embedding_dimension", "labels"]

    def __init__(self, embedding_dimension: int, labels: list[str] | int) -> None:
        super().__init__()
        at_least("embedding_dimension", embedding_dimension, 1)
        self.embedding_dimension = embedding_dimension
        self.labels = [str(i) for i in range(labels)] if isinstance(labels, int) else list(labels)
        if len(self.labels) < 2:
            raise ValueError(f"a classifier needs at least two labels, got {self.labels}")
        self.linear = nn.Linear(embedding_dimension, len(self.labels))

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.linear(embeddings.to(self.linear.weight.dtype))

    @torch.no_grad()
    def predict_proba(self, embeddings: torch.Tensor | np.ndarray) -> np.ndarray:
        """Class probabilities, ``(rows, len(labels))``."""
        embeddings = torch.as_tensor(embeddings, device=self.linear.weight.device)
        return self(embeddings).float().softmax(dim=-1).cpu().numpy()

    def predict(self, embeddings: torch.Tensor | np.ndarray) -> list[str]:
        """The most probable label name per row."""
        return [self.labels[i] for i in self.predict_proba(embeddings).argmax(axis=1)]

    @classmethod
    def from_logistic_regression(cls, estimator, labels: list[str]) -> LabelClassifier:
        """The head that predicts as a fitted scikit-learn ``LogisticRegression`` whose ``classes_`` are label ids.

        A binary fit's one logit becomes the second class's (softmax of ``(0, z)`` is the sigmoid of ``z``);
        a class the fit never saw gets a bias so low that its probability is zero.
        """
        classes = [int(c) for c in estimator.classes_]
        head = cls(estimator.coef_.shape[1], labels)
        weight = torch.zeros_like(head.linear.weight)
        bias = torch.full_like(head.linear.bias, -1e4)
        coef = torch.as_tensor(estimator.coef_, dtype=weight.dtype)
        intercept = torch.as_tensor(estimator.intercept_, dtype=bias.dtype)
        if len(classes) == 2:
            bias[classes[0]] = 0.0
            weight[classes[1]], bias[classes[1]] = coef[0], intercept[0]
        else:
            weight[classes], bias[classes] = coef, intercept
        with torch.no_grad():
            head.linear.weight.copy_(weight)
            head.linear.bias.copy_(bias)
        return head
