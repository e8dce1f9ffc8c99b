"""Training settings every recipe shares, their command-line options, and the base of the recipes' configs.

Nothing here imports torch: `st-contrastive COMMAND --help` builds its parser from these without waiting for it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields

from st_contrastive.training.distributed import has_accelerator, leave_process_group_at_exit


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
    resume_from_checkpoint: str | None = None  # a checkpoint folder, or a run folder: its latest complete checkpoint
    overwrite: bool = False  # replace a finished or interrupted run in the output folder
    # Learning rates of the loss's own parameters by name pattern, e.g. {"classifier": 1e-3} (ST's option).
    learning_rate_mapping: dict[str, float] | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, **overrides) -> TrainSettings:
        """Settings from the options :func:`add_training_arguments` added (same names), plus ``overrides``."""
        values = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
        return cls(**(values | overrides))

    def training_arguments(self, batch_sampler=None):
        """sentence-transformers' ``SentenceTransformerTrainingArguments`` for these settings."""
        from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

        leave_process_group_at_exit()  # the arguments join the launcher's processes (through accelerate)
        logging_steps = max(1, min(10, self.max_steps // 20)) if self.max_steps > 0 else 10
        extra = {"batch_sampler": batch_sampler} if batch_sampler is not None else {}
        if not has_accelerator():
            # Said outright on a machine without GPUs: accelerate then joins torchrun's processes (gloo) instead of
            # letting each train alone, and transformers allows bf16 (CPU autocast) instead of refusing it.
            extra["use_cpu"] = True
        if self.learning_rate_mapping:
            extra["learning_rate_mapping"] = self.learning_rate_mapping
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
                       help="continue an interrupted run: its --output folder (latest complete checkpoint) or one of "
                       "its checkpoints/checkpoint-N; same settings required (more steps allowed)")
    group.add_argument("--overwrite", action="store_true", default=defaults.overwrite,
                       help="replace a finished or interrupted run in --output (its side folders too)")
    group.add_argument("--eval-steps", type=int, default=defaults.eval_steps,
                       help="evaluate STS-B dev every N steps (0: never)")
    group.add_argument("--bf16", action="store_true", default=defaults.bf16, help="bfloat16 autocast")
    return group
