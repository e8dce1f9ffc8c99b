"""DeCLUTR with GradCache: the batch's memory is that of one mini-batch, the MLM term included."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from sentence_transformers.base.losses import RandContext

from st_contrastive.arguments import ArgumentError
from st_contrastive.config.objectives import DeCLUTRObjective, GradCache
from st_contrastive.losses.contrastive_core import gather_candidates, global_mean_factor, supcon
from st_contrastive.losses.declutr import DeCLUTRLoss
from st_contrastive.losses.length_groups import by_length
from st_contrastive.losses.loss_components import LossComponents, refuse_layer_modifiers
from st_contrastive.losses.nt_xent import nt_xent
from st_contrastive.models.masking import IGNORE_INDEX
from st_contrastive.st_internals import create_minibatch, ddp_replay_context


class CachedDeCLUTRLoss(DeCLUTRLoss):
    uses_gradient_cache = True  # sentence-transformers' marker: the backward pass re-embeds (see its gradcache)

    def __init__(
        self,
        model: SentenceTransformer,
        temperature: float = DeCLUTRObjective.temperature,
        contrastive_weight: float = DeCLUTRObjective.contrastive_weight,
        mlm_weight: float = DeCLUTRObjective.mlm_weight,
        gather_across_devices: bool = False,
        mini_batch_size: int = GradCache.mini_batch_size,
        sort_by_length: bool = True,
    ) -> None:
        """:class:`DeCLUTRLoss` computed with GradCache, so batches of any size fit in the memory of one mini-batch.

        sentence-transformers' cached losses embed without a graph, compute the loss and its gradients with respect
        to the embeddings on the whole batch, then re-embed each mini-batch with a graph and back-propagate the
        cached gradients. No library does this for an objective with an MLM term, whose gradient needs the token
        embeddings of the masked anchors: here the second pass also runs the MLM head on each anchor mini-batch and
        back-propagates its share of the token-mean MLM loss together with the cached contrastive gradients. The
        first pass computes the MLM value without a graph, for logging. Dropout draws are replayed (RandContext),
        so the gradients equal those of :class:`DeCLUTRLoss` on the same batch (tested).

        Args:
            model (SentenceTransformer): The encoder, as for :class:`DeCLUTRLoss`.
            temperature (float): τ of NT-Xent. Defaults to 0.05 (the paper's).
            contrastive_weight (float): Weight of NT-Xent; must be positive (MLM alone needs no cache).
            mlm_weight (float): Weight of MLM; 0 gives the contrastive-only ablation. Defaults to 1.0.
            gather_across_devices (bool): Score local spans against the spans of every rank. Defaults to False.
            mini_batch_size (int): Spans embedded at once; bounds the memory. Defaults to 32.
            sort_by_length (bool): Embed the spans of each column in order of length, so that each mini-batch is
                padded only to its own longest span (Beta-distributed span lengths waste much compute otherwise).
                The loss is the same: embeddings are put back in batch order before it is computed. Defaults to
                True.

        References:
            - Giorgi et al., DeCLUTR: Deep Contrastive Learning for Unsupervised Textual Representations, ACL 2021:
              https://aclanthology.org/2021.acl-long.72
            - Gao et al., Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup (GradCache), 2021:
              https://arxiv.org/abs/2101.06983

        Requirements:
            1. Anchor and positive spans as made by :class:`~st_contrastive.data.DeCLUTRDataCollator`.
            2. A tokenizer with a mask token when ``mlm_weight > 0``.

        Inputs:
            +------------------------------------------------------------+--------+
            | Texts                                                      | Labels |
            +============================================================+========+
            | (anchor, positive) columns: ``N·A`` anchors (masked, with  | none   |
            | ``anchor_mlm_labels``) and ``N·A·P`` positives             |        |
            +------------------------------------------------------------+--------+

        Relations:
            - Equals :class:`DeCLUTRLoss` in value and gradients; sentence-transformers'
              ``CachedMultipleNegativesRankingLoss`` is the same machinery for MNRL, without an MLM term.

        Example:
            ::

                from sentence_transformers import SentenceTransformer
                from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

                from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
                from st_contrastive.data_dir import data_file
                from st_contrastive.losses import CachedDeCLUTRLoss
                from st_contrastive.training import ContrastiveTrainer

                model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
                sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=16, max_length=64)
                documents = load_documents(data_file("corpus/docs.jsonl.gz"), limit=8)
                train_dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
                args = SentenceTransformerTrainingArguments(output_dir="runs/cached-declutr-example", max_steps=2,
                                                            per_device_train_batch_size=8)
                loss = CachedDeCLUTRLoss(model, mini_batch_size=4)
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss,
                                   data_collator=DeCLUTRDataCollator(model.tokenizer, sampler)).train()
        """
        DeCLUTRObjective(temperature, contrastive_weight, mlm_weight)  # refuses a bad argument, naming it
        GradCache(mini_batch_size)
        if contrastive_weight == 0:
            raise ArgumentError(
                "contrastive_weight",
                0,
                "CachedDeCLUTRLoss caches the gradients of the contrastive term: for MLM "
                "alone use DeCLUTRLoss (it needs no cache)",
            )
        super().__init__(model, temperature, contrastive_weight, mlm_weight, gather_across_devices)
        self.mini_batch_size = mini_batch_size
        self.sort_by_length = sort_by_length

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        refuse_layer_modifiers(self)
        anchor_features, *positive_inputs = sentence_features
        if len(positive_inputs) != 1:
            raise ValueError(
                "CachedDeCLUTRLoss takes the collator's (anchor, positive) columns; for one column per "
                "positive (legacy fit()) use DeCLUTRLoss"
            )
        anchor_features, mlm_labels = self._anchor_inputs(anchor_features)
        # The batch's masked tokens, counted before the encoder runs (on a GPU the count waits for the batch's copy
        # alone); the mini-batches' counts stay on the device.
        masked = int(_masked(mlm_labels)) if mlm_labels is not None else 0
        grad_enabled = torch.is_grad_enabled()
        columns = [self._mini_batches(anchor_features, mlm_labels), self._mini_batches(positive_inputs[0], None)]

        # Pass 1, without a graph: every embedding, the RNG state of every mini-batch, and the MLM value.
        leaves, states = [], []
        mlm_sum = torch.zeros((), device=anchor_features["input_ids"].device)
        with torch.no_grad():
            for column in columns:
                column_leaves, column_states = [], []
                for features, targets in column["batches"]:
                    state = RandContext(*features.values()) if grad_enabled else None
                    out = self.model(features)
                    column_leaves.append(out["sentence_embedding"].detach().requires_grad_(grad_enabled))
                    column_states.append(state)
                    if targets is not None:
                        mlm_sum = mlm_sum + self.mlm_head(out["token_embeddings"], targets).float() * _masked(targets)
                leaves.append(column_leaves)
                states.append(column_states)

        # The loss on the whole batch; its backward fills the cache. MatryoshkaLoss decorates calculate_loss (the
        # gradient-cache protocol of sentence-transformers' cached losses) to sum it over truncated embeddings.
        restore = [column["restore"] for column in columns]
        contrastive = self.calculate_loss(leaves, restore=restore, with_backward=grad_enabled)
        losses = {"contrastive": contrastive}
        mlm_weight = 0.0
        if mlm_labels is not None:
            share = global_mean_factor(masked, contrastive.device, gather_across_devices=self.gather_across_devices)
            mlm_weight = self.mlm_weight * share / max(masked, 1)  # each mini-batch's token sum times this
            losses["mlm"] = (mlm_sum * mlm_weight).to(contrastive.device)
        if not grad_enabled:
            return LossComponents(losses)
        cache = [[leaf.grad for leaf in column_leaves] for column_leaves in leaves]

        # Pass 2 runs in the backward of the returned contrastive term (the trainer back-propagates the sum of the
        # terms; the MLM value is a constant there, its gradient is computed here).
        output = contrastive.detach().requires_grad_()
        output.register_hook(
            partial(self._backward, columns=columns, cache=cache, states=states, mlm_weight=mlm_weight)
        )
        return LossComponents({"contrastive": output} | ({"mlm": losses["mlm"]} if "mlm" in losses else {}))

    def calculate_loss(
        self, reps: list[list[torch.Tensor]], *, restore: list[torch.Tensor], with_backward: bool = False
    ) -> torch.Tensor:
        """The weighted NT-Xent of the mini-batch embeddings ``reps`` (anchors, positives), put back in batch order
        by ``restore``; with ``with_backward`` its gradients go to ``reps`` and the value comes back detached."""
        anchors, positives = (torch.cat(column)[order] for column, order in zip(reps, restore, strict=True))
        mean_positives = positives.view(len(anchors), len(positives) // len(anchors), -1).mean(dim=1)
        if not with_backward:
            return self.contrastive_weight * nt_xent(
                anchors, mean_positives, self.temperature, self.gather_across_devices
            )
        return self._nt_xent_by_blocks(torch.cat([anchors, mean_positives]))

    def _nt_xent_by_blocks(self, items: torch.Tensor) -> torch.Tensor:
        """:func:`nt_xent` of ``items`` (anchors, then their mean positives), back-propagated ``mini_batch_size``
        rows at a time, and its value. The whole score matrix (2N × 2N: 256 MiB a copy at 4,096 anchors, several
        copies in its backward) never exists, so the memory stays flat as the batch grows. nt_xent scores whole
        rows at once and sentence-transformers' cached losses have no NT-Xent, hence this loop."""
        pair = torch.arange(len(items) // 2, device=items.device).repeat(2)
        candidates = gather_candidates(items, pair, gather_across_devices=self.gather_across_devices, local_ids=True)
        share = global_mean_factor(len(items), items.device, gather_across_devices=self.gather_across_devices)
        weight = self.contrastive_weight * share / len(items)  # each row's share of the (global) mean
        with torch.autocast(items.device.type, enabled=False):  # cosine similarities in float32, as nt_xent
            normalized = F.normalize(candidates.embeddings.float(), dim=-1)  # a graph to items (and every rank)
            scored = normalized.detach().requires_grad_()
            total = items.new_zeros((), dtype=torch.float32)
            for begin in range(0, len(items), self.mini_batch_size):
                end = min(begin + self.mini_batch_size, len(items))
                rows = scored[candidates.offset + begin : candidates.offset + end]  # this rank's rows among them
                not_self = torch.ones(end - begin, len(scored), dtype=torch.bool, device=items.device)
                not_self.diagonal(candidates.offset + begin).fill_(False)
                partner = (pair[begin:end] + candidates.offset)[:, None] == candidates.labels[None, :]
                block, _ = supcon(rows @ scored.T, partner, not_self, self.temperature)
                block = block * (weight * (end - begin))
                block.backward()
                total = total + block.detach()
        normalized.backward(scored.grad)
        return total

    def _mini_batches(self, features: dict[str, torch.Tensor], mlm_labels: torch.Tensor | None) -> dict[str, Any]:
        """A column cut into mini-batches (in order of length with ``sort_by_length``), each with its MLM labels,
        and the permutation that puts their embeddings back in batch order."""
        rows = len(features["input_ids"])
        restore = torch.arange(rows, device=features["input_ids"].device)
        if self.sort_by_length:
            features, mlm_labels, _, restore = by_length(features, mlm_labels)
        batches = []
        for begin in range(0, rows, self.mini_batch_size):
            end = min(begin + self.mini_batch_size, rows)
            mini = create_minibatch(features, begin, end)  # also drops the padding columns it does not need
            width = mini["input_ids"].shape[1]
            batches.append((mini, None if mlm_labels is None else mlm_labels[begin:end, :width]))
        return {"batches": batches, "restore": restore}

    def _backward(self, grad_output: torch.Tensor, columns, cache, states, mlm_weight: float) -> None:
        """Re-embed each mini-batch with a graph and back-propagate its cached gradients and its MLM share."""
        model = getattr(self.model, "_orig_mod", self.model)
        remaining = sum(len(column["batches"]) for column in columns)
        with torch.enable_grad():
            for column, grads, column_states in zip(columns, cache, states):
                for (features, targets), grad, state in zip(column["batches"], grads, column_states):
                    remaining -= 1
                    with ddp_replay_context(model, synchronize=remaining == 0):
                        with state:
                            out = self.model(features)
                        embeddings = out["sentence_embedding"]
                        surrogate = torch.dot(embeddings.flatten().float(), grad.flatten().float())
                        if targets is not None and mlm_weight:
                            surrogate = surrogate + mlm_weight * _masked(targets) * self.mlm_head(
                                out["token_embeddings"], targets
                            )
                        (surrogate * grad_output).backward()

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict() | {
            "mini_batch_size": self.mini_batch_size,
            "sort_by_length": self.sort_by_length,
        }
        del config["length_groups"]  # its mini-batches are its groups
        return config


def _masked(mlm_labels: torch.Tensor) -> torch.Tensor:
    """How many tokens are masked, as a tensor where the labels are (reading it would wait for a GPU)."""
    return (mlm_labels != IGNORE_INDEX).sum()
