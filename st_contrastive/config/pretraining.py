"""The settings of MLM pretraining (``pretrain_masked_lm``), their defaults and rules written once. Nothing here
imports torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from st_contrastive.arguments import at_least, fraction, positive, require, seed
from st_contrastive.config.objectives import Masking


@dataclass(frozen=True)
class MaskedLMPretraining:
    """A small BERT and how it is pretrained: ``max_steps`` size the schedule (warm-up over ``warmup_ratio`` of
    them, then linear decay), ``max_minutes`` is a wall-clock guard, ``eval_blocks`` held-out blocks (at most a
    tenth) measure the loss every ``save_steps``."""

    vocab_size: int = 8000
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    max_seq_length: int = 128
    batch_size: int = 32
    learning_rate: float = 5e-4
    warmup_ratio: float = 0.06
    max_steps: int = 10_000
    max_minutes: float | None = None
    mlm_probability: float = Masking.mlm_probability
    seed: int = 0
    bf16: bool = False
    dropout: float = 0.0
    eval_blocks: int = 256

    def __post_init__(self) -> None:
        at_least("vocab_size", self.vocab_size, 1)
        for argument in ("hidden_size", "num_layers", "num_heads", "batch_size", "max_steps", "eval_blocks"):
            at_least(argument, getattr(self, argument), 1)
        require(
            "hidden_size",
            self.hidden_size,
            self.hidden_size % self.num_heads == 0,
            f"must be a multiple of num_heads={self.num_heads} (each head takes an equal share)",
        )
        at_least("max_seq_length", self.max_seq_length, 3)  # [CLS], [SEP] and a token
        positive("learning_rate", self.learning_rate)
        fraction("warmup_ratio", self.warmup_ratio, one_included=False)
        if self.max_minutes is not None:
            positive("max_minutes", self.max_minutes)
        Masking(self.mlm_probability)
        positive("mlm_probability", self.mlm_probability)  # MLM needs tokens to predict
        seed("seed", self.seed)
        fraction("dropout", self.dropout, one_included=False)

    def to_dict(self) -> dict:
        return asdict(self)
