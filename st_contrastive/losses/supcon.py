"""Label-based supervised contrastive loss (Khosla et al., 2020) over sentence embeddings."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import torch
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.config.objectives import SupConObjective
from st_contrastive.losses.contrastive_core import Similarity, gather_candidates, similarity_matrix, supcon
from st_contrastive.losses.length_groups import LengthGroups, checked_groups
from st_contrastive.losses.loss_components import once_per_batch

logger = logging.getLogger(__name__)


class SupConLoss(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer,
        temperature: float = SupConObjective.temperature,
        similarity: Similarity = SupConObjective.similarity,
        gather_across_devices: bool = False,
        length_groups: int = 4,
    ) -> None:
        """Supervised contrastive loss: sentences with the same label are positives of each other.

        Every sentence of the batch is an anchor; its positives are the other sentences of its label, its
        denominator every other sentence of the batch. With cosine similarity it equals pytorch-metric-learning's
        ``SupConLoss``. Anchors whose label no other sentence of the batch shares drop out (a batch where none
        shares its label gives a zero loss and a warning, never NaN).

        Args:
            model (SentenceTransformer): The model to train.
            temperature (float): τ, the softmax temperature. Defaults to 0.1 (Khosla et al.).
            similarity (str): ``"cosine"`` or ``"dot"``; computed in float32 even under autocast. Defaults to
                ``"cosine"``.
            gather_across_devices (bool): Score local anchors against the sentences of every rank (negatives grow
                with the number of devices); each rank's mean is weighted by its share of the anchors that have a
                positive, so DDP trains the mean over the global batch. Defaults to False.
            length_groups (int): Embed the batch's text columns together in at most this many groups of similar
                length, each padded only to its own longest sentence (:mod:`~st_contrastive.losses.length_groups`):
                the same loss and gradients without most of the padding. 1: one padded pass per column. Defaults
                to 4.

        References:
            - Khosla et al., Supervised Contrastive Learning, NeurIPS 2020: https://arxiv.org/abs/2004.11362

        Requirements:
            1. Single sentences (or several text columns that all share the row's label) with an integer class
               label.
            2. Batches in which labels repeat; for tiny or imbalanced data use a class-balanced batch sampler.

        Inputs:
            +---------------------------+--------------+
            | Texts                     | Labels       |
            +===========================+==============+
            | (sentence) single texts   | class (int)  |
            +---------------------------+--------------+

        Relations:
            - :func:`~st_contrastive.losses.nt_xent` is this loss with the pair index as the label.
            - :class:`~st_contrastive.losses.NLISupConLoss` anchors on premises instead of every sentence.
            - sentence-transformers' ``BatchAllTripletLoss`` uses the same labels with a margin instead of a softmax.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer

                from st_contrastive.losses import SupConLoss

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                train_dataset = Dataset.from_dict({
                    "text": ["What is the capital of France?", "Who wrote Hamlet?",
                             "Where is Lima?", "Who painted the Mona Lisa?"],
                    "label": [0, 1, 0, 1],
                })
                trainer = SentenceTransformerTrainer(model=model, train_dataset=train_dataset,
                                                     loss=SupConLoss(model))
                trainer.train()
                model.save("runs/supcon-example")
        """
        super().__init__()
        SupConObjective(temperature, similarity)  # refuses a bad argument, naming it
        self.model = model
        self.temperature = temperature
        self.similarity = similarity
        self.gather_across_devices = gather_across_devices
        self.length_groups = checked_groups(length_groups)

    def forward(self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor) -> torch.Tensor:
        sentence_features = list(sentence_features)
        self.warn_without_positives(labels, len(sentence_features))
        # made once per batch: AdaptiveLayerLoss reads each layer's outputs back from the dicts the model received
        groups = once_per_batch(self, sentence_features, lambda: LengthGroups.of(sentence_features, self.length_groups))
        embeddings = torch.cat(groups.embed(self.model)[0])
        labels = labels.repeat(len(embeddings) // len(labels))  # several text columns share the row's label
        return self.compute_loss(embeddings, labels)

    def warn_without_positives(self, labels: torch.Tensor, columns: int) -> None:
        """Warn when no sentence of the batch can have a positive: one text column and no label twice. Read from
        the labels before the encoder runs, so on a GPU it waits only for the batch's copy, not for the forward
        pass. With ``gather_across_devices`` another rank may hold the positives, and nothing is said."""
        if columns == 1 and not self.gather_across_devices and len(labels.unique()) == len(labels):
            logger.warning("No sentence in this batch shares its label with another: SupCon term is zero.")

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        candidates = gather_candidates(embeddings, labels, gather_across_devices=self.gather_across_devices)
        similarities = similarity_matrix(embeddings, candidates.embeddings, self.similarity)
        positives = labels[:, None] == candidates.labels[None, :]
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
            "temperature": self.temperature,
            "similarity": self.similarity,
            "gather_across_devices": self.gather_across_devices,
            "length_groups": self.length_groups,
        }

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
