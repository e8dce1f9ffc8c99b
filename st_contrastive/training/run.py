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

from st_contrastive.checkpoints import resolve_resume_point
from st_contrastive.config.training import TrainSettings
from st_contrastive.training.interrupt import StopOnInterrupt, train_until_done_or_interrupted
from st_contrastive.training.time_budget import TimeBudget
from st_contrastive.training.trainer import ContrastiveTrainer


@dataclass
class TrainResult:
    """What a recipe writes about a finished training run."""

    steps: int
    seconds: float
    log_history: list[dict] = field(repr=False)
    world_size: int = 1
    loss_config: dict = field(default_factory=dict)

    def summary(self) -> dict:
        losses = [row for row in self.log_history if "loss" in row]
        return {
            "steps": self.steps,
            "seconds": round(self.seconds, 1),
            "world_size": self.world_size,
            "loss": self.loss_config,
            "last_log": losses[-1] if losses else {},
        }


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
    checkpoint_on_interrupt: bool = False,
) -> TrainResult:
    """Train ``model`` with ``loss`` through :class:`ContrastiveTrainer` and time it.

    ``batch_sampler`` is a sentence-transformers batch sampler class (e.g. ``PremiseGroupBatchSampler``);
    ``data_collator`` replaces ST's own (e.g. ``DeCLUTRDataCollator``). The trainer also saves, restores, clips
    and DDP-syncs the loss's own parameters (its heads).

    ``settings.resume_from_checkpoint`` is a checkpoint folder or a run folder (its latest complete checkpoint;
    torn ones are skipped). Ctrl-C stops after the step in progress, with a checkpoint there when
    ``checkpoint_on_interrupt``, and raises :class:`TrainingInterrupted` (a ``KeyboardInterrupt``).
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
    resume = settings.resume_from_checkpoint
    resume = str(resolve_resume_point(resume, report_torn=True)) if resume else None
    interrupt = StopOnInterrupt(save=checkpoint_on_interrupt)
    trainer.add_callback(interrupt)
    if settings.max_seconds:
        trainer.time_budget = TimeBudget(settings.max_seconds, settings.warmup_ratio)
        trainer.add_callback(trainer.time_budget)
    start = time.perf_counter()
    train_until_done_or_interrupted(trainer, interrupt, resume, settings.output_dir)
    loss_config = loss.get_config_dict() if hasattr(loss, "get_config_dict") else {}
    return TrainResult(
        trainer.state.global_step,
        time.perf_counter() - start,
        trainer.state.log_history,
        trainer.args.world_size,
        loss_config,
    )


def train_heads_only(
    model: SentenceTransformer, loss: nn.Module, train_dataset: Dataset, settings: TrainSettings, **train_options
) -> TrainResult:
    """:func:`train` with the encoder frozen: only the loss's own parameters (its new heads) learn.

    A head that starts from random weights (e.g. the MLM head of a base that ships none, at ~ln|V| nats) sends
    large, uninformed gradients into the encoder when trained jointly from step 0; a few head-only steps first
    let it catch up. Parameters shared with the encoder (a decoder tied to the input embeddings) stay frozen.
    The encoder's ``requires_grad`` flags are restored afterwards, also on an error.
    """
    trainable = [p for p in model.parameters() if p.requires_grad]
    for parameter in trainable:
        parameter.requires_grad_(False)
    try:
        return train(model, loss, train_dataset, settings, **train_options)
    finally:
        for parameter in trainable:
            parameter.requires_grad_(True)
