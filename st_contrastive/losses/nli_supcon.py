"""Supervised contrastive learning on NLI with a cross-entropy head: (1−λ)·CE + λ·premise-anchored SupCon."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.arguments import seed as seed_rule
from st_contrastive.config.objectives import NLISupConObjective
from st_contrastive.losses.contrastive_core import (
    Similarity,
    gather_candidates,
    global_mean_factor,
    similarity_matrix,
    supcon,
)
from st_contrastive.losses.length_groups import LengthGroups, checked_groups
from st_contrastive.losses.loss_components import LossComponents, at_an_earlier_layer, once_per_batch
from st_contrastive.losses.pooled_embedding import before_final_normalize, final_normalize
from st_contrastive.models.heads.nli_classifier import NLIClassifier

logger = logging.getLogger(__name__)


class NLISupConLoss(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer,
        classifier: NLIClassifier | None = None,
        supcon_weight: float = NLISupConObjective.supcon_weight,
        temperature: float = NLISupConObjective.temperature,
        positives: str | int = NLISupConObjective.positives,
        negatives: str | int = NLISupConObjective.negatives,
        similarity: Similarity = NLISupConObjective.similarity,
        entailment_label: int = 0,
        gather_across_devices: bool = False,
        seed: int = 0,
        size_classifiers: dict[int, NLIClassifier] | None = None,
        length_groups: int = 4,
    ) -> None:
        """Cross-entropy of a softmax head over ``(u, v, |u−v|)`` plus premise-anchored supervised contrastive loss.

        The total is ``(1−λ)·CE + λ·SupCon`` with ``λ = supcon_weight``; ``λ = 0`` equals sentence-transformers'
        ``SoftmaxLoss``. For SupCon every distinct premise of the batch is an anchor; its positives are its
        entailed hypotheses in the batch, its negatives the other hypotheses (its neutral and contradiction ones
        and every hypothesis of other premises). The premise and hypothesis embeddings are those of the
        cross-entropy forward pass: no second encoder pass. Anchors with no positive in the batch drop out of the
        SupCon term and are counted (``anchors_without_positive`` of ``anchors_seen``); a batch with none gives a
        zero term and a warning, never NaN. With ``labels=None`` the loss returns ``(embeddings, logits)``, so
        ST's ``LabelAccuracyEvaluator`` works.

        Args:
            model (SentenceTransformer): The model to train. When it ends in ``Normalize`` (a sentence encoder
                such as all-MiniLM-L6-v2), the head and SupCon read the pooled embedding before it (unit-norm
                features leave the head nothing to fit, and CE would reshape the space); the model keeps its
                ``Normalize``, so it encodes as before.
            classifier (NLIClassifier | None): The softmax head; default a new one over SNLI's three labels.
            supcon_weight (float): λ in [0, 1]; 0 is CE only, 1 SupCon only. Defaults to 0.3 (the paper's best
                on STS).
            temperature (float): τ of SupCon. Defaults to 1.0 (the paper's).
            positives (str | int): ``"all"`` entailed hypotheses per anchor, or at most ``k`` drawn at random.
            negatives (str | int): ``"all"`` other hypotheses per anchor, or at most ``k`` drawn at random (the
                reference code's "3 negatives" silently used all of them; here ``k`` really limits them).
            similarity (str): ``"dot"`` or ``"cosine"``, computed in float32. Defaults to ``"dot"``, which improves an
                encoder that already embeds sentences; the paper's ``"cosine"`` is in
                ``NLISupConObjective.paper()``, for a base trained with MLM only.
            entailment_label (int): The label id of entailment. Defaults to 0 (SNLI).
            gather_across_devices (bool): Score local premises against the hypotheses of every rank, and weight each
                rank's means by its share of the rows and anchors, so that DDP trains the loss of the global batch.
                Defaults to False.
            seed (int): Seed of the random choice of ``k`` positives or negatives.
            size_classifiers (dict[int, NLIClassifier] | None): Inside ``MatryoshkaLoss``, a head of its own for
                each truncated size (``{128: NLIClassifier(128), ...}``), trained with the CE term at that size.
                Without one (the default) a truncated size trains SupCon only, and CE is counted once, at full size.
            length_groups (int): Embed the premises and hypotheses together in at most this many groups of similar
                length, each padded only to its own longest sentence (:mod:`~st_contrastive.losses.length_groups`;
                an SNLI column of 64 sentences is about half padding; on a GPU fewer, down to one call for both
                columns, where one more encoder call would cost more than the padding it saves): the same loss
                and gradients. 1: one padded pass per column. Defaults to 4.

        References:
            - Liao, Sentence Embeddings using Supervised Contrastive Learning, 2021: https://arxiv.org/abs/2106.04791
            - Khosla et al., Supervised Contrastive Learning, NeurIPS 2020: https://arxiv.org/abs/2004.11362
            - Reimers and Gurevych, Sentence-BERT, EMNLP 2019: https://arxiv.org/abs/1908.10084

        Requirements:
            1. (premise, hypothesis) pairs with an NLI class label.
            2. All hypotheses of a premise in one batch: train with
               :class:`~st_contrastive.data.PremiseGroupBatchSampler`.
            3. Premises grouped by their text: train with :class:`~st_contrastive.data.PremiseGroupDataCollator`
               (without it, rows are grouped by premise token ids, which merges premises that tokenize alike).

        Inputs:
            +------------------------------+--------------------------------------------------+
            | Texts                        | Labels                                           |
            +==============================+==================================================+
            | (premise, hypothesis) pairs  | class (0 entailment, 1 neutral, 2 contradiction) |
            +------------------------------+--------------------------------------------------+

        Relations:
            - With ``supcon_weight=0`` it is sentence-transformers' ``SoftmaxLoss``.
            - The SupCon term is :class:`~st_contrastive.losses.SupConLoss`'s core with premises as the only
              anchors and entailment as the positive relation.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer
                from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

                from st_contrastive.data import PremiseGroupBatchSampler, PremiseGroupDataCollator
                from st_contrastive.losses import NLISupConLoss
                from st_contrastive.training import ContrastiveTrainer

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                train_dataset = Dataset.from_dict({
                    "premise": ["A dog runs.", "A dog runs.", "A man cooks.", "A man cooks."],
                    "hypothesis": ["An animal moves.", "A cat sleeps.", "Someone makes food.", "A woman swims."],
                    "label": [0, 2, 0, 2],
                })
                loss = NLISupConLoss(model, supcon_weight=0.3)
                args = SentenceTransformerTrainingArguments(output_dir="runs/supcon-example", max_steps=2,
                                                            batch_sampler=PremiseGroupBatchSampler)
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss,
                                   data_collator=PremiseGroupDataCollator(model.preprocess)).train()
                loss.classifier.save("runs/supcon-example/nli_head")
        """
        super().__init__()
        NLISupConObjective(supcon_weight, temperature, positives, negatives, similarity)  # refuses a bad argument
        seed_rule("seed", seed)
        self.model = model
        self.classifier = classifier or NLIClassifier(model.get_embedding_dimension()).to(model.device)
        self.size_classifiers = nn.ModuleDict({str(dim): head for dim, head in (size_classifiers or {}).items()})
        self.supcon_weight = supcon_weight
        self.temperature = temperature
        self.positives = positives
        self.negatives = negatives
        self.similarity = similarity
        self.entailment_label = entailment_label
        self.gather_across_devices = gather_across_devices
        self.seed = seed
        self.length_groups = checked_groups(length_groups)
        if final_normalize(model) is not None:
            logger.info(
                "The model ends in Normalize: the softmax head and SupCon read the pooled embedding before it; the "
                "model keeps its Normalize and encodes unit vectors as before."
            )
        self.generator = torch.Generator().manual_seed(seed)
        self.anchors_seen = 0
        self.anchors_without_positive = 0

    @property
    def num_labels(self) -> int:
        return len(self.classifier.labels)

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None
    ) -> dict[str, torch.Tensor] | tuple[list[torch.Tensor], torch.Tensor]:
        batch = list(sentence_features)
        # The columns in length groups, made once per batch (modifiers call the loss again per layer or size).
        sentence_features, text_group, columns = once_per_batch(self, batch, lambda: self._grouped_inputs(batch))
        groups = None if labels is None else self._premise_groups_once(batch, sentence_features, text_group, labels)
        with before_final_normalize(self.model):
            (premises, hypotheses), _, _ = columns.embed(self.model)
        if labels is None:
            return [premises, hypotheses], self.classifier(premises, hypotheses)
        return self.terms(premises, hypotheses, groups, labels)

    @staticmethod
    def _model_inputs(sentence_features) -> tuple[list[dict[str, torch.Tensor]], torch.Tensor | None]:
        """Copies of the columns for the model, and the premise text ids that PremiseGroupDataCollator adds (taken out
        of the copies: the model does not read them)."""
        copies = [dict(features) for features in sentence_features]
        return copies, copies[0].pop("group", None)

    def _grouped_inputs(
        self, sentence_features
    ) -> tuple[list[dict[str, torch.Tensor]], torch.Tensor | None, LengthGroups]:
        """:meth:`_model_inputs`, and the columns in length groups as the model reads them."""
        copies, group = self._model_inputs(sentence_features)
        return copies, group, LengthGroups.of(copies, self.length_groups)

    def _premise_groups_once(
        self,
        batch: list,
        sentence_features: list[dict[str, torch.Tensor]],
        text_group: torch.Tensor | None,
        labels: torch.Tensor,
    ) -> PremiseGroups:
        """:meth:`premise_groups_of` the batch, once: MatryoshkaLoss calls the loss again per size on the same batch
        (its dicts and labels, compared by identity), once the encoder has run, where each read would wait for a
        GPU and the anchors would be counted again."""
        kept = self.__dict__.get("_batch_groups")
        if (
            kept is None
            or kept[1] is not labels
            or len(kept[0]) != len(batch)
            or any(a is not b for a, b in zip(kept[0], batch))
        ):
            kept = self.__dict__["_batch_groups"] = (
                batch,
                labels,
                self.premise_groups_of(sentence_features, text_group, labels),
            )
        return kept[2]

    def premise_groups_of(
        self, sentence_features: list[dict[str, torch.Tensor]], text_group: torch.Tensor | None, labels: torch.Tensor
    ) -> PremiseGroups:
        """The batch's labels checked, its premise groups, and the anchors counted (those without an entailed
        hypothesis drop out of SupCon), all read from the batch before the encoder runs: on a GPU these reads then
        wait only for the batch's copy to the device, not for the forward pass."""
        labels = labels.view(-1)
        self.classifier.check_label_ids(labels)
        group = text_group if text_group is not None else premise_groups(sentence_features[0]["input_ids"])
        groups = PremiseGroups(group, int(group.max()) + 1)
        if self.supcon_weight > 0:
            with_positive = len(group[labels == self.entailment_label].unique())
            self.anchors_seen += groups.count
            self.anchors_without_positive += groups.count - with_positive
            if with_positive == 0:
                logger.warning("No premise in this batch has an entailed hypothesis: the SupCon term is zero.")
        return groups

    def terms(
        self, premises: torch.Tensor, hypotheses: torch.Tensor, groups: PremiseGroups, labels: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """``{"cross_entropy": (1−λ)·CE, "supcon": λ·SupCon}`` of the batch's embeddings (the active terms). Under a
        loss modifier's truncated (or earlier-layer) embeddings CE only where a head reads them (:meth:`head_for`)."""
        losses = LossComponents()
        head = self.head_for(premises)
        if head is not None:
            logits = head(premises, hypotheses)
            # Premise groups are never split, so ranks may hold different numbers of rows: weight each rank's means
            # by its share (global_mean_factor) so that DDP trains the loss of the global batch.
            share = global_mean_factor(len(labels), labels.device, gather_across_devices=self.gather_across_devices)
            losses["cross_entropy"] = (1 - self.supcon_weight) * share * F.cross_entropy(logits, labels.view(-1))
        if self.supcon_weight > 0:
            losses["supcon"] = self.supcon_weight * self.premise_supcon(premises, hypotheses, groups, labels)
        return losses

    def head_for(self, embeddings: torch.Tensor) -> NLIClassifier | None:
        """The head that reads these embeddings: the classifier at full size, a size's own head (if given) for
        embeddings ``MatryoshkaLoss`` truncated to it; none at an earlier layer of ``AdaptiveLayerLoss``."""
        if at_an_earlier_layer(self.model):
            return None
        size = embeddings.shape[-1]
        if size == self.classifier.embedding_dimension:
            return self.classifier
        key = str(size)
        return self.size_classifiers[key] if key in self.size_classifiers else None  # noqa: SIM401 (no ModuleDict.get)

    def premise_supcon(self, premises, hypotheses, groups: PremiseGroups, labels) -> torch.Tensor:
        """SupCon with the first row of each premise group as the anchor and every hypothesis as a candidate."""
        group, num_groups = groups.group.to(labels.device), groups.count
        first_row = torch.full((num_groups,), len(group), device=group.device).scatter_reduce(
            0, group, torch.arange(len(group), device=group.device), reduce="amin"
        )
        # A hypothesis carries its premise group when it is entailed, -1 ("no anchor's positive") otherwise.
        entailed_group = torch.where(labels.view(-1) == self.entailment_label, group, -1)
        candidates = gather_candidates(
            hypotheses, entailed_group, gather_across_devices=self.gather_across_devices, local_ids=True
        )
        anchor_group = torch.arange(num_groups, device=group.device) + candidates.offset
        positive = anchor_group[:, None] == candidates.labels[None, :]
        negative = ~positive
        positive = self._keep_at_most(positive, self.positives)
        negative = self._keep_at_most(negative, self.negatives)
        similarities = similarity_matrix(premises[first_row], candidates.embeddings, self.similarity)
        loss, _ = supcon(
            similarities,
            positive,
            positive | negative,
            self.temperature,
            gather_across_devices=self.gather_across_devices,
        )
        return loss

    def _keep_at_most(self, mask: torch.Tensor, k: str | int) -> torch.Tensor:
        """``k`` randomly chosen True entries per row (all of them when a row has fewer, or ``k == "all"``)."""
        if k == "all":
            return mask
        scores = torch.rand(mask.shape, generator=self.generator).to(mask.device).masked_fill(~mask, -1.0)
        top = scores.topk(min(k, mask.shape[1]), dim=1).indices
        chosen = torch.zeros_like(mask).scatter_(1, top, True)
        return chosen & mask

    def get_extra_state(self) -> dict:
        """The selection generator and the anchor counters, saved in trainer checkpoints for exact resumes."""
        return {
            "generator": self.generator.get_state(),
            "anchors_seen": self.anchors_seen,
            "anchors_without_positive": self.anchors_without_positive,
        }

    def set_extra_state(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self.anchors_seen = state["anchors_seen"]
        self.anchors_without_positive = state["anchors_without_positive"]

    def save_classifier(self, path: str | Path) -> None:
        """Write the NLI head to a folder, for :func:`~st_contrastive.models.load_nli_classifier`."""
        self.classifier.save(str(path))

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "classifier": self.classifier.get_config_dict(),
            "size_classifiers": sorted(map(int, self.size_classifiers), reverse=True),
            "supcon_weight": self.supcon_weight,
            "temperature": self.temperature,
            "positives": self.positives,
            "negatives": self.negatives,
            "similarity": self.similarity,
            "entailment_label": self.entailment_label,
            "gather_across_devices": self.gather_across_devices,
            "seed": self.seed,
            "length_groups": self.length_groups,
        }

    @property
    def citation(self) -> str:
        return """
@misc{liao2021supcon,
    title = {Sentence Embeddings using Supervised Contrastive Learning},
    author = {Liao, Danqi},
    year = {2021},
    eprint = {2106.04791},
    archivePrefix = {arXiv},
    primaryClass = {cs.CL},
}
"""


@dataclass
class PremiseGroups:
    """The premise group id of each batch row (0 … count − 1) and their count."""

    group: torch.Tensor
    count: int


def premise_groups(premise_input_ids: torch.Tensor) -> torch.Tensor:
    """Group id per row: rows with the same premise tokens share one (without ``PremiseGroupDataCollator``)."""
    return torch.unique(premise_input_ids, dim=0, return_inverse=True)[1]
