"""Training settings every command shares, declared once with their command-line options.

Nothing here imports torch: `st-contrastive COMMAND --help` builds its parser from these without waiting for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from st_contrastive.distributed import has_accelerator
from st_contrastive.options import OUTPUT, TRAINING, option


@dataclass
class TrainSettings:
    """Optimisation settings shared by every method (each command sets its paper's defaults), declared once as the
    commands' ``training`` options.

    ``warmup_ratio`` of the steps warm up linearly, then the learning rate decays linearly to zero.
    ``save_steps=0`` writes no trainer checkpoints; ``eval_steps=0`` runs no evaluator during training.
    """

    output_dir: str = "runs/checkpoints"  # set by the command: <output>/checkpoints
    batch_size: int = option(16, group=TRAINING, help="rows per batch")
    learning_rate: float = option(5e-5, group=TRAINING, help="AdamW learning rate")
    weight_decay: float = option(0.0, group=TRAINING, help="AdamW weight decay (not on biases/LayerNorm)")
    warmup_ratio: float = option(0.1, group=TRAINING, help="share of steps with linear warm-up, then linear decay")
    max_grad_norm: float = option(1.0, group=TRAINING, help="gradient clipping norm (model and the loss's heads)")
    epochs: float = option(1.0, group=TRAINING, help="passes over the data")
    max_steps: int = option(-1, group=TRAINING, help="stop after this many steps (overrides --epochs)")
    seed: int = option(42, group=TRAINING, help="seed for sampling, masking and initialisation")
    save_steps: int = option(0, group=TRAINING, help="write a trainer checkpoint every N steps (0: none)")
    resume_from_checkpoint: str | None = option(
        None,
        group=TRAINING,
        help="continue an interrupted run: its --output folder (latest complete checkpoint) or "
        "one of its checkpoints/checkpoint-N; same settings required (more steps allowed)",
    )
    overwrite: bool = option(
        False, group=OUTPUT, help="replace a finished or interrupted run in --output (its side folders too)"
    )
    eval_steps: int = option(0, group=TRAINING, help="evaluate STS-B dev every N steps (0: never)")
    bf16: bool = option(False, group=TRAINING, help="bfloat16 autocast")
    # Learning rates of the loss's own parameters by name pattern, e.g. {"classifier": 1e-3} (ST's option).
    learning_rate_mapping: dict[str, float] | None = None

    def training_arguments(self, batch_sampler=None):
        """sentence-transformers' ``SentenceTransformerTrainingArguments`` for these settings."""
        from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

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
