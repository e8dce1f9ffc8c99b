"""What sentence-transformers' sentence-level methods (SimCSE, TSDAE, CT) share as commands: the options of a run on
sentences cut from a corpus, their checks, and the run itself (cut, load, evaluate the base, train at the method's
input length, save and evaluate).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import option
from st_contrastive.commands.run_folder import clear_for_overwrite
from st_contrastive.commands.training_run import (
    check_shared,
    dev_curve_evaluator,
    evaluate_base,
    train_recorded,
    write_trained_run,
)
from st_contrastive.config.training import TrainSettings
from st_contrastive.data_dir import SHARED_CORPORA

logger = logging.getLogger(__name__)


@dataclass
class SentenceMethodConfig:
    """The options every sentence-level method takes; each command's config adds its own and sets its defaults."""

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
    output: str | None = shared.output(help="output folder; default runs/<method>")
    push_to_hub: str | None = shared.push_to_hub()
    training: TrainSettings = field(default_factory=TrainSettings)

    option_help: ClassVar[dict[str, str]] = {"batch_size": "sentences per batch"}


def check_sentence_method(
    config: SentenceMethodConfig, method: str, own: Callable[[SettingChecks], None] | None = None
) -> Path:
    """Every shared setting and the method's ``own`` checks, from the arguments alone and before anything heavy
    loads; all problems at once. Returns the output folder (default runs/<method>)."""
    checks = SettingChecks()
    checks.model(config.model)
    checks.source(config.dataset, "--dataset", tuple(SHARED_CORPORA), (config.text_field,))
    checks.at_least("--max-rows", config.max_rows, 1)
    checks.at_least("--max-sentences", config.max_sentences, 1)
    checks.at_least("--max-seq-length", config.max_seq_length, 1)
    if own is not None:
        own(checks)
    return check_shared(checks, config, Path(config.output or Path("runs") / method))


def train_sentence_method(
    config: SentenceMethodConfig, output: Path, method: str, dataset_of, loss_of, check_model=None
) -> dict:
    """Cut the sentences, build the dataset (``dataset_of(sentences)``) and the loss (``loss_of(model)``, with the
    model at the method's training length), train, save and evaluate before and after; the results.
    ``check_model(model)`` refuses a setting the loaded model cannot take, before anything is evaluated."""
    clear_for_overwrite(output, config.training.overwrite)
    # Imported here, not at the top: the parsers must build without torch (instant --help).
    import torch
    from sentence_transformers import SentenceTransformer

    from st_contrastive.data.sentences import training_sentences
    from st_contrastive.default_model import default_model

    sentences = training_sentences(config, config.training.batch_size)
    logger.info("Training on %d sentences", len(sentences))
    dataset = dataset_of(sentences)
    torch.manual_seed(config.training.seed)
    model = SentenceTransformer(config.model or default_model())
    if check_model is not None:
        check_model(model)
    before = evaluate_base(model, config)
    # Sentences are cut to max_seq_length for training only; evaluation and the saved checkpoint keep the model's
    # own limit.
    model_limit, model.max_seq_length = model.max_seq_length, min(config.max_seq_length, model.max_seq_length)
    loss = loss_of(model)
    config, run = train_recorded(model, loss, dataset, config, output, evaluator=dev_curve_evaluator(config))
    model.max_seq_length = model_limit
    if run is None:  # another rank of a torchrun/accelerate job
        return {}
    return write_trained_run(
        model, config, output, run, method=method, before=before, config_details={"sentences": len(sentences)}
    )
