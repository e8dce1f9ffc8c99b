"""The SupCon losses with GradCache, on sentence-transformers' own cached-loss machinery (``CachedLossMixin``).

Unlike DeCLUTR's, these objectives are functions of the sentence embeddings alone (the NLI head reads embeddings
too), so the mixin's three steps fit them as they are: only ``calculate_loss`` is ours.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.base.losses import CachedLossMixin

from st_contrastive.config.objectives import GradCache, NLISupConObjective, SupConObjective
from st_contrastive.losses.contrastive_core import Similarity
from st_contrastive.losses.loss_components import refuse_layer_modifiers
from st_contrastive.losses.nli_supcon import NLISupConLoss
from st_contrastive.losses.pooled_embedding import before_final_normalize
from st_contrastive.losses.supcon import SupConLoss
from st_contrastive.models.heads.nli_classifier import NLIClassifier


class CachedSupConLoss(CachedLossMixin, SupConLoss):
    def __init__(
        self,
        model: SentenceTransformer,
        temperature: float = SupConObjective.temperature,
        similarity: Similarity = SupConObjective.similarity,
        gather_across_devices: bool = False,
        mini_batch_size: int = GradCache.mini_batch_size,
    ) -> None:
        """:class:`SupConLoss` with GradCache: any batch size in the memory of ``mini_batch_size`` sentences.

        Args:
            model (SentenceTransformer): The model to train.
            temperature (float): τ, the softmax temperature. Defaults to 0.1 (Khosla et al.).
            similarity (str): ``"cosine"`` or ``"dot"``. Defaults to ``"cosine"``.
            gather_across_devices (bool): Score local anchors against the sentences of every rank. Defaults to False.
            mini_batch_size (int): Sentences embedded at once. Defaults to 32.

        References:
            - Khosla et al., Supervised Contrastive Learning, NeurIPS 2020: https://arxiv.org/abs/2004.11362
            - Gao et al., Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup (GradCache), 2021:
              https://arxiv.org/abs/2101.06983

        Requirements:
            1. Sentences with class labels; every label in a batch more than once (else those anchors drop out).

        Inputs:
            +------------------------------+--------+
            | Texts                        | Labels |
            +==============================+========+
            | one or more sentence columns | class  |
            +------------------------------+--------+

        Relations:
            - Equals :class:`SupConLoss` in value and gradients (tested), as sentence-transformers'
              ``CachedMultipleNegativesRankingLoss`` equals ``MultipleNegativesRankingLoss``.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer
                from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

                from st_contrastive.losses import CachedSupConLoss
                from st_contrastive.training import ContrastiveTrainer

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                train_dataset = Dataset.from_dict({
                    "text": ["great film", "loved it", "dull and long", "a waste of time"],
                    "label": [1, 1, 0, 0],
                })
                args = SentenceTransformerTrainingArguments(output_dir="runs/cached-supcon-example", max_steps=2,
                                                            per_device_train_batch_size=4)
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset,
                                   loss=CachedSupConLoss(model, mini_batch_size=2)).train()
        """
        GradCache(mini_batch_size)  # refuses a bad size, naming it
        SupConLoss.__init__(self, model, temperature, similarity, gather_across_devices)
        self.mini_batch_size = mini_batch_size

    def forward(self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor) -> torch.Tensor:
        refuse_layer_modifiers(self)
        sentence_features = list(sentence_features)
        self.warn_without_positives(labels, len(sentence_features))
        return self.forward_cached(sentence_features, labels)

    def calculate_loss(self, reps, labels=None, *, with_backward: bool = False) -> torch.Tensor:
        embeddings = torch.cat([torch.cat(column) for column in reps])
        loss = self.compute_loss(embeddings, labels.repeat(len(embeddings) // len(labels)))
        return _backward_if(loss, with_backward)

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict() | {"mini_batch_size": self.mini_batch_size}
        del config["length_groups"]  # its mini-batches are its groups
        return config


class CachedNLISupConLoss(CachedLossMixin, NLISupConLoss):
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
        mini_batch_size: int = GradCache.mini_batch_size,
        size_classifiers: dict[int, NLIClassifier] | None = None,
    ) -> None:
        """:class:`NLISupConLoss` with GradCache: any batch of NLI pairs in the memory of ``mini_batch_size``.

        The softmax head and SupCon read the premise and hypothesis embeddings of the whole batch (step 2 of
        GradCache); the head's parameters get their gradients there, the encoder's in the re-embedding pass.

        Args:
            model (SentenceTransformer): The model to train; a final ``Normalize`` is passed by as in
                :class:`NLISupConLoss`.
            classifier (NLIClassifier | None): The softmax head; default a new one over SNLI's three labels.
            supcon_weight (float): λ in [0, 1]. Defaults to 0.3.
            temperature (float): τ of SupCon. Defaults to 1.0.
            positives (str | int): ``"all"`` entailed hypotheses per anchor, or at most ``k``.
            negatives (str | int): ``"all"`` other hypotheses per anchor, or at most ``k``.
            similarity (str): ``"dot"`` or ``"cosine"``. Defaults to ``"dot"`` (``NLISupConLoss``'s).
            entailment_label (int): The label id of entailment. Defaults to 0 (SNLI).
            gather_across_devices (bool): Score local premises against the hypotheses of every rank. Defaults to
                False.
            seed (int): Seed of the random choice of ``k`` positives or negatives.
            mini_batch_size (int): Sentences embedded at once. Defaults to 32.
            size_classifiers (dict[int, NLIClassifier] | None): A head per truncated size inside ``MatryoshkaLoss``
                (see :class:`NLISupConLoss`).

        References:
            - Liao, Sentence Embeddings using Supervised Contrastive Learning, 2021: https://arxiv.org/abs/2106.04791
            - Gao et al., Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup (GradCache), 2021:
              https://arxiv.org/abs/2101.06983

        Requirements:
            1. (premise, hypothesis) pairs with an NLI class label, premise groups kept whole
               (:class:`~st_contrastive.data.PremiseGroupBatchSampler`, :class:`~st_contrastive.data.PremiseGroupDataCollator`).

        Inputs:
            +------------------------------+--------------------------------------------------+
            | Texts                        | Labels                                           |
            +==============================+==================================================+
            | (premise, hypothesis) pairs  | class (0 entailment, 1 neutral, 2 contradiction) |
            +------------------------------+--------------------------------------------------+

        Relations:
            - Equals :class:`NLISupConLoss` in value and gradients (tested).

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer
                from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

                from st_contrastive.data import PremiseGroupBatchSampler, PremiseGroupDataCollator
                from st_contrastive.losses import CachedNLISupConLoss
                from st_contrastive.training import ContrastiveTrainer

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                train_dataset = Dataset.from_dict({
                    "premise": ["A dog runs.", "A dog runs.", "A man cooks.", "A man cooks."],
                    "hypothesis": ["An animal moves.", "A cat sleeps.", "Someone makes food.", "A woman swims."],
                    "label": [0, 2, 0, 2],
                })
                loss = CachedNLISupConLoss(model, supcon_weight=0.3, mini_batch_size=2)
                args = SentenceTransformerTrainingArguments(output_dir="runs/cached-supcon-nli-example", max_steps=2,
                                                            batch_sampler=PremiseGroupBatchSampler)
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss,
                                   data_collator=PremiseGroupDataCollator(model.preprocess)).train()
        """
        GradCache(mini_batch_size)  # refuses a bad size, naming it
        NLISupConLoss.__init__(
            self,
            model,
            classifier,
            supcon_weight,
            temperature,
            positives,
            negatives,
            similarity,
            entailment_label,
            gather_across_devices,
            seed,
            size_classifiers,
        )
        self.mini_batch_size = mini_batch_size
        self._groups = None

    def forward(self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None):
        refuse_layer_modifiers(self)
        sentence_features, text_group = self._model_inputs(sentence_features)
        if labels is None:  # evaluation with LabelAccuracyEvaluator: embeddings and logits, nothing to cache
            return NLISupConLoss.forward(self, sentence_features, labels)
        self._groups = self.premise_groups_of(sentence_features, text_group, labels)
        return self.forward_cached(sentence_features, labels)

    def embed_minibatch(self, *args, **kwargs):
        # Both GradCache passes embed here, the second inside the backward pass, after forward has returned.
        with before_final_normalize(self.model):
            return super().embed_minibatch(*args, **kwargs)

    def calculate_loss(self, reps, labels=None, *, with_backward: bool = False) -> torch.Tensor:
        premises, hypotheses = (torch.cat(column) for column in reps)
        loss = sum(self.terms(premises, hypotheses, self._groups, labels).values())
        return _backward_if(loss, with_backward)

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict() | {"mini_batch_size": self.mini_batch_size}
        del config["length_groups"]  # its mini-batches are its groups
        return config


def _backward_if(loss: torch.Tensor, with_backward: bool) -> torch.Tensor:
    """GradCache's step 2 (``with_backward``): back-propagate to the embeddings and hand back the value alone."""
    if not with_backward:
        return loss
    loss.backward()
    return loss.detach()
