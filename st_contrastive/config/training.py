"""Training settings every method shares, with their defaults and rules written once.

Nothing here imports torch: `st-contrastive COMMAND --help` builds its parser from these without waiting for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from st_contrastive.arguments import at_least, fraction, positive, require, seed
from st_contrastive.distributed import has_accelerator


@dataclass
class TrainSettings:
    """Optimisation settings shared by every method (each command sets its paper's defaults), declared once as the
    commands' ``training`` options.

    ``warmup_ratio`` of the steps warm up linearly, then the learning rate decays linearly to zero; with
    ``max_seconds``, of the seconds (:mod:`st_contrastive.training.time_budget`).
    ``save_steps=0`` writes no trainer checkpoints; ``eval_steps=0`` runs no evaluator during training.
    """

    output_dir: str = "runs/checkpoints"  # set by the command: <output>/checkpoints
    batch_size: int = field(default=16, metadata={"help": "rows per batch"})
    learning_rate: float = field(default=5e-5, metadata={"help": "AdamW learning rate"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay (not on biases/LayerNorm)"})
    warmup_ratio: float = field(default=0.1, metadata={"help": "share of steps with linear warm-up, then linear decay"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping norm (model and the loss's heads)"})
    epochs: float = field(default=1.0, metadata={"help": "passes over the data"})
    max_steps: int = field(default=-1, metadata={"help": "stop after this many steps (-1: train for the epochs)"})
    max_seconds: float = field(
        default=0.0,
        metadata={
            "help": "train for this many seconds, warm-up and decay on the clock (0: by steps); the steps and "
            "epochs still cap it"
        },
    )
    seed: int = field(default=42, metadata={"help": "seed for sampling, masking and initialisation"})
    save_steps: int = field(default=0, metadata={"help": "write a trainer checkpoint every N steps (0: none)"})
    resume_from_checkpoint: str | None = field(
        default=None,
        metadata={
            "help": "continue an interrupted run: its output folder (latest complete checkpoint) or one of its "
            "checkpoints/checkpoint-N; same settings required (more steps allowed)"
        },
    )
    overwrite: bool = field(
        default=False,
        metadata={"help": "replace a finished or interrupted run in the output folder (its side folders too)"},
    )
    eval_steps: int = field(default=0, metadata={"help": "evaluate STS-B dev every N steps (0: never)"})
    bf16: bool = field(default=False, metadata={"help": "bfloat16 autocast"})
    # Learning rates of the loss's own parameters by name pattern, e.g. {"classifier": 1e-3} (ST's option).
    learning_rate_mapping: dict[str, float] | None = None

    def __post_init__(self) -> None:
        at_least("batch_size", self.batch_size, 1)
        positive("learning_rate", self.learning_rate)
        at_least("weight_decay", self.weight_decay, 0)
        fraction("warmup_ratio", self.warmup_ratio, one_included=False)
        at_least("max_grad_norm", self.max_grad_norm, 0)  # 0: no clipping
        # -1 trains for the epochs; 0 takes no step (an untrained control, which train() refuses to run).
        require(
            "max_steps",
            self.max_steps,
            isinstance(self.max_steps, int) and self.max_steps >= -1,
            "must be -1 (train for the epochs), 0 (no step) or a number of steps",
        )
        if self.max_steps == -1:
            positive("epochs", self.epochs)
        at_least("max_seconds", self.max_seconds, 0)
        # The budget is this process's seconds in the training loop: a resumed run would spend them again.
        require(
            "max_seconds",
            self.max_seconds,
            not (self.max_seconds and self.resume_from_checkpoint),
            "cannot be combined with resume_from_checkpoint (a resumed run would train the seconds again)",
        )
        seed("seed", self.seed)
        at_least("save_steps", self.save_steps, 0)
        at_least("eval_steps", self.eval_steps, 0)

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
