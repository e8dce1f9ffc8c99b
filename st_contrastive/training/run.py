"""The one in-process training entry point: settings, ``train(...)``, and what it returns.

Every recipe, sweep and loop of the package trains through :func:`train`, so the trainer arguments, the timing
and what is logged are the same everywhere; :func:`add_training_arguments` gives every recipe the same options.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field, fields

from datasets import Dataset
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments
from torch import nn

from st_contrastive.training.trainer import ContrastiveTrainer


@dataclass
class TrainSettings:
    """Optimisation settings shared by every method (each recipe sets its paper's defaults).

    ``warmup_ratio`` of the steps warm up linearly, then the learning rate decays linearly to zero.
    ``save_steps=0`` writes no trainer checkpoints; ``eval_steps=0`` runs no evaluator during training.
    """

    output_dir: str = "runs/checkpoints"
    batch_size: int = 16
    epochs: float = 1.0
    max_steps: int = -1
    learning_rate: float = 5e-5
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1
    max_grad_norm: float = 1.0
    seed: int = 42
    bf16: bool = False
    save_steps: int = 0
    eval_steps: int = 0
    resume_from_checkpoint: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, **overrides) -> TrainSettings:
        """Settings from the options :func:`add_training_arguments` added (same names), plus ``overrides``."""
        values = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
        return cls(**(values | overrides))

    def training_arguments(self, batch_sampler=None) -> SentenceTransformerTrainingArguments:
        logging_steps = max(1, min(10, self.max_steps // 20)) if self.max_steps > 0 else 10
        extra = {"batch_sampler": batch_sampler} if batch_sampler is not None else {}
        return SentenceTransformerTrainingArguments(
            output_dir=self.output_dir,
            per_device_train_batch_size=self.batch_size,
            num_train_epochs=self.epochs,
            max_steps=self.max_steps,
            learning_rate=self.learning_rate,
            weight_decay=self.weight_decay,
            warmup_steps=self.warmup_ratio,  # transformers 5: a float below 1 is a fraction of the steps
            lr_scheduler_type="linear",
            max_grad_norm=self.max_grad_norm,
            seed=self.seed,
            bf16=self.bf16,
            logging_steps=logging_steps,
            save_strategy="steps" if self.save_steps else "no",
            save_steps=self.save_steps or 500,
            save_total_limit=2,
            eval_strategy="steps" if self.eval_steps else "no",
            eval_steps=self.eval_steps or None,
            report_to="none",
            **extra,
        )


class RecipeConfig:
    """Base of the recipes' config dataclasses: fields named as their command-line options, plus ``training``."""

    training: TrainSettings

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        values = {f.name: getattr(args, f.name) for f in fields(cls) if f.name != "training"}
        return cls(**values, training=TrainSettings.from_args(args))


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


def add_training_arguments(
    parser: argparse.ArgumentParser, defaults: TrainSettings, batch_size_help: str = "rows per batch"
) -> argparse._ArgumentGroup:
    """The optimisation options of every recipe, named as the :class:`TrainSettings` fields they fill."""
    group = parser.add_argument_group("optimisation")
    group.add_argument("--batch-size", type=int, default=defaults.batch_size, help=batch_size_help)
    group.add_argument("--learning-rate", type=float, default=defaults.learning_rate, help="AdamW learning rate")
    group.add_argument("--weight-decay", type=float, default=defaults.weight_decay,
                       help="AdamW weight decay (not on biases/LayerNorm)")
    group.add_argument("--warmup-ratio", type=float, default=defaults.warmup_ratio,
                       help="share of steps with linear warm-up, then linear decay")
    group.add_argument("--max-grad-norm", type=float, default=defaults.max_grad_norm,
                       help="gradient clipping norm (model and the loss's heads)")
    group.add_argument("--epochs", type=float, default=defaults.epochs, help="passes over the data")
    group.add_argument("--max-steps", type=int, default=defaults.max_steps,
                       help="stop after this many steps (overrides --epochs)")
    group.add_argument("--seed", type=int, default=defaults.seed, help="seed for sampling, masking and initialisation")
    group.add_argument("--save-steps", type=int, default=defaults.save_steps,
                       help="write a trainer checkpoint every N steps (0: none)")
    group.add_argument("--resume-from-checkpoint", default=defaults.resume_from_checkpoint,
                       help="trainer checkpoint folder to resume from")
    group.add_argument("--eval-steps", type=int, default=defaults.eval_steps,
                       help="evaluate STS-B dev every N steps (0: never)")
    group.add_argument("--bf16", action="store_true", default=defaults.bf16, help="bfloat16 autocast")
    return group
