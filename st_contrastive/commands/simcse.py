"""Unsupervised SimCSE (Gao et al., 2021): each sentence paired with itself, dropout makes the two views differ.

    st-contrastive simcse --model PATH_OR_HUB_ID --dataset wiki [--max-steps N ...]

The control for DeCLUTR: it uses only sentence-transformers' own loss (``MultipleNegativesRankingLoss`` on (s, s)
pairs, scale = 1/τ) on sentences cut from the same corpus, so a gap between the two is not in this package's code.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.options import TRAINING, option
from st_contrastive.commands.sentence_methods import SentenceMethodConfig, check_sentence_method, train_sentence_method
from st_contrastive.commands.training_run import check_matryoshka_dims, with_matryoshka
from st_contrastive.config.training import TrainSettings


@dataclass
class SimCSEConfig(SentenceMethodConfig):
    """One unsupervised SimCSE run; the defaults are the paper's (τ 0.05, batch 64, lr 3e-5, 32 tokens, 1M
    sentences). Each field is the command-line option of the same name."""

    max_seq_length: int = option(32, help="tokens per sentence while training")
    temperature: float = option(0.05, group=TRAINING, help="τ (the loss's scale is 1/τ)")
    matryoshka_dims: list[int] | None = shared.matryoshka_dims()
    matryoshka_weights: list[float] | None = shared.matryoshka_weights()
    output: str | None = shared.output(help="output folder; default runs/simcse")
    training: TrainSettings = field(
        default_factory=lambda: TrainSettings(batch_size=64, learning_rate=3e-5, warmup_ratio=0.0, save_steps=0)
    )


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        SimCSEConfig,
        "st-contrastive simcse",
        "Unsupervised SimCSE with sentence-transformers' MultipleNegativesRankingLoss on (s, s) pairs: dropout gives "
        "the two views, the rest of the batch the negatives. Defaults are the paper's.",
    )


def check_inputs(config: SimCSEConfig) -> Path:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``). Returns the output folder."""

    return check_sentence_method(config, "simcse", lambda checks: checks.above("--temperature", config.temperature))


def train_simcse(config: SimCSEConfig) -> dict:
    """Cut sentences, train with MultipleNegativesRankingLoss on (s, s), evaluate before and after; the results."""
    output = check_inputs(config)
    from datasets import Dataset
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from st_contrastive.distributed import is_distributed

    def loss_of(model):
        loss = MultipleNegativesRankingLoss(model, scale=1 / config.temperature, gather_across_devices=is_distributed())
        return with_matryoshka(model, loss, config)

    return train_sentence_method(
        config,
        output,
        "simcse",
        lambda sentences: Dataset.from_dict({"anchor": sentences, "positive": sentences}),
        loss_of,
        check_model=lambda model: check_matryoshka_dims(model, config),
    )


def main(argv: list[str] | None = None) -> dict:
    return train_simcse(options.config_from_args(SimCSEConfig, build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
