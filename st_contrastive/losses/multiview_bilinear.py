"""Context-sentence prediction across two views with a bilinear score (Simoulin & Crabbé, 2021, §2.1)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import torch
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.arguments import at_least
from st_contrastive.losses.contrastive_core import gather_candidates, supcon
from st_contrastive.losses.loss_components import reduced_by_a_modifier

logger = logging.getLogger(__name__)


class MultiViewBilinearLoss(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer,
        context_size: int = 1,
        symmetric: bool = True,
        gather_across_devices: bool = False,
    ) -> None:
        """QuickThought's objective over two views: find each sentence's neighbours among the batch.

        The batch holds consecutive sentences of a corpus (see
        :class:`~st_contrastive.data.ContextBlockBatchSampler`); a sentence's positives are the sentences within
        ``context_size`` of it in the same document, every other sentence of the batch is a negative, and the
        sentence itself is left out. The score of anchor x and candidate y is ``c(x, y) = f(x)ᵀ W g(y)``, f and g
        being the model's two views and W a matrix this loss owns (Xavier-initialised; the
        :class:`~st_contrastive.training.ContrastiveTrainer` saves, restores, clips and DDP-syncs it).

        The paper (§2.1, like QuickThought) scores one direction: the anchor in view f, the candidates in view g.
        ``symmetric=True`` (the default) is this package's addition: it also scores ``c(y, x)`` (the anchor in view
        g, through Wᵀ) and averages the two directions. ``symmetric=False`` is the paper's objective.

        Args:
            model (SentenceTransformer): A model ending in :class:`~st_contrastive.models.MultiView`.
            context_size (int): How many sentences on each side are positives. Defaults to 1 (QuickThought).
            symmetric (bool): Also score with the anchor in view g and average both directions; not in the
                paper, whose objective is ``symmetric=False``. Defaults to True (the results reported so far).
            gather_across_devices (bool): Candidates from every rank (labels are corpus positions, so they
                stay unique). Defaults to False.

        References:
            - Simoulin & Crabbé, Contrasting distinct structured views to learn sentence embeddings, EACL SRW 2021:
              https://hal.science/hal-03601428
            - Logeswaran & Lee, An efficient framework for learning sentence representations, ICLR 2018:
              https://arxiv.org/abs/1803.02893

        Requirements:
            1. A model whose last module is :class:`~st_contrastive.models.MultiView`.
            2. Batches of consecutive sentences, labelled with their position in the corpus (documents separated
               by a gap larger than ``context_size``). Without labels the batch itself is taken as one run of
               consecutive sentences. A sentence without a context sentence in the batch drops out of the mean; a
               batch with none (one sentence, one-sentence documents) gives a zero loss that keeps the graph, and a
               warning, so that training (on every DDP rank) goes on.

        Inputs:
            +-----------------------------+------------------------------+
            | Texts                       | Labels                       |
            +=============================+==============================+
            | (sentence) raw or parsed    | position in the corpus (int) |
            +-----------------------------+------------------------------+

        Relations:
            - With one view twice, W = I and ``symmetric=False`` this is QuickThought's loss (Logeswaran & Lee,
              2018).
            - The multi-positive softmax is :func:`~st_contrastive.losses.contrastive_core.supcon` at τ = 1.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformerTrainingArguments

                from st_contrastive.data import ContextBlockBatchSampler
                from st_contrastive.losses import MultiViewBilinearLoss
                from st_contrastive.models import multiview_model
                from st_contrastive.parsing import make_parser
                from st_contrastive.training import ContrastiveTrainer

                story = ["Emma woke early.", "The house was quiet.", "She went down to the garden.",
                         "The roses were in bloom.", "Her father was still asleep.", "She picked a few flowers."]
                model = multiview_model(["dep", "seq"], make_parser("spacy").parse(story), word_dim=32, dim=32)
                train_dataset = Dataset.from_dict({"sentence": story, "label": list(range(len(story)))})
                args = SentenceTransformerTrainingArguments(output_dir="runs/multiview-example", max_steps=2,
                                                            per_device_train_batch_size=6, report_to="none",
                                                            batch_sampler=ContextBlockBatchSampler)
                loss = MultiViewBilinearLoss(model)  # ContrastiveTrainer saves its bilinear W with checkpoints
                ContrastiveTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss).train()
                model.save("runs/multiview-example")  # loads with SentenceTransformer(path, trust_remote_code=True)
        """
        super().__init__()
        at_least("context_size", context_size, 1)
        self.model = model
        self.context_size, self.symmetric, self.gather_across_devices = context_size, symmetric, gather_across_devices
        views = model[-1]
        self.bilinear = nn.Parameter(torch.empty(views.dim, views.dim))
        nn.init.xavier_uniform_(self.bilinear)

    def forward(
        self, sentence_features: Iterable[dict[str, torch.Tensor]], labels: torch.Tensor | None
    ) -> torch.Tensor:
        features = list(sentence_features)
        if len(features) != 1:
            raise ValueError(f"MultiViewBilinearLoss reads one column of consecutive sentences, got {len(features)}")
        positions = labels if labels is not None else torch.arange(len(features[0]["input_ids"]))
        self.warn_without_context(positions)
        output = self.model(features[0])
        if reduced_by_a_modifier(self.model, output["sentence_embedding"]):
            raise ValueError(
                "MultiViewBilinearLoss scores the two views of the embedding [f(s); g(s)], which a "
                "Matryoshka truncation or an earlier layer does not have: train multi-view without "
                "MatryoshkaLoss, Matryoshka2dLoss or AdaptiveLayerLoss"
            )
        f, g = output["view_embeddings"]
        positions = positions.to(f.device)
        loss, _ = self.direction(f, g, self.bilinear, positions)
        if self.symmetric:  # the same positives in both directions
            loss = (loss + self.direction(g, f, self.bilinear.T, positions)[0]) / 2
        return loss

    def warn_without_context(self, positions: torch.Tensor) -> None:
        """Warn when no sentence of the batch has a context sentence in it: its loss is a zero that keeps the graph,
        not an error, since under DDP every rank must reach backward (the gradient all-reduce, the gather's
        backward) and supcon counts this rank's share of the anchors as zero, so the global mean stays exact. Read
        from the positions before the encoder runs, so on a GPU it waits only for the batch's copy, not for the
        forward pass. With ``gather_across_devices`` another rank may hold the context, and nothing is said."""
        if self.gather_across_devices:
            return
        distance = (positions[:, None] - positions[None, :]).abs()
        in_context = (distance <= self.context_size) & ~torch.eye(
            len(positions), dtype=torch.bool, device=positions.device
        )
        if not in_context.any():
            logger.warning(
                "No sentence of this batch has a context sentence among the candidates (positions %s…): "
                "its loss is zero. Batch consecutive sentences with ContextBlockBatchSampler.",
                positions[:8].tolist(),
            )

    def direction(
        self, anchors: torch.Tensor, candidates: torch.Tensor, bilinear: torch.Tensor, positions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean over anchors of −mean over its context sentences of log softmax_j c(anchor, candidate_j), and how
        many anchors have no context sentence among the candidates (they drop out of the mean)."""
        gathered = gather_candidates(candidates, positions, gather_across_devices=self.gather_across_devices)
        scores = (anchors.float() @ bilinear.float()) @ gathered.embeddings.float().T
        distance = (positions[:, None] - gathered.labels[None, :]).abs()
        candidate_mask = gathered.not_self(len(anchors))
        # Ranks' blocks may hold different numbers of sentences with a context (a short last block): supcon weights
        # each rank's mean so that DDP's average is the mean over every anchor.
        return supcon(
            scores,
            (distance <= self.context_size) & candidate_mask,
            candidate_mask,
            1.0,
            gather_across_devices=self.gather_across_devices,
        )

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "context_size": self.context_size,
            "symmetric": self.symmetric,
            "gather_across_devices": self.gather_across_devices,
        }

    @property
    def citation(self) -> str:
        return """
@inproceedings{simoulin-crabbe-2021-contrasting,
    title = "Contrasting distinct structured views to learn sentence embeddings",
    author = "Simoulin, Antoine and Crabb{\\'e}, Beno{\\^\\i}t",
    booktitle = "European Chapter of the Association for Computational Linguistics (student research workshop)",
    year = "2021",
    url = "https://hal.science/hal-03601428",
}
"""
