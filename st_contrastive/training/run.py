"""The one in-process training entry point, ``train(...)``, and what it returns.

Every recipe, sweep and loop of the package trains through :func:`train`, so the trainer arguments, the timing
and what is logged are the same everywhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from datasets import Dataset
from sentence_transformers import SentenceTransformer
from torch import nn

from st_contrastive.training.settings import TrainSettings
from st_contrastive.training.trainer import ContrastiveTrainer


@dataclass
class TrainResult:
    """What a recipe writes about a finished training run."""

    steps: int
    seconds: float
    log_history: list[dict] = field(repr=False)

    def summary(self) -> dict:
        losses = [row for row in self.log_history if "loss" in row]
        return {"steps": self.steps, "seconds": round(self.seconds, 1), "last_log": losses[-1] if losses else {}}


def train(
    model: SentenceTransformer,
    loss: nn.Module,
    train_dataset: Dataset,
    settings: TrainSettings,
    *,
    data_collator=None,
    batch_sampler=None,
    evaluator=None,
    eval_dataset: Dataset | None = None,
) -> TrainResult:
    """Train ``model`` with ``loss`` through :class:`ContrastiveTrainer` and time it.

    ``batch_sampler`` is a sentence-transformers batch sampler class (e.g. ``PremiseGroupBatchSampler``);
    ``data_collator`` replaces ST's own (e.g. ``DeCLUTRDataCollator``). The trainer also saves, restores, clips
    and DDP-syncs the loss's own parameters (its heads).
    """
    trainer = ContrastiveTrainer(
        model=model,
        args=settings.training_arguments(batch_sampler),
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        loss=loss,
        data_collator=data_collator,
        evaluator=evaluator,
    )
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=settings.resume_from_checkpoint)
    return TrainResult(trainer.state.global_step, time.perf_counter() - start, trainer.state.log_history)
