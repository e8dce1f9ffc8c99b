"""Unsupervised SimCSE (Gao et al., 2021): each sentence paired with itself, dropout makes the two views differ.

    st-contrastive simcse --model PATH_OR_HUB_ID --dataset wiki [--max-steps N ...]

The control for DeCLUTR: it uses only sentence-transformers' own loss (``MultipleNegativesRankingLoss`` on (s, s)
pairs, scale = 1/τ) on sentences cut from the same corpus, so a gap between the two is not in this package's code.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import TRAINING, option
from st_contrastive.commands.push import check_push
from st_contrastive.commands.run_folder import check_run_folder, clear_for_overwrite
from st_contrastive.commands.training_run import (
    check_matryoshka_dims,
    check_matryoshka_options,
    dev_curve_evaluator,
    evaluate_base,
    train_recorded,
    with_matryoshka,
    write_trained_run,
)
from st_contrastive.config.evaluation import expand_tasks
from st_contrastive.config.training import TrainSettings
from st_contrastive.data_dir import SHARED_CORPORA

logger = logging.getLogger(__name__)


@dataclass
class SimCSEConfig:
    """One unsupervised SimCSE run; the defaults are the paper's (τ 0.05, batch 64, lr 3e-5, 32 tokens, 1M
    sentences). Each field is the command-line option of the same name."""

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
    max_seq_length: int = option(32, help="tokens per sentence while training")
    temperature: float = option(0.05, group=TRAINING, help="τ (the loss's scale is 1/τ)")
    eval_tasks: list[str] = shared.eval_tasks(["stsb-test"])
    eval_batch_size: int = shared.eval_batch_size()
    eval_max_rows: int | None = shared.eval_max_rows()
    no_base_eval: bool = shared.no_base_eval()
    matryoshka_dims: list[int] | None = shared.matryoshka_dims()
    matryoshka_weights: list[float] | None = shared.matryoshka_weights()
    output: str | None = shared.output(help="output folder; default runs/simcse")
    push_to_hub: str | None = shared.push_to_hub()
    training: TrainSettings = field(
        default_factory=lambda: TrainSettings(batch_size=64, learning_rate=3e-5, warmup_ratio=0.0, save_steps=0)
    )

    option_help: ClassVar[dict[str, str]] = {"batch_size": "sentences per batch"}


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
    checks = SettingChecks()
    checks.model(config.model)
    checks.source(config.dataset, "--dataset", tuple(SHARED_CORPORA), (config.text_field,))
    checks.at_least("--max-rows", config.max_rows, 1)
    checks.at_least("--max-sentences", config.max_sentences, 1)
    checks.at_least("--max-seq-length", config.max_seq_length, 1)
    checks.above("--temperature", config.temperature)
    checks.call("--eval-tasks", config.eval_tasks, lambda: expand_tasks(config.eval_tasks))
    checks.at_least("--eval-batch-size", config.eval_batch_size, 1)
    checks.at_least("--eval-max-rows", config.eval_max_rows, 1)
    check_matryoshka_options(checks, config)
    checks.call("--push-to-hub", config.push_to_hub, lambda: check_push(config.push_to_hub))
    output = Path(config.output or Path("runs") / "simcse")
    check_run_folder(checks, config, output)
    checks.done()
    return output


def train_simcse(config: SimCSEConfig) -> dict:
    """Cut sentences, train with MultipleNegativesRankingLoss on (s, s), evaluate before and after; the results."""
    output = check_inputs(config)
    clear_for_overwrite(output, config.training.overwrite)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from st_contrastive.data.sentences import training_sentences
    from st_contrastive.default_model import default_model
    from st_contrastive.distributed import is_distributed

    sentences = training_sentences(config, config.training.batch_size)
    logger.info("Training on %d sentences", len(sentences))
    dataset = Dataset.from_dict({"anchor": sentences, "positive": sentences})
    torch.manual_seed(config.training.seed)
    model = SentenceTransformer(config.model or default_model())
    check_matryoshka_dims(model, config)

    before = evaluate_base(model, config)
    loss = MultipleNegativesRankingLoss(model, scale=1 / config.temperature, gather_across_devices=is_distributed())
    evaluator = dev_curve_evaluator(config)
    # Sentences are cut to max_seq_length for training only (the paper's 32 tokens); evaluation and the saved
    # checkpoint keep the model's own limit.
    model_limit, model.max_seq_length = model.max_seq_length, min(config.max_seq_length, model.max_seq_length)
    config, run = train_recorded(
        model, with_matryoshka(model, loss, config), dataset, config, output, evaluator=evaluator
    )
    model.max_seq_length = model_limit
    if run is None:  # another rank of a torchrun/accelerate job
        return {}
    return write_trained_run(
        model, config, output, run, method="simcse", before=before, config_details={"sentences": len(sentences)}
    )


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    return train_simcse(options.config_from_args(SimCSEConfig, args))


if __name__ == "__main__":
    main()
