"""TSDAE (Wang et al., 2021): encode a sentence with words deleted, decode the whole sentence from its embedding.

    st-contrastive tsdae --model PATH_OR_HUB_ID --dataset wiki [--max-steps N | --max-seconds S ...]

sentence-transformers' own ``DenoisingAutoEncoderLoss`` (a decoder tied to the encoder, attending to the sentence
embedding alone) on sentences cut from the same corpus as DeCLUTR and SimCSE, so that the three compare on one
corpus. The defaults are sentence-transformers' TSDAE example: batch 8, learning rate 3e-5, 75 tokens, 60 % of the
words deleted. The model keeps its pooling (the paper pools the [CLS] token of a new model).
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.options import TRAINING, option
from st_contrastive.commands.sentence_methods import SentenceMethodConfig, check_sentence_method, train_sentence_method
from st_contrastive.config.training import TrainSettings


@dataclass
class TSDAEConfig(SentenceMethodConfig):
    """One TSDAE run. Each field is the command-line option of the same name."""

    deletion_ratio: float = option(0.6, group=TRAINING, help="share of each sentence's words deleted (the noise)")
    output: str | None = shared.output(help="output folder; default runs/tsdae")
    training: TrainSettings = field(default_factory=lambda: TrainSettings(batch_size=8, learning_rate=3e-5))


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        TSDAEConfig,
        "st-contrastive tsdae",
        "TSDAE with sentence-transformers' DenoisingAutoEncoderLoss: the sentence with words deleted is encoded, "
        "a decoder tied to the encoder rebuilds it from the embedding. Defaults are sentence-transformers' example.",
    )


def check_inputs(config: TSDAEConfig) -> Path:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once. Returns the
    output folder."""

    def own(checks):
        if not 0 <= config.deletion_ratio < 1:
            checks.add("--deletion-ratio", config.deletion_ratio, "must be at least 0 and below 1")

    return check_sentence_method(config, "tsdae", own)


def delete_words(sentence: str, ratio: float, rng: random.Random) -> str:
    """The sentence with each word deleted with probability ``ratio``, one word kept at least. The paper's noise;
    sentence-transformers' own noise function splits words with nltk, whose tokenizer data is a download, so the
    words here are split on white space."""
    words = sentence.split()
    kept = [word for word in words if rng.random() >= ratio]
    return " ".join(kept or [rng.choice(words)]) if words else sentence


def train_tsdae(config: TSDAEConfig) -> dict:
    """Cut sentences, delete words, train with DenoisingAutoEncoderLoss, evaluate before and after; the results."""
    output = check_inputs(config)
    from datasets import Dataset
    from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

    def dataset_of(sentences):
        rng = random.Random(config.training.seed)
        noisy = [delete_words(sentence, config.deletion_ratio, rng) for sentence in sentences]
        return Dataset.from_dict({"noisy": noisy, "text": sentences})  # (damaged, original): the loss's order

    return train_sentence_method(
        config, output, "tsdae", dataset_of, lambda model: DenoisingAutoEncoderLoss(model, tie_encoder_decoder=True)
    )


def main(argv: list[str] | None = None) -> dict:
    return train_tsdae(options.config_from_args(TSDAEConfig, build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
