"""SCALe's objective: (1−λ)·cross-entropy + λ·supervised contrastive loss over labels, with dropout views."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from typing import Any

import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.config.objectives import SCALeObjective
from st_contrastive.losses.contrastive_core import (
    Similarity,
    gather_candidates,
    global_mean_factor,
    similarity_matrix,
    supcon,
)
from st_contrastive.losses.length_groups import LengthGroups, checked_groups
from st_contrastive.losses.loss_components import LossComponents, once_per_batch, reduced_by_a_modifier
from st_contrastive.losses.pooled_embedding import before_final_normalize
from st_contrastive.models.dropout import dropout_rate
from st_contrastive.models.heads.label_classifier import LabelClassifier

logger = logging.getLogger(__name__)


class SCALeLoss(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer,
        classifier: LabelClassifier | None = None,
        num_labels: int | None = None,
        supcon_weight: float = SCALeObjective.supcon_weight,
        temperature: float = SCALeObjective.temperature,
        dropout_rates: Sequence[float] = SCALeObjective.dropout_rates,
        similarity: Similarity = SCALeObjective.similarity,
        gather_across_devices: bool = False,
        length_groups: int = 4,
    ) -> None:
        """Cross-entropy of a label classifier plus supervised contrastive loss, on several dropout views of each
        sentence (SCALe, after SupCL-Seq).

        While training, every sentence is encoded once per rate in ``dropout_rates``, with every dropout module of
        the encoder set to that rate (and restored afterwards). The views of a sentence are positives of each
        other and of every sentence of its label; every other view in the batch is a negative. Cross-entropy is
        the mean over the views. The total is ``(1−λ)·CE + λ·SupCon`` with ``λ = supcon_weight``; with
        ``supcon_weight=0`` (the CE-only arm) the sentence is encoded once, with the encoder's own dropout. In
        evaluation the views would be identical, so one is computed. With ``labels=None`` the loss returns
        ``([embeddings], logits)``, so ST's ``LabelAccuracyEvaluator`` works.

        Args:
            model (SentenceTransformer): The encoder to train. When it ends in ``Normalize``, the head and SupCon
                read the pooled embedding before it (as :class:`~st_contrastive.losses.NLISupConLoss` does); the
                model keeps its ``Normalize``.
            classifier (LabelClassifier | None): The softmax head; default a new one with ``num_labels`` classes.
            num_labels (int | None): Classes of the new head when no ``classifier`` is given.
            supcon_weight (float): λ in [0, 1]. Defaults to 0.9 (the paper's).
            temperature (float): τ of SupCon. Defaults to 0.3 (the paper's).
            dropout_rates (Sequence[float]): One view per rate. Defaults to the paper's 0.0, 0.1, 0.2, 0.3, 0.4.
            similarity (str): ``"cosine"`` or ``"dot"``, computed in float32. Defaults to ``"cosine"``.
            gather_across_devices (bool): Score local views against the views of every rank; both terms weight
                each rank's mean by its share of the rows, so DDP trains the mean over the global batch. Defaults
                to False.
            length_groups (int): Embed each view's sentences in at most this many groups of similar length, each
                padded only to its own longest sentence (:mod:`~st_contrastive.losses.length_groups`): the same
                loss and gradients without most of the padding (dropout draws its masks group by group). 1: one
                padded pass per view. Defaults to 4.

        References:
            - Chauhan, Rai, Jain and Raut, SCALe: Supervised Contrastive approach for Active Learning
              (University of Wisconsin-Madison; ``../shared/papers/scale_active_learning.md``)
            - Sedghamiz et al., SupCL-Seq: Supervised Contrastive Learning for Downstream Optimized Sequence
              Representations, 2021: https://arxiv.org/abs/2109.07424
            - Khosla et al., Supervised Contrastive Learning, NeurIPS 2020: https://arxiv.org/abs/2004.11362

        Requirements:
            1. Single sentences with an integer class label.
            2. Batches that hold several classes even when the labelled pool is tiny: train with
               :class:`~st_contrastive.data.ClassBalancedBatchSampler`.

        Inputs:
            +---------------------------+--------------+
            | Texts                     | Labels       |
            +===========================+==============+
            | (sentence) single texts   | class (int)  |
            +---------------------------+--------------+

        Relations:
            - With one dropout rate and ``supcon_weight=1`` it is :class:`~st_contrastive.losses.SupConLoss`
              with the sentence's own view as an extra positive.
            - With ``supcon_weight=0`` it is sentence-transformers' ``SoftmaxLoss`` idea for single sentences: CE
              of a linear head on the sentence embedding.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer
                from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

                from st_contrastive.data import ClassBalancedBatchSampler
                from st_contrastive.losses import SCALeLoss
                from st_contrastive.training import ContrastiveTrainer

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                model = SentenceTransformer(modules=list(model)[:-1])  # Transformer + Pooling
                train_dataset = Dataset.from_dict({
                    "text": ["What is the capital of France?", "Who wrote Hamlet?",
                             "Where is Lima?", "Who painted the Mona Lisa?"],
                    "label": [0, 1, 0, 1],
                })
                loss = SCALeLoss(model, num_labels=2)
                args = SentenceTransformerTrainingArguments(output_dir="runs/scale-example", max_steps=2,
                                                            batch_sampler=ClassBalancedBatchSampler)
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss).train()
                loss.classifier.save("runs/scale-example/classifier")
        """
        super().__init__()
        # refuses a bad argument
        SCALeObjective(supcon_weight, temperature, tuple(dropout_rates), similarity)
        if classifier is None:
            if num_labels is None:
                raise ValueError("pass a classifier or num_labels (the number of classes)")
            classifier = LabelClassifier(model.get_embedding_dimension(), num_labels).to(model.device)
        self.model = model
        self.classifier = classifier
        self.num_labels = len(classifier.labels)
        self.supcon_weight = supcon_weight
        self.temperature = temperature
        self.dropout_rates = tuple(dropout_rates)
        self.similarity = similarity
        self.gather_across_devices = gather_across_devices
        self.length_groups = checked_groups(length_groups)

    def views(self, features: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """The sentence embeddings of ``features`` once per dropout rate (once in evaluation or for CE only)."""
        # None: the encoder's own dropout (CE only)
        rates = (
            [None] if self.supcon_weight == 0 else self.dropout_rates if self.model.training else self.dropout_rates[:1]
        )
        # Each view's length groups, made once per batch: the model writes its outputs into the dicts it reads (and
        # AdaptiveLayerLoss each layer's, which it reads back at the loss's next call).
        groups = once_per_batch(
            self, [features], lambda: [LengthGroups.of([features], self.length_groups) for _ in rates]
        )
        views = []
        for rate, view in zip(rates, groups):
            with nullcontext() if rate is None else dropout_rate(self.model, rate), before_final_normalize(self.model):
                views.append(view.embed(self.model)[0][0])
        return views

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None
    ) -> dict[str, torch.Tensor] | tuple[list[torch.Tensor], torch.Tensor]:
        (features,) = sentence_features
        if labels is not None:
            labels = labels.view(-1)
            self.classifier.check_label_ids(labels)
        views = self.views(features)
        if labels is None:
            return [views[0]], self.classifier(views[0])
        losses = LossComponents()
        if not reduced_by_a_modifier(self.model, views[0]):  # the head reads the full embedding: CE at full size
            cross_entropy = torch.stack([F.cross_entropy(self.classifier(view), labels) for view in views]).mean()
            cross_entropy = cross_entropy * global_mean_factor(
                len(labels), cross_entropy.device, gather_across_devices=self.gather_across_devices
            )
            losses["cross_entropy"] = (1 - self.supcon_weight) * cross_entropy
        if self.supcon_weight > 0:
            losses["supcon"] = self.supcon_weight * self.label_supcon(torch.cat(views), labels.repeat(len(views)))
        return losses

    def label_supcon(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        candidates = gather_candidates(embeddings, labels, gather_across_devices=self.gather_across_devices)
        positives = labels[:, None] == candidates.labels[None, :]
        similarities = similarity_matrix(embeddings, candidates.embeddings, self.similarity)
        loss, _ = supcon(
            similarities,
            positives,
            candidates.not_self(len(embeddings)),
            self.temperature,
            gather_across_devices=self.gather_across_devices,
        )
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "classifier": self.classifier.get_config_dict(),
            "num_labels": self.num_labels,
            "supcon_weight": self.supcon_weight,
            "temperature": self.temperature,
            "dropout_rates": list(self.dropout_rates),
            "similarity": self.similarity,
            "gather_across_devices": self.gather_across_devices,
            "length_groups": self.length_groups,
        }

    @property
    def citation(self) -> str:
        return """
@misc{chauhan2022scale,
    title = {SCALe: Supervised Contrastive approach for Active Learning},
    author = {Chauhan, Hardik and Rai, Kaushal and Jain, Ansh and Raut, Ritu},
    institution = {University of Wisconsin-Madison},
    year = {2022},
    note = {the paper states no year; its latest references are from 2021},
}
"""
