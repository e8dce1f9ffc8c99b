"""TSDAE (Wang et al., 2021): encode a sentence with words deleted, decode the whole sentence from its embedding.

    st-contrastive tsdae --model PATH_OR_HUB_ID --dataset wiki [--max-steps N | --max-seconds S ...]

sentence-transformers' own ``DenoisingAutoEncoderLoss`` (a decoder tied to the encoder, attending to the sentence
embedding alone) on sentences cut from the same corpus as DeCLUTR and SimCSE, so that the three compare on one
corpus. The defaults are sentence-transformers' TSDAE example: batch 8, learning rate 3e-5, 75 tokens, 60 % of the
words deleted. The model keeps its pooling (the paper pools the [CLS] token of a new model).
"""

from __future__ import annotations

import argparse
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import TRAINING, option
from st_contrastive.commands.push import check_push
from st_contrastive.commands.run_folder import check_run_folder, clear_for_overwrite
from st_contrastive.commands.training_run import dev_curve_evaluator, evaluate_base, train_recorded, write_trained_run
from st_contrastive.config.evaluation import expand_tasks
from st_contrastive.config.training import TrainSettings
from st_contrastive.data_dir import SHARED_CORPORA

logger = logging.getLogger(__name__)


@dataclass
class TSDAEConfig:
    """One TSDAE run. Each field is the command-line option of the same name."""

    model: str | None = shared.model()
    dataset: str = shared.dataset(
        "wiki",
        "documents to cut into sentences: a shared corpus (wiki, books, both), a "
        ".jsonl(.gz)/.txt file, a saved dataset folder or a Hub dataset id",
    )
    text_field: str = shared.text_field()
    max_rows: int | None = shared.max_rows(what="documents")
    max_sentences: int = option(
        1_000_000, help="sentences to train on (fewer when --max-steps needs fewer, or the corpus has fewer)"
    )
    max_seq_length: int = option(75, help="tokens per sentence while training")
    deletion_ratio: float = option(0.6, group=TRAINING, help="share of each sentence's words deleted (the noise)")
    eval_tasks: list[str] = shared.eval_tasks(["stsb-test"])
    eval_batch_size: int = shared.eval_batch_size()
    eval_max_rows: int | None = shared.eval_max_rows()
    no_base_eval: bool = shared.no_base_eval()
    output: str | None = shared.output(help="output folder; default runs/tsdae")
    push_to_hub: str | None = shared.push_to_hub()
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
    checks = SettingChecks()
    checks.model(config.model)
    checks.source(config.dataset, "--dataset", tuple(SHARED_CORPORA), (config.text_field,))
    checks.at_least("--max-rows", config.max_rows, 1)
    checks.at_least("--max-sentences", config.max_sentences, 1)
    checks.at_least("--max-seq-length", config.max_seq_length, 1)
    if not 0 <= config.deletion_ratio < 1:
        checks.add("--deletion-ratio", config.deletion_ratio, "must be at least 0 and below 1")
    checks.call("--eval-tasks", config.eval_tasks, lambda: expand_tasks(config.eval_tasks))
    checks.at_least("--eval-batch-size", config.eval_batch_size, 1)
    checks.at_least("--eval-max-rows", config.eval_max_rows, 1)
    checks.call("--push-to-hub", config.push_to_hub, lambda: check_push(config.push_to_hub))
    output = Path(config.output or Path("runs") / "tsdae")
    check_run_folder(checks, config, output)
    checks.done()
    return output


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
    clear_for_overwrite(output, config.training.overwrite)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

    from st_contrastive.data.sentences import training_sentences
    from st_contrastive.default_model import default_model

    sentences = training_sentences(config, config.training.batch_size)
    rng = random.Random(config.training.seed)
    noisy = [delete_words(sentence, config.deletion_ratio, rng) for sentence in sentences]
    logger.info("Training on %d sentences", len(sentences))
    dataset = Dataset.from_dict({"noisy": noisy, "text": sentences})  # (damaged, original): the loss's order
    torch.manual_seed(config.training.seed)
    model = SentenceTransformer(config.model or default_model())
    before = evaluate_base(model, config)
    loss = DenoisingAutoEncoderLoss(model, tie_encoder_decoder=True)
    model_limit, model.max_seq_length = model.max_seq_length, min(config.max_seq_length, model.max_seq_length)
    config, run = train_recorded(model, loss, dataset, config, output, evaluator=dev_curve_evaluator(config))
    model.max_seq_length = model_limit
    if run is None:  # another rank of a torchrun/accelerate job
        return {}
    return write_trained_run(
        model, config, output, run, method="tsdae", before=before, config_details={"sentences": len(sentences)}
    )


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    return train_tsdae(options.config_from_args(TSDAEConfig, args))


if __name__ == "__main__":
    main()
