"""DeCLUTR: NT-Xent between anchor spans and their averaged positives, plus MLM on the masked anchors."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from typing import Any

import torch
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.config.objectives import DeCLUTRObjective
from st_contrastive.losses.contrastive_core import global_mean_factor
from st_contrastive.losses.length_groups import LengthGroups, checked_groups
from st_contrastive.losses.loss_components import LossComponents, once_per_batch, reduced_by_a_modifier
from st_contrastive.losses.nt_xent import nt_xent
from st_contrastive.models.heads.masked_lm_head import MaskedLMHead
from st_contrastive.models.masking import IGNORE_INDEX, mask_tokens

logger = logging.getLogger(__name__)


class DeCLUTRLoss(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer,
        temperature: float = DeCLUTRObjective.temperature,
        contrastive_weight: float = DeCLUTRObjective.contrastive_weight,
        mlm_weight: float = DeCLUTRObjective.mlm_weight,
        gather_across_devices: bool = False,
        length_groups: int = 4,
    ) -> None:
        """The DeCLUTR objective: ``contrastive_weight·NT-Xent + mlm_weight·MLM`` over spans of documents.

        Each anchor span's embedding is paired with the mean embedding of its ``P`` positive spans; every other
        anchor and positive of the batch is a negative, so the sibling anchors of the same document are hard
        negatives (NT-Xent, Eq. 2 of the paper). While training, the anchors are embedded from their masked tokens
        and the MLM head reads the token embeddings of that same forward pass (as the reference implementation
        does), so MLM costs no second encoder pass. Evaluation computes the same objective on masks that do not
        change between evaluations (the collator's evaluation copy, or a fixed seed); with ``mlm_weight=0`` any
        masking is undone. Returns ``{"contrastive": ..., "mlm": ...}`` (the active terms), logged separately.

        Args:
            model (SentenceTransformer): The encoder (any ST model, or a ``*ForMaskedLM`` checkpoint loaded as one).
                The MLM head comes from its checkpoint when it has one, otherwise a new head is tied to its input
                embeddings.
            temperature (float): τ of NT-Xent. Defaults to 0.05 (the paper's).
            contrastive_weight (float): Weight of NT-Xent; 0 gives the MLM-only ablation (positives are then not
                encoded at all). Defaults to 1.0.
            mlm_weight (float): Weight of MLM; 0 gives the contrastive-only ablation. Defaults to 1.0.
            gather_across_devices (bool): Score local spans against the spans of every rank, and weight each rank's
                MLM mean by its share of the masked tokens, so that DDP trains the loss of the global batch.
                Defaults to False.
            length_groups (int): Embed the batch's spans (anchors and positives together) in at most this many
                groups of similar length, each padded only to its own longest span; on a GPU fewer where one more
                encoder call would cost more than the padding it saves
                (:mod:`~st_contrastive.losses.length_groups`): the same loss and gradients, without most of the
                padded tokens. 1: one padded pass per column, as sentence-transformers' losses do. Defaults to 4.

        References:
            - Giorgi et al., DeCLUTR: Deep Contrastive Learning for Unsupervised Textual Representations, ACL 2021:
              https://aclanthology.org/2021.acl-long.72
            - Chen et al., A Simple Framework for Contrastive Learning of Visual Representations (NT-Xent), 2020:
              https://arxiv.org/abs/2002.05709

        Requirements:
            1. Anchor spans and their positive spans from the same documents, as made by
               :class:`~st_contrastive.data.DeCLUTRDataCollator` (fresh spans every batch).
            2. A tokenizer with a mask token when ``mlm_weight > 0``.

        Inputs:
            +------------------------------------------------------------+--------+
            | Texts                                                      | Labels |
            +============================================================+========+
            | (anchor, positive) columns: ``N·A`` anchors (masked, with  | none   |
            | ``anchor_mlm_labels``) and ``N·A·P`` positives, the ``P``  |        |
            | positives of anchor ``i`` at rows ``i·P … i·P+P−1``        |        |
            | (the collator's layout)                                    |        |
            +------------------------------------------------------------+--------+
            | (anchor, positive_1, …, positive_P) columns of equal rows  | none   |
            | (legacy ``fit()`` with ``declutr_input_examples``; anchors |        |
            | are masked inside the loss)                                |        |
            +------------------------------------------------------------+--------+

        Relations:
            - The contrastive term is :func:`~st_contrastive.losses.nt_xent`, SupCon with the partner as the only
              positive. sentence-transformers' ``MultipleNegativesSymmetricRankingLoss`` scores anchors against
              positives only; NT-Xent also scores every item against the other anchors (2·N·A − 1 candidates).

        Example:
            ::

                from sentence_transformers import SentenceTransformer
                from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

                from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
                from st_contrastive.data_dir import data_file
                from st_contrastive.losses import DeCLUTRLoss
                from st_contrastive.training import ContrastiveTrainer

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=16, max_length=64)
                documents = load_documents(data_file("corpus/docs.jsonl.gz"), limit=8)
                train_dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
                args = SentenceTransformerTrainingArguments(output_dir="runs/declutr-example", max_steps=2,
                                                            per_device_train_batch_size=4)
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, loss=DeCLUTRLoss(model),
                                   data_collator=DeCLUTRDataCollator(model.tokenizer, sampler)).train()
        """
        super().__init__()
        DeCLUTRObjective(temperature, contrastive_weight, mlm_weight)  # refuses a bad argument, naming it
        self.length_groups = checked_groups(length_groups)
        self.model = model
        self.temperature = temperature
        self.contrastive_weight = contrastive_weight
        self.mlm_weight = mlm_weight
        self.gather_across_devices = gather_across_devices
        self._warned_alone = False
        if mlm_weight > 0:
            if model.tokenizer is None or model.tokenizer.mask_token_id is None:
                raise ValueError(
                    "the model's tokenizer has no mask token, so MLM is impossible: pass mlm_weight=0 for "
                    "contrastive-only training"
                )
            self.mlm_head = MaskedLMHead(model[0].auto_model)

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        anchor_features, *positive_inputs = sentence_features
        # Each column sorted and cut into length groups, its lengths and masked positions read before the encoder
        # runs (see LengthGroups), once per batch: modifiers that call the loss again (per layer, per size) reuse them.
        groups, mlm_labels = once_per_batch(
            self, [anchor_features, *positive_inputs], lambda: self._groups(anchor_features, positive_inputs)
        )
        lookup = self.mlm_head.sparse_lookup_gradient() if mlm_labels is not None else contextlib.nullcontext()
        with lookup as decoder_weight:
            (anchors, *positives), masked_tokens, masked_labels = groups.embed(self.model)
        # Under MatryoshkaLoss / AdaptiveLayerLoss MLM reads the same tokens at every call: counted once, at full size.
        with_mlm = self.mlm_weight > 0 and not reduced_by_a_modifier(self.model, anchors)
        losses = LossComponents()
        if self.contrastive_weight > 0:
            if len(anchors) == 1 and not self.gather_across_devices and not self._warned_alone:
                self._warned_alone = True  # once: one anchor and its positive have no negative, so NT-Xent is 0
                logger.warning(
                    "A batch holds a single anchor (one document, num_anchors=1): NT-Xent has no negative "
                    "and is exactly 0. Use more documents per batch or more anchors per document."
                )
            mean_positives = self._mean_positives(positives, len(anchors))
            contrastive = nt_xent(anchors, mean_positives, self.temperature, self.gather_across_devices)
            losses["contrastive"] = self.contrastive_weight * contrastive
        if with_mlm:
            mlm = self.mlm_head.masked_loss(masked_tokens, masked_labels, decoder_weight)
            # Ranks mask different numbers of tokens: weight each rank's mean so DDP trains the global token mean.
            # The count stays a tensor: int() here would make every step wait for the GPU.
            share = global_mean_factor(
                (mlm_labels != IGNORE_INDEX).sum(), mlm.device, gather_across_devices=self.gather_across_devices
            )
            losses["mlm"] = self.mlm_weight * share * mlm
        return losses

    def _groups(
        self, anchor_features: dict[str, torch.Tensor], positive_inputs: list[dict[str, torch.Tensor]]
    ) -> tuple[LengthGroups, torch.Tensor | None]:
        """The anchors and positives (none when no positive is needed) in length groups, and the MLM labels."""
        anchor_features, mlm_labels = self._anchor_inputs(anchor_features)
        columns = [anchor_features, *(positive_inputs if self.contrastive_weight else [])]
        return LengthGroups.of(columns, self.length_groups, mlm_labels), mlm_labels

    def _anchor_inputs(
        self, anchor_features: dict[str, torch.Tensor]
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
        """The anchors' features as the encoder reads them, and their MLM labels (None when no MLM is trained)."""
        anchor_features = dict(anchor_features)
        mlm_labels = anchor_features.pop("mlm_labels", None)
        if self.mlm_weight > 0 and mlm_labels is None:  # legacy fit(): plain tokenized text, so mask here
            fixed = None if self.model.training else torch.Generator().manual_seed(0)  # evaluation: the same masks
            anchor_features["input_ids"], mlm_labels = mask_tokens(
                anchor_features["input_ids"], self.model.tokenizer, generator=fixed
            )
        if mlm_labels is not None and self.mlm_weight <= 0:  # masked by a collator, but this loss trains no MLM
            masked = mlm_labels != IGNORE_INDEX
            anchor_features["input_ids"] = torch.where(masked, mlm_labels, anchor_features["input_ids"])
            mlm_labels = None
        return anchor_features, mlm_labels

    def _mean_positives(self, positives: list[torch.Tensor], num_anchors: int) -> torch.Tensor:
        """The mean positive embedding of each anchor.

        One input holds the ``P`` positives of anchor ``i`` at rows ``i·P … i·P+P−1`` (the collator's layout);
        several inputs hold one positive of every anchor each (``InputExample(texts=[anchor, *positives])``).
        """
        if len(positives) > 1:
            return torch.stack(positives).mean(dim=0)
        if len(positives[0]) % num_anchors:
            raise ValueError(f"{len(positives[0])} positives cannot be split evenly among {num_anchors} anchors")
        return positives[0].view(num_anchors, len(positives[0]) // num_anchors, -1).mean(dim=1)

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
            "gather_across_devices": self.gather_across_devices,
            "length_groups": self.length_groups,
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
