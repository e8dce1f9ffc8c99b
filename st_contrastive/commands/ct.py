"""Contrastive Tension with in-batch negatives (Carlsson et al., 2021, as sentence-transformers improved it): two
copies of the encoder embed the same sentences; each sentence's pair of embeddings is the positive, the rest of the
batch the negatives.

    st-contrastive ct --model PATH_OR_HUB_ID --dataset wiki [--max-steps N | --max-seconds S ...]

sentence-transformers' own ``ContrastiveTensionLossInBatchNegatives`` (its default scale 20 on cosine similarity)
on sentences cut from the same corpus as DeCLUTR and SimCSE. The defaults are sentence-transformers' CT
(in-batch negatives) example: batch 128, learning rate 5e-5, 75 tokens. The second copy is what is saved, as the
loss uses it for inference.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.sentence_methods import SentenceMethodConfig, check_sentence_method, train_sentence_method
from st_contrastive.config.training import TrainSettings


@dataclass
class CTConfig(SentenceMethodConfig):
    """One Contrastive Tension run. Each field is the command-line option of the same name."""

    output: str | None = shared.output(help="output folder; default runs/ct")
    training: TrainSettings = field(default_factory=lambda: TrainSettings(batch_size=128, learning_rate=5e-5))


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        CTConfig,
        "st-contrastive ct",
        "Contrastive Tension with sentence-transformers' ContrastiveTensionLossInBatchNegatives: two copies of the "
        "encoder, the same sentence's two embeddings the positive, the batch the negatives. Defaults are "
        "sentence-transformers' example.",
    )


def check_inputs(config: CTConfig) -> Path:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once. Returns the
    output folder."""
    return check_sentence_method(config, "ct")


def train_ct(config: CTConfig) -> dict:
    """Cut sentences, train with ContrastiveTensionLossInBatchNegatives, evaluate before and after; the results."""
    output = check_inputs(config)
    from datasets import Dataset
    from sentence_transformers.sentence_transformer.losses import ContrastiveTensionLossInBatchNegatives

    # The loss copies the model when it is made: after the training length is set, so both copies have it.
    return train_sentence_method(
        config,
        output,
        "ct",
        lambda sentences: Dataset.from_dict({"sentence": sentences}),
        ContrastiveTensionLossInBatchNegatives,
    )


def main(argv: list[str] | None = None) -> dict:
    return train_ct(options.config_from_args(CTConfig, build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
