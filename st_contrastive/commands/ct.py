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
import logging
from dataclasses import dataclass, field
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import option
from st_contrastive.commands.push import check_push
from st_contrastive.commands.run_folder import check_run_folder, clear_for_overwrite
from st_contrastive.commands.training_run import dev_curve_evaluator, evaluate_base, train_recorded, write_trained_run
from st_contrastive.config.evaluation import expand_tasks
from st_contrastive.config.training import TrainSettings
from st_contrastive.data_dir import SHARED_CORPORA

logger = logging.getLogger(__name__)


@dataclass
class CTConfig:
    """One Contrastive Tension run. Each field is the command-line option of the same name."""

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
    eval_tasks: list[str] = shared.eval_tasks(["stsb-test"])
    eval_batch_size: int = shared.eval_batch_size()
    eval_max_rows: int | None = shared.eval_max_rows()
    no_base_eval: bool = shared.no_base_eval()
    output: str | None = shared.output(help="output folder; default runs/ct")
    push_to_hub: str | None = shared.push_to_hub()
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
    checks = SettingChecks()
    checks.model(config.model)
    checks.source(config.dataset, "--dataset", tuple(SHARED_CORPORA), (config.text_field,))
    checks.at_least("--max-rows", config.max_rows, 1)
    checks.at_least("--max-sentences", config.max_sentences, 1)
    checks.at_least("--max-seq-length", config.max_seq_length, 1)
    checks.call("--eval-tasks", config.eval_tasks, lambda: expand_tasks(config.eval_tasks))
    checks.at_least("--eval-batch-size", config.eval_batch_size, 1)
    checks.at_least("--eval-max-rows", config.eval_max_rows, 1)
    checks.call("--push-to-hub", config.push_to_hub, lambda: check_push(config.push_to_hub))
    output = Path(config.output or Path("runs") / "ct")
    check_run_folder(checks, config, output)
    checks.done()
    return output


def train_ct(config: CTConfig) -> dict:
    """Cut sentences, train with ContrastiveTensionLossInBatchNegatives, evaluate before and after; the results."""
    output = check_inputs(config)
    clear_for_overwrite(output, config.training.overwrite)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import ContrastiveTensionLossInBatchNegatives

    from st_contrastive.data.sentences import training_sentences
    from st_contrastive.default_model import default_model

    sentences = training_sentences(config, config.training.batch_size)
    logger.info("Training on %d sentences", len(sentences))
    dataset = Dataset.from_dict({"sentence": sentences})
    torch.manual_seed(config.training.seed)
    model = SentenceTransformer(config.model or default_model())
    before = evaluate_base(model, config)
    model_limit, model.max_seq_length = model.max_seq_length, min(config.max_seq_length, model.max_seq_length)
    loss = ContrastiveTensionLossInBatchNegatives(model)  # copies the model (with the training length) first
    config, run = train_recorded(model, loss, dataset, config, output, evaluator=dev_curve_evaluator(config))
    model.max_seq_length = model_limit
    if run is None:  # another rank of a torchrun/accelerate job
        return {}
    return write_trained_run(
        model, config, output, run, method="ct", before=before, config_details={"sentences": len(sentences)}
    )


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    return train_ct(options.config_from_args(CTConfig, args))


if __name__ == "__main__":
    main()
